// The web UI's browser sign-ins: one credential per browser, instead of
// the daemon's session token in every browser's cookie.
//
// SystemService.RedeemSignInCode trades a one-time code (sign_in_codes.h)
// for a new sign-in here; the gateway keeps its credential in the
// browser's HttpOnly cookie and sends it on the UI's calls under the
// metadata key kUiSessionMetadataKey (common/token.h), where
// TokenAuthenticator asks Check(). A credential is 256 random bits, hex.
// Only its SHA-256 is kept, in memory and in the ui_sessions table of the
// daemon's database (so a browser stays signed in across a daemon
// restart). A sign-in ends when its lifetime is over, when it was not used
// for the idle timeout, when it is revoked (`inspectorctl ui sessions
// --revoke`), or when the browser signs out. At most kMaxLive are kept: a
// new one ends the least recently used. Time comes from the injected
// clock.
//
// Owns its database connection. Thread-safe: one mutex guards the
// sign-ins and the connection.
#ifndef INSPECTOR_SERVER_AUTH_UI_SESSIONS_H_
#define INSPECTOR_SERVER_AUTH_UI_SESSIONS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "storage/database.h"
#include "storage/ui_session_store.h"

namespace inspector::auth {

struct UiSessionOptions {
  // How long a sign-in lasts at most, used or not.
  absl::Duration lifetime = absl::Hours(7 * 24);
  // A sign-in not used for this long ends.
  absl::Duration idle_timeout = absl::Hours(12);
  // Tells the time; must outlive the UiSessions. Required.
  Clock* clock = nullptr;
};

class UiSessions {
 public:
  static constexpr size_t kMaxLive = 64;
  // The stored last-use time is written at most this often per sign-in
  // (the one in memory is exact): a browser's every call does not write.
  static constexpr absl::Duration kLastUsedResolution = absl::Minutes(1);

  // What may be shown of a sign-in: no secret.
  struct Session {
    std::string id;
    std::string user_agent;
    absl::Time created_at;
    absl::Time last_used_at;
    // When the lifetime ends.
    absl::Time expires_at;
    // When it ends unless used before: the earlier of last_used_at plus the
    // idle timeout and expires_at.
    absl::Time idle_expires_at;
  };

  struct Issued {
    // The browser's credential; not kept here, not retrievable again.
    std::string credential;
    Session session;
  };

  // Loads the sign-ins stored in `db` (a connection to the daemon's
  // database, owned from now on) and deletes those that have ended.
  static absl::StatusOr<std::unique_ptr<UiSessions>> Open(
      std::unique_ptr<storage::Database> db, UiSessionOptions options);

  // A new sign-in for a browser that says it is `user_agent` (kept, cut
  // to 200 bytes, for the listing only). Fails if the random source or
  // the database does.
  absl::StatusOr<Issued> Create(std::string_view user_agent);

  // OK if `credential` is a live sign-in's, which counts as a use of it;
  // otherwise UNAUTHENTICATED with reason SESSION_INVALID and a message
  // that says why (unknown or revoked, expired, idle) and what to do. An
  // ended sign-in is forgotten.
  absl::Status Check(std::string_view credential);

  // The live sign-ins, oldest first.
  std::vector<Session> List();

  // Ends the sign-in with `id`; false if there is none.
  absl::StatusOr<bool> Revoke(std::string_view id);
  // Ends every sign-in; returns how many there were.
  absl::StatusOr<int> RevokeAll();
  // Ends the sign-in whose credential is `credential` (a browser signing
  // out); false if there is none.
  absl::StatusOr<bool> SignOut(std::string_view credential);

 private:
  struct Entry {
    Session session;
    // The last-use time the database has.
    absl::Time stored_last_used;
  };

  UiSessions(std::unique_ptr<storage::Database> db, UiSessionOptions options);

  absl::Time Now() const { return options_.clock->Now(); }
  // The hex SHA-256 under which `credential`'s sign-in is kept.
  static std::string Hash(std::string_view credential);
  // Why `entry` has ended at `now`, or "" if it has not.
  std::string_view EndReason(const Entry& entry, absl::Time now) const;
  // Deletes the sign-in kept under `hash` here and in the database.
  absl::Status Remove(const std::string& hash)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes every sign-in that has ended at `now`.
  void RemoveEnded(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const UiSessionOptions options_;
  absl::Mutex mu_;
  std::unique_ptr<storage::Database> db_ ABSL_GUARDED_BY(mu_);
  storage::UiSessionStore store_ ABSL_GUARDED_BY(mu_);
  // By the credential's hash.
  absl::flat_hash_map<std::string, Entry> live_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_UI_SESSIONS_H_
