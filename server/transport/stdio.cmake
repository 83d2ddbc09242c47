# The stdio transport: an MCP server as a child process speaking
# newline-delimited JSON (server/transport/stdio_transport.h).
add_library(inspector_transport_stdio STATIC
    ${CMAKE_CURRENT_LIST_DIR}/stdio_output.cc
    ${CMAKE_CURRENT_LIST_DIR}/stdio_process.cc
    ${CMAKE_CURRENT_LIST_DIR}/stdio_transport.cc)
inspector_target_defaults(inspector_transport_stdio)
target_link_libraries(inspector_transport_stdio PUBLIC inspector_common
    absl::status absl::statusor absl::strings absl::synchronization
    absl::time Threads::Threads)
