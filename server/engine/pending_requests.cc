#include "server/engine/pending_requests.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/json_proto.h"
#include "common/mcp/client_answers.h"
#include "common/net/listen_address.h"
#include "server/config/validation.h"
#include "server/engine/json_rpc.h"

namespace inspector::engine {
namespace {

using nlohmann::json;

// JSON-RPC error codes of the answers the registry makes up. -1 is the
// sampling specification's "user rejected"; a timeout is reported the way
// a client whose handler failed reports it (internal error).
constexpr int kUserRejectedCode = -1;
constexpr int kTimedOutCode = kInternalError;

double WholeUnixMillis(absl::Time t) {
  return static_cast<double>(absl::ToUnixMillis(t));
}

std::string RequestKey(const std::string& session_id,
                       const std::string& request_id) {
  return absl::StrCat(session_id, "\n", request_id);
}

std::string ErrorJson(int code, const std::string& message) {
  return json({{"code", code}, {"message", message}}).dump();
}

// What answering or looking up an id no item has gives.
absl::Status UnknownPendingItem(const std::string& id) {
  return Error(v1::NOT_FOUND,
               absl::StrCat("no pending request has id '", id,
                            "' (ListPending shows the waiting ones)"),
               {{"pendingId", id}});
}

}  // namespace

v1::PendingKind PendingKindOf(const std::string& method) {
  if (method == "sampling/createMessage") return v1::SAMPLING;
  if (method == "elicitation/create") return v1::ELICITATION;
  if (method == "roots/list") return v1::ROOTS;
  return v1::PENDING_KIND_UNSPECIFIED;
}

absl::Status CheckElicitationUrl(const std::string& method,
                                 const json& params) {
  if (method != "elicitation/create" || !params.is_object()) {
    return absl::OkStatus();
  }
  auto mode = params.find("mode");
  if (mode == params.end() || !mode->is_string() || *mode != "url") {
    return absl::OkStatus();
  }
  constexpr char kRule[] =
      "a URL-mode elicitation may only send a person to an https URL, or to "
      "an http URL on this machine (localhost, 127.0.0.0/8, [::1])";
  auto url = params.find("url");
  if (url == params.end() || !url->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the URL-mode elicitation has no url string; ", kRule));
  }
  const std::string& text = url->get_ref<const std::string&>();
  // Quoted as JSON, so that control characters stay visible; long ones cut.
  const std::string shown =
      json(text.size() > 200 ? text.substr(0, 200) + "..." : text).dump();
  absl::StatusOr<config::HttpUrl> parsed = config::ParseHttpUrl(text);
  if (!parsed.ok()) {
    // The parser's advice (after ';') is written for configuration files.
    std::string why(parsed.status().message());
    why = why.substr(0, why.find(';'));
    return absl::InvalidArgumentError(absl::StrCat(
        "the URL-mode elicitation's url ", shown, " ", why, "; ", kRule));
  }
  if (parsed->scheme == "http" && !net::IsLoopbackHost(parsed->host)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the URL-mode elicitation's url ", shown,
                     " is plain http to another machine; ", kRule));
  }
  return absl::OkStatus();
}

PendingRequests::PendingRequests(PendingOptions options, Clock* clock,
                                 Pipeline* pipeline)
    : options_(std::move(options)), clock_(clock), pipeline_(pipeline) {}

PendingRequests::~PendingRequests() {
  std::vector<Clock::TimerId> timers;
  {
    absl::MutexLock lock(&mu_);
    destroying_ = true;
    for (auto& [id, item] : items_) {
      if (item.timer != 0) timers.push_back(item.timer);
      item.timer = 0;
    }
  }
  // Outside mu_: a deadline callback that is running needs it.
  for (Clock::TimerId timer : timers) clock_->Cancel(timer);
}

void PendingRequests::Publish(const v1::PendingRequest& item) {
  v1::Event event;
  *event.mutable_pending() = item;
  pipeline_->Publish(std::move(event));
}

