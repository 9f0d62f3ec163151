// core/models against PyTorch: tiny random checkpoints of every supported family, read from
// their safetensors files and config.json and run through the float32 forward, compared with
// the float64 PyTorch forward of tests/reference/make_model_fixtures.py (fixtures/models/<case>/
// expected.npz: ids, attention layers × heads × n × n, queries, keys, hidden, logits). Hostile
// files, written here into a temporary directory, must each be refused with a message that
// names what is wrong.

#include "testutil.h"

#include "core/attention/positional.h"
#include "core/io/npy.h"
#include "core/models/config.h"
#include "core/models/forward.h"
#include "core/models/model.h"
#include "core/models/nexttoken.h"
#include "core/models/safetensors.h"
#include "core/text/loader.h"
#include "core/tiles/tileengine.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <limits>
#include <map>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace attn;
using namespace attn::models;

namespace {

QString caseDir(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/models/%1").arg(name);
}

std::map<std::string, NpyArray> loadExpected(const QString &name)
{
    std::map<std::string, NpyArray> m;
    for (auto &[member, array] : readNpz((caseDir(name) + "/expected.npz").toStdString()))
        m.emplace(member, std::move(array));
    return m;
}

// Slice [a][b] of a 4-d array (A × B × r × c) as an r × c matrix.
MatrixD slice4(const NpyArray &x, Index a, Index b)
{
    const Index bs = Index(x.shape[1]), r = Index(x.shape[2]), c = Index(x.shape[3]);
    MatrixD m(r, c);
    const std::size_t base = std::size_t(((a * bs) + b) * r * c);
    for (Index i = 0; i < r; ++i)
        for (Index j = 0; j < c; ++j)
            m(i, j) = x.values[base + std::size_t(i * c + j)];
    return m;
}

// A safetensors image: 8-byte length, the header text, the data.
std::string safetensorsBytes(const std::string &header, const std::string &data)
{
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
        out[std::size_t(i)] = char((n >> (8 * i)) & 0xff);
    return out + header + data;
}

void writeFile(const QString &path, const std::string &bytes)
{
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(path));
    QCOMPARE(f.write(bytes.data(), qint64(bytes.size())), qint64(bytes.size()));
}

std::string readFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray b = f.readAll();
    return std::string(b.constData(), std::size_t(b.size()));
}

// The message of the ModelError `f` throws, or "(no error)".
template<typename F> std::string errorOf(F &&f)
{
    try {
        f();
    } catch (const ModelError &e) {
        return e.what();
    }
    return "(no error)";
}

#define VERIFY_CONTAINS(message, part)                                                             \
    QVERIFY2(std::string(message).find(part) != std::string::npos,                                 \
             qPrintable(QStringLiteral("expected \"%1\" in: %2")                                   \
                            .arg(QString::fromStdString(part), QString::fromStdString(message))))

} // namespace

class TestModels : public QObject
{
    Q_OBJECT

private slots:
    // softmax of one logits row: exp(x − max) / Σ exp(x − max), sorted, ties by id.
    void nextTokens()
    {
        MatrixF logits(2, 5);
        logits << 0.f, 1.f, 2.f, 3.f, 4.f, //
            1.f, 3.f, -2.f, 3.f, 0.5f;
        const auto top = models::topNextTokens(logits, 1, 3);
        QCOMPARE(top.size(), std::size_t(3));
        const double total = 2 * std::exp(0.0) + std::exp(-2.0) + std::exp(-5.0) + std::exp(-2.5);
        QCOMPARE(top[0].id, Index(1));
        QCOMPARE(top[1].id, Index(3));
        QCOMPARE(top[2].id, Index(0));
        QVERIFY(std::abs(top[0].probability - 1 / total) < 1e-15);
        QVERIFY(std::abs(top[2].probability - std::exp(-2.0) / total) < 1e-15);
        QCOMPARE(top[2].logit, 1.0);
        QCOMPARE(models::topNextTokens(logits, 0, 99).size(), std::size_t(5));
        QVERIFY(models::topNextTokens(logits, 0, 0).empty());
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, models::topNextTokens(logits, 2, 1));
        logits(0, 2) = std::numeric_limits<float>::quiet_NaN();
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput, models::topNextTokens(logits, 0, 1));
    }

    void forward_data();
    void forward();
    void checkpointDetails();
    void halfAndBfloat16();
    void progressAndCancel();
    void ropeLayouts();
    void tileEngineFromKeptQueriesKeys();
    void longInputInRowBlocks();
    void emptyTensorIntoNullBuffer();
    void hostileFiles_data();
    void hostileFiles();
    void hostileModels_data();
    void hostileModels();
    void foreignDirectory();
    void fifoFilesRefusedAtOnce_data();
    void fifoFilesRefusedAtOnce();
    void nonFiniteWeightsNamed_data();
    void nonFiniteWeightsNamed();
};

