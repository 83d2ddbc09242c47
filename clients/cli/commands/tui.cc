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
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/commands/intercept_calls.h"
#include "clients/cli/files.h"
#include "clients/cli/history_views.h"
#include "clients/cli/intercept_views.h"
#include "clients/cli/session_views.h"
#include "clients/cli/text.h"
#include "clients/cli/tui_model.h"
#include "common/status_macros.h"

// Last, and as functions rather than macros: curses defines OK, ERR,
// erase(), timeout() ... which would clash with the headers above.
#define NCURSES_NOMACROS
#include <curses.h>

namespace inspector::cli {
namespace {

constexpr int kKeyTimeoutMs = 100;
constexpr double kTuiCallSeconds = 5;
// A session's replay sends every recorded request again, one after the
// other, and may start the server first.
constexpr double kReplaySessionSeconds = 300;
// How often the mode and the held messages are asked again, in case an
// event was missed or another client changed the mode.
constexpr auto kStatePollInterval = std::chrono::seconds(2);

enum ColorPair : short {
  kPairOut = 1,
  kPairIn,
  kPairError,
  kPairHeld,
  kPairIntercept,
  kPairPassthrough,
  kPairBar,
};

constexpr char kTuiHelp[] =
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

// initscr() .. endwin(), and out of curses around an editor.
class CursesSession {
 public:
  CursesSession() {
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    timeout(kKeyTimeoutMs);
    set_escdelay(25);
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(kPairOut, COLOR_CYAN, -1);
      init_pair(kPairIn, COLOR_GREEN, -1);
      init_pair(kPairError, COLOR_RED, -1);
      init_pair(kPairHeld, COLOR_YELLOW, -1);
      init_pair(kPairIntercept, COLOR_BLACK, COLOR_YELLOW);
      init_pair(kPairPassthrough, COLOR_BLACK, COLOR_GREEN);
      init_pair(kPairBar, COLOR_BLACK, COLOR_WHITE);
    }
  }
  ~CursesSession() { endwin(); }
  CursesSession(const CursesSession&) = delete;
  CursesSession& operator=(const CursesSession&) = delete;

  // Leaves curses for a program that uses the terminal (the editor).
  void Suspend() {
    def_prog_mode();
    endwin();
  }
  void Resume() {
    reset_prog_mode();
    clearok(stdscr, TRUE);
    refresh();
  }
};

int Attr(short pair) { return has_colors() ? COLOR_PAIR(pair) : 0; }

// Writes `text` at (y, x), cut to `width` columns, padded with blanks.
void Put(int y, int x, const std::string& text, int width) {
  if (width <= 0) return;
  std::string cut = TruncateToWidth(text, static_cast<size_t>(width));
  size_t used = DisplayWidth(cut);
  if (used < static_cast<size_t>(width)) cut.append(width - used, ' ');
  mvaddstr(y, x, cut.c_str());
}

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
  std::unique_ptr<grpc::ClientContext> background_call_;
  std::future<std::function<void()>> background_;
};

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

void TuiApp::ShowFailure(const absl::Status& status, const std::string& what) {
  absl::Status shown = NotAvailableIfUnimplemented(status, what);
  Failure failure = DescribeError(shown, context_.error_context());
  SetStatus(absl::StrCat(failure.message,
                         failure.hint.empty() ? "" : " (" + failure.hint + ")"),
            true);
}

void TuiApp::Resolve(v1::InterceptAction action) {
  const TuiRow* row = model_.selected();
  if (row == nullptr || !row->held()) {
    SetStatus("the selected message is not held", true);
    return;
  }
  v1::ResolveHeldRequest request;
  request.set_id(row->held_id);
  request.set_action(action);
  v1::HeldMessage held;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::ResolveHeld,
           request, &held);
  if (!status.ok()) {
    ShowFailure(status, "intercept");
    return;
  }
  model_.ApplyHeld(held);
  SetStatus(absl::StrCat(held.id(), " ", ResolvedText(held)));
}

