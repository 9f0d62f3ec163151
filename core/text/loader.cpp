#include "core/text/loader.h"

#include "core/io/regularfile.h"

#include "core/text/sentencepiece.h"
#include "core/text/wordpiece.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace attn::text {

namespace {

using nlohmann::json;

// Errors name the file and the field: "tokenizer.json: model.merges[3]: ...".
[[noreturn]] void fail(std::string_view file, const std::string &field, const std::string &what)
{
    std::string message(file);
    message += ": ";
    if (!field.empty()) {
        message += field + ": ";
    }
    message += what;
    throw TokenizerError(message);
}

std::string readFile(const std::filesystem::path &path)
{
    // A tokenizer's files are read whole; 1 GiB is far above any real vocabulary.
    constexpr std::uintmax_t kLimit = std::uintmax_t(1) << 30;
    std::string text;
    const std::string error = readRegularFile(path.string(), kLimit, text);
    if (!error.empty()) {
        fail(path.string(), "", error);
    }
    return text;
}

json parseJson(std::string_view text, std::string_view file)
{
    try {
        return json::parse(text.begin(), text.end());
    } catch (const json::exception &e) {
        // parse_error for bad syntax, out_of_range for a number beyond double's range.
        fail(file, "", std::string("malformed JSON: ") + e.what());
    }
}

// Field access that names what is wrong.
struct Reader
{
    std::string_view file;

    const json &member(const json &object, const std::string &path, const char *key) const
    {
        if (!object.is_object()) {
            fail(file, path, "expected an object");
        }
        const auto it = object.find(key);
        if (it == object.end()) {
            fail(file, path.empty() ? key : path + "." + key, "missing");
        }
        return *it;
    }
    const json *optional(const json &object, const char *key) const
    {
        if (!object.is_object()) {
            return nullptr;
        }
        const auto it = object.find(key);
        return it == object.end() || it->is_null() ? nullptr : &*it;
    }
    std::string string(const json &value, const std::string &path) const
    {
        if (!value.is_string()) {
            fail(file, path, std::string("expected a string, found ") + value.type_name());
        }
        return value.get<std::string>();
    }
    bool boolean(const json &object, const std::string &path, const char *key, bool fallback) const
    {
        const json *v = optional(object, key);
        if (!v) {
            return fallback;
        }
        if (!v->is_boolean()) {
            fail(file, path + "." + key,
                 std::string("expected true or false, found ") + v->type_name());
        }
        return v->get<bool>();
    }
    TokenId id(const json &value, const std::string &path) const
    {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0
            || value.get<std::int64_t>() > std::int64_t(0x7FFFFFFF)) {
            fail(file, path, "expected a token id (an integer from 0 to 2^31 - 1)");
        }
        return static_cast<TokenId>(value.get<std::int64_t>());
    }
    std::string type(const json &object, const std::string &path) const
    {
        return string(member(object, path, "type"), path + ".type");
    }
    const json &array(const json &object, const std::string &path, const char *key) const
    {
        const json &v = member(object, path, key);
        if (!v.is_array()) {
            fail(file, path + "." + key, std::string("expected an array, found ") + v.type_name());
        }
        return v;
    }
};

