// The seed's OAuth metadata proxy (`GET /api/mcp/oauth/metadata?url=`,
// OAuthService.GetMetadata): fetches a metadata document for a page that
// cannot read another origin itself, and answers with its JSON.
//
// Rules: the URL must be https, or http to a loopback host (urls.h
// CheckFetchableUrl); redirects are not followed; the answer may be at most
// kMetadataMaxBytes and must arrive within the timeout. An event stream
// (Content-Type text/event-stream) is read only up to its first event with
// data: a legacy HTTP+SSE (2024-11-05) `endpoint` event becomes
// {"transport":"sse","endpoint":"<absolute URL>"}, a JSON payload is
// answered as it is.
//
// Thread-safe: free functions without shared state.
#ifndef INSPECTOR_SERVER_OAUTH_METADATA_PROXY_H_
#define INSPECTOR_SERVER_OAUTH_METADATA_PROXY_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/sse_parser.h"
#include "server/oauth/oauth_http.h"

namespace inspector::oauth {

inline constexpr size_t kMetadataMaxBytes = 1 << 20;

struct MetadataFetchOptions {
  absl::Duration timeout = absl::Seconds(10);
  size_t max_bytes = kMetadataMaxBytes;
};

// The first event of `stream` (common/sse_parser.h rules), once it is
// complete (ended by a blank line); nullopt while none is.
std::optional<SseEvent> FirstSseEvent(absl::string_view stream);

// The proxy's answer (compact JSON) for what `url` answered. Errors as
// described above, naming the URL.
absl::StatusOr<std::string> MetadataAnswer(absl::string_view url, int status,
                                           absl::string_view content_type,
                                           absl::string_view body);

// Fetches `url` and returns MetadataAnswer for it. INVALID_REQUEST for a URL
// that may not be fetched, TOO_LARGE, CONNECTION_REFUSED,
// CONNECTION_TIMEOUT, TRANSPORT_ERROR as the transfer fails.
// The request goes through `http` when given (it then applies its own
// limits), else through a CurlFetcher with `options`' timeout and limit.
absl::StatusOr<std::string> FetchMetadata(absl::string_view url,
                                          const MetadataFetchOptions& options = {},
                                          HttpFetcher* http = nullptr);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_METADATA_PROXY_H_
