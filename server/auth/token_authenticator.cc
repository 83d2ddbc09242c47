#include "server/auth/token_authenticator.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/strings.h"
#include "common/token.h"

namespace inspector::auth {
namespace {

// Where the token is, as the README's "Security defaults" say.
constexpr absl::string_view kTokenLookup =
    "inspectorctl reads the token by itself; other clients read it from the "
    "daemon's token file, the first of --token-file, $INSPECTOR_TOKEN_FILE, "
    "$XDG_STATE_HOME/inspector/token and ~/.local/state/inspector/token";

}  // namespace

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
                              kTokenLookup));
  }
  return Error(v1::SESSION_INVALID,
               absl::StrCat("invalid session token: it does not match the "
                            "daemon's (was it started with another token "
                            "file?); ",
                            kTokenLookup));
}

}  // namespace inspector::auth
