// Checks the session token on incoming gRPC calls.
//
// A call is authenticated when its metadata carries
// `authorization: Bearer <token>` (or the seed's `x-session-token: <token>`)
// equal to the daemon's token. Comparison takes constant time. A refusal
// says where the token is found (the lookup rule, and that inspectorctl
// reads it by itself) without naming the file: any caller may ask, and
// local paths are none of its business. Immutable after construction, so
// thread-safe.
#ifndef INSPECTOR_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_
#define INSPECTOR_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_

#include <map>
#include <string>
#include <string_view>

#include <grpcpp/support/string_ref.h>

#include "absl/status/status.h"

namespace inspector::auth {

class TokenAuthenticator {
 public:
  // `token` is the secret.
  explicit TokenAuthenticator(std::string token);

  // OK if `metadata` (a call's client metadata) carries the token;
  // otherwise an UNAUTHENTICATED status with reason SESSION_INVALID and a
  // message saying how to authenticate.
  absl::Status Check(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const;

  // The same check for a bare credential value (the text after "Bearer ").
  bool Matches(std::string_view presented) const;

 private:
  const std::string token_;
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_
