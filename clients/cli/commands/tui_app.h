// The pieces of `inspectorctl tui` (commands/tui.cc) shared by its files:
// the flags, the queue of watched events, the curses session and TuiApp,
// the screen's application object. TuiApp's methods are spread by job:
// tui.cc holds the event stream, the keys and the main loop;
// tui_actions.cc the intercept actions, replays and the export (unary calls
// to the daemon); tui_screen.cc the curses session and the drawing. None of
// them includes curses in this header (its macros clash with other headers).
//
// `inspectorctl tui` is a full-screen view of the live traffic (ncursesw)
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
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_TUI_APP_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_TUI_APP_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "clients/cli/context.h"
#include "clients/cli/history_views.h"
#include "clients/cli/text.h"
#include "clients/cli/tui_model.h"
#include "common/status_macros.h"

namespace inspector::cli::tui {

inline constexpr double kTuiCallSeconds = 5;
// A session's replay sends every recorded request again, one after the
// other, and may start the server first.
inline constexpr double kReplaySessionSeconds = 300;
// How often the mode and the held messages are asked again, in case an
// event was missed or another client changed the mode.
inline constexpr auto kStatePollInterval = std::chrono::seconds(2);

inline constexpr char kTuiHelp[] =
    "Keys:\n"
    "  Up/Down, j/k     select a message      PgUp/PgDn  a page\n"
    "  Home/End, g/G    first/last message    J/K        scroll the detail\n"
    "  F2 or /          filter (Enter keeps it, Esc clears it)\n"
    "  i                toggle INTERCEPT (hold everything) / PASSTHROUGH\n"
    "  F5               forward the selected held message unchanged\n"
    "  F6               modify it in $VISUAL/$EDITOR (vi), then send it\n"
    "  F8               drop it (a request's caller gets an error)\n"
    "  r                replay the selected request (SessionService)\n"
    "  R                replay the selected message's whole session and\n"
    "                   show what changed against the recording (Esc closes)\n"
    "  s                export the selected message's session to a file\n"
    "                   (session-ID.json in the current directory)\n"
    "  e                explore the server (--server, else the selected\n"
    "                   message's): its tools and skills; then 1-9 shows\n"
    "                   that skill (skills/get)\n"
    "  F1 or ?          this help           q  quit\n"
    "\n"
    "List: ► client to server, ◄ server to client, ⏸ held; ✓/✗ and the\n"
    "time once a request was answered; errors in red.\n"
    "Filter: words must all match the method, target or JSON;\n"
    "method:M and target:T match only those.\n";

struct TuiFlags {
  std::string server;
  uint32_t backlog = 200;
};

// Events read by the watch thread, for the main thread.
class EventQueue {
 public:
  void Push(v1::Event event) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(event));
  }
  void End(grpc::Status status) {
    absl::MutexLock lock(&mu_);
    ended_ = true;
    status_ = std::move(status);
  }
  std::deque<v1::Event> Take() {
    absl::MutexLock lock(&mu_);
    std::deque<v1::Event> taken;
    taken.swap(events_);
    return taken;
  }
  std::optional<grpc::Status> Ended() {
    absl::MutexLock lock(&mu_);
    if (!ended_) return std::nullopt;
    return status_;
  }

 private:
  absl::Mutex mu_;
  std::deque<v1::Event> events_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

// initscr() .. endwin(), and out of curses around an editor
// (tui_screen.cc).
class CursesSession {
 public:
  CursesSession();
  ~CursesSession();
  CursesSession(const CursesSession&) = delete;
  CursesSession& operator=(const CursesSession&) = delete;

  // Leaves curses for a program that uses the terminal (the editor).
  void Suspend();
  void Resume();
};

