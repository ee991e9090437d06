# Compiles through ccache when it is installed, unless the user chose a launcher already.
option(RELAX_USE_CCACHE "Use ccache as the compiler launcher when it is found" ON)

if(RELAX_USE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(RELAX_CCACHE_PROGRAM ccache)
  if(RELAX_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${RELAX_CCACHE_PROGRAM}")
  endif()
endif()
