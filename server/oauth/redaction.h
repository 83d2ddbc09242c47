// Masking of secrets for what the OAuth client shows: the flow log, its
// HTTP exchanges on Watch and in the guided debugger, and stored flows.
// Tokens, codes, verifiers, client secrets, assertions, passwords, cookies
// and authorization headers become "***(N chars)"; everything else is kept
// as it was.
//
// Pure functions without shared state; thread-safe.
#ifndef INSPECTOR_SERVER_OAUTH_REDACTION_H_
#define INSPECTOR_SERVER_OAUTH_REDACTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "inspector/v1/oauth.pb.h"
#include "nlohmann/json.hpp"
#include "server/oauth/oauth_http.h"

namespace inspector::oauth {

// "***(N chars)" for a secret value; "" for "".
std::string Mask(absl::string_view value);

// `url` with the values of secret query parameters masked.
std::string MaskUrl(absl::string_view url);

// `j` with the string values of secret fields masked, at any depth.
nlohmann::json MaskJson(nlohmann::json j);

// Masks secrets in a form or JSON body for the flow log.
std::string MaskBody(absl::string_view body);

// The record of one HTTP request and its answer (or failure), with
// authorization headers, cookies, secrets, codes and tokens masked.
v1::OAuthHttpExchange MaskedExchange(const HttpRequest& request,
                                     const absl::StatusOr<HttpResponse>& response,
                                     absl::Time start, absl::Duration duration);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_REDACTION_H_
