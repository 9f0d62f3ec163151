# ctest -R avx512_symbols: the object compiled with -mavx512f (core/kernels/avx512.cpp) may
# define no external symbol but its own entry points in attn::detail::avx512. Anything else (an
# Eigen or standard-library inline function, a template instantiation) would be one symbol to
# the linker with the portable copies, which could then run AVX-512 code on a CPU without it.
# ctest -R training_avx2_symbols checks core/training/avx2.cpp (-mavx2 -mfma) the same way, with
# NAMESPACE=attn::training::detail::avx2.
# Usage: cmake -DNM=<nm> -DOBJECTS=<objects;...> [-DNAMESPACE=<ns>] -P check_avx512_symbols.cmake
if(NOT NM OR NOT OBJECTS)
    message(FATAL_ERROR "usage: cmake -DNM=<nm> -DOBJECTS=<objects> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
if(NOT NAMESPACE)
    set(NAMESPACE "attn::detail::avx512")
endif()
set(count 0)
foreach(object IN LISTS OBJECTS)
    execute_process(COMMAND ${NM} -C --defined-only --extern-only ${object}
                    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${NM} failed on ${object}: ${err}")
    endif()
    string(REPLACE "\n" ";" lines "${out}")
    foreach(line IN LISTS lines)
        if(line STREQUAL "")
            continue()
        endif()
        # UBSan's function check (clang, -fsanitize=undefined) emits weak type descriptors of
        # the entry points' function types: data, no code, so nothing AVX-512 can run from them.
        if(line MATCHES "^[0-9a-fA-F]+ [VR] typeinfo (name )?for [^:]*\\(.*\\)$")
            continue()
        endif()
        if(NOT line MATCHES "^[0-9a-fA-F]+ T ${NAMESPACE}::[A-Za-z]+\\(")
            message(FATAL_ERROR "unexpected external symbol in ${object}:\n  ${line}\n"
                                "Give helpers internal linkage (anonymous namespace) and use no "
                                "Eigen or standard-library templates in that file.")
        endif()
        math(EXPR count "${count} + 1")
    endforeach()
endforeach()
if(count EQUAL 0)
    message(FATAL_ERROR "no ${NAMESPACE} entry points found in ${OBJECTS}")
endif()
message(STATUS "${count} entry points, nothing else external")
