// The allowed directories (--allowed-dir): every path the daemon is asked
// to use (a stdio server's working directory and its command when it is a
// path, the --config and --import files) must lie inside one of them once
// `..`, `.` and symbolic links are resolved. The proxy seed's "path
// traversal" rule.
//
// A policy with no directories allows everything (the default: behaviour
// without --allowed-dir is unchanged). Paths that do not exist yet are
// resolved through their longest existing parent, so a link anywhere on
// the way is followed. Relative paths are taken from the daemon's working
// directory (or, for a command, from the server's cwd).
//
// Immutable after Create(); thread-safe.
#ifndef INSPECTOR_SERVER_CONFIG_PATH_POLICY_H_
#define INSPECTOR_SERVER_CONFIG_PATH_POLICY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "inspector/v1/config.pb.h"

namespace inspector::config {

class PathPolicy {
 public:
  // Allows everything.
  PathPolicy() = default;
  // Resolves each directory (it must exist and be a directory); an error
  // names the one that does not.
  static absl::StatusOr<PathPolicy> Create(
      const std::vector<std::string>& dirs);

  bool restricted() const { return !dirs_.empty(); }
  // The resolved directories.
  const std::vector<std::string>& dirs() const { return dirs_; }

  // OK when `path` (relative to `base`, or the working directory when
  // `base` is empty) resolves inside an allowed directory. Otherwise
  // INVALID_REQUEST "<what> <path> is outside the allowed directories
  // (...)" with details "path" (as given), "resolved" and "field" (`what`).
  absl::Status Check(std::string_view what, std::string_view path,
                     std::string_view base = "") const;

  // A stdio server's working directory (cwd, or the daemon's own when
  // empty) and its command when it names a path (has a '/'); a command
  // looked up in PATH is not a path. Other transports: OK.
  absl::Status CheckServer(const v1::ServerConfig& config) const;

 private:
  std::vector<std::string> dirs_;
};

// `path` made absolute (against `base`, or the working directory), with
// `.`, `..` and symbolic links resolved as far as the path exists; the
// part that does not exist yet is appended, normalized. Exposed for tests.
std::string ResolvePath(std::string_view path, std::string_view base = "");

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_PATH_POLICY_H_
