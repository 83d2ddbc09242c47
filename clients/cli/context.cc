#include "clients/cli/context.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/server_views.h"
#include "common/token.h"
#include "common/version.h"

namespace inspector::cli {
namespace {

// Answers larger than gRPC's default 4 MiB (big exports) are fine.
constexpr int kMaxReceiveBytes = 64 << 20;

constexpr char kTokenHint[] =
    "start inspectord once to create it, or set $INSPECTOR_TOKEN / "
    "--token-file";

bool EnvSet(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

bool ColorAllowed(int fd, bool no_color) {
  if (no_color || EnvSet("NO_COLOR")) return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string(term) == "dumb") return false;
  return isatty(fd) == 1;
}

const char* Style(bool color, const char* code) { return color ? code : ""; }

}  // namespace

Context::Context() = default;

void Context::SetAction(Action action, bool takes_command_line) {
  action_ = std::move(action);
  takes_command_line_ = takes_command_line;
}

bool Context::stdout_color() const {
  return ColorAllowed(STDOUT_FILENO, options_.no_color);
}

bool Context::stderr_color() const {
  return ColorAllowed(STDERR_FILENO, options_.no_color);
}

size_t Context::terminal_width() const {
  if (isatty(STDOUT_FILENO) != 1) return 0;
  return TerminalWidth(std::getenv("COLUMNS"), [] {
    struct winsize size {};
    return ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
  });
}

std::shared_ptr<grpc::Channel> Context::Channel() {
  if (!channel_) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
    args.SetString(GRPC_ARG_PRIMARY_USER_AGENT_STRING,
                   absl::StrCat("inspectorctl/", Version()));
    channel_ = grpc::CreateCustomChannel(
        options_.addr, grpc::InsecureChannelCredentials(), args);
  }
  return channel_;
}

v1::SystemService::Stub* Context::system() {
  if (!system_) system_ = v1::SystemService::NewStub(Channel());
  return system_.get();
}

v1::ConfigService::Stub* Context::config() {
  if (!config_) config_ = v1::ConfigService::NewStub(Channel());
  return config_.get();
}

v1::McpService::Stub* Context::mcp() {
  if (!mcp_) mcp_ = v1::McpService::NewStub(Channel());
  return mcp_.get();
}

v1::HistoryService::Stub* Context::history() {
  if (!history_) history_ = v1::HistoryService::NewStub(Channel());
  return history_.get();
}

v1::SessionService::Stub* Context::sessions() {
  if (!sessions_) sessions_ = v1::SessionService::NewStub(Channel());
  return sessions_.get();
}

v1::EventsService::Stub* Context::events() {
  if (!events_) events_ = v1::EventsService::NewStub(Channel());
  return events_.get();
}

v1::ProxyService::Stub* Context::proxy() {
  if (!proxy_) proxy_ = v1::ProxyService::NewStub(Channel());
  return proxy_.get();
}

v1::InterceptService::Stub* Context::intercept() {
  if (!intercept_) intercept_ = v1::InterceptService::NewStub(Channel());
  return intercept_.get();
}

v1::DoctorService::Stub* Context::doctor() {
  if (!doctor_) doctor_ = v1::DoctorService::NewStub(Channel());
  return doctor_.get();
}

v1::OAuthService::Stub* Context::oauth() {
  if (!oauth_) oauth_ = v1::OAuthService::NewStub(Channel());
  return oauth_.get();
}

