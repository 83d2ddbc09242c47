#include "server/apps/app_open.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/net/listen_address.h"
#include "gateway/caller_credentials.h"
#include "gateway/request_policy.h"
#include "server/oauth/crypto.h"
#include "server/protocol/capabilities.h"

namespace inspector::apps {

using nlohmann::json;

namespace {

void AnswerAppOpen(http::HttpExchange& exchange, int status,
                   http::Headers headers, const json& body) {
  headers.push_back({"Content-Type", "application/json"});
  headers.push_back({"Cache-Control", "no-store"});
  exchange.Respond(status, std::move(headers), body.dump());
}

void RefuseAppOpen(http::HttpExchange& exchange, int status,
                   absl::string_view code, absl::string_view message,
                   http::Headers headers) {
  AnswerAppOpen(exchange, status, std::move(headers),
                {{"error",
                  {{"code", std::string(code)},
                   {"message", std::string(message)}}}});
}

// A CSP host source an App may list: scheme (http, https, ws, wss) and
// host, an optional "*." before the host and an optional numeric port;
// no path, no wildcard port, nothing a header could be broken with. On
// success `host` and `port` (the scheme's default when none) are set.
bool ParseAppSource(absl::string_view source, std::string* host, int* port) {
  size_t scheme_end = source.find("://");
  if (scheme_end == absl::string_view::npos) return false;
  absl::string_view scheme = source.substr(0, scheme_end);
  int default_port;
  if (scheme == "http" || scheme == "ws") {
    default_port = 80;
  } else if (scheme == "https" || scheme == "wss") {
    default_port = 443;
  } else {
    return false;
  }
  absl::string_view rest = source.substr(scheme_end + 3);
  absl::string_view port_text;
  if (absl::StartsWith(rest, "[")) {
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) return false;
    *host = std::string(rest.substr(1, close - 1));
    for (char c : *host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' &&
          c != '.') {
        return false;
      }
    }
    rest.remove_prefix(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port_text = rest.substr(1);
    }
  } else {
    size_t colon = rest.find(':');
    absl::string_view name = rest.substr(0, colon);
    if (colon != absl::string_view::npos) port_text = rest.substr(colon + 1);
    if (absl::StartsWith(name, "*.")) name.remove_prefix(2);
    if (name.empty()) return false;
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' &&
          c != '.') {
        return false;
      }
    }
    *host = absl::AsciiStrToLower(name);
  }
  if (port_text.empty()) {
    if (absl::EndsWith(rest, ":")) return false;
    *port = default_port;
    return true;
  }
  return absl::SimpleAtoi(port_text, port) && *port > 0 && *port < 65536 &&
         std::all_of(port_text.begin(), port_text.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

// The sources of `list` (an array of strings) an App may have; the others
// go to `refused` with why.
std::vector<std::string> AppSources(const json& list, absl::string_view field,
                                    const AppPolicyContext& context,
                                    std::vector<std::string>* refused) {
  std::vector<std::string> sources;
  if (!list.is_array()) return sources;
  for (const json& item : list) {
    std::string source = item.is_string() ? item.get<std::string>() : item.dump();
    std::string host;
    int port = 0;
    if (!item.is_string() || !ParseAppSource(source, &host, &port)) {
      refused->push_back(absl::StrCat(field, ": ", source,
                                      " (not scheme://host[:port])"));
      continue;
    }
    if (net::IsLoopbackHost(host) &&
        std::find(context.daemon_ports.begin(), context.daemon_ports.end(),
                  port) != context.daemon_ports.end()) {
      refused->push_back(absl::StrCat(field, ": ", source,
                                      " (the inspector's own listener)"));
      continue;
    }
    sources.push_back(std::move(source));
  }
  return sources;
}

std::string AppCspDirective(absl::string_view name, std::vector<std::string> fixed,
                      const std::vector<std::string>& sources) {
  fixed.insert(fixed.end(), sources.begin(), sources.end());
  if (fixed.empty()) fixed.push_back("'none'");
  return absl::StrCat(name, " ", absl::StrJoin(fixed, " "));
}

}  // namespace

