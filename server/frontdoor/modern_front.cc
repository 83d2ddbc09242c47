// ModernFront (modern_front.h): 2026-07-28 clients on the front doors.
//
// Locking: Impl::mu_ guards the pool, the era, the open rounds by
// requestState and the listeners; each Flow's mu guards its own state.
// Exchanges are written and relays called after the locks are released
// (an exchange may run OnClientGone on the calling thread, a relay calls
// back on its own threads).
#include "server/frontdoor/modern_front.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/strings.h"
#include "common/token.h"
#include "common/version.h"
#include "common/http/http1.h"
#include "server/engine/engine.h"
#include "server/frontdoor/mcp_versions.h"

namespace inspector::frontdoor {
namespace {

using Json = nlohmann::json;

// The version the front door speaks to a legacy server.
constexpr char kLegacyUpstreamVersion[] = "2025-11-25";

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kResourceNotFoundLegacy = -32002;
constexpr int kHeaderMismatch = -32020;
constexpr int kMissingCapability = -32021;
constexpr int kUnsupportedVersion = -32022;

// Methods 2026-07-28 removed; a modern request naming one gets 404 -32601.
constexpr std::string_view kRemovedMethods[] = {
    "initialize", "ping", "logging/setLevel", "resources/subscribe",
    "resources/unsubscribe", "notifications/initialized",
    "notifications/roots/list_changed"};

// Results that carry ttlMs and cacheScope from 2026-07-28 on.
constexpr std::string_view kCacheableMethods[] = {
    "tools/list", "prompts/list", "resources/list",
    "resources/templates/list", "resources/read", "server/discover"};

// Requests a legacy server may send its client while it works, which
// become inputRequests; the client capability each needs.
std::string_view InputCapability(std::string_view method) {
  if (method == "elicitation/create") return "elicitation";
  if (method == "sampling/createMessage") return "sampling";
  if (method == "roots/list") return "roots";
  return "";
}

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool Contains(absl::Span<const std::string_view> list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

Json ErrorMessage(const Json& id, int code, std::string_view message,
                  Json data = nullptr) {
  Json error = {{"code", code}, {"message", std::string(message)}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

// The HTTP status that goes with a JSON-RPC error code in a modern answer.
int HttpStatusFor(const Json& message) {
  auto error = message.find("error");
  if (error == message.end() || !error->is_object()) return 200;
  int code = error->value("code", 0);
  if (code == kMethodNotFound) return 404;
  if (code == kHeaderMismatch || code == kMissingCapability ||
      code == kUnsupportedVersion) {
    return 400;
  }
  return 200;
}

Json SupportedVersions() {
  Json list = Json::array();
  for (std::string_view v : kModernVersions) list.push_back(std::string(v));
  return list;
}

// Standard Base64 with its padding, nothing else (RFC 4648, section 4).
bool StrictBase64(absl::string_view text) {
  if (text.size() % 4 != 0) return false;
  size_t pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0) return false;  // '=' only at the end
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '/') {
      return false;
    }
  }
  return pad <= 2;
}

// Mcp-Name / Mcp-Param-* values: plain, or "=?base64?...?=".
std::optional<std::string> DecodeHeaderValue(const std::string& value) {
  constexpr absl::string_view kPrefix = "=?base64?";
  constexpr absl::string_view kSuffix = "?=";
  if (value.size() >= kPrefix.size() + kSuffix.size() &&
      absl::StartsWith(value, kPrefix) && absl::EndsWith(value, kSuffix)) {
    absl::string_view encoded = absl::string_view(value).substr(
        kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
    std::string decoded;
    if (!StrictBase64(encoded) || !absl::Base64Unescape(encoded, &decoded)) {
      return std::nullopt;
    }
    return decoded;
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return std::nullopt;
  }
  return value;
}

// params.name or params.uri, for the methods whose Mcp-Name carries it.
std::optional<std::string> NameOf(const Json& request) {
  std::string method = request.value("method", "");
  const char* field = nullptr;
  if (method == "tools/call" || method == "prompts/get") field = "name";
  if (method == "resources/read") field = "uri";
  if (field == nullptr) return std::nullopt;
  auto params = request.find("params");
  if (params == request.end() || !params->is_object()) return std::string();
  auto value = params->find(field);
  if (value == params->end() || !value->is_string()) return std::string();
  return value->get<std::string>();
}

// The request as a legacy server takes it: the revision's `_meta` keys and
// the retry's fields removed, `id` replaced.
Json ForLegacy(Json request, const Json& id) {
  request["id"] = id;
  auto params = request.find("params");
  if (params != request.end() && params->is_object()) {
    params->erase("inputResponses");
    params->erase("requestState");
    auto meta = params->find("_meta");
    if (meta != params->end() && meta->is_object()) {
      for (auto it = meta->begin(); it != meta->end();) {
        if (absl::StartsWith(it.key(), kModernPrefix)) {
          it = meta->erase(it);
        } else {
          ++it;
        }
      }
      if (meta->empty()) params->erase("_meta");
    }
  }
  return request;
}

// A tool argument mirrored in an Mcp-Param-{header} header (the tool's
// inputSchema names it with x-mcp-header).
struct HeaderParam {
  std::vector<std::string> path;  // property names from `arguments` down
  std::string header;             // the {header} part
};

// The x-mcp-header annotations of a tools/list result's tools, reached
// through `properties` only (the revision's "statically reachable").
void CollectHeaderParams(const Json& schema, std::vector<std::string>& path,
                         std::vector<HeaderParam>& out, int depth) {
  if (!schema.is_object() || depth > 16) return;
  auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object()) return;
  for (auto it = properties->begin(); it != properties->end(); ++it) {
    path.push_back(it.key());
    if (it.value().is_object()) {
      auto header = it.value().find("x-mcp-header");
      if (header != it.value().end() && header->is_string()) {
        out.push_back(HeaderParam{path, header->get<std::string>()});
      }
      CollectHeaderParams(it.value(), path, out, depth + 1);
    }
    path.pop_back();
  }
}

std::map<std::string, std::vector<HeaderParam>> HeaderParamsOf(
    const Json& tools_result) {
  std::map<std::string, std::vector<HeaderParam>> out;
  auto tools = tools_result.find("tools");
  if (tools == tools_result.end() || !tools->is_array()) return out;
  for (const Json& tool : *tools) {
    if (!tool.is_object() || !tool.contains("name") ||
        !tool["name"].is_string()) {
      continue;
    }
    std::vector<HeaderParam> params;
    std::vector<std::string> path;
    CollectHeaderParams(tool.value("inputSchema", Json::object()), path,
                        params, 0);
    if (!params.empty()) out[tool["name"].get<std::string>()] = params;
  }
  return out;
}

// Checks a tools/call's Mcp-Param-* headers against its arguments; the
// mismatch, or "" when they agree.
std::string CheckHeaderParams(const http::Request& request,
                              const Json& arguments,
                              const std::vector<HeaderParam>& params) {
  for (const HeaderParam& param : params) {
    const Json* value = &arguments;
    for (const std::string& key : param.path) {
      if (!value->is_object() || !value->contains(key)) {
        value = nullptr;
        break;
      }
      value = &(*value)[key];
    }
    std::string name = absl::StrCat("Mcp-Param-", param.header);
    const std::string* header =
        request.Header(absl::AsciiStrToLower(name));
    if (value == nullptr || value->is_null()) {
      if (header != nullptr) {
        return absl::StrCat(name, " is given but its argument is not");
      }
      continue;
    }
    if (header == nullptr) {
      return absl::StrCat(name, " is required: the argument is set");
    }
    std::optional<std::string> decoded = DecodeHeaderValue(*header);
    if (!decoded.has_value()) {
      return absl::StrCat(name, " is not a valid header value (bad Base64 or "
                                "characters)");
    }
    bool same;
    if (value->is_string()) {
      same = *decoded == value->get<std::string>();
    } else if (value->is_boolean()) {
      same = *decoded == (value->get<bool>() ? "true" : "false");
    } else if (value->is_number()) {
      double number;
      same = absl::SimpleAtod(*decoded, &number) &&
             number == value->get<double>();
    } else {
      same = false;  // only primitives are mirrored
    }
    if (!same) {
      return absl::StrCat(name, " '", *decoded,
                          "' does not match the argument's value");
    }
  }
  return "";
}

// A relay session of the pool.
struct Pooled {
  uint64_t no = 0;
  std::shared_ptr<Relay> relay;
  absl::Time idle_since;
  bool dead = false;  // its session ended
};

}  // namespace

// One client request (and its retries, for a legacy server's input
// requests), holding one relay while it runs.
struct Flow {
  enum class Kind { kLegacy, kPassThrough };
  Kind kind = Kind::kLegacy;
  std::string method;
  std::optional<std::string> name;
  Json capabilities = Json::object();
  bool logs = false;      // the request's _meta set a log level
  std::string log_level;  // which
  std::shared_ptr<Pooled> relay;
  std::string upstream_id;  // the id sent upstream, as JSON text

