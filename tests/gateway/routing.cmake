# Unit tests of the gateway's pure core (clients/web-gateway/routing.cmake):
# path templates, the route table over the real descriptor set, transcoding
# and error bodies.
add_executable(gateway_core_test
    path_template_test.cc
    route_table_test.cc
    transcoder_test.cc
    transcoder_all_types_test.cc
    http_errors_test.cc)
inspector_target_defaults(gateway_core_test)
target_compile_definitions(gateway_core_test PRIVATE
    INSPECTOR_DESCRIPTOR_SET="${INSPECTOR_DESCRIPTOR_SET}")
target_link_libraries(gateway_core_test PRIVATE inspector_gateway_core
    GTest::gmock GTest::gtest_main)
add_dependencies(gateway_core_test inspector_descriptor_set)
gtest_discover_tests(gateway_core_test TEST_PREFIX "gateway." NO_PRETTY_VALUES)