void TuiApp::Modify() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || !row->held()) {
    SetStatus("the selected message is not held", true);
    return;
  }
  const std::string held_id = row->held_id;
  v1::HeldMessage held;
  held.set_id(held_id);
  *held.mutable_message() = row->message;
  auto draft = drafts_.find(held_id);
  const std::string text =
      draft != drafts_.end() ? draft->second : HeldMessageForEditing(held);
  const std::string editor =
      ChooseEditor(std::getenv("VISUAL"), std::getenv("EDITOR"));
  curses_->Suspend();
  absl::StatusOr<std::string> edited = EditInEditor(editor, text);
  curses_->Resume();
  if (!edited.ok()) {
    ShowFailure(edited.status(), "intercept");
    return;
  }
  if (EditUnchanged(text, *edited)) {
    SetStatus(absl::StrCat("unchanged: nothing sent; ", held_id,
                           " stays held"));
    return;
  }
  v1::ResolveHeldRequest request;
  request.set_id(held_id);
  request.set_action(v1::MODIFY);
  request.set_modified(*edited);
  v1::HeldMessage resolved;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::ResolveHeld,
           request, &resolved);
  if (!status.ok()) {
    drafts_[held_id] = *edited;
    ShowFailure(status, "intercept");
    absl::StrAppend(&status_, "; F6 edits your text again");
    return;
  }
  drafts_.erase(held_id);
  model_.ApplyHeld(resolved);
  SetStatus(absl::StrCat(resolved.id(), " ", ResolvedText(resolved)));
}

void TuiApp::ToggleMode() {
  v1::SetInterceptStateRequest request;
  request.set_mode(mode_ == v1::INTERCEPT ? v1::PASSTHROUGH : v1::INTERCEPT);
  v1::InterceptState state;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::SetInterceptState,
           request, &state);
  if (!status.ok()) {
    ShowFailure(status, "intercept");
    return;
  }
  mode_ = state.mode();
  SetStatus(mode_ == v1::INTERCEPT
                ? "INTERCEPT: every message is held"
                : "PASSTHROUGH: messages flow on; held ones were forwarded");
  PollState(/*force=*/true);
}

bool TuiApp::StartBackground(
    std::function<std::function<void()>(grpc::ClientContext*)> call,
    double seconds) {
  if (background_.valid()) {
    SetStatus("a replay is still running: wait for it (F5 forwards a held "
              "message it sent)",
              true);
    return false;
  }
  background_call_ = std::make_unique<grpc::ClientContext>();
  if (absl::Status prepared = context_.PrepareStream(background_call_.get());
      !prepared.ok()) {
    ShowFailure(prepared, "replay");
    return false;
  }
  background_call_->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  background_ = std::async(std::launch::async,
                           [call = std::move(call),
                            ctx = background_call_.get()] { return call(ctx); });
  return true;
}

void TuiApp::FinishBackground(bool wait) {
  if (!background_.valid()) return;
  if (!wait && background_.wait_for(std::chrono::seconds(0)) !=
                   std::future_status::ready) {
    return;
  }
  std::function<void()> apply = background_.get();
  background_call_.reset();
  if (apply) apply();
}

void TuiApp::Replay() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || row->message.direction() != v1::CLIENT_TO_SERVER ||
      row->message.kind() != "request" || row->message.id() == 0) {
    SetStatus("select a recorded client-to-server request to replay", true);
    return;
  }
  const int64_t id = row->message.id();
  auto request = std::make_shared<v1::ReplayRequest>();
  request->set_message_id(id);
  v1::SessionService::Stub* stub = context_.sessions();
  if (!StartBackground(
          [this, stub, request, id](grpc::ClientContext* call)
              -> std::function<void()> {
            auto response = std::make_shared<v1::ReplayResponse>();
            absl::Status status =
                FromGrpcStatus(stub->Replay(call, *request, response.get()));
            return [this, status, response, id] {
              if (!status.ok()) {
                ShowFailure(status, "replay");
                return;
              }
              model_.AddMessage(response->request());
              if (response->has_response()) {
                model_.AddMessage(response->response());
              }
              SetStatus(absl::StrCat(
                  "replayed #", id, " as #", response->request().id(),
                  response->has_response()
                      ? absl::StrCat(": answer #", response->response().id(),
                                     response->response().kind() == "error"
                                         ? " (error)"
                                         : "")
                      : ""));
            };
          },
          kTuiCallSeconds * 12)) {
    return;
  }
  SetStatus(absl::StrCat("replaying #", id, "..."));
}

