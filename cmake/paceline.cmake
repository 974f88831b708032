# Helpers shared by every CMakeLists.txt of the project.

# paceline_test(NAME SOURCES a_test.cc ... LIBS lib ... [LABEL unit|e2e] [SERIAL])
# One gtest binary; each TEST becomes a ctest entry (discovered when ctest runs). SERIAL: its
# tests run alone (they measure latency, which other tests on the same cores would skew).
# Unit tests also join the `unit-tests` target, which builds them and nothing else.
function(paceline_test name)
  cmake_parse_arguments(ARG "SERIAL" "LABEL" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${ARG_LABEL} TIMEOUT 600 RUN_SERIAL ${serial})
  if(ARG_LABEL STREQUAL "unit")
    set_property(GLOBAL APPEND PROPERTY PACELINE_UNIT_TEST_TARGETS ${name})
  endif()
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

# _paceline_targets(DIR OUT): every static library and executable defined under DIR.
function(_paceline_targets dir out)
  set(acc "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "EXECUTABLE")
      list(APPEND acc ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _paceline_targets(${sub} below)
    list(APPEND acc ${below})
  endforeach()
  set(${out} "${acc}" PARENT_SCOPE)
endfunction()

# paceline_precompile_headers(DIR)
# Precompiles the heavy headers that nearly every file includes (the standard library, Abseil;
# GoogleTest for tests) once for the libraries and once for the tests, and has every library
# and executable under DIR reuse one of the two. A header precompiled per target took about a
# third of a full build on a 2-core machine. Tiny or special targets are skipped.
function(paceline_precompile_headers dir)
  set(common <algorithm> <map> <memory> <optional> <string> <vector>
      "$<$<COMPILE_LANGUAGE:CXX>:absl/status/statusor.h>"
      "$<$<COMPILE_LANGUAGE:CXX>:absl/strings/str_cat.h>"
      "$<$<COMPILE_LANGUAGE:CXX>:absl/time/time.h>")
  _paceline_targets(${dir} targets)
  add_library(paceline_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch.cc)
  target_link_libraries(paceline_pch PRIVATE absl::status absl::statusor absl::strings absl::time)
  target_precompile_headers(paceline_pch PRIVATE ${common})
  add_library(paceline_test_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch.cc)
  target_link_libraries(paceline_test_pch PRIVATE absl::status absl::statusor absl::strings
                        absl::time GTest::gmock GTest::gtest)
  target_precompile_headers(paceline_test_pch PRIVATE ${common} <gtest/gtest.h> <gmock/gmock.h>)
  foreach(t ${targets})
    # The task wrapper is C-like and tiny; the proto library is built without warnings; the
    # agent's test helper is built without sanitizers, so the shared headers do not fit it.
    if(t STREQUAL "paceline-task-wrapper" OR t STREQUAL "paceline_proto"
       OR t STREQUAL "paceline_version" OR t STREQUAL "agent_test_helper" OR t MATCHES "_fuzz$"
       OR t MATCHES "^paceline(_test)?_pch$")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(libs MATCHES "GTest::")
      target_precompile_headers(${t} REUSE_FROM paceline_test_pch)
    else()
      target_precompile_headers(${t} REUSE_FROM paceline_pch)
    endif()
  endforeach()
endfunction()

# paceline_unity_build(DIR BATCH)
# Compiles the sources of every static library under DIR in batches of BATCH files (CMake's unity
# build): the headers that the precompiled one leaves out (gRPC, protobuf, nlohmann/json, CLI11,
# Boost) are parsed once per batch instead of once per file. Test binaries and the generated
# protobuf code keep one file per object (a test's helpers clash with another's).
function(paceline_unity_build dir batch)
  _paceline_targets(${dir} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(NOT type STREQUAL "STATIC_LIBRARY" OR libs MATCHES "GTest::"
       OR t MATCHES "^paceline(_test)?_pch$")
      continue()
    endif()
    set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
    # A class of a .cc file with a member of a type from that file's anonymous namespace is
    # fine; in a batch the .cc is an included file, and GCC would warn as if it were a header.
    target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endforeach()
endfunction()

# paceline_links_target(TARGET WANTED OUT): OUT is TRUE when TARGET links WANTED, directly or
# through the targets it links.
function(paceline_links_target target wanted out)
  set(seen "")
  set(todo ${target})
  set(found FALSE)
  while(todo AND NOT found)
    list(POP_FRONT todo t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    if(t STREQUAL wanted)
      set(found TRUE)
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(libs)
      list(APPEND todo ${libs})
    endif()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# paceline_write_link_graph(DIR OUT)
# Writes OUT with one line per library and executable under DIR: "target: dep dep ..." (its
# direct link dependencies as written in target_link_libraries). scripts/check-layers.py reads
# it to check the link edges against docs/layers.ini.
function(paceline_write_link_graph dir out)
  _paceline_targets(${dir} targets)
  set(lines "")
  foreach(t ${targets})
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(NOT libs)
      set(libs "")
    endif()
    string(REPLACE ";" " " libs "${libs}")
    string(APPEND lines "${t}: ${libs}\n")
  endforeach()
  file(WRITE ${out} "${lines}")
endfunction()
