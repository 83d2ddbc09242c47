#include "server/engine/intercept.h"

#include <re2/re2.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/intercept/breakpoint_spec.h"
#include "server/engine/pipeline.h"
#include "common/clock/timer_queue.h"

namespace inspector::engine {

using Json = nlohmann::json;

const char* InterceptActionName(v1::InterceptAction action) {
  switch (action) {
    case v1::FORWARD:
      return "forward";
    case v1::MODIFY:
      return "modify";
    case v1::DROP:
      return "drop";
    default:
      return "";
  }
}

// A breakpoint compiled once, when it is added: its expressions, its
// pointer's tokens, its value parsed; its conditions ordered cheapest
// first. Matching a message allocates nothing unless a pointer finds a
// value that must be compared with something other than its own text.
struct InterceptStage::Compiled {
  v1::Breakpoint proto;
  // Direction: 0 any, 1 client to server, 2 server to client.
  int direction = 0;
  std::optional<MessageKind> kind;
  bool kind_unknown = false;  // a kind no message has: matches nothing
  std::unique_ptr<RE2> pattern;
  std::unique_ptr<RE2> value_pattern;
  std::optional<std::vector<std::string>> pointer;
  // The pointer's last key as it must appear in a message that has it,
  // quoted ("path" for /params/arguments/path), unless it is an array
  // index or needs escaping: a text without it (and without a backslash,
  // so without escaped keys) cannot match, and is not scanned.
  std::string pointer_key;
  Json value;
  // `value` as compact JSON text: a found value with this very text is
  // equal without being parsed.
  std::string value_text;
  bool has_value = false;

  static std::shared_ptr<Compiled> Make(v1::Breakpoint proto) {
    auto c = std::make_shared<Compiled>();
    if (proto.direction() != v1::DIRECTION_UNSPECIFIED) {
      c->direction = proto.direction() == v1::CLIENT_TO_SERVER ? 1 : 2;
    }
    if (!proto.kind().empty()) {
      for (MessageKind k :
           {MessageKind::kRequest, MessageKind::kNotification,
            MessageKind::kResponse, MessageKind::kError, MessageKind::kBatch,
            MessageKind::kInvalid}) {
        if (proto.kind() == KindName(k)) c->kind = k;
      }
      c->kind_unknown = !c->kind.has_value();
    }
    if (!proto.pattern().empty()) {
      c->pattern = std::make_unique<RE2>(proto.pattern(), RE2::Quiet);
    }
    if (!proto.value_pattern().empty()) {
      c->value_pattern =
          std::make_unique<RE2>(proto.value_pattern(), RE2::Quiet);
    }
    if (!proto.json_pointer().empty()) {
      c->pointer = PointerTokens(proto.json_pointer());
      // ValidateBreakpoint refuses a bad pointer; should one get here, it
      // points at nothing.
      if (!c->pointer.has_value()) c->pointer.emplace(1, std::string());
      const std::string& last = c->pointer->empty() ? std::string()
                                                    : c->pointer->back();
      const bool index = !last.empty() &&
                         last.find_first_not_of("0123456789") ==
                             std::string::npos;
      const bool plain = std::none_of(last.begin(), last.end(), [](char ch) {
        return ch == '"' || ch == '\\' ||
               static_cast<unsigned char>(ch) < 0x20;
      });
      if (!c->pointer->empty() && !index && plain) {
        c->pointer_key = absl::StrCat("\"", last, "\"");
      }
    }
    if (!proto.value().empty()) {
      c->value = Json::parse(proto.value(), nullptr, false);
      c->value_text =
          c->value.dump(-1, ' ', false, Json::error_handler_t::replace);
      c->has_value = true;
    }
    c->proto = std::move(proto);
    return c;
  }