void TuiApp::ReplaySession() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || row->message.session_id().empty()) {
    SetStatus("select a message of a recorded session to replay it", true);
    return;
  }
  const std::string session_id = row->message.session_id();
  auto request = std::make_shared<v1::ReplaySessionRequest>();
  request->set_id(session_id);
  v1::SessionService::Stub* stub = context_.sessions();
  if (!StartBackground(
          [this, stub, request, session_id](grpc::ClientContext* call)
              -> std::function<void()> {
            auto response = std::make_shared<v1::ReplaySessionResponse>();
            absl::Status status = FromGrpcStatus(
                stub->ReplaySession(call, *request, response.get()));
            return [this, status, response, session_id] {
              if (!status.ok()) {
                ShowFailure(status, "replay");
                return;
              }
              ShowReplayReport(session_id, *response);
            };
          },
          kReplaySessionSeconds)) {
    return;
  }
  // The call takes as long as the session's requests (and any a
  // breakpoint holds): the screen stays live meanwhile.
  SetStatus(absl::StrCat("replaying session ", session_id, "..."));
}

void TuiApp::ShowReplayReport(const std::string& session_id,
                              const v1::ReplaySessionResponse& response) {
  const v1::DiffSessionsResponse& diff = response.diff();
  report_.clear();
  report_scroll_ = 0;
  report_.push_back(absl::StrCat("REPLAY of session ", session_id));
  report_.push_back(absl::StrCat("as session ", response.session().id(), " (",
                                 response.session().messages(),
                                 " messages)"));
  report_.push_back(diff.identical()
                        ? "the answers are the same as recorded"
                        : absl::StrCat(diff.differing(), " of ",
                                       diff.pairs_size(),
                                       " answers changed:"));
  report_.push_back("");
  const std::string text = DiffText(diff, /*only_differences=*/true);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    report_.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  report_.push_back("");
  report_.push_back("(J/K scroll, Esc or any other key closes)");
  SetStatus(absl::StrCat("replayed as session ", response.session().id(), ": ",
                         diff.identical()
                             ? "same answers"
                             : absl::StrCat(diff.differing(), " changed")));
}

void TuiApp::Export() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || row->message.session_id().empty()) {
    SetStatus("select a message of a recorded session to export", true);
    return;
  }
  v1::ExportSessionRequest request;
  request.set_id(row->message.session_id());
  v1::ExportSessionResponse response;
  absl::Status status =
      Call(context_.sessions(), &v1::SessionService::Stub::ExportSession,
           request, &response);
  if (!status.ok()) {
    ShowFailure(status, "session export");
    return;
  }
  std::string name = response.filename().empty()
                         ? absl::StrCat("session-", request.id(), ".json")
                         : std::filesystem::path(response.filename())
                               .filename()
                               .string();
  std::error_code error;
  std::filesystem::path path = std::filesystem::current_path(error) / name;
  absl::Status written = WritePrivateFile(path.string(), response.json());
  if (!written.ok()) {
    ShowFailure(written, "session export");
    return;
  }
  SetStatus(absl::StrCat("session exported to ", path.string(),
                         response.masked() > 0
                             ? absl::StrCat(" (", response.masked(),
                                            " values masked)")
                             : ""));
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
    report_.clear();
    report_scroll_ = 0;
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
    default:
      break;
  }
  return true;
}

