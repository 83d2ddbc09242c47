#include "server/config/config_file.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
#include "server/config/formats.h"
#include "server/logging.h"

namespace inspector::config {
namespace {

constexpr uint64_t kWrite = 1;       // a change to write back
constexpr uint64_t kStop = 1 << 20;  // the owner is going away

// The whole file, NotFound when it does not exist.
absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    std::string message =
        absl::StrCat("cannot read ", path, ": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(message)
                           : absl::PermissionDeniedError(message);
  }
  std::string content;
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > kMaxConfigFileBytes) {
      close(fd);
      return Error(v1::TOO_LARGE, absl::StrCat(path, " is larger than 16 MiB"));
    }
  }
  close(fd);
  return content;
}

// `path` with its directory resolved (links, "..") and its name kept.
absl::StatusOr<std::string> Resolve(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty()) dir = "/";
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat(path, " names a directory, not a file"),
                 {{"path", path}});
  }
  // A link to the file: follow it, so that writes replace the target.
  if (char* real = realpath(path.c_str(), nullptr); real != nullptr) {
    std::string out(real);
    free(real);
    return out;
  }
  char* real_dir = realpath(dir.c_str(), nullptr);
  if (real_dir == nullptr) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("the directory of ", path,
                              " does not exist: ", std::strerror(errno)),
                 {{"path", path}});
  }
  std::string out =
      absl::StrCat(real_dir, real_dir[1] == '\0' ? "" : "/", name);
  free(real_dir);
  return out;
}

}  // namespace

// The listener's way to the thread; outlives the ConfigFile (the manager
// keeps its listeners for its own lifetime).
struct ConfigFile::Wake {
  absl::Mutex mu;
  int fd ABSL_GUARDED_BY(mu) = -1;

  void Signal(uint64_t what) {
    absl::MutexLock lock(&mu);
    if (fd < 0) return;
    ssize_t n = write(fd, &what, sizeof(what));
    (void)n;  // only fails when the counter is full: a wake-up is pending
  }
};

ConfigFile::ConfigFile(std::string path, ConfigManager* manager)
    : path_(std::move(path)),
      name_(path_.substr(path_.find_last_of('/') + 1)),
      manager_(manager),
      wake_(std::make_shared<Wake>()) {}

absl::StatusOr<std::unique_ptr<ConfigFile>> ConfigFile::Open(
    const std::string& path, ConfigManager* manager) {
  ASSIGN_OR_RETURN(std::string resolved, Resolve(path));
  std::unique_ptr<ConfigFile> file(new ConfigFile(resolved, manager));
  absl::StatusOr<std::string> content = ReadWhole(resolved);
  if (content.ok()) {
    ASSIGN_OR_RETURN(ParsedConfigFile parsed,
                     ParseConfigFile(*content, v1::CONFIG_FORMAT_INSPECTOR));
    ASSIGN_OR_RETURN(ConfigManager::ReplaceResult result,
                     manager->ReplaceAll(std::move(parsed.servers)));
    file->file_extra_ = std::move(parsed.file_extra);
    file->last_content_ = *std::move(content);
    LogInfo(absl::StrCat("config file ", resolved, " loaded: ", result.created,
                         " created, ", result.updated, " updated, ",
                         result.deleted, " deleted"));
  } else if (!absl::IsNotFound(content.status())) {
    return content.status();
  }
  // Written now: created when missing, and with the ids and timestamps the
  // daemon keeps.
  RETURN_IF_ERROR(file->WriteBack());

  const std::string dir = resolved.substr(0, resolved.find_last_of('/'));
  file->inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  int event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (file->inotify_fd_ < 0 || event_fd < 0 ||
      inotify_add_watch(
          file->inotify_fd_, dir.empty() ? "/" : dir.c_str(),
          IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) < 0) {
    int error = errno;
    if (event_fd >= 0) close(event_fd);
    return absl::InternalError(absl::StrCat(
        "cannot watch ", resolved, " for changes: ", std::strerror(error)));
  }
  {
    absl::MutexLock lock(&file->wake_->mu);
    file->wake_->fd = event_fd;
  }
  manager->AddListener(
      [wake = file->wake_](const std::string&, const std::string&) {
        wake->Signal(kWrite);
      });
  file->watching_ = true;
  file->thread_ = std::thread([raw = file.get()] { raw->Run(); });
  return file;
}