std::unique_ptr<Normalizer> makeNormalizer(const Reader &r, const json &j, const std::string &path)
{
    const std::string type = r.type(j, path);
    if (type == "NFC") {
        return std::make_unique<NfcNormalizer>();
    }
    if (type == "BertNormalizer") {
        const bool lowercase = r.boolean(j, path, "lowercase", true);
        return std::make_unique<BertNormalizer>(r.boolean(j, path, "clean_text", true),
                                                r.boolean(j, path, "handle_chinese_chars", true),
                                                r.boolean(j, path, "strip_accents", lowercase),
                                                lowercase);
    }
    if (type == "Prepend") {
        return std::make_unique<PrependNormalizer>(
            r.string(r.member(j, path, "prepend"), path + ".prepend"));
    }
    if (type == "Replace") {
        const json &pattern = r.member(j, path, "pattern");
        const json *literal = r.optional(pattern, "String");
        if (!literal) {
            fail(r.file, path + ".pattern", "only {\"String\": ...} patterns are supported");
        }
        return std::make_unique<ReplaceNormalizer>(
            r.string(*literal, path + ".pattern.String"),
            r.string(r.member(j, path, "content"), path + ".content"));
    }
    if (type == "Sequence") {
        const json &list = r.array(j, path, "normalizers");
        std::vector<std::unique_ptr<Normalizer>> stages;
        for (std::size_t k = 0; k < list.size(); ++k) {
            stages.push_back(
                makeNormalizer(r, list[k], path + ".normalizers[" + std::to_string(k) + "]"));
        }
        return std::make_unique<SequenceNormalizer>(std::move(stages));
    }
    fail(r.file, path + ".type", "unsupported normalizer \"" + type + "\"");
}

