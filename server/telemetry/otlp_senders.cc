#include "server/telemetry/otlp_senders.h"

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "otlp/metrics_export.pb.h"
#include "server/oauth/oauth_http.h"

namespace inspector::telemetry {
namespace {

namespace otlp_metrics = opentelemetry::proto::collector::metrics::v1;

// POSTs `body` (a serialized export request) to the target's URL.
SendOutcome HttpSend(oauth::HttpFetcher& fetcher, const OtlpTarget& target,
                     std::string body) {
  oauth::HttpRequest post;
  post.method = "POST";
  post.url = target.endpoint;
  post.headers = target.headers;
  post.headers.emplace_back("Content-Type", "application/x-protobuf");
  post.body = std::move(body);
  absl::StatusOr<oauth::HttpResponse> response = fetcher.Fetch(post);
  if (!response.ok()) return {response.status(), /*retryable=*/true};
  if (response->status >= 200 && response->status < 300) return {};
  const int code = response->status;
  const bool retryable =
      code == 429 || code == 502 || code == 503 || code == 504;
  return {absl::UnavailableError(
              absl::StrCat("the collector answered HTTP ", code)),
          retryable};
}

std::shared_ptr<oauth::HttpFetcher> HttpFetcherFor(const OtlpTarget& target) {
  oauth::CurlFetcherOptions options;
  options.timeout = target.timeout;
  options.max_body_bytes = 64 << 10;
  return std::make_shared<oauth::CurlFetcher>(options);
}

// The gRPC channel to the target's host:port ("http://host:port[/]" or
// "host:port"), or INVALID_ARGUMENT.
absl::StatusOr<std::shared_ptr<grpc::Channel>> GrpcChannel(
    const OtlpTarget& target) {
  absl::string_view address = target.endpoint;
  const bool tls = absl::StartsWith(address, "https://");
  if (!absl::ConsumePrefix(&address, "http://")) {
    absl::ConsumePrefix(&address, "https://");
  }
  address = absl::StripSuffix(address, "/");
  if (tls) {
    // The daemon's static gRPC is built without TLS credentials.
    return absl::InvalidArgumentError(absl::StrCat(
        "OTLP/gRPC endpoint \"", target.endpoint,
        "\": gRPC export is plaintext only (a collector on this machine or "
        "a trusted network); for TLS use --otel-protocol http/protobuf "
        "with an https:// URL"));
  }
  if (address.empty() || address.find('/') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("OTLP/gRPC endpoint \"", target.endpoint,
                     "\": expected host:port or http(s)://host:port"));
  }
  return grpc::CreateChannel(std::string(address),
                             grpc::InsecureChannelCredentials());
}

// A call's context: the target's deadline and headers as metadata.
void PrepareContext(const OtlpTarget& target, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoMilliseconds(target.timeout));
  for (const auto& [key, value] : target.headers) {
    context->AddMetadata(absl::AsciiStrToLower(key), value);
  }
}

SendOutcome GrpcOutcome(const grpc::Status& status) {
  if (status.ok()) return SendOutcome{};
  const grpc::StatusCode code = status.error_code();
  const bool retryable = code == grpc::StatusCode::UNAVAILABLE ||
                         code == grpc::StatusCode::DEADLINE_EXCEEDED ||
                         code == grpc::StatusCode::RESOURCE_EXHAUSTED ||
                         code == grpc::StatusCode::ABORTED ||
                         code == grpc::StatusCode::CANCELLED ||
                         code == grpc::StatusCode::OUT_OF_RANGE ||
                         code == grpc::StatusCode::DATA_LOSS;
  return SendOutcome{absl::UnavailableError(absl::StrCat(
                         "the collector answered gRPC ", static_cast<int>(code),
                         ": ", status.error_message())),
                     retryable};
}

// The sender of a signal's serialized export requests: a POST to the
// target's URL, or the gRPC unary call `grpc_method` (its full path) with
// the bytes as they are, through a generic stub.
absl::StatusOr<std::function<SendOutcome(const std::string&)>> MakeBytesSender(
    const OtlpTarget& target, const std::string& grpc_method) {
  using Sender = std::function<SendOutcome(const std::string&)>;
  if (target.protocol == OtlpProtocol::kHttpProtobuf) {
    std::shared_ptr<oauth::HttpFetcher> fetcher = HttpFetcherFor(target);
    return Sender([fetcher, target](const std::string& body) {
      return HttpSend(*fetcher, target, body);
    });
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = GrpcChannel(target);
  if (!channel.ok()) return channel.status();
  auto stub = std::make_shared<grpc::GenericStub>(*channel);
  return Sender([stub, target, grpc_method](const std::string& body) {
    grpc::ClientContext context;
    PrepareContext(target, &context);
    grpc::Slice slice(body);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    absl::Notification done;
    grpc::Status status;
    stub->UnaryCall(&context, grpc_method, grpc::StubOptions(), &request,
                    &response, [&](grpc::Status s) {
                      status = std::move(s);
                      done.Notify();
                    });
    done.WaitForNotification();
    return GrpcOutcome(status);
  });
}

}  // namespace

absl::StatusOr<SpanSender> MakeOtlpSender(const OtlpTarget& target) {
  return MakeBytesSender(
      target, "/opentelemetry.proto.collector.trace.v1.TraceService/Export");
}

absl::StatusOr<MetricsSender> MakeOtlpMetricsSender(const OtlpTarget& target) {
  absl::StatusOr<std::function<SendOutcome(const std::string&)>> send =
      MakeBytesSender(
          target,
          "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export");
  if (!send.ok()) return send.status();
  return MetricsSender(
      [send = *std::move(send)](
          const otlp_metrics::ExportMetricsServiceRequest& request) {
        return send(request.SerializeAsString());
      });
}

}  // namespace inspector::telemetry