  // `s.raw` is valid JSON (InspectMessage accepted it).
  bool Matches(const InterceptView& s) const {
    const v1::Breakpoint& b = proto;
    // Fields first: a comparison each, no look at the text.
    if (direction != 0 && (direction == 1) != s.client_to_server) return false;
    if (kind_unknown || (kind.has_value() && *kind != s.info->kind)) {
      return false;
    }
    if (!b.method().empty() && b.method() != s.method) return false;
    if (!b.target().empty() && b.target() != s.target) return false;
    if (!b.session_id().empty() && b.session_id() != s.session_id) {
      return false;
    }
    if (!b.server_id().empty() && b.server_id() != s.server_id &&
        b.server_id() != s.server_name) {
      return false;
    }
    // Then the text: one RE2 search, or one scan down the pointer's path.
    if (pattern != nullptr && !RE2::PartialMatch(s.raw, *pattern)) {
      return false;
    }
    if (!pointer.has_value()) return true;
    if (!pointer_key.empty() &&
        s.raw.find(pointer_key) == std::string_view::npos &&
        s.raw.find('\\') == std::string_view::npos) {
      return false;
    }
    std::optional<std::string_view> at = FindByPointer(s.raw, *pointer);
    if (!at.has_value()) return false;
    if (has_value) {
      if (*at == value_text) return true;
      Json found = Json::parse(*at, nullptr, false);
      return !found.is_discarded() && found == value;
    }
    if (value_pattern != nullptr) {
      if (!at->empty() && at->front() == '"' &&
          at->find('\\') == std::string_view::npos) {
        return RE2::PartialMatch(at->substr(1, at->size() - 2),
                                 *value_pattern);
      }
      Json found = Json::parse(*at, nullptr, false);
      if (found.is_discarded()) return false;
      const std::string text =
          found.is_string()
              ? found.get<std::string>()
              : found.dump(-1, ' ', false, Json::error_handler_t::replace);
      return RE2::PartialMatch(text, *value_pattern);
    }
    return true;
  }
};

struct InterceptStage::Held {
  v1::HeldMessage proto;
  bool leave_unanswered = false;
  Clock::TimerId timer = 0;
};

namespace {

v1::McpMessage MessageOf(const InterceptSubject& s, double ts) {
  v1::McpMessage m;
  m.set_timestamp(ts);
  m.set_server_id(s.server_id);
  m.set_session_id(s.session_id);
  m.set_direction(s.client_to_server ? v1::CLIENT_TO_SERVER
                                     : v1::SERVER_TO_CLIENT);
  m.set_kind(KindName(s.info.kind));
  m.set_jsonrpc_id(s.info.id);
  m.set_method(s.method);
  m.set_target(s.target);
  m.set_raw(s.raw);
  m.set_raw_size(s.raw.size());
  return m;
}

bool IsAnswer(MessageKind kind) {
  return kind == MessageKind::kResponse || kind == MessageKind::kError;
}

absl::Status BadEdit(const std::string& why) {
  return Error(v1::INVALID_REQUEST,
               absl::StrCat("the modified message ", why, "; nothing was sent"),
               {{"field", "modified"}});
}

uint64_t HeldNumber(const std::string& id) {
  uint64_t n = 0;
  if (id.size() > 2) (void)absl::SimpleAtoi(id.substr(2), &n);
  return n;
}

}  // namespace

InterceptStage::InterceptStage(Pipeline* pipeline, Clock* clock)
    : pipeline_(pipeline), clock_(clock) {}

InterceptStage::~InterceptStage() {
  std::vector<Clock::TimerId> timers;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, lane] : lanes_) {
      for (Item& item : lane.items) {
        if (item.held && item.held->timer != 0) {
          timers.push_back(item.held->timer);
        }
      }
    }
  }
  if (clock_ != nullptr) {
    for (Clock::TimerId t : timers) clock_->Cancel(t);
  }
  own_clock_.reset();
}

Clock* InterceptStage::clock() {
  if (clock_ == nullptr) {
    own_clock_ = std::make_unique<TimerQueue>();
    clock_ = own_clock_.get();
  }
  return clock_;
}

void InterceptStage::UpdateDemand() {
  if (closed_) {
    demand_.store(0, std::memory_order_release);
    return;
  }
  int demand = mode_ == v1::INTERCEPT ? 1 : 0;
  for (const auto& b : breakpoints_) demand += b->proto.enabled() ? 1 : 0;
  demand += static_cast<int>(lanes_.size());
  demand_.store(demand, std::memory_order_release);
}

void InterceptStage::Publish(v1::Event event) {
  if (pipeline_ != nullptr) pipeline_->Publish(std::move(event));
}

bool InterceptStage::Matches(const v1::Breakpoint& breakpoint,
                             const InterceptSubject& subject) {
  return Compiled::Make(breakpoint)->Matches(subject.View());
}

bool InterceptStage::Passes(const InterceptView& view) {
  absl::MutexLock lock(&mu_);
  if (closed_) return true;
  if (mode_ == v1::INTERCEPT) return false;
  if (!lanes_.empty() &&
      lanes_.count({std::string(view.session_id), view.client_to_server}) >
          0) {
    return false;
  }
  for (const auto& b : breakpoints_) {
    if (b->proto.enabled() && b->Matches(view)) return false;
  }
  return true;
}