std::unique_ptr<PreTokenizer> makePreTokenizer(const Reader &r, const json &j,
                                               const std::string &path)
{
    const std::string type = r.type(j, path);
    if (type == "ByteLevel") {
        return std::make_unique<ByteLevelPreTokenizer>(
            r.boolean(j, path, "add_prefix_space", false), r.boolean(j, path, "use_regex", true));
    }
    if (type == "BertPreTokenizer") {
        return std::make_unique<BertPreTokenizer>();
    }
    if (type == "Metaspace") {
        std::string replacement = "\xE2\x96\x81";
        if (const json *v = r.optional(j, "replacement")) {
            replacement = r.string(*v, path + ".replacement");
        }
        if (replacement.empty()) {
            fail(r.file, path + ".replacement", "empty");
        }
        // prepend_scheme, or the older add_prefix_space (true: always).
        auto scheme = r.boolean(j, path, "add_prefix_space", true)
            ? MetaspacePreTokenizer::PrependScheme::Always
            : MetaspacePreTokenizer::PrependScheme::Never;
        if (const json *v = r.optional(j, "prepend_scheme")) {
            const std::string s = r.string(*v, path + ".prepend_scheme");
            if (s == "always") {
                scheme = MetaspacePreTokenizer::PrependScheme::Always;
            } else if (s == "first") {
                scheme = MetaspacePreTokenizer::PrependScheme::First;
            } else if (s == "never") {
                scheme = MetaspacePreTokenizer::PrependScheme::Never;
            } else {
                fail(r.file, path + ".prepend_scheme", "unknown scheme \"" + s + "\"");
            }
        }
        return std::make_unique<MetaspacePreTokenizer>(replacement, scheme,
                                                       r.boolean(j, path, "split", true));
    }
    if (type == "Split") {
        const json &pattern = r.member(j, path, "pattern");
        std::string regex;
        if (const json *v = r.optional(pattern, "Regex")) {
            regex = r.string(*v, path + ".pattern.Regex");
        } else if (const json *v = r.optional(pattern, "String")) {
            regex = SplitPreTokenizer::quoteLiteral(r.string(*v, path + ".pattern.String"));
        } else {
            fail(r.file, path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
        }
        const std::string behavior = r.string(r.member(j, path, "behavior"), path + ".behavior");
        SplitBehavior b;
        if (behavior == "Removed") {
            b = SplitBehavior::Removed;
        } else if (behavior == "Isolated") {
            b = SplitBehavior::Isolated;
        } else if (behavior == "MergedWithPrevious") {
            b = SplitBehavior::MergedWithPrevious;
        } else if (behavior == "MergedWithNext") {
            b = SplitBehavior::MergedWithNext;
        } else if (behavior == "Contiguous") {
            b = SplitBehavior::Contiguous;
        } else {
            fail(r.file, path + ".behavior", "unknown behavior \"" + behavior + "\"");
        }
        try {
            return std::make_unique<SplitPreTokenizer>(regex, b,
                                                       r.boolean(j, path, "invert", false));
        } catch (const std::invalid_argument &e) {
            fail(r.file, path + ".pattern", e.what());
        }
    }
    if (type == "Sequence") {
        const json &list = r.array(j, path, "pretokenizers");
        std::vector<std::unique_ptr<PreTokenizer>> stages;
        for (std::size_t k = 0; k < list.size(); ++k) {
            stages.push_back(
                makePreTokenizer(r, list[k], path + ".pretokenizers[" + std::to_string(k) + "]"));
        }
        return std::make_unique<SequencePreTokenizer>(std::move(stages));
    }
    fail(r.file, path + ".type", "unsupported pre-tokenizer \"" + type + "\"");
}

std::unordered_map<std::string, TokenId> readVocab(const Reader &r, const json &vocab,
                                                   const std::string &path)
{
    if (!vocab.is_object()) {
        fail(r.file, path,
             std::string("expected an object of token → id, found ") + vocab.type_name());
    }
    std::unordered_map<std::string, TokenId> out;
    out.reserve(vocab.size());
    for (const auto &[token, id] : vocab.items()) {
        out.emplace(token, r.id(id, path + "[\"" + token + "\"]"));
    }
    return out;
}

std::unique_ptr<BpeModel> makeBpe(const Reader &r, std::unordered_map<std::string, TokenId> vocab,
                                  const std::vector<std::pair<std::string, std::string>> &merges,
                                  BpeOptions options, const std::string &path)
{
    try {
        return std::make_unique<BpeModel>(std::move(vocab), merges, std::move(options));
    } catch (const std::invalid_argument &e) {
        fail(r.file, path, e.what());
    }
}

std::unique_ptr<Model> makeWordPiece(const Reader &r, const json &j)
{
    const std::string path = "model";
    auto vocab = readVocab(r, r.member(j, path, "vocab"), "model.vocab");
    std::string unk = "[UNK]";
    if (const json *v = r.optional(j, "unk_token")) {
        unk = r.string(*v, "model.unk_token");
    }
    std::string prefix = "##";
    if (const json *v = r.optional(j, "continuing_subword_prefix")) {
        prefix = r.string(*v, "model.continuing_subword_prefix");
    }
    std::size_t maxChars = 100;
    if (const json *v = r.optional(j, "max_input_chars_per_word")) {
        if (!v->is_number_unsigned()) {
            fail(r.file, "model.max_input_chars_per_word", "expected a non-negative integer");
        }
        maxChars = v->get<std::size_t>();
    }
    try {
        return std::make_unique<WordPieceModel>(std::move(vocab), unk, prefix, maxChars);
    } catch (const std::invalid_argument &e) {
        fail(r.file, "model", e.what());
    }
}

std::unique_ptr<Model> makeModel(const Reader &r, const json &j)
{
    const std::string path = "model";
    const std::string type = r.type(j, path);
    if (type == "WordPiece") {
        return makeWordPiece(r, j);
    }
    if (type != "BPE") {
        fail(r.file, "model.type", "unsupported model \"" + type + "\" (BPE or WordPiece)");
    }
    if (const json *dropout = r.optional(j, "dropout")) {
        if (!dropout->is_number() || dropout->get<double>() != 0.0) {
            fail(r.file, "model.dropout", "BPE dropout is random; only null or 0");
        }
    }
    BpeOptions options;
    if (const json *v = r.optional(j, "unk_token")) {
        options.unkToken = r.string(*v, "model.unk_token");
    }
    options.fuseUnk = r.boolean(j, path, "fuse_unk", false);
    options.byteFallback = r.boolean(j, path, "byte_fallback", false);
    options.ignoreMerges = r.boolean(j, path, "ignore_merges", false);
    if (const json *v = r.optional(j, "continuing_subword_prefix")) {
        options.continuingSubwordPrefix = r.string(*v, "model.continuing_subword_prefix");
    }
    if (const json *v = r.optional(j, "end_of_word_suffix")) {
        options.endOfWordSuffix = r.string(*v, "model.end_of_word_suffix");
    }
    auto vocab = readVocab(r, r.member(j, path, "vocab"), "model.vocab");
    std::vector<std::pair<std::string, std::string>> merges;
    const json &list = r.array(j, path, "merges");
    merges.reserve(list.size());
    for (std::size_t k = 0; k < list.size(); ++k) {
        const std::string field = "model.merges[" + std::to_string(k) + "]";
        const json &m = list[k];
        if (m.is_string()) {
            const std::string s = m.get<std::string>();
            const auto space = s.find(' ');
            if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
                fail(r.file, field,
                     "expected \"a b\" (two tokens and one space), found \"" + s + "\"");
            }
            merges.emplace_back(s.substr(0, space), s.substr(space + 1));
        } else if (m.is_array() && m.size() == 2) {
            merges.emplace_back(r.string(m[0], field + "[0]"), r.string(m[1], field + "[1]"));
        } else {
            fail(r.file, field, "expected \"a b\" or [\"a\", \"b\"]");
        }
    }
    return makeBpe(r, std::move(vocab), merges, std::move(options), "model.merges");
}

