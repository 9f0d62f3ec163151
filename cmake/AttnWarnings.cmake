# The targets that the fuzz targets' coverage instruments (see ATTN_FUZZ below).
set(ATTN_FUZZ_COVERED "^(attncore|attn_avx512|attnsession|attndocument|attncli|fuzz_.*)$")

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
    if(ATTN_TSAN)
        target_compile_options(${target} PRIVATE -fsanitize=thread)
        target_link_options(${target} PRIVATE -fsanitize=thread)
    endif()
    if(ATTN_FUZZ)
        # libFuzzer's coverage only where the fuzz targets (fuzz/) run code: attncore, the
        # session and document tiers, the commands (attncli) and the targets themselves (fuzz/ adds libFuzzer's main).
        # The tests, the other ui/ tiers and the app are built without it: it would only make
        # them slower to build and to run under the sanitizers. Every target links with the flag,
        # so a test linking a covered library finds the coverage callbacks.
        if(target MATCHES "${ATTN_FUZZ_COVERED}")
            target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
        endif()
        target_link_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
endfunction()
