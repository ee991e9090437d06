# cmake -P script behind the CTest test relax.install_consumer (see tests/CMakeLists.txt):
# install the build at RELAX_BUILD_DIR into WORK_DIR/prefix, then configure, build and run
# the project at CONSUMER_SOURCE_DIR against that prefix. Any failing step fails the test.
foreach(var RELAX_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT ${var})
    message(FATAL_ERROR "install_consumer.cmake: ${var} is not set")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${prefix}")

function(run_step what)
  message(STATUS "install_consumer: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${result})")
  endif()
endfunction()

set(config_args)
if(RELAX_CONFIG)
  list(APPEND config_args --config "${RELAX_CONFIG}")
endif()
run_step("install" ${CMAKE_COMMAND} --install "${RELAX_BUILD_DIR}" --prefix "${prefix}"
         ${config_args})

run_step("configure" ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
         -G "${GENERATOR}"
         "-DCMAKE_BUILD_TYPE=${RELAX_CONFIG}"
         "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
         "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}"
         "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
         "-DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS}"
         "-DCMAKE_PREFIX_PATH=${prefix}"
         "-DEXPECTED_RELAX_DIR=${prefix}")
run_step("build" ${CMAKE_COMMAND} --build "${consumer_build}" ${config_args})
run_step("run" "${consumer_build}/relax_install_consumer" WORKING_DIRECTORY "${consumer_build}")
