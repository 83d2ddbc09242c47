#include "server/oauth/metadata_proxy.h"

#include <memory>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;

bool IsEventStream(absl::string_view content_type) {
  return absl::StartsWithIgnoreCase(
      absl::StripLeadingAsciiWhitespace(content_type), "text/event-stream");
}

// The first `max` characters of `body`, for error messages.
std::string Snippet(absl::string_view body) {
  constexpr size_t kMax = 200;
  if (body.size() <= kMax) return std::string(body);
  return absl::StrCat(body.substr(0, kMax), "...");
}

// `reference` (absolute, or a path) resolved against `base`.
std::string Resolve(absl::string_view base, absl::string_view reference) {
  if (absl::StrContains(reference, "://")) return std::string(reference);
  auto url = ParseUrl(base, "the URL");
  if (!url.ok()) return std::string(reference);
  if (absl::StartsWith(reference, "/")) {
    return absl::StrCat(url->Origin(), reference);
  }
  size_t slash = url->path.rfind('/');
  return absl::StrCat(url->Origin(),
                      slash == std::string::npos ? "/" : url->path.substr(0, slash + 1),
                      reference);
}

}  // namespace

std::optional<SseEvent> FirstSseEvent(absl::string_view stream) {
  SseParser parser(kMetadataMaxBytes);
  std::vector<SseEvent> events;
  (void)parser.Feed(std::string_view(stream.data(), stream.size()), &events);
  if (events.empty()) return std::nullopt;
  return events.front();
}

absl::StatusOr<std::string> MetadataAnswer(absl::string_view url, int status,
                                           absl::string_view content_type,
                                           absl::string_view body) {
  if (status == 404) {
    return Error(v1::NOT_FOUND, absl::StrCat(url, " answered HTTP 404"),
                 {{"httpStatus", "404"}});
  }
  if (status < 200 || status >= 300) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat(url, " answered HTTP ", status,
                              body.empty() ? "" : ": ", Snippet(body)),
                 {{"httpStatus", absl::StrCat(status)}});
  }
  absl::string_view payload = body;
  if (IsEventStream(content_type)) {
    std::optional<SseEvent> event = FirstSseEvent(body);
    if (!event) {
      return Error(v1::INVALID_RESPONSE,
                   absl::StrCat(url, " sent an event stream without an event"));
    }
    if (event->event == "endpoint") {
      // Legacy HTTP+SSE (2024-11-05): where the client is to POST.
      Json answer = {{"transport", "sse"},
                     {"endpoint", Resolve(url, absl::StripAsciiWhitespace(event->data))}};
      return answer.dump();
    }
    return MetadataAnswer(url, status, "application/json", event->data);
  }
  Json parsed = Json::parse(payload, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat(url, " did not answer with a JSON object",
                              content_type.empty() ? "" : absl::StrCat(" (", content_type, ")"),
                              ": ", Snippet(payload)));
  }
  return parsed.dump();
}

absl::StatusOr<std::string> FetchMetadata(absl::string_view url,
                                          const MetadataFetchOptions& options,
                                          HttpFetcher* http) {
  if (url.empty()) {
    return Error(v1::INVALID_REQUEST, "the url parameter is missing");
  }
  absl::Status allowed = CheckFetchableUrl(url, "the metadata URL");
  if (!allowed.ok()) return allowed;
  CurlFetcherOptions fetcher_options;
  fetcher_options.timeout = options.timeout;
  fetcher_options.max_body_bytes = options.max_bytes;
  CurlFetcher own(fetcher_options);
  if (http == nullptr) http = &own;
  HttpRequest request;
  request.url = std::string(url);
  request.headers.emplace_back("Accept", "application/json, text/event-stream");
  // An event stream does not end: it is read up to its first event.
  request.enough = [parser = std::make_shared<SseParser>(kMetadataMaxBytes),
                    fed = size_t{0}](const HttpResponse& so_far) mutable {
    if (!IsEventStream(so_far.Header("content-type"))) return false;
    std::vector<SseEvent> events;
    (void)parser->Feed(std::string_view(so_far.body).substr(fed), &events);
    fed = so_far.body.size();
    return !events.empty();
  };
  ASSIGN_OR_RETURN(HttpResponse response, http->Fetch(request));
  return MetadataAnswer(request.url, response.status,
                        response.Header("content-type"), response.body);
}

}  // namespace inspector::oauth
