// The doctor's MCP checks: the stdio executable and process, and the
// session over the engine's transport (initialize, tools/list)
// (doctor_run.h).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/net/listen_address.h"
#include "common/sse_parser.h"
#include "common/transports.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/doctor/doctor_run.h"
#include "server/engine/engine.h"
#include "server/engine/handshake.h"
#include "server/engine/json_rpc.h"
#include "server/transport/http_client.h"

namespace inspector::doctor {
namespace {

// Where the executable of `command` is, as the stdio transport looks for
// it (execvp's rules over the PATH of the merged environment).
struct ExecutableLookup {
  int error = 0;  // 0, ENOENT or EACCES
  std::string path;
  std::string non_executable;  // a match without the x bit
  bool is_directory = false;
};

ExecutableLookup FindExecutable(const std::string& command,
                                const std::string& path_list) {
  ExecutableLookup out;
  auto judge = [&out](const std::string& candidate) {
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) {
      out.is_directory = true;
      return false;
    }
    if (!S_ISREG(st.st_mode)) return false;
    if (access(candidate.c_str(), X_OK) != 0) {
      if (out.non_executable.empty()) out.non_executable = candidate;
      return false;
    }
    out.path = candidate;
    return true;
  };
  if (command.find('/') != std::string::npos) {
    if (!judge(command)) {
      out.error = out.non_executable.empty() ? ENOENT : EACCES;
    }
    return out;
  }
  for (absl::string_view dir : absl::StrSplit(path_list, ':')) {
    std::string candidate =
        absl::StrCat(dir.empty() ? absl::string_view(".") : dir, "/", command);
    if (judge(candidate)) return out;
  }
  out.error = out.non_executable.empty() ? ENOENT : EACCES;
  return out;
}

// The JSON-RPC id of a message as text, "" if it has none.
std::string IdText(const Json& message) {
  auto it = message.find("id");
  return it == message.end() ? "" : it->dump();
}

}  // namespace

// --- stdio ------------------------------------------------------------------

void DoctorRun::Impl::CheckExecutable() {
  v1::DoctorCheck* check = Next("executable", "Executable");
  if (check == nullptr) return;
  std::string path_list;
  if (auto it = config_.env().find("PATH"); it != config_.env().end()) {
    path_list = it->second;
  } else if (const char* env = std::getenv("PATH"); env != nullptr) {
    path_list = env;
  } else {
    path_list = "/bin:/usr/bin";
  }
  const std::string& command = config_.command();
  ExecutableLookup found = FindExecutable(command, path_list);
  if (found.error == 0) {
    Pass(check, command.find('/') == std::string::npos
                    ? absl::StrCat(command, " is ", found.path)
                    : absl::StrCat(found.path, " is executable"));
    return;
  }
  Stop("not run: the executable was not found");
  if (found.error == EACCES) {
    Fail(check, absl::StrCat(found.non_executable, " is not executable"),
         absl::StrCat("make it executable (chmod +x ", found.non_executable,
                      ") or run it through its interpreter"),
         "SPAWN_FAILED");
    return;
  }
  if (command.find('/') != std::string::npos) {
    Fail(check,
         absl::StrCat(command, found.is_directory ? " is a directory"
                                                  : " does not exist"),
         absl::StrCat("install it there, or give the right path: ",
                      UpdateHint("-- /path/to/program ARGS...")),
         "SPAWN_FAILED");
    return;
  }
  check->add_details(absl::StrCat("PATH=", path_list));
  Fail(check, absl::StrCat(command, " was not found in PATH"),
       absl::StrCat("install it, give its absolute path (",
                    UpdateHint("-- /path/to/" + command + " ARGS..."),
                    "), or set PATH in the server's env (",
                    UpdateHint("--env PATH=DIR:..."), ")"),
       "SPAWN_FAILED");
}

void DoctorRun::Impl::CheckSpawn() {
  v1::DoctorCheck* check = Next("spawn", "Process start");
  if (check == nullptr) return;
  spawn_check_ = check;
  if (absl::Status opened = OpenTransport(); !opened.ok()) {
    Fail(check, std::string(opened.message()),
         "run the command by hand with the same environment to see why",
         ErrorReason(opened));
    Stop("not run: the process did not start");
    return;
  }
  std::string found = "started";
  if (int pid = transport_->pid(); pid > 0) {
    absl::StrAppend(&found, ", pid ", pid);
  }
  Pass(check, found);
}

// --- MCP --------------------------------------------------------------------

