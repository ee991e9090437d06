# ONNX: the model importer (src/frontend/onnx/) reads ModelProto with the ONNX project's
# protobuf classes and runs its checker. RELAX_WITH_ONNX defaults to ON when the ONNX CMake
# package and protobuf are found; ON without them is an error. Provides the imported targets
# onnx and onnx_proto (ONNX_ML=1, namespace onnx). (Debian: libonnx-dev, libprotobuf-dev.)
if(NOT DEFINED RELAX_WITH_ONNX OR RELAX_WITH_ONNX)
  find_package(Protobuf QUIET)
  if(Protobuf_FOUND)
    find_package(ONNX CONFIG QUIET)
  endif()
endif()
set(relax_onnx_found OFF)
if(Protobuf_FOUND AND ONNX_FOUND)
  set(relax_onnx_found ON)
endif()
option(RELAX_WITH_ONNX "Build the ONNX importer (relax/frontend/onnx.h)" ${relax_onnx_found})

if(RELAX_WITH_ONNX)
  if(NOT relax_onnx_found)
    message(FATAL_ERROR "RELAX_WITH_ONNX is ON but ONNX or protobuf was not found "
                        "(Debian: apt-get install libonnx-dev libprotobuf-dev)")
  endif()
  message(STATUS "relax: ONNX ${ONNX_VERSION} (${ONNX_DIR}), protobuf ${Protobuf_VERSION}")
endif()