  absl::Mutex mu;
  // The client's request waiting for an answer now (null between rounds).
  std::shared_ptr<http::HttpExchange> exchange ABSL_GUARDED_BY(mu);
  http::Headers extra ABSL_GUARDED_BY(mu);
  Json client_id ABSL_GUARDED_BY(mu);
  bool sse ABSL_GUARDED_BY(mu) = false;        // the client accepts SSE
  bool streaming ABSL_GUARDED_BY(mu) = false;  // its answer is a stream
  // The open round's requestState, and the server's requests it asked
  // for (key -> the server's JSON-RPC id).
  std::string token ABSL_GUARDED_BY(mu);
  std::map<std::string, Json> outstanding ABSL_GUARDED_BY(mu);
  // What each outstanding key asked for ({method, params}).
  std::map<std::string, Json> asked ABSL_GUARDED_BY(mu);
  // The server's requests not yet put to the client: {id, {method, params}}.
  std::deque<std::pair<Json, Json>> queued ABSL_GUARDED_BY(mu);
  uint64_t next_key ABSL_GUARDED_BY(mu) = 1;
  std::optional<Json> final ABSL_GUARDED_BY(mu);  // the upstream's answer
  bool finished ABSL_GUARDED_BY(mu) = false;  // the client has its answer
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  // The request is with the server; the relay is not given back before
  // the server has answered it.
  bool upstream_pending ABSL_GUARDED_BY(mu) = false;
  bool released ABSL_GUARDED_BY(mu) = false;
  absl::Time deadline ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
};

class ModernFront::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(RelayOpener open, ModernOptions options)
      : open_(std::move(open)), options_(std::move(options)) {}

  void Post(std::shared_ptr<http::HttpExchange> exchange, http::Headers extra,
            Json body) {
    const http::Request& request = exchange->request();
    Json id = body.contains("id") ? body["id"] : Json();
    auto fail = [&](int status, int code, std::string_view message,
                    Json data = nullptr) {
      Reply(exchange, extra, status,
            ErrorMessage(id, code, message, std::move(data)));
    };
    if (!body.contains("jsonrpc") || body["jsonrpc"] != "2.0") {
      return fail(400, kInvalidRequest,
                  "Invalid Request: not a JSON-RPC 2.0 message");
    }
    if (!body.contains("method") || !body["method"].is_string()) {
      return fail(400, kInvalidRequest,
                  "Invalid Request: clients send requests and "
                  "notifications only");
    }
    std::string method = body["method"].get<std::string>();
    const bool notification = !body.contains("id");

    // _meta first: a request without its protocol version or capabilities
    // cannot be understood at all.
    auto params = body.find("params");
    const Json* meta = nullptr;
    if (params != body.end() && params->is_object()) {
      auto m = params->find("_meta");
      if (m != params->end() && m->is_object()) meta = &*m;
    }
    if (!notification) {
      if (meta == nullptr) {
        return fail(400, kInvalidParams,
                    "Invalid params: params._meta is required (with "
                    "io.modelcontextprotocol/protocolVersion and "
                    "io.modelcontextprotocol/clientCapabilities)");
      }
      auto version = meta->find(kVersionKey);
      if (version == meta->end() || !version->is_string()) {
        return fail(400, kInvalidParams,
                    "Invalid params: _meta lacks "
                    "io.modelcontextprotocol/protocolVersion");
      }
      auto caps = meta->find(kCapabilitiesKey);
      if (caps == meta->end() || !caps->is_object()) {
        return fail(400, kInvalidParams,
                    "Invalid params: _meta lacks "
                    "io.modelcontextprotocol/clientCapabilities");
      }
    }

    // The headers must say what the body says.
    const std::string* header_version = request.Header("mcp-protocol-version");
    std::string body_version;
    if (meta != nullptr && meta->contains(kVersionKey) &&
        (*meta)[kVersionKey].is_string()) {
      body_version = (*meta)[kVersionKey].get<std::string>();
    }
    if (header_version == nullptr) {
      return fail(400, kHeaderMismatch,
                  "Header mismatch: the MCP-Protocol-Version header is "
                  "required");
    }
    if (!body_version.empty() && *header_version != body_version) {
      return fail(400, kHeaderMismatch,
                  absl::StrCat("Header mismatch: MCP-Protocol-Version '",
                               *header_version, "' does not match _meta's '",
                               body_version, "'"));
    }
    const std::string& version =
        body_version.empty() ? *header_version : body_version;
    if (!Contains(kModernVersions, version)) {
      return fail(400, kUnsupportedVersion, "Unsupported protocol version",
                  {{"supported", SupportedVersions()}, {"requested", version}});
    }
    const std::string* header_method = request.Header("mcp-method");
    if (header_method == nullptr) {
      return fail(400, kHeaderMismatch,
                  "Header mismatch: the Mcp-Method header is required");
    }
    if (*header_method != method) {
      return fail(400, kHeaderMismatch,
                  absl::StrCat("Header mismatch: Mcp-Method '", *header_method,
                               "' does not match the body's method '", method,
                               "'"));
    }
    std::optional<std::string> name = NameOf(body);
    if (name.has_value()) {
      const std::string* header_name = request.Header("mcp-name");
      if (header_name == nullptr) {
        return fail(400, kHeaderMismatch,
                    "Header mismatch: the Mcp-Name header is required for " +
                        method);
      }
      std::optional<std::string> decoded = DecodeHeaderValue(*header_name);
      if (!decoded.has_value()) {
        return fail(400, kHeaderMismatch,
                    "Header mismatch: Mcp-Name is not a valid header value");
      }
      if (*decoded != *name) {
        return fail(400, kHeaderMismatch,
                    absl::StrCat("Header mismatch: Mcp-Name '", *decoded,
                                 "' does not match the body's '", *name, "'"));
      }
    }
    if (Contains(kRemovedMethods, method)) {
      if (notification) return Reply(exchange, extra, 202, Json());
      return fail(404, kMethodNotFound,
                  absl::StrCat("Method not found: ", method,
                               " is not part of MCP ", version));
    }
    if (notification) {
      // Cancellation is closing the request's stream; other notifications
      // of a client have no upstream session to go to.
      return Reply(exchange, extra, 202, Json());
    }

    auto flow = std::make_shared<Flow>();
    flow->method = method;
    flow->name = name;
    flow->capabilities = (*meta)[kCapabilitiesKey];
    flow->logs = meta->contains(kLogLevelKey);
    if (flow->logs && (*meta)[kLogLevelKey].is_string()) {
      flow->log_level = (*meta)[kLogLevelKey].get<std::string>();
    }
    bool sse = AcceptsSse(request);
    {
      absl::MutexLock lock(&flow->mu);
      flow->exchange = exchange;
      flow->extra = extra;
      flow->client_id = id;
      flow->sse = sse;
    }
    WithEra([self = shared_from_this(), flow,
             body = std::move(body)](absl::Status status) mutable {
      if (!status.ok()) return self->FailFlow(flow, status);
      self->Start(flow, std::move(body));
    });
  }