AppPolicies MakeAppPolicies(const json& ui_meta,
                            const AppPolicyContext& context) {
  AppPolicies policies;
  policies.sandbox = context.dedicated_origin ? kAppSandboxFlagsWithOrigin
                                              : kAppSandboxFlags;
  json csp = ui_meta.is_object() ? ui_meta.value("csp", json()) : json();
  if (!csp.is_object()) csp = json::object();
  std::vector<std::string> resources = AppSources(
      csp.value("resourceDomains", json()), "resourceDomains", context,
      &policies.refused);
  std::vector<std::string> connect = AppSources(
      csp.value("connectDomains", json()), "connectDomains", context,
      &policies.refused);
  std::vector<std::string> frames = AppSources(
      csp.value("frameDomains", json()), "frameDomains", context,
      &policies.refused);
  std::vector<std::string> bases = AppSources(
      csp.value("baseUriDomains", json()), "baseUriDomains", context,
      &policies.refused);
  std::vector<std::string> directives = {
      "default-src 'none'",
      AppCspDirective("script-src", {"'unsafe-inline'"}, resources),
      AppCspDirective("style-src", {"'unsafe-inline'"}, resources),
      AppCspDirective("img-src", {"data:", "blob:"}, resources),
      AppCspDirective("font-src", {"data:"}, resources),
      AppCspDirective("media-src", {"data:", "blob:"}, resources),
      AppCspDirective("connect-src", {}, connect),
      AppCspDirective("frame-src", {}, frames),
      AppCspDirective("base-uri", {}, bases),
      "object-src 'none'",
      "form-action 'none'",
      AppCspDirective("frame-ancestors", {}, context.frame_ancestors),
      absl::StrCat("sandbox ", policies.sandbox),
  };
  policies.content_security_policy = absl::StrJoin(directives, "; ");
  json granted_csp = json::object();
  const std::pair<const char*, const std::vector<std::string>*> kinds[] = {
      {"connectDomains", &connect},
      {"resourceDomains", &resources},
      {"frameDomains", &frames},
      {"baseUriDomains", &bases}};
  for (const auto& [key, list] : kinds) {
    if (!list->empty()) granted_csp[key] = *list;
  }
  policies.granted = {{"csp", granted_csp},
                      {"permissions", json::object()}};

  static constexpr std::pair<const char*, const char*> kPermissions[] = {
      {"camera", "camera"},
      {"microphone", "microphone"},
      {"geolocation", "geolocation"},
      {"clipboardWrite", "clipboard-write"},
  };
  json permissions =
      ui_meta.is_object() ? ui_meta.value("permissions", json()) : json();
  std::vector<std::string> policy;
  std::vector<std::string> allow;
  for (const auto& [key, feature] : kPermissions) {
    bool granted = permissions.is_object() && permissions.contains(key) &&
                   !permissions[key].is_null() &&
                   permissions[key] != json(false);
    policy.push_back(absl::StrCat(feature, granted ? "=*" : "=()"));
    if (granted) {
      allow.push_back(feature);
      policies.granted["permissions"][key] = json::object();
    }
  }
  policies.permissions_policy = absl::StrJoin(policy, ", ");
  policies.iframe_allow = absl::StrJoin(allow, "; ");
  return policies;
}

absl::StatusOr<std::string> AppDomainHost(absl::string_view server_id,
                                          const json& domain) {
  if (!domain.is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("domain: ", domain.dump(), " (not a string)"));
  }
  const std::string value = domain.get<std::string>();
  std::string host = value;
  int port = 0;
  if (value.find("://") != std::string::npos) {
    if (!absl::StartsWith(value, "http") ||
        !ParseAppSource(value, &host, &port)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "domain: ", value, " (not a host name or an http(s) origin)"));
    }
  }
  bool valid = !host.empty() && host.size() <= 253 && host.front() != '.' &&
               host.front() != '-' && value.find('*') == std::string::npos;
  for (char c : host) {
    valid = valid && (std::isalnum(static_cast<unsigned char>(c)) ||
                      c == '-' || c == '.');
  }
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "domain: ", value, " (not a host name or an http(s) origin)"));
  }
  const std::string digest = absl::BytesToHexString(oauth::Sha256(
      absl::StrCat(server_id, "\n", absl::AsciiStrToLower(value))));
  return absl::StrCat("app-", digest.substr(0, 16), ".localhost");
}

namespace {

// The App document in a resources/read answer, or why there is none.
struct AppContent {
  std::string html;
  json ui_meta;
};

absl::StatusOr<AppContent> AppContentOf(const std::string& response,
                                        const std::string& uri) {
  json answer = json::parse(response, nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object()) {
    return absl::InternalError("the server's answer is not JSON");
  }
  if (answer.contains("error")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "resources/read of ", uri, " failed: ", answer["error"].dump()));
  }
  const json& contents = answer.value("result", json::object())
                             .value("contents", json::array());
  if (!contents.is_array() || contents.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("resources/read of ", uri, " answered no contents"));
  }
  const json* chosen = &contents[0];
  for (const json& content : contents) {
    if (content.is_object() && content.value("uri", "") == uri) {
      chosen = &content;
      break;
    }
  }
  if (!chosen->is_object()) {
    return absl::FailedPreconditionError("malformed resource contents");
  }
  std::string mime = chosen->value("mimeType", "");
  mime.erase(std::remove(mime.begin(), mime.end(), ' '), mime.end());
  if (absl::AsciiStrToLower(mime) != protocol::kAppMimeType) {
    return absl::FailedPreconditionError(absl::StrCat(
        uri, " is not an MCP App: its mimeType is \"", mime, "\", not ",
        protocol::kAppMimeType));
  }
  AppContent app;
  if (chosen->contains("text") && (*chosen)["text"].is_string()) {
    app.html = (*chosen)["text"].get<std::string>();
  } else if (chosen->contains("blob") && (*chosen)["blob"].is_string()) {
    if (!absl::Base64Unescape((*chosen)["blob"].get<std::string>(),
                              &app.html)) {
      return absl::FailedPreconditionError(
          absl::StrCat(uri, ": its blob is not base64"));
    }
  } else {
    return absl::FailedPreconditionError(
        absl::StrCat(uri, ": neither text nor blob"));
  }
  const json meta = chosen->value("_meta", json::object());
  app.ui_meta = meta.is_object() ? meta.value("ui", json()) : json();
  return app;
}

}  // namespace

