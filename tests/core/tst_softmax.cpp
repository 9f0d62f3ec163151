// Row softmax (core/attention/softmax.h): rows sum to 1, max subtraction keeps extreme float32 rows
// finite, -inf is an exactly-zero weight, fully masked rows give zeros and a flag, NaN/+inf are
// reported with their position. Every case runs in float32 and float64.

#include "core/attention/softmax.h"
#include "core/random/random.h"
#include "testutil.h"

#include <QList>
#include <QTest>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

using namespace attn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template<typename T> double tolerance()
{
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

template<typename T> Matrix<T> fromRows(const std::vector<std::vector<double>> &rows)
{
    Matrix<T> m(Index(rows.size()), rows.empty() ? 0 : Index(rows.front().size()));
    for (Index i = 0; i < m.rows(); ++i)
        for (Index j = 0; j < m.cols(); ++j)
            m(i, j) = T(rows[std::size_t(i)][std::size_t(j)]);
    return m;
}

/// Reference softmax of one row in long double, straight from the definition
/// exp(x_j − max) / Σ exp(x_k − max), with -inf entries weighted 0.
std::vector<double> referenceSoftmax(const std::vector<double> &x)
{
    long double mx = -kInf;
    for (double v : x)
        mx = std::max<long double>(mx, v);
    std::vector<long double> e(x.size());
    long double sum = 0;
    for (std::size_t j = 0; j < x.size(); ++j) {
        e[j] = x[j] == -kInf ? 0.0L : std::exp((long double)x[j] - mx);
        sum += e[j];
    }
    std::vector<double> out(x.size());
    for (std::size_t j = 0; j < x.size(); ++j)
        out[j] = double(e[j] / sum);
    return out;
}

} // namespace

namespace {

template<typename T> void largeNegativeFillRow()
{
    // A −1e9 fill (the E11 lesson) and arguments around the underflow: on the vectorised
    // path every weight equals the C library's exp(x − max) / Σ, as NumPy computes it —
    // exactly 0 for the fill, a subnormal just above the underflow — never the clamped
    // value of a packet exp (a tiny positive number where NumPy has 0).
    const bool f32 = std::is_same_v<T, float>;
    const std::vector<double> special = f32
        ? std::vector<double> {-1e9, -1e9, -86.0, -88.0, -95.0, -103.0, -104.5, -200.0}
        : std::vector<double> {-1e9, -1e9, -700.0, -709.5, -720.0, -744.0, -746.0, -1000.0};
    Generator rng {11};
    Matrix<T> scores = rng.standardNormal(2, 67).cast<T>();
    scores.col(0).setConstant(T(0)); // the row maximum: exponents are x − 0 = x
    for (Index r = 0; r < scores.rows(); ++r)
        for (Index j = 1; j < scores.cols(); ++j)
            scores(r, j) = std::min(scores(r, j), T(-0.5));
    for (std::size_t k = 0; k < special.size(); ++k) {
        scores(0, Index(3 + 5 * k)) = T(special[k]);
        scores(1, Index(2 + 7 * k)) = T(special[k]);
    }
    const Matrix<T> w = softmaxRows<T>(scores);
    for (Index r = 0; r < scores.rows(); ++r) {
        std::vector<T> e(std::size_t(scores.cols()));
        T sum = 0;
        for (Index j = 0; j < scores.cols(); ++j)
            sum += e[std::size_t(j)] = std::exp(scores(r, j));
        for (Index j = 0; j < scores.cols(); ++j) {
            const T want = e[std::size_t(j)] * (T(1) / sum);
            if (want == T(0)) // underflow: exactly 0, as NumPy
                QCOMPARE(w(r, j), T(0));
            else if (want < std::numeric_limits<T>::min()) // subnormal: a few digits only
                QVERIFY2(std::abs(w(r, j) - want) <= T(1e-3) * want,
                         qPrintable(QStringLiteral("x = %1: %2 vs %3")
                                        .arg(double(scores(r, j)))
                                        .arg(double(w(r, j)))
                                        .arg(double(want))));
            else
                QVERIFY2(std::abs(double(w(r, j)) - double(want)) <= (f32 ? 1e-5 : 1e-12),
                         qPrintable(QStringLiteral("x = %1: %2 vs %3")
                                        .arg(double(scores(r, j)))
                                        .arg(double(w(r, j)))
                                        .arg(double(want))));
        }
    }
    QCOMPARE(w(0, 3), T(0)); // −1e9
    QCOMPARE(w(1, 2), T(0));
}

} // namespace

