#include "server/config/path_policy.h"

#include "common/status_macros.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/transports.h"

namespace inspector::config {
namespace {

std::string WorkingDirectory() {
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof(buf)) == nullptr) return "/";
  return buf;
}

// realpath(3) of an existing path, or "" if it cannot be resolved.
std::string RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string out(resolved);
  free(resolved);
  return out;
}

// Joins `components` onto `root` lexically, dropping "." and applying
// "..". Used only for the part of a path that does not exist (so it holds
// no links).
std::string Append(std::string root,
                   const std::vector<std::string>& components) {
  for (const std::string& part : components) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      auto slash = root.find_last_of('/');
      root = slash == 0 || slash == std::string::npos ? "/"
                                                      : root.substr(0, slash);
      continue;
    }
    if (root.empty() || root.back() != '/') root += '/';
    root += part;
  }
  return root.empty() ? "/" : root;
}

bool Inside(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
          path[dir.size()] == '/');
}

}  // namespace

std::string ResolvePath(std::string_view path, std::string_view base) {
  std::string absolute;
  if (!path.empty() && path.front() == '/') {
    absolute = std::string(path);
  } else {
    std::string from = base.empty()          ? WorkingDirectory()
                       : base.front() == '/' ? std::string(base)
                                             : ResolvePath(base);
    absolute = absl::StrCat(from, "/", std::string(path));
  }
  // Resolve the longest prefix that exists; realpath follows every link
  // in it and removes "." and "..". Components are peeled off from the
  // end until what is left resolves.
  std::vector<std::string> parts =
      absl::StrSplit(absolute, '/', absl::SkipEmpty());
  std::vector<std::string> rest;
  while (true) {
    std::string prefix = absl::StrCat("/", absl::StrJoin(parts, "/"));
    std::string real = RealPath(prefix);
    if (!real.empty()) {
      // A ".." after a missing component is lexical: it cannot cross a
      // link, since nothing below the existing prefix exists.
      std::vector<std::string> tail(rest.rbegin(), rest.rend());
      return Append(real, tail);
    }
    if (parts.empty())
      return Append("/", std::vector<std::string>(rest.rbegin(), rest.rend()));
    rest.push_back(parts.back());
    parts.pop_back();
  }
}

absl::StatusOr<PathPolicy> PathPolicy::Create(
    const std::vector<std::string>& dirs) {
  PathPolicy policy;
  for (const std::string& dir : dirs) {
    std::string real = RealPath(dir);
    struct stat st;
    if (real.empty() || stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Error(
          v1::INVALID_REQUEST,
          absl::StrCat("--allowed-dir ", dir, " is not an existing directory"),
          {{"path", dir}});
    }
    policy.dirs_.push_back(std::move(real));
  }
  return policy;
}

absl::Status PathPolicy::Check(std::string_view what, std::string_view path,
                               std::string_view base) const {
  if (dirs_.empty()) return absl::OkStatus();
  std::string resolved = ResolvePath(path, base);
  for (const std::string& dir : dirs_) {
    if (Inside(resolved, dir)) return absl::OkStatus();
  }
  return Error(
      v1::INVALID_REQUEST,
      absl::StrCat(
          std::string(what), " ", std::string(path),
          resolved == path ? "" : absl::StrCat(" (resolved: ", resolved, ")"),
          " is outside the allowed directories (", absl::StrJoin(dirs_, ", "),
          "); choose a path inside one of them or start "
          "inspectord with another --allowed-dir"),
      {{"path", std::string(path)},
       {"resolved", resolved},
       {"field", std::string(what)}});
}

absl::Status PathPolicy::CheckServer(const v1::ServerConfig& config) const {
  if (dirs_.empty()) return absl::OkStatus();
  // Files the OAuth grants read (any transport).
  if (!config.oauth().private_key_file().empty()) {
    RETURN_IF_ERROR(
        Check("oauth.privateKeyFile", config.oauth().private_key_file()));
  }
  if (!config.oauth().id_token_file().empty()) {
    RETURN_IF_ERROR(Check("oauth.idTokenFile", config.oauth().id_token_file()));
  }
  if (config.transport() != kTransportStdio) return absl::OkStatus();
  const std::string cwd =
      config.cwd().empty() ? WorkingDirectory() : ResolvePath(config.cwd());
  if (absl::Status checked =
          Check("cwd", config.cwd().empty() ? cwd : config.cwd());
      !checked.ok()) {
    return checked;
  }
  if (config.command().find('/') != std::string::npos) {
    return Check("command", config.command(), cwd);
  }
  return absl::OkStatus();
}

}  // namespace inspector::config
