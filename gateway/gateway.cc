#include "gateway/gateway.h"

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/client_callback.h>

#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/message_limits.h"
#include "common/net/listen_address.h"
#include "common/token.h"
#include "common/untrusted_input.h"
#include "gateway/byte_buffers.h"
#include "gateway/caller_credentials.h"
#include "gateway/http_errors.h"
#include "gateway/request_policy.h"
#include "gateway/route_table.h"
#include "gateway/stream_call.h"
#include "gateway/transcoder.h"
#include "gateway/ui_assets.h"
#include "inspector/v1/system.pb.h"

namespace inspector::gateway {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of `key` in the server's initial or trailing metadata.
std::string ResponseMetadata(const grpc::ClientContext& context,
                             std::string_view key) {
  for (const auto* map : {&context.GetServerInitialMetadata(),
                          &context.GetServerTrailingMetadata()}) {
    auto it = map->find(grpc::string_ref(key.data(), key.size()));
    if (it != map->end())
      return std::string(it->second.data(), it->second.size());
  }
  return "";
}

// How many header fields named `lower_name` the request has.
size_t HeaderCount(const http::Request& request, std::string_view lower_name) {
  size_t count = 0;
  for (const auto& [name, value] : request.headers) {
    if (name == lower_name) ++count;
  }
  return count;
}

// What every page and file of the web UI is sent with: no framing, no
// script or connection outside this origin, no referrer; frames only from
// `frame_sources` (the MCP Apps sandbox), if any.
Headers UiHeaders(std::string_view content_type,
                  const std::vector<std::string>& frame_sources = {}) {
  std::string frame_src =
      frame_sources.empty()
          ? ""
          : absl::StrCat("; frame-src ", absl::StrJoin(frame_sources, " "));
  return {{"Content-Type", std::string(content_type)},
          {"Cache-Control", "no-cache"},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Content-Security-Policy",
           absl::StrCat(
               "default-src 'none'; script-src 'self'; style-src 'self'; "
               "connect-src 'self'; img-src 'self' data: blob:; "
               "media-src 'self' data: blob:; base-uri 'none'; "
               "form-action 'none'; frame-ancestors 'none'",
               frame_src)}};
}

std::string SignInFailedPage(const char* why) {
  return absl::StrCat(
      "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\">"
      "<title>Sign-in failed - MCP Inspector</title>"
      "<link rel=\"stylesheet\" href=\"/ui/style.css\">"
      "<main class=\"signin\"><h1>This sign-in link does not work</h1><p>",
      why,
      "</p><p>Run <code>inspectorctl ui</code> in a terminal for a fresh "
      "link (<code>inspectorctl ui --open</code> opens it), or copy the one "
      "<code>inspectord</code> printed when it started.</p></main></html>");
}

}  // namespace

grpc::ChannelArguments GatewayChannelArguments() {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxGrpcMessageBytes);
  arguments.SetMaxSendMessageSize(kMaxGrpcMessageBytes);
  return arguments;
}

std::vector<std::string> DefaultCorsOrigins() {
  return {"http://localhost:5173", "http://localhost:3000",
          "http://127.0.0.1:5173", "http://127.0.0.1:3000"};
}

