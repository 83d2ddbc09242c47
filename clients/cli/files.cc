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
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty()) dir = "/";
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat(path, " names a directory, not a file"));
  }
  std::string temp = absl::StrCat(dir, "/.", base, ".XXXXXX");
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  // mkstemp creates the file with mode 0600.
  int fd = mkstemp(name.data());
  if (fd < 0) {
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  auto fail = [&](int error) {
    close(fd);
    unlink(name.data());
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  };
  if (fchmod(fd, 0600) != 0) return fail(errno);
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return fail(errno);
  if (close(fd) != 0) {
    int error = errno;
    unlink(name.data());
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  if (rename(name.data(), path.c_str()) != 0) {
    int error = errno;
    unlink(name.data());
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace inspector::cli