namespace {

// How many pages of resources/list are searched for the App's entry when
// its content carries no `_meta.ui`.
constexpr int kListingPages = 10;

// An App being opened: what the answer needs once the resource is read.
struct AppOpening {
  engine::Engine* engine = nullptr;
  gateway::AppSandbox* sandbox = nullptr;
  std::shared_ptr<http::HttpExchange> exchange;
  http::Headers cors;
  std::string server_id;
  std::string uri;
  std::string url_host;
  AppPolicyContext context;
  std::string html;
};

engine::CallLimits AppCallLimits() {
  // The server's own timeouts (zero: its configuration's).
  engine::CallLimits limits;
  limits.caller = "web UI (MCP Apps host)";
  return limits;
}

// Publishes the App with the policies of `ui_meta` (found in `source`:
// "content", "listing" or "none") and answers the UI.
void PublishApp(const std::shared_ptr<AppOpening>& opening,
                const json& ui_meta, const char* source) {
  AppPolicyContext context = opening->context;
  // A dedicated origin when the App asks for one and its domain is one
  // this host takes.
  std::string dedicated_host;
  std::string domain_refused;
  const json requested_domain =
      ui_meta.is_object() ? ui_meta.value("domain", json()) : json();
  if (!requested_domain.is_null()) {
    absl::StatusOr<std::string> host =
        AppDomainHost(opening->server_id, requested_domain);
    if (host.ok()) {
      dedicated_host = *std::move(host);
      context.dedicated_origin = true;
    } else {
      domain_refused = std::string(host.status().message());
    }
  }
  AppPolicies policies = MakeAppPolicies(ui_meta, context);
  if (!domain_refused.empty()) {
    policies.refused.push_back(std::move(domain_refused));
  }
  const std::string origin = absl::StrCat(
      "http://", dedicated_host.empty() ? opening->url_host : dedicated_host,
      ":", opening->sandbox->port());
  json answer = {
      {"csp", policies.content_security_policy},
      {"permissionsPolicy", policies.permissions_policy},
      {"allow", policies.iframe_allow},
      {"sandbox", policies.sandbox},
      {"refusedDomains", policies.refused},
      {"granted", policies.granted},
      {"prefersBorder",
       ui_meta.is_object() ? ui_meta.value("prefersBorder", json()) : json()},
      {"metadataFrom", source},
  };
  if (!dedicated_host.empty()) {
    answer["domain"] = {{"requested", requested_domain}, {"origin", origin}};
  }
  std::string path = opening->sandbox->Publish(
      {std::move(opening->html), std::move(policies.content_security_policy),
       std::move(policies.permissions_policy), dedicated_host});
  answer["url"] = absl::StrCat(origin, path);
  AnswerAppOpen(*opening->exchange, 200, std::move(opening->cors), answer);
}

// The App's content had no `_meta.ui`: the entry of resources/list for its
// URI may (the extension's rule: the content's first, else the listing's).
// Searches `pages_left` pages from `cursor`; without an entry (or when the
// listing fails) the App gets the restrictive defaults.
void PublishWithListingMeta(std::shared_ptr<AppOpening> opening,
                            std::string cursor, int pages_left) {
  json list = {{"jsonrpc", "2.0"},
               {"id", "app-open-listing"},
               {"method", "resources/list"},
               {"params", json::object()}};
  if (!cursor.empty()) list["params"]["cursor"] = cursor;
  engine::Engine* engine = opening->engine;
  const std::string server_id = opening->server_id;
  engine->Forward(
      server_id, list.dump(), AppCallLimits(),
      [opening, pages_left](absl::StatusOr<std::string> response) {
        json answer = response.ok() ? json::parse(*response, nullptr,
                                                  /*allow_exceptions=*/false)
                                    : json();
        const json result = answer.is_object() && answer.contains("result") &&
                                    answer["result"].is_object()
                                ? answer["result"]
                                : json::object();
        const json resources = result.value("resources", json::array());
        if (resources.is_array()) {
          for (const json& entry : resources) {
            if (!entry.is_object() || entry.value("uri", "") != opening->uri) {
              continue;
            }
            const json meta = entry.value("_meta", json::object());
            const json ui = meta.is_object() ? meta.value("ui", json()) : json();
            PublishApp(opening, ui.is_object() ? ui : json(),
                       ui.is_object() ? "listing" : "none");
            return;
          }
        }
        const json next = result.value("nextCursor", json());
        if (next.is_string() && !next.get<std::string>().empty() &&
            pages_left > 1) {
          PublishWithListingMeta(opening, next.get<std::string>(),
                                 pages_left - 1);
          return;
        }
        PublishApp(opening, json(), "none");
      });
}

}  // namespace

