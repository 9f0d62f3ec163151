// Bitwise tests of attn::TorchGenerator against PyTorch's CPU generator (fixtures from
// tests/reference/make_torch_random_fixtures.py; torch's version and the CPU capability each
// fixture ran under are recorded in index.txt). Every fixture replays its sequence of calls on
// one generator and compares every value, so the stream position between calls (the cached
// second normal, the redrawn tail of 16-wide blocks, the out_proj bias draws) is checked too.

#include "core/attention/multihead.h"
#include "core/experiments/experiments_p.h"
#include "core/random/torchrandom.h"

#include <QFile>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using attn::TorchCpuCapability;
using attn::TorchGenerator;

namespace {

const QString kDir = QStringLiteral(ATTN_FIXTURE_DIR "/torchrandom/");

using Entry = QHash<QString, QString>;

QList<Entry> readIndex()
{
    QFile f(kDir + QStringLiteral("index.txt"));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text))
        qFatal("cannot open %s", qPrintable(f.fileName()));
    QList<Entry> entries;
    while (!f.atEnd()) {
        const QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        Entry e;
        for (const QString &field : line.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const qsizetype eq = field.indexOf(QLatin1Char('='));
            e.insert(field.left(eq), field.mid(eq + 1));
        }
        entries << e;
    }
    return entries;
}

std::vector<std::int64_t> readWords(const QString &name, qsizetype count)
{
    QFile f(kDir + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open fixture %s", qPrintable(f.fileName()));
    const QByteArray bytes = f.readAll();
    if (bytes.size() != count * 8)
        qFatal("fixture %s: %lld bytes, expected %lld", qPrintable(f.fileName()),
               static_cast<long long>(bytes.size()), static_cast<long long>(count * 8));
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    if (!bytes.isEmpty()) // an empty vector's data() may be null, which memcpy must not get
        std::memcpy(out.data(), bytes.constData(), static_cast<std::size_t>(bytes.size()));
    return out;
}

/// One produced value: an integer, or a float/double stored as its float64 bit pattern (float32
/// values are widened exactly, as the fixture script stores them).
struct Value
{
    std::int64_t word;
    bool isFloat;
    bool isFloat32;
};

void pushDouble(std::vector<Value> &out, double v)
{
    out.push_back({std::bit_cast<std::int64_t>(v), true, false});
}

void pushFloat(std::vector<Value> &out, float v)
{
    out.push_back({std::bit_cast<std::int64_t>(double(v)), true, true});
}

template<typename T> void pushAll(std::vector<Value> &out, const T *data, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, float>)
            pushFloat(out, data[i]);
        else
            pushDouble(out, data[i]);
    }
}

template<typename T>
void runMha(TorchGenerator &rng, const QStringList &parts, std::vector<Value> &out)
{
    const bool bias = !(parts.size() > 4 && parts[4] == QLatin1String("nobias"));
    attn::MultiheadAttention<T> layer(parts[2].toLongLong(), parts[3].toLongLong(), bias);
    attn::initTorchDefault(layer, rng);
    pushAll(out, layer.inProjWeight().data(), std::size_t(layer.inProjWeight().size()));
    if (bias)
        pushAll(out, layer.inProjBias().data(), std::size_t(layer.inProjBias().size()));
    pushAll(out, layer.outProjWeight().data(), std::size_t(layer.outProjWeight().size()));
    if (bias)
        pushAll(out, layer.outProjBias().data(), std::size_t(layer.outProjBias().size()));
}