  void Reap(absl::Time now) {
    std::vector<std::shared_ptr<Flow>> late;
    std::vector<std::shared_ptr<Pooled>> stale;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [token, flow] : rounds_) late.push_back(flow);
      for (auto it = idle_.begin(); it != idle_.end();) {
        if (now - (*it)->idle_since >= options_.idle_timeout) {
          stale.push_back(*it);
          open_relays_.erase((*it)->no);
          it = idle_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& pooled : stale) pooled->relay->Close();
    for (auto& flow : late) {
      bool expired;
      {
        absl::MutexLock lock(&flow->mu);
        expired = flow->exchange == nullptr && now >= flow->deadline;
      }
      if (expired) Abandon(flow, "the client did not come back with its input");
    }
  }

  // `final`: no relay is opened afterwards.
  void Close(bool final) {
    std::vector<std::shared_ptr<Flow>> flows;
    std::vector<std::shared_ptr<Pooled>> relays;
    std::vector<Listener> listeners;
    {
      absl::MutexLock lock(&mu_);
      if (final) closed_ = true;
      // What the server was found to speak is learnt again.
      if (era_ != Era::kProbing) era_ = Era::kUnknown;
      for (auto& [no, flow] : lent_) flows.push_back(flow);
      for (Waiting& waiting : waiting_) flows.push_back(waiting.flow);
      waiting_.clear();
      for (auto& [no, pooled] : open_relays_) relays.push_back(pooled);
      open_relays_.clear();
      idle_.clear();
      lent_.clear();
      rounds_.clear();
      for (auto& [no, listener] : listeners_) listeners.push_back(listener);
      listeners_.clear();
    }
    for (auto& listener : listeners) {
      Json end = {{"jsonrpc", "2.0"},
                  {"id", listener.id},
                  {"result",
                   {{"resultType", "complete"},
                    {"_meta", {{kSubscriptionKey, listener.id}}}}}};
      listener.exchange->Write(http::FormatSseEvent(Dump(end), "message"));
      listener.exchange->Finish();
    }
    for (auto& flow : flows) {
      Finish(flow, ErrorMessage(nullptr, kInternalError,
                                "The front door is closing"));
    }
    for (auto& pooled : relays) pooled->relay->Close();
  }

  size_t relays() const {
    absl::MutexLock lock(&mu_);
    return open_relays_.size();
  }

  // What a handshake-era session found out first.
  void Learn(KnownEra era) {
    absl::MutexLock lock(&mu_);
    if (era_ != Era::kUnknown) return;
    era_ = era == KnownEra::kModern ? Era::kModern : Era::kLegacy;
  }

  KnownEra era() const {
    absl::MutexLock lock(&mu_);
    if (era_ == Era::kModern) return KnownEra::kModern;
    if (era_ == Era::kLegacy) return KnownEra::kLegacy;
    return KnownEra::kUnknown;
  }

 private:
  enum class Era { kUnknown, kProbing, kModern, kLegacy };

  struct Listener {
    std::shared_ptr<http::HttpExchange> exchange;
    Json id;
    Json filter;  // what it was granted
  };

  static bool AcceptsSse(const http::Request& request) {
    for (const auto& [name, value] : request.headers) {
      if (name == "accept" &&
          (absl::StrContains(value, "text/event-stream") ||
           absl::StrContains(value, "*/*"))) {
        return true;
      }
    }
    return false;
  }

  static void Reply(const std::shared_ptr<http::HttpExchange>& exchange,
                    const http::Headers& extra, int status, const Json& body) {
    http::Headers headers = extra;
    if (body.is_null()) return exchange->Respond(status, headers, "");
    headers.emplace_back("Content-Type", "application/json");
    exchange->Respond(status, std::move(headers), Dump(body));
  }

  // ---- The era and the pool ----

  // Runs `then` once the server's era is known (probing it first if need
  // be).
  void WithEra(std::function<void(absl::Status)> then) {
    bool probe = false;
    {
      absl::MutexLock lock(&mu_);
      if (era_ == Era::kModern || era_ == Era::kLegacy) {
        // Known: run it below.
      } else {
        era_waiters_.push_back(std::move(then));
        if (era_ == Era::kUnknown) {
          era_ = Era::kProbing;
          probe = true;
        }
        then = nullptr;
      }
    }
    if (then) return then(absl::OkStatus());
    if (probe) Probe();
  }

  void EraKnown(absl::Status status) {
    std::vector<std::function<void(absl::Status)>> waiters;
    std::shared_ptr<Pooled> spare;
    Era era;
    {
      absl::MutexLock lock(&mu_);
      waiters.swap(era_waiters_);
      spare.swap(prestarted_);
      era = era_;
    }
    for (auto& waiter : waiters) waiter(status);
    // The spare opened beside the probe gets ready the way the era asks
    // (after the waiters, which take the probe's relay first).
    if (spare != nullptr) {
      if (era == Era::kLegacy) {
        std::weak_ptr<Impl> weak_self = weak_from_this();
        Handshake(spare, [weak_self, spare](absl::Status status) {
          if (auto self = weak_self.lock()) self->SpareReady(spare, status);
        });
      } else {
        SpareReady(spare, era == Era::kModern
                              ? absl::OkStatus()
                              : absl::UnavailableError("era unknown"));
      }
    }
  }

