# Runs make_goldens.mjs in the fixture's folder (DEST) and compares what it writes with the
# committed goldens (SOURCE/goldens): they are stale when the corpus, the script or a reference
# package changed without `node make_goldens.mjs` being run again.
#   cmake -DNODE=node -DSOURCE=<this folder> -DDEST=<build>/tokenizer-refs -P check_goldens.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${NODE}" "${DEST}/make_goldens.mjs" "${DEST}/goldens" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "make_goldens.mjs failed (${rc})")
endif()
foreach(name gpt2 llama3 qwen3)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${DEST}/goldens/${name}.json"
                            "${SOURCE}/goldens/${name}.json" RESULT_VARIABLE differ)
    if(NOT differ EQUAL 0)
        message(FATAL_ERROR "goldens/${name}.json is stale: cd tests/reference/tokenizers && "
                            "npm ci && node make_goldens.mjs")
    endif()
endforeach()
