// ResourceServer (resource_server.h): access tokens at the front doors and
// their Protected Resource Metadata.
#include "server/frontdoor/resource_server.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/frontdoor/mcp_endpoint.h"
#include "server/oauth/urls.h"

namespace inspector::frontdoor {
namespace {

// `text` fit for a quoted-string of WWW-Authenticate: no quotes,
// backslashes or control characters.
std::string AuthParamText(std::string_view text) {
  std::string out;
  for (char c : text) {
    out.push_back(c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20
                      ? '\''
                      : c);
  }
  return out;
}

// The endpoint path a resource names: the legacy transport's /message
// belongs to its /sse.
std::string_view ResourcePath(std::string_view subpath) {
  return subpath == "/message" ? std::string_view("/sse") : subpath;
}

}  // namespace

std::string_view BearerTokenOf(const http::Request& request) {
  const std::string* auth = request.Header("authorization");
  if (auth == nullptr || !absl::StartsWithIgnoreCase(*auth, "bearer ")) {
    return {};
  }
  return StdView(absl::StripAsciiWhitespace(absl::string_view(*auth).substr(7)));
}

struct ResourceServer::Target {
  std::string resource;      // what `aud` must contain
  std::string metadata_url;  // where its Protected Resource Metadata is
};

namespace {

// The endpoint's resource under `configured` (the /mcp endpoint's URL,
// "": as reached), and its metadata's URL (the resource's path inserted
// after the well-known prefix); false without a Host to build it from.
bool TargetOfRequest(const http::Request& request, std::string_view base_path,
                     std::string_view subpath, const std::string& configured,
                     std::string* resource, std::string* metadata_url) {
  const std::string_view path = ResourcePath(subpath);
  if (!configured.empty()) {
    *resource = configured;
    if (path == "/sse" && absl::EndsWith(configured, "/mcp")) {
      *resource = absl::StrCat(
          absl::string_view(configured).substr(0, configured.size() - 4),
          "/sse");
    }
    auto url = oauth::ParseUrl(*resource, "resource");
    if (url.ok()) {
      *metadata_url = absl::StrCat(url->Origin(),
                                   AbslView(kProtectedResourcePrefix),
                                   oauth::TrimSlash(url->path));
      return true;
    }
  }
  const std::string* host = request.Header("host");
  if (host == nullptr || host->empty()) return false;
  const std::string origin = absl::StrCat("http://", *host);
  *resource = absl::StrCat(origin, AbslView(base_path), AbslView(path));
  *metadata_url = absl::StrCat(origin, AbslView(kProtectedResourcePrefix),
                               AbslView(base_path), AbslView(path));
  return true;
}

void GateAnswer(http::HttpExchange& exchange, int status,
                http::Headers headers, const http::Headers& extra,
                std::string body) {
  headers.emplace_back("Content-Type", "application/json");
  for (const auto& h : extra) headers.push_back(h);
  exchange.Respond(status, std::move(headers), std::move(body));
}

}  // namespace

ResourceServer::ResourceServer(ResourceServerOptions options)
    : options_(std::move(options)),
      defaults_(std::make_shared<const ResourceRules>(
          ResourceRules{options_.issuers, options_.scopes, "", {}, false})),
      keys_([this] {
        auth::IssuerKeys::Options keys;
        keys.fetcher = options_.fetcher;
        keys.clock = options_.clock;
        keys.log = options_.log;
        return keys;
      }()),
      introspection_(
          options_.introspection_client_id.empty()
              ? nullptr
              : std::make_unique<auth::TokenIntrospection>(
                    auth::TokenIntrospection::Options{
                        options_.fetcher, options_.introspection_client_id,
                        options_.introspection_client_secret})),
      introspected_(/*capacity=*/4096, options_.introspection_cache) {
  {
    absl::MutexLock lock(&mu_);
    trusted_.insert(options_.issuers.begin(), options_.issuers.end());
  }
  Post([this] { RefreshAll(); });
  worker_ = std::thread([this] { Work(); });
  ScheduleRefresh();
}

ResourceServer::~ResourceServer() {
  Clock::TimerId timer;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    timer = timer_;
    timer_ = 0;
  }
  // Outside the lock: a running tick takes it.
  options_.clock->Cancel(timer);
  worker_.join();
}

void ResourceServer::Admit(std::shared_ptr<http::HttpExchange> exchange,
                           std::string_view base_path,
                           std::string_view subpath,
                           const http::Headers& extra,
                           std::function<void(Caller)> admit) {
  AdmitUnder(defaults_, std::move(exchange), base_path, subpath, extra,
             std::move(admit));
}