/// Replays one call of the fixture language (see make_torch_random_fixtures.py) and appends
/// what it returned, with the index where each call starts in `starts`.
void runCall(TorchGenerator &rng, const QString &call, std::vector<Value> &out)
{
    const QStringList parts = call.split(QLatin1Char(':'));
    const QString &kind = parts[0];
    const bool f32 = parts.size() > 1 && parts[1] == QLatin1String("f32");
    if (kind == QLatin1String("state")) {
        for (const std::uint32_t w : rng.state())
            out.push_back({std::int64_t(w), false, false});
        out.push_back({std::int64_t(rng.left()), false, false});
        out.push_back({std::int64_t(rng.next()), false, false});
    } else if (kind == QLatin1String("int32")) {
        for (int i = 0; i < parts[1].toInt(); ++i)
            out.push_back({std::int64_t(rng.random() % (std::uint32_t(1) << 31)), false, false});
    } else if (kind == QLatin1String("int64")) {
        for (int i = 0; i < parts[1].toInt(); ++i)
            out.push_back({std::int64_t(rng.random64() % (std::uint64_t(1) << 63)), false, false});
    } else if (kind == QLatin1String("rand")) {
        for (int i = 0; i < parts[2].toInt(); ++i) {
            if (f32)
                pushFloat(out, rng.uniformFloat());
            else
                pushDouble(out, rng.uniformDouble());
        }
    } else if (kind == QLatin1String("randn")) {
        std::size_t count = 1;
        for (const QString &axis : parts[2].split(QLatin1Char('x')))
            count *= std::size_t(axis.toULongLong());
        if (f32) {
            std::vector<float> v(count);
            rng.randn(v.data(), count);
            pushAll(out, v.data(), count);
        } else {
            std::vector<double> v(count);
            rng.randn(v.data(), count);
            pushAll(out, v.data(), count);
        }
    } else if (kind == QLatin1String("uniform")) {
        const std::size_t count = std::size_t(parts[2].toULongLong());
        const double lo = std::strtod(parts[3].toLatin1().constData(), nullptr);
        const double hi = std::strtod(parts[4].toLatin1().constData(), nullptr);
        if (f32) {
            std::vector<float> v(count);
            rng.uniform(v.data(), count, lo, hi);
            pushAll(out, v.data(), count);
        } else {
            std::vector<double> v(count);
            rng.uniform(v.data(), count, lo, hi);
            pushAll(out, v.data(), count);
        }
    } else if (kind == QLatin1String("randperm")) {
        for (const std::int64_t v : rng.randperm(parts[1].toLongLong()))
            out.push_back({v, false, false});
    } else if (kind == QLatin1String("mha")) {
        if (f32)
            runMha<float>(rng, parts, out);
        else
            runMha<double>(rng, parts, out);
    } else {
        qFatal("unknown fixture call %s", qPrintable(call));
    }
}

QString describe(const Value &v)
{
    if (!v.isFloat)
        return QString::number(v.word);
    const double d = std::bit_cast<double>(v.word);
    return QStringLiteral("%1 (0x%2)")
        .arg(d, 0, 'g', v.isFloat32 ? 9 : 17)
        .arg(quint64(v.word), 16, 16, QLatin1Char('0'));
}

} // namespace

class TestTorchRandom : public QObject
{
    Q_OBJECT

private slots:
    void fixtures_data();
    void fixtures();
    void knownValues();
    void seedTruncatedTo32Bits();
    void mhaInitIgnoresHeads();
    void fill16Avx2DiffersFromLibm();
    void experimentsDrawTheListing();
    void normalStreamInPieces_data();
    void normalStreamInPieces();
    void badArguments();
};

void TestTorchRandom::fixtures_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<qsizetype>("count");
    QTest::addColumn<quint64>("seed");
    QTest::addColumn<QString>("capability");
    QTest::addColumn<QString>("calls");
    const QList<Entry> entries = readIndex();
    QVERIFY2(entries.size() > 50, "too few torch fixtures: run make_torch_random_fixtures.py");
    for (const Entry &e : entries) {
        QTest::newRow(qPrintable(e.value(QStringLiteral("name"))))
            << e.value(QStringLiteral("file"))
            << qsizetype(e.value(QStringLiteral("count")).toLongLong())
            << quint64(e.value(QStringLiteral("seed")).toULongLong())
            << e.value(QStringLiteral("capability")) << e.value(QStringLiteral("calls"));
    }
}

