#include "server/telemetry/otlp_senders.h"

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"
#include "otlp/metrics_export.grpc.pb.h"
#include "otlp/trace_export.grpc.pb.h"
#include "server/oauth/oauth_http.h"

namespace inspector::telemetry {
namespace {

namespace otlp_trace = opentelemetry::proto::collector::trace::v1;
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

// The sender of one signal: `Service` is its gRPC service, `Request` and
// `Response` its export messages.
template <typename Service, typename Request, typename Response>
absl::StatusOr<std::function<SendOutcome(const Request&)>> MakeSender(
    const OtlpTarget& target) {
  using Sender = std::function<SendOutcome(const Request&)>;
  if (target.protocol == OtlpProtocol::kHttpProtobuf) {
    std::shared_ptr<oauth::HttpFetcher> fetcher = HttpFetcherFor(target);
    return Sender([fetcher, target](const Request& request) {
      return HttpSend(*fetcher, target, request.SerializeAsString());
    });
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = GrpcChannel(target);
  if (!channel.ok()) return channel.status();
  std::shared_ptr<typename Service::Stub> stub = Service::NewStub(*channel);
  return Sender([stub, target](const Request& request) {
    grpc::ClientContext context;
    PrepareContext(target, &context);
    Response response;
    return GrpcOutcome(stub->Export(&context, request, &response));
  });
}

}  // namespace

absl::StatusOr<SpanSender> MakeOtlpSender(const OtlpTarget& target) {
  return MakeSender<otlp_trace::TraceService,
                    otlp_trace::ExportTraceServiceRequest,
                    otlp_trace::ExportTraceServiceResponse>(target);
}

absl::StatusOr<MetricsSender> MakeOtlpMetricsSender(const OtlpTarget& target) {
  return MakeSender<otlp_metrics::MetricsService,
                    otlp_metrics::ExportMetricsServiceRequest,
                    otlp_metrics::ExportMetricsServiceResponse>(target);
}

}  // namespace inspector::telemetry
