// OAuthManager's part in the non-interactive grants (client_credentials.h):
// getting a new token by itself after a 401 or before the current one
// expires, as a refresh does for the browser flow's tokens.
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "server/logging.h"
#include "server/oauth/client_credentials.h"
#include "server/oauth/oauth_manager.h"

namespace inspector::oauth {
namespace {

// A failed grant is not run again by itself within this time (an `auth
// login` runs it at once).
constexpr absl::Duration kGrantRetryPause = absl::Seconds(30);

}  // namespace

GrantSettings OAuthManager::GrantFor(const std::string& server_id) {
  if (!options_.find_server) return {};
  auto config = options_.find_server(server_id);
  if (!config.ok()) return {};
  return GrantSettingsFrom(config->oauth());
}

absl::Status OAuthManager::Reacquire(const std::string& server_id,
                                     bool automatic) {
  if (automatic) {
    absl::MutexLock lock(&token_mu_);
    auto failed = grant_failed_at_.find(server_id);
    if (failed != grant_failed_at_.end() &&
        clock_->Now() - failed->second < kGrantRetryPause) {
      return Error(v1::AUTHENTICATION_FAILED,
                   "the grant failed moments ago; run `inspectorctl auth "
                   "login` to try again now");
    }
  }
  absl::Status outcome = absl::OkStatus();
  auto started = StartFlow(server_id, {});
  if (!started.ok()) {
    outcome = started.status();
  } else {
    auto flow = RunFlow(server_id, {});
    if (!flow.ok()) {
      outcome = flow.status();
    } else if (flow->state() != v1::COMPLETE) {
      outcome = Error(v1::AUTHENTICATION_FAILED,
                      absl::StrCat("the OAuth grant failed: ",
                                   flow->latest_error()));
    }
  }
  absl::MutexLock lock(&token_mu_);
  if (outcome.ok()) {
    grant_failed_at_.erase(server_id);
  } else {
    grant_failed_at_[server_id] = clock_->Now();
  }
  return outcome;
}

void OAuthManager::ReacquireAfter401(const std::string& server_id,
                                     const std::string& challenge) {
  {
    absl::MutexLock lock(&token_mu_);
    challenges_[server_id] = challenge;
    auto tokens = LoadTokensLocked(server_id);
    if (!tokens.ok()) return;
    // Once per token (none counts as one): a server that refuses the new
    // token too is not asked again in a loop.
    std::string current = tokens->has_value() ? (*tokens)->access_token : "";
    auto done = refreshed_after_401_.find(server_id);
    if (done != refreshed_after_401_.end() && done->second == current) return;
    refreshed_after_401_[server_id] = current;
  }
  absl::Status renewed = Reacquire(server_id, /*automatic=*/true);
  if (!renewed.ok()) {
    LogWarn(absl::StrCat("server ", server_id,
                         ": the server refused the request (401) and a new "
                         "token could not be obtained: ",
                         renewed.message()));
  }
}

bool OAuthManager::ExpiringWithoutRefresh(const std::string& server_id) {
  absl::MutexLock lock(&token_mu_);
  auto tokens = LoadTokensLocked(server_id);
  if (!tokens.ok() || !tokens->has_value()) return false;
  const TokenSet& current = **tokens;
  return current.refresh_token.empty() && current.expires_at &&
         *current.expires_at - options_.refresh_margin < clock_->Now();
}

}  // namespace inspector::oauth
