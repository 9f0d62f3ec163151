// Tests of core/tensorcase: a user's tensors read from .npz (the parsing shared by
// `attnlab compute` and File → Open tensors…) against the PyTorch fixtures of
// tests/reference/fixtures/torch/ (tests/reference/make_torch_fixtures.py): the case built from
// a fixture, run through MultiheadAttention / scaledDotProductAttention, gives PyTorch's
// expected_weights; bad arrays are refused with messages naming the array and shapes; weights
// computed elsewhere are split into layers and heads exactly as NumPy's C order says.

#include "core/io/tensorcase.h"
#include "testutil.h"

#include "core/attention/attention.h"
#include "core/attention/multihead.h"
#include "core/io/npy.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>

using namespace attn;

namespace {

QString fixturePath(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/torch/%1.npz").arg(name);
}

NpyArray member(const NamedArrays &arrays, const std::string &name)
{
    for (const auto &[n, a] : arrays) {
        if (n == name)
            return a;
    }
    return {};
}

void dropArray(NamedArrays &arrays, const std::string &name)
{
    std::erase_if(arrays, [&](const auto &a) { return a.first == name; });
}

void replace(NamedArrays &arrays, const std::string &name, NpyArray array)
{
    for (auto &[n, a] : arrays) {
        if (n == name) {
            a = std::move(array);
            return;
        }
    }
    arrays.emplace_back(name, std::move(array));
}

/// The InvalidArgument message thrown by f, or nullopt when it does not throw.
std::optional<QString> invalidArgumentOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const InvalidArgument &e) {
        return QString::fromStdString(e.what());
    }
    return std::nullopt;
}

/// Per-head weights of a case, as the app and `compute` compute them.
template<typename T> std::vector<Matrix<T>> weightsOf(const TensorCase<T> &c)
{
    if (c.multihead)
        return c.layer().forward(c.query, c.key, c.value, c.mask).weights;
    return {scaledDotProductAttention<T>(c.query, c.key, c.value, c.mask).weights};
}

/// Array whose element at flat index k is k (so every position is recognisable).
NpyArray counting(std::vector<std::int64_t> shape)
{
    NpyArray a;
    a.shape = std::move(shape);
    a.type = NpyType::Float32;
    a.values.resize(std::size_t(a.size()));
    for (std::size_t k = 0; k < a.values.size(); ++k)
        a.values[k] = double(k);
    return a;
}

} // namespace