void TestModels::forward_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : {"gpt2", "gpt2_prefix", "llama_gqa", "llama_bf16", "llama_f16",
                             "llama3_scaling", "llama_linear", "llama_v5_rope", "qwen2",
                             "qwen2_window", "qwen3", "bert", "sharded", "odd_header"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestModels::forward()
{
    QFETCH(QString, name);
    const auto expected = loadExpected(name);
    const Model model = Model::open(caseDir(name).toStdString());
    const ModelConfig &c = model.config();
    std::vector<std::int64_t> ids;
    for (double v : expected.at("ids").values)
        ids.push_back(std::int64_t(v));
    ForwardOptions options;
    options.keepWeights = [](Index, Index) { return true; };
    const ForwardResult r = models::forward(model, ids, options);

    const NpyArray &attention = expected.at("attention");
    QCOMPARE(Index(attention.shape[0]), c.layers);
    QCOMPARE(Index(attention.shape[1]), c.heads);
    QCOMPARE(Index(attention.shape[2]), Index(ids.size()));
    QCOMPARE(Index(r.layers.size()), c.layers);
    for (Index l = 0; l < c.layers; ++l) {
        const LayerAttention &layer = r.layers[std::size_t(l)];
        QCOMPARE(Index(layer.weights.size()), c.heads);
        QCOMPARE(Index(layer.queries.size()), c.heads);
        QCOMPARE(Index(layer.keys.size()), c.kvHeads);
        for (Index h = 0; h < c.heads; ++h) {
            ATTN_COMPARE_CLOSE(layer.weights[std::size_t(h)], slice4(attention, l, h), 1e-5, 0.0);
            ATTN_COMPARE_CLOSE(layer.queries[std::size_t(h)], slice4(expected.at("queries"), l, h),
                               1e-4, 1e-5);
        }
        for (Index g = 0; g < c.kvHeads; ++g)
            ATTN_COMPARE_CLOSE(layer.keys[std::size_t(g)], slice4(expected.at("keys"), l, g), 1e-4,
                               1e-5);
    }
    ATTN_COMPARE_CLOSE(r.hidden, expected.at("hidden").toMatrix<double>("hidden"), 1e-4, 0.0);
    ATTN_COMPARE_CLOSE(r.logits, expected.at("logits").toMatrix<double>("logits"), 1e-4, 0.0);
    // Any head's weights again from the kept queries and keys.
    for (Index l = 0; l < c.layers; ++l)
        for (Index h = 0; h < c.heads; ++h)
            ATTN_COMPARE_CLOSE(headWeights(r, c, l, h),
                               r.layers[std::size_t(l)].weights[std::size_t(h)], 1e-6, 0.0);
    // The causal families give exactly 0 above the diagonal; BERT attends everywhere.
    const MatrixF &w0 = r.layers[0].weights[0];
    QCOMPARE(w0(0, 1) == 0.0f, c.causal);
    // No weights kept: every head streams (online softmax), to the reference's numbers; only
    // the last position's logits when asked.
    ForwardOptions streaming;
    streaming.lastLogitsOnly = true;
    const ForwardResult s = models::forward(model, ids, streaming);
    for (const LayerAttention &layer : s.layers)
        for (const MatrixF &w : layer.weights)
            QCOMPARE(w.size(), Index(0));
    ATTN_COMPARE_CLOSE(s.hidden, expected.at("hidden").toMatrix<double>("hidden"), 1e-4, 0.0);
    QCOMPARE(s.logits.rows(), Index(1));
    const MatrixD logits = expected.at("logits").toMatrix<double>("logits");
    ATTN_COMPARE_CLOSE(s.logits, logits.bottomRows(1), 1e-4, 0.0);
}

// Over 1 024 tokens the MLP runs in blocks of rows: the hidden states and logits are still
// the reference's.
void TestModels::longInputInRowBlocks()
{
    const auto expected = loadExpected(QStringLiteral("long_rows"));
    const Model model = Model::open(caseDir(QStringLiteral("long_rows")).toStdString());
    std::vector<std::int64_t> ids;
    for (double v : expected.at("ids").values)
        ids.push_back(std::int64_t(v));
    QVERIFY(ids.size() > 1024);
    const ForwardResult r = models::forward(model, ids);
    ATTN_COMPARE_CLOSE(r.hidden, expected.at("hidden").toMatrix<double>("hidden"), 1e-4, 0.0);
    ATTN_COMPARE_CLOSE(r.logits, expected.at("logits").toMatrix<double>("logits"), 1e-4, 0.0);
}

// What the loader found: prefixes, dtypes, odd offsets, shards, metadata, tied heads.
void TestModels::checkpointDetails()
{
    const Model gpt2 = Model::open(caseDir("gpt2_prefix").toStdString());
    QCOMPARE(gpt2.weights().prefix, std::string("transformer."));
    QCOMPARE(gpt2.weights().lmHead.tensor, gpt2.weights().tokenEmbedding.tensor);
    QVERIFY(gpt2.weights().layers[0].qkv.inputMajor);
    QCOMPARE(gpt2.checkpoint().files().front()->metadata().at("format"), std::string("pt"));

    const Model untied = Model::open(caseDir("llama_gqa").toStdString());
    QCOMPARE(untied.weights().lmHead.name(), std::string("lm_head.weight"));
    QCOMPARE(untied.config().kvHeads, Index(2));

    const Model bf16 = Model::open(caseDir("odd_header").toStdString());
    const SafetensorsFile &file = *bf16.checkpoint().files().front();
    QCOMPARE((8 + file.headerBytes()) % 2, std::uint64_t(1)); // data starts at an odd byte
    QCOMPARE(bf16.weights().tokenEmbedding.tensor->dtype, DType::BF16);
    // Weights stay in the file's dtype: the data buffer holds 2 bytes per element.
    std::uint64_t elements = 0;
    for (const TensorInfo &t : file.tensors())
        elements += t.elements;
    QCOMPARE(file.dataBytes(), 2 * elements);

    const Model sharded = Model::open(caseDir("sharded").toStdString());
    QCOMPARE(sharded.checkpoint().files().size(), std::size_t(2));
    QVERIFY(sharded.weights().tokenEmbedding.file != sharded.weights().finalNorm.weight.file);

    const Model bert = Model::open(caseDir("bert").toStdString());
    QCOMPARE(bert.weights().embeddingNorm.weight.name(),
             std::string("bert.embeddings.LayerNorm.gamma"));
    QCOMPARE(bert.weights().embeddingNorm.bias.name(),
             std::string("bert.embeddings.LayerNorm.beta"));
    QVERIFY(!bert.config().causal);

    const Model window = Model::open(caseDir("qwen2_window").toStdString());
    QVERIFY(!window.config().usesSlidingWindow(0));
    QVERIFY(window.config().usesSlidingWindow(1));
    QCOMPARE(window.config().slidingWindowSize, Index(4));
    // An explicit layer_types list wins over max_window_layers.
    const ModelConfig listed = parseModelConfig(
        R"({"model_type": "qwen2", "vocab_size": 8, "hidden_size": 16, "intermediate_size": 8,
            "num_attention_heads": 2, "num_hidden_layers": 3, "use_sliding_window": true,
            "sliding_window": 4, "max_window_layers": 0,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})",
        "listed");
    QVERIFY(listed.usesSlidingWindow(0) && !listed.usesSlidingWindow(1)
            && listed.usesSlidingWindow(2));
    const ModelConfig off = parseModelConfig(
        R"({"model_type": "qwen2", "vocab_size": 8, "hidden_size": 16, "intermediate_size": 8,
            "num_attention_heads": 2, "num_hidden_layers": 3, "use_sliding_window": false,
            "sliding_window": 4, "max_window_layers": 0})",
        "off");
    QVERIFY(!off.usesSlidingWindow(2));
}

