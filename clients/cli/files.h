// File input and output for inspectorctl: bounded reads of user-named
// files (or stdin) and writes of files that hold secrets. Errors are
// LocalErrors (see cli_errors.h). Thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_FILES_H_
#define INSPECTOR_CLIENTS_CLI_FILES_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace inspector::cli {

// The most `servers import` sends; the daemon refuses more anyway.
inline constexpr size_t kMaxImportBytes = 16 << 20;
// The most a JSON-RPC message or a --json object read from stdin may hold.
inline constexpr size_t kMaxMessageBytes = 16 << 20;

inline constexpr char kImportTooLargeHint[] =
    "split the file, or keep only the servers you need";

// Reads `path` ("-" is stdin) if it holds at most `max_bytes`. A larger
// input gives TOO_LARGE (exit 5) with `too_large_hint`; a missing or
// unreadable file gives INVALID_REQUEST (exit 5) naming the path and the
// system's reason.
absl::StatusOr<std::string> ReadInputFile(
    const std::string& path, size_t max_bytes,
    const std::string& too_large_hint = kImportTooLargeHint);

// Writes `content` to `path` with mode 0600, replacing the file
// atomically (a temporary file in the same directory, then rename), so
// that the secrets it holds are never readable by others, even briefly.
absl::Status WritePrivateFile(const std::string& path,
                              const std::string& content);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_FILES_H_