void ServeAppOpen(const AppOpenDeps& deps,
                  std::shared_ptr<http::HttpExchange> exchange,
                  http::Headers cors) {
  const http::Request& request = exchange->request();
  if (request.path() != kAppOpenPath) {
    RefuseAppOpen(*exchange, 404, "NOT_FOUND", "no such path",
                  std::move(cors));
    return;
  }
  if (request.method != "POST") {
    cors.push_back({"Allow", "POST"});
    RefuseAppOpen(*exchange, 405, "METHOD_NOT_ALLOWED",
                  "an App is opened with POST", std::move(cors));
    return;
  }
  const int ui_port = deps.ui_port();
  const std::string cookie_name = absl::StrCat("inspector_session_", ui_port);
  if (!gateway::CookieRequestAllowed(request, cookie_name)) {
    RefuseAppOpen(*exchange, 403, "FORBIDDEN",
                  "the sign-in cookie is accepted only from the web UI's own "
                  "pages",
                  std::move(cors));
    return;
  }
  std::string cookie;
  absl::Status allowed = deps.authenticator->Check(
      gateway::CallerMetadataOf(request, cookie_name, &cookie));
  if (!allowed.ok()) {
    cors.push_back({"WWW-Authenticate", "Bearer"});
    RefuseAppOpen(*exchange, 401, "SESSION_INVALID", allowed.message(),
                  std::move(cors));
    return;
  }
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  std::string server_id;
  std::string uri;
  if (body.is_object()) {
    server_id = body.value("serverId", "");
    uri = body.value("uri", "");
  }
  if (server_id.empty() || !absl::StartsWith(uri, "ui://")) {
    RefuseAppOpen(*exchange, 400, "INVALID_REQUEST",
                  "the body is {\"serverId\": ID, \"uri\": \"ui://...\"}",
                  std::move(cors));
    return;
  }
  // The App's origin is the sandbox's port on the host name the UI uses.
  std::string host = gateway::RequestPolicy::HostName(
      request.Header("host") != nullptr ? *request.Header("host") : "");
  if (host.empty()) host = "127.0.0.1";
  const std::string url_host =
      host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host;
  AppPolicyContext context;
  for (const char* name : {"127.0.0.1", "localhost", "[::1]"}) {
    context.frame_ancestors.push_back(
        absl::StrCat("http://", name, ":", ui_port));
  }
  if (url_host != "127.0.0.1" && url_host != "localhost" &&
      url_host != "[::1]") {
    context.frame_ancestors.push_back(
        absl::StrCat("http://", url_host, ":", ui_port));
  }
  context.daemon_ports = {ui_port, deps.sandbox->port()};

  json read = {{"jsonrpc", "2.0"},
               {"id", "app-open"},
               {"method", "resources/read"},
               {"params", {{"uri", uri}}}};
  auto opening = std::make_shared<AppOpening>();
  opening->engine = deps.engine;
  opening->sandbox = deps.sandbox;
  opening->exchange = std::move(exchange);
  opening->cors = std::move(cors);
  opening->server_id = server_id;
  opening->uri = uri;
  opening->url_host = url_host;
  opening->context = std::move(context);
  opening->engine->Forward(
      server_id, read.dump(), AppCallLimits(),
      [opening](absl::StatusOr<std::string> response) {
        if (!response.ok()) {
          RefuseAppOpen(*opening->exchange, 502, "APP_RESOURCE_ERROR",
                        response.status().message(),
                        std::move(opening->cors));
          return;
        }
        absl::StatusOr<AppContent> app = AppContentOf(*response, opening->uri);
        if (!app.ok()) {
          RefuseAppOpen(*opening->exchange, 422, "NOT_AN_APP",
                        app.status().message(), std::move(opening->cors));
          return;
        }
        opening->html = std::move(app->html);
        if (app->ui_meta.is_object()) {
          PublishApp(opening, app->ui_meta, "content");
        } else {
          PublishWithListingMeta(opening, "", kListingPages);
        }
      });
}

}  // namespace inspector::apps
