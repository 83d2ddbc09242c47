# The gateway proper: request policy (pure) and the whole gateway against
# in-process fakes of the daemon's services, over real sockets with curl.
add_executable(gateway_test gateway_test.cc request_policy_test.cc)
inspector_target_defaults(gateway_test)
target_link_libraries(gateway_test PRIVATE inspector_gateway inspector_testing
    inspector_proto gRPC::grpc++ absl::synchronization absl::time
    GTest::gmock GTest::gtest_main)
gtest_discover_tests(gateway_test TEST_PREFIX "gateway." DISCOVERY_TIMEOUT 30)
