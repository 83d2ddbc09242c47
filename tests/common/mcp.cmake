# Tests of the shared MCP message rules (common/mcp/): elicitation answers
# against their schemas, form descriptions, typed input, sampling results.
add_executable(mcp_rules_test ${CMAKE_CURRENT_LIST_DIR}/mcp_rules_test.cc)
inspector_target_defaults(mcp_rules_test)
target_link_libraries(mcp_rules_test PRIVATE inspector_mcp_rules
    inspector_common GTest::gmock GTest::gtest_main)
gtest_discover_tests(mcp_rules_test TEST_PREFIX "common." NO_PRETTY_VALUES)