std::shared_ptr<const ResourceRules> ResourceServer::RulesFor(
    const std::optional<config::FrontDoorAuthSpec>& spec) {
  if (!spec.has_value()) return defaults_;
  auto rules = std::make_shared<ResourceRules>(*defaults_);
  if (spec->issuers.has_value()) rules->issuers = *spec->issuers;
  if (spec->scopes.has_value()) rules->scopes = *spec->scopes;
  rules->resource = spec->resource;
  if (spec->audiences.has_value()) rules->audiences = *spec->audiences;
  if (spec->accept_plain_jwt_type.has_value()) {
    rules->accept_plain_jwt_type = *spec->accept_plain_jwt_type;
  }
  std::vector<std::string> fresh;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& issuer : rules->issuers) {
      if (trusted_.insert(issuer).second) fresh.push_back(issuer);
    }
  }
  if (!fresh.empty()) {
    Post([this, fresh] {
      for (const std::string& issuer : fresh) {
        keys_.Refresh(issuer, auth::IssuerKeys::Why::kScheduled).IgnoreError();
      }
    });
  }
  return rules;
}

void ResourceServer::AdmitUnder(std::shared_ptr<const ResourceRules> rules,
                                std::shared_ptr<http::HttpExchange> exchange,
                                std::string_view base_path,
                                std::string_view subpath,
                                const http::Headers& extra,
                                std::function<void(Caller)> admit) {
  const http::Request& request = exchange->request();
  Target target;
  if (!TargetOfRequest(request, base_path, subpath, rules->resource,
                       &target.resource, &target.metadata_url)) {
    return GateAnswer(*exchange, 400, {}, extra,
                      EndpointErrorBody(400, "Bad Request: no Host header"));
  }
  if (oauth::ParseQuery(AbslView(request.query())).count("access_token") > 0) {
    return GateAnswer(
        *exchange, 400,
        {{"WWW-Authenticate",
          absl::StrCat("Bearer error=\"invalid_request\", "
                       "error_description=\"send the access token in the "
                       "Authorization header, never in the URL\", "
                       "resource_metadata=\"",
                       target.metadata_url, "\"")}},
        extra,
        EndpointErrorBody(400,
                          "Bad Request: an access token in the query string "
                          "is refused; send Authorization: Bearer <token>"));
  }
  const std::string_view token = BearerTokenOf(request);
  if (token.empty()) {
    auth::TokenVerdict none;
    none.problem = auth::TokenProblem::kNone;  // no token: no error named
    return Refuse(exchange, *rules, target, extra, none);
  }
  const absl::Time now = options_.clock->Now();
  // Remembered per resource: a token verified for one front door is not
  // thereby good for another. Nor once its issuer is no longer trusted
  // there (a configuration reload).
  const std::string memo_key = absl::StrCat(target.resource, " ", AbslView(token));
  for (auth::VerifiedTokens* memo : {&verified_, &introspected_}) {
    if (std::optional<auth::TokenCaller> known = memo->Find(memo_key, now);
        known.has_value() &&
        std::find(rules->issuers.begin(), rules->issuers.end(),
                  known->issuer) != rules->issuers.end()) {
      return Decide(exchange, *rules, target, extra, *known, admit);
    }
  }
  auth::TokenVerdict verdict = Verify(token, *rules, target.resource);
  if (verdict.ok()) {
    verified_.Remember(memo_key, verdict.caller, now);
    return Decide(exchange, *rules, target, extra, verdict.caller, admit);
  }
  if (verdict.problem == auth::TokenProblem::kMalformed &&
      introspection_ != nullptr) {
    // Not a JWT: an opaque token, which only its issuer can vouch for,
    // unless it said no a moment ago.
    if (std::optional<auth::TokenVerdict> refused =
            introspected_.FindRefusal(memo_key, now)) {
      return Refuse(exchange, *rules, target, extra, *refused);
    }
    return Post([this, rules, exchange = std::move(exchange),
                 target = std::move(target), extra,
                 token = std::string(token), memo_key,
                 admit = std::move(admit)] {
      auth::TokenVerdict asked = Introspect(token, *rules, target.resource);
      if (!asked.ok()) {
        if (asked.problem != auth::TokenProblem::kUnverifiable) {
          introspected_.RememberRefusal(memo_key, asked,
                                        options_.clock->Now(),
                                        options_.introspection_refusal_cache);
        }
        return Refuse(exchange, *rules, target, extra, asked);
      }
      introspected_.Remember(memo_key, asked.caller, options_.clock->Now());
      Decide(exchange, *rules, target, extra, asked.caller, admit);
    });
  }
  if (verdict.problem != auth::TokenProblem::kUnknownKey) {
    return Refuse(exchange, *rules, target, extra, verdict);
  }
  // A key the set lacks (a rotation, or the first fetch still running):
  // the request waits for a refresh on the worker, then is tried again.
  Post([this, rules, exchange = std::move(exchange),
        target = std::move(target), extra, token = std::string(token),
        memo_key, admit = std::move(admit), issuer = verdict.issuer] {
    keys_.Refresh(issuer, auth::IssuerKeys::Why::kUnknownKey).IgnoreError();
    const absl::Time now = options_.clock->Now();
    auth::TokenVerdict again = Verify(token, *rules, target.resource);
    if (!again.ok()) return Refuse(exchange, *rules, target, extra, again);
    verified_.Remember(memo_key, again.caller, now);
    Decide(exchange, *rules, target, extra, again.caller, admit);
  });
}