void TestModels::halfAndBfloat16()
{
    QCOMPARE(halfToFloat(0x3c00), 1.0f);
    QCOMPARE(halfToFloat(0xc000), -2.0f);
    QCOMPARE(halfToFloat(0x7bff), 65504.0f); // largest normal
    QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
    QCOMPARE(halfToFloat(0x03ff), std::ldexp(1023.0f, -24)); // largest subnormal
    QCOMPARE(halfToFloat(0x0400), std::ldexp(1.0f, -14)); // smallest normal
    QVERIFY(std::signbit(halfToFloat(0x8000)) && halfToFloat(0x8000) == 0.0f);
    QCOMPARE(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
    QCOMPARE(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
    QVERIFY(std::isnan(halfToFloat(0x7e00)));
    QVERIFY(std::isnan(halfToFloat(0x7c01)));
    QCOMPARE(bfloat16ToFloat(0x3f80), 1.0f);
    QCOMPARE(bfloat16ToFloat(0xc040), -3.0f);
    QCOMPARE(bfloat16ToFloat(0x7f80), std::numeric_limits<float>::infinity());
    QVERIFY(std::isnan(bfloat16ToFloat(0x7fc0)));
    // Every F16 value against the arithmetic definition.
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const std::uint32_t e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
        if (e == 31)
            continue;
        const double v = e == 0 ? std::ldexp(double(m), -24)
                                : std::ldexp(1.0 + double(m) / 1024.0, int(e) - 15);
        const double expected = (bits & 0x8000) ? -v : v;
        if (double(halfToFloat(std::uint16_t(bits))) != expected)
            QFAIL(qPrintable(QStringLiteral("half 0x%1").arg(bits, 4, 16, QChar('0'))));
    }
}

void TestModels::progressAndCancel()
{
    const Model model = Model::open(caseDir("llama_gqa").toStdString());
    std::vector<Index> seen;
    ForwardOptions options;
    options.progress = [&](Index done, Index total) {
        QCOMPARE(total, Index(2));
        seen.push_back(done);
    };
    options.keepWeights = [](Index layer, Index head) { return layer == 1 && head == 3; };
    const ForwardResult r = models::forward(model, {1, 2, 3}, options);
    QCOMPARE(seen, (std::vector<Index> {1, 2}));
    QCOMPARE(r.layers[0].weights[0].size(), Index(0));
    QCOMPARE(r.layers[1].weights[3].rows(), Index(3));
    QCOMPARE(r.kvHeadOf(3, 4), Index(1));

    std::atomic<bool> cancel {false};
    options.cancel = &cancel;
    options.progress = [&](Index, Index) { cancel = true; };
    QVERIFY_THROWS_EXCEPTION(Cancelled, models::forward(model, {1, 2, 3}, options));

    VERIFY_CONTAINS(errorOf([&] {
                        models::forward(model, {1, 48});
                    }),
                    std::string("token id 48 at position 1 is outside the vocabulary [0, 48)"));
    VERIFY_CONTAINS(errorOf([&] { models::forward(model, {}); }), std::string("no token ids"));
    const Model gpt2 = Model::open(caseDir("gpt2").toStdString());
    VERIFY_CONTAINS(errorOf([&] { models::forward(gpt2, std::vector<std::int64_t>(17, 1)); }),
                    std::string("17 tokens, but the model has learned positions for 16"));
}

// Both RoPE layouts and the scaled frequencies, against the formulas.
void TestModels::ropeLayouts()
{
    const std::string base = R"("model_type": "llama", "vocab_size": 8, "hidden_size": 16,
        "intermediate_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1)";
    const ModelConfig v4 = parseModelConfig(
        "{" + base + R"(, "rope_theta": 500.0, "rope_scaling": {"type": "linear", "factor": 3})"
            + "}",
        "v4");
    const ModelConfig v5 = parseModelConfig(
        "{" + base
            + R"(, "rope_parameters": {"rope_type": "linear", "rope_theta": 500.0, "factor": 3})"
            + "}",
        "v5");
    QCOMPARE(v5.ropeTheta, 500.0);
    QCOMPARE(v5.ropeScaling.type, RopeScalingType::Linear);
    QCOMPARE(ropeFrequencies(v4), ropeFrequencies(v5));
    QCOMPARE(ropeFrequencies(v5).size(), std::size_t(4));
    QVERIFY(std::abs(ropeFrequencies(v5)[1] - std::pow(500.0, -0.25) / 3.0) < 1e-15);
    VERIFY_CONTAINS(
        errorOf([&] {
            parseModelConfig("{" + base + R"(, "rope_theta": 10000.0,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 500.0}})",
                             "both");
        }),
        std::string("rope_theta 10000.0 disagrees with rope_parameters.rope_theta 500.0"));
    VERIFY_CONTAINS(errorOf([&] {
                        parseModelConfig("{" + base + R"(, "rope_scaling": {"rope_type": "yarn",
                                                 "factor": 4}})",
                                         "yarn");
                    }),
                    std::string("RoPE type \"yarn\" is not supported"));
    // applyRopeFrequencies with θ_i = base^(−2i/d) is applyRope, in both conventions.
    MatrixF x = MatrixF::Random(5, 8), y = x;
    std::vector<double> theta;
    for (Index i = 0; i < 4; ++i)
        theta.push_back(ropeFrequency(i, 8, 500.0));
    for (const RopeConvention convention : {RopeConvention::Half, RopeConvention::Interleaved}) {
        applyRope<float>(x, convention, 500.0, 3);
        applyRopeFrequencies<float>(y, theta, convention, 3);
        QCOMPARE(x, y);
    }
    QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                             applyRopeFrequencies<float>(y, {1.0, 2.0}, RopeConvention::Half));
    // llama3: λ = 2π/θ below old/high kept, above old/low divided by factor, smooth between.
    const ModelConfig l3 = Model::open(caseDir("llama3_scaling").toStdString()).config();
    const std::vector<double> f = ropeFrequencies(l3);
    QCOMPARE(f.size(), std::size_t(4));
    QCOMPARE(f[0], 1.0); // λ = 6.28 < 32/4
    const double theta1 = std::pow(100.0, -0.25), wavelength = 2 * M_PI / theta1; // 19.9
    const double smooth = (32.0 / wavelength - 1.0) / 3.0;
    QVERIFY(std::abs(f[1] - ((1 - smooth) * theta1 / 8 + smooth * theta1)) < 1e-15);
    QVERIFY(std::abs(f[2] - std::pow(100.0, -0.5) / 8.0) < 1e-15);
}