class Gateway::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(GatewayOptions options, std::shared_ptr<grpc::Channel> channel,
       std::unique_ptr<google::protobuf::DescriptorPool> pool, RouteTable table)
      : options_(std::move(options)),
        stub_(std::move(channel)),
        pool_(std::move(pool)),
        table_(std::move(table)),
        transcoder_(pool_.get()) {}

  absl::Status Listen() {
    http::HttpServerOptions server_options = options_.http;
    // A prefix route's own form for the listener's 413.
    server_options.too_large_body =
        [this](const http::Request& head,
               std::string_view message) -> std::optional<std::string> {
      int prefix = PrefixRouteIndex(head.path());
      if (prefix < 0 || !options_.prefix_routes[prefix].error_body) {
        return std::nullopt;
      }
      return options_.prefix_routes[prefix].error_body(413, message);
    };
    auto server = http::HttpServer::Start(
        std::move(server_options),
        [this](std::shared_ptr<http::HttpExchange> exchange) {
          Handle(std::move(exchange));
        });
    if (!server.ok()) return server.status();
    server_ = *std::move(server);
    // Cookies are shared by every port of a host, so each gateway's has
    // the port in its name: two daemons on one machine keep theirs apart.
    cookie_name_ = absl::StrCat("inspector_session_", server_->port());
    policy_owner_ = std::make_unique<RequestPolicy>(
        options_.cors_origins, AllowedHosts(), server_->port());
    for (const auto& route : options_.prefix_routes) {
      prefix_policies_.push_back(
          route.cors_origins.has_value()
              ? std::make_unique<RequestPolicy>(*route.cors_origins,
                                                AllowedHosts(), server_->port())
              : nullptr);
    }
    // Requests may already be arriving on the loop thread; until the
    // policy (which needs the bound port) is published they get 503.
    policy_.store(policy_owner_.get(), std::memory_order_release);
    heartbeat_ = std::thread([this] { HeartbeatLoop(); });
    return absl::OkStatus();
  }

  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shut_down_) return;
      shut_down_ = true;
    }
    // Streams first, so that each ends with a proper last chunk (or SSE
    // error event) rather than a cut connection; then ending the
    // connections runs each remaining exchange's OnClientGone, which
    // cancels its unary call. Every call must have finished before this
    // returns, since their callbacks use this object.
    std::vector<std::shared_ptr<StreamCall>> live;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& weak : streams_) {
        if (auto stream = weak.lock()) live.push_back(std::move(stream));
      }
    }
    // Outside the lock: a cancelled call may finish on this thread.
    for (auto& stream : live) stream->Cancel();
    live.clear();
    {
      std::unique_lock<std::mutex> lock(mu_);
      calls_done_.wait(lock, [this] { return streams_in_flight_ == 0; });
    }
    if (server_ != nullptr) server_->Shutdown();
    {
      std::unique_lock<std::mutex> lock(mu_);
      calls_done_.wait(lock, [this] { return calls_in_flight_ == 0; });
    }
    heartbeat_wake_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
  }

  int port() const { return server_ == nullptr ? 0 : server_->port(); }
  size_t route_count() const { return table_.routes().size(); }

 private:
  struct UnaryCall {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    std::shared_ptr<http::HttpExchange> exchange;
    const Route* route = nullptr;
    Headers cors;
  };

  // The first prefix route `path` falls under; -1 for none.
  int PrefixRouteIndex(std::string_view path) const {
    for (size_t i = 0; i < options_.prefix_routes.size(); ++i) {
      const std::string& prefix = options_.prefix_routes[i].prefix;
      if (path.substr(0, prefix.size()) == prefix) return static_cast<int>(i);
    }
    return -1;
  }

  std::vector<std::string> AllowedHosts() const {
    std::vector<std::string> hosts = options_.allowed_hosts;
    auto listen = net::ParseListenAddress(options_.http.listen);
    if (listen.ok() && !listen->unix_socket) hosts.push_back(listen->host);
    return hosts;
  }

  void Reply(http::HttpExchange& exchange, const HttpError& error,
             Headers headers) {
    headers.emplace_back("Content-Type", "application/json");
    exchange.Respond(error.status, std::move(headers), error.body);
  }

  void Handle(std::shared_ptr<http::HttpExchange> exchange) {
    const http::Request& request = exchange->request();
    const RequestPolicy* policy = policy_.load(std::memory_order_acquire);
    if (policy == nullptr) {
      Reply(*exchange, RenderError(503, "UNAVAILABLE", "Starting up"), {});
      return;
    }
    // The host the request is for: an absolute-form target's authority,
    // else Host (which must then be unique).
    const std::string* host = request.Header("host");
    std::optional<std::string_view> authority =
        RequestPolicy::TargetAuthority(request.target);
    if ((!authority.has_value() && HeaderCount(request, "host") > 1) ||
        !policy->RequestHostAllowed(request.target, host)) {
      std::string_view shown = authority.has_value() ? *authority
                               : host == nullptr     ? std::string_view()
                                                     : std::string_view(*host);
      Reply(*exchange,
            RenderError(403, "FORBIDDEN_HOST",
                        absl::StrCat("Host ", QuoteInput(shown),
                                     " is not allowed; use localhost or "
                                     "add it with --allowed-host")),
            {});
      return;
    }
    // Two Origin headers are no browser's doing: judging either one would
    // let the other through.
    if (HeaderCount(request, "origin") > 1) {
      Reply(*exchange,
            RenderError(403, "FORBIDDEN_ORIGIN",
                        "more than one Origin header; send one at most"),
            {});
      return;
    }
    const std::string* origin = request.Header("origin");
    std::string_view path = request.path();
    // A prefix route may have origins and an error form of its own.
    const int prefix = PrefixRouteIndex(path);
    const GatewayOptions::PrefixRoute* prefix_route =
        prefix < 0 ? nullptr : &options_.prefix_routes[prefix];
    const RequestPolicy* origin_policy =
        prefix < 0 || prefix_policies_[prefix] == nullptr
            ? policy
            : prefix_policies_[prefix].get();
    Headers cors;
    if (origin != nullptr) {
      if (!origin_policy->OriginAllowed(*origin)) {
        std::string message = absl::StrCat(
            "Origin ", QuoteInput(*origin), " is not allowed; add it with ",
            prefix_route == nullptr ? "--cors-origin"
                                    : prefix_route->cors_origin_flag);
        if (prefix_route != nullptr && prefix_route->error_body) {
          exchange->Respond(403, {{"Content-Type", "application/json"}},
                            prefix_route->error_body(403, message));
        } else {
          Reply(*exchange, RenderError(403, "FORBIDDEN_ORIGIN", message), {});
        }
        return;
      }
      cors = origin_policy->CorsHeaders(*origin);
    }
    if (path == kSignInPath && request.method == "GET") {
      SignIn(std::move(exchange));
      return;
    }
    if (path == kSignOutPath && request.method == "POST") {
      if (!CookieRequestAllowed(request, cookie_name_)) {
        Reply(*exchange, CsrfError(), std::move(cors));
        return;
      }
      SignOut(std::move(exchange));
      return;
    }
    if (request.method == "GET" &&
        (path == "/" || path.substr(0, 4) == "/ui/")) {
      if (const UiAsset* asset = FindUiAsset(path)) {
        exchange->Respond(200,
                          UiHeaders(asset->content_type,
                                    options_.ui_frame_sources),
                          std::string(asset->body));
        return;
      }
    }
    if (request.method != "OPTIONS" && prefix_route != nullptr) {
      prefix_route->handler(std::move(exchange), std::move(cors));
      return;
    }
    if (request.method == "OPTIONS") {
      Headers headers = origin != nullptr
                            ? origin_policy->PreflightHeaders(*origin)
                            : Headers{};
      auto match = table_.Find("OPTIONS", path);
      if (!match.allowed_methods.empty()) {
        headers.emplace_back("Allow",
                             absl::StrJoin(match.allowed_methods, ", "));
      }
      exchange->Respond(204, std::move(headers), "");
      return;
    }
    auto match = table_.Find(request.method, path);
    if (match.kind == RouteTable::Match::kNotFound) {
      Reply(*exchange,
            RenderError(404, "NOT_FOUND",
                        absl::StrCat("No endpoint ", request.method, " ",
                                     InputPrefix(path))),
            std::move(cors));
      return;
    }
    if (match.kind == RouteTable::Match::kMethodNotAllowed) {
      std::string allowed = absl::StrJoin(match.allowed_methods, ", ");
      Headers headers = std::move(cors);
      headers.emplace_back("Allow", allowed);
      Reply(*exchange,
            RenderError(405, "METHOD_NOT_ALLOWED",
                        absl::StrCat(request.method, " is not allowed on ",
                                     InputPrefix(path), "; use ", allowed)),
            std::move(headers));
      return;
    }
    if (!CookieRequestAllowed(request, cookie_name_)) {
      Reply(*exchange, CsrfError(), std::move(cors));
      return;
    }
    const Route& route = *match.route;
    const std::string* content_type = request.Header("content-type");
    auto message = transcoder_.BuildRequest(
        route, match.bindings, request.query(), request.body,
        content_type == nullptr ? std::string_view() : *content_type);
    if (!message.ok()) {
      Reply(*exchange, RenderStatus(message.status()), std::move(cors));
      return;
    }
    if (route.server_streaming) {
      StartStream(std::move(exchange), route, *message, std::move(cors));
    } else {
      StartUnary(std::move(exchange), route, *message, std::move(cors));
    }
  }

  // GET /ui/sign-in?code=CODE: trades the one-time code for a sign-in of
  // this browser's own (SystemService.RedeemSignInCode), keeps its
  // credential in an HttpOnly, SameSite=Strict cookie and sends the
  // browser on to "/", so that neither the code nor the credential stays
  // in the address bar.
  void SignIn(std::shared_ptr<http::HttpExchange> exchange) {
    std::string code = QueryValue(exchange->request().query(), "code");
    if (code.empty() || code.size() > 128) {
      Headers headers = UiHeaders("text/html; charset=utf-8");
      exchange->Respond(401, std::move(headers),
                        SignInFailedPage("The link has no valid code."));
      return;
    }
    v1::RedeemSignInCodeRequest message;
    message.set_code(code);
    if (const std::string* agent = exchange->request().Header("user-agent")) {
      message.set_user_agent(*agent);
    }
    CallSystemService(
        std::move(exchange), "RedeemSignInCode", message, "",
        [this](http::HttpExchange& exchange, const grpc::Status& status,
               const std::string& response) {
          v1::RedeemSignInCodeResponse answer;
          if (!status.ok() || !answer.ParseFromString(response) ||
              answer.ui_credential().empty()) {
            exchange.Respond(
                401, UiHeaders("text/html; charset=utf-8"),
                SignInFailedPage("It was used already, it has expired (links "
                                 "work once, for 15 minutes), or it belongs "
                                 "to another inspectord."));
          } else {
            Headers headers = UiHeaders("text/html; charset=utf-8");
            headers.emplace_back("Cache-Control", "no-store");
            headers.emplace_back(
                "Set-Cookie",
                absl::StrCat(cookie_name_, "=", answer.ui_credential(),
                             "; Path=/; HttpOnly; "
                             "SameSite=Strict"));
            headers.emplace_back("Location", "/");
            exchange.Respond(303, std::move(headers), "");
          }
        });
  }

  // POST /ui/sign-out (CSRF checked): ends the browser's sign-in at the
  // daemon (SystemService.SignOut), so that its credential is refused from
  // now on, then clears the cookie. The cookie is cleared even when the
  // daemon cannot be asked; the answer then says so.
  void SignOut(std::shared_ptr<http::HttpExchange> exchange) {
    auto clear = [this](http::HttpExchange& to, int status, std::string body) {
      Headers headers = UiHeaders("application/json");
      headers.emplace_back("Cache-Control", "no-store");
      headers.emplace_back("Set-Cookie",
                           absl::StrCat(cookie_name_,
                                        "=; Path=/; HttpOnly; "
                                        "SameSite=Strict; Max-Age=0"));
      to.Respond(status, std::move(headers), std::move(body));
    };
    std::string credential = CookieValue(exchange->request(), cookie_name_);
    if (credential.empty()) {
      clear(*exchange, 200, "{}");
      return;
    }
    CallSystemService(std::move(exchange), "SignOut", v1::SignOutRequest(),
                      credential,
                      [clear](http::HttpExchange& exchange,
                              const grpc::Status& status, const std::string&) {
                        if (status.ok()) {
                          clear(exchange, 200, "{}");
                        } else {
                          HttpError error = RenderGrpcError(status);
                          clear(exchange, error.status, std::move(error.body));
                        }
                      });
  }

  // Calls SystemService's `method` with `message` (and the browser's
  // sign-in `ui_credential`, if not empty) for the gateway's own pages, at
  // most 30 s, then `done` with the status and the serialized answer.
  void CallSystemService(
      std::shared_ptr<http::HttpExchange> exchange, const char* method,
      const google::protobuf::Message& message,
      const std::string& ui_credential,
      std::function<void(http::HttpExchange&, const grpc::Status&,
                         const std::string&)>
          done) {
    if (!BeginCall(false)) {
      Reply(*exchange, RenderError(503, "UNAVAILABLE", "Shutting down"), {});
      return;
    }
    struct Call {
      grpc::ClientContext context;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
      std::shared_ptr<http::HttpExchange> exchange;
    };
    auto call = std::make_shared<Call>();
    call->request = ToByteBuffer(message.SerializeAsString());
    call->context.set_deadline(std::chrono::system_clock::now() +
                               std::chrono::seconds(30));
    if (!ui_credential.empty()) {
      call->context.AddMetadata(kUiSessionMetadataKey, ui_credential);
    }
    call->exchange = std::move(exchange);
    stub_.UnaryCall(&call->context,
                    absl::StrCat("/inspector.v1.SystemService/", method),
                    grpc::StubOptions(), &call->request, &call->response,
                    [this, call, done = std::move(done)](grpc::Status status) {
                      done(*call->exchange, status, ToString(call->response));
                      EndCall(false);
                    });
  }

  bool BeginCall(bool stream) {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return false;
    ++calls_in_flight_;
    if (stream) ++streams_in_flight_;
    return true;
  }

  void EndCall(bool stream) {
    std::lock_guard<std::mutex> lock(mu_);
    --calls_in_flight_;
    if (stream) --streams_in_flight_;
    calls_done_.notify_all();
  }

  void StartUnary(std::shared_ptr<http::HttpExchange> exchange,
                  const Route& route, const std::string& message,
                  Headers cors) {
    if (!BeginCall(false)) {
      Reply(*exchange, RenderError(503, "UNAVAILABLE", "Shutting down"), cors);
      return;
    }
    auto call = std::make_shared<UnaryCall>();
    call->route = &route;
    call->cors = std::move(cors);
    call->request = ToByteBuffer(message);
    call->context.set_deadline(std::chrono::system_clock::now() +
                               absl::ToChronoSeconds(options_.call_timeout));
    AddCallerMetadata(exchange->request(), cookie_name_, call->context, false);
    call->exchange = std::move(exchange);
    std::weak_ptr<UnaryCall> weak = call;
    call->exchange->OnClientGone([weak] {
      if (auto alive = weak.lock()) alive->context.TryCancel();
    });
    stub_.UnaryCall(&call->context, route.grpc_path, grpc::StubOptions(),
                    &call->request, &call->response,
                    [this, call](grpc::Status status) {
                      FinishUnary(*call, status);
                      EndCall(false);
                    });
  }

  void FinishUnary(UnaryCall& call, const grpc::Status& status) {
    http::HttpExchange& exchange = *call.exchange;
    if (!status.ok()) {
      Reply(exchange,
            RenderCallError(status, exchange.request(), false, cookie_name_),
            std::move(call.cors));
      return;
    }
    int code = 200;
    std::string http_code = ResponseMetadata(call.context, "x-http-code");
    if (!http_code.empty() &&
        (!absl::SimpleAtoi(http_code, &code) || code < 200 || code > 599)) {
      code = 200;
    }
    Headers headers = std::move(call.cors);
    std::string location = ResponseMetadata(call.context, "location");
    if (!location.empty()) headers.emplace_back("Location", location);
    if (code == 204 || code == 304) {
      exchange.Respond(code, std::move(headers), "");
      return;
    }
    auto body =
        transcoder_.RenderResponse(*call.route, ToString(call.response));
    if (!body.ok()) {
      Reply(exchange, RenderStatus(body.status()), std::move(headers));
      return;
    }
    // 202 with nothing to say (POST /mcp of a notification): no body, so
    // no Content-Type either.
    if (code != 202 || !body->body.empty()) {
      headers.emplace_back("Content-Type", body->content_type);
    }
    exchange.Respond(code, std::move(headers), std::move(body->body));
  }

  void StartStream(std::shared_ptr<http::HttpExchange> exchange,
                   const Route& route, const std::string& message,
                   Headers cors) {
    if (!BeginCall(true)) {
      Reply(*exchange, RenderError(503, "UNAVAILABLE", "Shutting down"), cors);
      return;
    }
    auto call = std::make_shared<StreamCall>(
        &stub_, &transcoder_, cookie_name_, std::move(exchange), route,
        std::move(cors), [this] { EndCall(true); });
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Forget streams that have ended before remembering a new one.
      streams_.remove_if(
          [](const std::weak_ptr<StreamCall>& weak) { return weak.expired(); });
      streams_.push_back(call);
    }
    call->Start(call, message);
  }

  void HeartbeatLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!shut_down_) {
      heartbeat_wake_.wait_for(
          lock, absl::ToChronoMilliseconds(options_.heartbeat_interval));
      if (shut_down_) break;
      std::vector<std::shared_ptr<StreamCall>> live;
      for (auto& weak : streams_) {
        if (auto stream = weak.lock()) live.push_back(std::move(stream));
      }
      lock.unlock();
      for (auto& stream : live) stream->Heartbeat();
      live.clear();
      lock.lock();
    }
  }

  static constexpr std::string_view kSignInPath = "/ui/sign-in";
  static constexpr std::string_view kSignOutPath = "/ui/sign-out";

  const GatewayOptions options_;
  // Written before the policy is published (policy_), read after.
  std::string cookie_name_;
  grpc::GenericStub stub_;
  std::unique_ptr<google::protobuf::DescriptorPool> pool_;
  RouteTable table_;
  Transcoder transcoder_;
  std::unique_ptr<RequestPolicy> policy_owner_;
  // One per options_.prefix_routes entry: its own origins, or null.
  std::vector<std::unique_ptr<RequestPolicy>> prefix_policies_;
  std::atomic<const RequestPolicy*> policy_{nullptr};
  std::unique_ptr<http::HttpServer> server_;

  std::mutex mu_;
  std::condition_variable calls_done_;
  std::condition_variable heartbeat_wake_;
  int calls_in_flight_ = 0;
  int streams_in_flight_ = 0;
  bool shut_down_ = false;
  std::list<std::weak_ptr<StreamCall>> streams_;
  std::thread heartbeat_;
};