class TestTensorCase : public QObject
{
    Q_OBJECT

private slots:
    // A model's attention stack: unicode tokens read back as written (UTF-32 items, NumPy's
    // '<U…'), a 5-d stack sliced by batch item, sizes refused from the headers alone.
    void attentionStack()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("s.npz")).toStdString();
        // (L, B, H, n, n) = (2, 2, 1, 2, 2); value of (l, b, i, j) = rows (p, 1 − p).
        NpyArray a;
        a.shape = {2, 2, 1, 2, 2};
        for (int l = 0; l < 2; ++l)
            for (int b = 0; b < 2; ++b)
                for (int i = 0; i < 2; ++i) {
                    const double p = 0.1 * (1 + l + 2 * b + 4 * i) / 8.0;
                    a.values.push_back(p);
                    a.values.push_back(1.0 - p);
                }
        // "naïve" (U+00EF) and "𝑥" (U+1D465, outside the BMP: one UTF-32 unit, four UTF-8 bytes).
        const std::vector<std::string> tokens = {"na\xc3\xafve", "\xf0\x9d\x91\xa5"};
        writeNpz(path, {{"attentions", a}}, true, {{"tokens", {{2}, tokens}}});
        const auto headers = readNpzHeaders(path, true);
        QCOMPARE(headers.size(), std::size_t(2));
        QCOMPARE(headers[1].second.stringChars, 5); // '<U5': the longest token
        QVERIFY_THROWS_EXCEPTION(NpyError, readNpz(path)); // strings only where asked for

        const AttentionStack s = loadAttentionStack(path, 1);
        QCOMPARE(s.tokens, tokens);
        QCOMPARE(s.batchCount, Index(2));
        QCOMPARE(s.weights.layers, Index(2));
        QCOMPARE(s.weights.heads, Index(1));
        QCOMPARE(s.weights.at(1, 0)(1, 0), 0.1 * (1 + 1 + 2 + 4) / 8.0); // l = 1, b = 1, i = 1
        QCOMPARE(s.weights.at(0, 0)(0, 1), 1.0 - 0.1 * 3 / 8.0);
        QVERIFY(s.rowSums.ok());
        QCOMPARE(s.rowSums.rows, Index(4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, loadAttentionStack(path, 2));

        // Rows that do not sum to 1 are reported, not refused.
        a.values[0] = 0.5; // (0, 0, 0, 0): row sums 0.5 + 0.9875
        writeNpz(path, {{"attentions", a}}, true);
        const AttentionStack bad = loadAttentionStack(path, 0);
        QCOMPARE(bad.rowSums.badRows, Index(1));
        QCOMPARE(bad.rowSums.worstLayer, Index(0));
        QCOMPARE(bad.rowSums.worstRow, Index(0));
        QVERIFY(std::abs(bad.rowSums.worstError - (0.5 - 0.1 / 8.0)) < 1e-15);
        QVERIFY(QString::fromStdString(bad.rowSums.text()).contains("1 of 4 rows do not sum to 1"));

        // Declared sizes: 2·2·1·2·2 float64 = 128 bytes stored, + 8 a value read, + one item's
        // 64 bytes: 320 bytes. A budget of 319 refuses it before reading any value.
        try {
            loadAttentionStack(path, 0, 319);
            QFAIL("a stack over the budget was read");
        } catch (const InvalidArgument &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("nothing was decompressed"), e.what());
        }
        QCOMPARE(loadAttentionStack(path, 0, 320).weights.layers, Index(2));
    }
    void matchesPyTorch_data();
    void matchesPyTorch();
    void float32Fixture();
    void maskConvention();
    void unusedArrays();
    void errors_data();
    void errors();
    void loadFromFile();
    void batchAxis();
    void weightStack_data();
    void weightStack();
    void weightStackRefusals_data();
    void weightStackRefusals();
    void keepsNonFiniteWeights();
    void defaultWeightArray_data();
    void defaultWeightArray();
};

void TestTensorCase::matchesPyTorch_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("heads");
    QTest::addColumn<bool>("multihead");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<int>("maskCount"); // masks described

    QTest::newRow("self-attention h=4") << "self_attn" << 4 << true << true << 0;
    QTest::newRow("causal attn_mask") << "causal" << 4 << true << true << 1;
    QTest::newRow("key_padding_mask") << "key_padding" << 4 << true << true << 1;
    QTest::newRow("cross, causal and padding") << "cross_causal_padding" << 2 << true << true << 2;
    QTest::newRow("cross n_q != n_k") << "cross" << 3 << true << true << 0;
    QTest::newRow("bias=False") << "no_bias" << 2 << true << false << 0;
    QTest::newRow("h = 1") << "h1" << 1 << true << true << 0;
    QTest::newRow("h = 8") << "h8" << 8 << true << true << 0;
    QTest::newRow("additive float mask") << "additive_mask" << 2 << true << true << 1;
    QTest::newRow("fully masked row (PyTorch NaN)") << "fully_masked_row" << 2 << true << true << 1;
    QTest::newRow("plain attention") << "plain" << 1 << false << false << 0;
    QTest::newRow("hand-computed d_model = 2") << "hand_d2" << 1 << true << false << 0;
}

