// An HTTP/1.1 server on one epoll event loop, for the REST gateway and
// the daemon's MCP front doors.
//
// One loop thread owns the listening sockets and every connection: it
// accepts, reads, parses (common/http/http1.h), calls the handler and
// writes with non-blocking sockets, so an idle or streaming connection
// costs memory, not a thread. Keep-alive and pipelining are supported; one
// request per connection is in flight at a time, later pipelined requests
// wait in the input buffer, so responses leave in request order.
//
// Each complete request becomes an HttpExchange handed to the handler on
// the loop thread. The handler must not block: it answers at once
// (Respond) or keeps the exchange and answers later from any thread. A
// response given on the loop thread is written without any queueing or
// thread hop. A whole response (Respond) given on another thread, with
// nothing unsent ahead of it on a keep-alive connection, is written to
// the socket by that thread; the loop learns that the exchange is over at
// its next turn, without being woken for it (at most a second later while
// requests are open). Anything else from another thread is queued and the
// loop is woken through an eventfd.
//
// The server frames responses itself (Content-Length for Respond, chunked
// coding for streams to HTTP/1.1 clients, close-delimited bodies for
// HTTP/1.0 ones), decides Connection, adds Date, and answers
// "Expect: 100-continue" before reading a body. Invalid requests are
// answered by the server with a JSON error body (the gateway's form)
// {"error":{"code":"...","message":"..."}} and the connection is closed:
//   400 INVALID_REQUEST   malformed request (see http1.h for the rules)
//   408 REQUEST_TIMEOUT   the head or the body did not arrive in time
//   413 / 414 / 431 TOO_LARGE   body, URL or header limits
//   417 INVALID_REQUEST   an expectation other than 100-continue
//   501 / 505 NOT_IMPLEMENTED   transfer coding or HTTP version
//   503 UNAVAILABLE       max_connections reached
// Slow or absent clients are cut by the timeouts below; a client that
// does not read a stream is cut when max_stream_backlog bytes are pending.
// A client that closes its side of the connection (EOF, reset, EPOLLRDHUP)
// while its response is unfinished counts as gone, as browsers and curl do
// when a user aborts; an already finished response is still flushed.
//
// Thread-safety: HttpServer::Start, Shutdown and port may be called from
// any thread except the loop thread (Shutdown from a handler or callback
// only asks the loop to stop). HttpExchange is thread-safe; see below.
#ifndef INSPECTOR_COMMON_HTTP_HTTP_SERVER_H_
#define INSPECTOR_COMMON_HTTP_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http/http1.h"

namespace inspector::http {

struct HttpServerOptions {
  // "host:port" or "[v6]:port" with a numeric address, or "localhost:port"
  // (binds 127.0.0.1 and, when available, ::1 on the same port). Port 0
  // picks a free port; see HttpServer::port(). Whether a non-loopback
  // address is acceptable is the caller's decision.
  std::string listen = "127.0.0.1:3000";
  size_t max_url_bytes = 8 * 1024;           // 414
  size_t max_header_bytes = 16 * 1024;       // 431 (all field lines)
  size_t max_headers = 128;                  // 431
  size_t max_body_bytes = 64 * 1024 * 1024;  // 413
  // Timeouts; a zero, negative or infinite value turns one off.
  // From the connection's start (or a keep-alive request's first byte)
  // until the whole head has arrived; then 408 and close. Stops slowloris
  // clients. A new connection that sends nothing is closed silently.
  absl::Duration header_timeout = absl::Seconds(10);
  // From the end of the head until the whole body has arrived; then 408.
  absl::Duration body_timeout = absl::Seconds(60);
  // How long a keep-alive connection may wait for its next request.
  absl::Duration idle_timeout = absl::Seconds(60);
  // How long response bytes may wait for a client that reads nothing
  // before the connection is cut.
  absl::Duration send_timeout = absl::Seconds(60);
  // Unsent bytes allowed on a connection (a response or stream the client
  // reads slower than it is produced); beyond it the connection is cut and
  // Write() returns false.
  size_t max_stream_backlog = 8 * 1024 * 1024;
  // Open connections; beyond it new ones get 503 and are closed.
  size_t max_connections = 4096;
  // A descriptor the loop thread waits on as well (readable,
  // level-triggered), and what it runs there when it is: another epoll set
  // whose ready descriptors the loop serves itself, say. Must not block.
  // -1: none.
  int extra_fd = -1;
  std::function<void()> on_extra_ready;
  // Shapes the body of the server's own 413 (a body over max_body_bytes,
  // known once the request's head has arrived): given that head and the
  // server's message, the JSON body to send instead of the form above
  // (the MCP front doors answer with a JSON-RPC error); nullopt keeps the
  // server's. Runs on the loop thread; must not block. Null: the server's.
  std::function<std::optional<std::string>(const http::Request& head,
                                           std::string_view message)>
      too_large_body;
  // Run on the loop thread as the loop ends (Shutdown(), or a failed
  // epoll_wait), after its last on_extra_ready; not run when Start()
  // fails.
  std::function<void()> on_loop_end;
};

class HttpExchange;
namespace internal {
class Loop;
struct ConnectionInfo;
}  // namespace internal

// Called on the loop thread for each complete request. Must not block.
using HttpHandler = std::function<void(std::shared_ptr<HttpExchange>)>;

class HttpServer {
 public:
  // Binds, listens and starts the loop thread. INVALID_ARGUMENT for a bad
  // `listen` address, UNAVAILABLE when it cannot be bound (in use,
  // permission), INTERNAL when epoll or the thread cannot be set up.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      HttpServerOptions options, HttpHandler handler);