absl::StatusOr<std::unique_ptr<Gateway>> Gateway::Start(
    GatewayOptions options, std::shared_ptr<grpc::Channel> channel) {
  auto listen = net::CheckListenAddress(options.http.listen,
                                        options.allow_network_exposure,
                                        "--dangerously-expose-to-network");
  if (!listen.ok()) return listen.status();
  if (listen->unix_socket) {
    return absl::InvalidArgumentError(
        "the REST gateway listens on TCP only (host:port)");
  }
  if (options.http.max_body_bytes > kMaxForwardedMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the largest request body is ", kMaxForwardedMessageBytes >> 20,
        " MiB (inspectord accepts no larger message)"));
  }
  std::string_view descriptors = options.descriptor_set.empty()
                                     ? EmbeddedDescriptorSet()
                                     : std::string_view(options.descriptor_set);
  auto pool = LoadDescriptorSet(descriptors);
  if (!pool.ok()) return pool.status();
  auto table = RouteTable::Build(**pool);
  if (!table.ok()) return table.status();
  auto impl = std::make_shared<Impl>(std::move(options), std::move(channel),
                                     *std::move(pool), *std::move(table));
  if (absl::Status status = impl->Listen(); !status.ok()) return status;
  return std::unique_ptr<Gateway>(new Gateway(std::move(impl)));
}

Gateway::Gateway(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Gateway::~Gateway() { Shutdown(); }
int Gateway::port() const { return impl_->port(); }
size_t Gateway::route_count() const { return impl_->route_count(); }
void Gateway::Shutdown() { impl_->Shutdown(); }

}  // namespace inspector::gateway