auth::TokenRules ResourceServer::TokenRulesFor(
    const ResourceRules& resource_rules, const std::string& resource) const {
  auth::TokenRules rules;
  rules.issuers = resource_rules.issuers;
  rules.resource = resource;
  rules.audiences = resource_rules.audiences;
  rules.accept_plain_jwt_type = resource_rules.accept_plain_jwt_type;
  rules.skew = options_.skew;
  return rules;
}

auth::TokenVerdict ResourceServer::Introspect(
    std::string_view token, const ResourceRules& resource_rules,
    const std::string& resource) {
  const auth::TokenRules rules = TokenRulesFor(resource_rules, resource);
  auth::TokenVerdict telling;
  telling.problem = auth::TokenProblem::kUnverifiable;
  telling.detail = "no trusted issuer could be asked about the token";
  for (const std::string& issuer : rules.issuers) {
    auth::TokenVerdict verdict = introspection_->Introspect(
        issuer, token, rules, options_.clock->Now());
    if (verdict.ok()) return verdict;
    // An issuer that knows the token says more than one that could not be
    // asked, or one for which it is not active.
    if (verdict.problem != auth::TokenProblem::kInactive &&
        verdict.problem != auth::TokenProblem::kUnverifiable) {
      telling = verdict;
    } else if (telling.problem == auth::TokenProblem::kUnverifiable) {
      telling = verdict;
    }
  }
  return telling;
}

auth::TokenVerdict ResourceServer::Verify(std::string_view token,
                                          const ResourceRules& resource_rules,
                                          const std::string& resource) {
  const auth::TokenRules rules = TokenRulesFor(resource_rules, resource);
  // The key sets looked up stay alive while the token is checked.
  std::vector<std::shared_ptr<const std::vector<auth::JsonWebKey>>> held;
  return auth::VerifyJwtAccessToken(
      token, rules,
      [this, &held](std::string_view issuer)
          -> const std::vector<auth::JsonWebKey>* {
        auto keys = keys_.Keys(issuer);
        if (keys == nullptr) return nullptr;
        held.push_back(keys);
        return keys.get();
      },
      options_.clock->Now());
}

void ResourceServer::Decide(const std::shared_ptr<http::HttpExchange>& exchange,
                            const ResourceRules& rules, const Target& target,
                            const http::Headers& extra,
                            const auth::TokenCaller& caller,
                            const std::function<void(Caller)>& admit) const {
  std::vector<std::string> missing;
  for (const std::string& scope : rules.scopes) {
    if (std::find(caller.scopes.begin(), caller.scopes.end(), scope) ==
        caller.scopes.end()) {
      missing.push_back(scope);
    }
  }
  if (!missing.empty()) {
    const std::string needed = absl::StrJoin(rules.scopes, " ");
    return GateAnswer(
        *exchange, 403,
        {{"WWW-Authenticate",
          absl::StrCat("Bearer error=\"insufficient_scope\", scope=\"",
                       AuthParamText(needed), "\", resource_metadata=\"",
                       target.metadata_url, "\", error_description=\"",
                       AuthParamText(absl::StrCat(
                           "the token lacks scope ",
                           absl::StrJoin(missing, " "))),
                       "\"")}},
        extra,
        EndpointErrorBody(403, absl::StrCat("Forbidden: the access token "
                                            "lacks the scope ",
                                            absl::StrJoin(missing, " "),
                                            " (needed: ", needed, ")")));
  }
  admit(Caller{caller.issuer, caller.subject, caller.client_id, caller.scopes,
                caller.claims});
}

