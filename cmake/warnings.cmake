# relax_target_warnings(<target>): the project's warning set, for relax's own targets only
# (the library, tests, benchmarks, examples). Every flag is accepted by g++ 12 and clang 14.
# RELAX_WERROR turns warnings into errors; dev.sh and CMakePresets.json turn it on.
set(RELAX_WARNING_FLAGS
  -Wall
  -Wextra
  -Wpedantic
  # g++'s plain -Wshadow also flags constructor parameters named like the members they
  # initialise, the idiom of the IR node classes; =local keeps the useful part.
  $<IF:$<CXX_COMPILER_ID:GNU>,-Wshadow=local,-Wshadow>
  -Wnon-virtual-dtor
  -Woverloaded-virtual
  -Wcast-align
  -Wformat=2
  -Wimplicit-fallthrough
  -Wmissing-declarations)

function(relax_target_warnings target)
  target_compile_options(${target} PRIVATE ${RELAX_WARNING_FLAGS})
  if(RELAX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Debug information. The presets build the library at -O2 -g1 (line tables: backtraces,
# profiles and sanitizer reports keep file and line). Full -g made the static libraries about
# 25 times their code (librelax_ir.a: 200 MB, of which 9 MB code) and every link of a test or tool
# binary 5 times slower (relax_transform_tests: 12.5 s against 2.3 s), which CI pays about 40
# times per clean build. For variables in a debugger, configure with CMAKE_BUILD_TYPE=Debug.
#
# relax_quick_compile(<target>): test and example code compiles at RELAX_TEST_OPTIMIZATION
# (-O1) with line tables only (-g1) in RelWithDebInfo builds. Their speed does not matter (the
# kernels they run are compiled by the JIT, the library at the build's own level), and full
# -O2 -g on large test files costs about twice the time: this keeps a clean CI build inside its
# budget. The asan preset sets -O0: clang with the sanitizers compiles a test file in half the
# time at -O0 (vm_test.cc: 9.5 s against 19 s) and the tests' time is spent in the library.
set(RELAX_TEST_OPTIMIZATION "-O1" CACHE STRING
    "Optimisation level of test and example code in RelWithDebInfo builds")
function(relax_quick_compile target)
  target_compile_options(${target} PRIVATE "$<$<CONFIG:RelWithDebInfo>:${RELAX_TEST_OPTIMIZATION};-g1>")
endfunction()
