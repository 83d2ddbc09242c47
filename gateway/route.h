// One REST route: an HTTP method and path template bound to a gRPC method,
// as declared by a google.api.http rule (or one of its additional_bindings).
//
// Routes are built once at start-up by RouteTable and never change; every
// pointer in them points into the DescriptorPool the table was built from,
// which must outlive the table. Immutable, so safe to share across threads.
#ifndef INSPECTOR_GATEWAY_ROUTE_H_
#define INSPECTOR_GATEWAY_ROUTE_H_

#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "gateway/path_template.h"

namespace inspector::gateway {

struct Route {
  // "GET", "POST", "PUT", "DELETE", "PATCH" (or a custom rule's kind).
  std::string http_method;
  // The rule's path template, e.g. "/api/pending/{id}:resolve".
  std::string pattern;
  PathTemplate path;
  // The gRPC method and its full path,
  // "/inspector.v1.ConfigService/ListServers".
  const google::protobuf::MethodDescriptor* method = nullptr;
  std::string grpc_path;
  // The rule's `body`: "" (no body), "*" (the whole request message) or a
  // top-level field name of the request message (e.g. "server", "body").
  std::string body;
  // The rule's `response_body`: "" (the whole response) or a field name.
  std::string response_body;
  bool server_streaming = false;
  bool client_streaming = false;
};

// PathBindings (the variables a matched path bound) is declared in
// path_template.h, which produces them.

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_ROUTE_H_
