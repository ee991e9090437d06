# Runs TOOL with ARGS (a ;-list) and passes when it exits with status 1 and its
# output matches the regular expression EXPECT: for tests of a tool's errors
# (CTest's WILL_FAIL cannot check the message and the status together).
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 1)
  message(FATAL_ERROR "expected exit status 1, got ${status}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "expected output matching `${EXPECT}`\nstdout: ${out}\nstderr: ${err}")
endif()