bool InterceptStage::ShouldHold(const InterceptView& subject,
                                std::string* breakpoint_id,
                                bool* leave_unanswered) {
  if (closed_) {
    breakpoint_id->clear();
    *leave_unanswered = false;
    return false;
  }
  for (const auto& b : breakpoints_) {
    if (!b->proto.enabled() || !b->Matches(subject)) continue;
    b->proto.set_hits(b->proto.hits() + 1);
    if (b->proto.once()) b->proto.set_enabled(false);
    *breakpoint_id = b->proto.id();
    *leave_unanswered = b->proto.leave_unanswered();
    UpdateDemand();
    return true;
  }
  breakpoint_id->clear();
  *leave_unanswered = false;
  return mode_ == v1::INTERCEPT;
}

v1::Event InterceptStage::MakeHeld(Item& item, const std::string& breakpoint_id,
                                   bool leave_unanswered) {
  auto held = std::make_shared<Held>();
  const std::string id = absl::StrCat("h-", next_held_++);
  const double now = static_cast<double>(pipeline_->NowMillis());
  held->proto.set_id(id);
  *held->proto.mutable_message() = MessageOf(item.subject, now);
  held->proto.set_held_at(now);
  held->proto.set_breakpoint_id(breakpoint_id);
  held->leave_unanswered = leave_unanswered;
  item.held = held;
  held_[id] = {item.subject.session_id, item.subject.client_to_server};
  if (hold_timeout_ms_ > 0) {
    held->timer = clock()->After(
        absl::Milliseconds(hold_timeout_ms_), [this, id] {
          Resolve(id, v1::FORWARD, "", std::nullopt, "timeout").IgnoreError();
        });
  }
  v1::Event event;
  event.set_timestamp(now);
  *event.mutable_held() = held->proto;
  return event;
}

void InterceptStage::Submit(InterceptSubject subject, Continuation next,
                            std::function<void()> on_held) {
  LaneKey key{subject.session_id, subject.client_to_server};
  v1::Event event;
  std::function<void()> held_hook;
  {
    absl::MutexLock lock(&mu_);
    auto it = lanes_.find(key);
    if (it != lanes_.end()) {
      it->second.items.push_back(
          {std::move(subject), std::move(next), std::move(on_held), nullptr});
      return;
    }
    std::string breakpoint_id;
    bool leave = false;
    if (ShouldHold(subject.View(), &breakpoint_id, &leave)) {
      Lane& lane = lanes_[key];
      lane.items.push_back(
          {std::move(subject), std::move(next), std::move(on_held), nullptr});
      event = MakeHeld(lane.items.back(), breakpoint_id, leave);
      held_hook = lane.items.back().on_held;
      UpdateDemand();
    }
  }
  if (event.has_held()) {
    if (held_hook) held_hook();
    Publish(std::move(event));
    return;
  }
  InterceptOutcome outcome;
  outcome.raw = std::move(subject.raw);
  next(std::move(outcome));
}

void InterceptStage::Drain(const LaneKey& key) {
  while (true) {
    Item run;
    v1::Event event;
    std::function<void()> held_hook;
    {
      absl::MutexLock lock(&mu_);
      auto it = lanes_.find(key);
      if (it == lanes_.end()) return;  // the session ended meanwhile
      Lane& lane = it->second;
      if (lane.items.empty()) {
        lanes_.erase(it);
        UpdateDemand();
        return;
      }
      Item& front = lane.items.front();
      if (front.held) {
        lane.draining = false;
        return;
      }
      std::string breakpoint_id;
      bool leave = false;
      if (ShouldHold(front.subject.View(), &breakpoint_id, &leave)) {
        event = MakeHeld(front, breakpoint_id, leave);
        event.mutable_held()->set_queued_behind(lane.items.size() - 1);
        held_hook = front.on_held;
        lane.draining = false;
      } else {
        run = std::move(front);
        lane.items.pop_front();
      }
    }
    if (event.has_held()) {
      if (held_hook) held_hook();
      Publish(std::move(event));
      return;
    }
    InterceptOutcome outcome;
    outcome.raw = std::move(run.subject.raw);
    run.next(std::move(outcome));
  }
}