void TestTensorCase::matchesPyTorch()
{
    QFETCH(QString, fixture);
    QFETCH(int, heads);
    QFETCH(bool, multihead);
    QFETCH(bool, bias);
    QFETCH(int, maskCount);

    const NamedArrays arrays = readNpz(fixturePath(fixture).toStdString());
    QVERIFY(hasTensorCase(arrays));
    const TensorCase<double> c = tensorCaseFromArrays<double>(arrays, fixture.toStdString());
    const NpyArray query = member(arrays, "query"), key = member(arrays, "key");
    QCOMPARE(c.queryCount(), Index(query.shape[0]));
    QCOMPARE(c.keyCount(), Index(key.shape[0]));
    QCOMPARE(c.dModel(), Index(query.shape[1]));
    QCOMPARE(c.heads, Index(heads));
    QCOMPARE(c.multihead, multihead);
    QCOMPARE(c.bias, bias);
    QCOMPARE(int(c.maskDescription.size()), maskCount);
    ATTN_COMPARE_CLOSE(c.query, query.toMatrix<double>("query"), 0.0, 0.0);

    const NpyArray expected = member(arrays, "expected_weights");
    const std::vector<MatrixD> weights = weightsOf(c);
    QCOMPARE(Index(weights.size()), Index(expected.shape[0]));
    for (std::size_t h = 0; h < weights.size(); ++h) {
        MatrixD reference = expected.slice<double>(std::int64_t(h), "expected_weights");
        // PyTorch 1.13 returns NaN on fully masked rows; ours are documented zeros.
        for (Index i = 0; i < reference.rows(); ++i) {
            if (reference.row(i).array().isNaN().any())
                reference.row(i).setZero();
        }
        ATTN_COMPARE_CLOSE(weights[h], reference, 1e-12, 0.0);
    }
}

void TestTensorCase::float32Fixture()
{
    const NamedArrays arrays = readNpz(fixturePath(QStringLiteral("causal_float32")).toStdString());
    const TensorCase<float> c = tensorCaseFromArrays<float>(arrays, "causal_float32");
    const NpyArray expected = member(arrays, "expected_weights");
    const std::vector<MatrixF> weights = weightsOf(c);
    QCOMPARE(Index(weights.size()), Index(4));
    for (std::size_t h = 0; h < weights.size(); ++h)
        ATTN_COMPARE_CLOSE(weights[h], expected.slice<float>(std::int64_t(h), "expected_weights"),
                           1e-5, 0.0);
}

void TestTensorCase::maskConvention()
{
    // plain_allowed's attn_mask means "may attend" (F.scaled_dot_product_attention).
    const NamedArrays arrays = readNpz(fixturePath(QStringLiteral("plain_allowed")).toStdString());
    const MatrixD expected
        = member(arrays, "expected_weights").slice<double>(0, "expected_weights");
    const TensorCase<double> allowed
        = tensorCaseFromArrays<double>(arrays, "plain_allowed", MaskConvention::Allowed);
    ATTN_COMPARE_CLOSE(weightsOf(allowed).at(0), expected, 1e-12, 0.0);
    QVERIFY(QString::fromStdString(allowed.maskDescription.at(0)).contains("True = may attend"));

    const TensorCase<double> masked
        = tensorCaseFromArrays<double>(arrays, "plain_allowed", MaskConvention::Masked);
    const auto report = test::compareClose(weightsOf(masked).at(0), expected, 1e-12, 0.0);
    QVERIFY2(!report.ok && report.worstAbs > 0.1, qPrintable(report.message()));
}

void TestTensorCase::unusedArrays()
{
    const TensorCase<double> c
        = loadTensorCase<double>(fixturePath(QStringLiteral("self_attn")).toStdString());
    QCOMPARE(c.unusedArrays, (std::vector<std::string> {"expected_output", "expected_weights"}));
    QCOMPARE(QString::fromStdString(c.shapeSummary()),
             QStringLiteral("query 6×16, key 6×16, value 6×16"));
}

