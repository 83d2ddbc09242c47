#include "server/auth/ui_sessions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/token.h"
#include "server/logging.h"
#include "server/oauth/crypto.h"

namespace inspector::auth {
namespace {

constexpr size_t kMaxUserAgentBytes = 200;
constexpr char kSignInAgain[] =
    "run `inspectorctl ui` in a terminal for a fresh sign-in link";

// Printable ASCII only (anything else becomes '?'), at most
// kMaxUserAgentBytes: the text is shown in terminals and sent in proto
// strings, which must be UTF-8.
std::string ShownUserAgent(std::string_view user_agent) {
  std::string out;
  for (char c : user_agent.substr(0, kMaxUserAgentBytes)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out;
}

storage::UiSessionRow UiSessionToRow(const UiSessions::Session& session,
                            std::string hash) {
  storage::UiSessionRow row;
  row.id = session.id;
  row.secret_sha256 = std::move(hash);
  row.user_agent = session.user_agent;
  row.created_at = session.created_at;
  row.last_used_at = session.last_used_at;
  row.expires_at = session.expires_at;
  return row;
}

}  // namespace

UiSessions::UiSessions(std::unique_ptr<storage::Database> db,
                       UiSessionOptions options)
    : options_(std::move(options)), db_(std::move(db)), store_(db_.get()) {}

absl::StatusOr<std::unique_ptr<UiSessions>> UiSessions::Open(
    std::unique_ptr<storage::Database> db, UiSessionOptions options) {
  if (db == nullptr) {
    return absl::InvalidArgumentError("web UI sign-ins need a database");
  }
  if (options.clock == nullptr) {
    return absl::InvalidArgumentError("web UI sign-ins need a clock");
  }
  std::unique_ptr<UiSessions> sessions(
      new UiSessions(std::move(db), std::move(options)));
  absl::MutexLock lock(&sessions->mu_);
  ASSIGN_OR_RETURN(std::vector<storage::UiSessionRow> rows,
                   sessions->store_.List());
  for (storage::UiSessionRow& row : rows) {
    Entry entry;
    entry.session.id = std::move(row.id);
    entry.session.user_agent = std::move(row.user_agent);
    entry.session.created_at = row.created_at;
    entry.session.last_used_at = row.last_used_at;
    entry.session.expires_at = row.expires_at;
    entry.stored_last_used = row.last_used_at;
    sessions->live_.emplace(std::move(row.secret_sha256), std::move(entry));
  }
  sessions->RemoveEnded(sessions->Now());
  return sessions;
}

std::string UiSessions::Hash(std::string_view credential) {
  return absl::BytesToHexString(oauth::Sha256(AbslView(credential)));
}

std::string_view UiSessions::EndReason(const Entry& entry,
                                       absl::Time now) const {
  if (now >= entry.session.expires_at) return "expired";
  if (now >= entry.session.last_used_at + options_.idle_timeout) return "idle";
  return "";
}

absl::Status UiSessions::Remove(const std::string& hash) {
  auto it = live_.find(hash);
  if (it == live_.end()) return absl::OkStatus();
  std::string id = it->second.session.id;
  // Out of memory first: the sign-in no longer works, even if the
  // database fails below (it would then come back after a restart).
  live_.erase(it);
  absl::StatusOr<bool> deleted = store_.Delete(id);
  if (!deleted.ok()) {
    return absl::Status(
        deleted.status().code(),
        absl::StrCat("web UI sign-in ", id, " ended but stays stored: ",
                     deleted.status().message()));
  }
  return absl::OkStatus();
}

void UiSessions::RemoveEnded(absl::Time now) {
  std::vector<std::string> ended;
  for (const auto& [hash, entry] : live_) {
    if (!EndReason(entry, now).empty()) ended.push_back(hash);
  }
  for (const std::string& hash : ended) {
    if (absl::Status removed = Remove(hash); !removed.ok()) {
      LogWarn(StdView(removed.message()));
    }
  }
}

absl::StatusOr<UiSessions::Issued> UiSessions::Create(
    std::string_view user_agent) {
  ASSIGN_OR_RETURN(std::string credential, GenerateToken());
  ASSIGN_OR_RETURN(std::string id_bits, GenerateToken());
  absl::Time now = Now();
  Entry entry;
  // 64 random bits: the id names a sign-in, it grants nothing.
  entry.session.id = absl::StrCat("ui-", id_bits.substr(0, 16));
  entry.session.user_agent = ShownUserAgent(user_agent);
  entry.session.created_at = now;
  entry.session.last_used_at = now;
  entry.session.expires_at = now + options_.lifetime;
  entry.stored_last_used = now;
  std::string hash = Hash(credential);
  absl::MutexLock lock(&mu_);
  RemoveEnded(now);
  while (live_.size() >= kMaxLive) {
    auto oldest = std::min_element(
        live_.begin(), live_.end(), [](const auto& a, const auto& b) {
          return a.second.session.last_used_at < b.second.session.last_used_at;
        });
    RETURN_IF_ERROR(Remove(std::string(oldest->first)));
  }
  RETURN_IF_ERROR(store_.Insert(UiSessionToRow(entry.session, hash)));
  Issued issued{std::move(credential), entry.session};
  issued.session.idle_expires_at =
      std::min(now + options_.idle_timeout, entry.session.expires_at);
  live_.emplace(std::move(hash), std::move(entry));
  return issued;
}

absl::Status UiSessions::Check(std::string_view credential) {
  std::string hash = Hash(credential);
  absl::Time now = Now();
  absl::MutexLock lock(&mu_);
  auto it = live_.find(hash);
  if (credential.empty() || it == live_.end()) {
    return Error(v1::SESSION_INVALID,
                 absl::StrCat("this browser's web UI sign-in is unknown: it "
                              "was signed out or revoked, or belongs to "
                              "another inspectord; ",
                              kSignInAgain));
  }
  Entry& entry = it->second;
  std::string_view reason = EndReason(entry, now);
  if (!reason.empty()) {
    std::string message =
        reason == "expired"
            ? absl::StrCat("this browser's web UI sign-in has expired (a "
                           "sign-in lasts ",
                           absl::FormatDuration(options_.lifetime), "); ",
                           kSignInAgain)
            : absl::StrCat("this browser's web UI sign-in ended after ",
                           absl::FormatDuration(options_.idle_timeout),
                           " unused; ", kSignInAgain);
    if (absl::Status removed = Remove(hash); !removed.ok()) {
      LogWarn(StdView(removed.message()));
    }
    return Error(v1::SESSION_INVALID, message);
  }
  entry.session.last_used_at = std::max(entry.session.last_used_at, now);
  if (now - entry.stored_last_used >= kLastUsedResolution) {
    absl::Status stored = store_.SetLastUsed(entry.session.id, now);
    if (stored.ok()) {
      entry.stored_last_used = now;
    } else {
      LogWarn(absl::StrCat("web UI sign-in ", entry.session.id,
                           ": cannot store its last use: ",
                           stored.message()));
    }
  }
  return absl::OkStatus();
}

std::vector<UiSessions::Session> UiSessions::List() {
  absl::Time now = Now();
  absl::MutexLock lock(&mu_);
  RemoveEnded(now);
  std::vector<Session> out;
  out.reserve(live_.size());
  for (const auto& [hash, entry] : live_) {
    Session session = entry.session;
    session.idle_expires_at = std::min(
        session.last_used_at + options_.idle_timeout, session.expires_at);
    out.push_back(std::move(session));
  }
  std::sort(out.begin(), out.end(), [](const Session& a, const Session& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at
                                        : a.id < b.id;
  });
  return out;
}

absl::StatusOr<bool> UiSessions::Revoke(std::string_view id) {
  absl::MutexLock lock(&mu_);
  for (const auto& [hash, entry] : live_) {
    if (entry.session.id == id) {
      RETURN_IF_ERROR(Remove(std::string(hash)));
      return true;
    }
  }
  return false;
}

absl::StatusOr<int> UiSessions::RevokeAll() {
  absl::MutexLock lock(&mu_);
  int count = static_cast<int>(live_.size());
  live_.clear();
  RETURN_IF_ERROR(store_.DeleteAll().status());
  return count;
}

absl::StatusOr<bool> UiSessions::SignOut(std::string_view credential) {
  if (credential.empty()) return false;
  std::string hash = Hash(credential);
  absl::MutexLock lock(&mu_);
  if (!live_.contains(hash)) return false;
  RETURN_IF_ERROR(Remove(hash));
  return true;
}

}  // namespace inspector::auth
