// Bitwise tests of attn::Generator against numpy.random.default_rng streams (fixtures from
// tests/reference/make_random_fixtures.py, NumPy's version is recorded in index.txt).

#include "core/random/random.h"

#include <QFile>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

using attn::Generator;

namespace {

const QString kDir = QStringLiteral(ATTN_FIXTURE_DIR "/random/");

using Entry = QHash<QString, QString>;

/// The 64-bit seed when the decimal seed fits, for checking Generator(std::uint64_t) too.
std::optional<std::uint64_t> seedAsUint64(const QString &decimal)
{
    bool ok = false;
    const qulonglong v = decimal.toULongLong(&ok);
    return ok ? std::optional<std::uint64_t>(v) : std::nullopt;
}

Generator generatorFor(const QString &seed)
{
    return Generator::fromDecimalString(seed.toStdString());
}

QString describe(double v)
{
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return QStringLiteral("%1 (0x%2)").arg(v, 0, 'g', 17).arg(bits, 16, 16, QLatin1Char('0'));
}

QString describe(float v)
{
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return QStringLiteral("%1 (0x%2)").arg(double(v), 0, 'g', 9).arg(bits, 8, 16, QLatin1Char('0'));
}

QString describe(std::int64_t v)
{
    return QString::number(v);
}

QString describe(std::uint64_t v)
{
    return QStringLiteral("0x%1").arg(v, 16, 16, QLatin1Char('0'));
}

/// Reads a raw little-endian array of `count` values of T (the test machine is little-endian).
template<typename T> std::vector<T> readBin(const QString &name, qsizetype count)
{
    QFile f(kDir + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot open fixture %s", qPrintable(f.fileName()));
    const QByteArray bytes = f.readAll();
    if (bytes.size() != count * qsizetype(sizeof(T)))
        qFatal("fixture %s: %lld bytes, expected %lld", qPrintable(f.fileName()),
               static_cast<long long>(bytes.size()),
               static_cast<long long>(count * qsizetype(sizeof(T))));
    std::vector<T> out(static_cast<std::size_t>(count));
    std::memcpy(out.data(), bytes.constData(), static_cast<std::size_t>(bytes.size()));
    return out;
}

/// Bitwise comparison; on failure names the first differing index and both values.
template<typename T>
bool sameBits(const T *actual, const T *expected, std::size_t count, QString *message)
{
    if (std::memcmp(actual, expected, count * sizeof(T)) == 0)
        return true;
    for (std::size_t i = 0; i < count; ++i) {
        if (std::memcmp(&actual[i], &expected[i], sizeof(T)) != 0) {
            *message = QStringLiteral("first difference at index %1 of %2: got %3, NumPy %4")
                           .arg(i)
                           .arg(count)
                           .arg(describe(actual[i]), describe(expected[i]));
            return false;
        }
    }
    return true;
}

#define COMPARE_BITS(actual, expected, count)                                                      \
    do {                                                                                           \
        QString msg_;                                                                              \
        if (!sameBits((actual), (expected), (count), &msg_))                                       \
            QFAIL(qPrintable(msg_));                                                               \
    } while (false)

double parseHexDouble(const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    char *end = nullptr;
    const double v = std::strtod(utf8.constData(), &end);
    if (end != utf8.constData() + utf8.size())
        qFatal("bad hex float '%s' in fixture", utf8.constData());
    return v;
}

} // namespace

class TestRandom : public QObject
{
    Q_OBJECT

private:
    QList<Entry> m_entries;
    QList<Entry> entries(const QString &kind) const
    {
        QList<Entry> out;
        for (const Entry &e : m_entries) {
            if (e.value(QStringLiteral("kind")) == kind)
                out.append(e);
        }
        return out;
    }
    /// Adds one data row per fixture of `kind`, named "<kind> seed=<seed> <extra>".
    void addRows(const QString &kind, const QStringList &extraKeys = {})
    {
        QTest::addColumn<Entry>("entry");
        const QList<Entry> list = entries(kind);
        QVERIFY2(!list.isEmpty(), qPrintable("no fixtures of kind " + kind));
        for (const Entry &e : list) {
            QString name = QStringLiteral("seed=") + e.value(QStringLiteral("seed"));
            for (const QString &key : extraKeys)
                name += QLatin1Char(' ') + key + QLatin1Char('=') + e.value(key);
            QTest::newRow(qPrintable(name)) << e;
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QFile f(kDir + QStringLiteral("index.txt"));
        QVERIFY2(f.open(QIODevice::ReadOnly | QIODevice::Text), qPrintable(f.fileName()));
        while (!f.atEnd()) {
            const QString line = QString::fromUtf8(f.readLine()).trimmed();
            if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
                continue;
            Entry e;
            for (const QString &field : line.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
                const qsizetype eq = field.indexOf(QLatin1Char('='));
                QVERIFY2(eq > 0, qPrintable("bad index field " + field));
                e.insert(field.left(eq), field.mid(eq + 1));
            }
            m_entries.append(e);
        }
        QVERIFY(m_entries.size() > 50);
    }

    // ---- SeedSequence and PCG64 ----

    void seedSequenceState_data() { addRows(QStringLiteral("state")); }
    void seedSequenceState()
    {
        QFETCH(Entry, entry);
        const QString seed = entry.value(QStringLiteral("seed"));
        const QStringList words = entry.value(QStringLiteral("words")).split(QLatin1Char(','));
        // Rebuild the entropy words from the decimal seed the way NumPy splits a Python int.
        std::vector<std::uint32_t> entropy;
        {
            // Decimal -> little-endian 32-bit words by repeated multiply-add.
            entropy.push_back(0);
            for (const QChar c : seed) {
                std::uint64_t carry = std::uint64_t(c.digitValue());
                for (std::uint32_t &w : entropy) {
                    const std::uint64_t t = std::uint64_t(w) * 10U + carry;
                    w = std::uint32_t(t);
                    carry = t >> 32;
                }
                if (carry)
                    entropy.push_back(std::uint32_t(carry));
            }
        }
        const std::vector<std::uint32_t> state = attn::SeedSequence(entropy).generateState(8);
        QCOMPARE(qsizetype(state.size()), words.size());
        for (qsizetype i = 0; i < words.size(); ++i)
            QCOMPARE(state[std::size_t(i)], words[i].toUInt());
    }

    void rawStream_data() { addRows(QStringLiteral("raw")); }
    void rawStream()
    {
        QFETCH(Entry, entry);
        const qsizetype count = entry.value(QStringLiteral("count")).toLongLong();
        const auto expected = readBin<std::uint64_t>(entry.value(QStringLiteral("file")), count);
        Generator g = generatorFor(entry.value(QStringLiteral("seed")));
        std::vector<std::uint64_t> actual(expected.size());
        for (auto &v : actual)
            v = g.bitGenerator().next64();
        COMPARE_BITS(actual.data(), expected.data(), actual.size());
    }

    // ---- random() and standard_normal() streams ----

    void uniformStream_data() { addRows(QStringLiteral("random")); }
    void uniformStream()
    {
        QFETCH(Entry, entry);
        const QString seed = entry.value(QStringLiteral("seed"));
        const qsizetype count = entry.value(QStringLiteral("count")).toLongLong();
        const auto expected = readBin<double>(entry.value(QStringLiteral("file")), count);

        Generator g = generatorFor(seed);
        std::vector<double> actual(expected.size());
        g.fillRandom(actual.data(), actual.size());
        COMPARE_BITS(actual.data(), expected.data(), actual.size());

        // The same numbers one call at a time, and as a C-order matrix.
        Generator one = generatorFor(seed);
        for (std::size_t i = 0; i < 1000; ++i)
            actual[i] = one.random();
        COMPARE_BITS(actual.data(), expected.data(), 1000);
        Generator mat = generatorFor(seed);
        const attn::MatrixD m = mat.random(count / 500, 500); // count/500 × 500, row-major
        QCOMPARE(m.size(), count);
        COMPARE_BITS(m.data(), expected.data(), expected.size());
    }

    void normalStream_data() { addRows(QStringLiteral("standard_normal")); }
    void normalStream()
    {
        QFETCH(Entry, entry);
        const QString seed = entry.value(QStringLiteral("seed"));
        const qsizetype count = entry.value(QStringLiteral("count")).toLongLong();
        const auto expected = readBin<double>(entry.value(QStringLiteral("file")), count);

        // standard_normal(size=(rows, cols)) fills in C order: the flat stream row by row.
        Generator g = generatorFor(seed);
        const attn::MatrixD m = g.standardNormal(count / 400, 400); // count/400 × 400, row-major
        QCOMPARE(m.size(), count);
        COMPARE_BITS(m.data(), expected.data(), expected.size());
        QCOMPARE(m(1, 0), expected[400]);

        Generator one = generatorFor(seed);
        std::vector<double> actual(expected.size());
        for (auto &v : actual)
            v = one.standardNormal();
        COMPARE_BITS(actual.data(), expected.data(), actual.size());

        // The tail (|z| > r) and the wedges are exercised: NumPy's stream has values past r.
        const double r = 3.6541528853610087963519472518;
        qsizetype tail = 0;
        for (double v : expected)
            tail += std::abs(v) > r ? 1 : 0;
        QVERIFY2(tail > 0, "fixture has no tail draws");

        if (const auto seed64 = seedAsUint64(seed)) {
            Generator direct(*seed64);
            for (std::size_t i = 0; i < 100; ++i)
                QCOMPARE(direct.standardNormal(), expected[i]);
        }
    }

    void normalMatrix_data()
    {
        addRows(QStringLiteral("normal"), {QStringLiteral("rows"), QStringLiteral("cols")});
    }
    void normalMatrix()
    {
        QFETCH(Entry, entry);
        const Eigen::Index rows = entry.value(QStringLiteral("rows")).toLongLong();
        const Eigen::Index cols = entry.value(QStringLiteral("cols")).toLongLong();
        const double loc = parseHexDouble(entry.value(QStringLiteral("loc")));
        const double scale = parseHexDouble(entry.value(QStringLiteral("scale")));
        const auto expected = readBin<double>(entry.value(QStringLiteral("file")), rows * cols);
        Generator g = generatorFor(entry.value(QStringLiteral("seed")));
        const attn::MatrixD m = g.normal(loc, scale, rows, cols); // rows × cols, row-major
        QCOMPARE(m.rows(), rows);
        QCOMPARE(m.cols(), cols);
        COMPARE_BITS(m.data(), expected.data(), expected.size());
    }

    void normalFloatStream_data() { addRows(QStringLiteral("standard_normal_f32")); }
    void normalFloatStream()
    {
        QFETCH(Entry, entry);
        const qsizetype count = entry.value(QStringLiteral("count")).toLongLong();
        const auto expected = readBin<float>(entry.value(QStringLiteral("file")), count);
        Generator g = generatorFor(entry.value(QStringLiteral("seed")));
        std::vector<float> actual(expected.size());
        for (auto &v : actual)
            v = g.standardNormalFloat();
        COMPARE_BITS(actual.data(), expected.data(), actual.size());
    }

    // ---- integers() and permutation() ----

    void integers_data()
    {
        addRows(QStringLiteral("integers"), {QStringLiteral("low"), QStringLiteral("high")});
    }
    void integers()
    {
        QFETCH(Entry, entry);
        const qsizetype count = entry.value(QStringLiteral("count")).toLongLong();
        const std::int64_t low = entry.value(QStringLiteral("low")).toLongLong();
        const std::int64_t high = entry.value(QStringLiteral("high")).toLongLong();
        const auto expected = readBin<std::int64_t>(entry.value(QStringLiteral("file")), count);
        Generator g = generatorFor(entry.value(QStringLiteral("seed")));
        std::vector<std::int64_t> actual(expected.size());
        for (auto &v : actual) {
            v = g.integers(low, high);
            QVERIFY(v >= low && v < high);
        }
        COMPARE_BITS(actual.data(), expected.data(), actual.size());
    }

    void permutation_data() { addRows(QStringLiteral("permutation"), {QStringLiteral("n")}); }
    void permutation()
    {
        QFETCH(Entry, entry);
        const std::int64_t n = entry.value(QStringLiteral("n")).toLongLong();
        const auto expected = readBin<std::int64_t>(entry.value(QStringLiteral("file")), 2 * n);
        Generator g = generatorFor(entry.value(QStringLiteral("seed")));
        // Two permutations in a row, as the fixture script draws them.
        std::vector<std::int64_t> actual = g.permutation(n);
        const std::vector<std::int64_t> second = g.permutation(n);
        actual.insert(actual.end(), second.begin(), second.end());
        COMPARE_BITS(actual.data(), expected.data(), actual.size());
        std::vector<bool> seen(std::size_t(n), false);
        for (std::int64_t i = 0; i < n; ++i)
            seen[std::size_t(actual[std::size_t(i)])] = true;
        QVERIFY(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
    }

    // ---- a mixed sequence of calls on one generator ----

    void mixedSequence_data() { addRows(QStringLiteral("sequence")); }
    void mixedSequence()
    {
        QFETCH(Entry, entry);
        QFile f(kDir + entry.value(QStringLiteral("file")));
        QVERIFY2(f.open(QIODevice::ReadOnly | QIODevice::Text), qPrintable(f.fileName()));
        Generator g = generatorFor(entry.value(QStringLiteral("seed")));
        int lineNo = 0;
        while (!f.atEnd()) {
            const QString line = QString::fromUtf8(f.readLine()).trimmed();
            ++lineNo;
            if (line.isEmpty())
                continue;
            const QStringList parts = line.split(QLatin1Char(' '));
            QCOMPARE(parts.size(), 2);
            const QStringList call = parts[0].split(QLatin1Char(':'));
            const QString &want = parts[1];
            QString got;
            const QString &op = call[0];
            if (op == QLatin1String("integers")) {
                got = QString::number(g.integers(call[1].toLongLong(), call[2].toLongLong()));
            } else if (op == QLatin1String("permutation")) {
                QStringList items;
                for (std::int64_t v : g.permutation(call[1].toLongLong()))
                    items.append(QString::number(v));
                got = items.join(QLatin1Char(','));
            } else {
                double value = 0;
                if (op == QLatin1String("random"))
                    value = g.random();
                else if (op == QLatin1String("standard_normal"))
                    value = g.standardNormal();
                else if (op == QLatin1String("standard_normal_f32"))
                    value = double(g.standardNormalFloat());
                else if (op == QLatin1String("normal"))
                    value = g.normal(call[1].toDouble(), call[2].toDouble());
                else
                    QFAIL(qPrintable("unknown call " + op));
                const double expected = parseHexDouble(want);
                if (std::memcmp(&value, &expected, sizeof value) != 0)
                    QFAIL(qPrintable(QStringLiteral("line %1 (%2): got %3, NumPy %4")
                                         .arg(lineNo)
                                         .arg(parts[0], describe(value), describe(expected))));
                continue;
            }
            if (got != want)
                QFAIL(qPrintable(QStringLiteral("line %1 (%2): got %3, NumPy %4")
                                     .arg(lineNo)
                                     .arg(parts[0], got, want)));
        }
        QVERIFY(lineNo > 100);
    }

    // ---- seeds from text ----

    void fromDecimalString_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("sameAs"); // a decimal seed that must give the same stream
        QTest::newRow("zero") << "0"
                              << "0";
        QTest::newRow("leading zeros") << "00042"
                                       << "42";
        QTest::newRow("2^32") << "4294967296"
                              << "4294967296";
        QTest::newRow("2^63+5") << "9223372036854775813"
                                << "9223372036854775813";
        QTest::newRow("2^64-1") << "18446744073709551615"
                                << "18446744073709551615";
    }
    void fromDecimalString()
    {
        QFETCH(QString, text);
        QFETCH(QString, sameAs);
        Generator a = Generator::fromDecimalString(text.toStdString());
        Generator b(sameAs.toULongLong());
        for (int i = 0; i < 64; ++i)
            QCOMPARE(a.bitGenerator().next64(), b.bitGenerator().next64());
    }

    void fromDecimalStringBig()
    {
        // 2**100 + 3 and 2**63 + 5 against NumPy's first normals (also covered by the streams).
        for (const char *seed : {"1267650600228229401496703205379", "9223372036854775813"}) {
            const QList<Entry> list = entries(QStringLiteral("standard_normal"));
            const auto it = std::find_if(list.begin(), list.end(), [&](const Entry &e) {
                return e.value(QStringLiteral("seed")) == QLatin1String(seed);
            });
            QVERIFY2(it != list.end(), seed);
            const auto expected = readBin<double>(it->value(QStringLiteral("file")),
                                                  it->value(QStringLiteral("count")).toLongLong());
            Generator g = Generator::fromDecimalString(seed);
            for (std::size_t i = 0; i < 1000; ++i)
                QCOMPARE(g.standardNormal(), expected[i]);
        }
        // 2**100 + 3 as words: 3, 0, 0, 16; high zero words do not change the seed.
        Generator words = Generator::fromWords({3, 0, 0, 16, 0, 0});
        Generator text = Generator::fromDecimalString("1267650600228229401496703205379");
        for (int i = 0; i < 16; ++i)
            QCOMPARE(words.bitGenerator().next64(), text.bitGenerator().next64());
        // A seed of more than four words (past the pool size) still mixes every word in.
        Generator big = Generator::fromDecimalString("340282366920938463463374607431768211457");
        Generator bigOther
            = Generator::fromDecimalString("340282366920938463463374607431768211458");
        QVERIFY(big.bitGenerator().next64() != bigOther.bitGenerator().next64());
    }

    void fromDecimalStringRejects_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("negative") << "-1";
        QTest::newRow("letters") << "abc";
        QTest::newRow("empty") << "";
        QTest::newRow("plus sign") << "+1";
        QTest::newRow("space") << " 1";
        QTest::newRow("trailing junk") << "12a";
        QTest::newRow("decimal point") << "1.0";
    }
    void fromDecimalStringRejects()
    {
        QFETCH(QString, text);
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument,
                                 Generator::fromDecimalString(text.toStdString()));
    }

    // ---- bad arguments ----

    void badArguments()
    {
        Generator g(0);
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, g.integers(5, 5));
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, g.integers(6, 5));
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, g.permutation(-1));
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, g.normal(0.0, -1.0, 2, 2));
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument,
                                 g.normal(0.0, std::numeric_limits<double>::quiet_NaN()));
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, g.standardNormal(-1, 3));
        QVERIFY_THROWS_EXCEPTION(attn::InvalidArgument, g.random(2, -3));
        // A failed call draws nothing: the stream continues as if it had not been made.
        Generator fresh(0);
        QCOMPARE(g.bitGenerator().next64(), fresh.bitGenerator().next64());
        // Empty shapes and permutation(0) are valid and draw nothing.
        QCOMPARE(g.standardNormal(0, 5).size(), Eigen::Index(0));
        QVERIFY(g.permutation(0).empty());
        QCOMPARE(g.bitGenerator().next64(), fresh.bitGenerator().next64());
    }
};

QTEST_GUILESS_MAIN(TestRandom)
#include "tst_random.moc"