absl::Status DoctorRun::Impl::OpenTransport() {
  v1::ServerConfig config = config_;
  // The connection timeout may not outlast the run.
  absl::Duration connect =
      config.timeouts().connection() > 0
          ? absl::Milliseconds(config.timeouts().connection())
          : absl::Seconds(30);
  connect = std::max(absl::Milliseconds(1), std::min(connect, Left()));
  config.mutable_timeouts()->set_connection(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(connect)));
  auto made = options_.transport_factory(config);
  if (!made.ok()) return made.status();
  transport_ = *std::move(made);
  transport::TransportCallbacks callbacks;
  callbacks.on_message = [this](std::string raw) { OnMessage(std::move(raw)); };
  callbacks.on_send_failed = [this](const std::string& message,
                                    absl::Status status) {
    Json parsed = Json::parse(message, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return;
    std::string id = IdText(parsed);
    if (id.empty()) return;
    absl::MutexLock lock(&mu_);
    send_failures_[id] = std::move(status);
  };
  callbacks.on_log = [this](std::string line) {
    absl::MutexLock lock(&mu_);
    if (stderr_lines_.size() < options_.max_stderr_lines) {
      stderr_lines_.push_back(Cut(line, kMaxStderrLine));
    } else {
      ++stderr_dropped_;
    }
  };
  callbacks.on_closed = [this](absl::Status status) {
    absl::MutexLock lock(&mu_);
    closed_ = std::move(status);
  };
  absl::Status started = transport_->Start(std::move(callbacks));
  if (!started.ok()) transport_.reset();
  return started;
}

void DoctorRun::Impl::OnMessage(std::string raw) {
  Json message = Json::parse(raw, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    absl::MutexLock lock(&mu_);
    if (stderr_lines_.size() < options_.max_stderr_lines) {
      stderr_lines_.push_back(
          absl::StrCat("(not JSON on the transport) ", Cut(raw, 200)));
    }
    return;
  }
  std::string id = IdText(message);
  if (message.contains("method")) {
    // A request of the server's: pings are answered, the rest refused
    // (the doctor declares no client capabilities).
    if (id.empty() || transport_ == nullptr) return;
    Json answer = {{"jsonrpc", "2.0"}, {"id", message["id"]}};
    if (message["method"] == "ping") {
      answer["result"] = Json::object();
    } else {
      answer["error"] = {{"code", engine::kMethodNotFound},
                         {"message", "Method not found"}};
    }
    transport_->Send(answer.dump()).IgnoreError();
    return;
  }
  if (id.empty()) return;
  absl::MutexLock lock(&mu_);
  answers_[id] = std::move(message);
}

absl::StatusOr<Json> DoctorRun::Impl::Request(const std::string& id_text,
                                              const Json& request) {
  if (absl::Status sent = transport_->Send(request.dump()); !sent.ok()) {
    return sent;
  }
  bool answered = WaitFor(
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return answers_.count(id_text) > 0 ||
               send_failures_.count(id_text) > 0 || closed_.has_value();
      },
      absl::InfiniteFuture());
  absl::MutexLock lock(&mu_);
  if (auto it = answers_.find(id_text); it != answers_.end()) {
    return it->second;
  }
  if (auto it = send_failures_.find(id_text); it != send_failures_.end()) {
    return it->second;
  }
  if (closed_.has_value()) {
    if (closed_->ok()) {
      return Error(v1::TRANSPORT_ERROR, "the connection closed");
    }
    return *closed_;
  }
  if (!answered && cancelled_) return absl::CancelledError("cancelled");
  return Error(v1::REQUEST_TIMEOUT,
               absl::StrCat("no answer within the diagnosis' ",
                            absl::FormatDuration(options_.timeout)));
}