class TuiApp {
 public:
  TuiApp(Context& context, const TuiFlags& flags, ServerNames names,
         std::string server_id)
      : context_(context),
        flags_(flags),
        names_(std::move(names)),
        server_id_(std::move(server_id)),
        model_(5000, names_) {}
  // Also on the way out of an error: the reader thread must not outlive
  // the stream it reads.
  ~TuiApp() { StopWatch(); }
  TuiApp(const TuiApp&) = delete;
  TuiApp& operator=(const TuiApp&) = delete;

  absl::Status Run();

 private:
  // A unary call with the token and a short deadline, without Context's
  // Ctrl-C registration (the event stream holds that).
  template <typename Stub, typename Request, typename Response>
  absl::Status Call(Stub* stub,
                    grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                 const Request&, Response*),
                    const Request& request, Response* response) {
    grpc::ClientContext call;
    RETURN_IF_ERROR(context_.PrepareStream(&call));
    call.set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(
                          static_cast<int64_t>(kTuiCallSeconds * 1000)));
    return FromGrpcStatus((stub->*method)(&call, request, response));
  }

  void StartWatch();
  void StopWatch();
  void DrainEvents();
  void PollState(bool force);
  void Draw();
  void DrawHelp();
  // Returns false to quit.
  bool HandleKey(int key);
  void HandleFilterKey(int key);
  void Resolve(v1::InterceptAction action);
  void Modify();
  void ToggleMode();
  // Runs `call` on a thread of its own, with a call context made ready
  // (token, deadline `seconds`), so that the screen stays live: a replayed
  // request a breakpoint holds can be forwarded meanwhile. The closure
  // `call` returns runs on the screen's thread once it is done. One at a
  // time; false (with a status) if one is running.
  bool StartBackground(
      std::function<std::function<void()>(grpc::ClientContext*)> call,
      double seconds);
  // Applies the background call's result if it is done (`wait`: waits).
  void FinishBackground(bool wait);
  void Replay();
  void ReplaySession();
  void ShowReplayReport(const std::string& session_id,
                        const v1::ReplaySessionResponse& response);
  void Export();
  // The explore report (tui_explore.h) of --server or the selected
  // message's server, and one of its skills by number (0-based).
  void Explore();
  void ShowSkill(size_t index);
  // The report's lines cut to `width` columns.
  std::vector<std::string> ReportLines(size_t width) const {
    std::vector<std::string> lines;
    for (const std::string& line : report_) {
      for (std::string& piece : WrapColumns(line, width)) {
        lines.push_back(std::move(piece));
      }
    }
    return lines;
  }
  void SetStatus(std::string text, bool error = false) {
    status_ = std::move(text);
    status_error_ = error;
  }
  void ShowFailure(const absl::Status& status, const std::string& what);

  Context& context_;
  const TuiFlags& flags_;
  ServerNames names_;
  std::string server_id_;
  TuiModel model_;
  CursesSession* curses_ = nullptr;

  EventQueue queue_;
  grpc::ClientContext watch_call_;
  std::thread watch_thread_;
  bool stream_ended_ = false;

  bool intercept_available_ = true;
  v1::InterceptMode mode_ = v1::INTERCEPT_MODE_UNSPECIFIED;
  uint32_t daemon_held_ = 0;
  std::chrono::steady_clock::time_point last_poll_;

  bool editing_filter_ = false;
  bool show_help_ = false;
  std::string status_;
  bool status_error_ = false;
  // Texts refused by the daemon, per hold id, to edit again from.
  std::map<std::string, std::string> drafts_;
  // A report shown in the detail pane instead of the selected message
  // (a session's replay and its diff) until a key other than the detail
  // scrolling keys is pressed.
  std::vector<std::string> report_;
  size_t report_scroll_ = 0;
  // While an explore report (or a skill of it) is shown: the server and
  // its skills, which the digits show.
  std::string explore_server_;
  std::vector<v1::Skill> explore_skills_;
  std::unique_ptr<grpc::ClientContext> background_call_;
  std::future<std::function<void()>> background_;
};

}  // namespace inspector::cli::tui

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_TUI_APP_H_
