// The one path every JSON-RPC message takes inside the daemon, whatever
// its entry (gRPC call, REST call, bridge client, stdio proxy) and in
// either direction: let the intercept stage hold, change or drop it
// (intercept.h), record it in history, publish it to watchers; then the
// caller forwards it.
//
// Recording never waits for the disk: the history writer queues rows for
// its own thread. With HistorySync::kAnswered (the default, --history-sync
// answered) a caller's answer is handed over only once the rows of its
// request and response are committed (WhenRecorded), so an answered call is
// in history even if the daemon is killed right after; no thread sleeps
// for it, but the answering thread may make that commit itself (see
// HistoryWriter::WhenWritten). Publishing never blocks: watchers have
// bounded buffers. Also
// carries the daemon's log lines and connection state changes to the same
// places, and the start and end of each session with a server (the
// sessions table). Thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_PIPELINE_H_
#define INSPECTOR_SERVER_ENGINE_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock/clock.h"
#include "common/http_exchange_record.h"
#include "inspector/v1/events.pb.h"
#include "server/engine/catalog_drift.h"
#include "server/engine/event_bus.h"
#include "server/engine/json_rpc.h"
#include "server/metrics/mcp_operation_metrics.h"
#include "server/telemetry/tracer.h"
#include "server/metrics/mcp_session_metrics.h"
#include "storage/history_writer.h"

namespace inspector::engine {

class ReceivedHttp;

// One message and what the engine knows about it.
struct Envelope {
  std::string_view server_id;
  std::string_view session_id;
  bool client_to_server = true;
  const MessageInfo* info = nullptr;  // nullptr: not JSON ("invalid")
  std::string_view raw;
  // For responses: the request's message id, its duration and outcome.
  // For notifications/cancelled: the message id of the request it
  // cancels, so that history links the client's cancellation and the one
  // sent upstream (which names the upstream id) to the same request.
  int64_t correlated_id = 0;
  std::optional<double> duration_ms;
  std::optional<bool> success;
  // JSON-RPC error code, or an inspector reason for local failures.
  std::string error_code;
  // What the intercept stage did with a message it held: "forward",
  // "modify" or "drop"; empty if not held. With "modify", raw is what is
  // sent and original_raw what was received.
  std::string_view intercept_action;
  std::string_view original_raw;
  // The protocol era it travels in: "legacy" or "modern"; empty: unknown.
  std::string_view era;
  // Requests and their answers: the input round (0 the first send, n the
  // nth retry of a multi round-trip request) and round 0's message id
  // (0 for round 0).
  std::optional<int> input_round;
  int64_t first_round_id = 0;
  // Requests and their answers: the W3C trace id (32 hex digits) the
  // request belongs to; empty when none.
  std::string_view trace_id;
  // The HTTP exchange that carried it (message_http.h), secrets masked;
  // null: none known. With received_http (a front door's request, whose
  // answer comes later), the row is completed once the answer is given.
  std::shared_ptr<const HttpExchangeRecord> http;
  std::shared_ptr<ReceivedHttp> received_http;
};

class InterceptStage;
class CatalogPins;

// When a caller's answer may leave, relative to its rows in history.
enum class HistorySync {
  kAnswered,  // once its request and response rows are committed
  kAsync,     // at once; the rows are committed within ~50 ms (a kill
              // loses those not yet committed)
};

class Pipeline {
 public:
  // `history` may be null (recording off); `bus` must not be. `clock`
  // stamps what is recorded; null: the process's real clock. All must
  // outlive the pipeline.
  Pipeline(storage::HistoryWriter* history, EventBus* bus,
           HistorySync sync = HistorySync::kAnswered, Clock* clock = nullptr);

  // Runs `deliver` (which hands an answer to its caller) once everything
  // observed so far is committed to history, in kAnswered mode with
  // history on: on the thread that makes that commit (this one, if nobody
  // else is writing; else the history writer's or another answering
  // thread's, so it must be quick and never block), or on this thread at
  // once if nothing is outstanding. Otherwise runs it at once.
  void WhenRecorded(std::function<void()> deliver);
  // True when WhenRecorded may defer (kAnswered with history on), so that
  // the hot path builds no deferred callback when it would run at once.
  bool AnswersWaitForCommit() const {
    return history_ != nullptr && sync_ == HistorySync::kAnswered;
  }

