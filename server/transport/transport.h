// The client side of one connection to an MCP server, carrying raw
// JSON-RPC message text in both directions.
//
// Implementations: stdio (a child process, newline-delimited JSON),
// Streamable HTTP and legacy HTTP+SSE (libcurl). The engine above never
// looks inside a transport; a transport never interprets messages beyond
// what its wire format needs (it does not parse JSON-RPC).
//
// Threading: Start, Send, SetProtocolVersion and Close may be called from
// any thread. Callbacks run on the transport's own threads, one at a time
// and in arrival order for on_message; they must not call Close() (post the
// work elsewhere instead) and should return quickly.
#ifndef INSPECTOR_SERVER_TRANSPORT_TRANSPORT_H_
#define INSPECTOR_SERVER_TRANSPORT_TRANSPORT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/http_exchange_record.h"

namespace inspector::transport {

struct TransportCallbacks {
  // One JSON-RPC message (or batch) as received, without framing: a line
  // of stdout, a JSON response body, or the data of one SSE event.
  std::function<void(std::string message)> on_message;
  // When set, the HTTP transports deliver here instead of on_message, with
  // the HTTP exchange that carried the message (the POST or GET and its
  // answer's status and headers, secrets masked), shared by the messages
  // of one exchange. Same guarantees as on_message.
  std::function<void(std::string message,
                     std::shared_ptr<const HttpExchangeRecord> http)>
      on_http_message;
  // A message given to Send() could not be delivered (for example the HTTP
  // POST was refused or answered with an error status). `message` is the
  // text that was passed to Send(). The connection may still be usable.
  std::function<void(const std::string& message, absl::Status status)>
      on_send_failed;
  // Diagnostic text from the server side: a line of a stdio server's
  // stderr (without the newline), or a note about reconnecting.
  std::function<void(std::string line)> on_log;
  // The connection is over. Called exactly once, after the last
  // on_message. OK after Close(); otherwise the reason, with an inspector
  // reason code: PROCESS_CRASHED (stdio exit; details "exitCode" or
  // "signal"), TRANSPORT_ERROR, CONNECTION_REFUSED, ...
  std::function<void(absl::Status status)> on_closed;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Opens the connection. stdio: spawns the process (SPAWN_FAILED with the
  // OS reason if it cannot). Streamable HTTP: checks the URL; the first
  // Send() opens the network connection. SSE: connects the event stream and
  // waits for the `endpoint` event (CONNECTION_REFUSED,
  // CONNECTION_TIMEOUT, TRANSPORT_ERROR). Called once.
  virtual absl::Status Start(TransportCallbacks callbacks) = 0;

  // Whether `message` fits the wire format as one message (stdio: one
  // line). Send() refuses what this refuses; the engine asks first, so a
  // message that cannot be framed is refused before it is recorded.
  // Default: anything fits.
  virtual absl::Status CheckFraming(std::string_view message) const {
    return absl::OkStatus();
  }

  // Queues one message; never waits for the network or the process.
  // FAILED_PRECONDITION if not started or already closed.
  virtual absl::Status Send(std::string message) = 0;

  // Send() with extra HTTP headers for this one message: MCP 2026-07-28's
  // Mcp-Method, Mcp-Name and Mcp-Param-*, which the engine derives from
  // the message (a transport does not parse JSON-RPC). Transports that are
  // not HTTP, or not the Streamable HTTP one, send the message alone.
  virtual absl::Status SendWithHeaders(
      std::string message,
      std::vector<std::pair<std::string, std::string>> headers) {
    return Send(std::move(message));
  }

  // Stops the answer to an earlier Send() of exactly `message`: Streamable
  // HTTP aborts its POST, closing its response stream (how a
  // subscriptions/listen stream is cancelled); no callback follows for it.
  // Others do nothing (stdio cancels with notifications/cancelled).
  virtual void AbortSend(const std::string& message) {}

  // The stateless 2026-07-28 era (set before the first Send(), or after a
  // probe found a modern server): Streamable HTTP then keeps no session id,
  // opens no standalone GET stream, sends no DELETE on Close, and hands an
  // error status's body to on_message when it is a JSON-RPC response with
  // an id (modern servers answer UnsupportedProtocolVersion, HeaderMismatch
  // and MissingRequiredClientCapability with HTTP 400 and such a body).
  // false: the handshake era (the default). Others ignore it.
  virtual void SetStateless(bool stateless) {}

  // Protocol version negotiated by initialize; HTTP transports send it as
  // MCP-Protocol-Version on every later request. Default: nothing.
  virtual void SetProtocolVersion(const std::string& version) {}

  // Ends the connection and waits until the transport's threads are done:
  // stdio closes stdin, then terminates and reaps the process group;
  // Streamable HTTP sends DELETE for its session. on_closed(OK) follows
  // unless it was already called. Idempotent.
  virtual void Close() = 0;

  // Reads what the server writes and delivers it (on_message) on the calling
  // thread, until `done()` is true or `budget` has passed, provided no other
  // thread is reading at that moment; returns at once otherwise. A caller
  // that just sent a request and may wait briefly uses it to take the answer
  // itself, which saves waking the transport's reader thread and then the
  // caller's (docs/performance.md, "Where the time goes"). Callbacks keep their
  // guarantees: one at a time, in arrival order. Must not be called from a
  // callback or with a lock held that a callback takes. Default: nothing
  // (the transport's own threads deliver everything).
  virtual void ReadInline(absl::Duration budget,
                          const std::function<bool()>& done) {}

  // stdio: the child's process id while it runs; 0 otherwise.
  virtual int pid() const { return 0; }
};

struct StdioOptions {
  std::string command;  // searched in PATH when it has no slash
  std::vector<std::string> args;
  // Added to (and overriding) the daemon's environment.
  std::map<std::string, std::string> env;
  std::string cwd;  // empty: the daemon's
  // On Close: time between closing stdin, SIGTERM and SIGKILL.
  absl::Duration shutdown_grace = absl::Seconds(2);
};

struct HttpOptions {
  std::string url;
  std::map<std::string, std::string> headers;  // sent with every request
  absl::Duration connect_timeout = absl::Seconds(30);
  // Largest response body or SSE event accepted.
  size_t max_message_bytes = 64 << 20;
  // The Authorization header value for a request to `url` ("" for none),
  // asked before every request unless `headers` sets Authorization itself:
  // OAuth tokens the daemon holds for the server (server/oauth/).
  std::function<std::string(const std::string& url)> authorization;
  // Told of every 401 or 403 answer with a WWW-Authenticate challenge
  // (status, header value), before the failure is reported.
  std::function<void(int status, const std::string& www_authenticate)>
      on_auth_challenge;
  // The time of the transport's reconnect delays and of Retry-After
  // answers. Null: the process's real clock (common/clock/process_clock.h).
  // Must outlive the transport.
  Clock* clock = nullptr;
};

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_TRANSPORT_H_
