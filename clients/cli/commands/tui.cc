// `inspectorctl tui`: a full-screen view of the live traffic (ncursesw)
// with the intercept controls: forward, modify or drop held messages,
// switch the mode, replay a request or a whole session (its diff against
// the recording shown in the detail pane), export a session.
//
// One thread reads EventsService.Watch (with its backlog) into a queue;
// the main thread owns the TuiModel and the screen, drains the queue,
// draws and reads keys (waiting at most 100 ms for one). Unary calls are
// made from the main thread with a short deadline each, so a stuck daemon
// freezes the screen for seconds at most. The terminal is restored on
// every way out: q, a signal (SIGTERM, SIGHUP, Ctrl-C cancel the stream
// and end the loop), or an error.
//
// The pieces are in tui_app.h; this file holds the command, the event
// stream, the keys and the main loop.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/commands/tui_app.h"
#include "clients/cli/tui_explore.h"
#include "common/status_macros.h"

// Last, and as functions rather than macros: curses defines OK, ERR,
// erase(), timeout() ... which would clash with the headers above.
#define NCURSES_NOMACROS
#include <curses.h>

namespace inspector::cli {
namespace tui {

void TuiApp::StartWatch() {
  v1::WatchRequest request;
  request.set_server_id(server_id_);
  request.set_backlog(flags_.backlog);
  request.add_kinds(v1::EVENT_KIND_MESSAGE);
  request.add_kinds(v1::EVENT_KIND_HELD);
  watch_thread_ = std::thread([this, request] {
    std::unique_ptr<grpc::ClientReader<v1::Event>> reader =
        context_.events()->Watch(&watch_call_, request);
    v1::Event event;
    while (reader->Read(&event)) queue_.Push(event);
    queue_.End(reader->Finish());
  });
}

void TuiApp::StopWatch() {
  watch_call_.TryCancel();
  if (watch_thread_.joinable()) watch_thread_.join();
  if (background_.valid()) {
    background_call_->TryCancel();
    background_.wait();
  }
}

void TuiApp::DrainEvents() {
  for (const v1::Event& event : queue_.Take()) {
    if (event.has_message()) {
      model_.AddMessage(event.message());
    } else if (event.has_held()) {
      model_.ApplyHeld(event.held());
    } else if (event.has_dropped()) {
      SetStatus(absl::StrCat(event.dropped().count(),
                             " events dropped (the screen read too slowly)"));
    }
  }
  if (!stream_ended_) {
    if (std::optional<grpc::Status> ended = queue_.Ended()) {
      stream_ended_ = true;
      if (InterruptSignal() == 0) {
        SetStatus(absl::StrCat("live stream ended: ",
                               ended->ok() ? "inspectord closed it"
                                           : ended->error_message(),
                               "; press q"),
                  true);
      }
    }
  }
}

void TuiApp::PollState(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!intercept_available_ || (!force && now - last_poll_ < kStatePollInterval)) {
    return;
  }
  last_poll_ = now;
  v1::InterceptState state;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::GetInterceptState,
           v1::GetInterceptStateRequest(), &state);
  if (status.code() == absl::StatusCode::kUnimplemented) {
    intercept_available_ = false;
    return;
  }
  if (!status.ok()) return;  // the stream's end says more
  mode_ = state.mode();
  daemon_held_ = state.held();
  if (force || daemon_held_ != model_.held_count()) {
    v1::ListHeldRequest request;
    request.set_server_id(server_id_);
    v1::ListHeldResponse held;
    if (Call(context_.intercept(), &v1::InterceptService::Stub::ListHeld,
             request, &held)
            .ok()) {
      model_.ReplaceHeld(held.held());
    }
  }
}

void TuiApp::HandleFilterKey(int key) {
  std::string filter = model_.filter();
  if (key == '\n' || key == KEY_ENTER) {
    editing_filter_ = false;
  } else if (key == 27) {  // Esc
    editing_filter_ = false;
    model_.SetFilter("");
  } else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
    if (!filter.empty()) {
      // Drop one UTF-8 code point.
      size_t end = filter.size() - 1;
      while (end > 0 && (static_cast<unsigned char>(filter[end]) & 0xC0) == 0x80) {
        --end;
      }
      filter.erase(end);
      model_.SetFilter(filter);
    }
  } else if (key >= 32 && key < 256 && key != 127) {
    filter.push_back(static_cast<char>(key));
    model_.SetFilter(filter);
  }
}

