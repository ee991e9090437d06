# cmake -P script behind the fuzz.<target>.{corpus,bounded} CTest tests (see cmake/fuzz.cmake):
# copies the input directories INPUTS (;-separated, missing ones skipped) into WORK_DIR/corpus,
# then runs FUZZER over that copy: MODE `corpus` executes every input once, MODE `bounded`
# fuzzes for RUNS executions (at most 5 seconds). OPTIONS are extra libFuzzer flags (a -dict=).
# Any crash, sanitizer report or oracle failure fails the test; the input that caused it is
# written under WORK_DIR/artifacts/.
foreach(var FUZZER WORK_DIR MODE)
  if(NOT ${var})
    message(FATAL_ERROR "fuzz_run.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/corpus" "${WORK_DIR}/artifacts")
foreach(dir IN LISTS INPUTS)
  if(IS_DIRECTORY "${dir}")
    file(GLOB files LIST_DIRECTORIES false "${dir}/*")
    if(files)
      file(COPY ${files} DESTINATION "${WORK_DIR}/corpus")
    endif()
  endif()
endforeach()
file(GLOB copied "${WORK_DIR}/corpus/*")
list(LENGTH copied count)
if(count EQUAL 0)
  message(FATAL_ERROR "fuzz_run.cmake: no inputs in ${INPUTS}")
endif()

set(args -artifact_prefix=${WORK_DIR}/artifacts/ -timeout=60 -rss_limit_mb=4096 -print_final_stats=1)
if(MODE STREQUAL "corpus")
  list(APPEND args -runs=0)
elseif(MODE STREQUAL "bounded")
  list(APPEND args -runs=${RUNS} -max_total_time=5 -seed=1)
else()
  message(FATAL_ERROR "fuzz_run.cmake: unknown MODE ${MODE}")
endif()
message(STATUS "${FUZZER}: ${count} inputs, ${MODE}")
execute_process(COMMAND "${FUZZER}" ${args} ${OPTIONS} "${WORK_DIR}/corpus"
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${result}); the failing input is under ${WORK_DIR}/artifacts/")
endif()