// The tile engine (the Long tab's pooled maps) draws a model's head from the kept queries and
// keys with the layer's mask, giving the reference's weights (Qwen2's sliding-window layer).
void TestModels::tileEngineFromKeptQueriesKeys()
{
    const auto expected = loadExpected("qwen2_window");
    const Model model = Model::open(caseDir("qwen2_window").toStdString());
    const ModelConfig &c = model.config();
    std::vector<std::int64_t> ids;
    for (double v : expected.at("ids").values)
        ids.push_back(std::int64_t(v));
    const ForwardResult r = models::forward(model, ids);
    const Index n = Index(ids.size());
    for (Index layer = 0; layer < c.layers; ++layer)
        for (Index head = 0; head < c.heads; ++head) {
            const LayerAttention &l = r.layers[std::size_t(layer)];
            TileEngine<float> engine(l.queries[std::size_t(head)],
                                     l.keys[std::size_t(r.kvHeadOf(head, c.heads))], 1,
                                     layerMask(c, layer, n));
            QCOMPARE(engine.scale(), r.scale);
            const MatrixD want = slice4(expected.at("attention"), layer, head);
            MatrixD got(n, n);
            for (Index i = 0; i < n; ++i)
                for (Index j = 0; j < n; ++j)
                    got(i, j) = engine.cell(0, i, j).weight;
            ATTN_COMPARE_CLOSE(got, want, 1e-5, 0.0);
        }
}