void TestTensorCase::errors_data()
{
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("message");

    QTest::newRow("missing value") << "drop value"
                                   << "missing array 'value' in self_attn";
    QTest::newRow("missing num_heads")
        << "drop num_heads"
        << "missing array 'num_heads' (multi-head parameters were given)";
    QTest::newRow("key columns") << "key 6x5"
                                 << "array 'key' has 5 columns but query has 16 (both must be "
                                    "d_model): query (6, 16), key (6, 5), value (6, 16)";
    QTest::newRow("value rows") << "value 5x16"
                                << "array 'value' has 5 rows but key has 6 (both must be n_k)";
    QTest::newRow("query 1-d") << "query 1-d"
                               << "array 'query' must be 2-d (n_q × d_model), got "
                                  "shape (96,)";
    QTest::newRow("query bool") << "query bool"
                                << "array 'query' must hold numbers, got bool";
    QTest::newRow("in_proj_weight shape")
        << "in_proj_weight 16x16"
        << "array 'in_proj_weight' has shape (16, 16) but must be (48, 16)";
    QTest::newRow("in_proj_bias length")
        << "in_proj_bias 5"
        << "array 'in_proj_bias' must be a 1-d numeric array of length 48";
    QTest::newRow("num_heads does not divide")
        << "num_heads 3"
        << "num_heads = 3 must be at least 1 and divide d_model = 16";
    QTest::newRow("num_heads float") << "num_heads float"
                                     << "array 'num_heads' must be a 0-d integer array";
    QTest::newRow("attn_mask shape") << "attn_mask 6x5"
                                     << "array 'attn_mask' has shape (6, 5) but must be (6, 6)";
    QTest::newRow("attn_mask +inf") << "attn_mask +inf"
                                    << "array 'attn_mask' float64 (6, 6) holds inf at (1, 2)";
    QTest::newRow("attn_mask not boolean") << "attn_mask uint8 2"
                                           << "must hold booleans (0/1), found 2";
    QTest::newRow("key_padding_mask length") << "key_padding_mask 4"
                                             << "array 'key_padding_mask' has shape (4,)";
    QTest::newRow("NaN in query") << "query nan"
                                  << "array 'query' (6, 16) holds a non-finite value at (0, 7): "
                                     "nan (1 NaN, 0 Inf in all)";
    QTest::newRow("Inf in out_proj_weight") << "out_proj_weight inf"
                                            << "array 'out_proj_weight' (16, 16) holds a "
                                               "non-finite value at (0, 3): inf";
}

void TestTensorCase::errors()
{
    QFETCH(QString, edit);
    QFETCH(QString, message);

    NamedArrays a = readNpz(fixturePath(QStringLiteral("self_attn")).toStdString());
    auto matrix = [](std::int64_t rows, std::int64_t cols, NpyType type = NpyType::Float64) {
        NpyArray m = NpyArray::fromMatrix<double>(MatrixD::Ones(rows, cols));
        m.type = type;
        return m;
    };
    if (edit == "drop value") {
        dropArray(a, "value");
    } else if (edit == "drop num_heads") {
        dropArray(a, "num_heads");
    } else if (edit == "key 6x5") {
        replace(a, "key", matrix(6, 5));
    } else if (edit == "value 5x16") {
        replace(a, "value", matrix(5, 16));
    } else if (edit == "query 1-d") {
        NpyArray q = member(a, "query");
        q.shape = {96};
        replace(a, "query", q);
    } else if (edit == "query bool") {
        replace(a, "query", matrix(6, 16, NpyType::Bool));
    } else if (edit == "in_proj_weight 16x16") {
        replace(a, "in_proj_weight", matrix(16, 16));
    } else if (edit == "in_proj_bias 5") {
        NpyArray b;
        b.shape = {5};
        b.values.assign(5, 1.0);
        replace(a, "in_proj_bias", b);
    } else if (edit == "num_heads 3") {
        replace(a, "num_heads", NpyArray::scalarInt(3));
    } else if (edit == "num_heads float") {
        NpyArray h = member(a, "num_heads");
        h.type = NpyType::Float64;
        replace(a, "num_heads", h);
    } else if (edit == "attn_mask 6x5") {
        replace(a, "attn_mask", matrix(6, 5, NpyType::Bool));
    } else if (edit == "attn_mask +inf") {
        NpyArray m = matrix(6, 6);
        m.values[1 * 6 + 2] = std::numeric_limits<double>::infinity();
        replace(a, "attn_mask", m);
    } else if (edit == "attn_mask uint8 2") {
        NpyArray m = matrix(6, 6, NpyType::UInt8);
        m.values[4] = 2;
        replace(a, "attn_mask", m);
    } else if (edit == "key_padding_mask 4") {
        NpyArray pad;
        pad.shape = {4};
        pad.type = NpyType::Bool;
        pad.values = {0, 0, 1, 1};
        replace(a, "key_padding_mask", pad);
    } else if (edit == "query nan") {
        NpyArray q = member(a, "query");
        q.values[7] = std::numeric_limits<double>::quiet_NaN();
        replace(a, "query", q);
    } else if (edit == "out_proj_weight inf") {
        NpyArray w = member(a, "out_proj_weight");
        w.values[3] = std::numeric_limits<double>::infinity();
        replace(a, "out_proj_weight", w);
    } else {
        QFAIL("unknown edit");
    }
    const auto error = invalidArgumentOf([&] { tensorCaseFromArrays<double>(a, "self_attn.npz"); });
    QVERIFY2(error, "no InvalidArgument");
    QVERIFY2(error->contains(message), qPrintable(*error));
    // float32 cases check the same things.
    const auto error32
        = invalidArgumentOf([&] { tensorCaseFromArrays<float>(a, "self_attn.npz"); });
    QVERIFY2(error32 && error32->contains(message), qPrintable(error32.value_or("no error")));
}

