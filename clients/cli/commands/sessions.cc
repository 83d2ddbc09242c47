// `inspectorctl sessions list|show|update|export|import|replay|diff` and
// `inspectorctl replay MESSAGE_ID`: recorded sessions as evidence, replay
// and comparison (SessionService); `sessions serve` and `sessions verify`
// are registered here from sessions_serve.cc and sessions_verify.cc.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/commands/sessions_subcommands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/history_views.h"
#include "clients/cli/intercept_views.h"
#include "clients/cli/session_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using SessionStub = v1::SessionService::Stub;

// --- list -------------------------------------------------------------------

struct ListSessionsFlags {
  std::string server;
  std::string kind;
  uint32_t limit = 0;
  uint32_t offset = 0;
};

absl::Status RunListSessions(Context& context, const ListSessionsFlags& flags) {
  ASSIGN_OR_RETURN(ServerNames names, LoadServerNames(context));
  v1::ListSessionsRequest request;
  if (!flags.server.empty()) request.set_server_id(names.Resolve(flags.server));
  request.set_kind(flags.kind);
  request.set_limit(flags.limit);
  request.set_offset(flags.offset);
  v1::ListSessionsResponse response;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::ListSessions,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.sessions_size() > 0) {
    context.PrintTable(SessionsTable(response, names, LocalTimes()),
                       kSessionsNameColumn);
  }
  context.out() << response.sessions_size() << " of " << response.total()
                << " session(s)";
  if (!response.next_page_token().empty()) {
    context.out() << "; more: --offset " << response.next_page_token();
  }
  context.out() << "\n" << std::flush;
  return absl::OkStatus();
}

// --- show -------------------------------------------------------------------

struct ShowFlags {
  std::string id;
  bool no_messages = false;
  uint32_t page_size = 0;
  uint32_t offset = 0;
};

absl::Status RunShow(Context& context, const ShowFlags& flags) {
  v1::GetSessionRequest request;
  request.set_id(flags.id);
  request.set_messages(!flags.no_messages);
  request.set_page_size(flags.page_size);
  request.set_offset(flags.offset);
  v1::Session session;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::GetSession,
                               request, &session));
  if (context.json()) return context.PrintJson(session);
  ASSIGN_OR_RETURN(ServerNames names, LoadServerNames(context));
  const TableTimes times = LocalTimes();
  context.out() << SessionDetails(session, names, times);
  if (session.page_size() > 0) {
    context.out() << "\n";
    context.PrintTable(SessionMessagesTable(session, times), 4);
    if (!session.next_page_token().empty()) {
      context.out() << "more: --offset " << session.next_page_token() << "\n";
    }
  }
  context.out() << std::flush;
  return absl::OkStatus();
}

// --- update -----------------------------------------------------------------

struct UpdateSessionFlags {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> notes;
};

absl::Status RunUpdateSession(Context& context,
                              const UpdateSessionFlags& flags) {
  if (!flags.name.has_value() && !flags.notes.has_value()) {
    return UsageError("nothing to change", "give --name and/or --notes");
  }
  v1::UpdateSessionRequest request;
  request.set_id(flags.id);
  if (flags.name.has_value()) request.set_name(*flags.name);
  if (flags.notes.has_value()) request.set_notes(*flags.notes);
  v1::Session session;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::UpdateSession,
                               request, &session));
  if (context.json()) return context.PrintJson(session);
  context.out() << "updated session " << session.id() << "\n" << std::flush;
  return absl::OkStatus();
}

// --- export / import --------------------------------------------------------

struct ExportSessionFlags {
  std::string id;
  std::string out;
  bool include_secrets = false;
};

absl::Status RunExportSession(Context& context,
                              const ExportSessionFlags& flags) {
  v1::ExportSessionRequest request;
  request.set_id(flags.id);
  request.set_include_secrets(flags.include_secrets);
  v1::ExportSessionResponse response;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::ExportSession,
                               request, &response));
  if (flags.out.empty() || flags.out == "-") {
    context.out() << response.json() << std::flush;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(WritePrivateFile(flags.out, response.json()));
  if (context.json()) {
    context.PrintJson(nlohmann::json{{"path", flags.out},
                                     {"bytes", response.json().size()},
                                     {"masked", response.masked()}});
  } else {
    context.out() << "wrote " << SanitizeForTerminal(flags.out) << " ("
                  << response.json().size() << " bytes, mode 0600; "
                  << response.masked() << " secret value(s) masked)\n"
                  << std::flush;
  }
  return absl::OkStatus();
}

