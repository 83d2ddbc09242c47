// `inspectorctl servers ...`: list, get, add, update, rm, import, export.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/args.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/commands/sessions_subcommands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/server_edit.h"
#include "clients/cli/server_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"
#include "common/transports.h"
#include "common/utf8.h"
#include "google/protobuf/empty.pb.h"

namespace inspector::cli {
namespace {

using ConfigStub = v1::ConfigService::Stub;

constexpr int kTargetColumn = 2;

// Flags shared by `servers add` and `servers update`.
struct EditFlags {
  std::string url;
  std::string transport;
  std::vector<std::string> env;
  std::vector<std::string> headers;
  std::string cwd;
  std::string mode;
  std::string protocol;
  uint32_t connection_timeout_ms = 0;
  uint32_t request_timeout_ms = 0;

  CLI::Option* url_option = nullptr;
  CLI::Option* transport_option = nullptr;
  CLI::Option* cwd_option = nullptr;
  CLI::Option* mode_option = nullptr;
  CLI::Option* protocol_option = nullptr;
  CLI::Option* connection_timeout_option = nullptr;
  CLI::Option* request_timeout_option = nullptr;
};

void AddEditFlags(CLI::App* command, EditFlags* flags) {
  flags->url_option =
      command
          ->add_option("--url", flags->url,
                       "HTTP server: its URL (https://host/mcp)")
          ->type_name("URL");
  flags->transport_option =
      command
          ->add_option("--transport", flags->transport,
                       "stdio, streamableHttp or sse; default: stdio with "
                       "`-- COMMAND`, with --url sse if the path ends in "
                       "/sse, else streamableHttp")
          ->check(CLI::IsMember({std::string(kTransportStdio),
                                 std::string(kTransportStreamableHttp),
                                 std::string(kTransportSse)}))
          ->type_name("TRANSPORT");
  command
      ->add_option("--env", flags->env,
                   "stdio: environment variable K=V (repeatable); a bare K "
                   "passes this shell's $K")
      ->allow_extra_args(false)
      ->type_name("K=V");
  command
      ->add_option("--header", flags->headers,
                   "HTTP: header \"Name: value\" or Name=value (repeatable)")
      ->allow_extra_args(false)
      ->type_name("HEADER");
  flags->cwd_option =
      command
          ->add_option("--cwd", flags->cwd,
                       "stdio: working directory of the process")
          ->type_name("DIR");
  flags->mode_option =
      command
          ->add_option("--mode", flags->mode,
                       "connection mode: direct, proxy, or auto (stdio: "
                       "proxy, HTTP: direct)")
          ->check(CLI::IsMember({"direct", "proxy", "auto"}))
          ->type_name("MODE");
  flags->protocol_option =
      command
          ->add_option("--protocol", flags->protocol,
                       "protocol era: legacy (initialize handshake), modern "
                       "(MCP 2026-07-28), or auto (probe with "
                       "server/discover, fall back to legacy; the default)")
          ->check(CLI::IsMember({"legacy", "modern", "auto"}))
          ->type_name("ERA");
  flags->connection_timeout_option =
      command
          ->add_option("--connection-timeout", flags->connection_timeout_ms,
                       "ms to connect and initialize (0: default, 30000)")
          ->type_name("MS");
  flags->request_timeout_option =
      command
          ->add_option("--request-timeout", flags->request_timeout_ms,
                       "ms per request, reset by progress (0: default, 60000)")
          ->type_name("MS");
}

absl::StatusOr<std::vector<KeyValue>> ParseEnvFlags(
    const std::vector<std::string>& values) {
  std::vector<KeyValue> parsed;
  for (const auto& value : values) {
    ASSIGN_OR_RETURN(KeyValue kv, ParseEnvAssignment(value, ProcessEnv()));
    parsed.push_back(std::move(kv));
  }
  return parsed;
}

absl::StatusOr<std::vector<KeyValue>> ParseHeaderFlags(
    const std::vector<std::string>& values) {
  std::vector<KeyValue> parsed;
  for (const auto& value : values) {
    ASSIGN_OR_RETURN(KeyValue kv, ParseHeader(value));
    parsed.push_back(std::move(kv));
  }
  return parsed;
}

std::optional<std::string> IfGiven(const CLI::Option* option,
                                   const std::string& value) {
  if (option == nullptr || option->count() == 0) return std::nullopt;
  return value;
}

std::optional<uint32_t> IfGiven(const CLI::Option* option, uint32_t value) {
  if (option == nullptr || option->count() == 0) return std::nullopt;
  return value;
}

// The settings of `flags` that `servers add` and `servers update` share
// (all but env and headers), each set only if its flag was given.
template <typename Options>
void SetEditOptions(const EditFlags& flags, Options* options) {
  options->url = IfGiven(flags.url_option, flags.url);
  options->transport = IfGiven(flags.transport_option, flags.transport);
  options->cwd = IfGiven(flags.cwd_option, flags.cwd);
  options->mode = IfGiven(flags.mode_option, flags.mode);
  options->protocol = IfGiven(flags.protocol_option, flags.protocol);
  options->connection_timeout_ms =
      IfGiven(flags.connection_timeout_option, flags.connection_timeout_ms);
  options->request_timeout_ms =
      IfGiven(flags.request_timeout_option, flags.request_timeout_ms);
}

absl::StatusOr<v1::ServerConfig> GetServer(Context& context,
                                           const std::string& id) {
  v1::GetServerRequest request;
  request.set_id(id);
  v1::ServerConfig server;
  RETURN_IF_ERROR(
      context.Call(context.config(), &ConfigStub::GetServer, request, &server));
  return server;
}

// --- list -----------------------------------------------------------------

absl::Status RunList(Context& context) {
  v1::ListServersResponse response;
  RETURN_IF_ERROR(context.Call(context.config(), &ConfigStub::ListServers,
                               v1::ListServersRequest(), &response));
  if (context.json()) return context.PrintJson(response);
  if (response.servers().empty()) {
    context.out() << "No servers configured. Add one with `inspectorctl "
                     "servers add NAME -- COMMAND [ARGS...]` or `inspectorctl "
                     "servers add NAME --url URL`, or import a file with "
                     "`inspectorctl servers import FILE`.\n";
    return absl::OkStatus();
  }
  context.PrintTable(ServersTable(response), kTargetColumn);
  return absl::OkStatus();
}

// --- get ------------------------------------------------------------------

struct GetFlags {
  std::string id;
  bool show_secrets = false;
};

absl::Status RunGet(Context& context, const GetFlags& flags) {
  ASSIGN_OR_RETURN(v1::ServerConfig server, GetServer(context, flags.id));
  if (context.json()) return context.PrintJson(server);
  context.out() << ServerDetails(server, flags.show_secrets) << std::flush;
  return absl::OkStatus();
}

// --- add ------------------------------------------------------------------

struct AddFlags {
  std::string name;
  EditFlags edit;
  std::string from_session;
};

absl::Status RunAdd(Context& context, const AddFlags& flags) {
  AddOptions options;
  options.name = flags.name;
  options.command_line = context.command_line();
  if (!flags.from_session.empty()) {
    if (options.command_line.has_value() || !flags.edit.url.empty()) {
      return UsageError("--from-session replaces `-- COMMAND` and --url",
                        "inspectorctl servers add mock --from-session ID");
    }
    ASSIGN_OR_RETURN(options.command_line,
                     RecordingServerCommand(context, flags.from_session));
  }
  SetEditOptions(flags.edit, &options);
  ASSIGN_OR_RETURN(options.env, ParseEnvFlags(flags.edit.env));
  ASSIGN_OR_RETURN(options.headers, ParseHeaderFlags(flags.edit.headers));
  ASSIGN_OR_RETURN(v1::ServerConfig server, BuildServerForAdd(options));

  v1::CreateServerRequest request;
  *request.mutable_server() = std::move(server);
  v1::ServerConfig created;
  absl::Status status = context.Call(
      context.config(), &ConfigStub::CreateServer, request, &created);
  if (ErrorReason(status) == "ALREADY_EXISTS") {
    status = WithHint(
        status, absl::StrCat("pick another name, or change the existing one "
                             "with `inspectorctl servers update ",
                             ShellQuote(flags.name), " ...`"));
  }
  RETURN_IF_ERROR(status);
  if (context.json()) return context.PrintJson(created);
  context.out() << "created server " << SanitizeForTerminal(created.name())
                << " (id " << created.id() << ")\n";
  return absl::OkStatus();
}

// --- update ---------------------------------------------------------------

struct UpdateFlags {
  std::string id;
  std::string name;
  CLI::Option* name_option = nullptr;
  std::vector<std::string> unset_env;
  std::vector<std::string> unset_headers;
  EditFlags edit;
};

absl::Status RunUpdate(Context& context, const UpdateFlags& flags) {
  UpdateOptions options;
  options.name = IfGiven(flags.name_option, flags.name);
  options.command_line = context.command_line();
  SetEditOptions(flags.edit, &options);
  ASSIGN_OR_RETURN(options.set_env, ParseEnvFlags(flags.edit.env));
  options.unset_env = flags.unset_env;
  ASSIGN_OR_RETURN(options.set_headers, ParseHeaderFlags(flags.edit.headers));
  options.unset_headers = flags.unset_headers;

  ASSIGN_OR_RETURN(v1::ServerConfig current, GetServer(context, flags.id));
  ASSIGN_OR_RETURN(UpdatePlan plan, PlanServerUpdate(current, options));
  for (const auto& warning : plan.warnings) context.PrintWarning(warning);

  v1::UpdateServerRequest request;
  request.set_id(current.id().empty() ? flags.id : current.id());
  *request.mutable_server() = std::move(plan.server);
  for (const auto& path : plan.mask)
    request.mutable_update_mask()->add_paths(path);
  v1::ServerConfig updated;
  absl::Status status = context.Call(
      context.config(), &ConfigStub::UpdateServer, request, &updated);
  if (ErrorReason(status) == "ALREADY_EXISTS") {
    status = WithHint(status, "another server has that name; pick another");
  }
  RETURN_IF_ERROR(status);
  if (context.json()) return context.PrintJson(updated);
  context.out() << "updated server " << SanitizeForTerminal(updated.name())
                << " (id " << updated.id()
                << "): " << absl::StrJoin(plan.mask, ", ");
  if (plan.old_transport != plan.new_transport) {
    context.out() << "; transport " << plan.old_transport << " -> "
                  << plan.new_transport;
  }
  context.out() << "\n";
  return absl::OkStatus();
}

// --- rm -------------------------------------------------------------------

struct RemoveFlags {
  std::vector<std::string> ids;
  bool force = false;
};

absl::Status RunRemove(Context& context, const RemoveFlags& flags) {
  nlohmann::json removed = nlohmann::json::array();
  nlohmann::json missing = nlohmann::json::array();
  int exit_code = kExitOk;
  for (const auto& id : flags.ids) {
    v1::DeleteServerRequest request;
    request.set_id(id);
    google::protobuf::Empty empty;
    absl::Status status = context.Call(
        context.config(), &ConfigStub::DeleteServer, request, &empty);
    if (status.ok()) {
      removed.push_back(id);
      if (!context.json()) {
        context.out() << "removed server " << SanitizeForTerminal(id) << "\n";
      }
      continue;
    }
    const std::string reason = ErrorReason(status);
    if (flags.force &&
        (reason == "SERVER_NOT_FOUND" || reason == "NOT_FOUND")) {
      missing.push_back(id);
      continue;
    }
    const int code = context.Fail(status);
    if (exit_code == kExitOk) exit_code = code;
    // Without the daemon or the token, the other names fail the same way.
    if (code == kExitUnreachable || code == kExitAuth) break;
  }
  if (context.json()) {
    context.PrintJson(
        nlohmann::json{{"removed", removed}, {"notFound", missing}});
  }
  if (exit_code != kExitOk) return AlreadyReported(exit_code);
  return absl::OkStatus();
}

// --- import ---------------------------------------------------------------

struct ImportFlags {
  std::string file;
  std::string format = "auto";
  std::string on_conflict = "fail";
  bool dry_run = false;
};

absl::Status RunImport(Context& context, const ImportFlags& flags) {
  v1::ImportServersRequest request;
  ASSIGN_OR_RETURN(v1::ConfigFormat format, ParseConfigFormat(flags.format));
  ASSIGN_OR_RETURN(v1::ConflictPolicy policy,
                   ParseConflictPolicy(flags.on_conflict));
  ASSIGN_OR_RETURN(std::string content,
                   ReadInputFile(flags.file, kMaxImportBytes));
  // The request carries the file as text: say where it is not UTF-8 here,
  // rather than let the daemon refuse a request it cannot decode.
  for (size_t i = 0; i < content.size();) {
    size_t length = Utf8SequenceLength(content, i);
    if (length == 0) {
      return LocalError(
          v1::INVALID_REQUEST,
          absl::StrCat(flags.file == "-" ? "standard input" : flags.file,
                       " is not UTF-8 text: byte ", i, " (0x",
                       absl::Hex(static_cast<unsigned char>(content[i]),
                                 absl::kZeroPad2),
                       ") starts no character; save the file as UTF-8"));
    }
    i += length;
  }
  request.set_content(std::move(content));
  request.set_format(format);
  request.set_on_conflict(policy);
  request.set_dry_run(flags.dry_run);

  v1::ImportServersResponse response;
  absl::Status status = context.Call(
      context.config(), &ConfigStub::ImportServers, request, &response);
  if (ErrorReason(status) == "ALREADY_EXISTS") {
    status = WithHint(status,
                      "keep the existing servers with --on-conflict skip, or "
                      "overwrite them with --on-conflict replace");
  }
  RETURN_IF_ERROR(status);
  if (context.json()) return context.PrintJson(response);

  const bool dry = flags.dry_run;
  Table table({"RESULT", "NAME", "ID"});
  for (const auto& server : response.created()) {
    table.AddRow({dry ? "would create" : "created", server.name(),
                  ShortId(server.id())});
  }
  for (const auto& server : response.replaced()) {
    table.AddRow({dry ? "would replace" : "replaced", server.name(),
                  ShortId(server.id())});
  }
  for (const auto& name : response.skipped()) {
    table.AddRow({dry ? "would skip" : "skipped", name, "(exists)"});
  }
  if (table.row_count() > 0) context.PrintTable(table);
  context.out() << (dry ? "dry run, nothing written: " : "imported: ")
                << response.created_size() << " created, "
                << response.replaced_size() << " replaced, "
                << response.skipped_size() << " skipped ("
                << ConfigFormatName(response.format()) << " format)\n";
  return absl::OkStatus();
}

// --- export ---------------------------------------------------------------

struct ExportFlags {
  std::vector<std::string> servers;
  std::string format = "inspector";
  std::string out;
};

absl::Status RunExport(Context& context, const ExportFlags& flags) {
  ASSIGN_OR_RETURN(v1::ConfigFormat format, ParseConfigFormat(flags.format));
  if (format == v1::CONFIG_FORMAT_AUTO) {
    return UsageError("export needs a concrete --format",
                      "formats: inspector, mcp-servers (claude, cursor), "
                      "vscode");
  }
  v1::ExportServersRequest request;
  request.set_format(format);
  for (const auto& server : flags.servers) request.add_servers(server);
  v1::ExportServersResponse response;
  RETURN_IF_ERROR(context.Call(context.config(), &ConfigStub::ExportServers,
                               request, &response));
  std::string content = response.content();
  if (!content.empty() && content.back() != '\n') content += '\n';
  if (flags.out.empty() || flags.out == "-") {
    context.out() << content << std::flush;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(WritePrivateFile(flags.out, content));
  if (context.json()) {
    context.PrintJson(
        nlohmann::json{{"path", flags.out},
                       {"format", ConfigFormatName(response.format())},
                       {"bytes", content.size()}});
  } else {
    context.out() << "wrote " << SanitizeForTerminal(flags.out) << " ("
                  << ConfigFormatName(response.format())
                  << " format, mode 0600: it contains secrets)\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddServersCommands(CLI::App* app, Context* context) {
  CLI::App* servers = app->add_subcommand(
      "servers", "Manage MCP server configurations (list, add, update, ...)");
  // One subcommand per invocation: a server called "list" stays a name.
  servers->require_subcommand(0, 1);
  servers->footer(
      "Examples:\n"
      "  inspectorctl servers list\n"
      "  inspectorctl servers add everything -- npx -y "
      "@modelcontextprotocol/server-everything\n"
      "  inspectorctl servers import ~/.cursor/mcp.json --on-conflict skip");

  // list
  CLI::App* list =
      servers->add_subcommand("list", "List the configured servers");
  list->alias("ls");
  list->footer(
      "Columns: NAME, TRANSPORT, TARGET (command line or URL), MODE, ID\n"
      "(first 8 characters; -o json gives everything).\n"
      "\n"
      "Examples:\n"
      "  inspectorctl servers list\n"
      "  inspectorctl servers list -o json | jq -r '.servers[].name'");
  list->callback([context] {
    context->SetAction([context] { return RunList(*context); }, false);
  });

  // get
  auto get_flags = std::make_shared<GetFlags>();
  CLI::App* get =
      servers->add_subcommand("get", "Show one server's full configuration");
  get->add_option("server", get_flags->id, "Server name or id")
      ->required()
      ->type_name("NAME|ID");
  get->add_flag("--show-secrets", get_flags->show_secrets,
                "Show secret env/header values and the OAuth client secret "
                "instead of [REDACTED]");
  get->footer(
      "Secrets are masked unless --show-secrets: env, header and query\n"
      "values whose names contain token, secret, password, passwd, auth,\n"
      "credential, api_key, apikey, access_key or private_key; the\n"
      "Authorization, Proxy-Authorization, X-API-Key and Cookie headers;\n"
      "secret-looking arguments (--token X, API_KEY=X); the OAuth client\n"
      "secret. The daemon's logs mask the same values.\n"
      "-o json is never masked.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl servers get everything\n"
      "  inspectorctl servers get everything -o json");
  OnSelected(get, context, get_flags, RunGet);

  // add
  auto add_flags = std::make_shared<AddFlags>();
  CLI::App* add = servers->add_subcommand(
      "add", "Add a server: `NAME -- COMMAND [ARGS...]` or `NAME --url URL`");
  add->add_option("name", add_flags->name, "Name of the new server")
      ->required()
      ->type_name("NAME");
  AddEditFlags(add, &add_flags->edit);
  add->add_option("--from-session", add_flags->from_session,
                  "A recorded session served as the server (sessions "
                  "serve), instead of `-- COMMAND`")
      ->type_name("SESSION");
  add->footer(
      "Everything after `--` is the server's command line, kept verbatim\n"
      "as argv (it is never run through a shell). --from-session saves the\n"
      "session (with its secrets, mode 0600) beside the token file, in\n"
      "recordings/, and adds `inspectorctl sessions serve --file` of it.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl servers add everything -- npx -y "
      "@modelcontextprotocol/server-everything\n"
      "  inspectorctl servers add files --env DEBUG=1 --cwd /srv -- "
      "mcp-files --root /srv\n"
      "  inspectorctl servers add remote --url https://example.com/mcp "
      "--header \"Authorization: Bearer $TOKEN\"\n"
      "  inspectorctl servers add legacy --url http://127.0.0.1:3001/sse\n"
      "  inspectorctl servers add mock --from-session 3f2a...");
  OnSelected(add, context, add_flags, RunAdd, /*takes_command_line=*/true);
  context->DeclareCommandLine(add);

  // update
  auto update_flags = std::make_shared<UpdateFlags>();
  CLI::App* update = servers->add_subcommand(
      "update", "Change some settings of a server, keeping the others");
  update->add_option("server", update_flags->id, "Server name or id")
      ->required()
      ->type_name("NAME|ID");
  update_flags->name_option =
      update->add_option("--name", update_flags->name, "Rename the server")
          ->type_name("NAME");
  AddEditFlags(update, &update_flags->edit);
  update
      ->add_option("--unset-env", update_flags->unset_env,
                   "stdio: remove an environment variable (repeatable)")
      ->allow_extra_args(false)
      ->type_name("K");
  update
      ->add_option("--unset-header", update_flags->unset_headers,
                   "HTTP: remove a header (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME");
  update->footer(
      "`-- COMMAND [ARGS...]` at the end replaces the command line. Giving a\n"
      "command line to an HTTP server switches it to stdio, and --url to a\n"
      "stdio server switches it to HTTP; the old transport's settings are\n"
      "cleared. --cwd \"\" clears the working directory; --mode auto lets the\n"
      "daemon pick the mode.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl servers update everything --env DEBUG=1 --unset-env "
      "OLD\n"
      "  inspectorctl servers update everything -- npx -y "
      "@modelcontextprotocol/server-everything@latest\n"
      "  inspectorctl servers update remote --name prod --request-timeout "
      "120000");
  OnSelected(update, context, update_flags, RunUpdate,
             /*takes_command_line=*/true);
  context->DeclareCommandLine(update);

  // rm
  auto rm_flags = std::make_shared<RemoveFlags>();
  CLI::App* rm = servers->add_subcommand("rm", "Remove servers");
  rm->alias("remove");
  rm->add_option("servers", rm_flags->ids, "Server names or ids")
      ->required()
      ->type_name("NAME|ID");
  rm->add_flag("-f,--force", rm_flags->force,
               "Ignore servers that do not exist");
  rm->footer(
      "Examples:\n"
      "  inspectorctl servers rm everything\n"
      "  inspectorctl servers rm -f old-a old-b");
  OnSelected(rm, context, rm_flags, RunRemove);

  // import
  auto import_flags = std::make_shared<ImportFlags>();
  CLI::App* import = servers->add_subcommand(
      "import",
      "Import servers from an mcp.json, Claude Desktop, Cursor or VS Code "
      "file");
  import->add_option("file", import_flags->file, "The file, or - for stdin")
      ->required()
      ->type_name("FILE|-");
  import
      ->add_option("--format", import_flags->format,
                   "auto, inspector, mcp-servers, claude, cursor or vscode")
      ->check(CLI::IsMember(
          {"auto", "inspector", "mcp-servers", "claude", "cursor", "vscode"}))
      ->capture_default_str();
  import
      ->add_option("--on-conflict", import_flags->on_conflict,
                   "when a name exists: fail (import nothing), skip, or "
                   "replace")
      ->check(CLI::IsMember({"fail", "skip", "replace"}))
      ->capture_default_str();
  import->add_flag("--dry-run", import_flags->dry_run,
                   "Check the file and show what would happen; write nothing");
  import->footer(
      "All or nothing: on any error nothing is written. Files over 16 MiB\n"
      "are refused.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl servers import ~/.config/Claude/"
      "claude_desktop_config.json\n"
      "  inspectorctl servers import .vscode/mcp.json --dry-run\n"
      "  cat mcp.json | inspectorctl servers import - --on-conflict replace");
  OnSelected(import, context, import_flags, RunImport);

  // export
  auto export_flags = std::make_shared<ExportFlags>();
  CLI::App* exp = servers->add_subcommand(
      "export", "Write servers as an mcp.json, Claude/Cursor or VS Code file");
  exp->add_option("servers", export_flags->servers,
                  "Names or ids to export (default: all)")
      ->type_name("NAME|ID");
  exp->add_option("--format", export_flags->format,
                  "inspector, mcp-servers, claude, cursor or vscode")
      ->check(CLI::IsMember(
          {"inspector", "mcp-servers", "claude", "cursor", "vscode"}))
      ->capture_default_str();
  exp->add_option("--out", export_flags->out,
                  "Write to FILE (created with mode 0600) instead of stdout")
      ->type_name("FILE");
  exp->footer(
      "The output contains secrets (env values, headers, OAuth client\n"
      "secrets) unmasked, so --out FILE is created with mode 0600; mind\n"
      "where you redirect stdout.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl servers export --out mcp.json\n"
      "  inspectorctl servers export everything --format claude");
  OnSelected(exp, context, export_flags, RunExport);

  // pin, unpin: the catalog pinning `drift pin` sets.
  AddCatalogPinCommands(servers, context, "Subcommands");
}

}  // namespace inspector::cli
