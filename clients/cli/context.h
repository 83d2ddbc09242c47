// What every inspectorctl command shares: the global options, the gRPC
// channel and stubs, the session token, the output mode and the helpers
// that print results and errors.
//
// One Context lives for the whole process. Commands register their CLI11
// subcommands with a pointer to it; the subcommand selected by parsing
// stores its action with SetAction(), and main runs it after parsing.
// Every call made through Call() or CallServer() has a deadline and, unless
// it is open (GetHealth), the session token as `authorization: Bearer
// <token>`. The deadline is --timeout seconds when given; otherwise 10 s
// for calls that inspectord answers alone (Call) and 3600 s for calls that
// reach an MCP server (CallServer): the engine ends those itself, and
// pauses their clocks while a person answers the server's sampling or
// elicitation request, so the local deadline is only a last resort.
// Streams (Watch, Relay) have no deadline. A call in flight is cancelled by Ctrl-C
// (see interrupts.h). Not thread-safe; used from main only.
#ifndef INSPECTOR_CLIENTS_CLI_CONTEXT_H_
#define INSPECTOR_CLIENTS_CLI_CONTEXT_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/interrupts.h"
#include "clients/cli/table.h"
#include "common/errors.h"
#include "google/protobuf/message.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/doctor.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/history.grpc.pb.h"
#include "inspector/v1/intercept.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "inspector/v1/oauth.grpc.pb.h"
#include "inspector/v1/proxy.grpc.pb.h"
#include "inspector/v1/sessions.grpc.pb.h"
#include "inspector/v1/system.grpc.pb.h"

namespace inspector::cli {

inline constexpr char kDefaultAddress[] = "127.0.0.1:50051";
// Deadlines without --timeout: calls inspectord answers alone, and calls
// that reach an MCP server (the engine applies its own timeouts to those).
inline constexpr double kDaemonTimeoutSeconds = 10;
inline constexpr double kMcpServerTimeoutSeconds = 3600;

// The global flags, filled by CLI11 (see main.cc).
struct GlobalOptions {
  // --addr, or $INSPECTOR_ADDR, or kDefaultAddress.
  std::string addr = kDefaultAddress;
  // --token-file; default DefaultTokenPath(). $INSPECTOR_TOKEN wins.
  std::string token_file;
  // -o/--output: "table" or "json".
  std::string output = "table";
  // --timeout: the deadline of every call, in seconds.
  double timeout_seconds = kDaemonTimeoutSeconds;
  // Whether --timeout was given; if not, calls that reach an MCP server
  // get kMcpServerTimeoutSeconds.
  bool timeout_given = false;
  // --no-color (NO_COLOR in the environment does the same).
  bool no_color = false;
};

class Context {
 public:
  using Action = std::function<absl::Status()>;

  Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  GlobalOptions& options() { return options_; }
  const GlobalOptions& options() const { return options_; }

  // The words after "--" on the command line, if "--" was given.
  void set_command_line(std::optional<std::vector<std::string>> words) {
    command_line_ = std::move(words);
  }
  const std::optional<std::vector<std::string>>& command_line() const {
    return command_line_;
  }

  // Records what the parsed subcommand does. `takes_command_line`: whether
  // it accepts the words after "--".
  void SetAction(Action action, bool takes_command_line);
  bool has_action() const { return static_cast<bool>(action_); }
  // Declares that `command` (a CLI::App) takes `-- COMMAND [ARGS...]`,
  // for its usage line and for error hints.
  void DeclareCommandLine(const void* command) {
    command_line_commands_.push_back(command);
  }
  bool TakesCommandLine(const void* command) const {
    for (const void* c : command_line_commands_) {
      if (c == command) return true;
    }
    return false;
  }
  bool action_takes_command_line() const { return takes_command_line_; }
  // Runs the action (only valid after SetAction).
  absl::Status RunAction() { return action_(); }

  // Output mode and terminal properties.
  bool json() const { return options_.output == "json"; }
  bool stdout_color() const;
  bool stderr_color() const;
  // Columns of the terminal on stdout (see TerminalWidth in table.h); 0
  // when stdout is not a terminal.
  size_t terminal_width() const;

  // Stubs on the channel to --addr (created on first use).
  v1::SystemService::Stub* system();
  v1::ConfigService::Stub* config();
  v1::McpService::Stub* mcp();
  v1::HistoryService::Stub* history();
  v1::EventsService::Stub* events();
  v1::ProxyService::Stub* proxy();
  v1::DoctorService::Stub* doctor();
  v1::SessionService::Stub* sessions();
  v1::OAuthService::Stub* oauth();
  v1::InterceptService::Stub* intercept();
  // A new stub of `Service` on the same channel, for a service without an
  // accessor above.
  template <typename Service>
  std::unique_ptr<typename Service::Stub> NewStub() {
    return Service::NewStub(Channel());
  }

