// `inspectorctl pending`, `respond` and `roots`: the requests MCP servers
// send their client (sampling/createMessage, elicitation/create,
// roots/list), which inspectord holds as pending items until someone
// answers (ClientRequestsService).
#include "clients/cli/commands/client_requests.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/answer_forms.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/history_views.h"
#include "clients/cli/json_values.h"
#include "clients/cli/pending_views.h"
#include "clients/cli/respond_args.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "inspector/v1/client_requests.grpc.pb.h"

namespace inspector::cli {
namespace {

using ClientRequestsStub = v1::ClientRequestsService::Stub;

absl::StatusOr<std::vector<v1::PendingRequest>> ListPending(
    Context& context, ClientRequestsStub* stub,
    const v1::ListPendingRequest& request) {
  v1::ListPendingResponse response;
  RETURN_IF_ERROR(
      context.Call(stub, &ClientRequestsStub::ListPending, request, &response));
  return std::vector<v1::PendingRequest>(response.pending().begin(),
                                         response.pending().end());
}

// ---- pending ----------------------------------------------------------------

struct PendingFlags {
  std::string server;
  std::string kind;
  bool follow = false;
};

absl::StatusOr<v1::ListPendingRequest> MakeListRequest(
    const PendingFlags& flags, const ServerNames& names) {
  v1::ListPendingRequest request;
  if (!flags.server.empty()) request.set_server_id(names.Resolve(flags.server));
  if (!flags.kind.empty()) {
    ASSIGN_OR_RETURN(v1::PendingKind kind, ParsePendingKind(flags.kind));
    request.set_kind(kind);
  }
  return request;
}

absl::Status RunFollow(Context& context, ClientRequestsStub* stub,
                       const v1::ListPendingRequest& list, ServerNames names) {
  const bool ndjson = context.json();
  const absl::TimeZone zone = absl::LocalTimeZone();
  v1::WatchRequest watch;
  watch.set_server_id(list.server_id());
  watch.add_kinds(v1::EVENT_KIND_PENDING);

  // Subscribe first and list second, so that nothing arriving in between
  // is missed; what shows up twice is printed once (see `printed`).
  grpc::ClientContext call;
  RETURN_IF_ERROR(context.PrepareStream(&call));
  std::unique_ptr<grpc::ClientReader<v1::Event>> reader =
      context.events()->Watch(&call, watch);
  absl::StatusOr<std::vector<v1::PendingRequest>> current =
      ListPending(context, stub, list);
  if (!current.ok()) {
    call.TryCancel();
    grpc::Status ignored = reader->Finish();
    (void)ignored;
    return current.status();
  }

  // The last form printed of each item, so that only changes print.
  // (Compared field by field: Struct maps serialize in no fixed order.)
  std::map<std::string, v1::PendingRequest> printed;
  bool output_closed = false;
  absl::Status print_error;
  auto print = [&](const v1::PendingRequest& item, absl::Time at) {
    auto [it, inserted] = printed.emplace(item.id(), item);
    if (!inserted) {
      if (google::protobuf::util::MessageDifferencer::Equals(it->second,
                                                             item)) {
        return;
      }
      it->second = item;
    }
    std::string line;
    if (ndjson) {
      absl::StatusOr<std::string> json = ProtoToJsonLine(item);
      if (!json.ok()) {
        print_error = json.status();
        return;
      }
      line = *std::move(json);
    } else {
      line = PendingLine(item, names, at, absl::Now(), zone);
    }
    context.out() << line << '\n' << std::flush;
    if (!context.out().good()) output_closed = true;
  };
  for (const v1::PendingRequest& item : *current) {
    print(item, PendingTime(item.received_at()));
  }

  bool received = false;
  grpc::Status finished;
  {
    CancelOnInterrupt interrupt(&call);
    v1::Event event;
    while (print_error.ok() && !output_closed && reader->Read(&event)) {
      received = true;
      if (!event.has_pending()) continue;
      const v1::PendingRequest& item = event.pending();
      if (list.kind() != v1::PENDING_KIND_UNSPECIFIED &&
          item.kind() != list.kind()) {
        continue;
      }
      print(item, PendingTime(event.timestamp()));
    }
    if (!print_error.ok() || output_closed) call.TryCancel();
    finished = reader->Finish();
  }
  // Ctrl-C ends `pending --follow` like any other command: by the signal.
  if (const int signal_number = InterruptSignal(); signal_number != 0) {
    DieOfSignal(signal_number);
  }
  RETURN_IF_ERROR(print_error);
  if (output_closed) return absl::OkStatus();
  return EventStreamEnded(context, finished, received, "follow");
}

absl::Status RunPending(Context& context, const PendingFlags& flags) {
  std::unique_ptr<ClientRequestsStub> stub =
      context.NewStub<v1::ClientRequestsService>();
  ServerNames names;
  if (!flags.server.empty() || !context.json() || flags.follow) {
    ASSIGN_OR_RETURN(names, LoadServerNames(context));
  }
  ASSIGN_OR_RETURN(v1::ListPendingRequest request,
                   MakeListRequest(flags, names));
  if (flags.follow) return RunFollow(context, stub.get(), request, names);

  v1::ListPendingResponse response;
  RETURN_IF_ERROR(context.Call(stub.get(), &ClientRequestsStub::ListPending,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.pending().empty()) {
    std::string scope;
    if (!flags.kind.empty()) absl::StrAppend(&scope, " ", flags.kind);
    context.out() << "no pending" << scope << " requests"
                  << (flags.server.empty()
                          ? ""
                          : " from " + SanitizeForTerminal(flags.server))
                  << "\n";
    return absl::OkStatus();
  }
  std::vector<v1::PendingRequest> items(response.pending().begin(),
                                        response.pending().end());
  context.PrintTable(PendingTable(items, names, absl::Now()),
                     kPendingSummaryColumn);
  return absl::OkStatus();
}

// ---- respond
// ------------------------------------------------------------------

struct RespondFlags {
  std::string id;
  std::string json;
  bool accept_defaults = false;
  std::vector<std::string> fields;
  bool decline = false;
  bool cancel = false;
  std::string reject;
  std::string text;
  std::string model;
  bool interactive = false;
  // Set after parsing: whether the options with values were given.
  const CLI::Option* json_option = nullptr;
  const CLI::Option* reject_option = nullptr;
  const CLI::Option* text_option = nullptr;
  const CLI::Option* model_option = nullptr;
};

absl::StatusOr<RespondOptions> ReadRespondOptions(const RespondFlags& flags) {
  RespondOptions options;
  if (flags.json_option->count() > 0) {
    if (flags.json == "-") {
      ASSIGN_OR_RETURN(options.json, ReadInputFile("-", kMaxMessageBytes,
                                                   "send less at once"));
    } else if (absl::StartsWith(flags.json, "@")) {
      ASSIGN_OR_RETURN(options.json,
                       ReadInputFile(flags.json.substr(1), kMaxMessageBytes,
                                     "send less at once"));
    } else {
      options.json = flags.json;
    }
  }
  options.accept_defaults = flags.accept_defaults;
  options.fields = flags.fields;
  options.decline = flags.decline;
  options.cancel = flags.cancel;
  if (flags.reject_option->count() > 0) options.reject = flags.reject;
  if (flags.text_option->count() > 0) options.text = flags.text;
  if (flags.model_option->count() > 0) options.model = flags.model;
  options.interactive = flags.interactive;
  return options;
}

absl::StatusOr<Answer> AskInteractively(const RespondOptions& options,
                                        const v1::PendingRequest* item,
                                        const std::string& id,
                                        const ServerNames& names) {
  if (item == nullptr) {
    return LocalError(
        v1::NOT_FOUND, absl::StrCat("no pending request \"", id, "\""),
        "`inspectorctl pending` lists the requests waiting for an answer");
  }
  RequestHeader header;
  header.server = names.Display(item->server_id());
  header.id = item->id();
  const nlohmann::json params = StructToJson(item->params());
  const bool sampling = item->kind() == v1::SAMPLING ||
                        item->method() == "sampling/createMessage";
  const bool elicitation =
      item->kind() == v1::ELICITATION || item->method() == "elicitation/create";
  if (elicitation) {
    ASSIGN_OR_RETURN(nlohmann::json result,
                     RunElicitationForm(params, header, std::cin, std::cerr));
    return AnswerFromElicitResult(result);
  }
  if (sampling) {
    Answer answer;
    ASSIGN_OR_RETURN(answer.result,
                     RunSamplingPrompt(params, header, SamplingModel(options),
                                       std::cin, std::cerr));
    return answer;
  }
  return UsageError(
      absl::StrCat(item->method(), " requests have no interactive form"),
      "roots/list is answered from the roots you set (`inspectorctl roots "
      "SERVER set ...`); or answer with --json '{\"roots\": [...]}'");
}

std::string DescribeAnswer(const Answer& answer) {
  if (answer.reject) {
    switch (answer.action) {
      case v1::REJECT_ACTION_DECLINE:
        return "declined";
      case v1::REJECT_ACTION_CANCEL:
        return "cancelled";
      default:
        return answer.reason.empty()
                   ? "rejected with an error"
                   : absl::StrCat("rejected with an error: ", answer.reason);
    }
  }
  if (answer.result.contains("action") && answer.result["action"].is_string()) {
    const std::string action = answer.result["action"].get<std::string>();
    if (action == "accept") return "accepted";
    if (action == "decline") return "declined";
    if (action == "cancel") return "cancelled";
  }
  return "answered";
}

absl::Status RunRespond(Context& context, const RespondFlags& flags) {
  ASSIGN_OR_RETURN(RespondOptions options, ReadRespondOptions(flags));
  ASSIGN_OR_RETURN(AnswerMode mode,
                   ChooseAnswerMode(options, isatty(STDIN_FILENO) == 1));
  std::unique_ptr<ClientRequestsStub> stub =
      context.NewStub<v1::ClientRequestsService>();
  ASSIGN_OR_RETURN(std::vector<v1::PendingRequest> items,
                   ListPending(context, stub.get(), v1::ListPendingRequest()));
  ASSIGN_OR_RETURN(const v1::PendingRequest* item,
                   FindPending(items, flags.id));
  // Names only make the output friendlier: an answer must not fail on them.
  absl::StatusOr<ServerNames> loaded = LoadServerNames(context);
  const ServerNames names = loaded.ok() ? *std::move(loaded) : ServerNames();

  Answer answer;
  if (mode == AnswerMode::kInteractive) {
    if (item != nullptr && item->status() != v1::PENDING &&
        item->status() != v1::PENDING_STATUS_UNSPECIFIED) {
      return LocalError(
          v1::FAILED_PRECONDITION,
          absl::StrCat("pending request ", item->id(), " is ",
                       PendingStatusName(item->status()), " already"),
          "`inspectorctl pending` lists the requests waiting for an answer");
    }
    ASSIGN_OR_RETURN(answer, AskInteractively(options, item, flags.id, names));
  } else {
    ASSIGN_OR_RETURN(answer, BuildAnswer(mode, options, item));
  }

  const std::string id = item != nullptr ? item->id() : flags.id;
  v1::PendingRequest answered;
  if (answer.reject) {
    v1::RejectRequest request;
    request.set_id(id);
    request.set_reason(answer.reason);
    request.set_action(answer.action);
    RETURN_IF_ERROR(context.Call(stub.get(), &ClientRequestsStub::Reject,
                                 request, &answered));
  } else {
    v1::ResolveRequest request;
    request.set_id(id);
    ASSIGN_OR_RETURN(*request.mutable_result(),
                     JsonToStruct(answer.result, "the result"));
    request.set_apply_defaults(answer.apply_defaults);
    RETURN_IF_ERROR(context.Call(stub.get(), &ClientRequestsStub::Resolve,
                                 request, &answered));
  }
  if (context.json()) return context.PrintJson(answered);
  const v1::PendingRequest& shown =
      answered.id().empty() && item != nullptr ? *item : answered;
  context.out() << SanitizeForTerminal(absl::StrCat(
                       DescribeAnswer(answer), " ", ShortId(id), " (",
                       shown.method().empty() ? "request" : shown.method(),
                       " from ", names.Display(shown.server_id()), ")"))
                << "\n";
  return absl::OkStatus();
}

// ---- roots
// --------------------------------------------------------------------

struct RootsFlags {
  std::string server;
  std::vector<std::string> words;
};

std::string WorkingDirectory() {
  std::vector<char> buffer(4096);
  if (getcwd(buffer.data(), buffer.size()) == nullptr) return "";
  return buffer.data();
}

absl::Status PrintRoots(Context& context, const v1::Roots& roots,
                        const std::string& server) {
  if (context.json()) return context.PrintJson(roots);
  if (roots.roots().empty()) {
    context.out() << SanitizeForTerminal(server) << " has no roots\n";
  } else {
    context.PrintTable(RootsTable(roots));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Root>> ParseRoots(
    const std::vector<std::string>& words) {
  const std::string cwd = WorkingDirectory();
  std::vector<v1::Root> roots;
  for (const std::string& word : words) {
    ASSIGN_OR_RETURN(v1::Root root, ParseRootArgument(word, cwd));
    roots.push_back(std::move(root));
  }
  return roots;
}

absl::Status RunRoots(Context& context, const RootsFlags& flags) {
  std::unique_ptr<ClientRequestsStub> stub =
      context.NewStub<v1::ClientRequestsService>();
  v1::GetRootsRequest get;
  get.set_server_id(flags.server);
  if (flags.words.empty()) {
    v1::Roots roots;
    RETURN_IF_ERROR(
        context.Call(stub.get(), &ClientRequestsStub::GetRoots, get, &roots));
    return PrintRoots(context, roots, flags.server);
  }
  const std::string& action = flags.words.front();
  const std::vector<std::string> args(flags.words.begin() + 1,
                                      flags.words.end());
  ASSIGN_OR_RETURN(std::vector<v1::Root> given, ParseRoots(args));
  std::vector<v1::Root> roots;
  if (action == "set") {
    if (given.empty()) {
      return UsageError("`roots SERVER set` needs at least one root",
                        "`roots SERVER clear` removes them all");
    }
    roots = given;
  } else if (action == "clear") {
    if (!given.empty()) {
      return UsageError("`roots SERVER clear` takes no roots",
                        "`roots SERVER set ROOT...` replaces them");
    }
  } else if (action == "add" || action == "rm") {
    if (given.empty()) {
      return UsageError(
          absl::StrCat("`roots SERVER ", action, "` needs at least one root"));
    }
    v1::Roots current;
    RETURN_IF_ERROR(
        context.Call(stub.get(), &ClientRequestsStub::GetRoots, get, &current));
    roots.assign(current.roots().begin(), current.roots().end());
    for (const v1::Root& root : given) {
      auto same = std::find_if(
          roots.begin(), roots.end(),
          [&](const v1::Root& r) { return r.uri() == root.uri(); });
      if (action == "add") {
        if (same == roots.end()) {
          roots.push_back(root);
        } else if (!root.name().empty()) {
          same->set_name(root.name());
        }
      } else if (same == roots.end()) {
        return LocalError(
            v1::NOT_FOUND,
            absl::StrCat(flags.server, " has no root ", root.uri()),
            absl::StrCat("`inspectorctl roots ", flags.server,
                         "` shows its roots"));
      } else {
        roots.erase(same);
      }
    }
  } else {
    return UsageError(absl::StrCat("unknown roots action \"", action, "\""),
                      "actions: set, add, rm, clear; `roots SERVER` alone "
                      "shows them");
  }
  v1::SetRootsRequest set;
  set.set_server_id(flags.server);
  for (v1::Root& root : roots) *set.add_roots() = std::move(root);
  v1::Roots result;
  RETURN_IF_ERROR(
      context.Call(stub.get(), &ClientRequestsStub::SetRoots, set, &result));
  return PrintRoots(context, result, flags.server);
}

}  // namespace

void AddClientRequestsCommands(CLI::App* app, Context* context) {
  // pending
  auto pending_flags = std::make_shared<PendingFlags>();
  CLI::App* pending = AddCommand(
      app, context, kClientRequestsGroup,
      {"pending", "List the requests servers sent that wait for an answer",
       "Columns: ID (its first 8 characters; `respond` takes any unique\n"
       "prefix), SERVER, KIND, METHOD, AGE, TIME LEFT (until inspectord\n"
       "gives up on the request; answered ones show their status), SUMMARY\n"
       "(the elicitation's message, or the last user message of a sampling\n"
       "request). -o json prints the ListPendingResponse.\n"
       "\n"
       "--follow prints one line per request, then one per change\n"
       "(pending, resolved, rejected, expired); with -o json one\n"
       "PendingRequest per line (NDJSON). It has no deadline; Ctrl-C ends\n"
       "it (exit 130), and it exits 4 if inspectord goes away.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl pending\n"
       "  inspectorctl pending --server everything --kind elicitation\n"
       "  inspectorctl pending --follow\n"
       "  inspectorctl pending -f -o json | jq -r 'select(.status == "
       "\"PENDING\") | .id'"},
      pending_flags, RunPending);
  pending
      ->add_option("--server", pending_flags->server,
                   "Only this server's requests (name or id)")
      ->type_name("SERVER");
  pending
      ->add_option("--kind", pending_flags->kind,
                   "Only sampling, elicitation or roots requests")
      ->check(CLI::IsMember({"sampling", "elicitation", "roots"}))
      ->type_name("KIND");
  pending->add_flag("--follow,-f", pending_flags->follow,
                    "Print the current requests, then each new or changed "
                    "one as it happens, until Ctrl-C");

  // respond
  auto respond_flags = std::make_shared<RespondFlags>();
  CLI::App* respond = AddCommand(
      app, context, kClientRequestsGroup,
      {"respond", "Answer a pending request: `ID [KEY=VALUE...]` or an option",
       "Answers (one of them):\n"
       "  KEY=VALUE...        elicitation: accept with these fields; VALUE is\n"
       "                      read by the field's type (numbers, yes/no,\n"
       "                      a choice by value, label or number, several\n"
       "                      choices comma-separated); KEY:=JSON is JSON\n"
       "  --accept-defaults   elicitation: accept, absent fields get the\n"
       "                      schema's defaults (may go with "
       "KEY=VALUE/--json)\n"
       "  --json JSON|@FILE|- the full result: an ElicitResult (a bare\n"
       "                      content object means accept), a\n"
       "                      CreateMessageResult, or {\"roots\": [...]}\n"
       "  --text TEXT         sampling: {\"role\": \"assistant\", "
       "\"content\":\n"
       "                      {\"type\": \"text\", \"text\": TEXT}, "
       "\"model\":\n"
       "                      \"inspectorctl\" (or --model), \"stopReason\":\n"
       "                      \"endTurn\"}\n"
       "  --decline, --cancel elicitation: decline or cancel\n"
       "  --reject REASON     any request: a JSON-RPC error\n"
       "  (none)              on a terminal, or with --interactive: a form\n"
       "                      that shows the message and asks each field\n"
       "                      (Enter keeps the [default]; choices are\n"
       "                      numbered), then asks to send, edit, decline\n"
       "                      or cancel; sampling asks for a one-line reply\n"
       "\n"
       "The answer is checked against the request here first, with the same\n"
       "rules inspectord applies, so a wrong one is never sent (exit 5).\n"
       "Exits 2 if no pending request has this id, 6 if it was answered or\n"
       "expired already, 8 if this inspectord cannot answer servers yet.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl respond 1a2b3c4d name=Ada age=36 colors=1,3\n"
       "  inspectorctl respond 1a2b3c4d --accept-defaults\n"
       "  inspectorctl respond 1a2b3c4d --decline\n"
       "  inspectorctl respond 5e6f7a8b --text 'Paris is the capital.'\n"
       "  inspectorctl respond 5e6f7a8b --json @answer.json\n"
       "  inspectorctl respond 5e6f7a8b --reject 'not now'"},
      respond_flags, RunRespond);
  respond
      ->add_option("id", respond_flags->id,
                   "The pending request's id, or a unique prefix of it")
      ->required()
      ->type_name("ID");
  respond
      ->add_option("fields", respond_flags->fields,
                   "Elicitation fields: KEY=VALUE (typed by the form) or "
                   "KEY:=JSON")
      ->type_name("KEY=VALUE");
  respond_flags->json_option =
      respond
          ->add_option("--json", respond_flags->json,
                       "The whole result as JSON; @FILE reads a file, - "
                       "reads stdin")
          ->type_name("JSON|@FILE|-");
  respond->add_flag("--accept-defaults", respond_flags->accept_defaults,
                    "Elicitation: accept, filling absent fields with the "
                    "schema's defaults");
  respond->add_flag("--decline", respond_flags->decline,
                    "Elicitation: decline ({\"action\": \"decline\"})");
  respond->add_flag("--cancel", respond_flags->cancel,
                    "Elicitation: cancel ({\"action\": \"cancel\"})");
  respond_flags->reject_option =
      respond
          ->add_option("--reject", respond_flags->reject,
                       "Answer with a JSON-RPC error carrying this reason")
          ->type_name("REASON");
  respond_flags->text_option =
      respond
          ->add_option("--text", respond_flags->text,
                       "Sampling: reply with this text as the assistant")
          ->type_name("TEXT");
  respond_flags->model_option =
      respond
          ->add_option("--model", respond_flags->model,
                       absl::StrCat("Sampling: the model name sent with "
                                    "--text (default: ",
                                    kDefaultSamplingModel, ")"))
          ->type_name("NAME");
  respond->add_flag("--interactive,-i", respond_flags->interactive,
                    "Ask in the terminal (the default when no answer is "
                    "given and stdin is a terminal)");

  // roots
  auto roots_flags = std::make_shared<RootsFlags>();
  CLI::App* roots = AddServerCommand(
      app, context, kClientRequestsGroup,
      {"roots",
       "Show or change the roots a server is given: `SERVER [set|add|rm|clear "
       "ROOT...]`",
       "  roots SERVER                 show the roots (URI, NAME)\n"
       "  roots SERVER set ROOT...     replace them\n"
       "  roots SERVER add ROOT...     add some (a known URI gets the new "
       "name)\n"
       "  roots SERVER rm ROOT...      remove some (exit 2 if one is not "
       "there)\n"
       "  roots SERVER clear           remove them all\n"
       "\n"
       "ROOT is file:///abs/path or a local path (made absolute and\n"
       "encoded), optionally followed by =NAME; the first = separates, so\n"
       "write = inside a URI as %3D. Changes send\n"
       "notifications/roots/list_changed to the server; the table of the\n"
       "new roots is printed (-o json: the Roots message).\n"
       "\n"
       "Examples:\n"
       "  inspectorctl roots everything\n"
       "  inspectorctl roots everything set .=project file:///tmp=scratch\n"
       "  inspectorctl roots everything add ~/notes\n"
       "  inspectorctl roots everything clear"},
      roots_flags, RunRoots);
  roots
      ->add_option("words", roots_flags->words,
                   "An action (set, add, rm, clear) and its roots")
      ->type_name("ACTION [ROOT...]");
}

}  // namespace inspector::cli
