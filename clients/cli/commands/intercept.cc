// The man-in-the-middle commands (InterceptService): `intercept
// on|off|status|timeout`, `break add|rm|ls|enable|disable`, `held`, and
// the actions on one held message, `forward`, `modify` and `drop`.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/commands/intercept_calls.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/history_views.h"
#include "clients/cli/intercept_views.h"
#include "clients/cli/table.h"
#include "common/intercept/breakpoint_spec.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using InterceptStub = v1::InterceptService::Stub;

constexpr char kInterceptGroup[] = "Holding and changing traffic";

constexpr char kHeldHelp[] =
    "A held message is one inspectord has stopped on its way between an MCP\n"
    "client and server, before forwarding it: in INTERCEPT mode every\n"
    "message is held; in PASSTHROUGH mode only those an enabled breakpoint\n"
    "matches. It waits until you forward it unchanged, modify it (send an\n"
    "edited copy) or drop it, or until the hold timeout forwards it. Only\n"
    "the messages behind it in the same session and direction wait with it.\n"
    "Ids look like h-1; `inspectorctl held` lists them.\n";

constexpr char kSpecHelp[] =
    "SPEC is comma-separated key=value pairs; every key given must match:\n"
    "  server=NAME        the server (name or id)\n"
    "  session=ID         one session\n"
    "  direction=c2s|s2c  client to server, or server to client\n"
    "  kind=request|response|error|notification\n"
    "  method=M           the method (a response matches its request's)\n"
    "  target=T           tool name, resource URI or prompt name, exactly\n"
    "  pattern=REGEX      RE2 expression searched for in the raw JSON\n"
    "  pointer=/a/b       JSON Pointer: alone, matches when it resolves;\n"
    "  value=JSON           with value, the value there equals this JSON;\n"
    "  value_pattern=RE     with value_pattern, it matches this RE2\n"
    "  once               disable the breakpoint after its first hit\n"
    "  unanswered         a dropped request gets no answer (default: its\n"
    "                     caller gets a JSON-RPC error)\n"
    "  disabled           add it disabled\n"
    "A comma or backslash inside a value is escaped with a backslash.\n"
    "Quote SPEC for the shell.\n"
    "\n"
    "Examples:\n"
    "  inspectorctl break add 'method=tools/call,target=echo'\n"
    "  inspectorctl break add 'server=everything,direction=s2c,kind=error'\n"
    "  inspectorctl break add "
    "'method=tools/call,pointer=/params/arguments/path,"
    "value_pattern=^/etc/'\n"
    "  inspectorctl break add 'pattern=secret\\,token,once'\n";

// --- intercept on|off|status|timeout ---------------------------------------

absl::Status PrintState(Context& context, const v1::InterceptState& state) {
  if (context.json()) return context.PrintJson(state);
  KeyValueBlock block;
  block.Add("Mode", absl::StrCat(ModeName(state.mode()),
                                 state.mode() == v1::INTERCEPT
                                     ? " (every message is held)"
                                     : " (only what a breakpoint matches "
                                       "is held)"));
  block.Add("Hold timeout", HoldTimeoutText(state.hold_timeout_ms()));
  block.Add("Held now", absl::StrCat(state.held(),
                                     state.held() > 0
                                         ? " (`inspectorctl held` lists them)"
                                         : ""));
  block.Add("Breakpoints", absl::StrCat(state.breakpoints_size()));
  context.out() << block.Render();
  if (state.breakpoints_size() > 0) {
    context.out() << "\n";
    context.PrintTable(BreakpointsTable(state.breakpoints()),
                       kBreakpointConditionColumn);
  }
  return absl::OkStatus();
}

struct NoFlags {};

absl::Status RunInterceptStatus(Context& context, const NoFlags&) {
  ASSIGN_OR_RETURN(v1::InterceptState state, GetInterceptState(context));
  return PrintState(context, state);
}