void TestTorchRandom::fixtures()
{
    QFETCH(QString, file);
    QFETCH(qsizetype, count);
    QFETCH(quint64, seed);
    QFETCH(QString, capability);
    QFETCH(QString, calls);
    QVERIFY2(capability == QLatin1String("avx2") || capability == QLatin1String("default"),
             qPrintable(capability));
    TorchGenerator rng(seed,
                       capability == QLatin1String("avx2") ? TorchCpuCapability::Avx2
                                                           : TorchCpuCapability::Default);
    const std::vector<std::int64_t> expected = readWords(file, count);
    std::vector<Value> got;
    std::vector<std::pair<std::size_t, QString>> starts; // first value of each call
    for (const QString &call : calls.split(QLatin1Char(','))) {
        starts.emplace_back(got.size(), call);
        runCall(rng, call, got);
    }
    QCOMPARE(got.size(), expected.size());
    std::size_t mismatches = 0, first = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i].word != expected[i]) {
            ++mismatches;
            first = std::min(first, i);
        }
    }
    if (mismatches != 0) {
        QString call;
        std::size_t offset = 0;
        for (const auto &[start, name] : starts) {
            if (start <= first) {
                call = name;
                offset = first - start;
            }
        }
        Value want = got[first];
        want.word = expected[first];
        QFAIL(qPrintable(QStringLiteral("%1 of %2 values differ; first in call %3 at element %4: "
                                        "got %5, torch %6")
                             .arg(mismatches)
                             .arg(got.size())
                             .arg(call)
                             .arg(offset)
                             .arg(describe(got[first]), describe(want))));
    }
}

void TestTorchRandom::knownValues()
{
    // Values printed by PyTorch 1.13 after torch.manual_seed(0) (and std::mt19937(0)).
    TorchGenerator rng(0);
    QCOMPARE(rng.random(), 2357136044U);
    QCOMPARE(rng.random(), 2546248239U);
    QCOMPARE(rng.random(), 3071714933U);
    TorchGenerator perm(3);
    QCOMPARE(perm.randperm(7), (std::vector<std::int64_t> {5, 3, 4, 6, 0, 2, 1}));
    TorchGenerator init(0);
    attn::MultiheadAttention<double> layer(16, 4);
    attn::initTorchDefault(layer, init);
    QCOMPARE(layer.outProjWeight()(0, 0), 0.2350265009032765);
    QCOMPARE(layer.outProjWeight()(0, 1), 0.10390993219989396);
    QCOMPARE(layer.inProjWeight()(0, 0), 0.030338188502964988);
    QCOMPARE(layer.inProjWeight()(0, 1), -0.12511802292053203);
}

void TestTorchRandom::seedTruncatedTo32Bits()
{
    TorchGenerator a((std::uint64_t(1) << 32) + 5), b(5);
    for (int i = 0; i < 2000; ++i)
        QCOMPARE(a.random(), b.random());
    // manual_seed clears the cached normal: randn(1) twice, reseed, randn(1) is the first again.
    TorchGenerator c(9);
    double first = 0, second = 0, again = 0;
    c.randn(&first, 1);
    c.randn(&second, 1);
    QVERIFY(first != second);
    c.manualSeed(9);
    c.randn(&again, 1);
    QCOMPARE(again, first);
}

void TestTorchRandom::mhaInitIgnoresHeads()
{
    // torch's init never looks at the number of heads: MHA(16, 1/4/16) share parameters.
    for (const bool bias : {true, false}) {
        TorchGenerator r1(0), r16(0);
        attn::MultiheadAttention<float> h1(16, 1, bias), h16(16, 16, bias);
        attn::initTorchDefault(h1, r1);
        attn::initTorchDefault(h16, r16);
        QCOMPARE(h1.inProjWeight(), h16.inProjWeight());
        QCOMPARE(h1.outProjWeight(), h16.outProjWeight());
        QCOMPARE(r1.random(), r16.random());
        QVERIFY(h1.inProjBias().isZero(0) && h1.outProjBias().isZero(0));
    }
}

void TestTorchRandom::fill16Avx2DiffersFromLibm()
{
    // The two float32 kernels agree to a few ulps but not bit for bit: the capability matters.
    TorchGenerator avx(5, TorchCpuCapability::Avx2), libm(5, TorchCpuCapability::Default);
    std::vector<float> a(4096), b(4096);
    avx.randn(a.data(), a.size());
    libm.randn(b.data(), b.size());
    int differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        QVERIFY2(std::fabs(a[i] - b[i]) <= 4e-6f * std::max(1.0f, std::fabs(b[i])),
                 qPrintable(QString::number(i)));
        differ += a[i] != b[i];
    }
    QVERIFY(differ > 0);
}

