# The libFuzzer targets of tests/fuzz/ (built when RELAX_FUZZ is on; see cmake/sanitizers.cmake).
#
# relax_add_fuzz_target(<name> SOURCES <files>... [SEEDS <dir>] [DICT <file>]
#                       [CORPUS <dir>] [BOUNDED_RUNS <n>])
# builds relax_fuzz_<name> (linked with -fsanitize=fuzzer) and registers two CTest tests,
# labelled `fuzz`, both working on a private copy of the inputs in the build tree so that the
# source tree is never written to:
#   fuzz.<name>.corpus   every input of CORPUS (the committed regression inputs) and SEEDS
#                        (the generated seed corpus) once (-runs=0);
#   fuzz.<name>.bounded  a short fuzzing run from those inputs (BOUNDED_RUNS executions,
#                        default 2000, and at most 5 seconds).
# Crash artifacts of either go to <build>/tests/fuzz/artifacts/<name>/.
set(RELAX_FUZZ_RUN_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/fuzz_run.cmake)

function(relax_add_fuzz_target name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SEEDS;DICT;CORPUS;BOUNDED_RUNS" "SOURCES")
  if(NOT arg_BOUNDED_RUNS)
    set(arg_BOUNDED_RUNS 2000)
  endif()
  set(target relax_fuzz_${name})
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE relax::relax)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  relax_target_warnings(${target})

  set(options)
  if(arg_DICT)
    list(APPEND options -dict=${arg_DICT})
  endif()
  string(JOIN ";" inputs ${arg_CORPUS} ${arg_SEEDS})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/work/${name})
  foreach(mode corpus bounded)
    add_test(NAME fuzz.${name}.${mode}
      COMMAND ${CMAKE_COMMAND}
        -DFUZZER=$<TARGET_FILE:${target}>
        "-DINPUTS=${inputs}"
        -DWORK_DIR=${work}/${mode}
        -DMODE=${mode}
        -DRUNS=${arg_BOUNDED_RUNS}
        "-DOPTIONS=${options}"
        -P ${RELAX_FUZZ_RUN_SCRIPT})
    set_tests_properties(fuzz.${name}.${mode} PROPERTIES LABELS fuzz TIMEOUT 300)
  endforeach()
endfunction()
