// Requests gRPC cannot decode, told apart from missing methods.
//
// When a request does not parse as its method's message (most often a
// proto3 string field holding bytes that are not UTF-8, such as an import
// file in Latin-1), gRPC's callback API fails the call with UNIMPLEMENTED
// and an empty message, before any handler runs, and libprotobuf logs an
// ERROR line on stderr. The interceptor made here turns that status into
// INVALID_ARGUMENT with reason INVALID_REQUEST and a message saying what
// to fix; RouteProtobufLogs sends libprotobuf's lines to the daemon's log
// at debug level. Calls to unknown or unbuilt methods are answered by
// UnimplementedService with a message, so they are never mistaken for
// undecodable ones. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_UNDECODABLE_REQUESTS_H_
#define INSPECTOR_SERVER_SERVICES_UNDECODABLE_REQUESTS_H_

#include <memory>

#include <grpcpp/support/server_interceptor.h>

#include "absl/status/status.h"

namespace inspector::services {

// What a request that could not be decoded is answered with
// (INVALID_REQUEST, with what to fix).
absl::Status UndecodableRequestError();

// For ServerBuilder::experimental().SetInterceptorCreators().
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
UndecodableRequestInterceptorFactory();

// Replaces libprotobuf's default log handler (stderr) with the daemon's
// log, at debug level. Call once at start.
void RouteProtobufLogs();

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_UNDECODABLE_REQUESTS_H_