void TestTensorCase::loadFromFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // Not a zip archive: NpyError naming the file.
    const QString garbage = dir.filePath(QStringLiteral("garbage.npz"));
    {
        QFile f(garbage);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not a zip archive");
    }
    try {
        loadTensorCase<double>(garbage.toStdString());
        QFAIL("no error for a file that is not an .npz");
    } catch (const NpyError &e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(garbage), e.what());
    }
    // A case written here reads back as written.
    const MatrixD q = MatrixD::Random(3, 4), k = MatrixD::Random(5, 4), v = MatrixD::Random(5, 2);
    const QString path = dir.filePath(QStringLiteral("plain.npz"));
    writeNpz(path.toStdString(),
             {{"query", NpyArray::fromMatrix(q)},
              {"key", NpyArray::fromMatrix(k)},
              {"value", NpyArray::fromMatrix(v)}});
    const TensorCase<double> c = loadTensorCase<double>(path.toStdString());
    QVERIFY(!c.multihead);
    QCOMPARE(c.heads, Index(1));
    QVERIFY(c.mask.empty());
    ATTN_COMPARE_CLOSE(c.key, k, 0.0, 0.0);
    ATTN_COMPARE_CLOSE(c.value, v, 0.0, 0.0);
}

void TestTensorCase::weightStack_data()
{
    QTest::addColumn<QList<qint64>>("shape");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("heads");

    QTest::newRow("2-d n_q × n_k") << QList<qint64> {3, 5} << 1 << 1;
    QTest::newRow("3-d h × n_q × n_k") << QList<qint64> {4, 3, 5} << 1 << 4;
    QTest::newRow("4-d layers × h × n_q × n_k") << QList<qint64> {2, 3, 4, 6} << 2 << 3;
    QTest::newRow("one cell") << QList<qint64> {1, 1, 1, 1} << 1 << 1;
}

void TestTensorCase::weightStack()
{
    QFETCH(QList<qint64>, shape);
    QFETCH(int, layers);
    QFETCH(int, heads);

    const NpyArray a = counting(std::vector<std::int64_t>(shape.begin(), shape.end()));
    const WeightStack s = weightStackFromArray(a, "weights");
    const Index nQ = shape[shape.size() - 2], nK = shape.back();
    QCOMPARE(s.layers, Index(layers));
    QCOMPARE(s.heads, Index(heads));
    QCOMPARE(s.queries, nQ);
    QCOMPARE(s.keys, nK);
    QCOMPARE(s.type, NpyType::Float32);
    QCOMPARE(Index(s.weights.size()), Index(layers * heads));
    // Element (l, h, i, j) is at flat index ((l·heads + h)·n_q + i)·n_k + j in C order.
    for (Index l = 0; l < layers; ++l)
        for (Index h = 0; h < heads; ++h)
            for (Index i = 0; i < nQ; ++i)
                for (Index j = 0; j < nK; ++j)
                    QCOMPARE(s.at(l, h)(i, j), double(((l * heads + h) * nQ + i) * nK + j));
    QVERIFY(invalidArgumentOf([&] { s.at(layers, 0); }));
    QVERIFY(invalidArgumentOf([&] { s.at(0, heads); }));
}

