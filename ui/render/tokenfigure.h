#pragma once
// Token views of a SessionResult, after BertViz and CircuitsVis:
//   head view (BertViz, Vig 2019): the queries in a column on the left, the keys on the right
//     and, for each shown head, a line from query i to key j whose opacity is the weight w_ij
//     (each head its own colour, the head mean in the foreground colour); hovering a token keeps
//     only its lines (a query: its row of every shown head; a key: its column);
//   coloured text (CircuitsVis "colored tokens"): the tokens as a flow of boxes, each key
//     coloured by the weight one query gives it (one head or the mean), on a colormap with a
//     colour bar; the query is outlined.
// Masked cells draw no line and masked keys are grey and hatched (causal "/", others "\"),
// never a colour of the colormap. The same paint code serves the window (TokensView), File →
// Export and `attnlab heatmap --view tokens|text`; PNG, SVG and PDF through figurefile.h (SVG
// and PDF as vectors: one <polyline> per drawn line, boxes as rectangles, text as text).
//
// Tokens are SessionResult::queryLabel / keyLabel: the typed tokens, else positions "0", "1", ….

#include "ui/render/colormap.h"
#include "ui/session/sessionresult.h"

#include <QColor>
#include <QLineF>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QVector>

#include <cstdint>
#include <vector>

class QPainter;

