// The doctor's OAuth check: protected resource and authorization server
// metadata, and whether the server wants a token (doctor_run.h).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/net/listen_address.h"
#include "common/sse_parser.h"
#include "common/transports.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/engine/engine.h"
#include "server/engine/handshake.h"
#include "server/transport/http_client.h"
#include "server/doctor/doctor_run.h"

namespace inspector::doctor {
namespace {

// The value of parameter `name` in a WWW-Authenticate challenge, "" if
// absent (quoted or token form).
std::string ChallengeParam(const std::string& challenge,
                           std::string_view name) {
  std::string lower = absl::AsciiStrToLower(challenge);
  size_t at = 0;
  while ((at = lower.find(name, at)) != std::string::npos) {
    size_t end = at + name.size();
    bool starts = at == 0 || lower[at - 1] == ' ' || lower[at - 1] == ',';
    size_t eq = end;
    while (eq < lower.size() && lower[eq] == ' ') ++eq;
    if (!starts || eq >= lower.size() || lower[eq] != '=') {
      at = end;
      continue;
    }
    size_t v = eq + 1;
    while (v < lower.size() && lower[v] == ' ') ++v;
    if (v < challenge.size() && challenge[v] == '"') {
      size_t close = challenge.find('"', v + 1);
      return challenge.substr(v + 1, close == std::string::npos
                                         ? std::string::npos
                                         : close - v - 1);
    }
    size_t stop = challenge.find_first_of(", ", v);
    return challenge.substr(
        v, stop == std::string::npos ? std::string::npos : stop - v);
  }
  return "";
}

}  // namespace

absl::StatusOr<Json> DoctorRun::Impl::FetchJson(const std::string& url,
                                                std::string* tried) {
  if (!tried->empty()) tried->append(", ");
  tried->append(url);
  HttpRequest request = BaseRequest("GET", url);
  request.headers = {{"Accept", "application/json"}};
  Probe probe = Fetch(std::move(request));
  if (!probe.status.ok()) return probe.status;
  if (probe.head.status != 200) {
    return absl::NotFoundError(absl::StrCat("HTTP ", probe.head.status));
  }
  Json parsed = Json::parse(probe.body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  return parsed;
}

void DoctorRun::Impl::CheckOAuth() {
  v1::DoctorCheck* check = Next("oauth", "OAuth metadata and auth state");
  if (check == nullptr) return;
  const std::string origin = OriginOf(*url_);
  const std::string path = PathOf(*url_);
  const bool has_authorization = HasHeader("Authorization");
  const bool challenged =
      (post_probe_.has_value() && post_probe_->head.status == 401) ||
      (sse_probe_.has_value() && sse_probe_->head.status == 401);
  // RFC 9728: the challenge's resource_metadata, else the well-known URL
  // with the resource's path inserted, else at the root.
  std::vector<std::string> prm_urls;
  std::string from_challenge =
      ChallengeParam(www_authenticate_, "resource_metadata");
  if (!from_challenge.empty()) {
    auto parsed = config::ParseHttpUrl(from_challenge);
    if (parsed.ok() && OriginOf(*parsed) == origin) {
      prm_urls.push_back(from_challenge);
    } else {
      check->add_details(absl::StrCat("resource_metadata ", from_challenge,
                                      " ignored: not on the server's origin"));
    }
  }
  if (!path.empty()) {
    prm_urls.push_back(
        absl::StrCat(origin, "/.well-known/oauth-protected-resource", path));
  }
  prm_urls.push_back(
      absl::StrCat(origin, "/.well-known/oauth-protected-resource"));
  std::string tried;
  std::optional<Json> prm;
  std::string prm_url;
  for (const std::string& u : prm_urls) {
    if (Over()) break;
    auto document = FetchJson(u, &tried);
    if (document.ok()) {
      prm = *document;
      prm_url = u;
      break;
    }
  }
  std::vector<std::string> auth_servers;
  if (prm.has_value()) {
    check->add_details(
        absl::StrCat("protected resource metadata (RFC 9728): ", prm_url));
    if (auto it = prm->find("resource"); it != prm->end() && it->is_string()) {
      check->add_details(absl::StrCat("  resource: ", it->get<std::string>()));
    }
    if (auto it = prm->find("authorization_servers");
        it != prm->end() && it->is_array()) {
      for (const Json& s : *it) {
        if (s.is_string()) auth_servers.push_back(s.get<std::string>());
      }
    }
    check->add_details(absl::StrCat(
        "  authorization_servers: ",
        auth_servers.empty() ? "(none)" : absl::StrJoin(auth_servers, ", ")));
    if (auto it = prm->find("scopes_supported");
        it != prm->end() && it->is_array()) {
      std::vector<std::string> scopes;
      for (const Json& s : *it) {
        if (s.is_string()) scopes.push_back(s.get<std::string>());
      }
      check->add_details(
          absl::StrCat("  scopes_supported: ", absl::StrJoin(scopes, " ")));
    }
  } else {
    check->add_details(
        absl::StrCat("no protected resource metadata (RFC 9728) at ", tried));
  }
  // RFC 8414 for the first authorization server; without protected
  // resource metadata, at the server's own origin (MCP 2025-03-26).
  std::string issuer = auth_servers.empty() ? origin : auth_servers.front();
  std::optional<Json> asm_doc;
  std::string asm_url;
  auto issuer_url = config::ParseHttpUrl(issuer);
  const bool server_is_local = [&] {
    for (const sockaddr_storage& a : resolved_.addresses) {
      if (!IsLocalAddress(reinterpret_cast<const sockaddr*>(&a))) {
        return false;
      }
    }
    return !resolved_.addresses.empty();
  }();
  if (!issuer_url.ok()) {
    check->add_details(absl::StrCat("authorization server ", issuer,
                                    " is not an http(s) URL"));
  } else {
    bool allowed = true;
    if (!server_is_local && OriginOf(*issuer_url) != origin) {
      // Discovery never reaches into local networks for a remote server.
      std::optional<Resolved> as =
          Resolve(issuer_url->host, PortOf(*issuer_url));
      if (as.has_value()) {
        for (const sockaddr_storage& a : as->addresses) {
          if (IsLocalAddress(reinterpret_cast<const sockaddr*>(&a))) {
            allowed = false;
          }
        }
      }
      if (!allowed) {
        check->add_details(absl::StrCat(
            "authorization server ", issuer,
            " not fetched: it resolves to a local or private address and "
            "the MCP server is not local"));
      }
    }
    std::string as_origin = OriginOf(*issuer_url);
    std::string as_path = PathOf(*issuer_url);
    std::string as_tried;
    for (const char* well_known : {"/.well-known/oauth-authorization-server",
                                   "/.well-known/openid-configuration"}) {
      if (!allowed || Over()) break;
      std::string u = absl::StrCat(as_origin, well_known, as_path);
      auto document = FetchJson(u, &as_tried);
      if (document.ok()) {
        asm_doc = *document;
        asm_url = u;
        break;
      }
    }
    if (asm_doc.has_value()) {
      check->add_details(
          absl::StrCat("authorization server metadata (RFC 8414): ", asm_url));
      for (const char* field : {"issuer", "authorization_endpoint",
                                "token_endpoint", "registration_endpoint"}) {
        if (auto it = asm_doc->find(field);
            it != asm_doc->end() && it->is_string()) {
          check->add_details(
              absl::StrCat("  ", field, ": ", it->get<std::string>()));
        }
      }
      if (auto it = asm_doc->find("code_challenge_methods_supported");
          it != asm_doc->end() && it->is_array()) {
        std::vector<std::string> methods;
        for (const Json& m : *it) {
          if (m.is_string()) methods.push_back(m.get<std::string>());
        }
        check->add_details(absl::StrCat("  code_challenge_methods_supported: ",
                                        absl::StrJoin(methods, " ")));
      }
    } else if (allowed && !as_tried.empty()) {
      check->add_details(absl::StrCat(
          "no authorization server metadata (RFC 8414) at ", as_tried));
    }
  }
  if (FailIfOver(check)) return;
  const bool found_any = prm.has_value() || asm_doc.has_value();
  std::string metadata =
      prm.has_value() && asm_doc.has_value()
          ? "protected resource and authorization server metadata found"
      : prm.has_value()     ? "protected resource metadata found"
      : asm_doc.has_value() ? "authorization server metadata found"
                            : "no OAuth metadata";
  const std::string token_hint = absl::StrCat(
      "authorize inspectord with `inspectorctl auth login ", name(),
      "`, or configure a token yourself with ",
      UpdateHint("--header \"Authorization: Bearer TOKEN\""));
  if (challenged) {
    if (has_authorization) {
      Fail(check,
           absl::StrCat(metadata,
                        "; the server refused the configured Authorization "
                        "header (401)"),
           "the token is wrong or expired: " + token_hint, "SESSION_INVALID");
    } else {
      Fail(check,
           absl::StrCat(metadata,
                        "; the server requires authorization (401) and no "
                        "Authorization header is configured"),
           token_hint, "SESSION_INVALID");
    }
    return;
  }
  if (has_authorization) {
    Pass(check, absl::StrCat(metadata,
                             "; an Authorization header is configured and "
                             "was accepted"));
    return;
  }
  Pass(check, found_any ? absl::StrCat(metadata,
                                       "; the server did not ask for "
                                       "authorization")
                        : "no OAuth metadata; the server did not ask for "
                          "authorization");
}

}  // namespace inspector::doctor