void TestTensorCase::weightStackRefusals_data()
{
    QTest::addColumn<QList<qint64>>("shape");
    QTest::addColumn<bool>("boolean");
    QTest::addColumn<QString>("message");

    QTest::newRow("0-d") << QList<qint64> {} << false
                         << "array 'w' float32 () is not attention weights: expected (n_q, n_k)";
    QTest::newRow("1-d") << QList<qint64> {5} << false << "float32 (5,) is not attention weights";
    QTest::newRow("5-d") << QList<qint64> {1, 1, 1, 2, 2} << false
                         << "(1, 1, 1, 2, 2) is not attention weights";
    QTest::newRow("bool") << QList<qint64> {2, 2} << true
                          << "array 'w' must hold numbers (attention weights), got bool (2, 2)";
    QTest::newRow("zero keys") << QList<qint64> {2, 3, 0} << false
                               << "float32 (2, 3, 0) has an empty axis";
}

void TestTensorCase::weightStackRefusals()
{
    QFETCH(QList<qint64>, shape);
    QFETCH(bool, boolean);
    QFETCH(QString, message);

    NpyArray a = counting(std::vector<std::int64_t>(shape.begin(), shape.end()));
    if (boolean) {
        a.type = NpyType::Bool;
        std::fill(a.values.begin(), a.values.end(), 1.0);
    }
    const auto error = invalidArgumentOf([&] { weightStackFromArray(a, "w"); });
    QVERIFY2(error, "no InvalidArgument");
    QVERIFY2(error->contains(message), qPrintable(*error));
}

void TestTensorCase::keepsNonFiniteWeights()
{
    // Weights from elsewhere are shown as they are: NaN, Inf and rows not summing to 1 stay.
    NpyArray a = counting({2, 3});
    a.values[1] = std::numeric_limits<double>::quiet_NaN();
    a.values[4] = -std::numeric_limits<double>::infinity();
    const WeightStack s = weightStackFromArray(a, "weights");
    QVERIFY(std::isnan(s.at(0, 0)(0, 1)));
    QCOMPARE(s.at(0, 0)(1, 1), -std::numeric_limits<double>::infinity());
    QCOMPARE(s.at(0, 0)(1, 2), 5.0);
}

void TestTensorCase::defaultWeightArray_data()
{
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<QString>("expected");

    QTest::newRow("weights") << QStringList {"scores", "weights", "attention"} << "weights";
    QTest::newRow("attn_weights") << QStringList {"x", "attn_weights", "attention"}
                                  << "attn_weights";
    QTest::newRow("attention") << QStringList {"x", "attention"} << "attention";
    QTest::newRow("only array") << QStringList {"layer3"} << "layer3";
    QTest::newRow("ambiguous") << QStringList {"a", "b"} << "";
    QTest::newRow("empty") << QStringList {} << "";
}

void TestTensorCase::defaultWeightArray()
{
    QFETCH(QStringList, names);
    QFETCH(QString, expected);
    NamedArrays arrays;
    for (const QString &n : names)
        arrays.emplace_back(n.toStdString(), counting({2, 2}));
    QCOMPARE(QString::fromStdString(attn::defaultWeightArray(arrays)), expected);
}