// Found by fuzz_safetensors: reading an empty F32 tensor into an empty std::vector passed its
// null data() to memcpy (undefined even for 0 bytes).
void TestModels::emptyTensorIntoNullBuffer()
{
    const std::string bytes
        = safetensorsBytes(R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},)"
                           R"("h":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}})",
                           "");
    const SafetensorsFile file = SafetensorsFile::fromMemory(
        reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size(), "empty");
    for (const TensorInfo &t : file.tensors()) {
        QCOMPARE(t.elements, std::uint64_t(0));
        std::vector<float> values;
        file.readFloats(t, 0, 0, values.data());
    }
    QCOMPARE(file.find("e")->shapeString(), std::string("[0, 3]"));
}

void TestModels::hostileFiles_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QStringList>("parts");
    const auto st = [](const std::string &h, const std::string &d) {
        const std::string b = safetensorsBytes(h, d);
        return QByteArray(b.data(), qsizetype(b.size()));
    };
    const std::string f32x2 = R"({"dtype":"F32","shape":[2],"data_offsets":)";
    const std::string gpt2 = readFile(caseDir("gpt2") + "/model.safetensors");
    QTest::newRow("truncated") << QByteArray(gpt2.data(), qsizetype(gpt2.size() / 2))
                               << "model.safetensors"
                               << QStringList {"model.safetensors", "end past the data buffer of"};
    QTest::newRow("truncated header") << QByteArray(gpt2.data(), 100) << "model.safetensors"
                                      << QStringList {"runs past the end of the file (100 bytes"};
    QTest::newRow("offsets past end")
        << st(R"({"a":)" + f32x2 + "[0,8]}}", std::string(4, '\0')) << "x.safetensors"
        << QStringList {"tensor 'a'", "[0, 8] end past the data buffer of 4 bytes"};
    QTest::newRow("overlapping") << st(R"({"a":)" + f32x2 + R"([0,8]},"b":)" + f32x2 + "[4,12]}}",
                                       std::string(12, '\0'))
                                 << "x.safetensors"
                                 << QStringList {"'a' (bytes 0–8)", "'b' (bytes 4–12) overlap"};
    QTest::newRow("size disagrees")
        << st(R"({"a":)" + f32x2 + "[0,6]}}", std::string(6, '\0')) << "x.safetensors"
        << QStringList {"span 6 bytes but shape [2] of F32 needs 8"};
    QTest::newRow("shape 2^60") << st(
        R"({"a":{"dtype":"F32","shape":[1152921504606846976],"data_offsets":[0,8]}})",
        std::string(8, '\0')) << "x.safetensors"
                                << QStringList {"tensor 'a'", "[1152921504606846976]", "2^64"};
    QTest::newRow("shape product overflow")
        << st(R"({"a":{"dtype":"BF16","shape":[4294967296,4294967296,2],"data_offsets":[0,8]}})",
              std::string(8, '\0'))
        << "x.safetensors" << QStringList {"more than 2^64 bits"};
    std::string big(8, '\0');
    const std::uint64_t n = 100'000'001;
    std::memcpy(big.data(), &n, 8);
    big += "{}";
    QTest::newRow("header over 100 MB")
        << QByteArray(big.data(), qsizetype(big.size())) << "x.safetensors"
        << QStringList {"header length 100000001", "limit of 100000000 bytes"};
    QTest::newRow("duplicate names")
        << st(R"({"a":)" + f32x2 + R"([0,8]},"a":)" + f32x2 + "[8,16]}}", std::string(16, '\0'))
        << "x.safetensors" << QStringList {"duplicate key \"a\""};
    QTest::newRow("not an object")
        << st("[1,2]", "") << "x.safetensors" << QStringList {"does not start with '{'"};
    QTest::newRow("trailing json")
        << st(R"({} {})", "") << "x.safetensors" << QStringList {"not valid JSON"};
    QTest::newRow("trailing bytes")
        << st(R"({"a":)" + f32x2 + "[0,8]}}", std::string(9, '\0')) << "x.safetensors"
        << QStringList {"1 trailing bytes after the last tensor"};
    QTest::newRow("hole") << st(R"({"a":)" + f32x2 + "[4,12]}}", std::string(12, '\0'))
                          << "x.safetensors" << QStringList {"bytes 0–4", "belong to no tensor"};
    QTest::newRow("negative dim") << st(
        R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", "")
                                  << "x.safetensors" << QStringList {"shape[0] is negative (-1)"};
    QTest::newRow("unknown dtype")
        << st(R"({"a":{"dtype":"Q4_K","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0'))
        << "x.safetensors" << QStringList {"unknown dtype 'Q4_K'"};
    QTest::newRow("metadata not strings")
        << st(R"({"__metadata__":{"a":1}})", "") << "x.safetensors"
        << QStringList {"__metadata__ entry 'a' must be a string"};
    QTest::newRow("gguf") << QByteArray("GGUF\x03\0\0\0\0\0\0\0\0\0\0\0", 16) << "m.gguf"
                          << QStringList {"GGUF file", "llama.cpp"};
    QTest::newRow("zip bin") << QByteArray("PK\x03\x04\x14\0\0\0\0\0archive/data.pkl", 26)
                             << "pytorch_model.bin"
                             << QStringList {"zip archive", "pytorch_model.bin",
                                             "safe_serialization=True"};
    QTest::newRow("pickle") << QByteArray("\x80\x02}q\0(X\x01\0\0\0aq\x01", 14) << "model.pt"
                            << QStringList {"Python pickle (protocol 2", "never loaded"};
    QTest::newRow("tiny") << QByteArray("abc", 3) << "x.safetensors"
                          << QStringList {"3 bytes, too short"};
}

void TestModels::hostileFiles()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, fileName);
    QFETCH(QStringList, parts);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(fileName);
    writeFile(path, std::string(bytes.constData(), std::size_t(bytes.size())));
    const std::string message = errorOf([&] { SafetensorsFile::open(path.toStdString()); });
    for (const QString &part : parts)
        VERIFY_CONTAINS(message, part.toStdString());
    // The same bytes from memory give the same refusal (the fuzz target's path).
    const std::string fromMemory = errorOf([&] {
        SafetensorsFile::fromMemory(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                                    std::size_t(bytes.size()), path.toStdString());
    });
    if (bytes.size() >= 8)
        QCOMPARE(fromMemory, message);
    // The file is never modified.
    QCOMPARE(readFile(path), std::string(bytes.constData(), std::size_t(bytes.size())));
}

