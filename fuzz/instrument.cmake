# Included by the top-level CMakeLists.txt before any target when OPENDML_FUZZ is ON: every target
# of the build (the library, the tool, the tests' support code) is compiled with the sanitizers and
# libFuzzer's coverage instrumentation, so that the fuzzers (fuzz/CMakeLists.txt) are guided by,
# and check, the code they reach.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "OPENDML_FUZZ needs clang for libFuzzer, but the compilers are ${CMAKE_C_COMPILER_ID} and "
                      "${CMAKE_CXX_COMPILER_ID}: use the fuzz preset (cmake --preset fuzz) or configure with "
                      "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
endif()
if(OPENDML_WITH_CUDA)
  message(FATAL_ERROR "OPENDML_FUZZ builds the CPU backend only: configure with -DOPENDML_WITH_CUDA=OFF")
endif()
if(OPENDML_SANITIZE)
  message(FATAL_ERROR "OPENDML_FUZZ brings its own sanitizers: configure with -DOPENDML_SANITIZE=OFF")
endif()
if(NOT OPENDML_BUILD_TESTS)
  message(FATAL_ERROR "OPENDML_FUZZ needs -DOPENDML_BUILD_TESTS=ON: the C ABI fuzzer checks results with the tests' "
                      "oracle (tests/support) and the replay tests run under ctest")
endif()

add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)
