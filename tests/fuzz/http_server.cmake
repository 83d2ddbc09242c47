# Fuzz target of the HTTP/1.1 request parser (common/http/). With any
# compiler its seed corpus runs as a test; with clang it is also built as a
# libFuzzer binary: build-dir/tests/fuzz/http1_parser_fuzzer
# -max_total_time=60 CORPUS_DIR.
add_executable(http1_parser_fuzz_replay http1_parser_fuzzer.cc
    fuzz_replay_main.cc)
inspector_target_defaults(http1_parser_fuzz_replay)
target_link_libraries(http1_parser_fuzz_replay PRIVATE inspector_http1)
add_test(NAME fuzz.http1_parser_corpus
         COMMAND http1_parser_fuzz_replay
                 ${CMAKE_CURRENT_SOURCE_DIR}/corpus/http1_parser)

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # The parser's source is compiled into the target so that libFuzzer's
  # coverage instrumentation reaches it.
  add_executable(http1_parser_fuzzer http1_parser_fuzzer.cc
      ${PROJECT_SOURCE_DIR}/common/http/http1.cc
      ${PROJECT_SOURCE_DIR}/common/http/http1_response.cc)
  inspector_target_defaults(http1_parser_fuzzer)
  target_compile_options(http1_parser_fuzzer PRIVATE
      -fsanitize=fuzzer,address,undefined)
  target_link_options(http1_parser_fuzzer PRIVATE
      -fsanitize=fuzzer,address,undefined)
  target_link_libraries(http1_parser_fuzzer PRIVATE absl::strings)
endif()
