# CUDA: the toolkit's libraries (runtime, NVRTC, cuBLAS) for the CUDA target. Kernels are
# compiled at run time through NVRTC, so the project does not enable the CUDA language.
# RELAX_WITH_CUDA defaults to ON when the toolkit is found; ON without it is an error.
# Provides the imported targets CUDA::cudart, CUDA::nvrtc, CUDA::cublas, ...
if(NOT DEFINED RELAX_WITH_CUDA OR RELAX_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
endif()
option(RELAX_WITH_CUDA "Build the CUDA target" ${CUDAToolkit_FOUND})

if(RELAX_WITH_CUDA)
  if(NOT CUDAToolkit_FOUND)
    message(FATAL_ERROR "RELAX_WITH_CUDA is ON but the CUDA toolkit was not found")
  endif()
  message(STATUS "relax: CUDA toolkit ${CUDAToolkit_VERSION} (${CUDAToolkit_BIN_DIR})")
endif()
