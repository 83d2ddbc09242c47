# The gateway's HTTP/1.1 server: one epoll loop thread, keep-alive,
# pipelining, streamed (chunked) responses, size limits and timeouts.
add_library(inspector_gateway_http_server STATIC http_server.cc)
inspector_target_defaults(inspector_gateway_http_server)
target_link_libraries(inspector_gateway_http_server PUBLIC
    inspector_http1 inspector_common absl::status absl::statusor
    absl::strings absl::synchronization absl::time Threads::Threads)
