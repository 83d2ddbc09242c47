# The gateway's pure core: path templates, the route table built from the
# descriptor set, JSON <-> protobuf transcoding and the REST error body.
# No sockets; the HTTP server and gateway.cc build on it.
add_library(inspector_gateway_core STATIC
    path_template.cc
    route_table.cc
    transcoder.cc
    request_binding.cc
    json_reader.cc
    json_writer.cc
    value_forms.cc
    http_errors.cc)
inspector_target_defaults(inspector_gateway_core)
inspector_unity_build(inspector_gateway_core 4)
target_link_libraries(inspector_gateway_core PUBLIC
    inspector_common inspector_http1 inspector_proto protobuf::libprotobuf gRPC::grpc++
    absl::status absl::statusor absl::strings nlohmann_json::nlohmann_json)
