# Helpers shared by every CMakeLists.txt of the project.

# paceline_test(NAME SOURCES a_test.cc ... LIBS lib ... [LABEL unit|e2e])
# One gtest binary; each TEST becomes a ctest entry (discovered when ctest runs).
function(paceline_test name)
  cmake_parse_arguments(ARG "" "LABEL" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${ARG_LABEL} TIMEOUT 600)
endfunction()

# paceline_benchmark(NAME SOURCES a_bench.cc ... LIBS lib ...)
# A Google Benchmark binary; `make bench` runs every target registered here.
function(paceline_benchmark name)
  if(NOT PACELINE_BENCHMARKS OR PACELINE_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark benchmark::benchmark_main)
  set_property(GLOBAL APPEND PROPERTY PACELINE_BENCHMARK_TARGETS ${name})
endfunction()

# paceline_fuzzer(NAME SOURCES a_fuzz.cc ... LIBS lib ...)
# A libFuzzer target, only in the clang fuzz build (PACELINE_FUZZ=ON).
function(paceline_fuzzer name)
  if(NOT PACELINE_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
endfunction()
