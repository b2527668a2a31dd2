# LUMOS_SANITIZE=ON builds everything (library, lumos command, tests) with AddressSanitizer and
# UndefinedBehaviorSanitizer; any report aborts (-fno-sanitize-recover=all). nvcc does not mix
# with ASan, so such a build has no CUDA backend. scripts/test.sh --sanitize drives it.
option(LUMOS_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer (host only)" OFF)
if(LUMOS_SANITIZE)
  if(LUMOS_ENABLE_CUDA)
    message(STATUS "lumos: LUMOS_SANITIZE builds without the CUDA backend")
    set(LUMOS_ENABLE_CUDA OFF)
  endif()
  # GCC's -fsanitize=undefined leaves out float-cast-overflow (a double too large for the integer
  # it is converted to), which times and sizes here go through; _GLIBCXX_ASSERTIONS checks
  # container indexing, front()/back() on empty containers and the like.
  set(LUMOS_SANITIZE_FLAGS -fsanitize=address,undefined,float-cast-overflow
      -fno-sanitize-recover=all -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${LUMOS_SANITIZE_FLAGS}>")
  add_link_options(-fsanitize=address,undefined,float-cast-overflow)
endif()
