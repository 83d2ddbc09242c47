#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace inspector {
namespace {

absl::Status CannotWrite(const std::string& path, int error) {
  std::string message =
      absl::StrCat("cannot write ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view content,
                                 const AtomicWriteOptions& options) {
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty()) dir = "/";
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " names a directory, not a file"));
  }
  std::string temp = absl::StrCat(dir, "/.", base, ".XXXXXX");
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  // mkstemp creates the file with mode 0600; fchmod below makes sure.
  int fd = mkstemp(name.data());
  if (fd < 0) return CannotWrite(path, errno);
  auto fail = [&](int error) {
    if (fd >= 0) close(fd);
    unlink(name.data());
    return CannotWrite(path, error);
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
  int closed = close(fd);
  fd = -1;
  if (closed != 0) return fail(errno);
  if (options.replace_existing) {
    if (rename(name.data(), path.c_str()) != 0) return fail(errno);
    return absl::OkStatus();
  }
  // link() refuses to replace an existing file, which rename() would do.
  if (link(name.data(), path.c_str()) != 0) return fail(errno);
  unlink(name.data());
  return absl::OkStatus();
}

}  // namespace inspector