void TestModels::hostileModels_data()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("from"); // fixture whose checkpoint is used
    QTest::addColumn<QStringList>("parts");
    const std::string gpt2 = readFile(caseDir("gpt2") + "/config.json");
    const auto edit = [&](const std::string &from, const std::string &to) {
        std::string s = gpt2;
        const auto at = s.find(from);
        if (at != std::string::npos)
            s.replace(at, from.size(), to);
        return QString::fromStdString(s);
    };
    QTest::newRow("missing tensor") << edit("\"n_layer\": 2", "\"n_layer\": 3") << "gpt2"
                                    << QStringList {"missing tensor 'h.2.ln_1.weight'", "3 layers"};
    QTest::newRow("wrong shape") << edit("\"n_inner\": null", "\"n_inner\": 32") << "gpt2"
                                 << QStringList {"tensor 'h.0.mlp.c_fc.weight' has shape [16, 64]",
                                                 "config.json implies [16, 32]"};
    QTest::newRow("wrong vocab") << edit("\"vocab_size\": 48", "\"vocab_size\": 50") << "gpt2"
                                 << QStringList {"'wte.weight' has shape [48, 16]",
                                                 "implies [50, 16]"};
    QTest::newRow("unknown model_type")
        << edit("\"model_type\": \"gpt2\"", "\"model_type\": \"mamba\"") << "gpt2"
        << QStringList {"model_type \"mamba\" is not supported", "gpt2, llama, qwen2, qwen3, bert"};
    QTest::newRow("heads not dividing") << edit("\"n_head\": 4", "\"n_head\": 5") << "gpt2"
                                        << QStringList {"n_embd 16 is not divisible by n_head 5"};
    QTest::newRow("huge size") << edit("\"n_embd\": 16", "\"n_embd\": 1e300") << "gpt2"
                               << QStringList {"\"n_embd\" must be an integer"};
    QTest::newRow("size over bound")
        << edit("\"n_embd\": 16", "\"n_embd\": 9223372036854775807") << "gpt2"
        << QStringList {"\"n_embd\" = 9223372036854775807 is outside [1, 65536]"};
    QTest::newRow("fewer layers than the weights")
        << edit("\"n_layer\": 2", "\"n_layer\": 1") << "gpt2"
        << QStringList {"holds tensor 'h.1.", "of layer 1 but config.json gives 1 layers"};
    QTest::newRow("zero layers") << edit("\"n_layer\": 2", "\"n_layer\": 0") << "gpt2"
                                 << QStringList {"\"n_layer\" = 0 is outside [1, 1024]"};
    QTest::newRow("duplicate config key")
        << edit("\"n_layer\": 2", "\"n_layer\": 2, \"n_layer\": 3") << "gpt2"
        << QStringList {"duplicate key \"n_layer\""};
    QTest::newRow("activation") << edit("\"gelu_new\"", "\"swiglu\"") << "gpt2"
                                << QStringList {"activation_function \"swiglu\" is not supported"};
    const std::string llama = readFile(caseDir("llama_gqa") + "/config.json");
    std::string gqa = llama;
    gqa.replace(gqa.find("\"num_key_value_heads\": 2"), 24, "\"num_key_value_heads\": 3");
    std::string oneLayer = llama;
    oneLayer.replace(oneLayer.find("\"num_hidden_layers\": 2"), 22, "\"num_hidden_layers\": 1");
    QTest::newRow("fewer layers (llama)")
        << QString::fromStdString(oneLayer) << "llama_gqa"
        << QStringList {"holds tensor 'model.layers.1.", "config.json gives 1 layers"};
    QTest::newRow("kv heads not dividing")
        << QString::fromStdString(gqa) << "llama_gqa"
        << QStringList {"num_attention_heads 4 is not divisible by num_key_value_heads 3"};
    std::string tied = llama;
    tied.replace(tied.find("\"model_type\": \"llama\""), 21,
                 "\"model_type\": \"qwen3\", \"head_dim\": 4");
    QTest::newRow("qwen3 without q_norm")
        << QString::fromStdString(tied) << "llama_gqa"
        << QStringList {"missing tensor 'model.layers.0.self_attn.q_norm.weight'"};
    std::string qwen3 = llama;
    qwen3.replace(qwen3.find("\"model_type\": \"llama\""), 21, "\"model_type\": \"qwen3\"");
    QTest::newRow("qwen3 default head_dim")
        << QString::fromStdString(qwen3) << "llama_gqa"
        << QStringList {"'model.layers.0.self_attn.q_proj.weight' has shape [16, 16]",
                        "implies [512, 16]"};
}

