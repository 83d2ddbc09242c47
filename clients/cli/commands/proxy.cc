// `inspectorctl proxy NAME`: the command a desktop MCP client (Claude
// Desktop, Cursor, VS Code) launches instead of a stdio MCP server. It
// speaks newline-delimited JSON-RPC on stdin and stdout and relays each
// message through inspectord (ProxyService.Relay), which runs the server
// in a session of its own and records the traffic. Only messages go to
// stdout; everything else goes to stderr.
//
// `proxy --install NAME --client C` rewrites that client's configuration
// so that its entry NAME launches this command (client_config.h), first
// importing the entry into inspectord if the daemon does not know NAME;
// `proxy --uninstall NAME --client C` puts the entry back.
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "clients/cli/client_config.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/token.h"
#include "common/version.h"
#include "inspector/v1/proxy.grpc.pb.h"

namespace inspector::cli {
namespace {

using ConfigStub = v1::ConfigService::Stub;
using RelayStream =
    grpc::ClientReaderWriter<v1::RelayRequest, v1::RelayResponse>;

struct ProxyFlags {
  std::string server;
  bool install = false;
  bool uninstall = false;
  std::string client;
  std::string config;
  bool force = false;
  double drain_seconds = 5;
  bool verbose = false;
};

void Log(const std::string& line) {
  std::cerr << "inspectorctl proxy: " << line << "\n" << std::flush;
}

// --- the relay --------------------------------------------------------------

// Reads stdin on its own thread and sends each non-empty line as one
// message; at end of input half-closes the stream and, if the daemon has
// not ended the relay within the drain time, cancels it. Stop() makes the
// thread return whatever it is doing.
class StdinPump {
 public:
  StdinPump(RelayStream* stream, grpc::ClientContext* call,
            absl::Duration drain)
      : stream_(stream), call_(call), drain_(drain) {
    if (pipe(wake_) != 0) wake_[0] = wake_[1] = -1;
  }
  ~StdinPump() {
    Join();
    for (int fd : wake_) {
      if (fd >= 0) close(fd);
    }
  }

  void Start() { thread_ = std::thread([this] { Run(); }); }

  // The relay has ended: the thread stops reading and waiting.
  void Stop() {
    if (!ended_.HasBeenNotified()) ended_.Notify();
    if (wake_[1] >= 0) {
      char byte = 0;
      (void)!write(wake_[1], &byte, 1);
    }
  }

  // Stop(), then waits for the thread.
  void Join() {
    Stop();
    if (thread_.joinable()) thread_.join();
  }

  bool input_ended() const { return input_ended_.HasBeenNotified(); }
  bool drain_timed_out() const { return drain_timed_out_; }

 private:
  void Run() {
    std::string buffer;
    char chunk[64 * 1024];
    bool sending = true;
    while (sending) {
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      int ready = poll(fds, wake_[0] >= 0 ? 2 : 1, -1);
      if (ready < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (wake_[0] >= 0 && (fds[1].revents & POLLIN) != 0) return;
      ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        break;
      }
      if (n == 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t newline; (newline = buffer.find('\n', start)) !=
                           std::string::npos;
           start = newline + 1) {
        if (!Send(buffer.substr(start, newline - start))) {
          sending = false;
          break;
        }
      }
      buffer.erase(0, start);
    }
    // A last line without its newline still counts.
    if (sending && !buffer.empty()) Send(buffer);
    input_ended_.Notify();
    if (ended_.HasBeenNotified()) return;
    stream_->WritesDone();
    if (!ended_.WaitForNotificationWithTimeout(drain_)) {
      drain_timed_out_ = true;
      call_->TryCancel();
    }
  }

  bool Send(std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return true;
    v1::RelayRequest frame;
    frame.set_message(std::move(line));
    return stream_->Write(frame);
  }

