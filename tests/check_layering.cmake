# The include half of the layering check (the link half: each layer's test binary links its own
# layer library whole, see tests/CMakeLists.txt). A header-only use of a higher layer leaves no
# undefined symbol, so this script reads the #include "relax/<layer>/..." lines of every source,
# header and test of each layer and fails on any that names a layer it may not use
# (docs/architecture.md: runtime <- shape <- ir <- transform <- codegen <- models, support below all of them;
# frontend on ir).
#
#   cmake -DSOURCE_DIR=<relax checkout> -P tests/check_layering.cmake
cmake_minimum_required(VERSION 3.25)

# The layers each layer may include, itself included. relax/relax.h is the whole surface.
set(allowed_support support)
set(allowed_runtime support runtime)
set(allowed_shape support shape)
set(allowed_ir support runtime shape ir)
set(allowed_transform support runtime shape ir transform)
set(allowed_codegen support runtime shape ir transform codegen relax.h)
set(allowed_models support runtime shape ir transform codegen models relax.h)
# Importers build modules with the public builder; their tests compile and run what they import.
set(allowed_frontend support runtime shape ir frontend)
set(allowed_frontend_tests support runtime shape ir transform codegen frontend relax.h)

set(violations)
foreach(layer support runtime shape ir transform codegen models frontend frontend_tests)
  if(layer STREQUAL "frontend_tests")
    file(GLOB_RECURSE files "${SOURCE_DIR}/tests/frontend/*.cc" "${SOURCE_DIR}/tests/frontend/*.h")
  elseif(layer STREQUAL "frontend")
    file(GLOB_RECURSE files
      "${SOURCE_DIR}/src/${layer}/*.cc" "${SOURCE_DIR}/src/${layer}/*.h"
      "${SOURCE_DIR}/include/relax/${layer}/*.h")
  else()
    file(GLOB_RECURSE files
      "${SOURCE_DIR}/src/${layer}/*.cc" "${SOURCE_DIR}/src/${layer}/*.h"
      "${SOURCE_DIR}/include/relax/${layer}/*.h"
      "${SOURCE_DIR}/tests/${layer}/*.cc" "${SOURCE_DIR}/tests/${layer}/*.h")
  endif()
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+[<\"]relax/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[^<\"]*[<\"]relax/([A-Za-z0-9_.]+).*$" "\\1" used "${line}")
      if(NOT used IN_LIST allowed_${layer})
        file(RELATIVE_PATH where "${SOURCE_DIR}" "${file}")
        list(APPEND violations "${where}: the ${layer} layer includes relax/${used}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering violations:\n  ${text}")
endif()
message(STATUS "layering: every include follows the layers")
