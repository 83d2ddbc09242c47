// The Streamable HTTP transport (MCP 2025-03-26 and later), over libcurl.
//
// Every Send() is one POST to HttpOptions::url with
//   Content-Type: application/json
//   Accept: application/json, text/event-stream
//   the configured headers,
//   Mcp-Session-Id: <id>            once the server assigned one,
//   MCP-Protocol-Version: <v>       after SetProtocolVersion(v).
// The session id is taken from the first 2xx response that carries an
// Mcp-Session-Id header (normally the answer to initialize; the name is
// matched case-insensitively) and kept for the life of the transport.
//
// Answers to a POST:
//  - 202, or any 2xx without a body: nothing is delivered;
//  - 2xx with Content-Type text/event-stream: the body is parsed as SSE and
//    the data of every `message` event (the default type; other types are
//    ignored) with non-empty data goes to on_message, in order (progress
//    notifications and server requests may precede the response). Events
//    with empty data (the "priming" event of 2025-11-25) only advance the
//    last event id. See "Resuming" below;
//  - any other 2xx: the whole body goes to on_message as it is (JSON or not;
//    the engine judges it);
//  - 404 while a session id was sent: the session expired.
//    on_send_failed(message, TRANSPORT_ERROR "session expired", details
//    httpStatus=404), then on_closed with the same status; later Send()s
//    fail with FAILED_PRECONDITION;
//  - other statuses (3xx are not followed, 4xx, 5xx): on_send_failed with
//    TRANSPORT_ERROR, details httpStatus, body (a snippet), wwwAuthenticate
//    (for 401 challenges) and location (for redirects);
//  - a body (or one SSE event) larger than max_message_bytes: the request is
//    aborted and on_send_failed gets TOO_LARGE;
//  - network errors: on_send_failed with CONNECTION_REFUSED (nothing listens
//    or the host is unreachable), CONNECTION_TIMEOUT (connect_timeout
//    passed) or TRANSPORT_ERROR (details curlCode).
//
// Resuming (2025-11-25 "SSE polling" included): when the SSE answer to a
// POST that contains a JSON-RPC request ends (cleanly or broken) before its
// last event was a JSON-RPC response, and the stream carried an event id,
// the transport GETs the URL with Last-Event-ID after the stream's `retry`
// delay (default initial_backoff) and continues delivering events from the
// resumed stream, again and again while streams make progress. After
// max_reconnects consecutive attempts without a single event, or a 4xx/405
// answer to the GET, on_send_failed gets TRANSPORT_ERROR. Without an event
// id a stream that ends early yields on_send_failed(TRANSPORT_ERROR). To
// make these decisions the transport parses the message it sent and the
// last event of the stream as JSON (nothing else is ever parsed).
//
// The standalone GET stream: opens as soon as a POST issued after
// SetProtocolVersion() is answered with a 2xx status (in practice the 202
// for notifications/initialized; if SetProtocolVersion() came before the
// first Send(), the answer to initialize). Headers: Accept:
// text/event-stream, the configured headers, Mcp-Session-Id and
// MCP-Protocol-Version, and Last-Event-ID once an event id was seen on it.
// Its events go to on_message. 405 means the server offers no such stream:
// on_log says so and it is never tried again. Any other failure, or the end
// of the stream, reconnects: after the stream's `retry` (default
// initial_backoff) if the previous connection delivered events, otherwise
// doubling per failure up to max_backoff; every reconnect is noted in
// on_log. 404 with a session id: the session expired (as above, without
// on_send_failed).
//
// Close(): aborts every request and stream (no callbacks for them), sends
// DELETE with the session id if there is one and the session has not
// expired (any answer, including 405, is accepted; bounded by
// delete_timeout), then on_closed(OK) unless on_closed was already called,
// and joins the worker thread.
//
// Start/Send/Close, the worker and the reconnect delays come from
// HttpStreamTransport (http_stream_transport.h); this file adds the wire
// protocol.
//
// Threads: one worker thread per transport drives a libcurl multi handle, so
// any number of POSTs are in flight at once (a slow tools/call never blocks a
// ping). Every callback runs on that thread, one at a time; on_message in
// arrival order per HTTP response. https uses libcurl's defaults (system CA
// store, certificate and host verification on). Proxies follow libcurl's
// environment variables (http_proxy, https_proxy, no_proxy).
//
// Thread-safety: Start, Send, SetProtocolVersion, Close and session_id may
// be called from any thread. Close (and the destructor) must not be called
// from a callback; if Close is, it only starts the shutdown and returns, and
// a later Close or the destructor on another thread waits for it.
#ifndef INSPECTOR_SERVER_TRANSPORT_STREAMABLE_HTTP_TRANSPORT_H_
#define INSPECTOR_SERVER_TRANSPORT_STREAMABLE_HTTP_TRANSPORT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/sse_parser.h"
#include "server/transport/http_client.h"
#include "server/transport/http_stream_transport.h"  // HttpTuning
#include "server/transport/transport.h"