struct ImportSessionFlags {
  std::string file;
};

absl::Status RunImportSession(Context& context,
                              const ImportSessionFlags& flags) {
  ASSIGN_OR_RETURN(std::string content,
                   ReadInputFile(flags.file, kMaxImportBytes,
                                 "a session file of at most 16 MiB"));
  v1::ImportSessionRequest request;
  request.set_json(std::move(content));
  v1::ImportSessionResponse response;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::ImportSession,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << "imported session " << response.session().id() << " ("
                << response.session().messages() << " messages)";
  if (response.id_changed()) {
    context.out() << "; its id was taken, so it got a new one";
  }
  context.out() << "\n" << std::flush;
  return absl::OkStatus();
}

// --- replay / diff ----------------------------------------------------------

struct DiffFlags {
  std::vector<std::string> ignore;
  bool no_default_ignore = false;
  bool all = false;
};

void AddDiffFlags(CLI::App* command, DiffFlags* flags) {
  command
      ->add_option("--ignore", flags->ignore,
                   "JSON Pointer into each answer not to compare (repeat; "
                   "\"*\" matches any key or index)")
      ->type_name("PTR");
  command->add_flag("--no-default-ignore", flags->no_default_ignore,
                    "Compare /id and /result/_meta too");
  command->add_flag("--all", flags->all, "List the pairs that are the same too");
}

struct ReplaySessionFlags {
  std::string id;
  std::string server;
  DiffFlags diff;
};

