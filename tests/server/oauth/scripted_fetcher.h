// A scripted HttpFetcher for the OAuth unit tests: answers each request
// from a table keyed by "METHOD URL" (the URL without its query), after
// any one-off answers queued for that key, 404 for anything else, and
// records every request it is given.
#ifndef INSPECTOR_TESTS_SERVER_OAUTH_SCRIPTED_FETCHER_H_
#define INSPECTOR_TESTS_SERVER_OAUTH_SCRIPTED_FETCHER_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/oauth/oauth_flow.h"

namespace inspector::oauth {

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

  std::map<std::string, HttpResponse> routes;
  std::map<std::string, std::vector<HttpResponse>> once;
  std::vector<HttpRequest> requests;

 private:
  static std::string Key(const HttpRequest& request) {
    return absl::StrCat(request.method, " ",
                        request.url.substr(0, request.url.find('?')));
  }
};

}  // namespace inspector::oauth

#endif  // INSPECTOR_TESTS_SERVER_OAUTH_SCRIPTED_FETCHER_H_
