# Tests of the SSE parser and the HTTP transports. The transports are tested
# against mcp_http_test_server.py, a python3 (stdlib only) server on
# 127.0.0.1:0 that each test starts and stops. Registered in CTest as
# "transport.SseParserTest.<Test>", "transport.StreamableHttpTransportTest.<Test>"
# and "transport.SseTransportTest.<Test>".
add_executable(transport_sse_parser_test
    ${CMAKE_CURRENT_LIST_DIR}/sse_parser_test.cc)
inspector_target_defaults(transport_sse_parser_test)
target_link_libraries(transport_sse_parser_test PRIVATE inspector_sse_parser
    inspector_common GTest::gmock GTest::gtest_main)
gtest_discover_tests(transport_sse_parser_test TEST_PREFIX "transport.")

add_executable(transport_http_test
    ${CMAKE_CURRENT_LIST_DIR}/http_transport_test.cc)
inspector_target_defaults(transport_http_test)
target_compile_definitions(transport_http_test PRIVATE
    INSPECTOR_MCP_HTTP_TEST_SERVER="${CMAKE_CURRENT_LIST_DIR}/mcp_http_test_server.py"
    INSPECTOR_PYTHON3="/usr/bin/python3")
target_link_libraries(transport_http_test PRIVATE inspector_transport_http
    inspector_common inspector_testing nlohmann_json::nlohmann_json GTest::gmock
    GTest::gtest_main)
gtest_discover_tests(transport_http_test TEST_PREFIX "transport."
    PROPERTIES TIMEOUT 120)