// Inputs saved with their batch axis by docs/formats.md's PyTorch snippet
// (tests/reference/make_batch_fixtures.py): B = 3 items of n = 6, E = 16, h = 4, item 1 padding
// its last 2 keys. Item b's weights and output equal what nn.MultiheadAttention returned for it
// (expected_weights[b], expected_output[b]); an index out of range names B; a mixed or
// mismatched batch axis is refused naming the shapes.
void TestTensorCase::batchAxis()
{
    const NamedArrays arrays = readNpz(ATTN_FIXTURE_DIR "/batch/mha_batch.npz");
    QCOMPARE(tensorBatchSize(arrays), Index(3));
    const NpyArray *expectedWeights = nullptr, *expectedOutput = nullptr;
    for (const auto &[name, a] : arrays) {
        if (name == "expected_weights")
            expectedWeights = &a;
        if (name == "expected_output")
            expectedOutput = &a;
    }
    QVERIFY(expectedWeights && expectedOutput);
    for (Index b = 0; b < 3; ++b) {
        const TensorCase<double> c
            = tensorCaseFromArrays<double>(tensorBatchItem(arrays, b), "mha_batch.npz");
        QCOMPARE(c.queryCount(), Index(6));
        QCOMPARE(c.dModel(), Index(16));
        QCOMPARE(c.heads, Index(4));
        const MultiheadResult<double> r = c.layer().forward(c.query, c.key, c.value, c.mask);
        double worst = 0;
        for (Index head = 0; head < 4; ++head)
            for (Index i = 0; i < 6; ++i)
                for (Index j = 0; j < 6; ++j) {
                    const double expected
                        = expectedWeights->values[std::size_t(((b * 4 + head) * 6 + i) * 6 + j)];
                    worst
                        = std::max(worst, std::abs(r.weights[std::size_t(head)](i, j) - expected));
                }
        for (Index i = 0; i < 6; ++i)
            for (Index e = 0; e < 16; ++e)
                worst = std::max(
                    worst,
                    std::abs(r.output(i, e)
                             - expectedOutput->values[std::size_t((b * 6 + i) * 16 + e)]));
        QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));
        // Item 1 pads its last two keys: their weights are 0 in every row.
        if (b == 1)
            QCOMPARE(r.weights[0](0, 5), 0.0);
        else
            QVERIFY(r.weights[0](0, 5) > 0.0);
    }
    const auto outOfRange = invalidArgumentOf([&] { tensorBatchItem(arrays, 3); });
    QVERIFY(outOfRange);
    QVERIFY2(outOfRange->contains(QStringLiteral("B = 3")), qPrintable(*outOfRange));
    QVERIFY(outOfRange->contains(QStringLiteral("batch index 3")));
    QVERIFY(invalidArgumentOf([&] { tensorBatchItem(arrays, -1); }));

    // Without a batch axis: unchanged for item 0, an error for another.
    NamedArrays flat
        = {{"query", counting({2, 4})}, {"key", counting({3, 4})}, {"value", counting({3, 4})}};
    QCOMPARE(tensorBatchSize(flat), Index(0));
    QCOMPARE(tensorBatchItem(flat, 0).size(), flat.size());
    const auto noAxis = invalidArgumentOf([&] { tensorBatchItem(flat, 1); });
    QVERIFY(noAxis && noAxis->contains(QStringLiteral("no batch axis")));
    // Slices keep C order: item 1 of (2, 2, 3) is values 6 … 11.
    NamedArrays batched = {{"query", counting({2, 2, 3})},
                           {"key", counting({2, 2, 3})},
                           {"value", counting({2, 2, 3})},
                           {"key_padding_mask", counting({2, 2})}};
    const NamedArrays item = tensorBatchItem(batched, 1);
    QCOMPARE(item[0].second.shape, (std::vector<std::int64_t> {2, 3}));
    QCOMPARE(item[0].second.values.front(), 6.0);
    QCOMPARE(item[0].second.values.back(), 11.0);
    QCOMPARE(item[3].second.values, (std::vector<double> {2.0, 3.0}));
    // Mixed ranks and different B are refused naming the shapes.
    NamedArrays mixed = batched;
    mixed[1].second = counting({2, 3});
    const auto mixedMessage = invalidArgumentOf([&] { tensorBatchSize(mixed); });
    QVERIFY(mixedMessage && mixedMessage->contains(QStringLiteral("key (2, 3)")));
    NamedArrays different = batched;
    different[2].second = counting({3, 2, 3});
    const auto differentMessage = invalidArgumentOf([&] { tensorBatchSize(different); });
    QVERIFY(differentMessage && differentMessage->contains(QStringLiteral("batch sizes")));
    NamedArrays badMask = batched;
    badMask[3].second = counting({3, 2});
    QVERIFY(invalidArgumentOf([&] { tensorBatchItem(badMask, 0); }));
    // A second array named query with an empty batch axis (the first one sets B) is refused
    // naming it, not sliced past its end.
    NamedArrays twice = batched;
    twice.emplace_back("query", counting({0, 8, 8}));
    const auto twiceMessage = invalidArgumentOf([&] { tensorBatchItem(twice, 0); });
    QVERIFY(twiceMessage && twiceMessage->contains(QStringLiteral("'query' (0, 8, 8)")));
    QVERIFY(twiceMessage->contains(QStringLiteral("no batch item 0")));
}

QTEST_GUILESS_MAIN(TestTensorCase)
#include "tst_tensorcase.moc"
