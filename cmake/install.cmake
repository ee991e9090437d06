# Installs the public headers and the CMake package `relax`, so that a user's
#   find_package(relax CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE relax::relax)
# works. The libraries themselves join the export set relaxTargets in src/CMakeLists.txt
# (relax_add_library). tests/install_consumer checks all of this.
include(CMakePackageConfigHelpers)

set(RELAX_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/relax"
    CACHE STRING "Where the relax CMake package is installed, relative to the prefix")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/relax"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT relaxTargets
  NAMESPACE relax::
  DESTINATION ${RELAX_INSTALL_CMAKEDIR})

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/relaxConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/relaxConfig.cmake"
  INSTALL_DESTINATION ${RELAX_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/relaxConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/relaxConfig.cmake"
  "${PROJECT_BINARY_DIR}/relaxConfigVersion.cmake"
  DESTINATION ${RELAX_INSTALL_CMAKEDIR})

# The command-line tools (tools/): relax-opt, relax-run, relax-llama.
install(TARGETS relax_opt relax_run relax_llama RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
