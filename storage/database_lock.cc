#include "storage/database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace inspector::storage {
namespace {

// The pid the holder wrote, or "" when the file holds none (the holder is
// between its lock and its write, or is an older build).
std::string HolderPid(int fd) {
  char buf[32] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n));
  int64_t pid = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid) || pid <= 0) {
    return "";
  }
  return absl::StrCat(pid);
}

absl::Status OpenError(const std::string& path, int error) {
  std::string message =
      absl::StrCat("cannot open the lock file ", path, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  return absl::PermissionDeniedError(message);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DatabaseLock>> DatabaseLock::Acquire(
    const std::string& database_path) {
  if (database_path == ":memory:") {
    return std::unique_ptr<DatabaseLock>(new DatabaseLock("", -1));
  }
  std::string path = absl::StrCat(database_path, ".lock");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return OpenError(path, errno);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    std::string holder = error == EWOULDBLOCK ? HolderPid(fd) : "";
    close(fd);
    if (error != EWOULDBLOCK) {
      return absl::PermissionDeniedError(absl::StrCat(
          "cannot lock ", path, ": ", std::strerror(error)));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "another inspectord",
        holder.empty() ? "" : absl::StrCat(" (pid ", holder, ")"),
        " is using this database; stop it first, or give this one another "
        "--db (", path, " holds the claim)"));
  }
  std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    int error = errno;
    close(fd);
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return std::unique_ptr<DatabaseLock>(new DatabaseLock(std::move(path), fd));
}

DatabaseLock::~DatabaseLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

}  // namespace inspector::storage
