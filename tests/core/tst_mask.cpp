// AttentionMask (core/attention/mask.h): causal alignments, key padding, the two boolean
// conventions, additive masks, OR-combination and the per-cell state bits used for display.

#include "core/attention/mask.h"
#include "core/engine/engineparameters.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace attn;

Q_DECLARE_METATYPE(attn::MatrixB)

namespace {

/// Builds a byte matrix from rows of '0'/'1' characters (row i is the i-th string).
MatrixB bits(const std::vector<const char *> &rows)
{
    const Index r = Index(rows.size());
    const Index c = r ? Index(std::strlen(rows.front())) : 0;
    MatrixB m(r, c);
    for (Index i = 0; i < r; ++i)
        for (Index j = 0; j < c; ++j)
            m(i, j) = rows[std::size_t(i)][j] == '1' ? 1 : 0;
    return m;
}

/// "masked" matrix of a mask (1 where isMasked).
MatrixB maskedCells(const AttentionMask &m, Index nQ, Index nK)
{
    MatrixB out(nQ, nK);
    for (Index i = 0; i < nQ; ++i)
        for (Index j = 0; j < nK; ++j)
            out(i, j) = m.isMasked(i, j) ? 1 : 0;
    return out;
}

QString show(const MatrixB &m)
{
    QString s;
    for (Index i = 0; i < m.rows(); ++i) {
        s += QLatin1Char('\n');
        for (Index j = 0; j < m.cols(); ++j)
            s += QString::number(int(m(i, j)));
    }
    return s;
}

#define COMPARE_BYTES(actual, expected)                                                            \
    QVERIFY2((actual) == (expected),                                                               \
             qPrintable(QStringLiteral("got") + show(actual) + QStringLiteral("\nexpected")        \
                        + show(expected)))

} // namespace

class TestMask : public QObject
{
    Q_OBJECT

private slots:
    void causal_data()
    {
        QTest::addColumn<int>("nQ");
        QTest::addColumn<int>("nK");
        QTest::addColumn<bool>("bottomRight");
        QTest::addColumn<MatrixB>("expectedMasked");
        // torch.tril(torch.ones(n_q, n_k)) is "allowed" for is_causal (top-left).
        QTest::newRow("4x4 top-left") << 4 << 4 << false << bits({"0111", "0011", "0001", "0000"});
        QTest::newRow("4x4 bottom-right equals top-left")
            << 4 << 4 << true << bits({"0111", "0011", "0001", "0000"});
        QTest::newRow("3x5 top-left") << 3 << 5 << false << bits({"01111", "00111", "00011"});
        // Bottom-right: the last query sees every key (offset n_k − n_q = 2).
        QTest::newRow("3x5 bottom-right") << 3 << 5 << true << bits({"00011", "00001", "00000"});
        QTest::newRow("5x3 top-left")
            << 5 << 3 << false << bits({"011", "001", "000", "000", "000"});
        // Offset −2: the first two queries see no key at all (fully masked rows).
        QTest::newRow("5x3 bottom-right")
            << 5 << 3 << true << bits({"111", "111", "011", "001", "000"});
        QTest::newRow("1x1") << 1 << 1 << false << bits({"0"});
    }
    void causal()
    {
        QFETCH(int, nQ);
        QFETCH(int, nK);
        QFETCH(bool, bottomRight);
        QFETCH(MatrixB, expectedMasked);
        const AttentionMask m = AttentionMask::causal(
            nQ, nK, bottomRight ? CausalAlignment::BottomRight : CausalAlignment::TopLeft);
        QVERIFY(!m.empty());
        QVERIFY(m.isPureCausal());
        QCOMPARE(m.rows(), Index(nQ));
        QCOMPARE(m.cols(), Index(nK));
        COMPARE_BYTES(maskedCells(m, nQ, nK), expectedMasked);
        const MatrixB states = m.stateMatrix(nQ, nK);
        COMPARE_BYTES(states, MatrixB(expectedMasked * std::uint8_t(MaskCausal)));
        // causalLimit is the first masked key of each row.
        for (Index i = 0; i < nQ; ++i) {
            Index firstMasked = nK;
            for (Index j = nK - 1; j >= 0; --j)
                if (expectedMasked(i, j))
                    firstMasked = j;
            QCOMPARE(m.causalLimit(i, nK), firstMasked);
        }
    }