absl::Status RunInterceptOn(Context& context, const NoFlags&) {
  v1::SetInterceptStateRequest request;
  request.set_mode(v1::INTERCEPT);
  ASSIGN_OR_RETURN(v1::InterceptState state,
                   SetInterceptState(context, request));
  if (context.json()) return context.PrintJson(state);
  context.out() << "intercept on (INTERCEPT): every message is held until "
                   "you forward, modify or drop it"
                << (state.hold_timeout_ms() > 0
                        ? absl::StrCat(", or the hold timeout (",
                                       HoldTimeoutText(state.hold_timeout_ms()),
                                       ") forwards it")
                        : "")
                << "; `inspectorctl held` lists them\n";
  return absl::OkStatus();
}

absl::Status RunInterceptOff(Context& context, const NoFlags&) {
  ASSIGN_OR_RETURN(v1::InterceptState before, GetInterceptState(context));
  v1::SetInterceptStateRequest request;
  request.set_mode(v1::PASSTHROUGH);
  ASSIGN_OR_RETURN(v1::InterceptState state,
                   SetInterceptState(context, request));
  if (context.json()) return context.PrintJson(state);
  context.out() << "intercept off (PASSTHROUGH): messages flow on";
  if (before.held() > 0) {
    context.out() << "; the " << before.held() << " held message"
                  << (before.held() == 1 ? " was" : "s were")
                  << " released (forwarded unchanged, in order)";
  }
  if (state.breakpoints_size() > 0) {
    context.out() << "; enabled breakpoints still hold what they match";
  }
  context.out() << "\n";
  return absl::OkStatus();
}

struct TimeoutFlags {
  std::string ms;
};

absl::Status RunInterceptTimeout(Context& context, const TimeoutFlags& flags) {
  ASSIGN_OR_RETURN(uint32_t ms, ParseHoldTimeout(flags.ms));
  v1::SetInterceptStateRequest request;
  request.set_hold_timeout_ms(ms);
  ASSIGN_OR_RETURN(v1::InterceptState state,
                   SetInterceptState(context, request));
  if (context.json()) return context.PrintJson(state);
  context.out() << "hold timeout: " << HoldTimeoutText(state.hold_timeout_ms())
                << (state.hold_timeout_ms() == 0
                        ? " (held messages wait until someone acts)"
                        : " (then a held message is forwarded unchanged)")
                << "\n";
  return absl::OkStatus();
}

// --- break ------------------------------------------------------------------

struct SpecFlags {
  std::string spec;
};

absl::Status RunBreakAdd(Context& context, const SpecFlags& flags) {
  absl::StatusOr<v1::Breakpoint> parsed =
      intercept::ParseBreakpointSpec(flags.spec);
  if (!parsed.ok()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat("bad SPEC \"", flags.spec,
                                   "\": ", parsed.status().message()),
                      "see `inspectorctl break add --help` for the keys and "
                      "examples");
  }
  v1::AddBreakpointRequest request;
  *request.mutable_breakpoint() = *std::move(parsed);
  v1::Breakpoint added;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::AddBreakpoint,
                                request, &added));
  if (context.json()) return context.PrintJson(added);
  context.out() << added.id() << "\n";
  return absl::OkStatus();
}

struct IdFlags {
  std::string id;
};

absl::Status RunBreakRm(Context& context, const IdFlags& flags) {
  v1::RemoveBreakpointRequest request;
  request.set_id(flags.id);
  google::protobuf::Empty empty;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::RemoveBreakpoint,
                                request, &empty));
  if (!context.json()) context.out() << "removed " << flags.id << "\n";
  return absl::OkStatus();
}

