#include "gateway/caller_credentials.h"

#include "absl/strings/match.h"
#include "common/token.h"

namespace inspector::gateway {

std::string CookieValue(const http::Request& request, std::string_view name) {
  for (const auto& [header, value] : request.headers) {
    if (header != "cookie") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      size_t semicolon = rest.find(';');
      std::string_view pair = rest.substr(0, semicolon);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
          pair[name.size()] == '=') {
        return std::string(pair.substr(name.size() + 1));
      }
      if (semicolon == std::string_view::npos) break;
      rest.remove_prefix(semicolon + 1);
    }
  }
  return "";
}

std::string QueryValue(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
        pair[name.size()] == '=') {
      return std::string(pair.substr(name.size() + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

void AddCallerMetadata(const http::Request& request,
                       std::string_view cookie_name,
                       grpc::ClientContext& context, bool allow_query_token) {
  const std::string* auth = request.Header("authorization");
  if (auth != nullptr) context.AddMetadata("authorization", *auth);
  if (const std::string* token = request.Header("x-session-token")) {
    context.AddMetadata("x-session-token", *token);
    return;
  }
  if (allow_query_token) {
    // A browser's EventSource cannot set headers, so a stream may carry
    // the token in the query instead.
    std::string token = QueryValue(request.query(), "token");
    if (!token.empty()) {
      context.AddMetadata("x-session-token", token);
      return;
    }
  }
  if (auth == nullptr) {
    // The web UI's sign-in cookie (CookieRequestAllowed has judged it),
    // under the one key where the daemon accepts a browser's sign-in.
    std::string credential = CookieValue(request, cookie_name);
    if (!credential.empty()) {
      context.AddMetadata(kUiSessionMetadataKey, credential);
    }
  }
}

std::multimap<grpc::string_ref, grpc::string_ref> CallerMetadataOf(
    const http::Request& request, std::string_view cookie_name,
    std::string* cookie) {
  std::multimap<grpc::string_ref, grpc::string_ref> metadata;
  if (const std::string* auth = request.Header("authorization")) {
    metadata.emplace("authorization", *auth);
  }
  if (const std::string* token = request.Header("x-session-token")) {
    metadata.emplace("x-session-token", *token);
  } else if (request.Header("authorization") == nullptr) {
    *cookie = CookieValue(request, cookie_name);
    if (!cookie->empty()) metadata.emplace(kUiSessionMetadataKey, *cookie);
  }
  return metadata;
}

bool CookieRequestAllowed(const http::Request& request,
                          std::string_view cookie_name) {
  if (request.Header("authorization") != nullptr ||
      request.Header("x-session-token") != nullptr) {
    return true;
  }
  if (CookieValue(request, cookie_name).empty()) return true;
  const std::string* site = request.Header("sec-fetch-site");
  if (site != nullptr && *site != "same-origin") return false;
  if (request.method == "GET" || request.method == "HEAD") return true;
  return request.Header("origin") != nullptr &&
         request.Header("x-inspector-csrf") != nullptr;
}

HttpError CsrfError() {
  return RenderError(
      403, "CSRF_REFUSED",
      "a request signed in by the web UI's cookie must come from the UI's "
      "own page (same origin, with an Origin and an X-Inspector-Csrf "
      "header for changes); scripts send the token in X-Session-Token");
}

HttpError RenderCallError(const grpc::Status& status,
                          const http::Request& request, bool stream,
                          std::string_view cookie_name) {
  if (status.error_code() != grpc::StatusCode::UNAUTHENTICATED ||
      ErrorReason(FromGrpcStatus(status)) != "SESSION_INVALID") {
    return RenderGrpcError(status);
  }
  if (request.Header("authorization") == nullptr &&
      request.Header("x-session-token") == nullptr &&
      !(stream && !QueryValue(request.query(), "token").empty()) &&
      !CookieValue(request, cookie_name).empty()) {
    return RenderGrpcError(status);
  }
  PresentedToken presented = PresentedToken::kNone;
  if (const std::string* auth = request.Header("authorization")) {
    presented = absl::StartsWithIgnoreCase(*auth, "bearer ")
                    ? PresentedToken::kWrong
                    : PresentedToken::kNotBearer;
  }
  if (request.Header("x-session-token") != nullptr ||
      (stream && !QueryValue(request.query(), "token").empty())) {
    presented = PresentedToken::kWrong;
  }
  return RenderError(401, "SESSION_INVALID",
                     RestSessionInvalidMessage(presented, stream));
}

}  // namespace inspector::gateway
