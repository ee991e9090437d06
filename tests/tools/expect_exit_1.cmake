# Runs a command-line tool that must fail cleanly: exit status 1 (not a crash, not 0) and a
# message on stderr matching EXPECT. Used by the relax_run.error.* tests (tools/CMakeLists.txt).
#   cmake -DTOOL=<binary> -DARGS=<;-list> -DEXPECT=<regex> -P expect_exit_1.cmake
execute_process(COMMAND ${TOOL} ${ARGS}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT status STREQUAL "1")
  message(FATAL_ERROR "expected exit status 1, got '${status}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}':\n${err}")
endif()