absl::Status RunBreakLs(Context& context, const NoFlags&) {
  v1::ListBreakpointsResponse response;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::ListBreakpoints,
                                v1::ListBreakpointsRequest(), &response));
  if (context.json()) return context.PrintJson(response);
  if (response.breakpoints_size() == 0) {
    std::cerr << "no breakpoints; add one with `inspectorctl break add "
                 "SPEC`\n";
    return absl::OkStatus();
  }
  context.PrintTable(BreakpointsTable(response.breakpoints()),
                     kBreakpointConditionColumn);
  return absl::OkStatus();
}

absl::Status SetEnabled(Context& context, const std::string& id,
                        bool enabled) {
  v1::UpdateBreakpointRequest request;
  request.set_id(id);
  request.set_enabled(enabled);
  v1::Breakpoint updated;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::UpdateBreakpoint,
                                request, &updated));
  if (context.json()) return context.PrintJson(updated);
  context.out() << updated.id() << (updated.enabled() ? " enabled" : " disabled")
                << ": " << BreakpointCondition(updated) << "\n";
  return absl::OkStatus();
}

// --- held, forward, modify, drop -------------------------------------------

struct HeldFlags {
  std::string server;
};

absl::Status RunHeld(Context& context, const HeldFlags& flags) {
  v1::ListServersResponse servers;
  RETURN_IF_ERROR(context.Call(context.config(),
                               &v1::ConfigService::Stub::ListServers,
                               v1::ListServersRequest(), &servers));
  ServerNames names(servers);
  v1::ListHeldRequest request;
  if (!flags.server.empty()) request.set_server_id(names.Resolve(flags.server));
  v1::ListHeldResponse response;
  RETURN_IF_ERROR(
      InterceptCall(context, &InterceptStub::ListHeld, request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.held_size() == 0) {
    std::cerr << "nothing is held"
              << (flags.server.empty() ? "" : " for " + flags.server) << "\n";
    return absl::OkStatus();
  }
  context.PrintTable(HeldTable(response.held(), names, absl::Now(),
                               /*symbols=*/context.stdout_color()),
                     kHeldMessageColumn);
  return absl::OkStatus();
}

absl::Status PrintResolved(Context& context, const v1::HeldMessage& held) {
  if (context.json()) return context.PrintJson(held);
  context.out() << held.id() << " " << ResolvedText(held) << ": "
                << MessageSummary(held.message()) << "\n";
  return absl::OkStatus();
}

absl::Status RunForward(Context& context, const IdFlags& flags) {
  v1::ResolveHeldRequest request;
  request.set_id(flags.id);
  request.set_action(v1::FORWARD);
  ASSIGN_OR_RETURN(v1::HeldMessage held, ResolveHeld(context, request));
  return PrintResolved(context, held);
}

struct DropFlags {
  std::string id;
  bool unanswered = false;
};

absl::Status RunDrop(Context& context, const DropFlags& flags) {
  v1::ResolveHeldRequest request;
  request.set_id(flags.id);
  request.set_action(v1::DROP);
  if (flags.unanswered) request.set_leave_unanswered(true);
  ASSIGN_OR_RETURN(v1::HeldMessage held, ResolveHeld(context, request));
  return PrintResolved(context, held);
}

struct ModifyFlags {
  std::string id;
  std::string file;
};

// Asks on the terminal whether to edit again; true for yes (the default).
absl::Status RunModify(Context& context, const ModifyFlags& flags) {
  v1::ResolveHeldRequest request;
  request.set_id(flags.id);
  request.set_action(v1::MODIFY);
  if (!flags.file.empty()) {
    ASSIGN_OR_RETURN(std::string text,
                     ReadInputFile(flags.file, kMaxMessageBytes,
                                   "a JSON-RPC message is at most 16 MiB"));
    request.set_modified(text);
    ASSIGN_OR_RETURN(v1::HeldMessage held, ResolveHeld(context, request));
    return PrintResolved(context, held);
  }

  ASSIGN_OR_RETURN(v1::HeldMessage held, FindHeld(context, flags.id));
  const std::string editor =
      ChooseEditor(std::getenv("VISUAL"), std::getenv("EDITOR"));
  const bool interactive = isatty(STDIN_FILENO) == 1;
  std::string text = HeldMessageForEditing(held);
  while (true) {
    ASSIGN_OR_RETURN(std::string edited, EditInEditor(editor, text));
    if (EditUnchanged(text, edited)) {
      std::cerr << "unchanged: nothing sent; " << flags.id
                << " stays held (`inspectorctl forward " << flags.id
                << "` sends it as it is)\n";
      return absl::OkStatus();
    }
    request.set_modified(edited);
    absl::StatusOr<v1::HeldMessage> resolved = ResolveHeld(context, request);
    if (resolved.ok()) return PrintResolved(context, *resolved);
    const bool refused =
        ErrorReason(resolved.status()) == "INVALID_REQUEST" ||
        resolved.status().code() == absl::StatusCode::kInvalidArgument;
    if (!refused || !interactive) return resolved.status();
    context.PrintFailure(
        DescribeError(resolved.status(), context.error_context()));
    if (!AskEditAgain()) return AlreadyReported(kExitInvalidInput);
    text = edited;
  }
}

// Adds `name`, a command on one held message whose first argument is its
// ID (into flags->id); when it is selected, `run(*context, *flags)` becomes
// the action.
template <typename Flags, typename Run>
CLI::App* AddHeldCommand(CLI::App* app, Context* context,
                         const std::string& name,
                         const std::string& description,
                         std::shared_ptr<Flags> flags, Run run) {
  CLI::App* command = app->add_subcommand(name, description);
  command->group(kInterceptGroup);
  command->add_option("ID", flags->id, "Held message id (h-1)")->required();
  OnSelected(command, context, std::move(flags), std::move(run));
  return command;
}

}  // namespace

