// Blocking HTTP for the OAuth client (metadata, registration, token,
// revocation and authorization requests) and the metadata proxy
// (metadata_proxy.h), over the libcurl the transports load.
//
// The flow is a handful of small requests made one after another on a
// thread of the caller's (never a gRPC or transport thread), so a blocking
// easy handle is the simple tool here. Redirects are never followed: the
// flow decides about each Location itself (a token must not follow a
// redirect to another origin). Bodies larger than max_body_bytes fail.
//
// Thread-safety: Fetch may be called from any number of threads at once.
#ifndef INSPECTOR_SERVER_OAUTH_OAUTH_HTTP_H_
#define INSPECTOR_SERVER_OAUTH_OAUTH_HTTP_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace inspector::oauth {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  Headers headers;
  std::string body;
  // When set, asked after each piece of the body whether what has arrived
  // is enough (an event stream, which does not end, read up to its first
  // event): true ends the transfer there, and the response is what
  // arrived. It sees the headers and the body so far (status still 0).
  // Called on the fetching thread.
  std::function<bool(const HttpResponse& so_far)> enough;
};

// A POST of an HTML form (application/x-www-form-urlencoded) to `url`,
// asking for JSON back when `json_answer`.
HttpRequest FormPost(std::string url, bool json_answer = true);

struct HttpResponse {
  int status = 0;
  Headers headers;  // names lower-cased, in arrival order
  std::string body;
  // The first value of header `lower_name`, or "".
  std::string Header(absl::string_view lower_name) const;
};

class HttpFetcher {
 public:
  virtual ~HttpFetcher() = default;
  // The response, whatever its status. UNAVAILABLE-like inspector errors
  // (CONNECTION_REFUSED, CONNECTION_TIMEOUT, TRANSPORT_ERROR, TOO_LARGE)
  // when no complete response arrived.
  virtual absl::StatusOr<HttpResponse> Fetch(const HttpRequest& request) = 0;
};

struct CurlFetcherOptions {
  absl::Duration timeout = absl::Seconds(15);
  size_t max_body_bytes = 1 << 20;
};

class CurlFetcher final : public HttpFetcher {
 public:
  explicit CurlFetcher(CurlFetcherOptions options = {}) : options_(options) {}
  absl::StatusOr<HttpResponse> Fetch(const HttpRequest& request) override;

 private:
  const CurlFetcherOptions options_;
};

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_OAUTH_HTTP_H_
