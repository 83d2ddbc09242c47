// A live mcp.json (--config FILE): the seed's configuration file kept in
// step with the daemon's servers in both directions.
//
// The file is the source of truth whenever it exists; the servers table in
// SQLite mirrors it:
//  - at start an existing file replaces the stored servers
//    (ConfigManager::ReplaceAll: matched by id, then name); a missing file
//    is created from the stored servers;
//  - every change made through the API is written back, after SQLite,
//    atomically (temporary file + rename, mode 0600), keeping the file's
//    other top-level keys ("preferences", "$schema", unknown ones) and each
//    server's unknown keys (ServerConfig.extra);
//  - an edit made to the file by hand while the daemon runs is seen through
//    inotify on its directory and applied the same way; an edit that does
//    not parse or validate is reported in the daemon's log and ignored (the
//    servers stay as they were; the next change through the API rewrites
//    the file whole);
//  - the daemon's own writes are recognised by their content and not
//    applied again, so nothing loops.
// The file is written in the INSPECTOR format only (server/config/formats.h)
// and read in it only.
//
// One thread (named "config-file") owns the file: it reads it after
// inotify events and writes it after changes, so reads and writes never
// race; a hand edit not yet read is applied before a write-back replaces
// it. Thread-safe; the manager must outlive this object.
#ifndef INSPECTOR_SERVER_CONFIG_CONFIG_FILE_H_
#define INSPECTOR_SERVER_CONFIG_CONFIG_FILE_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "server/config/config_manager.h"

namespace inspector::config {

class ConfigFile {
 public:
  // Loads `path` into `manager` (or creates it from the manager's servers
  // when missing), then watches it. Errors, naming the path: the directory
  // does not exist, the file cannot be read or written, it is not a valid
  // INSPECTOR file, or its servers cannot be stored.
  static absl::StatusOr<std::unique_ptr<ConfigFile>> Open(
      const std::string& path, ConfigManager* manager);

  // Writes a pending change back, then stops watching.
  ~ConfigFile();
  ConfigFile(const ConfigFile&) = delete;
  ConfigFile& operator=(const ConfigFile&) = delete;

  // The file's resolved path.
  const std::string& path() const { return path_; }

 private:
  struct Wake;
  ConfigFile(std::string path, ConfigManager* manager);
  void Run();
  // Reads the file; if it differs from what was last read or written,
  // applies it. Logs what happened.
  void ReloadIfChanged();
  // Writes the manager's servers if that changes the file.
  absl::Status WriteBack();

  const std::string path_;
  const std::string name_;  // the file name within its directory
  ConfigManager* const manager_;
  std::shared_ptr<Wake> wake_;
  int inotify_fd_ = -1;
  // Owned by the thread once it runs.
  std::string last_content_;
  bool file_missing_reported_ = false;
  bool watching_ = false;  // set before the thread starts
  google::protobuf::Struct file_extra_;
  std::thread thread_;
};

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_CONFIG_FILE_H_