v1::PendingRequest PendingRequests::Add(NewPendingItem new_item,
                                        AnswerSender send) {
  const absl::Time now = clock_->Now();
  const absl::Duration timeout = new_item.timeout > absl::ZeroDuration()
                                     ? new_item.timeout
                                     : options_.default_timeout;
  Item item;
  v1::PendingRequest& proto = item.proto;
  proto.set_id(NewUuid());
  proto.set_server_id(new_item.server_id);
  proto.set_session_id(new_item.session_id);
  proto.set_kind(PendingKindOf(new_item.method));
  proto.set_method(new_item.method);
  JsonObjectToStruct(new_item.params, proto.mutable_params()).IgnoreError();
  proto.set_received_at(WholeUnixMillis(now));
  proto.set_deadline(WholeUnixMillis(now + timeout));
  proto.set_status(v1::PENDING);
  item.server_name = new_item.server_name;
  item.request_id = new_item.request_id;
  item.params = new_item.params.is_object() ? std::move(new_item.params)
                                            : json::object();
  item.send = std::move(send);
  const std::string id = proto.id();
  v1::PendingRequest snapshot = proto;
  {
    absl::MutexLock lock(&mu_);
    // Scheduling under mu_ is safe (the callback runs later, on the
    // clock's thread); only cancelling must happen outside it.
    item.timer = clock_->Schedule(now + timeout, [this, id] { OnDeadline(id); });
    by_request_[RequestKey(new_item.session_id, item.request_id)] = id;
    order_.push_back(id);
    items_.emplace(id, std::move(item));
  }
  Publish(snapshot);
  const std::string kind =
      absl::AsciiStrToLower(v1::PendingKind_Name(snapshot.kind()));
  pipeline_->Log("info", "daemon", new_item.server_id, new_item.session_id,
                 absl::StrCat(new_item.server_name, " asks for ", kind, " (",
                              new_item.method, "): pending request ", id,
                              ", answer within ",
                              absl::FormatDuration(timeout)));
  return snapshot;
}

absl::Status PendingRequests::Answerable(const Item& item) {
  const std::string& id = item.proto.id();
  switch (item.proto.status()) {
    case v1::PENDING:
      return absl::OkStatus();
    case v1::RESOLVED:
    case v1::REJECTED:
      return Error(v1::FAILED_PRECONDITION,
                   absl::StrCat("pending request ", id, " was already ",
                                item.proto.status() == v1::RESOLVED
                                    ? "resolved"
                                    : "rejected",
                                "; a request is answered only once"),
                   {{"pendingId", id},
                    {"status", v1::PendingStatus_Name(item.proto.status())}});
    default:
      return Error(v1::NOT_FOUND,
                   absl::StrCat("pending request ", id, " expired: ", item.why),
                   {{"pendingId", id}, {"status", "EXPIRED"}});
  }
}

absl::Status PendingRequests::Finish(Item& item, v1::PendingStatus status,
                                     const std::string& why,
                                     AnswerSender* send,
                                     Clock::TimerId* timer) {
  const std::string& id = item.proto.id();
  absl::Status answerable = Answerable(item);
  if (!answerable.ok()) return answerable;
  item.proto.set_status(status);
  item.why = why;
  if (send != nullptr) *send = std::move(item.send);
  item.send = nullptr;
  if (timer != nullptr) *timer = item.timer;
  item.timer = 0;
  order_.erase(std::remove(order_.begin(), order_.end(), id), order_.end());
  by_request_.erase(RequestKey(item.proto.session_id(), item.request_id));
  Remember(id);
  return absl::OkStatus();
}

void PendingRequests::Remember(const std::string& id) {
  finished_.push_back(id);
  while (finished_.size() > options_.max_finished) {
    items_.erase(finished_.front());
    finished_.pop_front();
  }
}

absl::StatusOr<v1::PendingRequest> PendingRequests::Snapshot(
    const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(id);
  if (it == items_.end()) return UnknownPendingItem(id);
  return it->second.proto;
}

