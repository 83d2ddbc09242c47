# The HTTP client transports over libcurl: Streamable HTTP
# (streamable_http_transport.h) and legacy HTTP+SSE (sse_transport.h), and
# the SSE parser they use (common/sse_parser.h, kept in its own small target
# that depends on Abseil only, so fuzzers and other code can link it alone).
add_library(inspector_sse_parser STATIC
    ${PROJECT_SOURCE_DIR}/common/sse_parser.cc)
inspector_target_defaults(inspector_sse_parser)
target_link_libraries(inspector_sse_parser PUBLIC absl::status absl::strings)

add_library(inspector_transport_http STATIC
    ${CMAKE_CURRENT_LIST_DIR}/curl_api.cc
    ${CMAKE_CURRENT_LIST_DIR}/http_client.cc
    ${CMAKE_CURRENT_LIST_DIR}/http_stream_transport.cc
    ${CMAKE_CURRENT_LIST_DIR}/sse_transport.cc
    ${CMAKE_CURRENT_LIST_DIR}/streamable_http_transport.cc)
inspector_target_defaults(inspector_transport_http)
target_link_libraries(inspector_transport_http PUBLIC inspector_sse_parser
    inspector_common nlohmann_json::nlohmann_json
    absl::status absl::statusor absl::strings absl::synchronization
    absl::time absl::base Threads::Threads ${CMAKE_DL_LIBS})
# libcurl is loaded with dlopen on first use (curl_api.h): its headers are
# needed, its library is not linked.
target_include_directories(inspector_transport_http PUBLIC
    ${CURL_INCLUDE_DIRS})
