#include "clients/cli/server_edit.h"

#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/text.h"
#include "common/secrets.h"
#include "common/status_macros.h"
#include "common/transports.h"

namespace inspector::cli {
namespace {

constexpr const char* kMaskOrder[] = {
    "name", "transport", "command", "args",           "env",
    "cwd",  "url",       "headers", "connectionMode", "timeouts", "protocol"};

constexpr char kAddExamples[] =
    "for example `inspectorctl servers add everything -- npx -y "
    "@modelcontextprotocol/server-everything` or `inspectorctl servers add "
    "remote --url https://example.com/mcp`";

absl::Status CheckTransport(const std::string& transport) {
  if (IsKnownTransport(transport)) return absl::OkStatus();
  return UsageError(absl::StrCat("unknown transport \"", transport, "\""),
                    "transports: stdio, streamableHttp, sse");
}

absl::Status CheckProtocol(const std::string& protocol) {
  if (protocol == "legacy" || protocol == "modern" || protocol == "auto") {
    return absl::OkStatus();
  }
  return UsageError(absl::StrCat("unknown protocol era \"", protocol, "\""),
                    "eras: legacy, modern, auto");
}

absl::Status CheckMode(const std::string& mode) {
  if (mode == "direct" || mode == "proxy" || mode == "auto") {
    return absl::OkStatus();
  }
  return UsageError(absl::StrCat("unknown connection mode \"", mode, "\""),
                    "modes: direct, proxy, auto");
}

absl::Status CheckCommandLine(const std::vector<std::string>& command_line) {
  if (command_line.empty() || command_line.front().empty()) {
    return UsageError("no command after `--`",
                      "put the server's executable and its arguments after "
                      "`--`, for example `-- npx -y "
                      "@modelcontextprotocol/server-everything`");
  }
  return absl::OkStatus();
}

void SetCommandLine(const std::vector<std::string>& command_line,
                    v1::ServerConfig* server) {
  server->set_command(command_line.front());
  server->clear_args();
  for (size_t i = 1; i < command_line.size(); ++i) {
    server->add_args(command_line[i]);
  }
}

}  // namespace

absl::StatusOr<v1::ServerConfig> BuildServerForAdd(const AddOptions& options) {
  if (options.name.empty()) {
    return UsageError("the server name is empty");
  }
  const bool has_command = options.command_line.has_value();
  const bool has_url = options.url.has_value();
  if (has_command && has_url) {
    return UsageError(
        "give either a command after `--` (stdio) or --url (HTTP), not both");
  }
  if (!has_command && !has_url) {
    return UsageError(
        "servers add needs the server's command after `--` (stdio) or --url "
        "(HTTP)",
        kAddExamples);
  }
  if (has_command) RETURN_IF_ERROR(CheckCommandLine(*options.command_line));
  if (has_url && options.url->empty()) return UsageError("--url is empty");

  std::string transport;
  if (options.transport.has_value()) {
    transport = *options.transport;
    RETURN_IF_ERROR(CheckTransport(transport));
  } else {
    transport = has_command ? std::string(kTransportStdio)
                            : DefaultTransportForUrl(*options.url);
  }
  if (transport == kTransportStdio && !has_command) {
    return UsageError("--transport stdio needs the command after `--`",
                      kAddExamples);
  }
  if (IsUrlTransport(transport) && !has_url) {
    return UsageError(absl::StrCat("--transport ", transport, " needs --url"),
                      kAddExamples);
  }

  v1::ServerConfig server;
  server.set_name(options.name);
  server.set_transport(transport);
  if (transport == kTransportStdio) {
    if (!options.headers.empty()) {
      return UsageError("--header applies to HTTP servers (--url)",
                        "pass settings to a stdio server with --env K=V");
    }
    SetCommandLine(*options.command_line, &server);
    for (const auto& [key, value] : options.env) {
      (*server.mutable_env())[key] = value;
    }
    if (options.cwd.has_value() && !options.cwd->empty()) {
      server.set_cwd(*options.cwd);
    }
  } else {
    if (!options.env.empty() || options.cwd.has_value()) {
      return UsageError("--env and --cwd apply to stdio servers",
                        "pass settings to an HTTP server with --header");
    }
    server.set_url(*options.url);
    for (const auto& [key, value] : options.headers) {
      (*server.mutable_headers())[key] = value;
    }
  }
  if (options.mode.has_value()) {
    RETURN_IF_ERROR(CheckMode(*options.mode));
    if (*options.mode != "auto") server.set_connection_mode(*options.mode);
  }
  if (options.protocol.has_value()) {
    RETURN_IF_ERROR(CheckProtocol(*options.protocol));
    server.set_protocol(*options.protocol);
  }
  if (options.connection_timeout_ms.has_value()) {
    server.mutable_timeouts()->set_connection(*options.connection_timeout_ms);
  }
  if (options.request_timeout_ms.has_value()) {
    server.mutable_timeouts()->set_request(*options.request_timeout_ms);
  }
  return server;
}

absl::StatusOr<UpdatePlan> PlanServerUpdate(const v1::ServerConfig& current,
                                            const UpdateOptions& options) {
  UpdatePlan plan;
  plan.server = current;
  v1::ServerConfig& server = plan.server;
  std::set<std::string> changed;

  plan.old_transport = EffectiveTransport(current);
  const bool was_stdio = plan.old_transport == kTransportStdio;
  const bool has_command = options.command_line.has_value();
  const bool has_url = options.url.has_value();
  if (has_command) RETURN_IF_ERROR(CheckCommandLine(*options.command_line));
  if (has_url && options.url->empty()) return UsageError("--url is empty");
  if (has_command && has_url) {
    return UsageError(
        "give either a command after `--` (stdio) or --url (HTTP), not both");
  }

  std::string transport = plan.old_transport;
  if (options.transport.has_value()) {
    RETURN_IF_ERROR(CheckTransport(*options.transport));
    transport = *options.transport;
  } else if (has_command && !was_stdio) {
    transport = std::string(kTransportStdio);
  } else if (has_url && was_stdio) {
    transport = DefaultTransportForUrl(*options.url);
  }
  plan.new_transport = transport;
  const bool to_stdio = transport == kTransportStdio;

  if (transport != plan.old_transport) {
    server.set_transport(transport);
    changed.insert("transport");
    if (to_stdio && !has_command) {
      return UsageError(
          absl::StrCat("switching to stdio needs the server's command"),
          "add `-- COMMAND [ARGS...]` at the end");
    }
    if (!to_stdio && was_stdio && !has_url) {
      return UsageError(
          absl::StrCat("switching to ", transport, " needs --url"));
    }
    if (to_stdio != was_stdio && !options.mode.has_value()) {
      // The old mode was chosen for the old transport (the daemon fills it
      // in); let the daemon choose again unless --mode says otherwise.
      server.clear_connection_mode();
      changed.insert("connectionMode");
    }
    if (to_stdio) {
      server.clear_url();
      server.clear_headers();
      changed.insert({"url", "headers"});
    } else if (was_stdio) {
      server.clear_command();
      server.clear_args();
      server.clear_env();
      server.clear_cwd();
      changed.insert({"command", "args", "env", "cwd"});
    }
  }

  if (to_stdio) {
    if (has_url) {
      return UsageError("--url does not apply to a stdio server",
                        "to switch it to HTTP, add --transport "
                        "streamableHttp (or sse)");
    }
    if (!options.set_headers.empty() || !options.unset_headers.empty()) {
      return UsageError("--header and --unset-header apply to HTTP servers");
    }
  } else {
    if (has_command) {
      return UsageError("a command line does not apply to an HTTP server",
                        "to switch it to stdio, add --transport stdio");
    }
    if (!options.set_env.empty() || !options.unset_env.empty() ||
        options.cwd.has_value()) {
      return UsageError("--env, --unset-env and --cwd apply to stdio servers");
    }
  }

  if (options.name.has_value()) {
    if (options.name->empty()) return UsageError("--name is empty");
    if (*options.name != current.name()) {
      server.set_name(*options.name);
      changed.insert("name");
    }
  }
  if (has_command) {
    SetCommandLine(*options.command_line, &server);
    changed.insert({"command", "args"});
  }
  if (has_url) {
    server.set_url(*options.url);
    changed.insert("url");
  }
  for (const auto& key : options.unset_env) {
    if (server.mutable_env()->erase(key) == 0) {
      plan.warnings.push_back(
          absl::StrCat("--unset-env ", key, ": ", key, " was not set"));
    }
    changed.insert("env");
  }
  for (const auto& [key, value] : options.set_env) {
    (*server.mutable_env())[key] = value;
    changed.insert("env");
  }
  for (const auto& key : options.unset_headers) {
    // Header names are case-insensitive.
    bool found = false;
    auto* headers = server.mutable_headers();
    for (auto it = headers->begin(); it != headers->end();) {
      if (absl::EqualsIgnoreCase(it->first, key)) {
        it = headers->erase(it);
        found = true;
      } else {
        ++it;
      }
    }
    if (!found) {
      plan.warnings.push_back(
          absl::StrCat("--unset-header ", key, ": ", key, " was not set"));
    }
    changed.insert("headers");
  }
  for (const auto& [key, value] : options.set_headers) {
    auto* headers = server.mutable_headers();
    for (auto it = headers->begin(); it != headers->end();) {
      if (absl::EqualsIgnoreCase(it->first, key) && it->first != key) {
        it = headers->erase(it);
      } else {
        ++it;
      }
    }
    (*headers)[key] = value;
    changed.insert("headers");
  }
  if (options.cwd.has_value()) {
    if (options.cwd->empty()) {
      server.clear_cwd();
    } else {
      server.set_cwd(*options.cwd);
    }
    changed.insert("cwd");
  }
  if (options.mode.has_value()) {
    RETURN_IF_ERROR(CheckMode(*options.mode));
    if (*options.mode == "auto") {
      server.clear_connection_mode();
    } else {
      server.set_connection_mode(*options.mode);
    }
    changed.insert("connectionMode");
  }
  if (options.protocol.has_value()) {
    RETURN_IF_ERROR(CheckProtocol(*options.protocol));
    server.set_protocol(*options.protocol);
    changed.insert("protocol");
  }
  if (options.connection_timeout_ms.has_value()) {
    server.mutable_timeouts()->set_connection(*options.connection_timeout_ms);
    changed.insert("timeouts");
  }
  if (options.request_timeout_ms.has_value()) {
    server.mutable_timeouts()->set_request(*options.request_timeout_ms);
    changed.insert("timeouts");
  }

  if (changed.empty()) {
    return UsageError("nothing to change",
                      "give at least one option, see `inspectorctl servers "
                      "update --help`");
  }
  for (const char* field : kMaskOrder) {
    if (changed.count(field) > 0) plan.mask.emplace_back(field);
  }
  return plan;
}

std::string EffectiveTransport(const v1::ServerConfig& server) {
  if (!server.transport().empty()) return server.transport();
  if (!server.command().empty()) return std::string(kTransportStdio);
  if (!server.url().empty()) return DefaultTransportForUrl(server.url());
  return std::string(kTransportStdio);
}

std::string EffectiveMode(const v1::ServerConfig& server) {
  if (!server.connection_mode().empty()) return server.connection_mode();
  return EffectiveTransport(server) == kTransportStdio ? "proxy" : "direct";
}

std::string ServerTarget(const v1::ServerConfig& server, bool show_secrets) {
  if (EffectiveTransport(server) == kTransportStdio) {
    std::vector<std::string> argv = {server.command()};
    std::string_view previous;
    for (const std::string& arg : server.args()) {
      argv.push_back(show_secrets ? arg : MaskSecretArg(previous, arg));
      previous = arg;
    }
    return ShellJoin(argv);
  }
  return show_secrets ? server.url() : MaskSecretsInUrl(server.url());
}

}  // namespace inspector::cli
