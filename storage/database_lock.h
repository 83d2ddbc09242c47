// The daemon's claim on its database file: one live inspectord per file.
//
// Two daemons on one database would each end the other's sessions as left
// over from a crash, rewrite each other's conversions and interleave their
// writes. Acquire() takes an exclusive flock(2) on "<database>.lock" (mode
// 0600, created if missing) and writes this process's pid into it; the lock
// lasts until the DatabaseLock is destroyed or the process dies, however it
// dies, so a daemon killed with SIGKILL never leaves a stale claim. The file
// is kept, not removed: removing it would let a third process lock a fresh
// file while a second still holds the old one. SQLite itself is not locked,
// so `sqlite3` and other readers keep working while a daemon runs. The
// descriptor is close-on-exec: the stdio servers a daemon starts do not
// inherit the claim. Not copyable; no shared state, so thread-compatible.
#ifndef INSPECTOR_STORAGE_DATABASE_LOCK_H_
#define INSPECTOR_STORAGE_DATABASE_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace inspector::storage {

class DatabaseLock {
 public:
  // Locks `database_path` + ".lock". FAILED_PRECONDITION naming the
  // holder's pid when another process holds it; PERMISSION_DENIED or
  // NOT_FOUND when the file cannot be created. An in-memory database
  // (":memory:") needs no lock: a DatabaseLock that holds nothing.
  static absl::StatusOr<std::unique_ptr<DatabaseLock>> Acquire(
      const std::string& database_path);

  ~DatabaseLock();
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;

  // The lock file's path; "" for an in-memory database.
  const std::string& path() const { return path_; }

 private:
  DatabaseLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  const std::string path_;
  const int fd_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_DATABASE_LOCK_H_