// The ids of a token name: the added tokens, then the model's vocabulary.
std::optional<TokenId> lookUp(const std::vector<AddedToken> &added, const Model &model,
                              const std::string &token)
{
    for (const AddedToken &t : added) {
        if (t.content == token) {
            return t.id;
        }
    }
    return model.tokenToId(token);
}

std::unique_ptr<PostProcessor> makePostProcessor(const Reader &r, const json &j,
                                                 const std::string &path,
                                                 const std::vector<AddedToken> &added,
                                                 const Model &model)
{
    const std::string type = r.type(j, path);
    if (type == "ByteLevel") {
        return std::make_unique<ByteLevelProcessor>(r.boolean(j, path, "trim_offsets", true));
    }
    if (type == "BertProcessing") {
        // {"cls": ["[CLS]", 101], "sep": ["[SEP]", 102]}: [CLS] $A [SEP].
        std::vector<TemplateProcessor::Item> items(3);
        const char *keys[] = {"cls", "sep"};
        for (int k = 0; k < 2; ++k) {
            const json &pair = r.member(j, path, keys[k]);
            const std::string field = path + "." + keys[k];
            if (!pair.is_array() || pair.size() != 2) {
                fail(r.file, field, "expected [token, id]");
            }
            TemplateProcessor::Item &item = items[k == 0 ? 0 : 2];
            item.pieces.push_back(r.string(pair[0], field + "[0]"));
            item.ids.push_back(r.id(pair[1], field + "[1]"));
        }
        items[1].sequence = true;
        return std::make_unique<TemplateProcessor>(std::move(items));
    }
    if (type == "TemplateProcessing") {
        const json &single = r.array(j, path, "single");
        const json *specials = r.optional(j, "special_tokens");
        std::vector<TemplateProcessor::Item> items;
        for (std::size_t k = 0; k < single.size(); ++k) {
            const std::string field = path + ".single[" + std::to_string(k) + "]";
            const json &item = single[k];
            TemplateProcessor::Item out;
            if (const json *seq = r.optional(item, "Sequence")) {
                const std::string id
                    = r.string(r.member(*seq, field + ".Sequence", "id"), field + ".Sequence.id");
                if (id != "A") {
                    fail(r.file, field + ".Sequence.id",
                         "a single-sequence template can only hold $A, found " + id);
                }
                out.sequence = true;
            } else if (const json *sp = r.optional(item, "SpecialToken")) {
                const std::string name = r.string(r.member(*sp, field + ".SpecialToken", "id"),
                                                  field + ".SpecialToken.id");
                const json *entry = specials ? r.optional(*specials, name.c_str()) : nullptr;
                if (entry) {
                    const std::string efield = path + ".special_tokens[\"" + name + "\"]";
                    const json &ids = r.array(*entry, efield, "ids");
                    const json &tokens = r.array(*entry, efield, "tokens");
                    if (ids.size() != tokens.size()) {
                        fail(r.file, efield, "ids and tokens differ in length");
                    }
                    for (std::size_t t = 0; t < ids.size(); ++t) {
                        out.ids.push_back(r.id(ids[t], efield + ".ids[" + std::to_string(t) + "]"));
                        out.pieces.push_back(
                            r.string(tokens[t], efield + ".tokens[" + std::to_string(t) + "]"));
                    }
                } else if (const auto id = lookUp(added, model, name)) {
                    out.ids.push_back(*id);
                    out.pieces.push_back(name);
                } else {
                    fail(r.file, field + ".SpecialToken.id",
                         "special token \"" + name
                             + "\" is neither in special_tokens nor in the "
                               "vocabulary");
                }
            } else {
                fail(r.file, field, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
            }
            items.push_back(std::move(out));
        }
        return std::make_unique<TemplateProcessor>(std::move(items));
    }
    if (type == "Sequence") {
        const json &list = r.array(j, path, "processors");
        std::vector<std::unique_ptr<PostProcessor>> stages;
        for (std::size_t k = 0; k < list.size(); ++k) {
            stages.push_back(makePostProcessor(
                r, list[k], path + ".processors[" + std::to_string(k) + "]", added, model));
        }
        return std::make_unique<SequenceProcessor>(std::move(stages));
    }
    fail(r.file, path + ".type", "unsupported post-processor \"" + type + "\"");
}

std::vector<AddedToken> readAddedTokens(const Reader &r, const json &root)
{
    std::vector<AddedToken> out;
    const json *list = r.optional(root, "added_tokens");
    if (!list) {
        return out;
    }
    if (!list->is_array()) {
        fail(r.file, "added_tokens", "expected an array");
    }
    for (std::size_t k = 0; k < list->size(); ++k) {
        const std::string field = "added_tokens[" + std::to_string(k) + "]";
        const json &t = (*list)[k];
        AddedToken a;
        a.content = r.string(r.member(t, field, "content"), field + ".content");
        a.id = r.id(r.member(t, field, "id"), field + ".id");
        a.special = r.boolean(t, field, "special", false);
        a.lstrip = r.boolean(t, field, "lstrip", false);
        a.rstrip = r.boolean(t, field, "rstrip", false);
        a.singleWord = r.boolean(t, field, "single_word", false);
        out.push_back(std::move(a));
    }
    return out;
}

} // namespace

