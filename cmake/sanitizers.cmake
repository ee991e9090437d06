# Sanitizer builds. Each option instruments everything this project compiles and links
# (the libraries, tests, examples, benchmarks and the test kernel libraries alike).
#
#   RELAX_SANITIZE  AddressSanitizer + UndefinedBehaviorSanitizer. Undefined behaviour aborts
#                   the test instead of printing and going on.
#   RELAX_FUZZ      also adds libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link,
#                   clang only) and builds the fuzz targets of tests/fuzz/ (see cmake/fuzz.cmake);
#                   requires RELAX_SANITIZE. The unit tests of such a tree run as usual: the
#                   sanitizer runtime provides the coverage callbacks they do not use.
#   RELAX_TSAN      ThreadSanitizer (exclusive with the two above).
#
# RELAX_SANITIZER_FLAGS holds the compile-and-link flags, for the install check's consumer.
option(RELAX_FUZZ "Build the libFuzzer targets (clang, with RELAX_SANITIZE)" OFF)
option(RELAX_TSAN "Build with ThreadSanitizer" OFF)

set(RELAX_SANITIZER_FLAGS)
if(RELAX_SANITIZE)
  list(APPEND RELAX_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                                    -fno-omit-frame-pointer)
endif()
if(RELAX_FUZZ)
  if(NOT RELAX_SANITIZE)
    message(FATAL_ERROR "RELAX_FUZZ needs RELAX_SANITIZE (the fuzz targets run under ASan+UBSan)")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RELAX_FUZZ needs clang (libFuzzer); this build uses ${CMAKE_CXX_COMPILER_ID}")
  endif()
  list(APPEND RELAX_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
endif()
if(RELAX_TSAN)
  if(RELAX_SANITIZE)
    message(FATAL_ERROR "RELAX_TSAN cannot be combined with RELAX_SANITIZE")
  endif()
  list(APPEND RELAX_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
endif()
if(RELAX_SANITIZER_FLAGS)
  add_compile_options(${RELAX_SANITIZER_FLAGS})
  add_link_options(${RELAX_SANITIZER_FLAGS})
endif()
