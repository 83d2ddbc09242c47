#include "server/oauth/oauth_http.h"

#include <curl/curl.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "server/transport/curl_api.h"
#include "server/transport/http_client.h"

namespace inspector::oauth {
namespace {

struct Sink {
  HttpResponse* response;
  size_t limit;
  const std::function<bool(const HttpResponse&)>* enough;
  bool too_large = false;
  bool enough_read = false;  // ended by `enough`
};

size_t OnHeader(char* buffer, size_t size, size_t n, void* userdata) {
  auto* sink = static_cast<Sink*>(userdata);
  absl::string_view line(buffer, size * n);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new response (after a 1xx): forget the previous one's headers.
    sink->response->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != absl::string_view::npos) {
    sink->response->headers.emplace_back(
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, colon))),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return size * n;
}

size_t OnBody(char* buffer, size_t size, size_t n, void* userdata) {
  auto* sink = static_cast<Sink*>(userdata);
  if (sink->response->body.size() + size * n > sink->limit) {
    sink->too_large = true;
    return 0;  // aborts the transfer
  }
  sink->response->body.append(buffer, size * n);
  if (*sink->enough && (*sink->enough)(*sink->response)) {
    sink->enough_read = true;
    return 0;  // ends the transfer with what arrived
  }
  return size * n;
}

}  // namespace

std::string HttpResponse::Header(absl::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

absl::StatusOr<HttpResponse> CurlFetcher::Fetch(const HttpRequest& request) {
  auto api = transport::http_internal::LoadCurl();
  if (!api.ok()) return api.status();
  const auto* curl = *api;
  CURL* easy = curl->easy_init();
  if (easy == nullptr) {
    return Error(v1::INTERNAL_ERROR, "libcurl could not create a handle");
  }
  HttpResponse response;
  Sink sink{&response, options_.max_body_bytes, &request.enough};
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl->slist_append(headers, absl::StrCat(name, ": ", value).c_str());
  }
  curl->easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl->easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl->easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl->easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl->easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                    static_cast<long>(absl::ToInt64Milliseconds(options_.timeout)));
  curl->easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl->easy_setopt(easy, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl->easy_setopt(easy, CURLOPT_HEADERDATA, &sink);
  curl->easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnBody);
  curl->easy_setopt(easy, CURLOPT_WRITEDATA, &sink);
  if (request.method == "POST") {
    curl->easy_setopt(easy, CURLOPT_POST, 1L);
    curl->easy_setopt(easy, CURLOPT_POSTFIELDSIZE,
                      static_cast<long>(request.body.size()));
    curl->easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
  } else if (request.method != "GET") {
    curl->easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  CURLcode code = curl->easy_perform(easy);
  long status = 0;
  curl->easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl->easy_cleanup(easy);
  curl->slist_free_all(headers);
  if (sink.too_large) {
    return Error(v1::TOO_LARGE,
                 absl::StrCat(request.url, " answered more than ",
                              options_.max_body_bytes, " bytes"));
  }
  if (code != CURLE_OK && !sink.enough_read) {
    return transport::http_internal::TransferError(
        code, curl->easy_strerror(code), request.url);
  }
  response.status = static_cast<int>(status);
  return response;
}

HttpRequest FormPost(std::string url, bool json_answer) {
  HttpRequest request;
  request.method = "POST";
  request.url = std::move(url);
  request.headers.emplace_back("Content-Type",
                               "application/x-www-form-urlencoded");
  if (json_answer) request.headers.emplace_back("Accept", "application/json");
  return request;
}

}  // namespace inspector::oauth
