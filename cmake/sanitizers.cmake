# RELAX_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer for everything this project
# compiles and links. Undefined behaviour aborts the test instead of printing and going on.
if(RELAX_SANITIZE)
  set(RELAX_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                            -fno-omit-frame-pointer)
  add_compile_options(${RELAX_SANITIZER_FLAGS})
  add_link_options(${RELAX_SANITIZER_FLAGS})
endif()