class TestSoftmax : public QObject
{
    Q_OBJECT

private:
    template<typename T> void rowsSumToOne(Index rows, Index cols, double spread, int seed)
    {
        Generator rng {std::uint64_t(seed)};
        const Matrix<T> scores = (rng.standardNormal(rows, cols) * spread).cast<T>();
        std::vector<std::uint8_t> flags;
        const Matrix<T> w = softmaxRows(scores, &flags);
        QCOMPARE(w.rows(), rows);
        QCOMPARE(w.cols(), cols);
        QCOMPARE(flags.size(), std::size_t(rows));
        for (Index i = 0; i < rows; ++i) {
            QCOMPARE(flags[std::size_t(i)], std::uint8_t(0));
            double sum = 0;
            for (Index j = 0; j < cols; ++j) {
                QVERIFY(std::isfinite(double(w(i, j))));
                QVERIFY(w(i, j) >= T(0));
                sum += double(w(i, j));
            }
            QVERIFY2(std::abs(sum - 1.0) <= tolerance<T>(),
                     qPrintable(QStringLiteral("row %1 sums to %2").arg(i).arg(sum, 0, 'g', 17)));
        }
        // Each row against the long double reference.
        Matrix<double> expected(rows, cols);
        for (Index i = 0; i < rows; ++i) {
            std::vector<double> x(static_cast<std::size_t>(cols));
            for (Index j = 0; j < cols; ++j)
                x[std::size_t(j)] = double(scores(i, j));
            const std::vector<double> p = referenceSoftmax(x);
            for (Index j = 0; j < cols; ++j)
                expected(i, j) = p[std::size_t(j)];
        }
        ATTN_COMPARE_CLOSE(w.template cast<double>(), expected, tolerance<T>(), 0.0);
    }

    template<typename T> void extremeRow(const std::vector<double> &row)
    {
        const Matrix<T> scores = fromRows<T>({row});
        std::vector<std::uint8_t> flags;
        const Matrix<T> w = softmaxRows(scores, &flags);
        QCOMPARE(flags.at(0), std::uint8_t(0));
        double sum = 0;
        for (Index j = 0; j < w.cols(); ++j) {
            QVERIFY2(std::isfinite(double(w(0, j))), "weight is not finite");
            sum += double(w(0, j));
        }
        QVERIFY(std::abs(sum - 1.0) <= tolerance<T>());
        // The reference in long double from the float-rounded inputs.
        std::vector<double> rounded;
        for (double v : row)
            rounded.push_back(double(T(v)));
        const std::vector<double> p = referenceSoftmax(rounded);
        const Eigen::Map<const Eigen::RowVectorXd> expected(p.data(), Index(p.size()));
        ATTN_COMPARE_CLOSE(w.template cast<double>(), expected, tolerance<T>(), 0.0);
    }

    template<typename T> void maskedEntries()
    {
        // Row 0: keys 1 and 3 masked; row 1: nothing masked; row 2: only key 2 allowed.
        const Matrix<T> scores = fromRows<T>(
            {{0.5, -kInf, 2.0, -kInf}, {1.0, 2.0, 3.0, 4.0}, {-kInf, -kInf, 7.0, -kInf}});
        std::vector<std::uint8_t> flags;
        const Matrix<T> w = softmaxRows(scores, &flags);
        QCOMPARE(w(0, 1), T(0));
        QCOMPARE(w(0, 3), T(0));
        QCOMPARE(w(2, 0), T(0));
        QCOMPARE(w(2, 1), T(0));
        QCOMPARE(w(2, 3), T(0));
        QCOMPARE(w(2, 2), T(1));
        // Row 0 is the softmax of the two allowed entries [0.5, 2.0].
        const double e = std::exp(-1.5);
        QVERIFY(std::abs(double(w(0, 0)) - e / (1 + e)) <= tolerance<T>());
        QVERIFY(std::abs(double(w(0, 2)) - 1 / (1 + e)) <= tolerance<T>());
        QCOMPARE(flags, (std::vector<std::uint8_t> {0, 0, 0}));
    }