std::unique_ptr<Tokenizer> parseTokenizerJson(std::string_view text, std::string_view name)
{
    const json root = parseJson(text, name);
    const Reader r {name};
    if (!root.is_object()) {
        fail(name, "", "expected a JSON object at the top level");
    }
    Tokenizer::Stages stages;
    if (const json *j = r.optional(root, "normalizer")) {
        stages.normalizer = makeNormalizer(r, *j, "normalizer");
    }
    if (const json *j = r.optional(root, "pre_tokenizer")) {
        stages.preTokenizer = makePreTokenizer(r, *j, "pre_tokenizer");
    }
    stages.model = makeModel(r, r.member(root, "", "model"));
    std::vector<AddedToken> added = readAddedTokens(r, root);
    if (const json *j = r.optional(root, "post_processor")) {
        stages.postProcessor = makePostProcessor(r, *j, "post_processor", added, *stages.model);
    }
    if (const json *d = r.optional(root, "decoder")) {
        const std::string dtype = d->is_object() ? d->value("type", "") : "";
        if (dtype == "Metaspace") {
            Tokenizer::Stages::MetaspaceDecoding ms;
            if (const json *v = r.optional(*d, "replacement")) {
                ms.replacement = r.string(*v, "decoder.replacement");
            }
            const json *scheme = r.optional(*d, "prepend_scheme");
            ms.stripLeadingSpace = scheme
                ? scheme->is_string() && scheme->get<std::string>() != "never"
                : r.boolean(*d, "decoder", "add_prefix_space", true);
            stages.metaspaceDecoding = ms;
        }
        if (dtype == "Sequence" && d->contains("decoders") && (*d)["decoders"].is_array()) {
            // Llama 2's: Replace "▁" → " ", ByteFallback, Fuse, Strip " " from the start.
            std::optional<Tokenizer::Stages::MetaspaceDecoding> ms;
            bool strip = false;
            for (const json &step : (*d)["decoders"]) {
                if (!step.is_object()) {
                    continue;
                }
                const std::string t = step.value("type", "");
                if (t == "Replace" && step.contains("pattern") && step["pattern"].is_object()
                    && step["pattern"].contains("String") && step["pattern"]["String"].is_string()
                    && step.value("content", "") == " ") {
                    ms = Tokenizer::Stages::MetaspaceDecoding {step["pattern"]["String"], false};
                }
                if (t == "Strip" && step.value("content", "") == " "
                    && step.value("start", 0) >= 1) {
                    strip = true;
                }
            }
            if (ms) {
                ms->stripLeadingSpace = strip;
                stages.metaspaceDecoding = ms;
            }
        }
        if (dtype == "WordPiece") {
            Tokenizer::Stages::WordPieceDecoding wp;
            if (const json *v = r.optional(*d, "prefix")) {
                wp.prefix = r.string(*v, "decoder.prefix");
            }
            wp.cleanup = r.boolean(*d, "decoder", "cleanup", true);
            stages.wordPieceDecoding = wp;
        }
    }
    stages.description = std::string(name) + " (" + r.type(root["model"], "model") + ", "
        + std::to_string(stages.model->vocabSize()) + " tokens, " + std::to_string(added.size())
        + " added)";
    stages.added = AddedVocabulary(std::move(added));
    return std::make_unique<Tokenizer>(std::move(stages));
}

