// Writing small files whole: a reader sees the old content or the new, never
// a partial file, and the file is private to its owner (mode 0600, whatever
// the umask). Used for ready files, exported configurations and the
// session token. Thread-safe (no shared state); callers that write the same
// path concurrently each get a whole file, the last rename winning.
#ifndef INSPECTOR_COMMON_FILES_H_
#define INSPECTOR_COMMON_FILES_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace inspector {

struct AtomicWriteOptions {
  // When false, an existing file at the path is kept and the write answers
  // AlreadyExists (the first writer wins, e.g. two processes creating the
  // same token file).
  bool replace_existing = true;
};

// Writes `content` to a new temporary file in the directory of `path`
// (mode 0600), flushes it to disk (fsync), then renames it over `path` (or,
// without replace_existing, links it there). On any failure the temporary
// file is removed and the answer names `path` and the reason:
//  - InvalidArgument when `path` ends in '/' (names a directory);
//  - AlreadyExists when the file exists and replace_existing is false;
//  - NotFound when the directory does not exist;
//  - PermissionDenied when it may not be written;
//  - Internal for other I/O failures (disk full, ...).
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view content,
                                 const AtomicWriteOptions& options = {});

}  // namespace inspector

#endif  // INSPECTOR_COMMON_FILES_H_
