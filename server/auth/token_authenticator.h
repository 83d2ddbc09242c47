// Checks the credentials on incoming gRPC calls.
//
// A call is authenticated when its metadata carries
// `authorization: Bearer <token>` (or the seed's `x-session-token: <token>`)
// equal to the daemon's token, or, for Check only, a live web UI sign-in
// (ui_sessions.h) under kUiSessionMetadataKey, which is where the gateway
// puts the browser's cookie. A UI credential is accepted under that key
// only, never as a token. Token comparison takes constant time. A refusal
// says where the token is found (the lookup rule, and that inspectorctl
// reads it by itself) without naming the file: any caller may ask, and
// local paths are none of its business. Thread-safe: the token is
// immutable and UiSessions is thread-safe.
#ifndef INSPECTOR_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_
#define INSPECTOR_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_

#include <map>
#include <string>
#include <string_view>

#include <grpcpp/support/string_ref.h>

#include "absl/status/status.h"

namespace inspector::auth {

class UiSessions;

class TokenAuthenticator {
 public:
  // `token` is the secret. `ui_sessions`, if set, must outlive this; without
  // it no web UI sign-in is accepted.
  explicit TokenAuthenticator(std::string token,
                              UiSessions* ui_sessions = nullptr);

  // OK if `metadata` (a call's client metadata) carries the token or a
  // live web UI sign-in; otherwise an UNAUTHENTICATED status with reason
  // SESSION_INVALID and a message saying how to authenticate.
  absl::Status Check(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const;

  // Check that accepts the token only: for what a browser's sign-in must
  // not do (make sign-in links, list or revoke sign-ins).
  absl::Status CheckToken(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const;

  // The token check for a bare credential value (the text after "Bearer ").
  bool Matches(std::string_view presented) const;

 private:
  absl::Status CheckWith(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
      bool accept_ui_sessions) const;

  const std::string token_;
  UiSessions* const ui_sessions_;
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_
