# Fuzz targets of the REST gateway's core: the path template parser and
# matcher, and request binding over the real route table. With any compiler
# they replay their seed corpora as tests; with clang they are also built as
# libFuzzer binaries (path_template_fuzzer, request_binder_fuzzer: run them
# with -max_total_time=60 and a corpus directory). The libFuzzer binaries
# compile the gateway sources themselves so that libFuzzer sees coverage of
# the code under test, not only of the harness.
set(GATEWAY_DIR ${PROJECT_SOURCE_DIR}/clients/web-gateway)

add_executable(path_template_fuzz_replay
    path_template_fuzzer.cc fuzz_replay_main.cc)
inspector_target_defaults(path_template_fuzz_replay)
target_link_libraries(path_template_fuzz_replay PRIVATE inspector_gateway_core)
add_test(NAME fuzz.path_template_corpus
         COMMAND path_template_fuzz_replay
                 ${CMAKE_CURRENT_SOURCE_DIR}/corpus/path_template)

add_executable(request_binder_fuzz_replay
    request_binder_fuzzer.cc fuzz_replay_main.cc)
inspector_target_defaults(request_binder_fuzz_replay)
target_compile_definitions(request_binder_fuzz_replay PRIVATE
    INSPECTOR_DESCRIPTOR_SET="${INSPECTOR_DESCRIPTOR_SET}")
target_link_libraries(request_binder_fuzz_replay PRIVATE inspector_gateway_core)
add_dependencies(request_binder_fuzz_replay inspector_descriptor_set)
add_test(NAME fuzz.request_binder_corpus
         COMMAND request_binder_fuzz_replay
                 ${CMAKE_CURRENT_SOURCE_DIR}/corpus/request_binder)

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  add_executable(path_template_fuzzer
      path_template_fuzzer.cc ${GATEWAY_DIR}/path_template.cc)
  inspector_target_defaults(path_template_fuzzer)
  target_compile_options(path_template_fuzzer PRIVATE -fsanitize=fuzzer,address)
  target_link_options(path_template_fuzzer PRIVATE -fsanitize=fuzzer,address)
  target_link_libraries(path_template_fuzzer PRIVATE absl::status
      absl::statusor absl::strings)

  add_executable(request_binder_fuzzer
      request_binder_fuzzer.cc
      ${GATEWAY_DIR}/path_template.cc
      ${GATEWAY_DIR}/route_table.cc
      ${GATEWAY_DIR}/transcoder.cc
      ${GATEWAY_DIR}/request_binding.cc
      ${GATEWAY_DIR}/json_reader.cc
      ${GATEWAY_DIR}/json_writer.cc
      ${GATEWAY_DIR}/value_forms.cc
      ${GATEWAY_DIR}/http_errors.cc)
  inspector_target_defaults(request_binder_fuzzer)
  target_compile_definitions(request_binder_fuzzer PRIVATE
      INSPECTOR_DESCRIPTOR_SET="${INSPECTOR_DESCRIPTOR_SET}")
  target_compile_options(request_binder_fuzzer PRIVATE -fsanitize=fuzzer,address)
  target_link_options(request_binder_fuzzer PRIVATE -fsanitize=fuzzer,address)
  target_link_libraries(request_binder_fuzzer PRIVATE inspector_common
      inspector_proto nlohmann_json::nlohmann_json)
  add_dependencies(request_binder_fuzzer inspector_descriptor_set)
endif()
