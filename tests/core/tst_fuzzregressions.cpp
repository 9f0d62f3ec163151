// Inputs found by fuzzing the readers under AddressSanitizer and UndefinedBehaviorSanitizer
// (tests/reference/fixtures/fuzz/), each refused with a message naming the problem, at the level
// of the core: the .npy and .npz readers and writer, the tensor case, multi-head attention.
// The command-line side of the same inputs is tst_cli_fuzzregressions.

#include "core/attention/multihead.h"
#include "core/base/types.h"
#include "core/io/npy.h"
#include "core/io/tensorcase.h"
#include "testutil.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

using namespace attn;

namespace {

QString fuzzInput(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/fuzz/%1").arg(name);
}

/// The message of the exception `f` throws as E, or nullopt when it throws nothing.
template<typename E> std::optional<QString> errorOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const E &e) {
        return QString::fromUtf8(e.what());
    }
    return std::nullopt;
}

/// "a<i>", built step by step: GCC 12 warns falsely (-Wrestrict) on "a" + std::string.
std::string memberName(int i)
{
    std::string s(1, 'a');
    s += std::to_string(i);
    return s;
}

NpyArray matrixArray(Index rows, Index cols, double start = 0.25)
{
    MatrixD m(rows, cols);
    for (Index i = 0; i < m.size(); ++i)
        m.data()[i] = start + 0.125 * double(i % 7);
    return NpyArray::fromMatrix<double>(m);
}

} // namespace

