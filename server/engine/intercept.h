// The intercept stage of the pipeline (intercept.proto): holds messages
// before they are forwarded, in either direction, until the user forwards,
// modifies or drops them.
//
// Every message of a client or a server passes through Submit() before it
// is recorded and forwarded, with a continuation that does the rest. The
// stage keeps one lane per session and direction: a message held there
// holds back the messages behind it in that lane (their continuations wait
// in the lane, in order), and nothing else. No thread waits: releasing a
// message runs its continuation, then those queued behind it, on the thread
// that released it, until the lane is empty or the next one is held.
//
// Cost: while nothing can hold (PASSTHROUGH, no enabled breakpoint,
// nothing held) active() is one atomic load and callers skip Submit(). With
// breakpoints, callers first ask Passes() with a view of the message
// (pointers into what they hold: nothing is copied or allocated); only a
// message that a breakpoint matches, or that must queue behind a held one,
// is copied into a subject for Submit(). Each breakpoint is compiled when
// it is added (expressions, pointer tokens, value) and checks its cheap
// fields before the text; a pointer is followed by scanning the raw text
// (which InspectMessage validated) down its path, without a parse.
//
// Thread-safe. Continuations and on_held callbacks run without the stage's
// lock held.
#ifndef INSPECTOR_SERVER_ENGINE_INTERCEPT_H_
#define INSPECTOR_SERVER_ENGINE_INTERCEPT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/events.pb.h"
#include "inspector/v1/intercept.pb.h"
#include "common/clock/clock.h"
#include "server/engine/json_rpc.h"

namespace inspector::engine {

class Pipeline;

// What a breakpoint looks at, borrowed from the caller for the time of
// one call.
struct InterceptView {
  std::string_view server_id;
  std::string_view server_name;
  std::string_view session_id;
  bool client_to_server = true;
  const MessageInfo* info = nullptr;
  // Valid JSON (InspectMessage accepted it).
  std::string_view raw;
  // As in InterceptSubject.
  std::string_view method;
  std::string_view target;
};

// What the stage knows of a message when it decides whether to hold it.
struct InterceptSubject {
  std::string server_id;
  std::string server_name;
  std::string session_id;
  bool client_to_server = true;
  MessageInfo info;
  std::string raw;
  // The method and target a breakpoint matches: the message's own, or for
  // a response or error its request's.
  std::string method;
  std::string target;

  InterceptView View() const {
    return {server_id, server_name,    session_id, client_to_server,
            &info,     raw,            method,     target};
  }
};

// What happened to a message, given to its continuation.
struct InterceptOutcome {
  // UNSPECIFIED: it was not held (it passes as it came); FORWARD, MODIFY,
  // DROP: it was held and resolved so.
  v1::InterceptAction action = v1::INTERCEPT_ACTION_UNSPECIFIED;
  // The text to send on: the message as it came, or the edited one.
  std::string raw;
  // With MODIFY: the message as it came.
  std::string original_raw;
  // With DROP of a request: leave its caller unanswered.
  bool leave_unanswered = false;
  // "user", "timeout", "passthrough" or "session_ended"; "" if not held.
  std::string resolved_by;
  // The hold's id ("h-1"); "" if not held.
  std::string held_id;
};

// The history annotation of a resolved message: "forward", "modify" or
// "drop" (InterceptActionName) and, with modify, the original text.
const char* InterceptActionName(v1::InterceptAction action);

class InterceptStage {
 public:
  using Continuation = std::function<void(InterceptOutcome)>;

  // `pipeline` publishes the HELD events (may be null in tests). `clock`
  // runs hold timeouts; null: the stage makes a timer thread of its own
  // when the first hold timeout is due. Both must outlive the stage.
  explicit InterceptStage(Pipeline* pipeline, Clock* clock = nullptr);
  ~InterceptStage();
  InterceptStage(const InterceptStage&) = delete;
  InterceptStage& operator=(const InterceptStage&) = delete;

  // False when nothing can be held now: callers then skip Submit().
  bool active() const { return demand_.load(std::memory_order_acquire) != 0; }

  // Whether the message `view` passes now: no enabled breakpoint matches
  // it, the mode is PASSTHROUGH and nothing waits in its lane. The caller
  // then carries on itself (nothing is counted; nothing is copied unless
  // some lane holds messages, when the session id is, to look its lane
  // up); else it hands the message to Submit(), which decides again. After
  // Close(): always true.
  bool Passes(const InterceptView& view);