  // A spare relay finished starting (or failed to).
  void SpareReady(const std::shared_ptr<Pooled>& pooled, absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      warming_ = false;
    }
    if (status.ok()) {
      ReturnRelay(pooled);
    } else {
      Discard(pooled);
    }
  }

  std::shared_ptr<Pooled> OpenPooled(absl::Status* status) {
    auto pooled = std::make_shared<Pooled>();
    {
      absl::MutexLock lock(&mu_);
      if (closed_) {
        *status = absl::UnavailableError("the front door is closing");
        return nullptr;
      }
      if (open_relays_.size() >= options_.max_relays) {
        *status = absl::ResourceExhaustedError(
            "too many requests in progress; try again later");
        return nullptr;
      }
      pooled->no = next_relay_++;
      open_relays_[pooled->no] = pooled;
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    std::weak_ptr<Pooled> weak_pooled = pooled;
    engine::RelayOptions relay_options;
    relay_options.kind = options_.kind;
    relay_options.to_client = [weak_self, weak_pooled](std::string raw) {
      auto self = weak_self.lock();
      auto pooled = weak_pooled.lock();
      if (self != nullptr && pooled != nullptr) {
        self->FromServer(pooled, std::move(raw));
      }
    };
    relay_options.on_end = [weak_self, weak_pooled](absl::Status) {
      auto self = weak_self.lock();
      auto pooled = weak_pooled.lock();
      if (self != nullptr && pooled != nullptr) self->RelayEnded(pooled);
    };
    auto relay = open_(std::move(relay_options));
    if (!relay.ok()) {
      *status = relay.status();
      absl::MutexLock lock(&mu_);
      open_relays_.erase(pooled->no);
      return nullptr;
    }
    pooled->relay = *std::move(relay);
    return pooled;
  }

  // A relay whose session ended leaves the pool; a request in flight on
  // it is failed by the relay's own done callback.
  void RelayEnded(const std::shared_ptr<Pooled>& pooled) {
    absl::MutexLock lock(&mu_);
    pooled->dead = true;
    open_relays_.erase(pooled->no);
    idle_.erase(std::remove(idle_.begin(), idle_.end(), pooled), idle_.end());
  }

  Json ClientMeta() const {
    return {{kVersionKey, std::string(kModernVersions[0])},
            {kCapabilitiesKey, Json::object()},
            {"io.modelcontextprotocol/clientInfo",
             {{"name", "inspectord"}, {"version", Version()}}}};
  }

  // Asks a first relay server/discover; a modern answer settles it,
  // anything else means the handshake era.
  void Probe() {
    absl::Status status;
    std::shared_ptr<Pooled> pooled = OpenPooled(&status);
    if (pooled == nullptr) {
      {
        absl::MutexLock lock(&mu_);
        era_ = Era::kUnknown;
      }
      return EraKnown(status);
    }
    // A spare starts beside the probe (a stdio server's process takes
    // most of a relay's start), so that the first request to hold its
    // relay (an input round, a long call) does not leave the next one
    // waiting for a process to start. EraKnown() finishes it.
    bool spare = false;
    {
      absl::MutexLock lock(&mu_);
      if (!warming_ && options_.max_idle_relays > 1) spare = warming_ = true;
    }
    if (spare) {
      absl::Status ignored;
      std::shared_ptr<Pooled> opened = OpenPooled(&ignored);
      absl::MutexLock lock(&mu_);
      if (opened == nullptr) {
        warming_ = false;
      } else {
        prestarted_ = std::move(opened);
      }
    }
    Json discover = {{"jsonrpc", "2.0"},
                     {"id", "inspector-discover"},
                     {"method", "server/discover"},
                     {"params", {{"_meta", ClientMeta()}}}};
    std::weak_ptr<Impl> weak_self = weak_from_this();
    pooled->relay->Send(
        Dump(discover),
        [weak_self, pooled](absl::StatusOr<std::string> answer) {
          auto self = weak_self.lock();
          if (self == nullptr) return;
          Json result;
          if (answer.ok()) {
            Json message = Json::parse(*answer, nullptr, false);
            if (message.is_object() && message.contains("result") &&
                message["result"].is_object()) {
              result = message["result"];
            }
          }
          bool modern = false;
          if (result.is_object() && result.contains("supportedVersions") &&
              result["supportedVersions"].is_array()) {
            for (const Json& v : result["supportedVersions"]) {
              if (v.is_string() && Contains(kModernVersions, v.get<std::string>())) {
                modern = true;
              }
            }
          }
          if (modern) {
            {
              absl::MutexLock lock(&self->mu_);
              self->era_ = Era::kModern;
            }
            self->ReturnRelay(pooled);
            return self->EraKnown(absl::OkStatus());
          }
          if (!answer.ok() && pooled->dead) {
            // The server went away: nothing was learned.
            {
              absl::MutexLock lock(&self->mu_);
              self->era_ = Era::kUnknown;
              self->open_relays_.erase(pooled->no);
            }
            return self->EraKnown(answer.status());
          }
          self->Handshake(pooled, [weak_self, pooled](absl::Status status) {
            auto self = weak_self.lock();
            if (self == nullptr) return;
            {
              absl::MutexLock lock(&self->mu_);
              self->era_ = status.ok() ? Era::kLegacy : Era::kUnknown;
            }
            if (status.ok()) {
              self->ReturnRelay(pooled);
            } else {
              self->Discard(pooled);
            }
            self->EraKnown(status);
          });
        });
  }

  // initialize and notifications/initialized on a relay, on behalf of the
  // modern clients it will serve.
  void Handshake(const std::shared_ptr<Pooled>& pooled,
                 std::function<void(absl::Status)> done) {
    Json initialize = {
        {"jsonrpc", "2.0"},
        {"id", "inspector-initialize"},
        {"method", "initialize"},
        {"params",
         {{"protocolVersion", kLegacyUpstreamVersion},
          {"capabilities",
           {{"elicitation", Json::object()},
            {"sampling", Json::object()},
            {"roots", Json::object()}}},
          {"clientInfo", {{"name", "inspectord"}, {"version", Version()}}}}}};
    std::weak_ptr<Impl> weak_self = weak_from_this();
    pooled->relay->Send(
        Dump(initialize),
        [weak_self, pooled,
         done = std::move(done)](absl::StatusOr<std::string> answer) {
          auto self = weak_self.lock();
          if (self == nullptr) return;
          if (!answer.ok()) return done(answer.status());
          Json message = Json::parse(*answer, nullptr, false);
          if (!message.is_object() || !message.contains("result") ||
              !message["result"].is_object()) {
            std::string what = message.is_object() && message.contains("error")
                                   ? Dump(message["error"])
                                   : *answer;
            return done(absl::UnavailableError(
                absl::StrCat("the server refused initialize: ", what)));
          }
          {
            absl::MutexLock lock(&self->mu_);
            if (!self->initialize_.is_object()) {
              self->initialize_ = message["result"];
            }
          }
          pooled->relay->Send(
              R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
              [done](absl::StatusOr<std::string> sent) {
                done(sent.ok() ? absl::OkStatus() : sent.status());
              });
        });
  }

  // A relay for one flow: an idle one, or a new one (through the
  // handshake for a legacy server).
  void Borrow(const std::shared_ptr<Flow>& flow,
              std::function<void(absl::Status)> then) {
    std::shared_ptr<Pooled> pooled;
    bool legacy;
    {
      absl::MutexLock lock(&mu_);
      legacy = era_ == Era::kLegacy;
      if (!idle_.empty()) {
        pooled = idle_.back();
        idle_.pop_back();
        lent_[pooled->no] = flow;
      }
    }
    if (pooled != nullptr) {
      flow->relay = pooled;
      then(absl::OkStatus());
      return WarmSpare();
    }
    absl::Status status;
    pooled = OpenPooled(&status);
    if (pooled == nullptr) return then(status);
    if (!legacy) {
      {
        absl::MutexLock lock(&mu_);
        lent_[pooled->no] = flow;
      }
      flow->relay = pooled;
      then(absl::OkStatus());
      return WarmSpare();
    }
    // A legacy server's relay is ready after its handshake (a stdio
    // server's process starts first). The flow takes whichever relay is
    // ready first: this one, the spare that was warming, or one another
    // flow gives back. Each relay opened for a waiting flow, once ready
    // or failed, settles the oldest waiting flow, so none is left behind.
    {
      absl::MutexLock lock(&mu_);
      waiting_.push_back({flow, std::move(then)});
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    Handshake(pooled, [weak_self, pooled](absl::Status status) {
      auto self = weak_self.lock();
      if (self == nullptr) return;
      if (status.ok()) return self->ReturnRelay(pooled);
      self->Discard(pooled);
      self->FailOldestWaiting(status);
    });
    WarmSpare();
  }

  void FailOldestWaiting(const absl::Status& status) {
    Waiting waiting;
    {
      absl::MutexLock lock(&mu_);
      if (waiting_.empty()) return;
      waiting = std::move(waiting_.front());
      waiting_.pop_front();
    }
    waiting.then(status);
  }

  // Keeps one relay ready when none is idle, so that the next request
  // does not wait for a server to start (a stdio server's process) while
  // others hold theirs (a long call, an input_required round).
  void WarmSpare() {
    bool legacy;
    {
      absl::MutexLock lock(&mu_);
      if (warming_ || closed_ || !idle_.empty() ||
          open_relays_.size() >= options_.max_relays ||
          (era_ != Era::kModern && era_ != Era::kLegacy)) {
        return;
      }
      warming_ = true;
      legacy = era_ == Era::kLegacy;
    }
    absl::Status status;
    std::shared_ptr<Pooled> pooled = OpenPooled(&status);
    if (pooled == nullptr) {
      absl::MutexLock lock(&mu_);
      warming_ = false;
      return;
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    auto ready = [weak_self, pooled](absl::Status status) {
      if (auto self = weak_self.lock()) self->SpareReady(pooled, status);
    };
    if (legacy) return Handshake(pooled, std::move(ready));
    ready(absl::OkStatus());
  }

  void ReturnRelay(const std::shared_ptr<Pooled>& pooled) {
    bool close = false;
    Waiting waiting;
    {
      absl::MutexLock lock(&mu_);
      lent_.erase(pooled->no);
      if (pooled->dead || closed_) {
        open_relays_.erase(pooled->no);
      } else if (!waiting_.empty()) {
        waiting = std::move(waiting_.front());
        waiting_.pop_front();
        lent_[pooled->no] = waiting.flow;
      } else if (idle_.size() >= options_.max_idle_relays) {
        open_relays_.erase(pooled->no);
        close = true;
      } else {
        pooled->idle_since = absl::Now();
        idle_.push_back(pooled);
      }
    }
    if (close) pooled->relay->Close();
    if (waiting.flow != nullptr) {
      waiting.flow->relay = pooled;
      waiting.then(absl::OkStatus());
    }
  }

  void Discard(const std::shared_ptr<Pooled>& pooled) {
    {
      absl::MutexLock lock(&mu_);
      lent_.erase(pooled->no);
      open_relays_.erase(pooled->no);
    }
    pooled->relay->Close();
  }

  // ---- Requests ----

  void Start(const std::shared_ptr<Flow>& flow, Json body) {
    Era era;
    {
      absl::MutexLock lock(&mu_);
      era = era_;
    }
    if (era == Era::kModern) {
      // The server speaks the revision: everything passes through, its
      // own input_required rounds included.
      flow->kind = Flow::Kind::kPassThrough;
      if (flow->method == "subscriptions/listen") {
        absl::MutexLock lock(&flow->mu);
        flow->sse = true;
      }
    } else {
      bool known;
      {
        absl::MutexLock lock(&mu_);
        known = initialize_.is_object();
      }
      if (!known) {
        // The era was learnt from a handshake-era session: a relay of our
        // own goes through initialize first, for what it tells.
        std::weak_ptr<Impl> weak_self = weak_from_this();
        return Borrow(flow, [weak_self, flow, body = std::move(body)](
                                absl::Status status) mutable {
          auto self = weak_self.lock();
          if (self == nullptr) return;
          if (!status.ok()) return self->FailFlow(flow, status);
          auto relay = flow->relay;
          {
            absl::MutexLock lock(&flow->mu);
            flow->relay = nullptr;
          }
          self->ReturnRelay(relay);
          bool learnt;
          {
            absl::MutexLock lock(&self->mu_);
            learnt = self->initialize_.is_object();
          }
          if (!learnt) {
            return self->FailFlow(
                flow, absl::UnavailableError("the server's initialize "
                                             "result could not be had"));
          }
          self->Start(flow, std::move(body));
        });
      }
      const Json& params = body["params"];
      if (params.contains("requestState") &&
          params["requestState"].is_string()) {
        return Retry(flow, body);
      }
      if (flow->method == "subscriptions/listen") return Listen(flow, body);
      if (flow->method == "server/discover") {
        return Finish(flow, Discovered(body["id"]));
      }
    }
    if (flow->method == "tools/call") {
      bool loaded;
      {
        absl::MutexLock lock(&mu_);
        loaded = tool_headers_.has_value();
      }
      if (!loaded) {
        std::weak_ptr<Impl> weak_self = weak_from_this();
        return LoadToolHeaders([weak_self, flow, body = std::move(body)]() mutable {
          if (auto self = weak_self.lock()) {
            self->CallTool(flow, std::move(body));
          }
        });
      }
      return CallTool(flow, std::move(body));
    }
    Relay(flow, std::move(body));
  }

  // A tools/call, once the tools' x-mcp-header annotations are known: its
  // Mcp-Param-* headers must agree with its arguments (-32020, 400).
  void CallTool(const std::shared_ptr<Flow>& flow, Json body) {
    std::vector<HeaderParam> params;
    {
      absl::MutexLock lock(&mu_);
      if (tool_headers_.has_value() && flow->name.has_value()) {
        auto it = tool_headers_->find(*flow->name);
        if (it != tool_headers_->end()) params = it->second;
      }
    }
    std::shared_ptr<http::HttpExchange> exchange;
    {
      absl::MutexLock lock(&flow->mu);
      exchange = flow->exchange;
    }
    if (!params.empty() && exchange != nullptr) {
      Json arguments = body["params"].value("arguments", Json::object());
      std::string mismatch =
          CheckHeaderParams(exchange->request(), arguments, params);
      if (!mismatch.empty()) {
        return Finish(flow, ErrorMessage(nullptr, kHeaderMismatch,
                                         "Header mismatch: " + mismatch));
      }
    }
    Relay(flow, std::move(body));
  }

  // Learns the tools' x-mcp-header annotations (tools/list, every page),
  // then runs `then` (also when the list cannot be had: the calls then go
  // unchecked, as they would to the server directly).
  void LoadToolHeaders(std::function<void()> then) {
    auto fetch = std::make_shared<Flow>();
    Era era;
    {
      absl::MutexLock lock(&mu_);
      era = era_;
    }
    fetch->kind = era == Era::kModern ? Flow::Kind::kPassThrough
                                      : Flow::Kind::kLegacy;
    std::weak_ptr<Impl> weak_self = weak_from_this();
    Borrow(fetch, [weak_self, fetch, then = std::move(then)](
                      absl::Status status) mutable {
      auto self = weak_self.lock();
      if (self == nullptr) return;
      if (!status.ok()) {
        self->Release(fetch, /*clean=*/false);
        return then();
      }
      auto tools = std::make_shared<Json>(Json::array());
      self->ListToolsPage(fetch, "", tools, 0, std::move(then));
    });
  }

  void ListToolsPage(const std::shared_ptr<Flow>& fetch, std::string cursor,
                     std::shared_ptr<Json> tools, int page,
                     std::function<void()> then) {
    Json request = {{"jsonrpc", "2.0"},
                    {"id", absl::StrCat("inspector-tools-", page)},
                    {"method", "tools/list"},
                    {"params", Json::object()}};
    if (!cursor.empty()) request["params"]["cursor"] = cursor;
    if (fetch->kind == Flow::Kind::kPassThrough) {
      request["params"]["_meta"] = ClientMeta();
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    fetch->relay->relay->Send(
        Dump(request), [weak_self, fetch, tools, page,
                        then = std::move(then)](
                           absl::StatusOr<std::string> answer) mutable {
          auto self = weak_self.lock();
          if (self == nullptr) return;
          Json message = answer.ok() ? Json::parse(*answer, nullptr, false)
                                     : Json();
          bool ok = message.is_object() && message.contains("result") &&
                    message["result"].is_object();
          if (ok && message["result"].contains("tools") &&
              message["result"]["tools"].is_array()) {
            for (Json& tool : message["result"]["tools"]) {
              tools->push_back(std::move(tool));
            }
          }
          std::string next;
          if (ok && message["result"].contains("nextCursor") &&
              message["result"]["nextCursor"].is_string()) {
            next = message["result"]["nextCursor"].get<std::string>();
          }
          if (ok && !next.empty() && page < 50) {
            return self->ListToolsPage(fetch, next, tools, page + 1,
                                       std::move(then));
          }
          if (ok) {
            absl::MutexLock lock(&self->mu_);
            self->tool_headers_ = HeaderParamsOf(Json{{"tools", *tools}});
          }
          self->Release(fetch, /*clean=*/true);
          then();
        });
  }

  void Relay(const std::shared_ptr<Flow>& flow, Json body) {
    std::weak_ptr<Impl> weak_self = weak_from_this();
    Borrow(flow, [weak_self, flow, body = std::move(body)](
                     absl::Status status) mutable {
      auto self = weak_self.lock();
      if (self == nullptr) return;
      if (!status.ok()) return self->FailFlow(flow, status);
      self->SendUpstream(flow, std::move(body));
    });
  }

  void SendUpstream(const std::shared_ptr<Flow>& flow, Json body) {
    uint64_t n;
    {
      absl::MutexLock lock(&mu_);
      n = next_request_++;
    }
    Json upstream_id = absl::StrCat("m", n);
    flow->upstream_id = Dump(upstream_id);
    {
      absl::MutexLock lock(&flow->mu);
      flow->upstream_pending = true;
    }
    Json request = flow->kind == Flow::Kind::kLegacy
                       ? ForLegacy(std::move(body), upstream_id)
                       : [&] {
                           body["id"] = upstream_id;
                           return std::move(body);
                         }();
    std::weak_ptr<Impl> weak_self = weak_from_this();
    std::shared_ptr<http::HttpExchange> exchange;
    {
      absl::MutexLock lock(&flow->mu);
      exchange = flow->exchange;
    }
    std::weak_ptr<Flow> weak_flow = flow;
    if (exchange != nullptr) {
      exchange->OnClientGone([weak_self, weak_flow] {
        auto self = weak_self.lock();
        auto flow = weak_flow.lock();
        if (self != nullptr && flow != nullptr) self->ClientGone(flow);
      });
    }
    auto send = [weak_self, flow, request = std::move(request)]() mutable {
      flow->relay->relay->Send(
          Dump(request), [weak_self, flow](absl::StatusOr<std::string> answer) {
            auto self = weak_self.lock();
            if (self != nullptr) self->UpstreamDone(flow, std::move(answer));
          });
    };
    // A log level asked for in _meta is logging/setLevel on this relay
    // first (a legacy server sets it per session).
    bool set_level = false;
    if (flow->kind == Flow::Kind::kLegacy && !flow->log_level.empty()) {
      absl::MutexLock lock(&mu_);
      set_level = initialize_.is_object() &&
                  initialize_.contains("capabilities") &&
                  initialize_["capabilities"].is_object() &&
                  initialize_["capabilities"].contains("logging");
    }
    if (!set_level) return send();
    Json set = {{"jsonrpc", "2.0"},
                {"id", absl::StrCat("l", n)},
                {"method", "logging/setLevel"},
                {"params", {{"level", flow->log_level}}}};
    flow->relay->relay->Send(
        Dump(set), [send = std::move(send)](absl::StatusOr<std::string>) mutable {
          send();
        });
  }

  void UpstreamDone(const std::shared_ptr<Flow>& flow,
                    absl::StatusOr<std::string> answer) {
    Json message;
    if (answer.ok()) {
      message = Json::parse(*answer, nullptr, false);
      if (!message.is_object()) {
        message = ErrorMessage(nullptr, kInternalError,
                               "The server's answer is not JSON");
      }
    } else {
      std::string reason = ErrorReason(answer.status());
      message = ErrorMessage(nullptr, kInternalError,
                             StdView(answer.status().message()),
                             reason.empty() ? Json() : Json{{"reason", reason}});
    }
    if (flow->kind == Flow::Kind::kLegacy) Translate(flow->method, message);
    bool deliver;
    bool answered;
    bool clean;
    {
      absl::MutexLock lock(&flow->mu);
      flow->upstream_pending = false;
      flow->final = message;
      answered = flow->finished;
      clean = flow->outstanding.empty() && flow->queued.empty();
      // Delivered to a waiting client; or, for a client that went away or
      // never came back, only the relay is given back.
      deliver = (flow->exchange != nullptr && flow->outstanding.empty()) ||
                flow->cancelled;
    }
    if (answered) return Release(flow, clean);
    if (deliver || flow->kind != Flow::Kind::kLegacy) {
      return Finish(flow, std::move(message));
    }
    // Between rounds: the retry collects it. Until then the relay waits.
  }

  // A legacy answer in the 2026-07-28 shape.
  void Translate(const std::string& method, Json& message) {
    auto result = message.find("result");
    if (result != message.end() && result->is_object()) {
      if (!result->contains("resultType")) (*result)["resultType"] = "complete";
      Json server_info;
      {
        absl::MutexLock lock(&mu_);
        if (initialize_.is_object() && initialize_.contains("serverInfo")) {
          server_info = initialize_["serverInfo"];
        }
      }
      if (!server_info.is_null()) {
        Json& meta = (*result)["_meta"];
        if (!meta.is_object()) meta = Json::object();
        meta[kServerInfoKey] = server_info;
      }
      if (Contains(kCacheableMethods, method)) {
        if (!result->contains("ttlMs")) (*result)["ttlMs"] = 0;
        if (!result->contains("cacheScope")) {
          (*result)["cacheScope"] = "private";
        }
      }
      return;
    }
    auto error = message.find("error");
    if (error != message.end() && error->is_object() &&
        error->value("code", 0) == kResourceNotFoundLegacy) {
      (*error)["code"] = kInvalidParams;
    }
  }

  // server/discover for a legacy server, from its initialize result.
  Json Discovered(const Json& id) {
    Json init;
    {
      absl::MutexLock lock(&mu_);
      init = initialize_;
    }
    Json capabilities = Json::object();
    if (init.is_object() && init.contains("capabilities") &&
        init["capabilities"].is_object()) {
      capabilities = init["capabilities"];
      // Resource subscriptions are not carried to the server.
      if (capabilities.contains("resources") &&
          capabilities["resources"].is_object()) {
        capabilities["resources"].erase("subscribe");
      }
    }
    Json result = {{"resultType", "complete"},
                   {"supportedVersions", SupportedVersions()},
                   {"capabilities", capabilities},
                   {"ttlMs", 0},
                   {"cacheScope", "private"}};
    if (init.is_object() && init.contains("serverInfo")) {
      result["_meta"] = {{kServerInfoKey, init["serverInfo"]}};
    }
    if (init.is_object() && init.contains("instructions")) {
      result["instructions"] = init["instructions"];
    }
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  }

  // Answers the flow's waiting client with `message` (its id set) and ends
  // the flow: relay back to the pool.
  void Finish(const std::shared_ptr<Flow>& flow, Json message) {
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers extra;
    bool streaming;
    bool release;
    bool clean;
    std::string token;
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished) return;
      flow->finished = true;
      exchange = std::move(flow->exchange);
      extra = flow->extra;
      streaming = flow->streaming;
      token = flow->token;
      message["id"] = flow->client_id;
      release = !flow->upstream_pending;
      clean = flow->outstanding.empty() && flow->queued.empty();
    }
    {
      absl::MutexLock lock(&mu_);
      if (!token.empty()) rounds_.erase(token);
    }
    if (release) Release(flow, clean);
    if (exchange == nullptr) return;
    if (streaming) {
      exchange->Write(http::FormatSseEvent(Dump(message), "message"));
      return exchange->Finish();
    }
    Reply(exchange, extra, HttpStatusFor(message), message);
  }

  // Gives the flow's relay back: to the pool when the server is waiting
  // for nothing, else closed.
  void Release(const std::shared_ptr<Flow>& flow, bool clean) {
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->released || flow->relay == nullptr) return;
      flow->released = true;
    }
    if (clean) {
      ReturnRelay(flow->relay);
    } else {
      Discard(flow->relay);
    }
  }

  void FailFlow(const std::shared_ptr<Flow>& flow, const absl::Status& status) {
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers extra;
    Json id;
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished) return;
      flow->finished = true;
      exchange = std::move(flow->exchange);
      extra = flow->extra;
      id = flow->client_id;
    }
    Release(flow, /*clean=*/false);
    if (exchange == nullptr) return;
    if (status.code() == absl::StatusCode::kResourceExhausted) {
      http::Headers headers = extra;
      headers.emplace_back("Retry-After", "5");
      return Reply(exchange, headers, 503,
                   ErrorMessage(id, kInternalError,
                                StdView(status.message())));
    }
    std::string reason = ErrorReason(status);
    Reply(exchange, extra, reason == "SERVER_NOT_FOUND" ? 404 : 502,
          ErrorMessage(id, kInternalError, StdView(status.message()),
                       reason.empty() ? Json() : Json{{"reason", reason}}));
  }

  void ClientGone(const std::shared_ptr<Flow>& flow) {
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished || flow->exchange == nullptr) return;
      if (flow->exchange->client_gone()) flow->exchange = nullptr;
      flow->cancelled = true;
    }
    if (flow->relay != nullptr) {
      flow->relay->relay->Cancel(flow->upstream_id,
                                 "the client disconnected");
    }
  }

  // Gives up on a flow whose client did not retry: the server's requests
  // are refused and its request cancelled.
  void Abandon(const std::shared_ptr<Flow>& flow, std::string_view why) {
    std::map<std::string, Json> outstanding;
    std::deque<std::pair<Json, Json>> queued;
    std::string token;
    bool done;
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished) return;
      outstanding.swap(flow->outstanding);
      queued.swap(flow->queued);
      token = flow->token;
      flow->token.clear();
      flow->cancelled = true;
      done = flow->final.has_value();
    }
    {
      absl::MutexLock lock(&mu_);
      rounds_.erase(token);
    }
    for (auto& [key, id] : outstanding) RefuseServer(flow, id, why);
    for (auto& [id, request] : queued) RefuseServer(flow, id, why);
    if (done) return Finish(flow, Json::object());
    flow->relay->relay->Cancel(flow->upstream_id, std::string(why));
  }

  void RefuseServer(const std::shared_ptr<Flow>& flow, const Json& id,
                    std::string_view why) {
    Json error = ErrorMessage(id, kInternalError, why);
    flow->relay->relay->Send(Dump(error), [](absl::StatusOr<std::string>) {});
  }

  // ---- What the server sends ----

  void FromServer(const std::shared_ptr<Pooled>& pooled, std::string raw) {
    Json message = Json::parse(raw, nullptr, false);
    if (!message.is_object() || !message.contains("method") ||
        !message["method"].is_string()) {
      return;
    }
    std::string method = message["method"].get<std::string>();
    std::shared_ptr<Flow> flow;
    {
      absl::MutexLock lock(&mu_);
      auto it = lent_.find(pooled->no);
      if (it != lent_.end()) flow = it->second;
    }
    const bool request = message.contains("id");
    if (request) {
      Json id = message["id"];
      if (method == "ping") {
        Json pong = {{"jsonrpc", "2.0"}, {"id", id}, {"result", Json::object()}};
        pooled->relay->Send(Dump(pong), [](absl::StatusOr<std::string>) {});
        return;
      }
      std::string_view capability = InputCapability(method);
      if (flow != nullptr && flow->kind == Flow::Kind::kLegacy &&
          !capability.empty()) {
        return ServerRequest(flow, id, std::move(message), capability);
      }
      Json error = ErrorMessage(
          id, kMethodNotFound,
          absl::StrCat("No client request is waiting for ", method));
      pooled->relay->Send(Dump(error), [](absl::StatusOr<std::string>) {});
      return;
    }
    if (method == "notifications/tools/list_changed") {
      absl::MutexLock lock(&mu_);
      tool_headers_.reset();
    }
    if (method == "notifications/tools/list_changed" ||
        method == "notifications/prompts/list_changed" ||
        method == "notifications/resources/list_changed") {
      Broadcast(method, message);
      if (flow == nullptr || flow->kind == Flow::Kind::kLegacy) return;
    }
    if (flow == nullptr) return;
    if (flow->kind == Flow::Kind::kLegacy) {
      if (method == "notifications/message" && !flow->logs) return;
      if (method != "notifications/progress" &&
          method != "notifications/message") {
        return;
      }
    }
    Notify(flow, raw);
  }

  // A notification on the flow's answer stream (turning it into one).
  void Notify(const std::shared_ptr<Flow>& flow, const std::string& raw) {
    std::shared_ptr<http::HttpExchange> exchange;
    bool start = false;
    http::Headers headers;
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->exchange == nullptr || !flow->sse || flow->finished) return;
      exchange = flow->exchange;
      if (!flow->streaming) {
        flow->streaming = true;
        start = true;
        headers = flow->extra;
      }
    }
    if (start) {
      headers.emplace_back("Content-Type", "text/event-stream");
      headers.emplace_back("Cache-Control", "no-cache");
      headers.emplace_back("X-Accel-Buffering", "no");
      exchange->StartStream(200, std::move(headers));
    }
    exchange->Write(http::FormatSseEvent(raw, "message"));
  }

  void ServerRequest(const std::shared_ptr<Flow>& flow, const Json& id,
                     Json message, std::string_view capability) {
    bool declared = flow->capabilities.is_object() &&
                    flow->capabilities.contains(std::string(capability));
    if (!declared) {
      // The request needs a capability its client did not declare: the
      // client is told so (-32021, HTTP 400), the server's request is
      // refused and the client's request is cancelled upstream.
      std::string why = absl::StrCat("The server requires the ",
                                     AbslView(capability),
                                     " capability for this request");
      Json required = Json::object();
      required[std::string(capability)] = Json::object();
      {
        absl::MutexLock lock(&flow->mu);
        flow->cancelled = true;
      }
      Finish(flow, ErrorMessage(nullptr, kMissingCapability, why,
                                {{"requiredCapabilities", required}}));
      RefuseServer(flow, id, why);
      flow->relay->relay->Cancel(flow->upstream_id, why);
      return;
    }
    Json input = {{"method", message["method"]}};
    if (message.contains("params")) input["params"] = message["params"];
    bool ask;
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished) return;
      flow->queued.emplace_back(id, std::move(input));
      // A client waiting on this request (first call, or a retry whose
      // input has gone to the server) is asked now.
      ask = flow->exchange != nullptr && flow->outstanding.empty();
    }
    if (ask) AskClient(flow);
  }

  // Puts the queued server requests (and any still unanswered) to the
  // waiting client as an input_required result.
  void AskClient(const std::shared_ptr<Flow>& flow) {
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers extra;
    bool streaming;
    Json message;
    std::string old_token;
    auto token = GenerateToken();
    if (!token.ok()) {
      return Abandon(flow, "could not make a requestState");
    }
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished || flow->exchange == nullptr) return;
      while (!flow->queued.empty()) {
        auto [id, request] = std::move(flow->queued.front());
        flow->queued.pop_front();
        std::string key = absl::StrCat(
            request["method"].get<std::string>() == "elicitation/create"
                ? "elicitation"
                : request["method"].get<std::string>() == "roots/list"
                      ? "roots"
                      : "sampling",
            "-", flow->next_key++);
        flow->outstanding[key] = id;
        flow->asked[key] = std::move(request);
      }
      Json requests = Json::object();
      for (auto& [key, id] : flow->outstanding) {
        requests[key] = flow->asked[key];
      }
      old_token = flow->token;
      flow->token = *token;
      message = {{"jsonrpc", "2.0"},
                 {"id", flow->client_id},
                 {"result",
                  {{"resultType", "input_required"},
                   {"inputRequests", std::move(requests)},
                   {"requestState", *token}}}};
      exchange = std::move(flow->exchange);
      extra = flow->extra;
      streaming = flow->streaming;
      flow->streaming = false;
      flow->deadline = absl::Now() + options_.input_timeout;
    }
    {
      absl::MutexLock lock(&mu_);
      if (!old_token.empty()) rounds_.erase(old_token);
      rounds_[*token] = flow;
    }
    if (streaming) {
      exchange->Write(http::FormatSseEvent(Dump(message), "message"));
      return exchange->Finish();
    }
    Reply(exchange, extra, 200, message);
  }

  // The client's retry: its inputResponses go to the server; the retry
  // waits for what the server sends next.
  void Retry(const std::shared_ptr<Flow>& retry, const Json& body) {
    std::string token = body["params"]["requestState"].get<std::string>();
    std::shared_ptr<Flow> flow;
    {
      absl::MutexLock lock(&mu_);
      auto it = rounds_.find(token);
      if (it != rounds_.end()) {
        flow = it->second;
        rounds_.erase(it);  // single use
      }
    }
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers extra;
    Json id;
    {
      absl::MutexLock lock(&retry->mu);
      exchange = retry->exchange;
      extra = retry->extra;
      id = retry->client_id;
    }
    if (flow == nullptr) {
      return Reply(exchange, extra, 200,
                   ErrorMessage(id, kInvalidParams,
                                "Invalid params: requestState is unknown, "
                                "already used or expired"));
    }
    if (flow->method != retry->method || flow->name != retry->name) {
      {
        absl::MutexLock lock(&mu_);
        rounds_[token] = flow;  // still the original's to use
      }
      return Reply(exchange, extra, 200,
                   ErrorMessage(id, kInvalidParams,
                                "Invalid params: requestState belongs to "
                                "another request"));
    }
    const Json* responses = nullptr;
    auto params = body.find("params");
    if (params->contains("inputResponses") &&
        (*params)["inputResponses"].is_object()) {
      responses = &(*params)["inputResponses"];
    }
    std::vector<Json> answers;
    bool ask;
    bool deliver;
    {
      absl::MutexLock lock(&flow->mu);
      if (flow->finished) {
        deliver = false;
        ask = false;
      } else {
        for (auto it = flow->outstanding.begin();
             it != flow->outstanding.end();) {
          const Json* value = nullptr;
          if (responses != nullptr && responses->contains(it->first)) {
            value = &(*responses)[it->first];
          }
          if (value != nullptr && value->is_object()) {
            answers.push_back({{"jsonrpc", "2.0"},
                               {"id", it->second},
                               {"result", *value}});
            flow->asked.erase(it->first);
            it = flow->outstanding.erase(it);
          } else {
            ++it;
          }
        }
        flow->exchange = exchange;
        flow->extra = extra;
        flow->client_id = id;
        flow->sse = retry->sse;
        flow->streaming = false;
        flow->token.clear();
        flow->deadline = absl::InfiniteFuture();
        // Missing input is asked for again; new requests of the server
        // too.
        ask = !flow->outstanding.empty() || !flow->queued.empty();
        deliver = !ask && flow->final.has_value();
      }
    }
    if (!ask && !deliver) {
      bool finished;
      {
        absl::MutexLock lock(&flow->mu);
        finished = flow->finished;
      }
      if (finished) {
        return Reply(exchange, extra, 200,
                     ErrorMessage(id, kInvalidParams,
                                  "Invalid params: requestState is unknown, "
                                  "already used or expired"));
      }
    }
    for (const Json& answer : answers) {
      flow->relay->relay->Send(Dump(answer),
                               [](absl::StatusOr<std::string>) {});
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    std::weak_ptr<Flow> weak_flow = flow;
    exchange->OnClientGone([weak_self, weak_flow] {
      auto self = weak_self.lock();
      auto flow = weak_flow.lock();
      if (self != nullptr && flow != nullptr) self->ClientGone(flow);
    });
    if (ask) return AskClient(flow);
    if (deliver) {
      Json final;
      {
        absl::MutexLock lock(&flow->mu);
        final = *flow->final;
      }
      return Finish(flow, std::move(final));
    }
  }

  // ---- subscriptions/listen for a legacy server ----

  void Listen(const std::shared_ptr<Flow>& flow, const Json& body) {
    Json wanted = Json::object();
    if (body["params"].contains("notifications") &&
        body["params"]["notifications"].is_object()) {
      wanted = body["params"]["notifications"];
    }
    Json capabilities;
    {
      absl::MutexLock lock(&mu_);
      if (initialize_.is_object()) capabilities = initialize_["capabilities"];
    }
    auto lists = [&](const char* feature) {
      return capabilities.is_object() && capabilities.contains(feature) &&
             capabilities[feature].is_object() &&
             capabilities[feature].value("listChanged", false);
    };
    Json granted = Json::object();
    if (wanted.value("toolsListChanged", false) && lists("tools")) {
      granted["toolsListChanged"] = true;
    }
    if (wanted.value("promptsListChanged", false) && lists("prompts")) {
      granted["promptsListChanged"] = true;
    }
    if (wanted.value("resourcesListChanged", false) && lists("resources")) {
      granted["resourcesListChanged"] = true;
    }
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers headers;
    Json id;
    {
      absl::MutexLock lock(&flow->mu);
      flow->finished = true;
      exchange = std::move(flow->exchange);
      headers = flow->extra;
      id = flow->client_id;
    }
    headers.emplace_back("Content-Type", "text/event-stream");
    headers.emplace_back("Cache-Control", "no-cache");
    headers.emplace_back("X-Accel-Buffering", "no");
    exchange->StartStream(200, std::move(headers));
    Json ack = {{"jsonrpc", "2.0"},
                {"method", "notifications/subscriptions/acknowledged"},
                {"params",
                 {{"_meta", {{kSubscriptionKey, id}}},
                  {"notifications", granted}}}};
    uint64_t no;
    {
      absl::MutexLock lock(&mu_);
      no = next_listener_++;
      listeners_[no] = Listener{exchange, id, granted};
    }
    exchange->Write(http::FormatSseEvent(Dump(ack), "message"));
    std::weak_ptr<Impl> weak_self = weak_from_this();
    exchange->OnClientGone([weak_self, no] {
      if (auto self = weak_self.lock()) {
        absl::MutexLock lock(&self->mu_);
        self->listeners_.erase(no);
      }
    });
  }

  void Broadcast(const std::string& method, const Json& message) {
    const char* filter = method == "notifications/tools/list_changed"
                             ? "toolsListChanged"
                         : method == "notifications/prompts/list_changed"
                             ? "promptsListChanged"
                             : "resourcesListChanged";
    std::vector<Listener> to;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [no, listener] : listeners_) {
        if (listener.filter.value(filter, false)) to.push_back(listener);
      }
    }
    for (auto& listener : to) {
      Json tagged = message;
      Json& params = tagged["params"];
      if (!params.is_object()) params = Json::object();
      params["_meta"][kSubscriptionKey] = listener.id;
      listener.exchange->Write(http::FormatSseEvent(Dump(tagged), "message"));
    }
  }

  const RelayOpener open_;
  const ModernOptions options_;

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool warming_ ABSL_GUARDED_BY(mu_) = false;  // a spare relay is starting
  // The spare opened beside the probe, until the era is known.
  std::shared_ptr<Pooled> prestarted_ ABSL_GUARDED_BY(mu_);
  Era era_ ABSL_GUARDED_BY(mu_) = Era::kUnknown;
  std::vector<std::function<void(absl::Status)>> era_waiters_
      ABSL_GUARDED_BY(mu_);
  Json initialize_ ABSL_GUARDED_BY(mu_);  // a legacy server's result
  // Tools with arguments mirrored in Mcp-Param-* headers, by tool name;
  // unset until learnt, and again when the tool list changes.
  std::optional<std::map<std::string, std::vector<HeaderParam>>> tool_headers_
      ABSL_GUARDED_BY(mu_);
  uint64_t next_relay_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_request_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_listener_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<Pooled>> open_relays_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Pooled>> idle_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::shared_ptr<Flow>> lent_ ABSL_GUARDED_BY(mu_);
  // Flows waiting for a legacy server's relay, oldest first.
  struct Waiting {
    std::shared_ptr<Flow> flow;
    std::function<void(absl::Status)> then;
  };
  std::deque<Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Flow>> rounds_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Listener> listeners_ ABSL_GUARDED_BY(mu_);
};

