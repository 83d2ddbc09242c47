// A scripted HttpFetcher for the OAuth unit tests: answers each request
// from a table keyed by "METHOD URL" (the URL without its query), after
// any one-off answers queued for that key, 404 for anything else, and
// records every request it is given. Also the protected MCP server those
// tests share (its URL, its issuer, its discovery answers) and the step of
// running a flow to its authorization code. Single-threaded: a test owns
// its fetcher and calls it from its own thread.
#ifndef INSPECTOR_TESTS_SERVER_OAUTH_SCRIPTED_FETCHER_H_
#define INSPECTOR_TESTS_SERVER_OAUTH_SCRIPTED_FETCHER_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "server/oauth/oauth_flow.h"

namespace inspector::oauth {

// The MCP server the OAuth tests log in to, the issuer its resource
// metadata names, and the loopback redirect of the browser flows.
inline constexpr char kServer[] = "https://mcp.example.com/mcp";
inline constexpr char kIssuer[] = "https://auth.example.com";
inline constexpr char kRedirect[] = "http://127.0.0.1:4000/oauth/callback";

// The challenge of a 401 that points at kServer's resource metadata, with
// `params` (", scope=\"...\"") after it.
inline std::string ResourceMetadataChallenge(absl::string_view params = "") {
  return absl::StrCat(
      "Bearer resource_metadata=\"https://mcp.example.com/.well-known/"
      "oauth-protected-resource/mcp\"",
      params);
}

class ScriptedFetcher : public HttpFetcher {
 public:
  absl::StatusOr<HttpResponse> Fetch(const HttpRequest& request) override {
    requests.push_back(request);
    auto queued = once.find(Key(request));
    if (queued != once.end() && !queued->second.empty()) {
      HttpResponse r = queued->second.front();
      queued->second.erase(queued->second.begin());
      return r;
    }
    auto it = routes.find(Key(request));
    if (it == routes.end()) {
      HttpResponse not_found;
      not_found.status = 404;
      return not_found;
    }
    return it->second;
  }

  // Answers `key` ("METHOD URL") with `status`, `body` and `headers`.
  void Json(const std::string& key, int status, const std::string& body,
            Headers headers = {}) {
    HttpResponse r;
    r.status = status;
    r.body = body;
    r.headers = std::move(headers);
    routes[key] = r;
  }

  // Answers the next request to `key` (after those queued before) with
  // `status` and `body`, then goes back to the table.
  void JsonOnce(const std::string& key, int status, const std::string& body) {
    HttpResponse r;
    r.status = status;
    r.body = body;
    once[key].push_back(r);
  }

  // How many requests, as "METHOD URL" with the query, start with `prefix`.
  int Count(absl::string_view prefix) const {
    int n = 0;
    for (const auto& r : requests) {
      if (absl::StartsWith(absl::StrCat(r.method, " ", r.url), prefix)) ++n;
    }
    return n;
  }
  bool Requested(absl::string_view prefix) const { return Count(prefix) > 0; }

  // Whether any request's URL contains `fragment`.
  bool RequestedPath(absl::string_view fragment) const {
    for (const auto& r : requests) {
      if (absl::StrContains(r.url, fragment)) return true;
    }
    return false;
  }

  // The last request to `key` ("METHOD URL"); null if none.
  const HttpRequest* Last(const std::string& key) const {
    for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
      if (Key(*it) == key) return &*it;
    }
    return nullptr;
  }

  // Scripts kServer as a protected resource: its POST is answered 401 with
  // the WWW-Authenticate `challenge`, and its RFC 9728 metadata names
  // kIssuer as its authorization server.
  void ProtectedResource(const std::string& challenge) {
    Json(absl::StrCat("POST ", kServer), 401, "{}",
         {{"www-authenticate", challenge}});
    Json("GET https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
         200,
         absl::StrCat(R"({"resource":")", kServer,
                      R"(","authorization_servers":[")", kIssuer, R"("]})"));
  }

  std::map<std::string, HttpResponse> routes;
  std::map<std::string, std::vector<HttpResponse>> once;
  std::vector<HttpRequest> requests;

 private:
  static std::string Key(const HttpRequest& request) {
    return absl::StrCat(request.method, " ",
                        request.url.substr(0, request.url.find('?')));
  }
};

// Settings of a browser flow for kServer (id "id-1", name "remote") that
// comes back to kRedirect.
inline FlowSettings BrowserFlowSettings() {
  FlowSettings s;
  s.server_id = "id-1";
  s.server_name = "remote";
  s.server_url = kServer;
  s.redirect_uri = kRedirect;
  return s;
}

// A public client that an earlier login registered with `issuer` as
// `client_id` by DCR, coming back to kRedirect.
inline ClientRegistration EarlierDcrClient(const std::string& issuer,
                                           const std::string& client_id) {
  ClientRegistration client;
  client.issuer = issuer;
  client.client_id = client_id;
  client.strategy = "dcr";
  client.auth_method = "none";
  client.redirect_uri = kRedirect;
  return client;
}

// Advances a browser flow through discovery and registration to
// AUTHORIZATION_CODE, failing the test if it stops before.
inline void AdvanceToCode(OAuthFlow& flow) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
  }
  ASSERT_EQ(flow.state(), v1::AUTHORIZATION_CODE);
}

}  // namespace inspector::oauth

#endif  // INSPECTOR_TESTS_SERVER_OAUTH_SCRIPTED_FETCHER_H_