  RelayStream* const stream_;
  grpc::ClientContext* const call_;
  const absl::Duration drain_;
  int wake_[2] = {-1, -1};
  absl::Notification ended_;
  absl::Notification input_ended_;
  bool drain_timed_out_ = false;  // read after the thread is joined
  std::thread thread_;
};

absl::Status RunRelay(Context& context, const ProxyFlags& flags) {
  grpc::ClientContext call;
  RETURN_IF_ERROR(context.PrepareStream(&call));
  CancelOnInterrupt interrupt(&call);
  std::unique_ptr<RelayStream> stream = context.proxy()->Relay(&call);

  v1::RelayRequest open;
  open.mutable_open()->set_server_id(flags.server);
  open.mutable_open()->set_client_name("inspectorctl");
  open.mutable_open()->set_client_version(Version());
  open.mutable_open()->set_pid(getpid());
  open.mutable_open()->set_parent_pid(getppid());
  v1::RelayResponse frame;
  // The daemon answers `opened` first, or ends the call with the reason.
  if (!stream->Write(open) || !stream->Read(&frame) || !frame.has_opened()) {
    stream->WritesDone();
    grpc::Status finished = stream->Finish();
    if (int signal_number = InterruptSignal(); signal_number != 0) {
      DieOfSignal(signal_number);
    }
    if (finished.ok()) {
      return LocalError(v1::INTERNAL_ERROR,
                        "inspectord ended the relay before it opened");
    }
    return FromGrpcStatus(finished);
  }
  if (flags.verbose) {
    Log(absl::StrCat("relaying to ", frame.opened().server_name(),
                     " through inspectord at ", context.options().addr,
                     " (session ", frame.opened().session_id(), ")"));
  }

  StdinPump pump(stream.get(), &call,
                 absl::Seconds(flags.drain_seconds));
  pump.Start();
  v1::RelayEnded ended;
  bool output_closed = false;
  while (stream->Read(&frame)) {
    if (frame.has_ended()) {
      ended = frame.ended();
      continue;
    }
    if (frame.frame_case() != v1::RelayResponse::kMessage) continue;
    std::string* message = frame.mutable_message();
    // An HTTP server may send indented JSON. In valid JSON a raw line
    // break can only be whitespace (inside strings it is escaped), so a
    // space keeps the message and its one-line framing.
    for (char& c : *message) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    std::cout << *message << '\n' << std::flush;
    if (!std::cout.good()) {
      // The client closed our stdout: nobody is left to answer.
      output_closed = true;
      call.TryCancel();
      break;
    }
  }
  // The call is over once Read fails, so a Write of the pump fails too;
  // Finish comes after the pump's last stream operation.
  pump.Join();
  grpc::Status finished = stream->Finish();
  const bool input_ended = pump.input_ended();
  if (int signal_number = InterruptSignal(); signal_number != 0) {
    DieOfSignal(signal_number);
  }
  if (output_closed) return absl::OkStatus();
  if (finished.ok() && !input_ended) {
    // The daemon ended the relay while the client was still talking.
    Failure failure;
    failure.exit_code = kExitUnreachable;
    failure.message = ended.message().empty()
                          ? "inspectord ended the relay"
                          : ended.message();
    failure.hint = absl::StrCat("restart the MCP client once `inspectorctl "
                                "status ", flags.server, "` answers");
    context.PrintFailure(failure);
    return AlreadyReported(kExitUnreachable);
  }
  if (finished.ok()) return absl::OkStatus();
  if (input_ended && pump.drain_timed_out() &&
      finished.error_code() == grpc::StatusCode::CANCELLED) {
    Log(absl::StrCat("gave up waiting for the last answers after ",
                     flags.drain_seconds, " s"));
    return absl::OkStatus();
  }
  absl::Status status = FromGrpcStatus(finished);
  if (!ended.reason().empty() && ErrorReason(status).empty()) {
    return LocalError(v1::INTERNAL_ERROR, ended.message());
  }
  return status;
}

// --- install and uninstall --------------------------------------------------

bool FileExists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

absl::StatusOr<std::string> ReadIfExists(const std::string& path) {
  if (!FileExists(path)) return std::string();
  return ReadInputFile(path, kMaxImportBytes);
}

absl::StatusOr<std::string> ConfigPath(const ProxyFlags& flags,
                                       DesktopClient client) {
  if (!flags.config.empty()) return flags.config;
  const char* home = std::getenv("HOME");
  if (client != DesktopClient::kVsCode && (home == nullptr || *home == '\0')) {
    return UsageError("$HOME is not set", "give the file with --config FILE");
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) {
    return UsageError("cannot tell the current directory",
                      "give the file with --config FILE");
  }
  return DefaultClientConfigPath(client, home == nullptr ? "" : home, cwd);
}

absl::StatusOr<std::string> SelfPath() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) {
    return LocalError(v1::INTERNAL_ERROR,
                      absl::StrCat("cannot find inspectorctl's own path: ",
                                   std::strerror(errno)));
  }
  return std::string(path, static_cast<size_t>(n));
}

// The token file the proxy must be told about: the one in use when it is
// not where the desktop client's inspectorctl would look by itself (given
// by --token-file or $INSPECTOR_TOKEN_FILE), as an absolute path. A token
// given in $INSPECTOR_TOKEN is never written into the client's file.
std::string TokenFileToName(const Context& context) {
  const std::string& in_use = context.options().token_file;
  const char* env = std::getenv("INSPECTOR_TOKEN_FILE");
  const bool moved = (env != nullptr && *env != '\0') ||
                     in_use != DefaultTokenPath();
  if (!moved || in_use.empty()) return "";
  if (in_use.front() == '/') return in_use;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return in_use;
  return absl::StrCat(cwd, "/", in_use);
}