std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path &file)
{
    return parseTokenizerJson(readFile(file), file.string());
}

std::unique_ptr<Tokenizer> parseGpt2(std::string_view vocabJson, std::string_view vocabName,
                                     std::string_view merges, std::string_view mergesName)
{
    const Reader r {vocabName};
    auto vocab = readVocab(r, parseJson(vocabJson, vocabName), "(top level)");
    std::vector<std::pair<std::string, std::string>> pairs;
    std::size_t lineNumber = 0;
    std::size_t at = 0;
    while (at < merges.size()) {
        std::size_t end = merges.find('\n', at);
        if (end == std::string_view::npos) {
            end = merges.size();
        }
        std::string_view line = merges.substr(at, end - at);
        at = end + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.empty() || (lineNumber == 1 && line.starts_with("#version"))) {
            continue;
        }
        const auto space = line.find(' ');
        if (space == std::string_view::npos || space == 0 || space + 1 >= line.size()
            || line.find(' ', space + 1) != std::string_view::npos) {
            fail(mergesName, "line " + std::to_string(lineNumber),
                 "expected two tokens separated by one space");
        }
        pairs.emplace_back(line.substr(0, space), line.substr(space + 1));
    }
    Tokenizer::Stages stages;
    stages.preTokenizer = std::make_unique<ByteLevelPreTokenizer>(false, true);
    try {
        stages.model = std::make_unique<BpeModel>(std::move(vocab), pairs, BpeOptions {});
    } catch (const std::invalid_argument &e) {
        fail(mergesName, "", e.what());
    }
    stages.description = std::string(vocabName) + " + " + std::string(mergesName) + " (GPT-2 BPE, "
        + std::to_string(stages.model->vocabSize()) + " tokens)";
    return std::make_unique<Tokenizer>(std::move(stages));
}

std::unique_ptr<Tokenizer> loadGpt2(const std::filesystem::path &vocabFile,
                                    const std::filesystem::path &mergesFile)
{
    return parseGpt2(readFile(vocabFile), vocabFile.string(), readFile(mergesFile),
                     mergesFile.string());
}