    template<typename T> void fullyMasked()
    {
        const Matrix<T> scores = fromRows<T>(
            {{-kInf, -kInf, -kInf}, {1.0, -kInf, 0.0}, {-kInf, -kInf, -kInf}, {3.0, 3.0, 3.0}});
        std::vector<std::uint8_t> flags;
        Matrix<T> w = scores;
        softmaxRowsInPlace(w, &flags);
        QCOMPARE(flags, (std::vector<std::uint8_t> {1, 0, 1, 0}));
        for (Index j = 0; j < 3; ++j) {
            QCOMPARE(w(0, j), T(0)); // zeros, never NaN
            QCOMPARE(w(2, j), T(0));
            QVERIFY(std::abs(double(w(3, j)) - 1.0 / 3.0) <= tolerance<T>());
        }
        // Without a flag vector the zeros are still written.
        Matrix<T> w2 = scores;
        softmaxRowsInPlace(w2);
        QCOMPARE(w2.row(0).sum(), T(0));
    }

    template<typename T> void nonFinite(Index row, Index col, double value)
    {
        Generator rng {3};
        Matrix<T> scores = rng.standardNormal(4, 6).cast<T>();
        scores(row, col) = T(value);
        bool thrown = false;
        try {
            softmaxRows(scores);
        } catch (const NonFiniteInput &e) {
            thrown = true;
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QStringLiteral("row %1, col %2").arg(row).arg(col)),
                     qPrintable(msg));
            QVERIFY2(
                msg.contains(std::isnan(value) ? QStringLiteral("NaN") : QStringLiteral("+inf")),
                qPrintable(msg));
        }
        QVERIFY2(thrown, "NonFiniteInput was not thrown");
    }

    template<typename T> void checkOneRow()
    {
        Generator rng {5};
        const T inf = std::numeric_limits<T>::infinity();
        for (Index cols : {1, 2, 3, 7, 16, 33, 1027}) {
            Matrix<T> m = (rng.standardNormal(6, cols) * 20.0).template cast<T>();
            for (Index j = 0; j < cols; j += 2)
                m(1, j) = -inf; // partly masked
            m.row(2).setConstant(-inf); // fully masked
            m(3, cols - 1) = T(-1e9); // large negative fill
            std::vector<std::uint8_t> flags;
            const Matrix<T> expected = softmaxRows(m, &flags);
            for (Index i = 0; i < m.rows(); ++i) {
                Matrix<T> row = m.row(i);
                const SoftmaxRowStatus status = softmaxRowInPlace(row.data(), cols);
                QCOMPARE(status,
                         flags[std::size_t(i)] ? SoftmaxRowStatus::FullyMasked
                                               : SoftmaxRowStatus::Ok);
                for (Index j = 0; j < cols; ++j)
                    QCOMPARE(row(0, j), expected(i, j)); // exact: same bits
            }
            Matrix<T> bad = m.row(0);
            bad(0, cols / 2) = std::numeric_limits<T>::quiet_NaN();
            const Matrix<T> before = bad;
            QCOMPARE(softmaxRowInPlace(bad.data(), cols), SoftmaxRowStatus::NonFinite);
            for (Index j = 0; j < cols; ++j)
                QVERIFY(bad(0, j) == before(0, j) || std::isnan(bad(0, j)));
            bad(0, cols / 2) = inf;
            QCOMPARE(softmaxRowInPlace(bad.data(), cols), SoftmaxRowStatus::NonFinite);
        }
        Matrix<T> empty(1, 0);
        QCOMPARE(softmaxRowInPlace(empty.data(), 0), SoftmaxRowStatus::FullyMasked);
    }

