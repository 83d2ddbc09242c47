// How a REST caller's credentials reach inspectord, and how their refusal
// is explained. A caller presents the session token (Authorization,
// X-Session-Token, or ?token= on a stream, since a browser's EventSource
// cannot set headers) or the web UI's sign-in cookie; the cookie alone is
// accepted only from the UI's own pages (CookieRequestAllowed, the CSRF
// rule). The token and the sign-ins themselves are checked by the daemon.
//
// Pure functions of the request; any thread.
#ifndef INSPECTOR_GATEWAY_CALLER_CREDENTIALS_H_
#define INSPECTOR_GATEWAY_CALLER_CREDENTIALS_H_

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <grpcpp/support/string_ref.h>

#include <map>
#include <string>
#include <string_view>

#include "common/http/http1.h"
#include "gateway/http_errors.h"

namespace inspector::gateway {

// The value of cookie `name` in the request's Cookie headers; "" if none.
std::string CookieValue(const http::Request& request, std::string_view name);

// The first non-empty value of query parameter `name` (not
// percent-decoded: the values looked up are hex); "" if none.
std::string QueryValue(std::string_view query, std::string_view name);

// Adds the caller's credentials to `context`: Authorization, then
// X-Session-Token, else (if `allow_query_token`) ?token=, else the
// sign-in cookie `cookie_name` under kUiSessionMetadataKey.
void AddCallerMetadata(const http::Request& request,
                       std::string_view cookie_name,
                       grpc::ClientContext& context, bool allow_query_token);

// The caller's credentials as the gateway hands them to the daemon's
// services, for a handler of the gateway's listener that checks them
// itself (auth::TokenAuthenticator::Check): Authorization, X-Session-Token,
// else the sign-in cookie `cookie_name` under kUiSessionMetadataKey. The
// map views `request` and `*cookie` (where the cookie's value is kept),
// which must outlive it.
std::multimap<grpc::string_ref, grpc::string_ref> CallerMetadataOf(
    const http::Request& request, std::string_view cookie_name,
    std::string* cookie);

// Whether a request that would be authenticated by the sign-in cookie
// alone may be: it must come from this gateway's own pages
// (Sec-Fetch-Site same-origin when the browser sends it), and a request
// that changes something (any method but GET and HEAD) must also carry
// an Origin (which has passed the allowlist) and the header
// X-Inspector-Csrf, which no form and no cross-origin page without a
// preflight can send. SameSite=Strict keeps other sites' requests from
// carrying the cookie at all; other local ports are the same site, so
// these checks are what stops them. Requests with a token header are
// not concerned.
bool CookieRequestAllowed(const http::Request& request,
                          std::string_view cookie_name);

// The 403 for a request CookieRequestAllowed refuses.
HttpError CsrfError();

// RenderGrpcError, except that a refused session token is explained in
// terms of the HTTP request (headers, query) rather than gRPC metadata.
// A refused web UI sign-in (`cookie_name`'s cookie alone) keeps the
// daemon's message, which says why it ended and what to do.
HttpError RenderCallError(const grpc::Status& status,
                          const http::Request& request, bool stream,
                          std::string_view cookie_name);

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_CALLER_CREDENTIALS_H_
