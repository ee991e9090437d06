# oneDNN: CPU library kernels (matmul, convolution) the runtime may dispatch to.
# RELAX_WITH_ONEDNN defaults to ON when oneDNN is found; ON without oneDNN is an error.
# Provides the imported target DNNL::dnnl. (Debian: libdnnl-dev; its CMake package also
# needs OpenCL: ocl-icd-opencl-dev.)
if(NOT DEFINED RELAX_WITH_ONEDNN OR RELAX_WITH_ONEDNN)
  find_package(dnnl CONFIG QUIET)
endif()
option(RELAX_WITH_ONEDNN "Dispatch to oneDNN kernels" ${dnnl_FOUND})

if(RELAX_WITH_ONEDNN)
  if(NOT dnnl_FOUND)
    message(FATAL_ERROR "RELAX_WITH_ONEDNN is ON but oneDNN was not found "
                        "(Debian: apt-get install libdnnl-dev ocl-icd-opencl-dev)")
  endif()
  message(STATUS "relax: oneDNN ${dnnl_VERSION} (${dnnl_DIR})")
endif()