class TestFuzzRegressions : public QObject
{
    Q_OBJECT

private slots:
    // F1, F2, F6: zero-size shapes whose other axes overflow, as NumPy refuses them.
    void npyRefusesWhatNumpyRefuses_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        QTest::newRow("F1 (2^32, 2^32, 0)") << "npy-size-overflow.min.npy"
                                            << "shape (4294967296, 4294967296, 0) has more "
                                               "elements than fit in int64 with 8-byte items";
        QTest::newRow("F2 Fortran (0, 5123094776113237558, 5)")
            << "npy-fortran-stride-overflow.min.npy"
            << "shape (0, 5123094776113237558, 5)";
        QTest::newRow("F6 (38088880888888, 888888, 2, 0)")
            << "npy-roundtrip-refused.npy"
            << "shape (38088880888888, 888888, 2, 0)";
    }
    void npyRefusesWhatNumpyRefuses()
    {
        QFETCH(QString, file);
        QFETCH(QString, problem);
        const std::string path = fuzzInput(file).toStdString();
        const auto err = errorOf<NpyError>([&] { readNpy(path); });
        QVERIFY2(err.has_value(), "no NpyError");
        QVERIFY2(err->startsWith(QString::fromStdString(path) + ": "), qPrintable(*err));
        QVERIFY2(err->contains(problem), qPrintable(*err));
        QVERIFY2(err->contains(QLatin1String("exceeds 2^63 - 1 bytes")), qPrintable(*err));
        // The same bytes in memory.
        QFile f(fuzzInput(file));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        const auto err2 = errorOf<NpyError>([&] {
            parseNpy(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                     std::size_t(bytes.size()), "mem");
        });
        QVERIFY2(err2 && err2->contains(problem), qPrintable(err2.value_or("no error")));
    }

    // Found by fuzz_npy: int64 values without an exact double were rounded on reading (and
    // 2^63 − 14 read as 2^63, which the writer then refused): refused, naming the value.
    void int64BeyondExactDoublesIsRefused()
    {
        const std::string path = fuzzInput("npy-int64-beyond-2p53.npy").toStdString();
        const auto err = errorOf<NpyError>([&] { readNpy(path); });
        QVERIFY2(err.has_value(), "no NpyError");
        QVERIFY2(err->contains(QLatin1String("int64 value 71776119061217310 at flat index 5 has "
                                             "no exact float64")),
                 qPrintable(*err));
        // ±2^53 and 2^62 are exact and read.
        NpyArray a;
        a.type = NpyType::Int64;
        a.shape = {3};
        a.values = {9007199254740992.0, -9007199254740992.0, 4611686018427387904.0};
        const std::vector<std::uint8_t> bytes = serializeNpy(a);
        QCOMPARE(parseNpy(bytes.data(), bytes.size(), "mem").values, a.values);
    }

    void npzMemberWithFortranOverflowIsRefused()
    {
        const std::string path = fuzzInput("cli-fortran-stride-overflow.npz").toStdString();
        for (const auto &read : std::initializer_list<std::function<void()>> {
                 [&] { readNpz(path); }, [&] { readNpzHeaders(path); },
                 [&] { readNpzMember(path, "query"); }}) {
            const auto err = errorOf<NpyError>(read);
            QVERIFY2(err.has_value(), "no NpyError");
            QVERIFY2(err->startsWith(QString::fromStdString(path) + ": member 'query.npy': "),
                     qPrintable(*err));
            QVERIFY2(err->contains(QLatin1String("shape (0, 5123094776113237558, 5)")),
                     qPrintable(*err));
        }
    }

    // NumPy's rule, on both sides: item size × product of the non-zero axes ≤ 2^63 − 1. What the
    // writer writes the reader reads back, and what one refuses the other refuses.
    void readerAndWriterAgreeOnZeroSizeShapes_data()
    {
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<int>("type");
        QTest::addColumn<bool>("accepted"); // np.empty(shape, dtype) succeeds in NumPy 1.24
        const qint64 p31 = qint64(1) << 31, p62 = qint64(1) << 62;
        const qint64 max = std::numeric_limits<qint64>::max();
        QTest::newRow("(2^31, 2^31, 0) u1")
            << QList<qint64> {p31, p31, 0} << int(NpyType::UInt8) << true;
        QTest::newRow("(2^31, 2^31, 0) f8")
            << QList<qint64> {p31, p31, 0} << int(NpyType::Float64) << false;
        QTest::newRow("(2^63-1, 0) u1") << QList<qint64> {max, 0} << int(NpyType::UInt8) << true;
        QTest::newRow("(0, 2^63-1) f8") << QList<qint64> {0, max} << int(NpyType::Float64) << false;
        QTest::newRow("(2^62, 2, 0) u1")
            << QList<qint64> {p62, 2, 0} << int(NpyType::UInt8) << false;
        QTest::newRow("(2^32, 2^32, 0) f8") << QList<qint64> {qint64(1) << 32, qint64(1) << 32, 0}
                                            << int(NpyType::Float64) << false;
        QTest::newRow("(5, 0) f8") << QList<qint64> {5, 0} << int(NpyType::Float64) << true;
        QTest::newRow("Fortran-like (0, 2^40, 5) f8")
            << QList<qint64> {0, qint64(1) << 40, 5} << int(NpyType::Float64) << true;
    }
    void readerAndWriterAgreeOnZeroSizeShapes()
    {
        QFETCH(QList<qint64>, shape);
        QFETCH(int, type);
        QFETCH(bool, accepted);
        NpyArray a;
        a.type = NpyType(type);
        a.shape.assign(shape.begin(), shape.end());
        QCOMPARE(a.size(), std::int64_t(0));
        std::vector<std::uint8_t> bytes;
        const auto writeError = errorOf<NpyError>([&] { bytes = serializeNpy(a); });
        QCOMPARE(!writeError.has_value(), accepted);
        // Hand-made header for the reader (the writer's header when it accepted the shape).
        std::string shapeText = "(";
        for (qsizetype i = 0; i < shape.size(); ++i)
            shapeText += (i ? ", " : "") + std::to_string(shape[i]);
        shapeText += shape.size() == 1 ? ",)" : ")";
        const char *descr = a.type == NpyType::UInt8 ? "|u1" : "<f8";
        std::string header = std::string("{'descr': '") + descr
            + "', 'fortran_order': True, 'shape': " + shapeText + ", }";
        header.append(64 - (10 + header.size() + 1) % 64, ' ');
        header += '\n';
        std::vector<std::uint8_t> file = {0x93,
                                          'N',
                                          'U',
                                          'M',
                                          'P',
                                          'Y',
                                          1,
                                          0,
                                          std::uint8_t(header.size() & 0xff),
                                          std::uint8_t(header.size() >> 8)};
        file.insert(file.end(), header.begin(), header.end());
        for (const auto &image : {file, bytes}) {
            if (image.empty())
                continue;
            std::optional<NpyArray> read;
            const auto readError
                = errorOf<NpyError>([&] { read = parseNpy(image.data(), image.size(), "mem"); });
            QVERIFY2(readError.has_value() != accepted, qPrintable(readError.value_or("read")));
            if (read) {
                QCOMPARE(read->shape, a.shape);
                QVERIFY(read->values.empty());
                QCOMPARE(read->size(), std::int64_t(0));
            }
        }
    }

    void sizeNeverOverflows()
    {
        NpyArray a;
        a.shape = {std::int64_t(1) << 32, std::int64_t(1) << 32, 0};
        QCOMPARE(a.size(), std::int64_t(0));
        a.shape = {std::int64_t(1) << 32, std::int64_t(1) << 32};
        const auto err = errorOf<NpyError>([&] { a.size(); });
        QVERIFY2(err && err->contains(QLatin1String("more elements than fit in int64")),
                 qPrintable(err.value_or("no error")));
        // slice() of an empty stack with huge axes: nothing to copy, nothing overflows.
        a.shape = {2, std::int64_t(1) << 40, 0};
        QCOMPARE(a.slice<double>(1, "a").rows(), Index(std::int64_t(1) << 40));
        QCOMPARE(a.slice<double>(1, "a").cols(), Index(0));
    }

    // F3: multi-head attention without queries or without keys.
    void multiheadWithoutQueriesOrKeys_data()
    {
        QTest::addColumn<int>("nQ");
        QTest::addColumn<int>("nK");
        QTest::newRow("n_q = 0") << 0 << 5;
        QTest::newRow("n_k = 0") << 3 << 0;
        QTest::newRow("both 0") << 0 << 0;
    }
    void multiheadWithoutQueriesOrKeys()
    {
        QFETCH(int, nQ);
        QFETCH(int, nK);
        const Index d = 8, h = 4;
        MultiheadAttention<double> layer(d, h, true);
        layer.setIdentity();
        layer.outProjBias().setLinSpaced(d, -1.0, 1.0);
        const MatrixD q = MatrixD::Ones(nQ, d), kv = MatrixD::Ones(nK, d);
        const MultiheadResult<double> r = layer.forward(q, kv, kv);
        QCOMPARE(r.output.rows(), Index(nQ));
        QCOMPARE(r.output.cols(), d);
        QCOMPARE(r.weights.size(), std::size_t(h));
        for (Index i = 0; i < h; ++i) {
            QCOMPARE(r.weights[std::size_t(i)].rows(), Index(nQ));
            QCOMPARE(r.weights[std::size_t(i)].cols(), Index(nK));
            QCOMPARE(r.fullyMasked[std::size_t(i)].size(), std::size_t(nQ));
            for (std::uint8_t f : r.fullyMasked[std::size_t(i)])
                QCOMPARE(f, std::uint8_t(nK == 0 ? 1 : 0)); // no keys: every row fully masked
        }
        // No keys: the weights are zero, so each output row is out_proj_bias.
        for (Index i = 0; i < r.output.rows(); ++i)
            for (Index j = 0; j < d; ++j)
                QCOMPARE(r.output(i, j), layer.outProjBias()(j));
    }

    // F3 through the tensor case: the committed inputs are refused naming the empty array.
    void tensorCaseRefusesEmptyInputs_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        QTest::newRow("F3 zero queries") << "cli-mh-zero-queries.npz"
                                         << "array 'query' float64 (0, 32) has an empty axis";
        QTest::newRow("F3 zero keys") << "cli-mh-zero-keys.npz"
                                      << "array 'key' float64 (0, 32) has an empty axis";
    }

    // F4's input: num_heads = 2^63 − 1 has no exact double, so the reader refuses it before
    // the tensor case sees it (in-memory num_heads values: numHeadsCheckedBeforeTheCast).
    void hugeNumHeadsIsRefusedByTheReader()
    {
        const std::string path = fuzzInput("cli-mh-dmodel0-hugeheads.npz").toStdString();
        const auto err = errorOf<NpyError>([&] { loadTensorCase<double>(path); });
        QVERIFY2(err.has_value(), "no NpyError");
        QVERIFY2(err->contains(QLatin1String("member 'num_heads.npy': int64 value "
                                             "9223372036854775807 at flat index 0 has no exact "
                                             "float64")),
                 qPrintable(*err));
    }
    void tensorCaseRefusesEmptyInputs()
    {
        QFETCH(QString, file);
        QFETCH(QString, problem);
        const std::string path = fuzzInput(file).toStdString();
        for (bool single : {false, true}) {
            const auto err = errorOf<InvalidArgument>([&] {
                if (single)
                    loadTensorCase<float>(path);
                else
                    loadTensorCase<double>(path);
            });
            QVERIFY2(err.has_value(), "no InvalidArgument");
            QVERIFY2(err->contains(problem), qPrintable(*err));
        }
    }

    // F4: num_heads checked as an integer in [1, d_model] before it is cast.
    void numHeadsCheckedBeforeTheCast_data()
    {
        QTest::addColumn<double>("heads");
        QTest::addColumn<QString>("shown");
        // INT64_MAX read from an int64 array is the double 2^63.
        QTest::newRow("INT64_MAX") << 9223372036854775807.0 << "num_heads = 9223372036854775808";
        QTest::newRow("INT64_MIN") << -9223372036854775808.0 << "num_heads = -9223372036854775808";
        QTest::newRow("d_model + 8") << 24.0 << "num_heads = 24";
        QTest::newRow("0") << 0.0 << "num_heads = 0";
        QTest::newRow("5 (does not divide)") << 5.0 << "num_heads = 5";
    }
    void numHeadsCheckedBeforeTheCast()
    {
        QFETCH(double, heads);
        QFETCH(QString, shown);
        const Index d = 16, n = 3;
        NamedArrays arrays = {{"query", matrixArray(n, d)},
                              {"key", matrixArray(n, d)},
                              {"value", matrixArray(n, d)},
                              {"in_proj_weight", matrixArray(3 * d, d)},
                              {"out_proj_weight", matrixArray(d, d)}};
        NpyArray h;
        h.type = NpyType::Int64;
        h.values = {heads};
        arrays.emplace_back("num_heads", h);
        const auto err
            = errorOf<InvalidArgument>([&] { tensorCaseFromArrays<double>(arrays, "case.npz"); });
        QVERIFY2(err.has_value(), "no InvalidArgument");
        QVERIFY2(
            err->contains(shown + QStringLiteral(" must be at least 1 and divide d_model = 16")),
            qPrintable(*err));
        QVERIFY2(err->contains(QLatin1String("an integer in [1, d_model]")), qPrintable(*err));
    }

    // F7: opening an .npz is linear in its members (it was quadratic: 65 535 members took 19 s
    // in a Release build). The file is made here (a few MiB).
    void manyMembersOpenQuickly()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("many.npz")).toStdString();
        const int members = 65535;
        NamedArrays arrays;
        arrays.reserve(members);
        for (int i = 0; i < members; ++i)
            arrays.emplace_back(memberName(i), NpyArray::scalarInt(i));
        writeNpz(path, arrays, false);
        QElapsedTimer timer;
        timer.start();
        const auto read = readNpz(path);
        const auto headers = readNpzHeaders(path);
        const qint64 ms = timer.elapsed();
        QCOMPARE(read.size(), std::size_t(members));
        QCOMPARE(headers.size(), std::size_t(members));
        for (int i : {0, 1, 4999, 65534}) {
            QCOMPARE(read[std::size_t(i)].first, memberName(i));
            QCOMPARE(read[std::size_t(i)].second.toScalarInt("a"), std::int64_t(i));
            QCOMPARE(headers[std::size_t(i)].second.type, NpyType::Int64);
            QVERIFY(headers[std::size_t(i)].second.shape.empty());
        }
        // Linear takes ~1 s here even under AddressSanitizer; quadratic took minutes there.
        QVERIFY2(ms < 30000, qPrintable(QStringLiteral("%1 ms").arg(ms)));
        // The writer's duplicate check is linear too: a duplicate after 65 535 members.
        arrays.emplace_back("a7", NpyArray::scalarInt(7));
        const std::string dup = dir.filePath(QStringLiteral("dup.npz")).toStdString();
        const auto err = errorOf<NpyError>([&] { writeNpz(dup, arrays, false); });
        QVERIFY2(err && err->contains(QLatin1String("duplicate array name 'a7'")),
                 qPrintable(err.value_or("no error")));
        QVERIFY(!QFile::exists(QString::fromStdString(dup)));
    }

    // F8: the declared sizes are known, and checked against a budget, before decompressing.
    void budgetCheckedBeforeDecompressing()
    {
        const std::string path = fuzzInput("oom-npz-amplify-256mi.npz").toStdString();
        const auto headers = readNpzHeaders(path);
        QCOMPARE(headers.size(), std::size_t(1));
        QCOMPARE(headers[0].first, std::string("query"));
        QCOMPARE(headers[0].second.type, NpyType::UInt8);
        QCOMPARE(headers[0].second.shape, std::vector<std::int64_t> {268435456});
        QCOMPARE(headers[0].second.dataBytes, std::uint64_t(268435456));
        QCOMPARE(headers[0].second.valueBytes(), std::uint64_t(268435456) * 8);
        const auto err = errorOf<NpyError>([&] { readNpz(path, std::uint64_t(16) << 20); });
        QVERIFY2(err.has_value(), "no NpyError");
        QVERIFY2(err->contains(QLatin1String("its arrays declare 2415919104 bytes")),
                 qPrintable(*err));
        QVERIFY2(err->contains(QLatin1String("over the budget of 16777216 bytes")),
                 qPrintable(*err));
        QVERIFY2(err->contains(QLatin1String("query uint8 (268435456,)")), qPrintable(*err));
    }

    void headersAndBudgetOfASmallArchive()
    {
        QTemporaryDir dir;
        const std::string ok = dir.filePath(QStringLiteral("ok.npz")).toStdString();
        writeNpz(ok, {{"x", matrixArray(2, 3)}}, false);
        const auto headers = readNpzHeaders(ok);
        QCOMPARE(headers.at(0).second.shape, (std::vector<std::int64_t> {2, 3}));
        QCOMPARE(headers.at(0).second.count, std::uint64_t(6));
        QCOMPARE(headers.at(0).second.dataBytes, std::uint64_t(48));
        QVERIFY(!headers.at(0).second.fortranOrder);
        QCOMPARE(readNpz(ok, 48 + 6 * 8).size(), std::size_t(1)); // exactly the budget
        const auto over = errorOf<NpyError>([&] { readNpz(ok, 48 + 6 * 8 - 1); });
        QVERIFY2(over && over->contains(QLatin1String("declare 96 bytes")),
                 qPrintable(over.value_or("no error")));
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzzregressions.moc"
