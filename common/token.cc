#include "common/token.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace inspector {
namespace {

absl::Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(dir, " exists and is not a directory"));
    }
    return absl::OkStatus();
  }
  auto slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    RETURN_IF_ERROR(MakeDirs(dir.substr(0, slash)));
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultTokenPath() {
  if (const char* f = std::getenv("INSPECTOR_TOKEN_FILE"); f && *f) return f;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) {
    return absl::StrCat(x, "/inspector/token");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home && *home ? home : ".", "/.local/state/inspector/token");
}

absl::StatusOr<std::string> GenerateToken() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrCat("getrandom: ", std::strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<char*>(bytes), sizeof(bytes)));
}

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat("no token file at ", path));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read token file ", path, ": ",
                     std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a regular file"));
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        "token file ", path, " is accessible by other users (mode ",
        absl::StrCat(absl::Hex(st.st_mode & 0777)),
        "); run: chmod 600 ", path));
  }
  std::string content;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) {
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > 4096) break;
  }
  close(fd);
  std::string token(absl::StripAsciiWhitespace(content));
  if (token.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("token file ", path, " is empty"));
  }
  return token;
}

absl::StatusOr<std::string> LoadOrCreateToken(const std::string& path) {
  auto existing = ReadToken(path);
  if (existing.ok() || !absl::IsNotFound(existing.status())) return existing;
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    RETURN_IF_ERROR(MakeDirs(path.substr(0, slash)));
  }
  ASSIGN_OR_RETURN(std::string token, GenerateToken());
  AtomicWriteOptions options;
  options.replace_existing = false;
  absl::Status written = WriteFileAtomically(path, token + "\n", options);
  // Another process created it first: use theirs.
  if (absl::IsAlreadyExists(written)) return ReadToken(path);
  if (!written.ok()) {
    return absl::Status(
        written.code(),
        absl::StrCat("cannot create token file: ", written.message()));
  }
  return token;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // The length is not secret (always 64 for our tokens); the bytes are.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace inspector
