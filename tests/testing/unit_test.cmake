# inspector_unit_test(NAME [SOURCES file...] [LIBS lib...] PREFIX prefix
#                     [NO_PRETTY_VALUES] [UNITY_BATCH n])
# One gtest executable NAME built from SOURCES (default NAME.cc) with the
# project's defaults, linked to LIBS, gmock and gtest_main, whose tests are
# registered in CTest as PREFIX<Suite>.<Test>. UNITY_BATCH compiles it as a
# unity build (inspector_unity_build). Included by the test folders'
# CMakeLists.txt that define plain unit-test executables.
include_guard(GLOBAL)

function(inspector_unit_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_PRETTY_VALUES"
                        "PREFIX;UNITY_BATCH" "SOURCES;LIBS")
  if(NOT arg_SOURCES)
    set(arg_SOURCES ${name}.cc)
  endif()
  add_executable(${name} ${arg_SOURCES})
  inspector_target_defaults(${name})
  if(DEFINED arg_UNITY_BATCH)
    inspector_unity_build(${name} ${arg_UNITY_BATCH})
  endif()
  target_link_libraries(${name} PRIVATE ${arg_LIBS} GTest::gmock
                        GTest::gtest_main)
  set(discover_options "")
  if(arg_NO_PRETTY_VALUES)
    list(APPEND discover_options NO_PRETTY_VALUES)
  endif()
  gtest_discover_tests(${name} TEST_PREFIX "${arg_PREFIX}" ${discover_options})
endfunction()