  // Takes a message of `subject.session_id` in its direction. Runs `next`
  // at once on this thread if it is not held and nothing is held before it
  // in its lane; else later, when it is released. `on_held` (optional)
  // runs when the message becomes held, before the HELD event, without the
  // stage's lock (so a quick release may run `next` before it returns).
  void Submit(InterceptSubject subject, Continuation next,
              std::function<void()> on_held = nullptr);

  // The session ended: its held and queued messages are dropped
  // (resolved_by "session_ended"), their continuations run with DROP.
  void SessionEnded(const std::string& session_id);

  // The daemon is shutting down: nothing is held any more from now on,
  // and what is held or queued is dropped as by SessionEnded, so that the
  // calls waiting on it (a replay, a Forward) can end.
  void Close();

  // InterceptService.
  v1::InterceptState GetState();
  // Mode UNSPECIFIED keeps the mode; switching to PASSTHROUGH forwards all
  // held messages, in order (resolved_by "passthrough").
  v1::InterceptState SetState(v1::InterceptMode mode,
                              std::optional<uint32_t> hold_timeout_ms);
  std::vector<v1::Breakpoint> ListBreakpoints();
  // INVALID_REQUEST (ValidateBreakpoint) for a bad breakpoint.
  absl::StatusOr<v1::Breakpoint> AddBreakpoint(v1::Breakpoint breakpoint);
  // NOT_FOUND for an unknown id.
  absl::StatusOr<v1::Breakpoint> UpdateBreakpoint(const std::string& id,
                                                  std::optional<bool> enabled,
                                                  bool reset_hits);
  absl::Status RemoveBreakpoint(const std::string& id);
  // Held now, oldest first; `server`: id or name, empty for all.
  std::vector<v1::HeldMessage> ListHeld(const std::string& server);
  // NOT_FOUND if `id` is not held (unknown or resolved already);
  // INVALID_REQUEST for an unknown action or a bad edit (not JSON, not
  // JSON-RPC 2.0, another kind or id). Nothing is sent on error. Returns
  // the held message as resolved (its continuation has run).
  absl::StatusOr<v1::HeldMessage> Resolve(
      const std::string& id, v1::InterceptAction action,
      const std::string& modified, std::optional<bool> leave_unanswered,
      const std::string& resolved_by = "user");

  // Checks an edit of `held` (raw text, kind and id): the text to send (an
  // edit with line breaks is re-serialized on one line, as stdio needs),
  // or INVALID_REQUEST. Exposed for tests.
  static absl::StatusOr<std::string> CheckEdit(const MessageInfo& held,
                                               const std::string& edited);

  // Whether `breakpoint` matches `subject` (exposed for tests; `enabled`
  // is not looked at).
  static bool Matches(const v1::Breakpoint& breakpoint,
                      const InterceptSubject& subject);

 private:
  struct Compiled;
  struct Held;
  struct Item {
    InterceptSubject subject;
    Continuation next;
    std::function<void()> on_held;
    std::shared_ptr<Held> held;  // set once the item is held
  };
  struct Lane {
    std::deque<Item> items;
    // A thread is running the lane's continuations (after a release).
    bool draining = false;
  };
  using LaneKey = std::pair<std::string, bool>;  // session, client_to_server

  // The breakpoint that holds `subject` (nullptr in INTERCEPT mode, when
  // it holds all), counting its hit; false if nothing holds it.
  bool ShouldHold(const InterceptView& subject, std::string* breakpoint_id,
                  bool* leave_unanswered) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `item` held: its id, its HELD event (returned, published by the
  // caller after unlocking), its hold timeout.
  v1::Event MakeHeld(Item& item, const std::string& breakpoint_id,
                     bool leave_unanswered) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the lane's continuations from its front until it is empty or the
  // next message is held.
  void Drain(const LaneKey& key);
  void UpdateDemand() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Publish(v1::Event event);
  Clock* clock();

  Pipeline* const pipeline_;
  Clock* clock_;
  std::unique_ptr<Clock> own_clock_;  // made on first need when clock_ null

  // Non-zero while something can be held: INTERCEPT mode, an enabled
  // breakpoint, or a lane with messages.
  std::atomic<int> demand_{0};

  absl::Mutex mu_;
  v1::InterceptMode mode_ ABSL_GUARDED_BY(mu_) = v1::PASSTHROUGH;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t hold_timeout_ms_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::shared_ptr<Compiled>> breakpoints_ ABSL_GUARDED_BY(mu_);
  uint64_t next_breakpoint_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_held_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<LaneKey, Lane> lanes_ ABSL_GUARDED_BY(mu_);
  // Held messages by id: their lane.
  std::map<std::string, LaneKey> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_INTERCEPT_H_