ModernFront::ModernFront(RelayOpener open, ModernOptions options)
    : impl_(std::make_shared<Impl>(std::move(open), std::move(options))) {}

ModernFront::~ModernFront() { impl_->Close(/*final=*/true); }

bool ModernFront::IsModern(const http::Request& request, const Json& body) {
  if (const std::string* version = request.Header("mcp-protocol-version")) {
    if (!Contains(kHandshakeVersions, *version)) return true;
  }
  std::string method = body.is_object() ? body.value("method", "") : "";
  if (method == "server/discover" || method == "subscriptions/listen") {
    return true;
  }
  if (body.is_object() && body.contains("params") &&
      body["params"].is_object() && body["params"].contains("_meta") &&
      body["params"]["_meta"].is_object() &&
      body["params"]["_meta"].contains(kVersionKey)) {
    return true;
  }
  return false;
}

void ModernFront::Post(std::shared_ptr<http::HttpExchange> exchange,
                       http::Headers extra, Json body) {
  impl_->Post(std::move(exchange), std::move(extra), std::move(body));
}

void ModernFront::Reap(absl::Time now) { impl_->Reap(now); }

void ModernFront::Close() { impl_->Close(/*final=*/false); }

size_t ModernFront::relays() const { return impl_->relays(); }

KnownEra ModernFront::era() const { return impl_->era(); }

void ModernFront::Learn(KnownEra era) { impl_->Learn(era); }

}  // namespace inspector::frontdoor