absl::StatusOr<v1::PendingRequest> PendingRequests::Get(
    const std::string& id) const {
  return Snapshot(id);
}

absl::StatusOr<v1::PendingRequest> PendingRequests::Deliver(
    const std::string& id, AnswerSender send, const std::string& member,
    const std::string& value_json) {
  absl::Status sent =
      send ? send(member, value_json)
           : Error(v1::INTERNAL_ERROR, "the request has no way to answer");
  v1::PendingRequest snapshot;
  std::string server_name;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(id);
    if (it == items_.end()) return sent;  // forgotten meanwhile: very old
    if (!sent.ok()) {
      it->second.proto.set_status(v1::EXPIRED);
      it->second.why = absl::StrCat("the answer could not be sent: ",
                                    sent.message());
    }
    snapshot = it->second.proto;
    server_name = it->second.server_name;
  }
  Publish(snapshot);
  if (!sent.ok()) {
    pipeline_->Log("warn", "daemon", snapshot.server_id(),
                   snapshot.session_id(),
                   absl::StrCat("pending request ", id, " of ", server_name,
                                ": the answer could not be sent: ",
                                sent.message()));
    return sent;
  }
  return snapshot;
}

absl::StatusOr<v1::PendingRequest> PendingRequests::Resolve(
    const std::string& id, json result, bool apply_defaults) {
  v1::PendingKind kind = v1::PENDING_KIND_UNSPECIFIED;
  json params;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(id);
    if (it != items_.end()) {
      kind = it->second.proto.kind();
      params = it->second.params;
      // Refuse answers to finished items before checking them.
      absl::Status answerable = Answerable(it->second);
      if (!answerable.ok()) return answerable;
    }
  }
  if (params.is_null()) return Snapshot(id).status();  // unknown id
  // Checked outside the lock: the rules are pure, and a slow check must
  // not hold up other answers.
  absl::StatusOr<json> checked;
  switch (kind) {
    case v1::ELICITATION:
      checked =
          mcp::ValidateElicitationResult(params, std::move(result), apply_defaults);
      break;
    case v1::SAMPLING:
      checked = mcp::ValidateSamplingResult(params, std::move(result));
      break;
    default:
      if (!result.is_object()) {
        checked = Error(v1::INVALID_REQUEST, "the result must be a JSON object",
                        {{"field", "result"}});
      } else {
        checked = std::move(result);
      }
      break;
  }
  if (!checked.ok()) return checked.status();
  AnswerSender send;
  Clock::TimerId timer = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(id);
    if (it == items_.end()) return Snapshot(id).status();
    absl::Status finished =
        Finish(it->second, v1::RESOLVED, "resolved", &send, &timer);
    if (!finished.ok()) return finished;
  }
  clock_->Cancel(timer);
  return Deliver(id, std::move(send), "result", checked->dump());
}

absl::StatusOr<v1::PendingRequest> PendingRequests::Reject(
    const std::string& id, const std::string& reason,
    v1::RejectAction action) {
  AnswerSender send;
  Clock::TimerId timer = 0;
  std::string member, value;
  {
    absl::MutexLock lock(&mu_);
    auto it = items_.find(id);
    if (it == items_.end()) return UnknownPendingItem(id);
    Item& item = it->second;
    if (item.proto.status() == v1::PENDING &&
        (action == v1::REJECT_ACTION_DECLINE ||
         action == v1::REJECT_ACTION_CANCEL)) {
      if (item.proto.kind() != v1::ELICITATION) {
        return Error(v1::INVALID_REQUEST,
                     absl::StrCat("decline and cancel answer elicitation "
                                  "requests; pending request ",
                                  id, " is ", item.proto.method(),
                                  ": reject it with action ERROR"),
                     {{"field", "action"}, {"pendingId", id}});
      }
      member = "result";
      json answer = {{"action", action == v1::REJECT_ACTION_DECLINE
                                    ? "decline"
                                    : "cancel"}};
      value = answer.dump();
    } else {
      member = "error";
      value = ErrorJson(kUserRejectedCode,
                        reason.empty() ? "User rejected the request" : reason);
    }
    absl::Status finished = Finish(item, v1::REJECTED, "rejected", &send, &timer);
    if (!finished.ok()) return finished;
  }
  clock_->Cancel(timer);
  return Deliver(id, std::move(send), member, value);
}

