# attn_setup_target(target): the project's warning, optimisation and sanitizer flags for one
# target. Used instead of editing CMAKE_CXX_FLAGS globally.
function(attn_setup_target target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(ATTN_NATIVE)
        target_compile_options(${target} PRIVATE -march=native)
    endif()
    if(ATTN_SANITIZE)
        target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=undefined)
        target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
endfunction()
