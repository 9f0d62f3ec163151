// Head scores (core/analysis/headscores.h) against the independent NumPy reference of
// tests/reference/make_headscore_fixtures.py (fixtures/headscores/*.npz): every score of random,
// masked and planted stacks under the four exclusion options to 1e-12, the planted heads' exact
// values, and the errors that name their numbers.

#include "testutil.h"

#include "core/analysis/headscores.h"
#include "core/io/npy.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace attn;

namespace {

constexpr double kTol = 1e-12;

struct Fixture
{
    std::map<std::string, NpyArray> arrays;
    std::vector<std::string> tokens; ///< string tokens, when the file has them

    const NpyArray &operator[](const std::string &name) const { return arrays.at(name); }
    bool has(const std::string &name) const { return arrays.count(name) > 0; }
};

Fixture load(const QString &name)
{
    Fixture f;
    NpzStrings strings;
    const std::string path
        = QStringLiteral(ATTN_FIXTURE_DIR "/headscores/%1.npz").arg(name).toStdString();
    for (auto &[n, a] : readNpz(path, std::numeric_limits<std::uint64_t>::max(), &strings))
        f.arrays.emplace(n, std::move(a));
    for (auto &[n, s] : strings) {
        if (n == "tokens")
            f.tokens = s.values;
    }
    return f;
}

/// The stack of a fixture: `attentions` (L, H, n, n) or `weights` (H, n, n) as one layer.
const NpyArray &stackOf(const Fixture &f, HeadStackShape *shape)
{
    const NpyArray &a = f.has("attentions") ? f["attentions"] : f["weights"];
    const int nd = a.ndim();
    shape->layers = nd == 4 ? a.shape[0] : 1;
    shape->heads = a.shape[std::size_t(nd - 3)];
    shape->n = a.shape[std::size_t(nd - 1)];
    return a;
}

std::vector<std::int64_t> idsOf(const Fixture &f)
{
    if (!f.tokens.empty())
        return tokenIds(f.tokens);
    std::vector<std::int64_t> ids;
    for (double v : f["ids"].values)
        ids.push_back(std::int64_t(v));
    return ids;
}

HeadScores scoresOf(const Fixture &f, const std::vector<std::int64_t> &ids,
                    const HeadScoreOptions &o)
{
    HeadStackShape shape;
    const NpyArray &a = stackOf(f, &shape);
    if (a.type == NpyType::Float32) {
        const std::vector<float> values(a.values.begin(), a.values.end()); // exact: read as f4
        return headScores<float>(values, shape, ids, o);
    }
    return headScores<double>(a.values, shape, ids, o);
}

/// (L, H) reference array as a matrix; option o of an (4, L, H) one.
MatrixD expected(const Fixture &f, const std::string &name, int option = -1)
{
    const NpyArray &a = f[name];
    if (option < 0)
        return a.toMatrix<double>(name);
    return a.slice<double>(option, name);
}

HeadScoreOptions optionsOf(int option)
{
    HeadScoreOptions o;
    o.excludeFirstKey = (option & 1) != 0;
    o.excludeCurrent = (option & 2) != 0;
    return o;
}

/// QVERIFY that `f` throws InvalidArgument whose message contains every one of `parts`.
constexpr auto expectError = &test::expectError<InvalidArgument>;

} // namespace