  ~HttpServer();  // Shutdown()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Stops accepting, ends every connection (unfinished exchanges see their
  // OnClientGone callbacks run on the loop thread, and their later calls
  // become no-ops) and joins the loop thread. Idempotent. Must not be
  // called from the loop thread (a handler or callback): there it only
  // asks the loop to stop, and the join happens in the destructor.
  void Shutdown();

  // The bound port (the one chosen by the kernel for port 0).
  int port() const { return port_; }

 private:
  HttpServer(std::shared_ptr<internal::Loop> loop, int port);

  std::shared_ptr<internal::Loop> loop_;
  std::thread thread_;
  int port_;
};

// One request and its response. The response is given exactly once:
// either Respond(), or StartStream() followed by any number of Write()s and
// one Finish(). Calls out of that order are ignored (and Write() returns
// false). Every method may be called from any thread; calls from the loop
// thread are applied at once, others are queued in call order.
//
// An exchange may outlive its connection and the server: once the client
// is gone (disconnected, cut for a timeout or backlog, or the server shut
// down) every call is a harmless no-op.
class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  ~HttpExchange();
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  const http::Request& request() const { return request_; }
  // The client's address, "127.0.0.1:53012" or "[::1]:53012".
  const std::string& peer() const;
  // The uid of the process that holds the client's end of the connection
  // when that end is a socket of this machine (net::TcpPeerUid, common/net/socket_owner.h:
  // netlink sock_diag, else /proc/net/tcp and tcp6); nullopt when it
  // cannot be told (another host, a client already closing). Looked up at
  // the first call on a connection and kept for the connection's later
  // requests, so the cost (about 15 µs over netlink) is paid once per
  // connection by those who ask.
  std::optional<uint32_t> PeerUid() const;

  // A whole response: `body` with Content-Length. Framing and Connection
  // fields in `headers` are ignored (the server sets them), except that
  // "Connection: close" closes the connection after this response. For a
  // HEAD request the body is not sent; for 1xx, 204 and 304 it is dropped.
  void Respond(int status, http::Headers headers, std::string body);

  // Starts a streamed response: chunked for HTTP/1.1 clients, delimited by
  // closing the connection for HTTP/1.0 ones. The head is sent at once.
  void StartStream(int status, http::Headers headers);
  // Sends `data` as the next piece of the stream (empty data sends
  // nothing). Returns false when the client is gone, the stream is not
  // started or already finished, or the unsent bytes would exceed
  // max_stream_backlog (the connection is then cut and OnClientGone runs).
  bool Write(std::string data);
  // Ends the stream. The connection then serves its next request (HTTP/1.1)
  // or closes (HTTP/1.0).
  void Finish();

  // Registers the one callback (a later call replaces it) to run if the
  // client goes away (see above) before the response is finished; it is
  // dropped once Respond() or Finish() is called. Runs on the loop thread,
  // without locks held, so it may call this exchange; or right here on the
  // caller's thread if the client is already gone. Must not block.
  void OnClientGone(std::function<void()> callback);

  // Whether the client is already known to be gone.
  bool client_gone() const;

  // Tells `observer` the response's status when Respond() or StartStream()
  // gives it to a client still there (on that caller's thread), e.g. to
  // count responses by status. Set it before the exchange
  // is handed to whatever answers it; not thread-safe against them.
  void ObserveStatus(std::function<void(int status)> observer) {
    status_observer_ = std::move(observer);
  }

 private:
  friend class internal::Loop;

  // A piece of work for the loop: bytes to send and what comes after.
  struct Op {
    absl::InlinedVector<std::string, 3> pieces;
    bool last = false;        // the response is complete after these bytes
    bool keep_alive = false;  // with `last`: the connection may be reused
    bool cut = false;         // cut the connection (backlog exceeded)
    bool stream_start = false;  // the head of a stream (StartStream)
  };
  enum class Phase { kNew, kStreaming, kDone };

  HttpExchange(std::shared_ptr<internal::Loop> loop, uint64_t connection_id,
               int fd, http::Request request,
               std::shared_ptr<internal::ConnectionInfo> connection);

  // Moves the exchange from phase `expected` to `next` and hands `op` to
  // the loop: applied at once on the loop thread when nothing is queued
  // ahead of it, queued otherwise. False if the phase was not `expected`,
  // the client is gone, or (for a stream write) the backlog limit was hit.
  bool Submit(Op op, Phase expected, Phase next);
  // Off the loop thread, with mu_ held and nothing unsent: writes what the
  // socket takes of `op` at once and drops it from `op`. False if nothing
  // could be written.
  bool SendNow(Op* op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Called by the loop: the client is gone; returns the callback to run.
  std::function<void()> MarkGone();

  const std::shared_ptr<internal::Loop> loop_;
  const uint64_t connection_id_;
  // The connection's socket. Written to by SendNow only while the exchange
  // is unanswered and not gone, under mu_: the loop marks the exchange gone
  // (taking mu_) before it closes the socket.
  const int fd_;
  const http::Request request_;
  // Shared by the connection's exchanges.
  const std::shared_ptr<internal::ConnectionInfo> connection_;
  // Unsent bytes of this connection: added by producers, subtracted by the
  // loop as the socket takes them.
  std::atomic<size_t> unsent_{0};

  mutable absl::Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kNew;
  bool gone_ ABSL_GUARDED_BY(mu_) = false;
  bool cut_ ABSL_GUARDED_BY(mu_) = false;  // backlog exceeded
  bool stream_chunked_ ABSL_GUARDED_BY(mu_) = false;
  bool stream_keep_alive_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> on_gone_ ABSL_GUARDED_BY(mu_);
  // Set before the response is given (ObserveStatus); read by the one
  // Respond or StartStream that gives it.
  std::function<void(int)> status_observer_;
  std::vector<Op> queued_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::http

#endif  // INSPECTOR_COMMON_HTTP_HTTP_SERVER_H_