absl::Status WriteClientFile(const std::string& path,
                             const std::string& content) {
  absl::Status written = WriteFileAtomically(path, content);
  if (!written.ok()) {
    return LocalError(v1::INVALID_REQUEST, std::string(written.message()));
  }
  return absl::OkStatus();
}

// Makes sure inspectord knows server `name`: imports the client's entry
// (the original one if it was installed already) when it does not.
absl::Status EnsureDaemonKnows(Context& context, const ProxyFlags& flags,
                               DesktopClient client, const std::string& path,
                               const std::string& config_text,
                               const std::string& state_text) {
  v1::GetServerRequest get;
  get.set_id(flags.server);
  v1::ServerConfig known;
  absl::Status status =
      context.Call(context.config(), &ConfigStub::GetServer, get, &known);
  if (status.ok()) return absl::OkStatus();
  if (ErrorReason(status) != "SERVER_NOT_FOUND" &&
      ErrorReason(status) != "NOT_FOUND") {
    return status;
  }
  ASSIGN_OR_RETURN(std::optional<nlohmann::ordered_json> entry,
                   InstalledOriginal(state_text, flags.server));
  if (!entry.has_value()) {
    ASSIGN_OR_RETURN(entry, FindClientEntry(config_text, client, flags.server));
  }
  if (!entry.has_value()) {
    return LocalError(
        v1::SERVER_NOT_FOUND,
        absl::StrCat("\"", flags.server, "\" is neither a server of inspectord ",
                     "nor an entry of ", path),
        absl::StrCat("add it first (`inspectorctl servers add ", flags.server,
                     " -- COMMAND...`), or check the name and --client"));
  }
  v1::ImportServersRequest import;
  import.set_content(SingleEntryDocument(client, flags.server, *entry));
  import.set_format(client == DesktopClient::kVsCode
                        ? v1::CONFIG_FORMAT_VSCODE
                        : v1::CONFIG_FORMAT_MCP_SERVERS);
  import.set_on_conflict(v1::CONFLICT_POLICY_FAIL);
  v1::ImportServersResponse imported;
  RETURN_IF_ERROR(context.Call(context.config(), &ConfigStub::ImportServers,
                               import, &imported));
  context.out() << "imported " << flags.server << " from " << path
                << " into inspectord\n";
  return absl::OkStatus();
}

absl::Status RunInstall(Context& context, const ProxyFlags& flags) {
  ASSIGN_OR_RETURN(DesktopClient client, ParseDesktopClient(flags.client));
  ASSIGN_OR_RETURN(std::string path, ConfigPath(flags, client));
  const bool existed = FileExists(path);
  ASSIGN_OR_RETURN(std::string config_text, ReadIfExists(path));
  ASSIGN_OR_RETURN(std::string state_text, ReadIfExists(StatePath(path)));
  RETURN_IF_ERROR(EnsureDaemonKnows(context, flags, client, path, config_text,
                                    state_text));
  ProxyLaunch launch;
  ASSIGN_OR_RETURN(launch.program, SelfPath());
  launch.args = ProxyArgs(flags.server, context.options().addr,
                          TokenFileToName(context));
  ASSIGN_OR_RETURN(RewriteResult result,
                   InstallProxyEntry(config_text, state_text, client,
                                     flags.server, launch));
  const std::string backup = BackupPath(path);
  if (existed && !FileExists(backup)) {
    RETURN_IF_ERROR(WriteClientFile(backup, config_text));
  }
  RETURN_IF_ERROR(WriteClientFile(StatePath(path), result.state_text));
  RETURN_IF_ERROR(WriteClientFile(path, result.config_text));
  context.out() << (result.had_entry ? "rewrote " : "added ") << flags.server
                << " in " << path << ": it now runs\n  " << launch.program
                << " " << absl::StrJoin(launch.args, " ") << "\n";
  if (existed) context.out() << "the file as it was: " << backup << "\n";
  context.out() << "restart " << DesktopClientTitle(client)
                << " to use it; undo with `inspectorctl proxy --uninstall "
                << flags.server << " --client " << DesktopClientName(client)
                << (flags.config.empty() ? "" : " --config " + flags.config)
                << "`\n";
  return absl::OkStatus();
}