absl::Status RunReplaySession(Context& context,
                              const ReplaySessionFlags& flags) {
  v1::ReplaySessionRequest request;
  request.set_id(flags.id);
  request.set_server_id(flags.server);
  for (const auto& p : flags.diff.ignore) request.add_ignore(p);
  request.set_no_default_ignore(flags.diff.no_default_ignore);
  v1::ReplaySessionResponse response;
  RETURN_IF_ERROR(context.CallServer(
      context.sessions(), &SessionStub::ReplaySession, request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << "replayed as session " << response.session().id() << " ("
                << response.session().messages() << " messages)\n"
                << DiffText(response.diff(), !flags.diff.all) << std::flush;
  return absl::OkStatus();
}

struct DiffSessionsFlags {
  std::string a;
  std::string b;
  DiffFlags diff;
};

absl::Status RunDiff(Context& context, const DiffSessionsFlags& flags) {
  v1::DiffSessionsRequest request;
  request.set_a(flags.a);
  request.set_b(flags.b);
  for (const auto& p : flags.diff.ignore) request.add_ignore(p);
  request.set_no_default_ignore(flags.diff.no_default_ignore);
  v1::DiffSessionsResponse response;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::DiffSessions,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << DiffText(response, !flags.diff.all) << std::flush;
  return absl::OkStatus();
}

struct ReplayFlags {
  int64_t message_id = 0;
  std::string server;
  std::string raw;
  bool edit = false;
};

// Asks on the terminal whether to edit again; true for yes (the default).
// --edit: the recorded request in $VISUAL/$EDITOR, then sent as edited;
// refused edits can be edited again (on a terminal). Nothing is sent if
// the editor changed nothing. Returns nullopt when nothing was sent.
absl::StatusOr<std::optional<v1::ReplayResponse>> ReplayEdited(
    Context& context, v1::ReplayRequest request) {
  ASSIGN_OR_RETURN(v1::McpMessage recorded,
                   RecordedMessage(context, request.message_id()));
  if (recorded.truncated()) {
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("message ", recorded.id(),
                     " was recorded truncated: its whole text is not known"),
        "write the request to a file and send it with --raw @FILE");
  }
  v1::HeldMessage shown;
  *shown.mutable_message() = recorded;
  std::string text = HeldMessageForEditing(shown);
  const std::string editor =
      ChooseEditor(std::getenv("VISUAL"), std::getenv("EDITOR"));
  const bool interactive = isatty(STDIN_FILENO) == 1;
  while (true) {
    ASSIGN_OR_RETURN(std::string edited, EditInEditor(editor, text));
    if (EditUnchanged(text, edited)) {
      std::cerr << "unchanged: nothing sent (`inspectorctl replay "
                << recorded.id() << "` sends it as it was)\n";
      return std::nullopt;
    }
    request.set_raw(edited);
    v1::ReplayResponse response;
    absl::Status status = context.CallServer(
        context.sessions(), &SessionStub::Replay, request, &response);
    if (status.ok()) return response;
    const bool refused = ErrorReason(status) == "INVALID_REQUEST" ||
                         status.code() == absl::StatusCode::kInvalidArgument;
    if (!refused || !interactive) return status;
    context.PrintFailure(DescribeError(status, context.error_context()));
    if (!AskEditAgain()) return AlreadyReported(kExitInvalidInput);
    text = edited;
  }
}

absl::Status RunReplay(Context& context, const ReplayFlags& flags) {
  v1::ReplayRequest request;
  request.set_message_id(flags.message_id);
  request.set_server_id(flags.server);
  if (!flags.raw.empty()) {
    std::string raw = flags.raw;
    if (raw.front() == '@') {
      ASSIGN_OR_RETURN(raw, ReadInputFile(raw.substr(1), kMaxImportBytes,
                                          "a message of at most 16 MiB"));
    }
    request.set_raw(std::move(raw));
  }
  v1::ReplayResponse response;
  if (flags.edit) {
    ASSIGN_OR_RETURN(std::optional<v1::ReplayResponse> sent,
                     ReplayEdited(context, request));
    if (!sent.has_value()) return absl::OkStatus();
    response = *std::move(sent);
  } else {
    RETURN_IF_ERROR(context.CallServer(
        context.sessions(), &SessionStub::Replay, request, &response));
  }
  if (context.json()) return context.PrintJson(response);
  nlohmann::json answer =
      nlohmann::json::parse(response.response().raw(), nullptr, false);
  if (answer.is_discarded()) {
    context.out() << SanitizeText(response.response().raw()) << "\n";
  } else {
    context.PrintJson(answer);
  }
  context.out() << "replay session " << response.session_id()
                << ", request message " << response.request().id()
                << ", answer message " << response.response().id() << "\n"
                << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddSessionsCommands(CLI::App* app, Context* context) {
  CLI::App* sessions = app->add_subcommand(
      "sessions",
      "Recorded sessions: list, show, export, import, replay, diff, "
      "verify, serve");
  sessions->group(kTrafficGroup);
  sessions->require_subcommand(1);
  sessions->footer(
      "A session is one upstream MCP session: the daemon's own, one per\n"
      "bridged or proxied client, one per replay. Export writes it as a\n"
      "JSON file (secrets masked unless --include-secrets); import reads\n"
      "such a file back. Replay re-runs a session against a live server\n"
      "and compares the answers; verify does so under a rules file, for CI\n"
      "(exit 1 on a difference, --junit). Serve answers as the recorded\n"
      "server did, over stdio or HTTP.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl sessions list --server everything\n"
      "  inspectorctl sessions export 3f2a... --out evidence.json\n"
      "  inspectorctl sessions replay 3f2a... --server everything-next\n"
      "  inspectorctl sessions diff A B --ignore /result/content/0/text\n"
      "  inspectorctl sessions verify --file session.json --against mine "
      "--junit report.xml");

  auto list_flags = std::make_shared<ListSessionsFlags>();
  CLI::App* list = sessions->add_subcommand("list", "Sessions, newest first");
  list->add_option("--server", list_flags->server, "Only this server")
      ->type_name("SERVER");
  list->add_option("--kind", list_flags->kind, "Only this kind")
      ->check(CLI::IsMember({"daemon", "bridge", "proxy", "replay"}))
      ->type_name("KIND");
  list->add_option("--limit", list_flags->limit, "At most N (default 50)")
      ->type_name("N");
  list->add_option("--offset", list_flags->offset, "Skip N")->type_name("N");
  OnSelected(list, context, list_flags, RunListSessions);

  auto show_flags = std::make_shared<ShowFlags>();
  CLI::App* show =
      sessions->add_subcommand("show", "A session and its messages in order");
  show->add_option("id", show_flags->id, "Session id")->required();
  show->add_flag("--no-messages", show_flags->no_messages,
                 "Only the session's details");
  show->add_option("--page-size", show_flags->page_size,
                   "Messages per page (default 100)")
      ->type_name("N");
  show->add_option("--offset", show_flags->offset, "Skip N messages")
      ->type_name("N");
  OnSelected(show, context, show_flags, RunShow);

  auto update_flags = std::make_shared<UpdateSessionFlags>();
  CLI::App* update =
      sessions->add_subcommand("update", "Set a session's name and notes");
  update->add_option("id", update_flags->id, "Session id")->required();
  update->add_option("--name", update_flags->name, "Name")->type_name("TEXT");
  update->add_option("--notes", update_flags->notes, "Notes")
      ->type_name("TEXT");
  OnSelected(update, context, update_flags, RunUpdateSession);

  auto export_flags = std::make_shared<ExportSessionFlags>();
  CLI::App* exp = sessions->add_subcommand(
      "export", "Write a session as a JSON file (stdout by default)");
  exp->add_option("id", export_flags->id, "Session id")->required();
  exp->add_option("--out", export_flags->out,
                  "Write to FILE (mode 0600) instead of stdout")
      ->type_name("FILE");
  exp->add_flag("--include-secrets", export_flags->include_secrets,
                "Keep env and header values, URL credentials and "
                "secret-looking message values");
  OnSelected(exp, context, export_flags, RunExportSession);

  auto import_flags = std::make_shared<ImportSessionFlags>();
  CLI::App* imp = sessions->add_subcommand(
      "import", "Store an exported session file as a session");
  imp->add_option("file", import_flags->file, "Session file (- for stdin)")
      ->required();
  OnSelected(imp, context, import_flags, RunImportSession);

  auto replay_flags = std::make_shared<ReplaySessionFlags>();
  CLI::App* replay = sessions->add_subcommand(
      "replay", "Replay a session against a live server and compare");
  replay->add_option("id", replay_flags->id, "Session id")->required();
  replay->add_option("--server", replay_flags->server,
                     "Replay against this server (default: the recorded one)")
      ->type_name("SERVER");
  AddDiffFlags(replay, &replay_flags->diff);
  OnSelected(replay, context, replay_flags, RunReplaySession);

  auto diff_flags = std::make_shared<DiffSessionsFlags>();
  CLI::App* diff = sessions->add_subcommand(
      "diff", "Compare two sessions' answers, request by request");
  diff->add_option("a", diff_flags->a, "Session id")->required();
  diff->add_option("b", diff_flags->b, "Session id")->required();
  AddDiffFlags(diff, &diff_flags->diff);
  OnSelected(diff, context, diff_flags, RunDiff);

  AddSessionsServeCommand(sessions, context);
  AddSessionsVerifyCommand(sessions, context);

  auto one_flags = std::make_shared<ReplayFlags>();
  CLI::App* one = app->add_subcommand(
      "replay", "Send a recorded request again (as it was or edited)");
  one->group(kTrafficGroup);
  one->add_option("message_id", one_flags->message_id,
                  "Message id of a recorded client request (sessions show, "
                  "history -o json)")
      ->required();
  one->add_option("--server", one_flags->server,
                  "Send to this server (default: the recorded one)")
      ->type_name("SERVER");
  CLI::Option* raw =
      one->add_option("--raw", one_flags->raw,
                      "Send this JSON-RPC request instead (@FILE reads a file)")
          ->type_name("JSON");
  one->add_flag("--edit", one_flags->edit,
                "Edit the recorded request in $VISUAL/$EDITOR (vi) first, "
                "then send it")
      ->excludes(raw);
  one->footer(
      "The answer is printed; both are recorded in a new session of kind\n"
      "replay. With --edit the request opens in the editor as indented JSON;\n"
      "what you save is sent (nothing if you change nothing). An edit the\n"
      "daemon refuses (not JSON, not a request) can be edited again on a\n"
      "terminal; elsewhere it exits 5.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl replay 42\n"
      "  inspectorctl replay 42 --edit --server everything-next\n"
      "  inspectorctl replay 42 --raw @edited.json");
  OnSelected(one, context, one_flags, RunReplay);
}

}  // namespace inspector::cli
