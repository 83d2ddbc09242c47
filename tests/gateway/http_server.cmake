# Tests of the gateway's HTTP/1.1 server over real sockets on 127.0.0.1
# (and curl as a child process).
add_executable(http_server_test http_server_test.cc)
inspector_target_defaults(http_server_test)
target_link_libraries(http_server_test PRIVATE inspector_gateway_http_server
    inspector_testing nlohmann_json::nlohmann_json absl::synchronization
    absl::time GTest::gmock GTest::gtest_main)
gtest_discover_tests(http_server_test TEST_PREFIX "gateway." NO_PRETTY_VALUES)