absl::Status RunUninstall(Context& context, const ProxyFlags& flags) {
  ASSIGN_OR_RETURN(DesktopClient client, ParseDesktopClient(flags.client));
  ASSIGN_OR_RETURN(std::string path, ConfigPath(flags, client));
  ASSIGN_OR_RETURN(std::string config_text, ReadIfExists(path));
  const std::string state_path = StatePath(path);
  ASSIGN_OR_RETURN(std::string state_text, ReadIfExists(state_path));
  ASSIGN_OR_RETURN(RewriteResult result,
                   UninstallProxyEntry(config_text, state_text, client,
                                       flags.server, flags.force));
  RETURN_IF_ERROR(WriteClientFile(path, result.config_text));
  if (result.state_text.empty()) {
    // Nothing installed any more: the next install takes a fresh backup.
    unlink(state_path.c_str());
    unlink(BackupPath(path).c_str());
  } else {
    RETURN_IF_ERROR(WriteClientFile(state_path, result.state_text));
  }
  context.out() << (result.had_entry ? "restored " : "removed ")
                << flags.server << " in " << path << "\n";
  return absl::OkStatus();
}

absl::Status RunProxy(Context& context, const ProxyFlags& flags) {
  if (flags.install && flags.uninstall) {
    return UsageError("--install and --uninstall exclude each other");
  }
  if ((flags.install || flags.uninstall) && flags.client.empty()) {
    return UsageError("--client is required with --install and --uninstall",
                      "use --client claude, cursor or vscode");
  }
  if (!(flags.install || flags.uninstall) &&
      (!flags.client.empty() || !flags.config.empty())) {
    return UsageError("--client and --config go with --install or "
                      "--uninstall");
  }
  if (flags.install) return RunInstall(context, flags);
  if (flags.uninstall) return RunUninstall(context, flags);
  return RunRelay(context, flags);
}

}  // namespace

void AddProxyCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<ProxyFlags>();
  CLI::App* proxy = AddServerCommand(
      app, context, kMcpGroup,
      {"proxy",
       "Stand in for a stdio MCP server: relay stdin/stdout through "
       "inspectord",
       "A desktop MCP client launches `inspectorctl proxy NAME` instead of "
       "the\n"
       "server: newline-delimited JSON-RPC on stdin and stdout, each message\n"
       "relayed through inspectord, which runs server NAME in a session of\n"
       "its own (recorded in history, kind proxy; seen by `watch`). stdout\n"
       "carries only messages; errors go to stderr. A request the daemon\n"
       "cannot deliver gets a JSON-RPC error with data.reason. End of stdin\n"
       "waits up to --drain-timeout for the answers still due, then exits 0.\n"
       "Exits 4 when inspectord is not running (or ends the relay itself),\n"
       "2 for an unknown server, 7 when the server's process exits.\n"
       "\n"
       "--install rewrites entry NAME of the client's file to run this\n"
       "program (absolute path; --addr when not the default, --token-file\n"
       "when given or set in $INSPECTOR_TOKEN_FILE), after\n"
       "importing the entry into inspectord if the daemon does not know\n"
       "NAME. The file as it was is kept in FILE.inspectord-backup (first\n"
       "install only) and the original entry in FILE.inspectord-proxy.json;\n"
       "--uninstall restores the entry from there. Files:\n"
       "  claude  ~/.config/Claude/claude_desktop_config.json (mcpServers)\n"
       "  cursor  ~/.cursor/mcp.json (mcpServers)\n"
       "  vscode  .vscode/mcp.json of the current directory (servers)\n"
       "\n"
       "Examples:\n"
       "  inspectorctl proxy everything\n"
       "  inspectorctl proxy --install everything --client claude\n"
       "  inspectorctl proxy --uninstall everything --client claude\n"
       "  inspectorctl proxy --install fs --client vscode --config "
       ".vscode/mcp.json"},
      flags, RunProxy);
  proxy->add_flag("--install", flags->install,
                  "Point the desktop client's entry NAME at `inspectorctl "
                  "proxy NAME`");
  proxy->add_flag("--uninstall", flags->uninstall,
                  "Put the client's entry NAME back as it was");
  proxy
      ->add_option("--client", flags->client,
                   "The desktop client whose file --install/--uninstall "
                   "edit")
      ->check(CLI::IsMember(
          {"claude", "claude-desktop", "cursor", "vscode", "code"}))
      ->type_name("claude|cursor|vscode");
  proxy
      ->add_option("--config", flags->config,
                   "The client's file (default: its usual place, see below)")
      ->type_name("FILE");
  proxy->add_flag("--force", flags->force,
                  "--uninstall: restore even if the entry was edited since");
  proxy
      ->add_option("--drain-timeout", flags->drain_seconds,
                   "Seconds to wait for answers still due after stdin ends "
                   "(default 5)")
      ->check(CLI::PositiveNumber)
      ->type_name("SECONDS");
  proxy->add_flag("--verbose", flags->verbose,
                  "Say on stderr when the relay is open");
}

}  // namespace inspector::cli