  // The intercept stage every entry's messages pass before they are
  // recorded and forwarded (server/engine/intercept.h); null: none. Set
  // once, before traffic.
  void set_intercept(InterceptStage* stage) { intercept_ = stage; }
  InterceptStage* intercept() const { return intercept_; }

  // Where the answers to requests sent upstream are timed
  // (mcp.client.operation.duration); null: nowhere. Set once, before
  // traffic; must outlive the pipeline.
  void set_metrics(metrics::McpOperationMetrics* metrics) {
    metrics_ = metrics;
  }

  // Who traces the callers' requests (server/telemetry/tracer.h); null:
  // nobody. Set once, before traffic; must outlive the pipeline.
  void set_tracer(telemetry::Tracer* tracer) { tracer_ = tracer; }
  telemetry::Tracer* tracer() const { return tracer_; }
  // Where sessions are timed from SessionStarted to SessionEnded
  // (mcp.*.session.duration); null: nowhere. Set once, before traffic;
  // must outlive the pipeline.
  void set_session_metrics(metrics::McpSessionMetrics* metrics) {
    session_metrics_ = metrics;
  }

  // Where the servers' list answers are fingerprinted (catalog_drift.h);
  // null: nowhere. Set once, before traffic; must outlive the pipeline.
  void set_catalog_drift(CatalogDrift* drift) { catalog_ = drift; }

  // What the pinned servers withhold from their callers (catalog_pins.h):
  // every session's SendQueue asks it about each caller request, whatever
  // the entry (front doors, the stdio proxy, POST /mcp and Forward, the
  // typed calls); null: nothing is withheld. Set once, before traffic;
  // must outlive the pipeline.
  void set_catalog_pins(const CatalogPins* pins) { pins_ = pins; }
  const CatalogPins* catalog_pins() const { return pins_; }

  // Records and publishes `envelope`; returns its message id (0 when not
  // recorded), used to correlate the answer.
  int64_t Observe(const Envelope& envelope);

  // Sets (or replaces) the HTTP exchange of the recorded message
  // `message_id` (ReceivedHttp, once a front door answered). Nothing when
  // history is off.
  void RecordHttp(int64_t message_id,
                  std::shared_ptr<const HttpExchangeRecord> http);

  // A log line: level debug|info|warn|error, source daemon|stderr|server.
  void Log(std::string_view level, std::string_view source,
           std::string_view server_id, std::string_view session_id,
           std::string_view message, std::string_view data_json = "");

  // A session with a server began: its row in the sessions table, started
  // now. Watchers learn of sessions from state changes; only a session
  // opened for a caller a front door named (record.caller) is published,
  // as Event.session_started, so that they learn who.
  void SessionStarted(storage::SessionRecord record);
  // The session ended now, for `reason` ("closed" or an inspector reason).
  void SessionEnded(std::string_view session_id, std::string_view reason);

  void PublishState(const v1::StateChange& change);
  void Publish(v1::Event event);

  // Raw text longer than this is cut in published events (history keeps
  // up to its own limit).
  static constexpr size_t kMaxEventRawBytes = 1 << 20;

  // The pipeline clock's time in Unix milliseconds. Any thread.
  int64_t NowMillis() const;

 private:
  // Times `envelope` if it answers a request sent upstream.
  void RecordOperation(const Envelope& envelope);
  // Publishes `envelope` (recorded as message `id`, of `kind`) to watchers.
  void PublishMessage(const Envelope& envelope, int64_t ts, int64_t id,
                      const char* kind);

  storage::HistoryWriter* const history_;
  EventBus* const bus_;
  const HistorySync sync_;
  Clock* const clock_;
  InterceptStage* intercept_ = nullptr;
  metrics::McpOperationMetrics* metrics_ = nullptr;
  metrics::McpSessionMetrics* session_metrics_ = nullptr;
  CatalogDrift* catalog_ = nullptr;
  const CatalogPins* pins_ = nullptr;
  telemetry::Tracer* tracer_ = nullptr;
  std::atomic<int64_t> unrecorded_ids_{0};
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_PIPELINE_H_