void TestModels::hostileModels()
{
    QFETCH(QString, config);
    QFETCH(QString, from);
    QFETCH(QStringList, parts);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath("config.json"), config.toStdString());
    QVERIFY(QFile::copy(caseDir(from) + "/model.safetensors", dir.filePath("model.safetensors")));
    const std::string message = errorOf([&] { Model::open(dir.path().toStdString()); });
    for (const QString &part : parts)
        VERIFY_CONTAINS(message, part.toStdString());
}

void TestModels::nonFiniteWeightsNamed_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<float>("value");
    QTest::addColumn<QString>("expected");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    // GPT-2's fused c_attn is a Conv1D [in 16, out 48] read in place; a bias through toVector;
    // Llama's q_proj [out, in] in row blocks; a token embedding row by row.
    QTest::newRow("in place") << "gpt2"
                              << "h.1.attn.c_attn.weight" << nan
                              << "tensor 'h.1.attn.c_attn.weight' [16, 48] holds NaN at row 2, "
                                 "column 3";
    QTest::newRow("bias") << "gpt2"
                          << "h.0.attn.c_proj.bias" << -inf
                          << "tensor 'h.0.attn.c_proj.bias' [16] holds an infinite value at "
                             "element 2";
    QTest::newRow("row blocks") << "llama_gqa"
                                << "model.layers.0.self_attn.q_proj.weight" << inf
                                << "'model.layers.0.self_attn.q_proj.weight' [16, 16] holds an "
                                   "infinite value at row 2, column 3";
    QTest::newRow("embedding") << "llama_gqa"
                               << "model.embed_tokens.weight" << nan
                               << "holds NaN at row 2, column 3";
}

