#include "server/auth/token_authenticator.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/strings.h"
#include "common/token.h"

namespace inspector::auth {
TokenAuthenticator::TokenAuthenticator(std::string token)
    : token_(std::move(token)) {}

bool TokenAuthenticator::Matches(std::string_view presented) const {
  return ConstantTimeEquals(presented, token_);
}

absl::Status TokenAuthenticator::Check(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const {
  bool presented = false;
  for (const auto& [key, value] : metadata) {
    std::string_view k(key.data(), key.size());
    std::string_view v(value.data(), value.size());
    std::string_view credential;
    if (k == "authorization") {
      constexpr std::string_view kBearer = "bearer ";
      if (v.size() < kBearer.size() ||
          !absl::EqualsIgnoreCase(AbslView(v.substr(0, kBearer.size())),
                                  AbslView(kBearer))) {
        presented = true;
        continue;
      }
      credential = v.substr(kBearer.size());
    } else if (k == "x-session-token") {
      credential = v;
    } else {
      continue;
    }
    presented = true;
    if (Matches(credential)) return absl::OkStatus();
  }
  if (!presented) {
    return Error(v1::SESSION_INVALID,
                 absl::StrCat("missing session token: send gRPC metadata "
                              "'authorization: Bearer <token>'; ",
                              kTokenLookupHint));
  }
  return Error(v1::SESSION_INVALID,
               absl::StrCat("invalid session token: it does not match the "
                            "daemon's (was it started with another token "
                            "file?); ",
                            kTokenLookupHint));
}

}  // namespace inspector::auth