absl::StatusOr<std::string> Context::Token() {
  if (token_.has_value()) return *token_;
  std::string token;
  if (const char* env = std::getenv("INSPECTOR_TOKEN"); env && *env) {
    token = std::string(absl::StripAsciiWhitespace(env));
  } else {
    absl::StatusOr<std::string> read = ReadToken(options_.token_file);
    if (!read.ok()) {
      if (absl::IsNotFound(read.status())) {
        token_ = LocalError(
            v1::SESSION_INVALID,
            absl::StrCat("no session token found at ", options_.token_file),
            kTokenHint);
      } else {
        token_ = LocalError(v1::SESSION_INVALID,
                            std::string(read.status().message()),
                            "point --token-file at inspectord's token file, "
                            "or set $INSPECTOR_TOKEN");
      }
      return *token_;
    }
    token = *std::move(read);
  }
  for (char c : token) {
    if (c < 0x21 || c > 0x7E) {
      token_ = LocalError(v1::SESSION_INVALID,
                          "the session token contains characters that "
                          "cannot be sent (spaces or control characters)",
                          kTokenHint);
      return *token_;
    }
  }
  if (token.empty()) {
    token_ = LocalError(v1::SESSION_INVALID, "the session token is empty",
                        kTokenHint);
    return *token_;
  }
  token_ = token;
  return *token_;
}

absl::Status Context::AddToken(grpc::ClientContext* call) {
  absl::StatusOr<std::string> token = Token();
  if (!token.ok()) return token.status();
  call->AddMetadata("authorization", absl::StrCat("Bearer ", *token));
  return absl::OkStatus();
}

absl::Status Context::PrepareCall(grpc::ClientContext* call, bool authenticated,
                                  Reach reach) {
  if (authenticated) {
    absl::Status added = AddToken(call);
    if (!added.ok()) return added;
  }
  const bool reaches_server = reach == Reach::kMcpServer;
  const double seconds = options_.timeout_given || !reaches_server
                             ? options_.timeout_seconds
                             : kMcpServerTimeoutSeconds;
  last_timeout_seconds_ = seconds;
  last_call_reaches_server_ = reaches_server;
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  call->set_deadline(std::chrono::system_clock::now() + timeout);
  return absl::OkStatus();
}

absl::Status Context::Interrupted(int signal_number) {
  if (interrupt_is_success_) return AlreadyReported(kExitOk);
  DieOfSignal(signal_number);
}

absl::Status Context::PrepareStream(grpc::ClientContext* call) {
  last_call_reaches_server_ = false;
  return AddToken(call);
}

std::ostream& Context::out() { return std::cout; }

absl::Status Context::PrintJson(const google::protobuf::Message& message) {
  absl::StatusOr<std::string> json = ProtoToJson(message);
  if (!json.ok()) return json.status();
  std::cout << *json << std::flush;
  return absl::OkStatus();
}

void Context::PrintJson(const nlohmann::json& json) {
  std::cout << json.dump(2, ' ', false,
                         nlohmann::json::error_handler_t::replace)
            << "\n"
            << std::flush;
}

void Context::PrintTable(const Table& table, int flexible_column) {
  Table::RenderOptions render;
  render.bold_header = stdout_color();
  render.max_width = terminal_width();
  render.flexible_column = flexible_column;
  render.plain = isatty(STDOUT_FILENO) != 1;
  std::cout << table.Render(render) << std::flush;
}

void Context::PrintWarning(const std::string& message) {
  const bool color = stderr_color();
  std::cerr << Style(color, "\033[1;33m")
            << "warning:" << Style(color, "\033[0m") << " " << message << "\n";
}

void Context::PrintFailure(const Failure& failure) {
  const bool color = stderr_color();
  std::cout << std::flush;
  std::cerr << Style(color, "\033[1;31m") << "error:" << Style(color, "\033[0m")
            << " " << failure.message << "\n";
  if (!failure.hint.empty()) {
    std::cerr << Style(color, "\033[1;36m")
              << "hint:" << Style(color, "\033[0m") << " " << failure.hint
              << "\n";
  }
  std::cerr << std::flush;
}

int Context::Fail(const absl::Status& status) {
  Failure failure = DescribeError(status, error_context());
  if (!IsAlreadyReported(status)) PrintFailure(failure);
  return failure.exit_code;
}

ErrorContext Context::error_context() const {
  ErrorContext context;
  context.address = options_.addr;
  context.timeout_seconds = last_timeout_seconds_;
  context.reaches_mcp_server = last_call_reaches_server_;
  context.token_source =
      EnvSet("INSPECTOR_TOKEN") ? kTokenEnv : options_.token_file;
  return context;
}

}  // namespace inspector::cli