namespace attn {

enum class TokenView {
    Heads, ///< BertViz's head view: lines from queries to keys
    Text, ///< CircuitsVis's coloured tokens: one query's weights over the keys
};

/// What a token figure shows and how.
struct TokenViewOptions
{
    TokenView view = TokenView::Heads;
    /// Head view: the heads (0 … h−1) whose lines are not drawn; every other head draws.
    QList<int> hiddenHeads;
    /// Head view: the head mean (weightsMean) draws its lines too, in the foreground colour.
    bool showMean = false;
    /// Head view: lines of weight below this are not drawn (0 draws every unmasked cell).
    double threshold = 0.01;
    /// Head view hover: the query row (≥ 0) or key column (≥ 0) whose lines alone are drawn;
    /// −1 for none (hoverQuery wins when both are set).
    int hoverQuery = -1;
    int hoverKey = -1;
    /// Text view: head 0 … h−1, or h for the mean.
    int textHead = 0;
    /// Text view: the query (shown row) whose weights colour the keys; −1 or past the end: the
    /// last query.
    int query = -1;
    /// Text view: colours span [0, the row's largest unmasked weight] (true) or [0, 1].
    bool rowRange = true;
    ColormapId colormap = ColormapId::Viridis;
    qreal fontPixelSize = 13; ///< logical pixels
    QColor background = Qt::white;
    QColor foreground = Qt::black;
    bool showCaption = true; ///< the parameter caption at the top
    bool operator==(const TokenViewOptions &) const = default;
};

/// At most this many queries and keys are drawn; larger results get a message instead.
constexpr int maxTokenViewTokens = 256;

/// The colour of head k (matplotlib's qualitative "tab10", then "tab20"'s light shades, then
/// again from the start).
QColor tokenHeadColor(int head);
/// Opacity of a line of weight w: w / largest, clipped to [0, 1] (NaN, w ≤ 0 or largest ≤ 0
/// give 0). With `largest` the largest weight the shown series draw, the strongest line is
/// opaque and the others fade in proportion (for a near-uniform row of 10 keys, w ≈ 0.1, lines
/// of opacity w would be barely visible).
double tokenLineOpacity(double weight, double largest = 1.0);
/// The largest unmasked, finite weight of the series the head view shows (tokenShownSeries),
/// whatever the hover: the weight drawn opaque. 0 when none.
double tokenLargestShownWeight(const SessionResult &result, const TokenViewOptions &options);
/// Why `result` cannot be drawn as tokens (no result, failed, no weights, more than
/// maxTokenViewTokens queries or keys), or "" when it can.
QString tokenViewProblem(const SessionResult *result);

// ---- head view ----

/// Where the head view's parts go in `bounds` (logical pixels).
struct TokenHeadLayout
{
    QRectF caption; ///< caption lines (empty without a caption)
    QRectF legend; ///< the swatches of the shown heads and the line rule
    QVector<QRectF> queryBoxes; ///< n_q token boxes of the left column, top to bottom
    QVector<QRectF> keyBoxes; ///< n_k token boxes of the right column
    QRectF queryTitle, keyTitle; ///< "queries" / "keys" above the columns
    qreal fontPixelSize = 13;
    /// Every k-th label written (rows too thin), each with its position (tokenHeadLabel).
    int labelStepQueries = 1, labelStepKeys = 1;
    /// Start of query i's lines (the right edge of its box, at mid-height) for the series shown
    /// `slot`-th of `seriesCount`: the series are spread over the row, seriesSpacing(seriesCount)
    /// apart and centred on mid-height, so that the lines of different heads between the same two
    /// tokens do not cover each other.
    QPointF queryAnchor(int i, int slot = 0, int seriesCount = 1) const;
    /// End of key j's lines (the left edge of its box), spread likewise.
    QPointF keyAnchor(int j, int slot = 0, int seriesCount = 1) const;
    /// Vertical distance between the anchors of neighbouring series: the thinner row's height
    /// × 0.6 / seriesCount, at most 0.3 × the font size (0 for one series).
    qreal seriesSpacing(int seriesCount) const;
};

/// The label the head view writes for query (`query`) or key `index` of `result` in a column
/// labelled every `step`-th row: the token (or the position without tokens), and, when the
/// labels are thinned (step > 1), the position in front of it ("12:the") so that the labels
/// written say where they are.
QString tokenHeadLabel(const SessionResult &result, int index, bool query, int step);

/// The layout for `result` (n_q, n_k and the labels' widths) in `bounds`.
TokenHeadLayout tokenHeadLayout(const SessionResult &result, const TokenViewOptions &options,
                                const QRectF &bounds);

/// One drawn line: `series` is the head (0 … h−1) or h for the mean.
struct TokenLine
{
    int series = 0;
    int query = 0;
    int key = 0;
    double weight = 0;
    double opacity = 0; ///< tokenLineOpacity(weight, tokenLargestShownWeight)
    /// queryAnchor(query, slot, seriesCount) → keyAnchor(key, slot, seriesCount), slot = the
    /// series' place among the series shown
    QLineF line;
    bool operator==(const TokenLine &) const = default;
};

/// Series drawn: the shown heads in order, then h when the mean is shown.
std::vector<int> tokenShownSeries(const SessionResult &result, const TokenViewOptions &options);

/// The lines the head view draws, series by series (tokenShownSeries order), rows then keys:
/// cell (i, j) of a series draws when it is not masked (maskState 0), its weight is finite and
/// ≥ options.threshold, and it is on the hovered query's row / hovered key's column if one is
/// set. Empty when tokenViewProblem says the result cannot be drawn.
std::vector<TokenLine> tokenHeadLines(const SessionResult &result, const TokenViewOptions &options,
                                      const TokenHeadLayout &layout);

/// A token under `pos`: side 0 = query column, 1 = key column; index −1 when none.
struct TokenHit
{
    int side = -1;
    int index = -1;
    bool valid() const { return index >= 0; }
};
TokenHit tokenHeadHit(const TokenHeadLayout &layout, const QPointF &pos);

// ---- coloured text ----

/// One key of the text view.
struct TokenTextCell
{
    double weight = 0; ///< w_{query, j} of the head (or mean); 0 when masked
    std::uint8_t maskState = 0; ///< MaskStateBits of (query, j); ≠ 0: drawn masked
    QRgb color = 0; ///< fill: colormap at norm(weight), or maskColor when masked
    QRgb textColor = 0; ///< black or white, whichever reads on `color`
};

/// The query the text view shows: options.query, or the last query when it is −1 or out of
/// range (−1 for an empty result).
int tokenTextQuery(const SessionResult &result, const TokenViewOptions &options);
/// The head it shows: options.textHead clamped to 0 … h (h = the mean).
int tokenTextHead(const SessionResult &result, const TokenViewOptions &options);
/// The colour range: [0, the largest unmasked weight of the row] (rowRange; [0, 1] when the
/// row has none or its largest is 0) or [0, 1].
ColorNorm tokenTextNorm(const SessionResult &result, const TokenViewOptions &options);
/// The n_k keys' weights and colours for the query and head shown.
std::vector<TokenTextCell> tokenTextCells(const SessionResult &result,
                                          const TokenViewOptions &options);
/// True when one flow of tokens is both the queries and the keys (self-attention, n_q = n_k);
/// else the queries get a flow of their own above the keys.
bool tokenTextSharedFlow(const SessionResult &result);

struct TokenTextLayout
{
    QRectF caption;
    QRectF title; ///< "query i 'tok' → keys, head k"
    QRectF queryHeading, keyHeading; ///< "queries (click one)" / "keys" (separate flows only)
    QVector<QRectF> queryBoxes; ///< separate flows only: n_q boxes
    QVector<QRectF> keyBoxes; ///< n_k boxes (also the queries when the flow is shared)
    QRectF colorbar; ///< the colour strip
    QRectF legend; ///< under the strip: ticks, range and the masked swatch
    qreal fontPixelSize = 13;
};
TokenTextLayout tokenTextLayout(const SessionResult &result, const TokenViewOptions &options,
                                const QRectF &bounds);
/// A query box under `pos` (side 0; in a shared flow every box is a query) or a key box
/// (side 1, separate flows only); index −1 when none.
TokenHit tokenTextHit(const TokenTextLayout &layout, const QPointF &pos);

// ---- painting and files ----

/// Paints the figure options.view names into `bounds` (filled with options.background first),
/// or the reason it cannot (tokenViewProblem) as a message.
void paintTokenFigure(QPainter *painter, const QRectF &bounds, const SessionResult *result,
                      const TokenViewOptions &options);
/// The figure at `path`: PNG (size × dpr pixels), SVG or PDF (vectors), as `format` says ("png",
/// "svg", "pdf"; empty: by the suffix of `path`). False with `error` naming the problem
/// (tokenViewProblem, unknown suffix, write failure).
bool saveTokenFigure(const QString &path, QSize size, qreal dpr, const SessionResult *result,
                     const TokenViewOptions &options, QString *error,
                     const QString &format = QString());
/// Tooltip text for the token under `pos` ("" when none): the token, and in the text view its
/// weight or mask state; in the head view what hovering it shows.
QString tokenToolTip(const SessionResult &result, const TokenViewOptions &options,
                     const QRectF &bounds, const QPointF &pos);

} // namespace attn
