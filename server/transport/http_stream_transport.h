// The lifecycle the two HTTP transports share (Streamable HTTP and legacy
// HTTP+SSE), as a base class.
//
// HttpStreamTransport owns:
//  - the worker: one CurlLoop thread per transport that runs every transfer,
//    timer and callback;
//  - Start/Send/Close: checking the URL and the configured headers, starting
//    the worker, optionally waiting until the subclass reports that the
//    server is reachable (StartMode::kAwaitServer), refusing Send() before
//    Start and after the end, and joining the worker in Close();
//  - the end of the connection: on_closed exactly once, either OK after
//    Close() or the error given to Fail(), with on_send_failed for the
//    messages that never went out;
//  - what every request carries: the configured headers minus the ones the
//    transport sets itself;
//  - the plumbing of a server-sent event stream (EventStream): the GET that
//    asks for it, the check of its answer, the feeding of its events, and the
//    reconnect delay that honours the stream's `retry:` field.
// A subclass adds only its wire protocol: what Send() does with a message
// (SendOnWorker), what to connect when Start() waits for the server
// (ConnectOnStart), how to abort its own requests (AbortTransfers), and any
// last request before the worker stops (WindDown).
//
// Threading: the public methods may be called from any thread (see
// transport.h). Every protected method and every member a subclass keeps for
// the worker runs on the worker thread only, except where noted. Close (and the destructor)
// must not be called from a callback; if Close is, it only starts the
// shutdown and returns, and a later Close or the destructor on another
// thread waits for it. A subclass's destructor must call Close() itself, so
// that the worker stops before the subclass's members go away.
#ifndef INSPECTOR_SERVER_TRANSPORT_HTTP_STREAM_TRANSPORT_H_
#define INSPECTOR_SERVER_TRANSPORT_HTTP_STREAM_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/sse_parser.h"
#include "server/transport/http_client.h"
#include "server/transport/transport.h"

namespace inspector::transport {

// Reconnection and shutdown timing of the HTTP transports; the defaults are
// what the daemon uses. Tests shorten them.
struct HttpTuning {
  // First reconnect delay when the server sent no `retry:`; doubled per
  // consecutive failure.
  absl::Duration initial_backoff = absl::Seconds(1);
  // Longest delay between reconnects.
  absl::Duration max_backoff = absl::Seconds(30);
  // Consecutive failed reconnects after which the transport gives up
  // (Streamable HTTP: resuming one POST stream; SSE: the event stream).
  int max_reconnects = 5;
  // Longest wait for the answer to the DELETE sent by Close().
  absl::Duration delete_timeout = absl::Seconds(5);
};

class HttpStreamTransport : public Transport {
 public:
  // Stops the worker if a subclass has not (see the file comment).
  ~HttpStreamTransport() override;

  HttpStreamTransport(const HttpStreamTransport&) = delete;
  HttpStreamTransport& operator=(const HttpStreamTransport&) = delete;

  // Errors common to both transports: INVALID_CONFIG (field=url or
  // field=headers); FAILED_PRECONDITION if Start or Close was already
  // called; INTERNAL_ERROR if libcurl cannot be set up. With
  // StartMode::kAwaitServer also whatever the subclass passes to
  // StartFailed(), or CANCELLED if Close() was called meanwhile; on error
  // nothing is left running and no callback is called afterwards.
  absl::Status Start(TransportCallbacks callbacks) final;

  // Hands `message` to SendOnWorker() on the worker and returns at once.
  // FAILED_PRECONDITION if Start() has not succeeded, after Close(), or after
  // the connection ended with an error.
  absl::Status Send(std::string message) final;
  // The same with extra headers; see Transport::SendWithHeaders.
  absl::Status SendWithHeaders(
      std::string message,
      std::vector<std::pair<std::string, std::string>> headers) final;

  // Idempotent; see the file comment.
  void Close() final;