absl::StatusOr<std::string> InterceptStage::CheckEdit(
    const MessageInfo& held, const std::string& edited) {
  Json doc = Json::parse(edited, nullptr, false);
  if (doc.is_discarded()) return BadEdit("is not JSON");
  if (!doc.is_object()) {
    return BadEdit("is not a JSON-RPC message (a JSON object)");
  }
  auto version = doc.find("jsonrpc");
  if (version == doc.end() || *version != "2.0") {
    return BadEdit("is not JSON-RPC 2.0 (\"jsonrpc\": \"2.0\" is missing)");
  }
  auto info = InspectMessage(edited);
  if (!info.ok() || info->kind == MessageKind::kInvalid ||
      info->kind == MessageKind::kBatch) {
    return BadEdit(
        "is not a JSON-RPC request, notification, response or error");
  }
  const bool same_kind =
      info->kind == held.kind || (IsAnswer(info->kind) && IsAnswer(held.kind));
  if (!same_kind) {
    return BadEdit(absl::StrCat("is a ", KindName(info->kind),
                                "; the held message is a ", KindName(held.kind),
                                " and must stay one"));
  }
  if (!held.id.empty() || !info->id.empty()) {
    Json a = Json::parse(held.id.empty() ? "null" : held.id, nullptr, false);
    Json b = Json::parse(info->id.empty() ? "null" : info->id, nullptr, false);
    if (a != b) {
      return BadEdit(absl::StrCat("has id ", info->id.empty() ? "(none)" : info->id,
                                  "; the held message's id is ", held.id,
                                  " and must stay"));
    }
  }
  if (edited.find_first_of("\r\n") != std::string::npos) {
    // Line-delimited transports (stdio) take one line per message.
    return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return edited;
}

absl::StatusOr<v1::HeldMessage> InterceptStage::Resolve(
    const std::string& id, v1::InterceptAction action,
    const std::string& modified, std::optional<bool> leave_unanswered,
    const std::string& resolved_by) {
  if (action != v1::FORWARD && action != v1::MODIFY && action != v1::DROP) {
    return Error(v1::INVALID_REQUEST,
                 "action must be FORWARD, MODIFY or DROP",
                 {{"field", "action"}});
  }
  Item taken;
  LaneKey key;
  InterceptOutcome outcome;
  Clock::TimerId timer = 0;
  {
    absl::MutexLock lock(&mu_);
    auto h = held_.find(id);
    if (h == held_.end()) {
      return Error(v1::NOT_FOUND,
                   absl::StrCat("no held message has id \"", id,
                                "\" (it was resolved already, or never "
                                "held); nothing was sent"),
                   {{"heldId", id}});
    }
    key = h->second;
    Lane& lane = lanes_[key];
    Item& front = lane.items.front();
    outcome.raw = front.subject.raw;
    if (action == v1::MODIFY) {
      auto edited = CheckEdit(front.subject.info, modified);
      if (!edited.ok()) return edited.status();
      outcome.original_raw = std::move(outcome.raw);
      outcome.raw = *std::move(edited);
    }
    outcome.action = action;
    outcome.resolved_by = resolved_by;
    outcome.held_id = id;
    outcome.leave_unanswered =
        action == v1::DROP &&
        front.subject.info.kind == MessageKind::kRequest &&
        leave_unanswered.value_or(front.held->leave_unanswered);
    v1::HeldMessage& p = front.held->proto;
    p.set_action(action);
    p.set_resolved_by(resolved_by);
    if (action == v1::MODIFY) p.set_modified(outcome.raw);
    p.set_unanswered(outcome.leave_unanswered);
    p.set_queued_behind(lane.items.size() - 1);
    timer = front.held->timer;
    taken = std::move(front);
    lane.items.pop_front();
    lane.draining = true;
    held_.erase(h);
  }
  if (timer != 0 && resolved_by != "timeout") clock()->Cancel(timer);
  v1::HeldMessage result = taken.held->proto;
  v1::Event event;
  event.set_timestamp(static_cast<double>(pipeline_->NowMillis()));
  *event.mutable_held() = result;
  Publish(std::move(event));
  taken.next(std::move(outcome));
  Drain(key);
  return result;
}

void InterceptStage::SessionEnded(const std::string& session_id) {
  std::vector<Item> items;
  std::vector<Clock::TimerId> timers;
  {
    absl::MutexLock lock(&mu_);
    for (bool c2s : {true, false}) {
      auto it = lanes_.find({session_id, c2s});
      if (it == lanes_.end()) continue;
      for (Item& item : it->second.items) {
        if (item.held) {
          held_.erase(item.held->proto.id());
          if (item.held->timer != 0) timers.push_back(item.held->timer);
          item.held->proto.set_action(v1::DROP);
          item.held->proto.set_resolved_by("session_ended");
        }
        items.push_back(std::move(item));
      }
      lanes_.erase(it);
    }
    if (items.empty()) return;
    UpdateDemand();
  }
  for (Clock::TimerId t : timers) clock()->Cancel(t);
  for (Item& item : items) {
    InterceptOutcome outcome;
    outcome.action = v1::DROP;
    outcome.resolved_by = "session_ended";
    outcome.raw = std::move(item.subject.raw);
    if (item.held) {
      outcome.held_id = item.held->proto.id();
      v1::Event event;
      event.set_timestamp(static_cast<double>(pipeline_->NowMillis()));
      *event.mutable_held() = item.held->proto;
      Publish(std::move(event));
    }
    item.next(std::move(outcome));
  }
}

void InterceptStage::Close() {
  std::vector<std::string> sessions;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    UpdateDemand();
    for (const auto& [key, lane] : lanes_) {
      if (sessions.empty() || sessions.back() != key.first) {
        sessions.push_back(key.first);
      }
    }
  }
  for (const std::string& session : sessions) SessionEnded(session);
}

