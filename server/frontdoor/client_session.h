// One downstream client session of McpEndpoint (mcp_endpoint.h): its
// relay session, its streams (the standalone GET or legacy stream, and one
// per request whose answer is a stream), what waits for a stream, and the
// replay buffer of Last-Event-ID.
//
// Ownership: McpEndpoint::Impl's session table holds it (shared with the
// callbacks of its requests); it holds its relay until it ends.
// Threads: any; `mu` guards everything below it. Exchanges are written and
// the relay called after `mu` is released.
#ifndef INSPECTOR_SERVER_FRONTDOOR_CLIENT_SESSION_H_
#define INSPECTOR_SERVER_FRONTDOOR_CLIENT_SESSION_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http/http_server.h"
#include "server/frontdoor/mcp_endpoint.h"

namespace inspector::frontdoor {

// One downstream client's session.
struct ClientSession {
  struct RequestStream {
    std::shared_ptr<http::HttpExchange> exchange;
    std::string key;             // "r<N>": replay key of its events
    std::string request_id;      // the client's id, JSON text
    std::string progress_token;  // JSON text, "" if none
    // The answer's head is sent when the first event is: a request the
    // server answers without saying anything else first is answered with
    // application/json, which costs a client less than a stream.
    bool started = false;
    http::Headers extra;  // the call's extra (CORS) headers, for the head
    // The request's record in history, told the head when it is sent.
    std::shared_ptr<engine::ReceivedHttp> http;
  };
  struct Event {
    uint64_t seq;
    std::string stream;  // kGetStream or a request stream's key
    std::string text;    // the whole SSE event
  };

  std::string id;
  bool legacy = false;
  // The caller that opened it, as McpEndpoint::Impl::Call::caller: "" when
  // no gate names callers. Set before the session is shared.
  std::string caller;

  absl::Mutex mu;
  std::shared_ptr<Relay> relay ABSL_GUARDED_BY(mu);
  bool ended ABSL_GUARDED_BY(mu) = false;
  bool initialized ABSL_GUARDED_BY(mu) = false;
  // The standalone GET stream, or the legacy transport's stream.
  std::shared_ptr<http::HttpExchange> stream ABSL_GUARDED_BY(mu);
  // Request streams open now, oldest first.
  std::map<uint64_t, RequestStream> requests ABSL_GUARDED_BY(mu);
  uint64_t next_stream ABSL_GUARDED_BY(mu) = 1;
  std::deque<std::string> queued ABSL_GUARDED_BY(mu);  // raw messages
  std::deque<Event> replay ABSL_GUARDED_BY(mu);
  uint64_t next_event ABSL_GUARDED_BY(mu) = 1;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  absl::Time last_active ABSL_GUARDED_BY(mu);  // set at creation

  std::shared_ptr<Relay> GetRelay() {
    absl::MutexLock lock(&mu);
    return relay;
  }
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_CLIENT_SESSION_H_