void AddInterceptCommands(CLI::App* app, Context* context) {
  auto none = std::make_shared<NoFlags>();

  CLI::App* intercept = app->add_subcommand(
      "intercept",
      "Hold every message (on), or only what breakpoints match (off)");
  intercept->group(kInterceptGroup);
  intercept->footer(absl::StrCat(
      "Modes: INTERCEPT (`on`) holds every message; PASSTHROUGH (`off`, the\n"
      "default) lets messages flow on except those an enabled breakpoint\n"
      "(`inspectorctl break`) matches. Switching off releases every held\n"
      "message: each is forwarded unchanged, in order.\n\n",
      kHeldHelp,
      "\nExamples:\n"
      "  inspectorctl intercept on\n"
      "  inspectorctl intercept status\n"
      "  inspectorctl intercept timeout 30000\n"
      "  inspectorctl intercept off"));
  OnSelected(intercept->add_subcommand(
                 "on", "INTERCEPT mode: hold every message"),
             context, none, RunInterceptOn);
  OnSelected(intercept->add_subcommand(
                 "off",
                 "PASSTHROUGH mode: messages flow on; releases (forwards) "
                 "every held message"),
             context, none, RunInterceptOff);
  OnSelected(intercept->add_subcommand(
                 "status",
                 "The mode, hold timeout, breakpoints and held count"),
             context, none, RunInterceptStatus);
  auto timeout_flags = std::make_shared<TimeoutFlags>();
  CLI::App* timeout = intercept->add_subcommand(
      "timeout",
      "Forward a held message unchanged after MS milliseconds (0: never)");
  timeout->add_option("MS", timeout_flags->ms, "Milliseconds; 0: never")
      ->required();
  OnSelected(timeout, context, timeout_flags, RunInterceptTimeout);

  CLI::App* breaks = app->add_subcommand(
      "break", "Breakpoints: hold the messages that match a condition");
  breaks->group(kInterceptGroup);
  breaks->footer(absl::StrCat(kSpecHelp, "\n", kHeldHelp));
  auto spec = std::make_shared<SpecFlags>();
  CLI::App* add =
      breaks->add_subcommand("add", "Add a breakpoint; prints its id");
  add->add_option("SPEC", spec->spec, "The condition (see below)")->required();
  add->footer(kSpecHelp);
  OnSelected(add, context, spec, RunBreakAdd);
  auto rm_id = std::make_shared<IdFlags>();
  CLI::App* rm = breaks->add_subcommand("rm", "Remove a breakpoint");
  rm->add_option("ID", rm_id->id, "Breakpoint id (bp-1)")->required();
  OnSelected(rm, context, rm_id, RunBreakRm);
  OnSelected(breaks->add_subcommand("ls", "List the breakpoints and hits"),
             context, none, RunBreakLs);
  auto enable_id = std::make_shared<IdFlags>();
  CLI::App* enable = breaks->add_subcommand("enable", "Enable a breakpoint");
  enable->add_option("ID", enable_id->id, "Breakpoint id")->required();
  OnSelected(enable, context, enable_id,
             [](Context& c, const IdFlags& f) { return SetEnabled(c, f.id, true); });
  auto disable_id = std::make_shared<IdFlags>();
  CLI::App* disable =
      breaks->add_subcommand("disable", "Disable a breakpoint (kept)");
  disable->add_option("ID", disable_id->id, "Breakpoint id")->required();
  OnSelected(disable, context, disable_id, [](Context& c, const IdFlags& f) {
    return SetEnabled(c, f.id, false);
  });

  auto held_flags = std::make_shared<HeldFlags>();
  CLI::App* held =
      app->add_subcommand("held", "List the messages held now, oldest first");
  held->group(kInterceptGroup);
  held->add_option("--server", held_flags->server,
                   "Only this server (name or id)")
      ->type_name("SERVER");
  held->footer(absl::StrCat(
      kHeldHelp,
      "\nColumns: ID (for forward/modify/drop), SERVER, SESSION (first 8\n"
      "characters), DIR (→ client to server, ← server to client), MESSAGE\n"
      "(method [target]), AGE, BREAKPOINT (- when INTERCEPT mode held it)."));
  OnSelected(held, context, held_flags, RunHeld);

  CLI::App* forward = AddHeldCommand(app, context, "forward",
                                     "Send a held message on unchanged",
                                     std::make_shared<IdFlags>(), RunForward);
  forward->footer(kHeldHelp);

  auto drop_flags = std::make_shared<DropFlags>();
  CLI::App* drop = AddHeldCommand(
      app, context, "drop",
      "Discard a held message (a request's caller gets an error)", drop_flags,
      RunDrop);
  drop->add_flag("--unanswered", drop_flags->unanswered,
                 "For a request: send its caller no answer at all (default: "
                 "the breakpoint's `unanswered`, else a JSON-RPC error)");
  drop->footer(kHeldHelp);

  auto modify_flags = std::make_shared<ModifyFlags>();
  CLI::App* modify = AddHeldCommand(
      app, context, "modify", "Edit a held message, then send the edited copy",
      modify_flags, RunModify);
  modify
      ->add_option("--file", modify_flags->file,
                   "Send this file's JSON instead (- for stdin); no editor")
      ->type_name("FILE");
  modify->footer(absl::StrCat(
      "Without --file, opens $VISUAL, else $EDITOR, else vi on the held\n"
      "message, pretty-printed. Save and quit to send it; quit without a\n"
      "change to send nothing (the message stays held, exit 0). The edited\n"
      "text must be one JSON-RPC message of the same kind and, for a\n"
      "request or answer, the same id; if inspectord refuses it, the error\n"
      "is shown and, on a terminal, you may edit again (else exit 5).\n\n",
      kHeldHelp,
      "\nExamples:\n"
      "  inspectorctl modify h-1\n"
      "  EDITOR=nano inspectorctl modify h-1\n"
      "  inspectorctl modify h-1 --file edited.json"));
}

}  // namespace inspector::cli
