// Token views (ui/render/tokenfigure.h, TokensView, AttentionViews' Tokens tab) on hand-made
// results whose weights are written out here: the head view draws exactly the unmasked cells at
// or above the threshold, each from its query's anchor to its key's anchor with opacity = w;
// hovering a query or key keeps exactly its row or column; the coloured text gives each key the
// colormap's colour at w / (row max) or w, masked keys their mask colour; cross attention lays out
// n_q and n_k tokens; the SVG export has one <polyline> per line counted by hand; the state
// round-trips through TokensView, AttentionViews and the session's JSON.

#include "ui/document/sessionfile.h"
#include "ui/handmaderesult.h"
#include "ui/render/tileimage.h"
#include "ui/render/tokenfigure.h"
#include "ui/session/attentionsession.h"
#include "ui/svgtext.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/tokensview.h"

#include "core/attention/mask.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <set>
#include <tuple>

using namespace attn;

namespace {

// Two heads over three tokens under a causal mask (keys j > i masked):
//   head 0: [1, 0, 0], [0.6, 0.4, 0], [0.2, 0.3, 0.5]
//   head 1: [1, 0, 0], [0.005, 0.995, 0], [0.5, 0.25, 0.25]
// mean:     [1, 0, 0], [0.3025, 0.6975, 0], [0.35, 0.275, 0.375]
constexpr double kHead0[3][3] = {{1, 0, 0}, {0.6, 0.4, 0}, {0.2, 0.3, 0.5}};
constexpr double kHead1[3][3] = {{1, 0, 0}, {0.005, 0.995, 0}, {0.5, 0.25, 0.25}};

std::shared_ptr<SessionResult> causalResult()
{
    MatrixB state = MatrixB::Zero(3, 3);
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j)
            state(i, j) = MaskCausal;
    auto r = test::makeResult(
        2, 3, 3, [](int h, int i, int j) { return h == 0 ? kHead0[i][j] : kHead1[i][j]; }, state);
    r->params.setTokens({QStringLiteral("the"), QStringLiteral("cat"), QStringLiteral("sat")});
    return r;
}

using Cell = std::tuple<int, int, int>; // series, query, key

std::set<Cell> cellsOf(const std::vector<TokenLine> &lines)
{
    std::set<Cell> cells;
    for (const TokenLine &l : lines)
        cells.insert({l.series, l.query, l.key});
    return cells;
}

int countElements(const QByteArray &svg, const QString &name)
{
    QXmlStreamReader xml(svg);
    int n = 0;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == name)
            ++n;
    return n;
}

const QRectF kBounds(0, 0, 900, 560);

} // namespace