std::unique_ptr<Tokenizer> parseBertVocab(std::string_view vocabTxt, std::string_view name,
                                          bool lowercase)
{
    std::unordered_map<std::string, TokenId> vocab;
    std::size_t at = 0;
    TokenId id = 0;
    while (at < vocabTxt.size()) {
        std::size_t end = vocabTxt.find('\n', at);
        if (end == std::string_view::npos) {
            end = vocabTxt.size();
        }
        std::string_view line = vocabTxt.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        // A repeated line keeps its first id; the line still counts.
        vocab.try_emplace(std::string(line), id++);
    }
    for (const char *needed : {"[UNK]", "[CLS]", "[SEP]"}) {
        if (!vocab.contains(needed)) {
            fail(name, "", std::string(needed) + " is not in the vocabulary");
        }
    }
    Tokenizer::Stages stages;
    stages.normalizer = std::make_unique<BertNormalizer>(true, true, lowercase, lowercase);
    stages.preTokenizer = std::make_unique<BertPreTokenizer>();
    const TokenId cls = vocab.at("[CLS]"), sep = vocab.at("[SEP]");
    std::vector<AddedToken> added;
    for (const char *special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
        if (const auto it = vocab.find(special); it != vocab.end()) {
            added.push_back({special, it->second, true, false, false, false});
        }
    }
    stages.model = std::make_unique<WordPieceModel>(std::move(vocab), "[UNK]");
    std::vector<TemplateProcessor::Item> items(3);
    items[0].ids = {cls};
    items[0].pieces = {"[CLS]"};
    items[1].sequence = true;
    items[2].ids = {sep};
    items[2].pieces = {"[SEP]"};
    stages.postProcessor = std::make_unique<TemplateProcessor>(std::move(items));
    stages.wordPieceDecoding = Tokenizer::Stages::WordPieceDecoding {};
    stages.added = AddedVocabulary(std::move(added));
    stages.description = std::string(name) + " (WordPiece, "
        + std::to_string(stages.model->vocabSize()) + " tokens"
        + (lowercase ? ", uncased)" : ", cased)");
    return std::make_unique<Tokenizer>(std::move(stages));
}

std::unique_ptr<Tokenizer> parseSentencePiece(std::string_view model, std::string_view name)
{
    Tokenizer::Stages stages;
    std::unique_ptr<SentencePieceModel> sp;
    try {
        sp = std::make_unique<SentencePieceModel>(model);
    } catch (const std::invalid_argument &e) {
        fail(name, "", e.what());
    }
    stages.description
        = std::string(name) + " (SentencePiece, " + std::to_string(sp->vocabSize()) + " pieces)";
    stages.model = std::move(sp);
    return std::make_unique<Tokenizer>(std::move(stages));
}

std::unique_ptr<Tokenizer> loadSentencePiece(const std::filesystem::path &file)
{
    return parseSentencePiece(readFile(file), file.string());
}

std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path &folder)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        throw TokenizerError(folder.string() + ": not a folder");
    }
    if (fs::exists(folder / "tokenizer.json", ec)) {
        return loadTokenizerJson(folder / "tokenizer.json");
    }
    if (fs::exists(folder / "tokenizer.model", ec)) {
        return loadSentencePiece(folder / "tokenizer.model");
    }
    if (fs::exists(folder / "vocab.json", ec) && fs::exists(folder / "merges.txt", ec)) {
        return loadGpt2(folder / "vocab.json", folder / "merges.txt");
    }
    if (fs::exists(folder / "encoder.json", ec) && fs::exists(folder / "vocab.bpe", ec)) {
        return loadGpt2(folder / "encoder.json", folder / "vocab.bpe");
    }
    if (fs::exists(folder / "vocab.txt", ec)) {
        // do_lower_case of tokenizer_config.json, true when absent (bert-base-uncased).
        bool lowercase = true;
        const fs::path config = folder / "tokenizer_config.json";
        if (fs::exists(config, ec)) {
            const std::string name = config.string();
            const json j = parseJson(readFile(config), name);
            lowercase = Reader {name}.boolean(j, "", "do_lower_case", true);
        }
        const fs::path vocab = folder / "vocab.txt";
        return parseBertVocab(readFile(vocab), vocab.string(), lowercase);
    }
    throw TokenizerError(folder.string()
                         + ": no tokenizer files (expected tokenizer.json, vocab.json + "
                           "merges.txt, encoder.json + vocab.bpe, vocab.txt or tokenizer.model)");
}

} // namespace attn::text
