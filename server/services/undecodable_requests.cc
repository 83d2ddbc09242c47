#include "server/services/undecodable_requests.h"

#include <string>

#include <google/protobuf/stubs/logging.h>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "server/logging.h"

namespace inspector::services {
namespace {

using grpc::experimental::InterceptionHookPoints;

class UndecodableRequestInterceptor final
    : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      grpc::Status status = methods->GetSendStatus();
      // The status gRPC gives a request it could not decode; every
      // UNIMPLEMENTED of ours carries a message and details.
      if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED &&
          status.error_message().empty() && status.error_details().empty()) {
        methods->ModifySendStatus(ToGrpcStatus(UndecodableRequestError()));
      }
    }
    methods->Proceed();
  }
};

class UndecodableRequestInterceptorFactoryImpl final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo*) override {
    return new UndecodableRequestInterceptor();
  }
};

void LogProtobufLine(google::protobuf::LogLevel level, const char* filename,
                     int line, const std::string& message) {
  Log(LogLevel::kDebug,
      absl::StrCat("libprotobuf ",
                   level >= google::protobuf::LOGLEVEL_ERROR ? "error" : "note",
                   " (", filename, ":", line, "): ", message));
}

}  // namespace

absl::Status UndecodableRequestError() {
  return Error(v1::INVALID_REQUEST,
               "the request could not be decoded: a string field holds bytes "
               "that are not valid UTF-8 (send text as UTF-8), or the message "
               "is malformed");
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
UndecodableRequestInterceptorFactory() {
  return std::make_unique<UndecodableRequestInterceptorFactoryImpl>();
}

void RouteProtobufLogs() { google::protobuf::SetLogHandler(&LogProtobufLine); }

}  // namespace inspector::services
