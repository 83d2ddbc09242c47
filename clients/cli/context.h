// What every inspectorctl command shares: the global options, the gRPC
// channel and stubs, the session token, the output mode and the helpers
// that print results and errors.
//
// One Context lives for the whole process. Commands register their CLI11
// subcommands with a pointer to it; the subcommand selected by parsing
// stores its action with SetAction(), and main runs it after parsing.
// Every call made through Call() has a deadline of --timeout seconds and,
// unless it is open (GetHealth), the session token as
// `authorization: Bearer <token>`. Not thread-safe; used from main only.
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
#include "clients/cli/table.h"
#include "common/errors.h"
#include "google/protobuf/message.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/system.grpc.pb.h"

namespace inspector::cli {

inline constexpr char kDefaultAddress[] = "127.0.0.1:50051";

// The global flags, filled by CLI11 (see main.cc).
struct GlobalOptions {
  // --addr, or $INSPECTOR_ADDR, or kDefaultAddress.
  std::string addr = kDefaultAddress;
  // --token-file; default DefaultTokenPath(). $INSPECTOR_TOKEN wins.
  std::string token_file;
  // -o/--output: "table" or "json".
  std::string output = "table";
  // --timeout: the deadline of every call, in seconds.
  double timeout_seconds = 10;
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
  // Columns of the terminal on stdout; 0 when stdout is not a terminal.
  size_t terminal_width() const;

  // Stubs on the channel to --addr (created on first use).
  v1::SystemService::Stub* system();
  v1::ConfigService::Stub* config();

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
    grpc::ClientContext call;
    absl::Status prepared = PrepareCall(&call, authenticated);
    if (!prepared.ok()) return prepared;
    return FromGrpcStatus((stub->*method)(&call, request, response));
  }

  // Printing. Results go to stdout, errors, warnings and hints to stderr.
  std::ostream& out();
  absl::Status PrintJson(const google::protobuf::Message& message);
  void PrintJson(const nlohmann::json& json);
  void PrintTable(const Table& table, int flexible_column = -1);
  void PrintWarning(const std::string& message);
  // Prints "error: ..." and "hint: ..." for `status` (see DescribeError)
  // and returns its exit code; prints nothing for AlreadyReported.
  int Fail(const absl::Status& status);
  // The same, for a failure already described.
  void PrintFailure(const Failure& failure);

  ErrorContext error_context() const;

 private:
  absl::Status PrepareCall(grpc::ClientContext* call, bool authenticated);
  std::shared_ptr<grpc::Channel> Channel();

  GlobalOptions options_;
  std::optional<std::vector<std::string>> command_line_;
  Action action_;
  bool takes_command_line_ = false;
  std::vector<const void*> command_line_commands_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SystemService::Stub> system_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::optional<absl::StatusOr<std::string>> token_;
};

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_CONTEXT_H_