void PendingRequests::OnDeadline(const std::string& id) {
  AnswerSender send;
  std::string server_name;
  v1::PendingRequest snapshot;
  {
    absl::MutexLock lock(&mu_);
    if (destroying_) return;
    auto it = items_.find(id);
    if (it == items_.end()) return;
    // The timer is this callback; there is nothing to cancel.
    if (!Finish(it->second, v1::EXPIRED,
                "nobody answered before its deadline; the server was told: " +
                    options_.timeout_message,
                &send, nullptr)
             .ok()) {
      return;
    }
    snapshot = it->second.proto;
    server_name = it->second.server_name;
  }
  // The item stays EXPIRED whether or not the error reaches the server.
  if (send) {
    send("error", ErrorJson(kTimedOutCode, options_.timeout_message))
        .IgnoreError();
  }
  Publish(snapshot);
  pipeline_->Log("warn", "daemon", snapshot.server_id(), snapshot.session_id(),
                 absl::StrCat("pending request ", id, " (", snapshot.method(),
                              ") of ", server_name,
                              " expired unanswered; rejected with: ",
                              options_.timeout_message));
}

void PendingRequests::Expire(const std::vector<std::string>& ids,
                             const std::string& why) {
  std::vector<Clock::TimerId> timers;
  std::vector<std::pair<v1::PendingRequest, std::string>> finished;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : ids) {
      auto it = items_.find(id);
      if (it == items_.end()) continue;
      Clock::TimerId timer = 0;
      if (!Finish(it->second, v1::EXPIRED, why, nullptr, &timer).ok()) continue;
      timers.push_back(timer);
      finished.emplace_back(it->second.proto, it->second.server_name);
    }
  }
  for (Clock::TimerId timer : timers) clock_->Cancel(timer);
  for (const auto& [item, server_name] : finished) {
    Publish(item);
    pipeline_->Log("info", "daemon", item.server_id(), item.session_id(),
                   absl::StrCat("pending request ", item.id(), " (",
                                item.method(), ") of ", server_name,
                                " ended unanswered: ", why));
  }
}

void PendingRequests::Withdraw(const std::string& session_id,
                               const std::string& request_id,
                               const std::string& reason) {
  std::string id;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_request_.find(RequestKey(session_id, request_id));
    if (it == by_request_.end()) return;
    id = it->second;
  }
  Expire({id}, absl::StrCat("the server withdrew it",
                            reason.empty() ? "" : ": ", reason));
}

void PendingRequests::EndSession(const std::string& session_id,
                                 const std::string& reason) {
  std::vector<std::string> ids;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : order_) {
      auto it = items_.find(id);
      if (it != items_.end() && it->second.proto.session_id() == session_id) {
        ids.push_back(id);
      }
    }
  }
  if (ids.empty()) return;
  Expire(ids, absl::StrCat("its session ended",
                           reason.empty() ? "" : " (", reason,
                           reason.empty() ? "" : ")"));
}

std::vector<v1::PendingRequest> PendingRequests::List(
    const std::string& server_id, v1::PendingKind kind) const {
  std::vector<v1::PendingRequest> out;
  absl::MutexLock lock(&mu_);
  for (const std::string& id : order_) {
    auto it = items_.find(id);
    if (it == items_.end()) continue;
    const v1::PendingRequest& item = it->second.proto;
    if (!server_id.empty() && item.server_id() != server_id) continue;
    if (kind != v1::PENDING_KIND_UNSPECIFIED && item.kind() != kind) continue;
    out.push_back(item);
  }
  return out;
}

size_t PendingRequests::pending_count() const {
  absl::MutexLock lock(&mu_);
  return order_.size();
}

}  // namespace inspector::engine
