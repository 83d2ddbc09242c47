# Tests of the stdio transport against real child processes. Registered in
# CTest as "transport.StdioTransportTest.<Test>".
add_executable(transport_stdio_test
    ${CMAKE_CURRENT_LIST_DIR}/stdio_transport_test.cc)
inspector_target_defaults(transport_stdio_test)
target_link_libraries(transport_stdio_test PRIVATE inspector_transport_stdio
    inspector_testing GTest::gmock GTest::gtest_main)
gtest_discover_tests(transport_stdio_test TEST_PREFIX "transport."
    PROPERTIES TIMEOUT 120)