 protected:
  enum class StartMode {
    // Start() returns once the worker runs; no traffic until Send().
    kImmediate,
    // Start() runs ConnectOnStart() on the worker and waits until it calls
    // StartSucceeded() or StartFailed().
    kAwaitServer,
  };

  // One server-sent event stream: a GET answered with text/event-stream,
  // with what its reconnects need. Worker thread only.
  struct EventStream {
    explicit EventStream(size_t max_event_bytes) : parser(max_event_bytes) {}

    // Whether the current connection opened and delivered an event or at
    // least moved the last event id.
    bool Progressed() const {
      return open && (delivered > 0 || parser.last_event_id() != id_at_connect);
    }

    SseParser parser;
    uint64_t transfer = 0;  // the current GET; 0 if none
    uint64_t timer = 0;     // the pending reconnect; 0 if none
    bool open = false;      // the current GET was answered 2xx SSE
    size_t delivered = 0;   // message events of the current GET
    std::string id_at_connect;  // parser.last_event_id() when it was issued
    int failures = 0;           // consecutive failed connections
    absl::Status failure;       // why a handler ended the current GET
    // The current request as history records it (NoteRequest), and once
    // answered the whole exchange (NoteAnswer), which its events carry.
    HttpExchangeRecord request_http;
    std::shared_ptr<const HttpExchangeRecord> http;
  };

  // `reserved_headers`: lower-case names the transport sets itself;
  // configured headers with these names are not sent.
  HttpStreamTransport(HttpOptions options, HttpTuning tuning, StartMode mode,
                      std::vector<std::string> reserved_headers);

  // --- What a subclass provides (worker thread) ---

  // A message given to Send(), unless the transport is ending.
  virtual void SendOnWorker(std::string message) = 0;
  // A message given to SendWithHeaders(); default: SendOnWorker() without
  // the headers.
  virtual void SendOnWorkerWithHeaders(std::string message,
                                       http_internal::HttpHeaders headers) {
    SendOnWorker(std::move(message));
  }
  // kAwaitServer only: connects and later calls StartSucceeded() or
  // StartFailed().
  virtual void ConnectOnStart() {}
  // Cancels every transfer and timer of the subclass (no callbacks follow
  // for them) and drops what waits to be sent.
  virtual void AbortTransfers() = 0;
  // After Close(), once AbortTransfers() ran: must lead to
  // FinishShutdown(), now or from a later handler.
  virtual void WindDown() { FinishShutdown(); }

  // --- What the base provides to a subclass ---

  const HttpOptions& options() const { return options_; }
  const HttpTuning& tuning() const { return tuning_; }
  // The origin of options().url; set by Start() before the worker runs.
  const http_internal::UrlOrigin& origin() const { return origin_; }
  http_internal::CurlLoop* loop() const { return loop_.get(); }

  // Runs `fn` on the worker, or at once on this thread if Start() has not
  // succeeded yet (the worker's state is then still this thread's). Any
  // thread.
  void RunOnWorker(std::function<void()> fn);

  // StartSucceeded() ran.
  bool established() const { return established_; }
  // on_closed was called, or Start() failed.
  bool finished() const { return finished_; }
  // finished(), or Close() began the shutdown: drop everything.
  bool ending() const { return finished_ || shutting_down_; }

  void Log(const std::string& line);
  // Hands `message` to on_http_message with `http` when both are set,
  // otherwise to on_message.
  void Deliver(std::string message,
               std::shared_ptr<const HttpExchangeRecord> http = nullptr);
  // What history records of an exchange: `request` as sent (masked, in
  // stream->request_http), then with its answer's `head` (stream->http).
  static void NoteRequest(const http_internal::HttpRequest& request,
                          EventStream* stream);
  static void NoteAnswer(const http_internal::HttpResponseHead& head,
                         EventStream* stream);
  void SendFailed(const std::string& message, absl::Status status);

