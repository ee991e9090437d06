# DLPack: the tensor exchange header the runtime's Tensor is compatible with (relax::runtime
# links it publicly: relax/runtime/tensor.h includes dlpack/dlpack.h). Provides the target
# dlpack::dlpack, from dlpack's CMake package when installed (Debian's libdlpack-dev ships
# one) or else from the bare header dlpack/dlpack.h. cmake/relaxConfig.cmake.in repeats this
# search for installed consumers, using dlpack_DIR / RELAX_DLPACK_INCLUDE_DIR as hints.
# DLPack 0.5 or newer is needed (DLDevice); src/runtime/tensor.cc checks the version.
find_package(dlpack CONFIG QUIET)
if(NOT TARGET dlpack::dlpack)
  find_path(RELAX_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
  if(NOT RELAX_DLPACK_INCLUDE_DIR)
    message(FATAL_ERROR "dlpack/dlpack.h not found (Debian: apt-get install libdlpack-dev)")
  endif()
  add_library(dlpack::dlpack INTERFACE IMPORTED)
  target_include_directories(dlpack::dlpack INTERFACE "${RELAX_DLPACK_INCLUDE_DIR}")
endif()