class TestTokenViews : public QObject
{
    Q_OBJECT

private slots:
    void headViewLinesAndOpacity()
    {
        const auto r = causalResult();
        TokenViewOptions o; // threshold 0.01
        const TokenHeadLayout layout = tokenHeadLayout(*r, o, kBounds);
        QCOMPARE(layout.queryBoxes.size(), 3);
        QCOMPARE(layout.keyBoxes.size(), 3);
        const std::vector<TokenLine> lines = tokenHeadLines(*r, o, layout);
        // Head 0: the six allowed cells; head 1: five (0.005 < 0.01; its zeros draw nothing).
        const std::set<Cell> expected
            = {{0, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 2, 0}, {0, 2, 1}, {0, 2, 2},
               {1, 0, 0}, {1, 1, 1}, {1, 2, 0}, {1, 2, 1}, {1, 2, 2}};
        QCOMPARE(lines.size(), std::size_t(11));
        QCOMPARE(cellsOf(lines), expected);
        for (const TokenLine &l : lines) {
            const double w = l.series == 0 ? kHead0[l.query][l.key] : kHead1[l.query][l.key];
            QCOMPARE(l.weight, w);
            QCOMPARE(l.opacity, w); // opacity = weight / 1, the largest shown
            // From the right edge of the query's box to the left edge of the key's, the two
            // heads d/2 above and below mid-height (d = min(0.6 × row / 2, 0.3 × font)).
            const qreal row = layout.queryBoxes[0].height();
            const qreal d = std::min(row * 0.6 / 2, layout.fontPixelSize * 0.3);
            QVERIFY(d > 0);
            const qreal dy = l.series == 0 ? -d / 2 : d / 2;
            QCOMPARE(l.line.p1(),
                     QPointF(layout.queryBoxes[l.query].right(),
                             layout.queryBoxes[l.query].center().y() + dy));
            QCOMPARE(
                l.line.p2(),
                QPointF(layout.keyBoxes[l.key].left(), layout.keyBoxes[l.key].center().y() + dy));
            QVERIFY(l.line.p1().x() < l.line.p2().x()); // queries left, keys right
        }
        QCOMPARE(tokenLargestShownWeight(*r, o), 1.0);
        QCOMPARE(tokenLineOpacity(1.7), 1.0);
        QCOMPARE(tokenLineOpacity(-0.1), 0.0);
        QCOMPARE(tokenLineOpacity(std::nan("")), 0.0);
        QCOMPARE(tokenLineOpacity(0.1, 0.4), 0.25);
        QCOMPARE(tokenLineOpacity(0.1, 0.0), 0.0);

        // Threshold 0: head 1's 0.005 draws too (masked cells and zeros still do not).
        o.threshold = 0;
        QCOMPARE(tokenHeadLines(*r, o, layout).size(), std::size_t(12));
        // Threshold 0.45: head 0 (1, 0.6, 0.5), head 1 (1, 0.995, 0.5).
        o.threshold = 0.45;
        QCOMPARE(
            cellsOf(tokenHeadLines(*r, o, layout)),
            (std::set<Cell> {{0, 0, 0}, {0, 1, 0}, {0, 2, 2}, {1, 0, 0}, {1, 1, 1}, {1, 2, 0}}));

        // Head 1 hidden, the mean shown (series 2): head 0's six, the mean's six.
        o.threshold = 0.01;
        o.hiddenHeads = {1};
        o.showMean = true;
        QCOMPARE(tokenShownSeries(*r, o), (std::vector<int> {0, 2}));
        const std::vector<TokenLine> withMean = tokenHeadLines(*r, o, layout);
        QCOMPARE(withMean.size(), std::size_t(12));
        const double mean[3][3] = {{1, 0, 0}, {0.3025, 0.6975, 0}, {0.35, 0.275, 0.375}};
        for (const TokenLine &l : withMean)
            if (l.series == 2)
                QVERIFY(qFuzzyCompare(l.opacity, mean[l.query][l.key]));
        // Colours: each head its own, the mean the foreground.
        QCOMPARE(tokenHeadColor(0), QColor(0x1f, 0x77, 0xb4));
        QCOMPARE(tokenHeadColor(1), QColor(0xff, 0x7f, 0x0e));
        QVERIFY(tokenHeadColor(0) != tokenHeadColor(1));
    }

    void hoverIsolatesLines()
    {
        const auto r = causalResult();
        TokenViewOptions o;
        const TokenHeadLayout layout = tokenHeadLayout(*r, o, kBounds);
        o.hoverQuery = 2; // query 2's row in each head
        QCOMPARE(
            cellsOf(tokenHeadLines(*r, o, layout)),
            (std::set<Cell> {{0, 2, 0}, {0, 2, 1}, {0, 2, 2}, {1, 2, 0}, {1, 2, 1}, {1, 2, 2}}));
        o.hoverQuery = 1; // head 1's 0.005 stays under the threshold
        QCOMPARE(cellsOf(tokenHeadLines(*r, o, layout)),
                 (std::set<Cell> {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}}));
        o.hoverQuery = -1;
        o.hoverKey = 0; // key 0's column
        QCOMPARE(cellsOf(tokenHeadLines(*r, o, layout)),
                 (std::set<Cell> {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {1, 0, 0}, {1, 2, 0}}));
        o.hoverKey = 2; // only query 2 sees key 2
        o.hiddenHeads = {0};
        QCOMPARE(cellsOf(tokenHeadLines(*r, o, layout)), (std::set<Cell> {{1, 2, 2}}));