  // The session token: $INSPECTOR_TOKEN if set, otherwise the content of
  // --token-file. Failures are LocalErrors with SESSION_INVALID (exit 3).
  absl::StatusOr<std::string> Token();

  // Calls `method` on `stub` with the deadline and, when `authenticated`,
  // the token. Returns the call's status converted by FromGrpcStatus.
  template <typename Stub, typename Request, typename Response>
  absl::Status Call(Stub* stub,
                    grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                 const Request&, Response*),
                    const Request& request, Response* response,
                    bool authenticated = true) {
    return Invoke(stub, method, request, response, Reach::kDaemon,
                  authenticated);
  }

  // Call() for calls that reach an MCP server (tools/call, connect, ...):
  // without --timeout their deadline is kMcpServerTimeoutSeconds.
  template <typename Stub, typename Request, typename Response>
  absl::Status CallServer(Stub* stub,
                          grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                       const Request&,
                                                       Response*),
                          const Request& request, Response* response) {
    return Invoke(stub, method, request, response, Reach::kMcpServer,
                  /*authenticated=*/true);
  }

  // Adds the token to a streaming call; streams get no deadline.
  absl::Status PrepareStream(grpc::ClientContext* call);

  // Makes Ctrl-C during a call end the command with exit code 0 (`watch`)
  // instead of ending the process by the signal.
  void set_interrupt_is_success() {
    interrupt_is_success_ = true;
    ExitZeroOnInterrupt();
  }

  // Printing. Results go to stdout, errors, warnings and hints to stderr.
  std::ostream& out();
  absl::Status PrintJson(const google::protobuf::Message& message);
  // `json` indented by two spaces (MCP results, JSON-RPC answers).
  void PrintJson(const nlohmann::json& json);
  // A table fitted to the terminal's width (`flexible_column` is cut); when
  // stdout is not a terminal, tab-separated (Table::RenderOptions::plain).
  void PrintTable(const Table& table, int flexible_column = -1);
  void PrintWarning(const std::string& message);
  // Prints "error: ..." and "hint: ..." for `status` (see DescribeError)
  // and returns its exit code; prints nothing for AlreadyReported.
  int Fail(const absl::Status& status);
  // The same, for a failure already described.
  void PrintFailure(const Failure& failure);

  ErrorContext error_context() const;

 private:
  // Whom a call reaches, for its default deadline.
  enum class Reach { kDaemon, kMcpServer };

  template <typename Stub, typename Request, typename Response>
  absl::Status Invoke(Stub* stub,
                      grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                   const Request&, Response*),
                      const Request& request, Response* response, Reach reach,
                      bool authenticated) {
    grpc::ClientContext call;
    absl::Status prepared = PrepareCall(&call, authenticated, reach);
    if (!prepared.ok()) return prepared;
    grpc::Status status;
    {
      CancelOnInterrupt interrupt(&call);
      status = (stub->*method)(&call, request, response);
    }
    if (int signal_number = InterruptSignal(); signal_number != 0) {
      return Interrupted(signal_number);
    }
    return FromGrpcStatus(status);
  }

  absl::Status PrepareCall(grpc::ClientContext* call, bool authenticated,
                           Reach reach);
  // A call was cancelled by `signal_number`: exit 0 or die by the signal.
  absl::Status Interrupted(int signal_number);
  absl::Status AddToken(grpc::ClientContext* call);
  std::shared_ptr<grpc::Channel> Channel();

  GlobalOptions options_;
  std::optional<std::vector<std::string>> command_line_;
  Action action_;
  bool takes_command_line_ = false;
  std::vector<const void*> command_line_commands_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SystemService::Stub> system_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::McpService::Stub> mcp_;
  std::unique_ptr<v1::HistoryService::Stub> history_;
  std::unique_ptr<v1::EventsService::Stub> events_;
  std::unique_ptr<v1::ProxyService::Stub> proxy_;
  std::unique_ptr<v1::DoctorService::Stub> doctor_;
  std::unique_ptr<v1::SessionService::Stub> sessions_;
  std::unique_ptr<v1::OAuthService::Stub> oauth_;
  std::unique_ptr<v1::InterceptService::Stub> intercept_;
  // The deadline and reach of the latest call, for error messages.
  double last_timeout_seconds_ = kDaemonTimeoutSeconds;
  bool last_call_reaches_server_ = false;
  bool interrupt_is_success_ = false;
  std::optional<absl::StatusOr<std::string>> token_;
};

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_CONTEXT_H_