void TuiApp::Draw() {
  erase();
  TuiLayout layout = ComputeTuiLayout(COLS, LINES);
  if (layout.too_small) {
    Put(0, 0, "inspectorctl tui: the terminal is too small (30x8 at least)",
        COLS);
    refresh();
    return;
  }

  // Header: address, server filter, held count, mode badge.
  const std::string badge =
      !intercept_available_          ? "[NO INTERCEPT]"
      : mode_ == v1::INTERCEPT       ? "[INTERCEPT]"
      : mode_ == v1::PASSTHROUGH     ? "[PASSTHROUGH]"
                                     : "[?]";
  // The model's count: ListHeld corrects it when the daemon's differs.
  const size_t held = model_.held_count();
  std::string header = absl::StrCat(
      " inspectorctl tui  ", context_.options().addr, "  server: ",
      flags_.server.empty() ? "all" : flags_.server, "  held: ", held);
  const int badge_width = static_cast<int>(DisplayWidth(badge));
  attron(Attr(kPairBar));
  Put(0, 0, header, COLS - badge_width - 1);
  attroff(Attr(kPairBar));
  attron(Attr(mode_ == v1::INTERCEPT ? kPairIntercept : kPairPassthrough) |
         A_BOLD);
  Put(0, COLS - badge_width - 1, badge + " ", badge_width + 1);
  attroff(Attr(mode_ == v1::INTERCEPT ? kPairIntercept : kPairPassthrough) |
          A_BOLD);

  // Message list.
  const size_t top = model_.ListTop(static_cast<size_t>(layout.list_height));
  const std::optional<size_t> selected = model_.selected_index();
  if (model_.visible_count() == 0) {
    Put(layout.list_top, layout.list_left,
        model_.row_count() == 0 ? " waiting for traffic..."
                                : " no message matches the filter",
        layout.list_width);
  }
  for (int line = 0; line < layout.list_height; ++line) {
    const size_t index = top + static_cast<size_t>(line);
    if (index >= model_.visible_count()) break;
    const TuiRow& row = model_.visible(index);
    int attr = row.held()                  ? Attr(kPairHeld) | A_BOLD
               : row.IsError()             ? Attr(kPairError)
               : row.message.direction() == v1::CLIENT_TO_SERVER
                   ? Attr(kPairOut)
                   : Attr(kPairIn);
    if (selected == index) attr |= A_REVERSE;
    attron(attr);
    Put(layout.list_top + line, layout.list_left,
        TuiModel::ListLine(row, static_cast<size_t>(layout.list_width)),
        layout.list_width);
    attroff(attr);
  }

  // Separator.
  // Drawn as UTF-8 text: the alternate character set shows as letters in
  // some terminals (and in tmux's capture) when the locale is UTF-8.
  if (layout.stacked) {
    std::string line;
    for (int x = 0; x < COLS; ++x) line += "─";
    mvaddstr(layout.separator, 0, line.c_str());
  } else {
    for (int y = 0; y < layout.list_height; ++y) {
      mvaddstr(layout.list_top + y, layout.separator, "│");
    }
  }

  // Detail pane: the report if there is one, else the selected message.
  const bool report = !report_.empty();
  std::vector<std::string> detail =
      report ? ReportLines(static_cast<size_t>(layout.detail_width))
             : model_.DetailLines(static_cast<size_t>(layout.detail_width));
  if (!report) {
    model_.ScrollDetail(0, detail.size(),
                        static_cast<size_t>(layout.detail_height));
  }
  const size_t scroll = report ? report_scroll_ : model_.detail_scroll();
  for (int line = 0; line < layout.detail_height; ++line) {
    const size_t index = scroll + static_cast<size_t>(line);
    if (index >= detail.size()) break;
    const bool held_line = detail[index].rfind("HELD ", 0) == 0 ||
                           detail[index].rfind("REPLAY ", 0) == 0;
    if (held_line) attron(Attr(kPairHeld) | A_BOLD);
    Put(layout.detail_top + line, layout.detail_left, detail[index],
        layout.detail_width);
    if (held_line) attroff(Attr(kPairHeld) | A_BOLD);
  }

  // Filter bar.
  std::string filter_line = absl::StrCat(
      " Filter: ", model_.filter(), editing_filter_ ? "_" : "",
      editing_filter_ ? "   (Enter keep, Esc clear)" : "",
      "   ", model_.visible_count(), "/", model_.row_count(), " messages");
  attron(editing_filter_ ? A_BOLD : 0);
  Put(layout.filter_row, 0, filter_line, COLS);
  attroff(editing_filter_ ? A_BOLD : 0);

  // Status bar: the last result, else the keys.
  const std::string keys =
      " F1 Help F2 Filter F5 Fwd F6 Modify F8 Drop i Mode r/R Replay s Export"
      " q Quit";
  const int status_attr =
      status_.empty() ? Attr(kPairBar)
                      : (status_error_ ? Attr(kPairError) | A_BOLD : A_BOLD);
  attron(status_attr);
  Put(layout.status_row, 0, status_.empty() ? keys : " " + status_, COLS);
  attroff(status_attr);

  if (show_help_) DrawHelp();
  refresh();
}

void TuiApp::DrawHelp() {
  std::vector<std::string> lines;
  std::string text = kTuiHelp;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  lines.push_back("");
  lines.push_back("Press any key.");
  const int width = std::min(COLS - 2, 72);
  const int height = std::min(LINES - 2, static_cast<int>(lines.size()) + 2);
  const int y = (LINES - height) / 2;
  const int x = (COLS - width) / 2;
  attron(Attr(kPairBar));
  for (int row = 0; row < height; ++row) {
    const int index = row - 1;
    Put(y + row, x,
        index >= 0 && index < static_cast<int>(lines.size()) && row < height - 1
            ? " " + lines[index]
            : "",
        width);
  }
  attroff(Attr(kPairBar));
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
      kTuiHelp,
      "\nNeeds a terminal (80x24 or larger, UTF-8). Exits 4 if inspectord\n"
      "is not reachable, like the other commands."));
  OnSelected(tui, context, flags, RunTui);
}

}  // namespace inspector::cli
