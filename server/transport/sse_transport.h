// The legacy HTTP+SSE transport (MCP 2024-11-05), over libcurl.
//
// Start() GETs HttpOptions::url with Accept: text/event-stream and the
// configured headers, and waits (at most connect_timeout in all) for the
// first `endpoint` event. Its data is a URL, absolute or relative, resolved
// against the SSE URL; it must have the same origin (scheme, host and port)
// as the SSE URL, otherwise Start() fails with TRANSPORT_ERROR "endpoint on
// another origin refused" (details endpoint=<the URL>). Messages are then
// POSTed to that endpoint and the server's messages arrive on the stream:
// every `message` event (or event without a type) with non-empty data goes
// to on_message, in order. Other event types are ignored, except that a
// later `endpoint` event on the same origin replaces the endpoint.
//
// Send() POSTs with Content-Type: application/json and the configured
// headers. A 2xx answer is success (its body is ignored). Otherwise
// on_send_failed gets TRANSPORT_ERROR (details httpStatus, body snippet,
// wwwAuthenticate) or the network error (CONNECTION_REFUSED,
// CONNECTION_TIMEOUT, TRANSPORT_ERROR). Messages sent while the stream is
// reconnecting wait for the new endpoint.
//
// When the stream ends or breaks after Start() succeeded, the transport
// reconnects (on_log notes it): after the stream's `retry` value (default
// initial_backoff), doubling per failed attempt up to max_backoff, sending
// Last-Event-ID if the stream had event ids. An attempt succeeds when the new
// stream delivers its `endpoint` event (a new session, normally), within
// connect_timeout. After max_reconnects failed attempts in a row, messages
// still waiting get on_send_failed and on_closed gets TRANSPORT_ERROR.
//
// Close(): aborts the stream and every request (no callbacks for them),
// calls on_closed(OK) unless on_closed was already called, and joins the
// worker thread.
//
// Threads: one worker thread drives a libcurl multi handle for the stream
// and all POSTs; every callback runs on it, one at a time. Callbacks may run
// before Start() returns (messages right after the endpoint event).
//
// Thread-safety: Start, Send and Close may be called from any thread. Close
// (and the destructor) must not be called from a callback; if Close is, it
// only starts the shutdown and returns, and a later Close or the destructor
// on another thread waits for it.
#ifndef INSPECTOR_SERVER_TRANSPORT_SSE_TRANSPORT_H_
#define INSPECTOR_SERVER_TRANSPORT_SSE_TRANSPORT_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/sse_parser.h"
#include "server/transport/http_client.h"
#include "server/transport/streamable_http_transport.h"  // HttpTuning
#include "server/transport/transport.h"

namespace inspector::transport {

class SseTransport final : public Transport {
 public:
  // Never fails; problems with the options are reported by Start().
  static std::unique_ptr<SseTransport> Create(HttpOptions options,
                                              HttpTuning tuning = {});

  // Calls Close(). Must not run on the transport's worker thread.
  ~SseTransport() override;

  SseTransport(const SseTransport&) = delete;
  SseTransport& operator=(const SseTransport&) = delete;

  // Connects the stream and waits for the endpoint (see the file comment).
  // Errors: INVALID_CONFIG (field=url or field=headers); CONNECTION_REFUSED;
  // CONNECTION_TIMEOUT (no connection or no endpoint event within
  // connect_timeout); TRANSPORT_ERROR (an HTTP error status with details
  // httpStatus, a response that is not text/event-stream, a stream that
  // ended before the endpoint, an unusable or cross-origin endpoint);
  // TOO_LARGE (an event over max_message_bytes); CANCELLED if Close() was
  // called meanwhile (from another thread); FAILED_PRECONDITION if Start or
  // Close was already called. On error nothing is left running and
  // no callback is called afterwards. Null callbacks are allowed.
  absl::Status Start(TransportCallbacks callbacks) override;

  // Queues a POST of `message` and returns at once. FAILED_PRECONDITION if
  // Start() has not succeeded, or after Close() or on_closed.
  absl::Status Send(std::string message) override;

  // See the file comment. Idempotent.
  void Close() override;

  // The current endpoint URL ("" while reconnecting). Thread-safe.
  std::string endpoint() const;

 private:
  struct PendingPost {
    uint64_t transfer = 0;
    std::string message;
    http_internal::HttpResponseHead head;
    std::string body;  // error snippet
    bool error = false;
  };

  SseTransport(HttpOptions options, HttpTuning tuning);

  // Worker thread only.
  void ConnectStream();
  bool OnStreamHead(const http_internal::HttpResponseHead& head);
  bool OnStreamBody(std::string_view chunk);
  void OnStreamDone(absl::Status status);
  void OnEndpointTimeout();
  // The stream is gone (or an attempt failed): reconnect or give up.
  void StreamLost(const std::string& reason);
  bool HandleEndpoint(const std::string& data);
  void SendPost(std::string message);
  void StartFailed(absl::Status status);
  void Fail(absl::Status status);
  void BeginShutdown();
  void CancelAll();
  http_internal::HttpHeaders ConfiguredHeaders() const;
  void Log(const std::string& line);

  const HttpOptions options_;
  const HttpTuning tuning_;
  http_internal::UrlOrigin origin_;  // set by Start

  TransportCallbacks callbacks_;  // set by Start before the worker exists
  std::unique_ptr<http_internal::CurlLoop> loop_;

  absl::Mutex close_mu_;
  bool joined_ ABSL_GUARDED_BY(close_mu_) = false;

  mutable absl::Mutex mu_;
  bool start_called_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;  // Start() succeeded
  bool close_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;  // on_closed(error) was called
  // Start() waits for these.
  bool start_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status start_status_ ABSL_GUARDED_BY(mu_);
  std::string endpoint_copy_ ABSL_GUARDED_BY(mu_);

  // Worker thread only.
  bool established_ = false;  // Start() succeeded
  bool finished_ = false;     // on_closed was called (or Start failed)
  bool shutting_down_ = false;
  std::string endpoint_;
  SseParser parser_;
  uint64_t stream_transfer_ = 0;
  uint64_t endpoint_timer_ = 0;  // waiting for the endpoint event
  uint64_t reconnect_timer_ = 0;
  bool stream_open_ = false;  // the current stream answered 2xx SSE
  absl::Status stream_failure_;
  int failed_reconnects_ = 0;
  std::deque<std::string> waiting_;  // messages waiting for an endpoint
  uint64_t next_post_id_ = 1;
  std::map<uint64_t, PendingPost> posts_;
};

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_SSE_TRANSPORT_H_