        // The hit test finds the boxes the lines start and end at.
        const TokenHit q = tokenHeadHit(layout, layout.queryBoxes[1].center());
        QCOMPARE(q.side, 0);
        QCOMPARE(q.index, 1);
        const TokenHit k = tokenHeadHit(layout, layout.keyBoxes[2].center());
        QCOMPARE(k.side, 1);
        QCOMPARE(k.index, 2);
        QVERIFY(!tokenHeadHit(layout, QPointF(kBounds.center().x(), 2)).valid());

        // The widget: the mouse over query 2 hovers it, leaving clears it.
        TokensView view;
        view.resize(900, 620);
        view.setResult(r);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const TokenHeadLayout shown
            = tokenHeadLayout(*r, view.options(), QRectF(view.canvas()->rect()));
        QTest::mouseMove(view.canvas(), shown.queryBoxes[2].center().toPoint());
        QTRY_COMPARE(view.options().hoverQuery, 2);
        QCOMPARE(view.options().hoverKey, -1);
        QTest::mouseMove(view.canvas(), shown.keyBoxes[0].center().toPoint());
        QTRY_COMPARE(view.options().hoverKey, 0);
        QCOMPARE(view.options().hoverQuery, -1);
    }

    void textViewColours()
    {
        const auto r = causalResult();
        TokenViewOptions o;
        o.view = TokenView::Text;
        o.query = 2;
        o.textHead = 0;
        const Colormap viridis(ColormapId::Viridis);
        // Row range: [0, 0.5], so t = w / 0.5.
        QCOMPARE(tokenTextNorm(*r, o), ColorNorm::linear(0, 0.5));
        std::vector<TokenTextCell> cells = tokenTextCells(*r, o);
        QCOMPARE(cells.size(), std::size_t(3));
        QCOMPARE(cells[0].color, viridis.map(0.4));
        QCOMPARE(cells[1].color, viridis.map(0.6));
        QCOMPARE(cells[2].color, viridis.map(1.0));
        for (const auto &c : cells)
            QCOMPARE(c.maskState, std::uint8_t(0));
        // Fixed range [0, 1]: t = w.
        o.rowRange = false;
        cells = tokenTextCells(*r, o);
        QCOMPARE(cells[0].color, viridis.map(0.2));
        QCOMPARE(cells[1].color, viridis.map(0.3));
        QCOMPARE(cells[2].color, viridis.map(0.5));
        // Head 1 on magma, row range [0, 0.5]: 1, 0.5, 0.5.
        o.rowRange = true;
        o.textHead = 1;
        o.colormap = ColormapId::Magma;
        const Colormap magma(ColormapId::Magma);
        cells = tokenTextCells(*r, o);
        QCOMPARE(cells[0].color, magma.map(1.0));
        QCOMPARE(cells[1].color, magma.map(0.5));
        // The mean (head index h = 2): [0.35, 0.275, 0.375] over [0, 0.375].
        o.textHead = 2;
        o.colormap = ColormapId::Viridis;
        QCOMPARE(tokenTextHead(*r, o), 2);
        cells = tokenTextCells(*r, o);
        QCOMPARE(cells[0].color, viridis.map(0.35 / 0.375));
        QCOMPARE(cells[2].color, viridis.map(1.0));

        // Query 0 under the causal mask: keys 1 and 2 masked, in the mask colour, weight 0.
        o.textHead = 0;
        o.query = 0;
        cells = tokenTextCells(*r, o);
        QCOMPARE(cells[0].maskState, std::uint8_t(0));
        QCOMPARE(cells[0].color, viridis.map(1.0));
        for (int j = 1; j < 3; ++j) {
            QCOMPARE(cells[std::size_t(j)].maskState, std::uint8_t(MaskCausal));
            QCOMPARE(cells[std::size_t(j)].weight, 0.0);
            QCOMPARE(cells[std::size_t(j)].color, maskColor(ColormapId::Viridis, MaskCausal));
            for (int k = 0; k < Colormap::size; ++k) // never a colour of the map
                QVERIFY(cells[std::size_t(j)].color != viridis.entry(k));
        }
        // No query (−1) is the last; the text on a dark box is white, on a light one black.
        o.query = -1;
        QCOMPARE(tokenTextQuery(*r, o), 2);
        QCOMPARE(readableText(viridis.map(0.0)), qRgb(255, 255, 255));
        QCOMPARE(readableText(viridis.map(1.0)), qRgb(0, 0, 0));

        // The masked keys say so in the figure: the legend names "causal-masked".
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("text.svg"));
        o.query = 0;
        QString error;
        QVERIFY2(saveTokenFigure(path, QSize(900, 400), 1, r.get(), o, &error), qPrintable(error));
        const test::SvgTexts svg = test::readSvgTextsFile(path);
        QVERIFY(svg.texts.contains(QStringLiteral("causal-masked")));
        QVERIFY(svg.texts.contains(QStringLiteral("cat")));

        // Clicking a token of the shared flow makes it the query.
        TokensView view;
        view.resize(900, 500);
        view.setResult(r);
        view.setView(TokenView::Text);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const TokenTextLayout layout
            = tokenTextLayout(*r, view.options(), QRectF(view.canvas()->rect()));
        QVERIFY(tokenTextSharedFlow(*r));
        QCOMPARE(layout.keyBoxes.size(), 3);
        QVERIFY(layout.queryBoxes.isEmpty());
        QSignalSpy changed(&view, &TokensView::stateChanged);
        QTest::mouseClick(view.canvas(), Qt::LeftButton, {}, layout.keyBoxes[1].center().toPoint());
        QCOMPARE(view.options().query, 1);
        QCOMPARE(changed.count(), 1);
    }

    // Differential attention's signed weights: a line per |w| ≥ threshold, opacity |w| over the
    // largest |w|, the sign kept (dashed when negative); the text view on RdBu_r centred on 0.
    void signedWeights()
    {
        const double w[2][2] = {{0.9, -0.4}, {-0.05, 0.2}};
        const auto r = test::makeResult(1, 2, 2, [&](int, int i, int j) { return w[i][j]; });
        r->signedWeights = true;
        TokenViewOptions o; // threshold 0.01
        const TokenHeadLayout layout = tokenHeadLayout(*r, o, kBounds);
        QCOMPARE(tokenLargestShownWeight(*r, o), 0.9);
        const std::vector<TokenLine> lines = tokenHeadLines(*r, o, layout);
        QCOMPARE(lines.size(), std::size_t(4));
        for (const TokenLine &l : lines) {
            QCOMPARE(l.weight, w[l.query][l.key]);
            QVERIFY(qFuzzyCompare(l.opacity, std::abs(w[l.query][l.key]) / 0.9));
        }
        o.threshold = 0.1; // −0.05 is below it in size
        QCOMPARE(tokenHeadLines(*r, o, layout).size(), std::size_t(3));

        o.view = TokenView::Text;
        o.query = 0;
        o.textHead = 0;
        const Colormap rdbu(ColormapId::RdBu);
        QCOMPARE(tokenTextNorm(*r, o), ColorNorm::symmetric(0.9)); // the row's largest |w|
        std::vector<TokenTextCell> cells = tokenTextCells(*r, o);
        QCOMPARE(cells[0].color, rdbu.map(1.0));
        QCOMPARE(cells[1].color, rdbu.map(ColorNorm::symmetric(0.9)(-0.4)));
        QVERIFY(ColorNorm::symmetric(0.9)(-0.4) < 0.5); // the blue half
        o.rowRange = false;
        QCOMPARE(tokenTextNorm(*r, o), ColorNorm::symmetric(1.0));
        cells = tokenTextCells(*r, o);
        QCOMPARE(cells[1].color, rdbu.map(0.3)); // (−0.4 + 1) / 2
        // The legends say so.
        QTemporaryDir dir;
        QString error;
        const QString text = dir.filePath(QStringLiteral("signed-text.svg"));
        QVERIFY2(saveTokenFigure(text, QSize(900, 400), 1, r.get(), o, &error), qPrintable(error));
        QVERIFY(test::readSvgTextsFile(text)
                    .texts.join(QLatin1Char(' '))
                    .contains(QStringLiteral("signed weight")));
        o.view = TokenView::Heads;
        const QString heads = dir.filePath(QStringLiteral("signed-heads.svg"));
        QVERIFY2(saveTokenFigure(heads, QSize(900, 400), 1, r.get(), o, &error), qPrintable(error));
        QVERIFY(test::readSvgTextsFile(heads)
                    .texts.join(QLatin1Char(' '))
                    .contains(QStringLiteral("dashed: negative weight")));
    }

    void crossAttention()
    {
        // n_q = 2 queries over n_k = 3 keys, no mask.
        const double w[2][3] = {{0.7, 0.2, 0.1}, {0.005, 0.005, 0.99}};
        const auto r = test::makeResult(1, 2, 3, [&](int, int i, int j) { return w[i][j]; });
        TokenViewOptions o;
        const TokenHeadLayout layout = tokenHeadLayout(*r, o, kBounds);
        QCOMPARE(layout.queryBoxes.size(), 2);
        QCOMPARE(layout.keyBoxes.size(), 3);
        const std::vector<TokenLine> lines = tokenHeadLines(*r, o, layout);
        QCOMPARE(cellsOf(lines), (std::set<Cell> {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 1, 2}}));
        // The largest weight shown is 0.99: opacity = w / 0.99, whatever the hover.
        QCOMPARE(tokenLargestShownWeight(*r, o), 0.99);
        for (const TokenLine &l : lines)
            QCOMPARE(l.opacity, w[l.query][l.key] / 0.99);
        o.hoverQuery = 0;
        for (const TokenLine &l : tokenHeadLines(*r, o, layout))
            QCOMPARE(l.opacity, w[l.query][l.key] / 0.99);
        o.hoverQuery = -1;
        for (const TokenLine &l : lines) // one series: mid-height
            QCOMPARE(l.line.p2(),
                     QPointF(layout.keyBoxes[l.key].left(), layout.keyBoxes[l.key].center().y()));
        // Positions label the tokens when none are typed.
        QCOMPARE(r->queryLabel(1), QStringLiteral("1"));
        // The text view gives the queries a flow of their own.
        o.view = TokenView::Text;
        QVERIFY(!tokenTextSharedFlow(*r));
        const TokenTextLayout text = tokenTextLayout(*r, o, kBounds);
        QCOMPARE(text.queryBoxes.size(), 2);
        QCOMPARE(text.keyBoxes.size(), 3);
        const TokenHit hit = tokenTextHit(text, text.queryBoxes[0].center());
        QCOMPARE(hit.side, 0);
        QCOMPARE(hit.index, 0);
        QCOMPARE(tokenTextHit(text, text.keyBoxes[2].center()).side, 1);
        QCOMPARE(tokenTextNorm(*r, o), ColorNorm::linear(0, 0.99)); // the last query's max
    }

    void svgHasOneElementPerLine()
    {
        const auto r = causalResult();
        QTemporaryDir dir;
        QString error;
        TokenViewOptions o;
        // 11 lines (headViewLinesAndOpacity); with head 1 hidden and the mean shown 12; one
        // head, threshold 0.45: 3.
        const std::vector<std::pair<TokenViewOptions, int>> cases = [] {
            TokenViewOptions a, b, c;
            b.hiddenHeads = {1};
            b.showMean = true;
            c.hiddenHeads = {0};
            c.threshold = 0.45;
            return std::vector<std::pair<TokenViewOptions, int>> {{a, 11}, {b, 12}, {c, 3}};
        }();
        for (const auto &[options, lines] : cases) {
            const QString path = dir.filePath(QStringLiteral("heads.svg"));
            QVERIFY2(saveTokenFigure(path, QSize(900, 560), 1, r.get(), options, &error),
                     qPrintable(error));
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray svg = f.readAll();
            QCOMPARE(countElements(svg, QStringLiteral("polyline"))
                         + countElements(svg, QStringLiteral("line")),
                     lines);
            const test::SvgTexts texts = test::readSvgTexts(svg);
            QVERIFY(texts.texts.contains(QStringLiteral("queries")));
            QVERIFY(texts.texts.contains(QStringLiteral("sat")));
        }
        // PDF is a vector page too; an unknown suffix and a too-long result are refused.
        const QString pdf = dir.filePath(QStringLiteral("heads.pdf"));
        QVERIFY2(saveTokenFigure(pdf, QSize(900, 560), 1, r.get(), o, &error), qPrintable(error));
        QFile f(pdf);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(5) == "%PDF-");
        QVERIFY(!saveTokenFigure(dir.filePath(QStringLiteral("x.bmpx")), QSize(900, 560), 1,
                                 r.get(), o, &error));
        QVERIFY2(error.contains(QLatin1String("bmpx")), qPrintable(error));
        const auto big
            = test::makeResult(1, maxTokenViewTokens + 1, 2, [](int, int, int) { return 0.5; });
        QVERIFY(!saveTokenFigure(dir.filePath(QStringLiteral("big.svg")), QSize(900, 560), 1,
                                 big.get(), o, &error));
        QVERIFY2(error.contains(QString::number(maxTokenViewTokens)), qPrintable(error));
    }

    void stateRoundTrips()
    {
        const auto r = causalResult();
        TokensView view;
        view.setResult(r);
        view.setView(TokenView::Text);
        view.setHeadShown(1, false);
        view.setMeanShown(true);
        view.setTextHead(2);
        view.setQuery(1);
        view.setRowRange(false);
        const QJsonObject state = view.state();
        QCOMPARE(state.value(QLatin1String("view")).toString(), QStringLiteral("text"));
        QCOMPARE(state.value(QLatin1String("hidden_heads")).toArray(), QJsonArray {1});
        QCOMPARE(state.value(QLatin1String("head")).toInt(), 2);
        QCOMPARE(state.value(QLatin1String("query")).toInt(), 1);
        QCOMPARE(state.value(QLatin1String("range")).toString(), QStringLiteral("fixed"));

        TokensView other;
        other.setResult(r);
        other.setState(state);
        QCOMPARE(other.state(), state);
        QCOMPARE(other.view(), TokenView::Text);
        QVERIFY(!other.isHeadShown(1));
        QVERIFY(other.isHeadShown(0));
        QVERIFY(!other.headCheckBox(1)->isChecked());
        QVERIFY(other.headCheckBox(2)->isChecked()); // "mean"
        QCOMPARE(other.textHeadSelector()->currentIndex(), 2);
        QCOMPARE(other.viewSelector()->currentIndex(), 1);
        QCOMPARE(other.options().query, 1);
        QVERIFY(!other.options().rowRange);

        // Invalid values leave the old ones.
        const TokenViewOptions kept
            = tokenViewFromJson(QJsonObject {{QStringLiteral("view"), QStringLiteral("sideways")},
                                             {QStringLiteral("hidden_heads"), QJsonArray {0, -1}},
                                             {QStringLiteral("head"), 1.5},
                                             {QStringLiteral("query"), -2},
                                             {QStringLiteral("range"), 3}},
                                other.options());
        QCOMPARE(kept.view, TokenView::Text);
        QCOMPARE(kept.hiddenHeads, QList<int> {1});
        QCOMPARE(kept.textHead, 2);
        QCOMPARE(kept.query, 1);
        QVERIFY(!kept.rowRange);

        // Through AttentionViews (the session's "tokens" key), and the tab gets the heads'
        // shown result.
        AttentionSession session;
        auto *heads = new HeatmapWidget;
        AttentionViews views(heads, &session);
        QCOMPARE(views.widget(AttentionViews::TokensTab), views.tokensView());
        QSignalSpy results(&session, &AttentionSession::resultChanged);
        SessionParameters p;
        p.n = 4;
        p.dModel = 8;
        p.heads = 2;
        session.setParameters(p);
        QTRY_COMPARE(results.count(), 1);
        heads->setResult(session.result());
        QTRY_COMPARE(views.tokensView()->result(), heads->result());
        QVERIFY(views.tokensView()->result());
        QJsonObject viewState = views.state();
        viewState.insert(QStringLiteral("tokens"), state);
        views.setState(viewState);
        QCOMPARE(views.state().value(QLatin1String("tokens")).toObject(), state);
    }

    void thinnedLabelsSayTheirPosition()
    {
        // 120 tokens in 560 pixels: every k-th label is written, each with its position, so a
        // reader can tell which token a label names.
        const int n = 120;
        auto r = test::makeResult(1, n, n, [](int, int, int) { return 1.0 / n; });
        QStringList tokens;
        for (int i = 0; i < n; ++i)
            tokens << (i % 2 ? QStringLiteral("cat") : QStringLiteral("the"));
        r->params.setTokens(tokens);
        const TokenViewOptions o;
        const TokenHeadLayout layout = tokenHeadLayout(*r, o, kBounds);
        QVERIFY(layout.labelStepQueries > 1);
        QVERIFY(layout.labelStepKeys > 1);
        const int step = layout.labelStepQueries;
        QCOMPARE(tokenHeadLabel(*r, step, true, step),
                 QStringLiteral("%1:%2").arg(step).arg(tokens[step]));
        QCOMPARE(tokenHeadLabel(*r, 1, true, 1), tokens[1]);

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("thinned.svg"));
        QString error;
        QVERIFY2(saveTokenFigure(path, kBounds.size().toSize(), 1, r.get(), o, &error),
                 qPrintable(error));
        const test::SvgTexts svg = test::readSvgTextsFile(path);
        for (int i = 0; i < n; i += step) {
            const QString label = QStringLiteral("%1:%2").arg(i).arg(tokens[i]);
            QVERIFY2(svg.texts.contains(label), qPrintable(label));
        }
        QVERIFY(!svg.texts.contains(QStringLiteral("the")));
    }

private:
    // The text colour tokenTextCells picks for a fill (black or white by luminance).
    static QRgb readableText(QRgb fill)
    {
        auto r = test::makeResult(1, 1, 1, [](int, int, int) { return 1.0; });
        TokenViewOptions o;
        o.view = TokenView::Text;
        // A one-key row over [0, 1] shows w = t exactly: find the t whose colour is `fill`.
        const Colormap map(ColormapId::Viridis);
        for (int k = 0; k < Colormap::size; ++k)
            if (map.entry(k) == fill) {
                r->weights[0](0, 0) = (k + 0.5) / Colormap::size;
                r->weightsMean(0, 0) = r->weights[0](0, 0);
                o.rowRange = false;
                return tokenTextCells(*r, o)[0].textColor;
            }
        return 0;
    }
};

QTEST_MAIN(TestTokenViews)
#include "tst_tokenviews.moc"
