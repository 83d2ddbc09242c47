# Tests of the HTTP/1.1 codec (common/http/). The SSE writer is checked
# against the project's own SSE reader.
add_executable(http1_test http1_test.cc)
inspector_target_defaults(http1_test)
target_link_libraries(http1_test PRIVATE inspector_http1 inspector_sse_parser
    GTest::gmock GTest::gtest_main)
gtest_discover_tests(http1_test TEST_PREFIX "common." NO_PRETTY_VALUES)
