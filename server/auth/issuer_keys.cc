#include "server/auth/issuer_keys.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/discovery.h"
#include "server/oauth/urls.h"

namespace inspector::auth {

IssuerKeys::IssuerKeys(Options options) : options_(std::move(options)) {}

std::shared_ptr<const std::vector<JsonWebKey>> IssuerKeys::Keys(
    std::string_view issuer) const {
  absl::MutexLock lock(&mu_);
  auto it = issuers_.find(issuer);
  return it == issuers_.end() ? nullptr : it->second.keys;
}

absl::Status IssuerKeys::Refresh(const std::string& issuer, Why why) {
  const absl::Time now = options_.clock->Now();
  {
    absl::MutexLock lock(&mu_);
    Issuer& state = issuers_[issuer];
    if (state.fetching) return absl::OkStatus();
    const bool due =
        why == Why::kScheduled
            ? state.keys == nullptr ||
                  now - state.fetched_at >= options_.max_age
            : now - state.attempted_at >= options_.min_refetch_interval;
    if (!due) return absl::OkStatus();
    state.fetching = true;
    state.attempted_at = now;
  }
  absl::StatusOr<KeySet> set = Fetch(issuer);
  {
    absl::MutexLock lock(&mu_);
    Issuer& state = issuers_[issuer];
    state.fetching = false;
    if (set.ok()) {
      state.keys =
          std::make_shared<const std::vector<JsonWebKey>>(std::move(set->keys));
      state.fetched_at = options_.clock->Now();
    }
  }
  if (!set.ok()) {
    Log(absl::StrCat("the signing keys of ", issuer,
                     " could not be fetched (the keys held are kept): ",
                     set.status().message()));
    return set.status();
  }
  if (!set->skipped.empty()) {
    Log(absl::StrCat("keys of ", issuer,
                     " not used: ", absl::StrJoin(set->skipped, "; ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<KeySet> IssuerKeys::Fetch(const std::string& issuer) const {
  const oauth::MetadataFetch fetch = oauth::JsonObjectFetch(options_.fetcher);
  ASSIGN_OR_RETURN(oauth::FoundMetadata metadata,
                   oauth::FindAuthorizationServerMetadata(
                       issuer, /*protocol_version=*/"", fetch));
  auto uri = metadata.document.find("jwks_uri");
  if (uri == metadata.document.end() || !uri->is_string()) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat("the metadata at ", metadata.url,
                              " names no jwks_uri, so tokens of ", issuer,
                              " cannot be checked"));
  }
  ASSIGN_OR_RETURN(nlohmann::json jwks, fetch(uri->get<std::string>()));
  return ParseJwks(jwks.dump());
}

void IssuerKeys::Log(std::string line) const {
  if (options_.log) options_.log(std::move(line));
}

}  // namespace inspector::auth
