#include "clients/cli/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "common/files.h"

namespace inspector::cli {
namespace {

std::string Describe(const std::string& path) {
  return path == "-" ? std::string("stdin") : path;
}

absl::Status TooLarge(const std::string& path, size_t max_bytes,
                      const std::string& hint) {
  return LocalError(
      v1::TOO_LARGE,
      absl::StrCat(Describe(path), " is larger than ", max_bytes >> 20,
                   " MiB, the most inspectorctl sends at once"),
      hint);
}

}  // namespace

absl::StatusOr<std::string> ReadInputFile(const std::string& path,
                                          size_t max_bytes,
                                          const std::string& too_large_hint) {
  int fd = STDIN_FILENO;
  if (path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return LocalError(
          v1::INVALID_REQUEST,
          absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
    struct stat st;
    if (fstat(fd, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        close(fd);
        return LocalError(v1::INVALID_REQUEST,
                          absl::StrCat(path, " is a directory"));
      }
      if (S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) > max_bytes) {
        close(fd);
        return TooLarge(path, max_bytes, too_large_hint);
      }
    }
  }
  std::string content;
  std::vector<char> buffer(64 * 1024);
  while (true) {
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      if (fd != STDIN_FILENO) close(fd);
      return LocalError(v1::INVALID_REQUEST,
                        absl::StrCat("cannot read ", Describe(path), ": ",
                                     std::strerror(error)));
    }
    if (n == 0) break;
    content.append(buffer.data(), static_cast<size_t>(n));
    if (content.size() > max_bytes) {
      if (fd != STDIN_FILENO) close(fd);
      return TooLarge(path, max_bytes, too_large_hint);
    }
  }
  if (fd != STDIN_FILENO) close(fd);
  return content;
}

absl::Status WritePrivateFile(const std::string& path,
                              const std::string& content) {
  absl::Status written = WriteFileAtomically(path, content);
  if (!written.ok()) {
    return LocalError(v1::INVALID_REQUEST, std::string(written.message()));
  }
  return absl::OkStatus();
}

}  // namespace inspector::cli
