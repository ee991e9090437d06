# DLPack: the tensor exchange header the runtime's Tensor is compatible with. Provides the
# target dlpack::dlpack, from dlpack's CMake package when installed (Debian's libdlpack-dev
# ships one) or else from the bare header dlpack/dlpack.h.
find_package(dlpack CONFIG QUIET)
if(NOT TARGET dlpack::dlpack)
  find_path(RELAX_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
  if(NOT RELAX_DLPACK_INCLUDE_DIR)
    message(FATAL_ERROR "dlpack/dlpack.h not found (Debian: apt-get install libdlpack-dev)")
  endif()
  add_library(dlpack::dlpack INTERFACE IMPORTED)
  target_include_directories(dlpack::dlpack INTERFACE "${RELAX_DLPACK_INCLUDE_DIR}")
endif()