    void slidingWindow_data()
    {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("sinks");
        QTest::addColumn<MatrixB>("expectedStates");
        // 6 × 6; C = causal (1), W = before the window (8). Query i sees i − w < j ≤ i, sinks
        // (the first s keys) are never masked by the window.
        const auto states = [](std::initializer_list<const char *> rows) {
            MatrixB m(Index(rows.size()), Index(std::strlen(*rows.begin())));
            Index i = 0;
            for (const char *r : rows) {
                for (Index j = 0; j < m.cols(); ++j)
                    m(i, j) = r[j] == 'C' ? MaskCausal : r[j] == 'W' ? MaskWindow : MaskAllowed;
                ++i;
            }
            return m;
        };
        QTest::newRow("w=3") << 3 << 0
                             << states(
                                    {".CCCCC", "..CCCC", "...CCC", "W...CC", "WW...C", "WWW..."});
        QTest::newRow("w=3 s=1") << 3 << 1
                                 << states({".CCCCC", "..CCCC", "...CCC", "....CC", ".W...C",
                                            ".WW..."});
        QTest::newRow("w=1 s=2") << 1 << 2
                                 << states({".CCCCC", "..CCCC", "...CCC", "..W.CC", "..WW.C",
                                            "..WWW."});
        QTest::newRow("w=6 (everything causal)")
            << 6 << 0 << states({".CCCCC", "..CCCC", "...CCC", "....CC", ".....C", "......"});
    }
    void slidingWindow()
    {
        QFETCH(int, window);
        QFETCH(int, sinks);
        QFETCH(MatrixB, expectedStates);
        const AttentionMask m = AttentionMask::slidingWindow(6, 6, window, sinks);
        QVERIFY(!m.isPureCausal()); // the kernels' causal shortcut must not skip the window
        QVERIFY(m.hasCausal());
        QCOMPARE(m.window(), Index(window));
        QCOMPARE(m.sinks(), Index(sinks));
        COMPARE_BYTES(m.stateMatrix(6, 6), expectedStates);
        // Each query sees exactly min(w, i + 1) keys of its window plus the sinks before it.
        for (Index i = 0; i < 6; ++i) {
            Index visible = 0;
            for (Index j = 0; j < 6; ++j)
                visible += m.isMasked(i, j) ? 0 : 1;
            const Index inWindow = std::min<Index>(window, i + 1);
            const Index sinksBefore = std::min<Index>(sinks, i + 1 - inWindow);
            QCOMPARE(visible, inWindow + sinksBefore);
        }
    }
    void slidingWindowCombinations()
    {
        // With key padding: the bits add up; with a second, different window: refused.
        const AttentionMask m
            = AttentionMask::slidingWindow(4, 4, 2, 1) | AttentionMask::keyPaddingLast(4, 4, 1);
        QCOMPARE(m.state(3, 3), std::uint8_t(MaskPadding));
        QCOMPARE(m.state(3, 1), std::uint8_t(MaskWindow));
        QCOMPARE(m.state(3, 0), std::uint8_t(MaskAllowed));
        QCOMPARE(m.state(0, 3), std::uint8_t(MaskCausal | MaskPadding));
        const AttentionMask same = m | AttentionMask::slidingWindow(4, 4, 2, 1);
        COMPARE_BYTES(same.stateMatrix(4, 4), m.stateMatrix(4, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, m | AttentionMask::slidingWindow(4, 4, 3, 1));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, AttentionMask::slidingWindow(4, 4, 0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, AttentionMask::slidingWindow(4, 4, 2, -1));
        // Bottom-right alignment: the window ends at the causal limit i + n_k − n_q.
        const AttentionMask br
            = AttentionMask::slidingWindow(2, 5, 2, 0, CausalAlignment::BottomRight);
        COMPARE_BYTES(maskedCells(br, 2, 5), bits({"11001", "11100"}));
    }

    void keyPadding()
    {
        const AttentionMask last = AttentionMask::keyPaddingLast(3, 5, 2);
        COMPARE_BYTES(maskedCells(last, 3, 5), bits({"00011", "00011", "00011"}));
        const AttentionMask vec = AttentionMask::keyPadding(2, {1, 0, 0, 7});
        COMPARE_BYTES(vec.stateMatrix(2, 4),
                      MatrixB(bits({"1001", "1001"}) * std::uint8_t(MaskPadding)));
        QVERIFY(!vec.isPureCausal());
        COMPARE_BYTES(maskedCells(AttentionMask::keyPaddingLast(2, 3, 0), 2, 3),
                      bits({"000", "000"}));
        COMPARE_BYTES(maskedCells(AttentionMask::keyPaddingLast(2, 3, 3), 2, 3),
                      bits({"111", "111"}));
    }

    void keyPaddingRejectsBadCount_data()
    {
        QTest::addColumn<int>("count");
        QTest::newRow("negative") << -1;
        QTest::newRow("more than n_k") << 6;
    }
    void keyPaddingRejectsBadCount()
    {
        QFETCH(int, count);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, AttentionMask::keyPaddingLast(3, 5, count));
    }

