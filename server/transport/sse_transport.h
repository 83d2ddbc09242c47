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
// headers. A 2xx answer is success (its body is ignored). A 401 to a POST
// that carried an Authorization is passed to on_auth_challenge (which
// refreshes OAuth tokens); when the Authorization has changed since, the
// POST is sent once more with it. A 401 to the GET stream does the same:
// the stream reconnects at once with the new Authorization (once per 401).
// Otherwise
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
// Start/Send/Close, the worker and the reconnect delays come from
// HttpStreamTransport (http_stream_transport.h); this file adds the wire
// protocol.
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
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/transport/http_client.h"
#include "server/transport/http_stream_transport.h"
#include "server/transport/transport.h"

namespace inspector::transport {

class SseTransport final : public HttpStreamTransport {
 public:
  // Never fails; problems with the options are reported by Start().
  static std::unique_ptr<SseTransport> Create(HttpOptions options,
                                              HttpTuning tuning = {});

  // Calls Close(). Must not run on the transport's worker thread.
  ~SseTransport() override;

  // Start() connects the stream and waits for the endpoint (see the file
  // comment). Errors: INVALID_CONFIG (field=url or field=headers);
  // CONNECTION_REFUSED; CONNECTION_TIMEOUT (no connection or no endpoint
  // event within connect_timeout); TRANSPORT_ERROR (an HTTP error status
  // with details httpStatus, a response that is not text/event-stream, a
  // stream that ended before the endpoint, an unusable or cross-origin
  // endpoint); TOO_LARGE (an event over max_message_bytes); CANCELLED if
  // Close() was called meanwhile (from another thread); FAILED_PRECONDITION
  // if Start or Close was already called. On error nothing is left running
  // and no callback is called afterwards. Null callbacks are allowed.
  //
  // Send() queues a POST of `message` and returns at once.
  // FAILED_PRECONDITION if Start() has not succeeded, or after Close() or
  // on_closed.
  //
  // Close(): see the file comment. Idempotent.

  // The current endpoint URL ("" while reconnecting). Thread-safe.
  std::string endpoint() const;

 private:
  struct PendingPost {
    uint64_t transfer = 0;
    std::string message;
    // The Authorization it carried, and whether it is the resend after a 401.
    std::string sent_authorization;
    bool retried_after_401 = false;
    http_internal::HttpResponseHead head;
    std::string body;  // error snippet
    bool error = false;
  };

  SseTransport(HttpOptions options, HttpTuning tuning);

  // HttpStreamTransport; worker thread.
  void SendOnWorker(std::string message) override;
  void ConnectOnStart() override { ConnectStream(); }
  void AbortTransfers() override;

  // Worker thread only.
  void ConnectStream();
  bool OnStreamBody(std::string_view chunk);
  void OnStreamDone(absl::Status status);
  void OnEndpointTimeout();
  // The stream is gone (or an attempt failed): reconnect or give up.
  void StreamLost(const std::string& reason);
  bool HandleEndpoint(const std::string& data);
  void SetEndpoint(std::string endpoint);
  void SendPost(std::string message, bool retried_after_401 = false);
  // The Authorization header the next request would carry ("" for none).
  std::string CurrentAuthorization() const;

  mutable absl::Mutex endpoint_mu_;
  std::string endpoint_copy_ ABSL_GUARDED_BY(endpoint_mu_);

  // Worker thread only.
  std::string endpoint_;
  EventStream stream_;  // failures: reconnects without an endpoint
  // The Authorization the current GET carried; whether that GET was the
  // reconnect right after a 401 (not again), and whether it got a 401.
  std::string stream_authorization_;
  bool stream_retried_after_401_ = false;
  bool stream_unauthorized_ = false;
  http_internal::HttpResponseHead stream_401_head_;
  uint64_t endpoint_timer_ = 0;  // waiting for the endpoint event
  std::vector<std::string> waiting_;  // messages waiting for an endpoint
  uint64_t next_post_id_ = 1;
  std::map<uint64_t, PendingPost> posts_;
};

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_SSE_TRANSPORT_H_