v1::InterceptState InterceptStage::GetState() {
  absl::MutexLock lock(&mu_);
  v1::InterceptState state;
  state.set_mode(mode_);
  state.set_hold_timeout_ms(hold_timeout_ms_);
  for (const auto& b : breakpoints_) *state.add_breakpoints() = b->proto;
  state.set_held(static_cast<uint32_t>(held_.size()));
  return state;
}

v1::InterceptState InterceptStage::SetState(
    v1::InterceptMode mode, std::optional<uint32_t> hold_timeout_ms) {
  std::vector<std::string> release;
  {
    absl::MutexLock lock(&mu_);
    if (hold_timeout_ms.has_value()) hold_timeout_ms_ = *hold_timeout_ms;
    if (mode != v1::INTERCEPT_MODE_UNSPECIFIED && mode != mode_) {
      if (mode == v1::PASSTHROUGH) {
        for (const auto& [id, key] : held_) release.push_back(id);
      }
      mode_ = mode;
      UpdateDemand();
    }
  }
  // Oldest first: ids count up.
  std::sort(release.begin(), release.end(),
            [](const std::string& a, const std::string& b) {
              return HeldNumber(a) < HeldNumber(b);
            });
  for (const std::string& id : release) {
    Resolve(id, v1::FORWARD, "", std::nullopt, "passthrough").IgnoreError();
  }
  return GetState();
}

std::vector<v1::Breakpoint> InterceptStage::ListBreakpoints() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Breakpoint> out;
  for (const auto& b : breakpoints_) out.push_back(b->proto);
  return out;
}

absl::StatusOr<v1::Breakpoint> InterceptStage::AddBreakpoint(
    v1::Breakpoint breakpoint) {
  if (absl::Status valid = intercept::ValidateBreakpoint(breakpoint);
      !valid.ok()) {
    return valid;
  }
  absl::MutexLock lock(&mu_);
  breakpoint.set_id(absl::StrCat("bp-", next_breakpoint_++));
  breakpoint.set_hits(0);
  auto compiled = Compiled::Make(std::move(breakpoint));
  breakpoints_.push_back(compiled);
  UpdateDemand();
  return compiled->proto;
}

absl::StatusOr<v1::Breakpoint> InterceptStage::UpdateBreakpoint(
    const std::string& id, std::optional<bool> enabled, bool reset_hits) {
  absl::MutexLock lock(&mu_);
  for (auto& b : breakpoints_) {
    if (b->proto.id() != id) continue;
    if (enabled.has_value()) b->proto.set_enabled(*enabled);
    if (reset_hits) b->proto.set_hits(0);
    UpdateDemand();
    return b->proto;
  }
  return Error(v1::NOT_FOUND, absl::StrCat("no breakpoint has id \"", id, "\""),
               {{"breakpointId", id}});
}

absl::Status InterceptStage::RemoveBreakpoint(const std::string& id) {
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(breakpoints_.begin(), breakpoints_.end(),
                         [&](const auto& b) { return b->proto.id() == id; });
  if (it == breakpoints_.end()) {
    return Error(v1::NOT_FOUND,
                 absl::StrCat("no breakpoint has id \"", id, "\""),
                 {{"breakpointId", id}});
  }
  breakpoints_.erase(it);
  UpdateDemand();
  return absl::OkStatus();
}

std::vector<v1::HeldMessage> InterceptStage::ListHeld(
    const std::string& server) {
  std::vector<v1::HeldMessage> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [id, key] : held_) {
    auto lane = lanes_.find(key);
    if (lane == lanes_.end() || lane->second.items.empty()) continue;
    const Item& front = lane->second.items.front();
    if (!front.held) continue;
    if (!server.empty() && server != front.subject.server_id &&
        server != front.subject.server_name) {
      continue;
    }
    v1::HeldMessage m = front.held->proto;
    m.set_queued_behind(lane->second.items.size() - 1);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return HeldNumber(a.id()) < HeldNumber(b.id());
  });
  return out;
}

}  // namespace inspector::engine