namespace inspector::transport {

class StreamableHttpTransport final : public HttpStreamTransport {
 public:
  // Never fails; problems with the options are reported by Start().
  static std::unique_ptr<StreamableHttpTransport> Create(
      HttpOptions options, HttpTuning tuning = {});

  // Calls Close(). Must not run on the transport's worker thread.
  ~StreamableHttpTransport() override;

  // Start() checks the options and starts the worker thread; no network
  // traffic until the first Send(). Errors: INVALID_CONFIG (details
  // field=url or field=headers) for a URL that is not absolute http(s) or a
  // header that would break the request; FAILED_PRECONDITION if Start or
  // Close was already called; INTERNAL_ERROR if libcurl cannot be set up.
  // Null callbacks are allowed and ignored.
  //
  // Send() queues a POST of `message` and returns at once.
  // FAILED_PRECONDITION if not started, closing, or the session expired.
  //
  // Close(): see the file comment. Idempotent.

  // Sets MCP-Protocol-Version for every request issued after this call.
  void SetProtocolVersion(const std::string& version) override;

  // See Transport::AbortSend.
  void AbortSend(const std::string& message) override;

  // See Transport::SetStateless.
  void SetStateless(bool stateless) override;

  // The session id the server assigned; "" until then.
  std::string session_id() const;

 private:
  struct Exchange;
  struct GetStream;

  StreamableHttpTransport(HttpOptions options, HttpTuning tuning);

  // HttpStreamTransport; worker thread.
  void SendOnWorker(std::string message) override;
  void SendOnWorkerWithHeaders(std::string message,
                               http_internal::HttpHeaders headers) override;
  void AbortTransfers() override;
  void WindDown() override;

  // All of the following run on the worker thread.
  void IssueExchangeRequest(Exchange* ex);
  bool OnExchangeHead(uint64_t ex_id, const http_internal::HttpResponseHead& h);
  bool OnExchangeBody(uint64_t ex_id, std::string_view chunk);
  void OnExchangeDone(uint64_t ex_id, absl::Status status);
  void ScheduleResume(Exchange* ex, const std::string& reason);
  void FailExchange(uint64_t ex_id, absl::Status status);
  void MaybeOpenGetStream();
  void ConnectGetStream();
  bool OnGetHead(const http_internal::HttpResponseHead& head);
  void OnGetDone(absl::Status status);
  // Delivers the `message` events to on_message; see FeedEvents.
  bool DeliverSse(EventStream* stream, std::string_view chunk,
                  std::string* last_data);
  void SessionExpired(const std::string* failed_message);
  http_internal::HttpHeaders BaseHeaders() const;

  mutable absl::Mutex session_mu_;
  std::string session_id_copy_ ABSL_GUARDED_BY(session_mu_);

  // Worker thread only (or before Start(), see SetProtocolVersion).
  std::string session_id_;
  std::string protocol_version_;
  bool version_set_ = false;
  bool stateless_ = false;  // see Transport::SetStateless
  uint64_t next_exchange_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Exchange>> exchanges_;
  std::unique_ptr<GetStream> get_;
};

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_STREAMABLE_HTTP_TRANSPORT_H_
