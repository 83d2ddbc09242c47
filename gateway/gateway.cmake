# The gateway proper (request policy, calls through grpc::GenericStub,
# streams) with the descriptor set compiled in.
add_library(inspector_gateway STATIC
    byte_buffers.cc caller_credentials.cc descriptor_set_data.cc gateway.cc
    request_policy.cc stream_call.cc app_sandbox.cc)
inspector_target_defaults(inspector_gateway)
inspector_unity_build(inspector_gateway 0)
target_compile_definitions(inspector_gateway PRIVATE
    INSPECTOR_DESCRIPTOR_SET="${INSPECTOR_DESCRIPTOR_SET}")
# Outside the unity batch: a batch's object does not carry the file's
# OBJECT_DEPENDS, and the .incbin'd descriptor set would go stale.
set_source_files_properties(descriptor_set_data.cc PROPERTIES
    OBJECT_DEPENDS ${INSPECTOR_DESCRIPTOR_SET} SKIP_UNITY_BUILD_INCLUSION ON)
add_dependencies(inspector_gateway inspector_descriptor_set)
target_link_libraries(inspector_gateway PUBLIC
    inspector_gateway_core inspector_http_server inspector_common
    inspector_ui_assets
    gRPC::grpc++ absl::strings absl::time)
