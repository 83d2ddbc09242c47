// What history keeps of the HTTP exchange that carried a message: the
// request line's method and path, the response status, and both header
// lists with their secrets already masked (MaskHeaderValue,
// common/secrets.h). Built once per HTTP exchange by whoever holds the
// headers (an upstream HTTP transport, a front door) and shared, without
// copies, by every message that exchange carried (an SSE answer carries
// several); storage/history_writer.h writes it to `message_http`.
//
// A plain value: immutable once shared (hold it as
// std::shared_ptr<const HttpExchangeRecord>), so any thread may read it.
#ifndef INSPECTOR_COMMON_HTTP_EXCHANGE_RECORD_H_
#define INSPECTOR_COMMON_HTTP_EXCHANGE_RECORD_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/secrets.h"

namespace inspector {

struct HttpExchangeRecord {
  using Headers = std::vector<std::pair<std::string, std::string>>;

  std::string method;  // "POST", "GET"
  std::string path;    // the URL's path (and query), without scheme or host
  int status = 0;      // the response's status; 0: not answered yet
  Headers request_headers;   // as sent or received, secrets masked
  Headers response_headers;  // likewise; empty when not answered yet
};

// `name: value` pairs with their secrets masked, names as given.
template <typename Pairs>
HttpExchangeRecord::Headers MaskedHeaders(const Pairs& headers) {
  HttpExchangeRecord::Headers out;
  out.reserve(headers.size());
  for (const auto& [name, value] : headers) {
    out.emplace_back(name, MaskHeaderValue(name, value));
  }
  return out;
}

// The path (with its query) of an absolute URL: "/mcp" of
// "http://127.0.0.1:8080/mcp"; "/" when it has none; `url` itself when it
// is not absolute. Secret query parameters are masked
// (MaskSecretsInUrl).
inline std::string UrlPathOf(std::string_view url) {
  const size_t scheme = url.find("://");
  std::string_view path = url;
  if (scheme != std::string_view::npos) {
    const size_t slash = url.find_first_of("/?#", scheme + 3);
    path = slash == std::string_view::npos ? std::string_view("/")
                                           : url.substr(slash);
  }
  const size_t fragment = path.find('#');
  if (fragment != std::string_view::npos) path = path.substr(0, fragment);
  if (!path.empty() && path.front() == '?') return "/" + MaskSecretsInUrl(path);
  return MaskSecretsInUrl(path);
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_HTTP_EXCHANGE_RECORD_H_
