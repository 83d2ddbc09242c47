// inspectorctl: the terminal client of inspectord.
//
// Flags are parsed here (CLI11) into the Context's GlobalOptions; each
// command group lives in commands/. Nothing throws past main: CLI11's parse
// errors become exit code 1 and every other failure goes through
// Context::Fail (see exit_codes.h for the codes).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/args.h"
#include "clients/cli/commands/client_requests.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/context.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/interrupts.h"
#include "common/token.h"
#include "common/version.h"

namespace inspector::cli {
namespace {

constexpr char kDescription[] =
    "inspectorctl talks to inspectord, the MCP inspector daemon: it manages\n"
    "the MCP servers the daemon knows, talks to them through it and shows\n"
    "their traffic.";

// The deepest subcommand selected while parsing, and its full name.
const CLI::App* SelectedCommand(const CLI::App* app, std::string* path) {
  *path = app->get_name();
  const CLI::App* command = app;
  while (true) {
    auto selected = command->get_subcommands();
    if (selected.empty()) return command;
    command = selected.front();
    *path += " " + command->get_name();
  }
}

int UsageFailure(Context& context, const std::string& message,
                 const std::string& hint) {
  Failure failure;
  failure.exit_code = kExitUsage;
  failure.message = message;
  failure.hint = hint;
  context.PrintFailure(failure);
  return kExitUsage;
}

int ParseError(Context& context, const CLI::App& app,
               const CLI::ParseError& error) {
  std::string path;
  SelectedCommand(&app, &path);
  return UsageFailure(context, error.what(),
                      absl::StrCat("see `", path, " --help`"));
}

// Arguments no command took. CLI11 leaves them in `remaining()` because
// extras are allowed, so that the message can show them in order.
int ExtrasError(Context& context, const CLI::App& app,
                const std::vector<std::string>& extras) {
  std::string path;
  const CLI::App* command = SelectedCommand(&app, &path);
  const std::string help_hint = absl::StrCat("see `", path, " --help`");
  const bool is_option = !extras.front().empty() && extras.front()[0] == '-';
  const auto subcommands = command->get_subcommands({});
  if (!is_option && !subcommands.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : subcommands) names.push_back(sub->get_name());
    const std::string parent =
        path == app.get_name() ? ""
                               : path.substr(app.get_name().size() + 1) + " ";
    return UsageFailure(
        context,
        absl::StrCat("unknown command \"", parent, extras.front(), "\""),
        absl::StrCat("commands: ", absl::StrJoin(names, ", "), "; ",
                     help_hint));
  }
  if (!is_option && context.TakesCommandLine(command)) {
    return UsageFailure(
        context,
        absl::StrCat("unexpected arguments: ", absl::StrJoin(extras, " ")),
        absl::StrCat(
            "put the server's command line after `--`, for example `", path,
            " NAME -- npx -y @modelcontextprotocol/server-everything`"));
  }
  if (is_option) {
    return UsageFailure(
        context, absl::StrCat("unknown option ", extras.front()), help_hint);
  }
  return UsageFailure(
      context,
      absl::StrCat(extras.size() == 1 ? "unexpected argument: "
                                      : "unexpected arguments: ",
                   absl::StrJoin(extras, " ")),
      help_hint);
}

// CLI11's help, with `[-- COMMAND [ARGS...]]` in the usage line of the
// commands that take a command line.
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(const Context* context) : context_(context) {}

  std::string make_footer(const CLI::App* app) const override {
    std::string footer = CLI::Formatter::make_footer(app);
    if (app->get_parent() == nullptr) return footer;
    return absl::StrCat(
        footer, footer.empty() ? "" : "\n",
        "Global options (anywhere on the line): --addr, --token-file,\n"
        "-o/--output table|json, --timeout, --no-color; see `inspectorctl "
        "--help`.\n");
  }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    if (context_->TakesCommandLine(app) && !usage.empty() &&
        usage.back() == '\n') {
      usage.insert(usage.size() - 1, " [-- COMMAND [ARGS...]]");
    }
    return usage;
  }

 private:
  const Context* context_;
};

