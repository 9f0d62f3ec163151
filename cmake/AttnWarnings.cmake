# attn_setup_target(target): the project's warning, optimisation and sanitizer flags for one
# target. Used instead of editing CMAKE_CXX_FLAGS globally.
function(attn_setup_target target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(ATTN_NATIVE)
        # GCC 12 reports -Wmaybe-uninitialized inside Eigen's AVX-512 packet code (Eigen 3.4's
        # GEMM micro-kernels) once -march=native enables it: false positives in a header we do
        # not own. Only for native builds; the portable default keeps the full warning set.
        target_compile_options(${target} PRIVATE -march=native)
        if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
            target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
        endif()
    endif()
    if(ATTN_SANITIZE)
        target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=undefined)
        target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
    if(ATTN_FUZZ)
        # Coverage for libFuzzer in every target; fuzz/ adds libFuzzer's main to its own.
        target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
        target_link_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
endfunction()