void TestModels::nonFiniteWeightsNamed()
{
    QFETCH(QString, fixture);
    QFETCH(QString, tensor);
    QFETCH(float, value);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QFile::copy(caseDir(fixture) + "/config.json", dir.filePath("config.json")));
    std::string bytes = readFile(caseDir(fixture) + "/model.safetensors");
    // The element at row 2, column 3 (element 2 of a vector), located from the header.
    const SafetensorsFile file = SafetensorsFile::fromMemory(
        reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size(), "model.safetensors");
    const TensorInfo *info = file.find(tensor.toStdString());
    QVERIFY(info);
    QCOMPARE(info->dtype, DType::F32);
    std::uint64_t headerBytes = 0;
    for (int i = 0; i < 8; ++i)
        headerBytes |= std::uint64_t(std::uint8_t(bytes[std::size_t(i)])) << (8 * i);
    const std::uint64_t element
        = info->shape.size() >= 2 ? 2 * std::uint64_t(info->shape[1]) + 3 : 2;
    std::memcpy(&bytes[std::size_t(8 + headerBytes + info->begin + 4 * element)], &value, 4);
    writeFile(dir.filePath("model.safetensors"), bytes);

    const Model model = Model::open(dir.path().toStdString());
    const std::vector<std::int64_t> ids = {1, 2, 3, 2};
    const std::string message = errorOf([&] { models::forward(model, ids); });
    VERIFY_CONTAINS(message, expected.toStdString());
    VERIFY_CONTAINS(message, std::string("model.safetensors"));
}

// A model's files, a tokenizer's and a tensor file that are FIFOs: refused at once, naming the
// file and what it is (opening a FIFO for reading would wait for a writer forever).
void TestModels::fifoFilesRefusedAtOnce_data()
{
    QTest::addColumn<QString>("fifo");
    QTest::newRow("model.safetensors") << "model.safetensors";
    QTest::newRow("config.json") << "config.json";
    QTest::newRow("vocab.json") << "vocab.json";
    QTest::newRow(".npz") << "tensors.npz";
    QTest::newRow(".npy") << "tensor.npy";
}

void TestModels::fifoFilesRefusedAtOnce()
{
    QFETCH(QString, fifo);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const char *name : {"config.json", "model.safetensors"})
        if (fifo != QLatin1String(name))
            QVERIFY(QFile::copy(caseDir("gpt2") + "/" + name, dir.filePath(name)));
    const QString path = dir.filePath(fifo);
    QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
    const std::string folder = dir.path().toStdString();
    auto attempt = std::async(std::launch::async, [&]() -> std::string {
        try {
            if (fifo == QLatin1String("vocab.json")) {
                writeFile(dir.filePath("merges.txt"), "#version: 0.2\n");
                text::loadGpt2(path.toStdString(), dir.filePath("merges.txt").toStdString());
            } else if (fifo.endsWith(QLatin1String(".npz"))) {
                readNpz(path.toStdString());
            } else if (fifo.endsWith(QLatin1String(".npy"))) {
                readNpy(path.toStdString());
            } else {
                Model::open(folder);
            }
        } catch (const std::exception &e) {
            return e.what();
        }
        return "(no error)";
    });
    if (attempt.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
        // Release the blocked reader (a writer opens and closes the FIFO), then fail.
        const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0)
            ::close(fd);
        attempt.wait();
        QFAIL(qPrintable(fifo + QStringLiteral(": the reader waited on the FIFO")));
    }
    const std::string message = attempt.get();
    VERIFY_CONTAINS(message, path.toStdString());
    VERIFY_CONTAINS(message, std::string("not a regular file (a FIFO)"));
}

// A directory with a PyTorch pickle or a GGUF file instead of safetensors.
void TestModels::foreignDirectory()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath("pytorch_model.bin"), "PK\x03\x04");
    writeFile(dir.filePath("model-q4.gguf"), "GGUF");
    const std::string message = errorOf([&] { Checkpoint::open(dir.path().toStdString()); });
    for (const char *part : {"no model.safetensors or model.safetensors.index.json",
                             "found model-q4.gguf, pytorch_model.bin", "safe_serialization=True",
                             "GGUF (llama.cpp) files are not read"})
        VERIFY_CONTAINS(message, std::string(part));
    // An index naming a shard outside its directory.
    QTemporaryDir other;
    writeFile(other.filePath("model.safetensors.index.json"),
              R"({"weight_map": {"a": "../secret.safetensors"}})");
    VERIFY_CONTAINS(errorOf([&] { Checkpoint::open(other.path().toStdString()); }),
                    std::string("names '../secret.safetensors', not a file in the index's"));
}

QTEST_GUILESS_MAIN(TestModels)
#include "tst_models.moc"