void DoctorRun::Impl::CheckInitialize() {
  if (!mcp_stop_.empty()) Stop(mcp_stop_);
  v1::DoctorCheck* check = Next("initialize", "Protocol version");
  if (check == nullptr) return;
  if (transport_ == nullptr) {
    if (absl::Status opened = OpenTransport(); !opened.ok()) {
      if (FailIfOver(check)) return;
      Fail(check, absl::StrCat("cannot connect: ", opened.message()),
           "see the checks above", ErrorReason(opened));
      Stop("not run: no MCP session");
      return;
    }
  }
  Json request = {{"jsonrpc", "2.0"},
                  {"id", Json::parse(kInitializeId)},
                  {"method", "initialize"},
                  {"params", engine::InitializeParams({})}};
  auto answer = Request(kInitializeId, request);
  if (!answer.ok()) {
    Stop("not run: initialize failed");
    if (FailIfOver(check)) return;
    std::string found =
        absl::StrCat("initialize failed: ", answer.status().message());
    std::string fix = "see the checks above";
    if (config_.transport() == kTransportStdio) {
      fix = ErrorReason(answer.status()) == "PROCESS_CRASHED"
                ? "the process exited: its stderr lines (spawn check) "
                  "usually say why; run the command by hand to see more"
                : "check that the command is an MCP server speaking "
                  "newline-delimited JSON-RPC on stdout";
    }
    Fail(check, found, fix, ErrorReason(answer.status()));
    return;
  }
  const std::string asked = engine::kProtocolVersions[0];
  std::string chosen;
  if (auto result = answer->find("result");
      result != answer->end() && result->is_object()) {
    if (auto v = result->find("protocolVersion");
        v != result->end() && v->is_string()) {
      chosen = v->get<std::string>();
    }
    if (auto c = result->find("capabilities"); c != result->end()) {
      server_capabilities_ = *c;
    }
    if (auto info = result->find("serverInfo");
        info != result->end() && info->is_object()) {
      server_info_ = *info;
    }
  }
  auto outcome =
      engine::ParseInitializeResponse(answer->dump(), config_.id(), name());
  if (!outcome.ok()) {
    Stop("not run: initialize failed");
    Fail(check,
         chosen.empty()
             ? std::string(outcome.status().message())
             : absl::StrCat("asked for ", asked, "; the server chose ", chosen,
                            ", which inspectord does not speak (",
                            engine::kProtocolVersions[3], " to ", asked, ")"),
         chosen.empty() ? "the server's answer to initialize is not valid MCP"
                        : "use a server release that speaks one of "
                          "inspectord's protocol versions",
         "PROTOCOL_ERROR");
    return;
  }
  negotiated_version_ = outcome->protocol_version;
  transport_->SetProtocolVersion(negotiated_version_);
  transport_
      ->Send(Json({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})
                 .dump())
      .IgnoreError();
  std::string server;
  if (auto result = answer->find("result"); result != answer->end()) {
    if (auto info = result->find("serverInfo");
        info != result->end() && info->is_object()) {
      std::string info_name = info->value("name", "");
      std::string version = info->value("version", "");
      server = absl::StrCat(info_name, version.empty() ? "" : " ", version);
    }
  }
  std::string found = absl::StrCat(
      "asked for ", asked, "; ", server.empty() ? "the server" : server,
      " chose ", chosen, chosen == asked ? "" : " (older, supported)");
  Pass(check, found);
}

void DoctorRun::Impl::CheckTools() {
  v1::DoctorCheck* check = Next("tools", "tools/list round trip");
  if (check == nullptr) return;
  if (!server_capabilities_.is_object() ||
      !server_capabilities_.contains("tools")) {
    Skip(check, "the server declares no tools capability");
    return;
  }
  Json request = {{"jsonrpc", "2.0"},
                  {"id", Json::parse(kToolsId)},
                  {"method", "tools/list"},
                  {"params", Json::object()}};
  absl::Time began = clock_->Now();
  auto answer = Request(kToolsId, request);
  std::string took = FormatMs(clock_->Now() - began);
  if (!answer.ok()) {
    if (FailIfOver(check)) return;
    Fail(check, absl::StrCat("tools/list failed: ", answer.status().message()),
         "look at the server's logs", ErrorReason(answer.status()));
    return;
  }
  if (auto error = answer->find("error"); error != answer->end()) {
    Fail(check, absl::StrCat("tools/list answered an error: ", error->dump()),
         "look at the server's logs", "SERVER_ERROR");
    return;
  }
  auto result = answer->find("result");
  auto tools = result != answer->end() && result->is_object()
                   ? result->find("tools")
                   : answer->end();
  if (result == answer->end() || tools == result->end() || !tools->is_array()) {
    Fail(check, "the answer to tools/list has no tools array",
         "the server's answer is not valid MCP", "PROTOCOL_ERROR");
    return;
  }
  std::string found = absl::StrCat(tools->size(), " tool",
                                   tools->size() == 1 ? "" : "s", " in ", took);
  if (result->contains("nextCursor")) {
    absl::StrAppend(&found, " (first page)");
  } else {
    listed_tools_ = *tools;
  }
  Pass(check, found);
}

}  // namespace inspector::doctor
