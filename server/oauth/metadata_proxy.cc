#include "server/oauth/metadata_proxy.h"

#include <curl/curl.h>

#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "nlohmann/json.hpp"
#include "server/oauth/urls.h"
#include "server/transport/curl_api.h"
#include "server/transport/http_client.h"

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

struct MetadataSink {
  size_t limit = 0;
  std::string content_type;
  std::string body;
  bool too_large = false;
  SseParser sse{kMetadataMaxBytes};
  bool first_event_read = false;  // an event stream's first event is in
};

size_t OnMetadataHeader(char* buffer, size_t size, size_t n, void* userdata) {
  auto* sink = static_cast<MetadataSink*>(userdata);
  absl::string_view line(buffer, size * n);
  auto colon = line.find(':');
  if (colon != absl::string_view::npos &&
      absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(line.substr(0, colon)),
                             "content-type")) {
    sink->content_type = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return size * n;
}

size_t OnMetadataBody(char* buffer, size_t size, size_t n, void* userdata) {
  auto* sink = static_cast<MetadataSink*>(userdata);
  if (sink->body.size() + size * n > sink->limit) {
    sink->too_large = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(buffer, size * n);
  // An event stream does not end: stop at its first event.
  if (IsEventStream(sink->content_type)) {
    std::vector<SseEvent> events;
    (void)sink->sse.Feed(std::string_view(buffer, size * n), &events);
    if (!events.empty()) {
      sink->first_event_read = true;
      return 0;
    }
  }
  return size * n;
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
                                          const MetadataFetchOptions& options) {
  if (url.empty()) {
    return Error(v1::INVALID_REQUEST, "the url parameter is missing");
  }
  absl::Status allowed = CheckFetchableUrl(url, "the metadata URL");
  if (!allowed.ok()) return allowed;
  auto api = transport::http_internal::LoadCurl();
  if (!api.ok()) return api.status();
  const auto* curl = *api;
  CURL* easy = curl->easy_init();
  if (easy == nullptr) {
    return Error(v1::INTERNAL_ERROR, "libcurl could not create a handle");
  }
  const std::string target(url);
  MetadataSink sink;
  sink.limit = options.max_bytes;
  curl_slist* headers = nullptr;
  headers = curl->slist_append(
      headers, "Accept: application/json, text/event-stream");
  curl->easy_setopt(easy, CURLOPT_URL, target.c_str());
  curl->easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl->easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl->easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl->easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                    static_cast<long>(absl::ToInt64Milliseconds(options.timeout)));
  curl->easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl->easy_setopt(easy, CURLOPT_HEADERFUNCTION, &OnMetadataHeader);
  curl->easy_setopt(easy, CURLOPT_HEADERDATA, &sink);
  curl->easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnMetadataBody);
  curl->easy_setopt(easy, CURLOPT_WRITEDATA, &sink);
  CURLcode code = curl->easy_perform(easy);
  long status = 0;
  curl->easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl->easy_cleanup(easy);
  curl->slist_free_all(headers);
  if (sink.too_large) {
    return Error(v1::TOO_LARGE, absl::StrCat(target, " answered more than ",
                                             options.max_bytes, " bytes"));
  }
  if (code != CURLE_OK && !sink.first_event_read) {
    return transport::http_internal::TransferError(
        code, curl->easy_strerror(code), target);
  }
  return MetadataAnswer(target, static_cast<int>(status), sink.content_type,
                        sink.body);
}

}  // namespace inspector::oauth
