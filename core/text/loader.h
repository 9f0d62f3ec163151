#pragma once
// Builds a Tokenizer from a model folder's files.
//
//   tokenizer.json            Hugging Face tokenizers' serialization (tokenizers/src/
//                             tokenizer/serialization.rs): BPE models as Llama 3, Qwen 2/3 and
//                             GPT-2 ship them.
//   vocab.json + merges.txt   GPT-2 as Hugging Face's GPT2Tokenizer reads it (merges.txt may
//                             start with a "#version" line).
//   encoder.json + vocab.bpe  GPT-2 as OpenAI publishes it (gpt-2 src/encoder.py).
//   tokenizer.model           a SentencePiece model (sentencepiece.h), when no tokenizer.json.
//   vocab.txt                 BERT's WordPiece vocabulary, one token per line (id = line
//                             number from 0), lower-cased unless tokenizer_config.json says
//                             "do_lower_case": false.
//
// Supported in tokenizer.json: normalizer null | NFC | BertNormalizer | Prepend | Replace
// (String pattern) | Sequence; pre_tokenizer null | BertPreTokenizer | Metaspace (replacement,
// prepend_scheme or add_prefix_space, split) | Split
// (pattern Regex or String; behavior Removed, Isolated, MergedWithPrevious, MergedWithNext,
// Contiguous; invert) | ByteLevel (add_prefix_space, use_regex, default true) | Sequence;
// model WordPiece (vocab, unk_token, continuing_subword_prefix, max_input_chars_per_word) or
// BPE (vocab; merges as "a b" strings or ["a", "b"] pairs; unk_token, fuse_unk,
// byte_fallback, ignore_merges, continuing_subword_prefix, end_of_word_suffix; dropout null or
// 0 only); post_processor null | ByteLevel (trim_offsets) | TemplateProcessing (single) |
// BertProcessing | Sequence; added_tokens (content, id, special, lstrip, rstrip, single_word;
// all matched in the raw text). Of the decoder only WordPiece (prefix, cleanup), Metaspace and
// Llama 2's Sequence (Replace "▁" → " ", Strip) are read; other decoding follows from the
// pre-tokenizer (byte level or not) and byte_fallback. Anything else is refused.

#include "core/text/tokenizer.h"
#include "core/text/tokenizererror.h"

#include <filesystem>
#include <memory>
#include <string_view>

namespace attn::text {

/// The tokenizer of a model folder: tokenizer.json when present, else tokenizer.model, else
/// vocab.json + merges.txt, else encoder.json + vocab.bpe, else vocab.txt. Throws TokenizerError
/// naming the file and field for unreadable, malformed or unsupported files, and naming the folder
/// and the expected files when none is there.
std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path &folder);

/// A tokenizer.json. Throws TokenizerError ("<file>: <field>: <problem>").
std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path &file);
/// The same from the file's bytes; `name` is used in the messages.
std::unique_ptr<Tokenizer> parseTokenizerJson(std::string_view json, std::string_view name);

/// GPT-2 from a vocabulary (token → id JSON object: vocab.json or encoder.json) and its
/// merges (merges.txt or vocab.bpe: one "a b" pair per line, an optional first "#version"
/// line, blank lines ignored). Pre-tokenizer ByteLevel (GPT-2's regex, no prefix space), no
/// normalizer, no post-processor, no added tokens: "<|endoftext|>" in text is plain text, as
/// OpenAI's encoder.py treats it.
std::unique_ptr<Tokenizer> loadGpt2(const std::filesystem::path &vocabFile,
                                    const std::filesystem::path &mergesFile);
/// BERT from vocab.txt's bytes: BertNormalizer (clean text, Chinese characters, and
/// accents stripped and lower-cased when `lowercase`), BertPreTokenizer, WordPiece ("[UNK]",
/// "##", 100 characters), [CLS] $A [SEP], the special tokens [PAD] [UNK] [CLS] [SEP] [MASK]
/// matched in the raw text (as transformers' BertTokenizerFast). Throws TokenizerError when
/// [UNK], [CLS] or [SEP] is missing.
std::unique_ptr<Tokenizer> parseBertVocab(std::string_view vocabTxt, std::string_view name,
                                          bool lowercase);
/// A SentencePiece tokenizer.model: the library's own pipeline, no BOS or EOS added (those
/// come from a tokenizer.json's post-processor). Throws TokenizerError when the library
/// cannot load it.
std::unique_ptr<Tokenizer> loadSentencePiece(const std::filesystem::path &file);
std::unique_ptr<Tokenizer> parseSentencePiece(std::string_view model, std::string_view name);
/// The same from the files' bytes; the names are used in the messages.
std::unique_ptr<Tokenizer> parseGpt2(std::string_view vocabJson, std::string_view vocabName,
                                     std::string_view merges, std::string_view mergesName);

} // namespace attn::text