ConfigFile::~ConfigFile() {
  if (thread_.joinable()) {
    wake_->Signal(kStop);
    thread_.join();
  }
  {
    absl::MutexLock lock(&wake_->mu);
    if (wake_->fd >= 0) close(wake_->fd);
    wake_->fd = -1;
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
}

void ConfigFile::Run() {
  NameThisThread("config-file");
  int event_fd;
  {
    absl::MutexLock lock(&wake_->mu);
    event_fd = wake_->fd;
  }
  alignas(struct inotify_event) char buf[16 * 1024];
  while (true) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {event_fd, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LogError(absl::StrCat("config file ", path_,
                            ": watching stopped: ", std::strerror(errno)));
      return;
    }
    if (fds[0].revents & POLLIN) {
      bool ours = false;
      while (true) {
        ssize_t n = read(inotify_fd_, buf, sizeof(buf));
        if (n <= 0) break;
        for (char* p = buf; p < buf + n;) {
          auto* event = reinterpret_cast<struct inotify_event*>(p);
          if (event->len > 0 && name_ == event->name) ours = true;
          p += sizeof(struct inotify_event) + event->len;
        }
      }
      if (ours) ReloadIfChanged();
    }
    if (fds[1].revents & POLLIN) {
      uint64_t what = 0;
      if (read(event_fd, &what, sizeof(what)) != sizeof(what)) what = 0;
      if (what % kStop != 0) {
        if (absl::Status written = WriteBack(); !written.ok()) {
          LogError(
              absl::StrCat("config file ", path_,
                           ": a change was not written: ", written.message()));
        }
      }
      if (what >= kStop) return;
    }
  }
}

void ConfigFile::ReloadIfChanged() {
  absl::StatusOr<std::string> content = ReadWhole(path_);
  if (!content.ok()) {
    if (absl::IsNotFound(content.status())) {
      if (!file_missing_reported_) {
        LogWarn(absl::StrCat("config file ", path_,
                             " was removed; the servers are kept and the "
                             "file is written again at the next change"));
        file_missing_reported_ = true;
      }
      last_content_.clear();
      return;
    }
    LogWarn(
        absl::StrCat("config file ", path_, ": ", content.status().message()));
    return;
  }
  file_missing_reported_ = false;
  if (*content == last_content_) return;  // our own write, or no change
  last_content_ = *content;
  absl::StatusOr<ParsedConfigFile> parsed =
      ParseConfigFile(*content, v1::CONFIG_FORMAT_INSPECTOR);
  absl::StatusOr<ConfigManager::ReplaceResult> result =
      parsed.ok()
          ? manager_->ReplaceAll(parsed->servers)
          : absl::StatusOr<ConfigManager::ReplaceResult>(parsed.status());
  if (!result.ok()) {
    std::string where;
    for (const auto& [key, value] : GetErrorDetails(result.status())) {
      if (key == "line" || key == "column" || key == "field" || key == "path") {
        absl::StrAppend(&where, where.empty() ? " (" : ", ", key, " ", value);
      }
    }
    if (!where.empty()) where += ")";
    LogWarn(absl::StrCat("config file ", path_,
                         ": the edit was ignored, the servers are unchanged: ",
                         ErrorReason(result.status()), ": ",
                         result.status().message(), where));
    return;
  }
  file_extra_ = std::move(parsed->file_extra);
  LogInfo(absl::StrCat("config file ", path_, " changed: ", result->created,
                       " created, ", result->updated, " updated, ",
                       result->deleted, " deleted"));
}

absl::Status ConfigFile::WriteBack() {
  // A hand edit not read yet goes in first rather than being overwritten.
  if (watching_) ReloadIfChanged();
  ASSIGN_OR_RETURN(std::vector<v1::ServerConfig> servers, manager_->List());
  ASSIGN_OR_RETURN(
      std::string content,
      SerializeConfigFile(servers, v1::CONFIG_FORMAT_INSPECTOR, file_extra_));
  if (content == last_content_) return absl::OkStatus();
  RETURN_IF_ERROR(WriteFileAtomically(path_, content));
  last_content_ = std::move(content);
  return absl::OkStatus();
}

}  // namespace inspector::config