private slots:
    void rowsSumToOne_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<double>("spread");
        QTest::addColumn<int>("seed");
        for (bool f32 : {false, true}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s 1x1", t) << f32 << 1 << 1 << 1.0 << 0;
            QTest::addRow("%s 5x5", t) << f32 << 5 << 5 << 1.0 << 1;
            QTest::addRow("%s 7x33 odd", t) << f32 << 7 << 33 << 3.0 << 2;
            QTest::addRow("%s 64x1000 wide spread", t) << f32 << 64 << 1000 << 30.0 << 3;
            QTest::addRow("%s 300x300 parallel", t) << f32 << 300 << 300 << 5.0 << 4;
        }
    }
    void rowsSumToOne()
    {
        QFETCH(bool, float32);
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(double, spread);
        QFETCH(int, seed);
        if (float32)
            rowsSumToOne<float>(rows, cols, spread, seed);
        else
            rowsSumToOne<double>(rows, cols, spread, seed);
    }

    void extremeRows_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<QList<double>>("row");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s [1000, 1001]", t) << f32 << QList<double> {1000, 1001};
            QTest::addRow("%s [-1000, -1001]", t) << f32 << QList<double> {-1000, -1001};
            QTest::addRow("%s [88.8, 0]", t) << f32 << QList<double> {88.8, 0};
            QTest::addRow("%s [1e4, 0, -1e4]", t) << f32 << QList<double> {1e4, 0, -1e4};
            QTest::addRow("%s 40 equal 3e38 (check sum overflows)", t)
                << f32 << QList<double>(40, 3e38);
        }
    }
    void extremeRows()
    {
        QFETCH(bool, float32);
        QFETCH(QList<double>, row);
        const std::vector<double> values(row.begin(), row.end());
        if (float32)
            extremeRow<float>(values);
        else
            extremeRow<double>(values);
    }

    void thousandRowValues()
    {
        // [1000, 1001] → [1/(1+e), e/(1+e)] = [0.2689414213699951, 0.7310585786300049]:
        // exp(1000) overflows float32 and float64, the max-subtracted form does not.
        const MatrixF w = softmaxRows(fromRows<float>({{1000, 1001}, {-1000, -1001}}));
        QVERIFY(std::abs(w(0, 0) - 0.2689414213699951) <= 1e-7);
        QVERIFY(std::abs(w(0, 1) - 0.7310585786300049) <= 1e-7);
        QVERIFY(std::abs(w(1, 0) - 0.7310585786300049) <= 1e-7);
        QVERIFY(std::abs(w(1, 1) - 0.2689414213699951) <= 1e-7);
    }

    void maskedEntriesAreExactlyZero_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void maskedEntriesAreExactlyZero()
    {
        QFETCH(bool, float32);
        if (float32)
            maskedEntries<float>();
        else
            maskedEntries<double>();
    }

    void maskedEntriesWideRow()
    {
        // A long row (vectorised path) with every third key masked: the masked weights are
        // exactly 0.0, not a denormal left by a vectorised exp(-inf).
        Generator rng {5};
        MatrixD scores = rng.standardNormal(3, 257);
        for (Index j = 0; j < scores.cols(); j += 3)
            scores.col(j).setConstant(-kInf);
        for (const bool f32 : {false, true}) {
            if (f32) {
                const MatrixF w = softmaxRows<float>(scores.cast<float>());
                for (Index j = 0; j < w.cols(); j += 3)
                    QCOMPARE(w.col(j).cwiseAbs().maxCoeff(), 0.0f);
            } else {
                const MatrixD w = softmaxRows<double>(scores);
                for (Index j = 0; j < w.cols(); j += 3)
                    QCOMPARE(w.col(j).cwiseAbs().maxCoeff(), 0.0);
            }
        }
    }

    void largeNegativeFill()
    {
        largeNegativeFillRow<float>();
        largeNegativeFillRow<double>();
    }

    void fullyMaskedRows_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void fullyMaskedRows()
    {
        QFETCH(bool, float32);
        if (float32)
            fullyMasked<float>();
        else
            fullyMasked<double>();
    }

    void nonFiniteInput_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("col");
        QTest::addColumn<double>("value");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s NaN at (1, 2)", t) << f32 << 1 << 2 << std::nan("");
            QTest::addRow("%s +inf at (0, 5)", t) << f32 << 0 << 5 << kInf;
            QTest::addRow("%s +inf at (3, 0)", t) << f32 << 3 << 0 << kInf;
        }
    }
    void nonFiniteInput()
    {
        QFETCH(bool, float32);
        QFETCH(int, row);
        QFETCH(int, col);
        QFETCH(double, value);
        if (float32)
            nonFinite<float>(row, col, value);
        else
            nonFinite<double>(row, col, value);
    }

    // softmaxRowInPlace, row by row, gives softmaxRowsInPlace's bits and reports what the
    // whole-matrix form flags (fully masked) or throws for (NaN/+inf, row left untouched).
    void oneRowEqualsRows_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void oneRowEqualsRows()
    {
        QFETCH(bool, float32);
        if (float32)
            checkOneRow<float>();
        else
            checkOneRow<double>();
    }

    void emptyMatrix()
    {
        std::vector<std::uint8_t> flags {9};
        const MatrixD w = softmaxRows(MatrixD(0, 4), &flags);
        QCOMPARE(w.rows(), Index(0));
        QVERIFY(flags.empty());
        // A row with no keys at all is a fully masked row.
        const MatrixD w2 = softmaxRows(MatrixD(2, 0), &flags);
        QCOMPARE(flags, (std::vector<std::uint8_t> {1, 1}));
        QCOMPARE(w2.cols(), Index(0));
    }
};

QTEST_APPLESS_MAIN(TestSoftmax)
#include "tst_softmax.moc"