  // kAwaitServer: Start() returns OK. Once.
  void StartSucceeded();
  // kAwaitServer, before StartSucceeded(): aborts everything, stops the
  // worker and makes Start() return `status`.
  void StartFailed(absl::Status status);
  // Ends the connection with an error, once: aborts everything, calls
  // on_send_failed(message, status) for each of `unsent`, then
  // on_closed(status). Later Send()s fail with FAILED_PRECONDITION
  // `refusal`.
  void Fail(absl::Status status, std::vector<std::string> unsent,
            std::string refusal = "the transport is closed");
  // on_closed(OK) unless on_closed was already called; stops the worker.
  void FinishShutdown();

  // The configured headers minus the reserved ones.
  http_internal::HttpHeaders ConfiguredHeaders() const;
  // Passes a 401/403 challenge in `head` to options().on_auth_challenge.
  void NoteAuthChallenge(const http_internal::HttpResponseHead& head) const;

  // Starts a GET of `url` for `stream`: resets its per-connection state and
  // sends Accept: text/event-stream, Last-Event-ID once the stream had an
  // event id, then `headers`. Handlers as given; returns the transfer id,
  // also kept in stream->transfer.
  uint64_t ConnectEventStream(EventStream* stream, const std::string& url,
                              http_internal::HttpHeaders headers,
                              http_internal::HttpHandlers handlers);
  // The answer to an event-stream GET (`what` names it in messages): true
  // for a 2xx text/event-stream answer (stream->open is set); otherwise
  // stream->failure says why and the result is false.
  bool AcceptEventStream(const http_internal::HttpResponseHead& head,
                         const char* what, EventStream* stream);
  // TRANSPORT_ERROR for a 2xx answer that is not text/event-stream.
  static absl::Status NotAnEventStream(
      const http_internal::HttpResponseHead& head, const char* what);
  // Feeds `chunk` to `parser` and hands each complete event to `on_event`.
  // False (stop the transfer) as soon as the transport is ending or
  // `on_event` returns false, or when the parser failed (*failure is then
  // TOO_LARGE).
  bool FeedEvents(SseParser* parser, std::string_view chunk,
                  absl::Status* failure,
                  const std::function<bool(SseEvent& event)>& on_event);
  // The delay before reconnect `attempt` (1, 2, ...): the stream's `retry:`
  // or initial_backoff, doubled per attempt, at most max_backoff.
  absl::Duration ReconnectDelay(const SseParser& parser, int attempt) const;
  // Cancels the stream's transfer and reconnect timer.
  void CancelEventStream(EventStream* stream);
  // Keeps the start of an error body for HttpStatusError; false once full.
  static bool AppendErrorSnippet(std::string* body, std::string_view chunk);

 private:
  void BeginShutdown();

  const HttpOptions options_;
  const HttpTuning tuning_;
  const StartMode mode_;
  const std::vector<std::string> reserved_headers_;
  http_internal::UrlOrigin origin_;  // set by Start

  // Set by Start() before the worker exists; read-only afterwards.
  TransportCallbacks callbacks_;
  std::unique_ptr<http_internal::CurlLoop> loop_;

  // Serialises Start() and Close() callers.
  absl::Mutex close_mu_;
  bool joined_ ABSL_GUARDED_BY(close_mu_) = false;

  mutable absl::Mutex mu_;
  bool start_called_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;  // Start() succeeded
  bool close_requested_ ABSL_GUARDED_BY(mu_) = false;
  // Start() waits for these.
  bool start_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status start_status_ ABSL_GUARDED_BY(mu_);
  // Non-empty once Fail() ended the connection: why Send() refuses.
  std::string refusal_ ABSL_GUARDED_BY(mu_);

  // Worker thread only.
  bool established_ = false;  // StartSucceeded() ran
  bool finished_ = false;     // on_closed was called (or Start failed)
  bool shutting_down_ = false;
};

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_HTTP_STREAM_TRANSPORT_H_