    void allowedAndMaskedMeanOpposites()
    {
        // The same boolean matrix (lower triangle = 1) in both conventions (E10):
        // as "allowed" (F.scaled_dot_product_attention) it is the causal mask, as "masked"
        // (nn.MultiheadAttention attn_mask) it blocks the past and the present instead.
        const MatrixB tril = bits({"100", "110", "111"});
        const AttentionMask allowed = AttentionMask::fromAllowed(tril);
        const AttentionMask masked = AttentionMask::fromMasked(tril);
        COMPARE_BYTES(maskedCells(allowed, 3, 3), maskedCells(AttentionMask::causal(3, 3), 3, 3));
        COMPARE_BYTES(maskedCells(masked, 3, 3), tril);
        for (Index i = 0; i < 3; ++i)
            for (Index j = 0; j < 3; ++j)
                QVERIFY(allowed.isMasked(i, j) != masked.isMasked(i, j));
        COMPARE_BYTES(masked.stateMatrix(3, 3), MatrixB(tril * std::uint8_t(MaskCustom)));
    }

    void orCombination()
    {
        // causal | padding | custom: a cell is masked if any component masks it, and the state
        // keeps the reason bits apart.
        const AttentionMask c = AttentionMask::causal(3, 4);
        const AttentionMask p = AttentionMask::keyPaddingLast(3, 4, 1);
        const AttentionMask u = AttentionMask::fromMasked(bits({"0100", "0000", "1000"}));
        const AttentionMask all = c | p | u;
        QVERIFY(!all.isPureCausal());
        QVERIFY(all.causalAlignment().has_value());
        const std::uint8_t C = MaskCausal, P = MaskPadding, U = MaskCustom;
        MatrixB expected(3, 4);
        expected << 0, C | U, C, C | P, //
            0, 0, C, C | P, //
            U, 0, 0, C | P;
        COMPARE_BYTES(all.stateMatrix(3, 4), expected);
        COMPARE_BYTES(maskedCells(all, 3, 4),
                      MatrixB((expected.array() != 0).cast<std::uint8_t>().matrix()));
        // OR is symmetric and idempotent.
        COMPARE_BYTES((u | p | c).stateMatrix(3, 4), expected);
        COMPARE_BYTES((all | all).stateMatrix(3, 4), expected);
        // Two custom masks: OR of their cells, never a sum.
        const AttentionMask u2 = AttentionMask::fromMasked(bits({"0100", "0100", "0000"}));
        COMPARE_BYTES(maskedCells(u | u2, 3, 4), bits({"0100", "0100", "1000"}));
    }

    void emptyMaskCombinesWithAnything()
    {
        const AttentionMask none;
        QVERIFY(none.empty());
        QCOMPARE(none.rows(), Index(0));
        none.checkShape(7, 9); // any shape is fine
        const AttentionMask c = AttentionMask::causal(2, 2);
        COMPARE_BYTES((none | c).stateMatrix(2, 2), c.stateMatrix(2, 2));
        COMPARE_BYTES((c | none).stateMatrix(2, 2), c.stateMatrix(2, 2));
        QVERIFY((none | c).isPureCausal());
        COMPARE_BYTES(none.stateMatrix(2, 3), MatrixB::Zero(2, 3).eval());
    }