void TestTorchRandom::experimentsDrawTheListing()
{
    // E7's layer, tokens and replaced positions with generator torch are the torch listing's
    // (fixture listing_f64_e7: MHA(16, 4), randn(1, 8, 16), randn(1, 3, 16) after seed 0).
    const attn::experiments::SeededLayer s
        = attn::experiments::seededLayer(attn::RandomSource::Torch, 0, 16, 4, 8, 3, true);
    std::vector<Value> got;
    pushAll(got, s.layer.inProjWeight().data(), std::size_t(s.layer.inProjWeight().size()));
    pushAll(got, s.layer.inProjBias().data(), std::size_t(s.layer.inProjBias().size()));
    pushAll(got, s.layer.outProjWeight().data(), std::size_t(s.layer.outProjWeight().size()));
    pushAll(got, s.layer.outProjBias().data(), std::size_t(s.layer.outProjBias().size()));
    pushAll(got, s.x.data(), std::size_t(s.x.size()));
    pushAll(got, s.more.data(), std::size_t(s.more.size()));
    const std::vector<std::int64_t> expected
        = readWords(QStringLiteral("listing_f64_e7_avx2.bin"), qsizetype(got.size()));
    for (std::size_t i = 0; i < got.size(); ++i)
        QVERIFY2(got[i].word == expected[i], qPrintable(QString::number(i)));
    // E5's permutation: torch.randperm(n, generator=torch.Generator().manual_seed(3)).
    QCOMPARE(s.permutation, TorchGenerator(3).randperm(8));
    QCOMPARE(
        attn::experiments::seededLayer(attn::RandomSource::Torch, 0, 16, 4, 7, 0, true).permutation,
        (std::vector<std::int64_t> {5, 3, 4, 6, 0, 2, 1}));
}

void TestTorchRandom::normalStreamInPieces_data()
{
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("piece");
    for (const int count : {1, 2, 15, 16, 17, 31, 32, 33, 47, 100, 1000})
        for (const int piece : {1, 7, 16, 33, 5000})
            QTest::addRow("%d in pieces of %d", count, piece) << count << piece;
}

void TestTorchRandom::normalStreamInPieces()
{
    // Reading torch.randn(count) in pieces equals the one-shot fill (itself checked against
    // torch above), and leaves the generator where the one-shot fill does, cache included.
    QFETCH(int, count);
    QFETCH(int, piece);
    TorchGenerator whole(11), pieces(11);
    double warm = 0;
    whole.randn(&warm, 1); // a cached second normal the ≥ 16 path must leave alone
    pieces.randn(&warm, 1);
    std::vector<double> expected(static_cast<std::size_t>(count)),
        got(static_cast<std::size_t>(count));
    whole.randn(expected.data(), expected.size());
    attn::TorchNormalStream stream(pieces, std::size_t(count));
    for (std::size_t at = 0; at < got.size();) {
        const std::size_t n = std::min(std::size_t(piece), got.size() - at);
        stream.read(got.data() + at, n);
        at += n;
    }
    QCOMPARE(stream.remaining(), std::size_t(0));
    for (std::size_t i = 0; i < got.size(); ++i)
        QVERIFY2(std::bit_cast<std::uint64_t>(got[i]) == std::bit_cast<std::uint64_t>(expected[i]),
                 qPrintable(QStringLiteral("element %1: %2 vs %3")
                                .arg(i)
                                .arg(got[i], 0, 'g', 17)
                                .arg(expected[i], 0, 'g', 17)));
    double a = 0, b = 0;
    whole.randn(&a, 1);
    pieces.randn(&b, 1);
    QCOMPARE(b, a);
    QCOMPARE(pieces.random(), whole.random());
    QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, stream.read(&a, 1));
}

void TestTorchRandom::badArguments()
{
    TorchGenerator rng(0);
    QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, rng.randperm(-1));
    QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, rng.randperm((std::int64_t(1) << 30) + 1));
    QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, rng.randnMatrix(-1, 3));
    QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument,
                             rng.randnMatrix(Eigen::Index(1) << 30, Eigen::Index(1) << 20));
    QCOMPARE(rng.randperm(0).size(), std::size_t(0));
}

QTEST_APPLESS_MAIN(TestTorchRandom)
#include "tst_torchrandom.moc"
