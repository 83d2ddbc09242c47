// The REST + SSE gateway: HTTP/1.1 in front of inspectord's gRPC API.
//
// It knows no route by hand. At start it loads a descriptor set (the one
// compiled into the binary unless another is given), turns every method's
// google.api.http rule into a route (RouteTable), and then for each HTTP
// request: checks the host it is for (an absolute-form target's authority,
// else Host) and Origin (403 for foreign, malformed or repeated ones,
// before any RPC),
// answers CORS preflights, finds the route (404 / 405), builds the request
// message from body, path and query (Transcoder), calls the method through
// grpc::GenericStub with the caller's token as metadata, and renders the
// answer as proto3 JSON, raw bytes (google.api.HttpBody), an SSE or NDJSON
// stream (server-streaming methods) or the seed's error body.
//
// Response metadata lets a method choose a status the proto cannot express,
// as grpc-gateway does: "x-http-code" (e.g. "204", "302") and "location".
//
// Thread-safety: Start, port and Shutdown may be called from any thread;
// requests are served on the HTTP server's loop thread and on gRPC's
// callback threads.
#ifndef INSPECTOR_GATEWAY_GATEWAY_H_
#define INSPECTOR_GATEWAY_GATEWAY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/channel.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/http/http_server.h"

namespace inspector::gateway {

// The browser origins a local inspector UI runs on (the seed's list).
std::vector<std::string> DefaultCorsOrigins();

// Arguments for the channel a Gateway calls inspectord through: it accepts
// every reply inspectord may send (kMaxGrpcMessageBytes in
// common/message_limits.h), so that no call fails after its work is done.
grpc::ChannelArguments GatewayChannelArguments();

struct GatewayOptions {
  // Where to listen, limits and timeouts of the HTTP side. The request
  // body limit (http.max_body_bytes) may not exceed inspectord's
  // kMaxForwardedMessageBytes, so that a body accepted here is accepted by
  // the daemon too.
  ::inspector::http::HttpServerOptions http;
  // Allow a non-loopback listen address.
  bool allow_network_exposure = false;
  // Origins (scheme://host[:port]) that may call the API from a browser.
  // Requests with any other Origin get 403. The gateway's own origin is
  // always allowed. Never "*".
  std::vector<std::string> cors_origins = DefaultCorsOrigins();
  // Host names accepted in the Host header besides localhost, 127.0.0.1,
  // ::1 and the listen host. Anything else gets 403 (DNS rebinding).
  std::vector<std::string> allowed_hosts;
  // A serialized FileDescriptorSet; empty means the compiled-in one.
  std::string descriptor_set;
  // SSE streams get a comment line this often so proxies and browsers keep
  // them open and a dead client is noticed.
  absl::Duration heartbeat_interval = absl::Seconds(15);
  // Paths served by another handler on the same listener (the daemon's MCP
  // front doors under "/servers/"): a request whose path starts with
  // `prefix` passes the Host and Origin checks above, then goes to
  // `handler` with the CORS headers for its Origin (empty without one)
  // instead of the REST routes; CORS preflights (OPTIONS) are answered by
  // the gateway. The gateway does not look at the session token for these
  // requests: the handler decides who may call it. Must not block.
  struct PrefixRoute {
    using Handler =
        std::function<void(std::shared_ptr<::inspector::http::HttpExchange>,
                           ::inspector::http::Headers cors)>;
    PrefixRoute() = default;
    PrefixRoute(std::string prefix, Handler handler)
        : prefix(std::move(prefix)), handler(std::move(handler)) {}

    std::string prefix;
    Handler handler;
    // Set: the origins that may call `prefix` from a browser, instead of
    // cors_origins (the gateway's own origin always may); a refused
    // Origin is told to add itself with `cors_origin_flag`.
    std::optional<std::vector<std::string>> cors_origins;
    std::string cors_origin_flag = "--cors-origin";
    // Set: the JSON body of the answers the gateway and its listener give
    // themselves for requests under `prefix`: a refused Origin (403) and a
    // body over http.max_body_bytes (413). Null: the gateway's error form.
    std::function<std::string(int status, std::string_view message)>
        error_body;
  };
  std::vector<PrefixRoute> prefix_routes;
  // Origins the web UI's pages may frame (the MCP Apps sandbox listener,
  // gateway/app_sandbox.h); empty: none.
  std::vector<std::string> ui_frame_sources;
  // Deadline of each unary call. The daemon applies its own MCP timeouts;
  // this only bounds a call that would otherwise never end.
  absl::Duration call_timeout = absl::Hours(1);
};

// The descriptor set compiled into this binary (inspector.v1 with imports).
std::string_view EmbeddedDescriptorSet();

class Gateway {
 public:
  // Loads the routes and starts serving; calls go to `channel` (made with
  // GatewayChannelArguments()). Fails with a message naming the problem: a
  // bad descriptor set or rule, a refused or busy listen address, a body
  // limit over the daemon's.
  static absl::StatusOr<std::unique_ptr<Gateway>> Start(
      GatewayOptions options, std::shared_ptr<grpc::Channel> channel);

  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // The bound port (useful with port 0).
  int port() const;
  // How many routes the descriptor set declared.
  size_t route_count() const;

  // Stops listening, cancels running calls and streams, and waits for them
  // to end. Idempotent.
  void Shutdown();

 private:
  class Impl;
  explicit Gateway(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_GATEWAY_H_
