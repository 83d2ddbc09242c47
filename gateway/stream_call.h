// One server-streaming call of the gateway: the gRPC method's messages
// relayed to the HTTP client as SSE events or NDJSON lines (by the
// request's Accept), each rendered as a unary answer is (Transcoder).
// A call refused before its first message becomes a plain HTTP error; a
// failure after it, an "error" event. SSE streams get heartbeat comments.
// A method that streams google.api.HttpBody (a download such as
// /api/messages:export) is relayed raw instead: one response whose
// Content-Type is the first message's and whose body is the messages'
// data, concatenated; a failure after the first message ends it early.
//
// Owns itself from Start() until gRPC's OnDone(), which runs `on_done`
// last. The gateway (gateway.cc) starts it on the HTTP loop thread; gRPC's
// callback threads run the reactor methods; Cancel() and Heartbeat() may be
// called from any thread.
#ifndef INSPECTOR_GATEWAY_STREAM_CALL_H_
#define INSPECTOR_GATEWAY_STREAM_CALL_H_

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/client_callback.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/http/http_server.h"
#include "gateway/route.h"
#include "gateway/transcoder.h"

namespace inspector::gateway {

class StreamCall
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `stub` and `transcoder` must outlive the call; `cookie_name` is the
  // gateway's sign-in cookie (caller_credentials.h).
  StreamCall(grpc::GenericStub* stub, const Transcoder* transcoder,
             std::string_view cookie_name,
             std::shared_ptr<http::HttpExchange> exchange, const Route& route,
             http::Headers cors, std::function<void()> on_done);

  // Sends `message` (serialized) with the caller's credentials; `self` is
  // this call, kept alive until OnDone.
  void Start(std::shared_ptr<StreamCall> self, const std::string& message);
  void Cancel() { context_.TryCancel(); }
  // An SSE comment keeps the connection alive; NDJSON has no comments.
  void Heartbeat();

  void OnReadInitialMetadataDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  std::string Frame(const std::string& json, std::string_view event) const;
  // `content_type`: a raw stream's (ignored for SSE and NDJSON).
  void BeginHttpStream(const std::string& content_type = "");

  grpc::GenericStub* const stub_;
  const Transcoder* const transcoder_;
  const std::string cookie_name_;
  std::shared_ptr<http::HttpExchange> exchange_;
  const Route& route_;
  const http::Headers cors_;
  const bool ndjson_;
  const bool raw_;  // the method streams google.api.HttpBody
  std::function<void()> on_done_;
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::shared_ptr<StreamCall> self_;
  std::mutex mu_;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_STREAM_CALL_H_
