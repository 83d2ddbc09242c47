#include "gateway/stream_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "gateway/byte_buffers.h"
#include "gateway/caller_credentials.h"
#include "gateway/http_errors.h"

namespace inspector::gateway {
namespace {

bool WantsNdjson(const http::Request& request) {
  const std::string* accept = request.Header("accept");
  return accept != nullptr &&
         (accept->find("application/x-ndjson") != std::string::npos ||
          accept->find("application/jsonl") != std::string::npos);
}

bool StreamsHttpBody(const Route& route) {
  return route.method != nullptr &&
         route.method->output_type()->full_name() == "google.api.HttpBody";
}

}  // namespace

StreamCall::StreamCall(grpc::GenericStub* stub, const Transcoder* transcoder,
                       std::string_view cookie_name,
                       std::shared_ptr<http::HttpExchange> exchange,
                       const Route& route, http::Headers cors,
                       std::function<void()> on_done)
    : stub_(stub),
      transcoder_(transcoder),
      cookie_name_(cookie_name),
      exchange_(std::move(exchange)),
      route_(route),
      cors_(std::move(cors)),
      ndjson_(WantsNdjson(exchange_->request())),
      raw_(StreamsHttpBody(route)),
      on_done_(std::move(on_done)) {}

void StreamCall::Start(std::shared_ptr<StreamCall> self,
                       const std::string& message) {
  self_ = std::move(self);
  request_ = ToByteBuffer(message);
  AddCallerMetadata(exchange_->request(), cookie_name_, context_, true);
  std::weak_ptr<StreamCall> weak = self_;
  exchange_->OnClientGone([weak] {
    if (auto alive = weak.lock()) alive->Cancel();
  });
  stub_->PrepareBidiStreamingCall(&context_, route_.grpc_path,
                                  grpc::StubOptions(), this);
  StartWriteLast(&request_, grpc::WriteOptions());
  StartRead(&response_);
  StartCall();
}

void StreamCall::Heartbeat() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ && !ndjson_ && !raw_ && !finished_) {
    exchange_->Write(": ping\n\n");
  }
}

// A call refused at once also delivers (empty) initial metadata, so
// only metadata with content opens the HTTP stream early; otherwise the
// first message does, and a refusal becomes a proper HTTP error.
void StreamCall::OnReadInitialMetadataDone(bool ok) {
  if (ok && !raw_ && !context_.GetServerInitialMetadata().empty()) {
    BeginHttpStream();
  }
}

void StreamCall::OnReadDone(bool ok) {
  if (!ok) return;  // OnDone follows.
  auto body = transcoder_->RenderStreamMessage(route_, ToString(response_));
  BeginHttpStream(body.ok() ? body->content_type : "");
  std::string chunk;
  if (body.ok()) {
    chunk = raw_ ? std::move(body->body) : Frame(body->body, "");
  } else if (raw_) {
    // Nothing can be said inside a raw body: end it here.
    Cancel();
    return;
  } else {
    chunk = Frame(RenderStatus(body.status()).body, "error");
  }
  bool written;
  {
    std::lock_guard<std::mutex> lock(mu_);
    written = exchange_->Write(std::move(chunk));
  }
  if (!written) {
    Cancel();
    return;
  }
  StartRead(&response_);
}

void StreamCall::OnDone(const grpc::Status& status) {
  bool started;
  {
    std::lock_guard<std::mutex> lock(mu_);
    started = started_;
  }
  if (!started && !status.ok()) {
    HttpError error =
        RenderCallError(status, exchange_->request(), true, cookie_name_);
    http::Headers headers = cors_;
    headers.emplace_back("Content-Type", "application/json");
    exchange_->Respond(error.status, std::move(headers), error.body);
  } else {
    BeginHttpStream();
    std::lock_guard<std::mutex> lock(mu_);
    if (!raw_ && !status.ok() &&
        status.error_code() != grpc::StatusCode::CANCELLED) {
      exchange_->Write(Frame(RenderGrpcError(status).body, "error"));
    }
    finished_ = true;
    exchange_->Finish();
  }
  std::function<void()> on_done = std::move(on_done_);
  self_.reset();  // May delete this.
  on_done();
}

std::string StreamCall::Frame(const std::string& json,
                              std::string_view event) const {
  if (ndjson_) {
    return json + "\n";
  }
  std::string out;
  out.reserve(json.size() + 16);
  if (!event.empty()) {
    out.append("event: ").append(event.data(), event.size()).append("\n");
  }
  // Compact JSON has no raw newlines, so one data line holds it.
  absl::StrAppend(&out, "data: ", json, "\n\n");
  return out;
}

void StreamCall::BeginHttpStream(const std::string& content_type) {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  http::Headers headers = cors_;
  if (raw_) {
    headers.emplace_back("Content-Type", content_type.empty()
                                             ? "application/octet-stream"
                                             : content_type);
  } else if (ndjson_) {
    headers.emplace_back("Content-Type", "application/x-ndjson");
  } else {
    headers.emplace_back("Content-Type", "text/event-stream");
    headers.emplace_back("Cache-Control", "no-cache");
  }
  headers.emplace_back("X-Accel-Buffering", "no");
  exchange_->StartStream(200, std::move(headers));
  if (!ndjson_ && !raw_) exchange_->Write(": connected\n\n");
}

}  // namespace inspector::gateway
