#include "server/auth/token_authenticator.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/strings.h"
#include "common/token.h"
#include "server/auth/ui_sessions.h"

namespace inspector::auth {
TokenAuthenticator::TokenAuthenticator(std::string token,
                                       UiSessions* ui_sessions)
    : token_(std::move(token)), ui_sessions_(ui_sessions) {}

bool TokenAuthenticator::Matches(std::string_view presented) const {
  return ConstantTimeEquals(presented, token_);
}

absl::Status TokenAuthenticator::Check(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const {
  return CheckWith(metadata, /*accept_ui_sessions=*/true);
}

absl::Status TokenAuthenticator::CheckToken(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const {
  return CheckWith(metadata, /*accept_ui_sessions=*/false);
}

absl::Status TokenAuthenticator::CheckWith(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    bool accept_ui_sessions) const {
  bool presented = false;
  bool ui_presented = false;
  // Why the last web UI credential presented was refused.
  std::optional<absl::Status> ui_refusal;
  for (const auto& [key, value] : metadata) {
    std::string_view k(key.data(), key.size());
    std::string_view v(value.data(), value.size());
    std::string_view credential;
    if (k == kUiSessionMetadataKey) {
      ui_presented = true;
      if (!accept_ui_sessions || ui_sessions_ == nullptr) continue;
      absl::Status checked = ui_sessions_->Check(v);
      if (checked.ok()) return checked;
      ui_refusal = std::move(checked);
      continue;
    }
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
  if (!presented && ui_presented) {
    if (ui_refusal.has_value()) return *ui_refusal;
    return Error(v1::SESSION_INVALID,
                 absl::StrCat("a web UI sign-in cannot do this: it needs the "
                              "session token; ",
                              kTokenLookupHint));
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