class TestHeadScores : public QObject
{
    Q_OBJECT

private slots:
    void matchesNumPy_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("option"); // exclude_bos + 2 · exclude_current_token
        const QStringList names = {QStringLiteral("none"), QStringLiteral("bos"),
                                   QStringLiteral("current"), QStringLiteral("bos+current")};
        for (const char *file : {"random_f64", "random_f32", "masked", "strings", "planted"}) {
            for (int o = 0; o < 4; ++o) {
                const QString row = QString::fromLatin1(file) + QLatin1Char(' ') + names[o];
                QTest::newRow(qPrintable(row)) << QString::fromLatin1(file) << o;
            }
        }
    }

    void matchesNumPy()
    {
        QFETCH(QString, file);
        QFETCH(int, option);
        const Fixture f = load(file);
        const HeadScores s = scoresOf(f, idsOf(f), optionsOf(option));
        QVERIFY(s.haveTokens);
        ATTN_COMPARE_CLOSE(s.previousToken, expected(f, "previous_token", option), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.duplicateToken, expected(f, "duplicate_token", option), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.induction, expected(f, "induction", option), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.sink, expected(f, "sink"), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.entropy, expected(f, "entropy"), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.effectiveTerms, expected(f, "effective_terms"), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.distance, expected(f, "distance"), kTol, 0.0);
        QCOMPARE(s.sinkFlag.cast<double>(), expected(f, "sink_flag"));
        QCOMPARE(s.zeroRows.cast<double>(), expected(f, "zero_rows"));
    }

    void plantedExact_data()
    {
        QTest::addColumn<int>("option");
        for (int o = 0; o < 4; ++o)
            QTest::addRow("option %d", o) << o;
    }

    // The planted heads against exact rational arithmetic: one-hot heads score exactly 1.0
    // (previous-token head once its row 0 on itself is excluded; induction and duplicate heads
    // once the BOS is), exactly (n−1)/n = 10/11 without exclusions; the uniform causal head its
    // harmonic fraction to the last bits.
    void plantedExact()
    {
        QFETCH(int, option);
        const Fixture f = load(QStringLiteral("planted"));
        const HeadScores s = scoresOf(f, idsOf(f), optionsOf(option));
        ATTN_COMPARE_CLOSE(s.previousToken, expected(f, "exact_previous_token", option), 1e-15,
                           0.0);
        ATTN_COMPARE_CLOSE(s.duplicateToken, expected(f, "exact_duplicate_token", option), 1e-15,
                           0.0);
        ATTN_COMPARE_CLOSE(s.induction, expected(f, "exact_induction", option), 1e-15, 0.0);
        const bool bos = option & 1, current = option & 2;
        QCOMPARE(s.previousToken(0, 0), bos || current ? 1.0 : 10.0 / 11.0);
        if (bos) {
            QCOMPARE(s.induction(0, 2), 1.0);
            QCOMPARE(s.duplicateToken(0, 3), 1.0);
        }
        QCOMPARE(s.induction(0, 0), 0.0);
        QCOMPARE(s.sinkFlag(0, 2), std::uint8_t(1)); // 6 of 11 rows on the BOS
        QCOMPARE(s.sink(0, 2), 6.0 / 11.0);
    }

    void prefixMatching_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("random_f64") << QStringLiteral("random_f64");
        QTest::newRow("planted") << QStringLiteral("planted");
    }

    void prefixMatching()
    {
        QFETCH(QString, file);
        const Fixture f = load(file);
        HeadStackShape shape;
        const NpyArray &a = stackOf(f, &shape);
        const MatrixD p = prefixMatchingScores<double>(
            a.values, shape, f["repeat_n"].toScalarInt("repeat_n"), f["bos"].toScalarInt("bos"));
        ATTN_COMPARE_CLOSE(p, expected(f, "prefix_matching"), kTol, 0.0);
        if (file == QLatin1String("planted"))
            QCOMPARE(p(0, 2), 1.0); // the planted induction head
    }

    void prefixMatchingWithoutBos()
    {
        // N = 2, no BOS: n = 4; second copy i = 2, 3 read keys 1, 2.
        std::vector<double> a(16, 0.0);
        a[2 * 4 + 1] = 0.25;
        a[3 * 4 + 2] = 0.75;
        const MatrixD p = prefixMatchingScores<double>(a, {1, 1, 4}, 2, false);
        QCOMPARE(p(0, 0), 0.5);
    }

    void withoutTokens()
    {
        const Fixture f = load(QStringLiteral("random_f64"));
        const HeadScores s = scoresOf(f, {}, {});
        QVERIFY(!s.haveTokens);
        QVERIFY(s.duplicateToken.array().isNaN().all());
        QVERIFY(s.induction.array().isNaN().all());
        ATTN_COMPARE_CLOSE(s.previousToken, expected(f, "previous_token", 0), kTol, 0.0);
        ATTN_COMPARE_CLOSE(s.sink, expected(f, "sink"), kTol, 0.0);
    }

    void sinkEpsilon()
    {
        const Fixture f = load(QStringLiteral("planted"));
        HeadScoreOptions o;
        o.sinkEpsilon = 6.0 / 11.0; // not above itself
        QCOMPARE(scoresOf(f, idsOf(f), o).sinkFlag(0, 2), std::uint8_t(0));
        o.sinkEpsilon = 0.5;
        QCOMPARE(scoresOf(f, idsOf(f), o).sinkFlag(0, 2), std::uint8_t(1));
    }

    void tokenIdsOfStrings()
    {
        const std::vector<std::int64_t> ids = tokenIds({"a", "b", "a", "c", "b"});
        QCOMPARE(ids, (std::vector<std::int64_t> {0, 1, 0, 2, 1}));
    }

    void rankCollapse()
    {
        const Fixture f = load(QStringLiteral("rank_collapse"));
        const NpyArray &e = f["expected"];
        const char *names[] = {"x0", "x1", "x2"};
        for (std::size_t k = 0; k < 3; ++k) {
            const double r = rankCollapseResidual(f[names[k]].toMatrix<double>(names[k]));
            QVERIFY2(std::abs(r - e.values[k]) <= kTol, names[k]);
        }
        const double r = rankCollapseResidual(f["x3"].toMatrix<float>("x3"));
        QVERIFY(std::abs(r - e.values[3]) <= kTol);
        QVERIFY(std::isnan(rankCollapseResidual(MatrixD(MatrixD::Zero(3, 2)))));
    }

    void errors()
    {
        const std::vector<double> v(2 * 3 * 4 * 4, 0.25);
        expectError(
            [&] {
                headScores<double>(std::span(v).first(95), {2, 3, 4}, {});
            },
            {QStringLiteral("95 values"), QStringLiteral("2 × 3 × 4 × 4 = 96")});
        expectError(
            [&] {
                headScores<double>(v, {0, 3, 4}, {});
            },
            {QStringLiteral("layers = 0"), QStringLiteral("heads = 3")});
        expectError([&] { headScores<double>({}, {1, 1, 0}, {}); }, {QStringLiteral("n = 0")});
        expectError(
            [&] {
                headScores<double>(v, {2, 3, 4}, {1, 2, 3});
            },
            {QStringLiteral("3 tokens"), QStringLiteral("n = 4")});
        HeadScoreOptions o;
        o.sinkEpsilon = std::nan("");
        expectError(
            [&] {
                headScores<double>(v, {2, 3, 4}, {}, o);
            },
            {QStringLiteral("sink threshold")});
        expectError(
            [&] {
                prefixMatchingScores<double>(v, {2, 3, 4}, 2, true);
            },
            {QStringLiteral("n = 4"), QStringLiteral("N = 2"), QStringLiteral("make 5")});
        expectError(
            [&] {
                prefixMatchingScores<double>(v, {2, 3, 4}, 0, false);
            },
            {QStringLiteral("N = 0")});
        expectError([&] { rankCollapseResidual(MatrixD(0, 3)); }, {QStringLiteral("0×3")});
    }
};

QTEST_MAIN(TestHeadScores)
#include "tst_headscores.moc"