void ResourceServer::Refuse(const std::shared_ptr<http::HttpExchange>& exchange,
                            const ResourceRules& rules, const Target& target,
                            const http::Headers& extra,
                            const auth::TokenVerdict& verdict) const {
  if (verdict.problem == auth::TokenProblem::kUnverifiable) {
    // Nobody could say whether the token is good: not the client's fault,
    // and asking again later may work.
    return GateAnswer(
        *exchange, 503, {{"Retry-After", "5"}}, extra,
        EndpointErrorBody(503, absl::StrCat("Service Unavailable: the access "
                                            "token could not be checked: ",
                                            verdict.detail)));
  }
  std::string challenge = "Bearer ";
  std::string message = "Unauthorized: send Authorization: Bearer <token>";
  if (!verdict.ok()) {
    absl::StrAppend(&challenge, "error=\"invalid_token\", error_description=\"",
                    AuthParamText(verdict.detail), "\", ");
    message = absl::StrCat("Unauthorized: the access token is refused (",
                           AbslView(auth::TokenProblemName(verdict.problem)),
                           "): ", verdict.detail);
  }
  absl::StrAppend(&challenge, "resource_metadata=\"", target.metadata_url,
                  "\"");
  if (!rules.scopes.empty()) {
    absl::StrAppend(&challenge, ", scope=\"",
                    AuthParamText(absl::StrJoin(rules.scopes, " ")), "\"");
  }
  GateAnswer(*exchange, 401, {{"WWW-Authenticate", std::move(challenge)}},
             extra, EndpointErrorBody(401, message));
}

void ResourceServer::ServeMetadata(
    const ResourceRules& rules,
    const std::shared_ptr<http::HttpExchange>& exchange,
    std::string_view base_path, std::string_view subpath,
    const http::Headers& extra) const {
  const http::Request& request = exchange->request();
  if (request.method != "GET" && request.method != "HEAD") {
    return GateAnswer(*exchange, 405, {{"Allow", "GET"}}, extra,
                      EndpointErrorBody(405, "Method not allowed; use GET"));
  }
  std::string resource;
  std::string metadata_url;
  if (!TargetOfRequest(request, base_path, subpath, rules.resource, &resource,
                       &metadata_url)) {
    return GateAnswer(*exchange, 400, {}, extra,
                      EndpointErrorBody(400, "Bad Request: no Host header"));
  }
  nlohmann::json document = {
      {"resource", resource},
      {"authorization_servers", rules.issuers},
      {"scopes_supported", rules.scopes},
      {"bearer_methods_supported", nlohmann::json::array({"header"})}};
  GateAnswer(*exchange, 200, {{"Cache-Control", "max-age=300"}}, extra,
             document.dump());
}

void ResourceServer::Post(std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  jobs_.push_back(std::move(job));
}

void ResourceServer::Work() {
  for (;;) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ResourceServer* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->jobs_.empty();
          },
          this));
      if (stopping_) {
        jobs_.clear();
        return;
      }
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void ResourceServer::ScheduleRefresh() {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  timer_ = options_.clock->After(options_.refresh_interval, [this] {
    Post([this] { RefreshAll(); });
    ScheduleRefresh();
  });
}

void ResourceServer::RefreshAll() {
  std::set<std::string> issuers;
  {
    absl::MutexLock lock(&mu_);
    issuers = trusted_;
  }
  for (const std::string& issuer : issuers) {
    keys_.Refresh(issuer, auth::IssuerKeys::Why::kScheduled).IgnoreError();
  }
}

ServerGate::ServerGate(std::shared_ptr<ResourceServer> server,
                       std::shared_ptr<const ResourceRules> rules)
    : server_(std::move(server)), rules_(std::move(rules)) {}

void ServerGate::Replace(std::shared_ptr<const ResourceRules> rules) {
  absl::MutexLock lock(&mu_);
  rules_ = std::move(rules);
}

std::shared_ptr<const ResourceRules> ServerGate::rules() const {
  absl::MutexLock lock(&mu_);
  return rules_;
}

void ServerGate::Admit(std::shared_ptr<http::HttpExchange> exchange,
                       std::string_view base_path, std::string_view subpath,
                       const http::Headers& extra,
                       std::function<void(Caller)> admit) {
  server_->AdmitUnder(rules(), std::move(exchange), base_path, subpath, extra,
                      std::move(admit));
}

}  // namespace inspector::frontdoor