    void shapeMismatch()
    {
        const AttentionMask c = AttentionMask::causal(3, 3);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, c | AttentionMask::causal(3, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, c.checkShape(3, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, c.stateMatrix(4, 3));
        try {
            c.checkShape(5, 5);
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QStringLiteral("3\u00d73"))
                         && msg.contains(QStringLiteral("5\u00d75")),
                     qPrintable(msg));
        }
    }

    void mixedCausalAlignments()
    {
        // TopLeft | BottomRight keeps the more restrictive one for the shape.
        const AttentionMask wide = AttentionMask::causal(2, 4, CausalAlignment::TopLeft)
            | AttentionMask::causal(2, 4, CausalAlignment::BottomRight);
        COMPARE_BYTES(maskedCells(wide, 2, 4), bits({"0111", "0011"}));
        const AttentionMask tall = AttentionMask::causal(4, 2, CausalAlignment::TopLeft)
            | AttentionMask::causal(4, 2, CausalAlignment::BottomRight);
        COMPARE_BYTES(maskedCells(tall, 4, 2), bits({"11", "11", "01", "00"}));
    }

    void additive()
    {
        const double inf = std::numeric_limits<double>::infinity();
        MatrixD add(2, 3);
        add << 0.5, -inf, -2.0, 0.0, 1.0, -inf;
        const AttentionMask a = AttentionMask::additive(add);
        QVERIFY(a.additiveTerm() != nullptr);
        QCOMPARE((*a.additiveTerm())(0, 0), 0.5);
        COMPARE_BYTES(a.stateMatrix(2, 3),
                      MatrixB(bits({"010", "001"}) * std::uint8_t(MaskCustom)));
        // Two additive masks are summed (the documented exception to "OR, never a sum").
        const AttentionMask sum = a | AttentionMask::additive(MatrixD::Constant(2, 3, 1.0));
        QCOMPARE((*sum.additiveTerm())(0, 0), 1.5);
        QCOMPARE((*sum.additiveTerm())(0, 1), -inf);
        QCOMPARE((*sum.additiveTerm())(1, 1), 2.0);
        // A boolean component combined with an additive one keeps both.
        const AttentionMask both = a | AttentionMask::causal(2, 3);
        COMPARE_BYTES(maskedCells(both, 2, 3), bits({"011", "001"}));
        QCOMPARE((*both.additiveTerm())(1, 0), 0.0);
    }

    void additiveRejectsNaNAndPlusInf_data()
    {
        QTest::addColumn<double>("value");
        QTest::newRow("NaN") << std::nan("");
        QTest::newRow("+inf") << std::numeric_limits<double>::infinity();
    }
    void additiveRejectsNaNAndPlusInf()
    {
        QFETCH(double, value);
        MatrixD add = MatrixD::Zero(2, 2);
        add(1, 0) = value;
        try {
            AttentionMask::additive(add);
            QFAIL("no exception");
        } catch (const NonFiniteInput &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QStringLiteral("row 1, col 0")), qPrintable(msg));
        }
    }
    void stateText_data()
    {
        QTest::addColumn<int>("state");
        QTest::addColumn<QString>("label");
        QTest::addColumn<QString>("field");
        QTest::newRow("allowed") << 0 << "allowed"
                                 << "allowed";
        QTest::newRow("causal") << int(MaskCausal) << "causal-masked"
                                << "causal";
        QTest::newRow("padding") << int(MaskPadding) << "padding-masked"
                                 << "padding";
        QTest::newRow("custom") << int(MaskCustom) << "custom-masked"
                                << "custom";
        QTest::newRow("window") << int(MaskWindow) << "window-masked"
                                << "window";
        QTest::newRow("causal + padding")
            << int(MaskCausal | MaskPadding) << "causal + padding-masked"
            << "causal+padding";
        QTest::newRow("causal + custom") << int(MaskCausal | MaskCustom) << "causal + custom-masked"
                                         << "causal+custom";
        QTest::newRow("padding + custom")
            << int(MaskPadding | MaskCustom) << "padding + custom-masked"
            << "padding+custom";
        QTest::newRow("padding + window")
            << int(MaskPadding | MaskWindow) << "padding + window-masked"
            << "padding+window";
        QTest::newRow("custom + window") << int(MaskCustom | MaskWindow) << "custom + window-masked"
                                         << "custom+window";
        QTest::newRow("causal + padding + custom")
            << int(MaskCausal | MaskPadding | MaskCustom) << "causal + padding + custom-masked"
            << "causal+padding+custom";
        QTest::newRow("all four") << 15 << "causal + padding + custom + window-masked"
                                  << "causal+padding+custom+window";
        QTest::newRow("bits above the window ignored") << int(0x10 | MaskCausal) << "causal-masked"
                                                       << "causal";
    }
    // The one wording of a cell's mask state (tooltips, legends, data export).
    void stateText()
    {
        QFETCH(int, state);
        QFETCH(QString, label);
        QFETCH(QString, field);
        QCOMPARE(QString::fromStdString(maskStateText(std::uint8_t(state))), label);
        QCOMPARE(QString::fromStdString(maskStateText(std::uint8_t(state), MaskTextStyle::Label)),
                 label);
        QCOMPARE(QString::fromStdString(maskStateText(std::uint8_t(state), MaskTextStyle::Field)),
                 field);
        // Name: the kinds for a title, Label without "-masked" ("none" for no mask).
        QString name = label;
        name = state == 0 ? QStringLiteral("none") : name.remove(QStringLiteral("-masked"));
        QCOMPARE(QString::fromStdString(maskStateText(std::uint8_t(state), MaskTextStyle::Name)),
                 name);
    }

    // The one function that turns parameters into a mask gives every cell its window bit (the
    // data export lacked it): padding m = 1, window w = 2 with s = 1 sink, n = 5, checked cell
    // by cell against the definitions (causal j > i, window j ≤ i − w and j ≥ s, padding
    // j ≥ n − m).
    void maskFromParametersCarriesTheWindow()
    {
        const Index n = 5, w = 2, sinks = 1, padding = 1;
        for (const AttentionKind kind :
             {AttentionKind::EncoderSelf, AttentionKind::DecoderCausal}) {
            const AttentionMask m
                = maskFromParameters(kind, MaskChoice::KeyPadding, padding, n, n, w, sinks);
            for (Index i = 0; i < n; ++i) {
                for (Index j = 0; j < n; ++j) {
                    int expected = 0;
                    if (j > i)
                        expected |= MaskCausal;
                    if (j >= n - padding)
                        expected |= MaskPadding;
                    if (j <= i - w && j >= sinks)
                        expected |= MaskWindow;
                    QCOMPARE(int(m.state(i, j)), expected);
                }
            }
            EngineParameters p;
            p.n = n;
            p.kind = kind;
            p.mask = MaskChoice::KeyPadding;
            p.paddingCount = padding;
            p.window = w;
            p.sinks = sinks;
            COMPARE_BYTES(p.attentionMask().stateMatrix(n, n), m.stateMatrix(n, n));
        }
        // No window: causal only where asked.
        QVERIFY(maskFromParameters(AttentionKind::EncoderSelf, MaskChoice::None, 0, 3, 3).empty());
        QCOMPARE(int(maskFromParameters(AttentionKind::EncoderSelf, MaskChoice::None, 0, 3, 3, 1)
                         .state(2, 0)),
                 int(MaskWindow));
        QVERIFY_THROWS_EXCEPTION(
            InvalidArgument,
            maskFromParameters(AttentionKind::EncoderSelf, MaskChoice::None, 0, 3, 3, -1));
    }

    // A sink that is visible (j < s) is allowed, not window-masked; the state of each cell of a
    // window of 2 with 1 sink, n = 5, named as the data export names it.
    void stateTextOfSlidingWindowWithSink()
    {
        const AttentionMask m = AttentionMask::slidingWindow(5, 5, 2, 1);
        const char *expected[5][5] = {
            {"allowed", "causal", "causal", "causal", "causal"},
            {"allowed", "allowed", "causal", "causal", "causal"},
            {"allowed", "allowed", "allowed", "causal", "causal"},
            {"allowed", "window", "allowed", "allowed", "causal"},
            {"allowed", "window", "window", "allowed", "allowed"},
        };
        for (Index i = 0; i < 5; ++i)
            for (Index j = 0; j < 5; ++j)
                QCOMPARE(QString::fromStdString(maskStateText(m.state(i, j), MaskTextStyle::Field)),
                         QString::fromLatin1(expected[i][j]));
    }
};

QTEST_APPLESS_MAIN(TestMask)
#include "tst_mask.moc"
