// What the flow log and Watch show of an HTTP exchange: secrets (tokens,
// codes, client secrets, assertions, cookies, authorization headers)
// replaced by their length (redaction.h).

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/secrets.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/oauth/redaction.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;

double UnixSeconds(absl::Time t) {
  return absl::ToDoubleSeconds(t - absl::UnixEpoch());
}

bool IsSecretField(absl::string_view name) {
  static const char* const kNames[] = {
      "access_token", "refresh_token", "client_secret", "code",
      "code_verifier", "id_token", "assertion", "password",
      "client_assertion", "subject_token", "actor_token", "private_key",
      // RFC 7592: the bearer token that reads, changes or deletes the
      // registration.
      "registration_access_token"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

std::string MaskHeader(absl::string_view name, absl::string_view value) {
  std::string lower = absl::AsciiStrToLower(name);
  // The authorization endpoint's redirect carries the code in its query.
  if (lower == "location" || lower == "content-location") {
    return MaskUrl(value);
  }
  // The rule every recorded HTTP exchange follows (common/secrets.h).
  return MaskHeaderValue(StdView(name), StdView(value));
}

}  // namespace

std::string Mask(absl::string_view value) {
  return MaskedLength(StdView(value));
}

std::string MaskUrl(absl::string_view url) {
  auto q = url.find('?');
  if (q == absl::string_view::npos) return std::string(url);
  std::string out(url.substr(0, q + 1));
  bool first = true;
  for (absl::string_view part : absl::StrSplit(url.substr(q + 1), '&')) {
    if (!first) out += '&';
    first = false;
    auto eq = part.find('=');
    std::string name = PercentDecode(part.substr(0, eq));
    if (eq != absl::string_view::npos && IsSecretField(name)) {
      absl::StrAppend(&out, part.substr(0, eq), "=", Mask(part.substr(eq + 1)));
    } else {
      out.append(part.data(), part.size());
    }
  }
  return out;
}

Json MaskJson(Json j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (IsSecretField(key) && value.is_string()) {
        value = Mask(value.get<std::string>());
      } else {
        value = MaskJson(value);
      }
    }
  } else if (j.is_array()) {
    for (auto& value : j) value = MaskJson(value);
  }
  return j;
}

std::string MaskBody(absl::string_view body) {
  if (body.empty()) return "";
  Json parsed = Json::parse(body, nullptr, false);
  if (!parsed.is_discarded() && (parsed.is_object() || parsed.is_array())) {
    return MaskJson(std::move(parsed)).dump();
  }
  if (absl::StrContains(body, '=') && !absl::StrContains(body, ' ') &&
      !absl::StrContains(body, '\n')) {
    return MaskUrl(absl::StrCat("?", body)).substr(1);
  }
  return std::string(body.substr(0, 4096));
}

v1::OAuthHttpExchange MaskedExchange(const HttpRequest& request,
                                     const absl::StatusOr<HttpResponse>& response,
                                     absl::Time start, absl::Duration duration) {
  v1::OAuthHttpExchange ex;
  ex.set_timestamp(UnixSeconds(start));
  ex.set_method(request.method);
  ex.set_url(MaskUrl(request.url));
  for (const auto& [name, value] : request.headers) {
    (*ex.mutable_request_headers())[name] = MaskHeader(name, value);
  }
  ex.set_request_body(MaskBody(request.body));
  ex.set_duration_ms(absl::ToDoubleMilliseconds(duration));
  if (!response.ok()) {
    ex.set_error(std::string(response.status().message()));
  } else {
    ex.set_status(response->status);
    for (const auto& [name, value] : response->headers) {
      (*ex.mutable_response_headers())[name] = MaskHeader(name, value);
    }
    ex.set_response_body(MaskBody(response->body));
  }
  return ex;
}

}  // namespace inspector::oauth
