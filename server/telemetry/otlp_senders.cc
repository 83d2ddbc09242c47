#include "server/telemetry/otlp_senders.h"

#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"
#include "otlp/trace_export.grpc.pb.h"
#include "server/oauth/oauth_http.h"

namespace inspector::telemetry {
namespace {

namespace otlp = opentelemetry::proto::collector::trace::v1;

SendOutcome HttpSend(oauth::HttpFetcher& fetcher, const TracingConfig& config,
                     const otlp::ExportTraceServiceRequest& request) {
  oauth::HttpRequest post;
  post.method = "POST";
  post.url = config.endpoint;
  post.headers = config.headers;
  post.headers.emplace_back("Content-Type", "application/x-protobuf");
  post.body = request.SerializeAsString();
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

// host:port for gRPC from "http://host:port[/]" or "host:port".
std::string GrpcTarget(absl::string_view endpoint, bool* tls) {
  *tls = absl::StartsWith(endpoint, "https://");
  absl::string_view target = endpoint;
  if (!absl::ConsumePrefix(&target, "http://")) {
    absl::ConsumePrefix(&target, "https://");
  }
  target = absl::StripSuffix(target, "/");
  return std::string(target);
}

}  // namespace

absl::StatusOr<SpanSender> MakeOtlpSender(const TracingConfig& config) {
  if (config.protocol == OtlpProtocol::kHttpProtobuf) {
    oauth::CurlFetcherOptions options;
    options.timeout = config.timeout;
    options.max_body_bytes = 64 << 10;
    auto fetcher = std::make_shared<oauth::CurlFetcher>(options);
    return SpanSender(
        [fetcher, config](const otlp::ExportTraceServiceRequest& request) {
          return HttpSend(*fetcher, config, request);
        });
  }
  bool tls = false;
  const std::string target = GrpcTarget(config.endpoint, &tls);
  if (tls) {
    // The daemon's static gRPC is built without TLS credentials.
    return absl::InvalidArgumentError(absl::StrCat(
        "OTLP/gRPC endpoint \"", config.endpoint,
        "\": gRPC export is plaintext only (a collector on this machine or "
        "a trusted network); for TLS use --otel-protocol http/protobuf "
        "with an https:// URL"));
  }
  if (target.empty() || target.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OTLP/gRPC endpoint \"", config.endpoint,
        "\": expected host:port or http(s)://host:port"));
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  std::shared_ptr<otlp::TraceService::Stub> stub =
      otlp::TraceService::NewStub(channel);
  return SpanSender([stub, config](
                        const otlp::ExportTraceServiceRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoMilliseconds(config.timeout));
    for (const auto& [key, value] : config.headers) {
      context.AddMetadata(absl::AsciiStrToLower(key), value);
    }
    otlp::ExportTraceServiceResponse response;
    const grpc::Status status = stub->Export(&context, request, &response);
    if (status.ok()) return SendOutcome{};
    const grpc::StatusCode code = status.error_code();
    const bool retryable = code == grpc::StatusCode::UNAVAILABLE ||
                           code == grpc::StatusCode::DEADLINE_EXCEEDED ||
                           code == grpc::StatusCode::RESOURCE_EXHAUSTED ||
                           code == grpc::StatusCode::ABORTED ||
                           code == grpc::StatusCode::CANCELLED ||
                           code == grpc::StatusCode::OUT_OF_RANGE ||
                           code == grpc::StatusCode::DATA_LOSS;
    return SendOutcome{
        absl::UnavailableError(absl::StrCat("the collector answered gRPC ",
                                            static_cast<int>(code), ": ",
                                            status.error_message())),
        retryable};
  });
}

}  // namespace inspector::telemetry