bool TuiApp::HandleKey(int key) {
  if (show_help_) {
    show_help_ = false;
    return true;
  }
  if (editing_filter_) {
    HandleFilterKey(key);
    return true;
  }
  TuiLayout layout = ComputeTuiLayout(COLS, LINES);
  const int page = std::max(1, layout.list_height - 1);
  const int detail_page = std::max(1, layout.detail_height / 2);
  if (!report_.empty()) {
    // The report takes the detail pane's scrolling keys; any other key
    // closes it (Esc only that).
    const int delta = key == 'J' ? 1 : key == 'K' ? -1 : key == 4 ? detail_page
                      : key == 21                           ? -detail_page
                                                            : 0;
    if (delta != 0) {
      const int lines = static_cast<int>(
          ReportLines(static_cast<size_t>(std::max(1, layout.detail_width)))
              .size());
      const int most = std::max(0, lines - layout.detail_height);
      report_scroll_ = static_cast<size_t>(std::clamp(
          static_cast<int>(report_scroll_) + delta, 0, most));
      return true;
    }
    // An explore report: a digit shows that skill.
    if (!explore_skills_.empty() && key >= '1' &&
        key < '1' + kTuiExploreSkillKeys) {
      ShowSkill(static_cast<size_t>(key - '1'));
      return true;
    }
    report_.clear();
    report_scroll_ = 0;
    explore_skills_.clear();
    if (key == 27) return true;
  }
  switch (key) {
    case 'q':
    case 'Q':
      return false;
    case KEY_UP:
    case 'k':
      model_.MoveSelection(-1);
      break;
    case KEY_DOWN:
    case 'j':
      model_.MoveSelection(1);
      break;
    case KEY_PPAGE:
      model_.MoveSelection(-page);
      break;
    case KEY_NPAGE:
      model_.MoveSelection(page);
      break;
    case KEY_HOME:
    case 'g':
      model_.SelectFirst();
      break;
    case KEY_END:
    case 'G':
      model_.SelectLast();
      break;
    case 'J':
    case 'K':
    case 4:    // Ctrl-D
    case 21: {  // Ctrl-U
      const int delta = key == 'J' ? 1 : key == 'K' ? -1 : key == 4
                                                              ? detail_page
                                                              : -detail_page;
      model_.ScrollDetail(
          delta,
          model_.DetailLines(static_cast<size_t>(std::max(
                                 1, layout.detail_width)))
              .size(),
          static_cast<size_t>(std::max(0, layout.detail_height)));
      break;
    }
    case KEY_F(1):
    case '?':
      show_help_ = true;
      break;
    case KEY_F(2):
    case '/':
      editing_filter_ = true;
      break;
    case 'i':
      ToggleMode();
      break;
    case KEY_F(5):
      Resolve(v1::FORWARD);
      break;
    case KEY_F(6):
      Modify();
      break;
    case KEY_F(8):
      Resolve(v1::DROP);
      break;
    case 'r':
      Replay();
      break;
    case 'R':
      ReplaySession();
      break;
    case 's':
      Export();
      break;
    case 'e':
      Explore();
      break;
    default:
      break;
  }
  return true;
}

absl::Status TuiApp::Run() {
  // The first look at the intercept state, before the screen takes over.
  {
    v1::InterceptState state;
    absl::Status status = Call(context_.intercept(),
                               &v1::InterceptService::Stub::GetInterceptState,
                               v1::GetInterceptStateRequest(), &state);
    if (status.code() == absl::StatusCode::kUnimplemented) {
      intercept_available_ = false;
      SetStatus("intercept is not available: the daemon does not support it "
                "yet (F1: keys)");
    } else if (!status.ok()) {
      return status;
    }
  }
  RETURN_IF_ERROR(context_.PrepareStream(&watch_call_));
  CancelOnInterrupt interrupt(&watch_call_);
  StartWatch();
  {
    CursesSession curses;
    curses_ = &curses;
    PollState(/*force=*/true);
    bool running = true;
    while (running && InterruptSignal() == 0) {
      DrainEvents();
      FinishBackground(/*wait=*/false);
      PollState(/*force=*/false);
      Draw();
      const int key = getch();
      if (key == ERR) continue;
      if (key == KEY_RESIZE) continue;  // the next Draw() uses the new size
      // A key clears the last result (the end of the stream stays shown).
      if (!stream_ended_) SetStatus("");
      if (!HandleKey(key)) running = false;
    }
    curses_ = nullptr;
  }
  StopWatch();
  if (int signal_number = InterruptSignal(); signal_number != 0) {
    DieOfSignal(signal_number);
  }
  return absl::OkStatus();
}

}  // namespace tui
namespace {

using tui::TuiApp;
using tui::TuiFlags;

absl::Status RunTui(Context& context, const TuiFlags& flags) {
  if (isatty(STDIN_FILENO) != 1 || isatty(STDOUT_FILENO) != 1) {
    return UsageError("`inspectorctl tui` needs a terminal",
                      "run it in a terminal (stdin and stdout); `inspectorctl "
                      "watch` and `inspectorctl held` work in scripts");
  }
  std::setlocale(LC_ALL, "");
  // Reachability and the server names, with the usual errors and exit
  // codes, before the screen is taken.
  v1::ListServersResponse servers;
  RETURN_IF_ERROR(context.Call(context.config(),
                               &v1::ConfigService::Stub::ListServers,
                               v1::ListServersRequest(), &servers));
  ServerNames names(servers);
  std::string server_id =
      flags.server.empty() ? "" : names.Resolve(flags.server);
  TuiApp app(context, flags, std::move(names), std::move(server_id));
  return app.Run();
}

}  // namespace

void AddTuiCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<TuiFlags>();
  CLI::App* tui = app->add_subcommand(
      "tui", "Full-screen live traffic with intercept controls");
  tui->group("Holding and changing traffic");
  tui->add_option("--server", flags->server, "Only this server (name or id)")
      ->type_name("SERVER");
  tui->add_option("--backlog", flags->backlog,
                  "Show the last N recorded messages first (default 200)")
      ->type_name("N");
  tui->footer(absl::StrCat(
      "Header: daemon address, server filter, held count, and the mode\n"
      "([INTERCEPT] holds every message, [PASSTHROUGH] only what a\n"
      "breakpoint matches). Left (top below 100 columns): the messages;\n"
      "right (bottom): the selected one as JSON.\n\n",
      tui::kTuiHelp,
      "\nNeeds a terminal (80x24 or larger, UTF-8). Exits 4 if inspectord\n"
      "is not reachable, like the other commands."));
  OnSelected(tui, context, flags, RunTui);
}

}  // namespace inspector::cli