// Returns the --timeout option, to learn whether it was given.
CLI::Option* AddGlobalOptions(CLI::App& app, GlobalOptions& options) {
  options.token_file = DefaultTokenPath();
  app.add_option("--addr", options.addr,
                 "inspectord's gRPC address (host:port)")
      ->envname("INSPECTOR_ADDR")
      ->capture_default_str()
      ->type_name("HOST:PORT");
  app.add_option("--token-file", options.token_file,
                 "Session token file ($INSPECTOR_TOKEN, the token itself, "
                 "takes precedence)")
      ->capture_default_str()
      ->type_name("PATH");
  app.add_option("-o,--output", options.output, "Output format: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  CLI::Option* timeout =
      app.add_option("--timeout", options.timeout_seconds,
                     "Deadline of each call to inspectord, in seconds "
                     "(default: 10, and 3600 for calls that reach an MCP "
                     "server; watch has none)")
          ->check([](const std::string& value) -> std::string {
            double seconds = 0;
            if (!absl::SimpleAtod(value, &seconds) || !(seconds > 0) ||
                seconds > 86400 * 365) {
              return "must be a number of seconds greater than 0";
            }
            return "";
          })
          ->type_name("SECONDS");
  app.add_flag("--no-color", options.no_color,
               "No colors (also when $NO_COLOR is set or stdout is not a "
               "terminal)");
  return timeout;
}

int Main(int argc, char** argv) {
  Context context;
  CLI::App app(kDescription, "inspectorctl");
  // Global flags may follow the subcommand (`servers list -o json`).
  app.fallthrough();
  app.formatter(std::make_shared<HelpFormatter>(&context));
  // One command per invocation: a server named "status" stays a name.
  app.require_subcommand(0, 1);
  // Unexpected arguments are reported by ExtrasError (inherited).
  app.allow_extras();
  app.set_version_flag("--version", absl::StrCat("inspectorctl ", Version()),
                       "Print inspectorctl's version and exit");
  CLI::Option* timeout = AddGlobalOptions(app, context.options());
  AddStatusCommand(&app, &context);
  AddServersCommands(&app, &context);
  AddBridgeCommands(&app, &context);
  AddUiCommand(&app, &context);
  AddHelpCommand(&app, &context);
  for (CLI::App* command : app.get_subcommands({})) {
    command->group(kDaemonGroup);
  }
  AddConnectionCommands(&app, &context);
  AddDoctorCommand(&app, &context);
  AddLintCommand(&app, &context);
  AddDriftCommand(&app, &context);
  AddAuthCommands(&app, &context);
  AddToolsCommands(&app, &context);
  AddResourcesCommands(&app, &context);
  AddPromptsCommands(&app, &context);
  AddSkillsCommands(&app, &context);
  AddRpcCommand(&app, &context);
  AddHistoryCommands(&app, &context);
  AddSessionsCommands(&app, &context);
  AddRecordingsCommands(&app, &context);
  AddWatchCommand(&app, &context);
  AddProxyCommand(&app, &context);
  AddClientRequestsCommands(&app, &context);
  AddInterceptCommands(&app, &context);
  AddTuiCommand(&app, &context);
  // Set last: subcommands copy their parent's footer when created.
  app.footer(absl::StrCat(
      "Environment: INSPECTOR_ADDR, INSPECTOR_TOKEN, INSPECTOR_TOKEN_FILE, "
      "NO_COLOR\n"
      "\n"
      "Deadlines: --timeout SECONDS applies to every call; without it, calls\n"
      "that inspectord answers alone get 10 s and calls that reach an MCP\n"
      "server (connect, call, read, rpc, ...) get 3600 s (the daemon's own\n"
      "timeouts end them sooner; they pause while a person answers).\n"
      "watch has no deadline. Ctrl-C cancels the call in flight.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl status\n"
      "  inspectorctl servers add everything -- npx -y "
      "@modelcontextprotocol/server-everything\n"
      "  inspectorctl servers list -o json\n"
      "  inspectorctl tools everything\n"
      "  inspectorctl call everything echo message=hello\n"
      "  inspectorctl rpc everything tools/list\n"
      "  inspectorctl history --server everything --since 10m\n"
      "  inspectorctl watch --server everything\n"
      "  inspectorctl pending --follow\n"
      "  inspectorctl respond 1a2b3c4d name=Ada\n"
      "  inspectorctl break add 'method=tools/call,target=echo'\n"
      "  inspectorctl held\n"
      "  inspectorctl modify h-1\n"
      "  inspectorctl tui\n"
      "\n",
      ExitCodesHelp()));

  std::vector<std::string> args(argv + 1, argv + argc);
  SplitArgs split = SplitAtDoubleDash(args);
  if (split.has_command_line) context.set_command_line(split.command_line);
  try {
    std::vector<std::string> reversed(split.options.rbegin(),
                                      split.options.rend());
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(error);  // --help, --version
      return kExitOk;
    }
    return ParseError(context, app, error);
  }

  context.options().timeout_given = timeout->count() > 0;
  if (std::vector<std::string> extras = app.remaining(/*recurse=*/true);
      !extras.empty()) {
    return ExtrasError(context, app, extras);
  }
  if (absl::Status valid = ValidateAddress(context.options().addr);
      !valid.ok()) {
    return context.Fail(valid);
  }
  if (!context.has_action()) {
    // `inspectorctl` or `inspectorctl servers` alone: show what to type.
    std::cerr << app.help();
    return kExitUsage;
  }
  if (split.has_command_line && !context.action_takes_command_line()) {
    std::string path;
    SelectedCommand(&app, &path);
    return UsageFailure(
        context,
        absl::StrCat("`", path, "` takes no command line after `--` (got `-- ",
                     absl::StrJoin(split.command_line, " "), "`)"),
        "only `servers add` and `servers update` take `-- COMMAND [ARGS...]`");
  }
  absl::Status status = context.RunAction();
  if (!status.ok()) return context.Fail(status);
  return kExitOk;
}

}  // namespace
}  // namespace inspector::cli

int main(int argc, char** argv) {
  // First, before any other thread exists (see interrupts.h).
  inspector::cli::InstallInterruptHandling();
  try {
    return inspector::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return inspector::cli::kExitOther;
  } catch (...) {
    std::cerr << "error: unexpected failure\n";
    return inspector::cli::kExitOther;
  }
}
