#include "ui/views/tokensview.h"

#include "ui/document/sessionfile.h"
#include "ui/render/stepsrenderer.h"
#include "ui/views/figureexport.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace attn {

namespace {
constexpr int kHeadsPerLine = 6; // head checkboxes on one line of the heads row
}

// The figure painted at the widget's size; hover and click go back to the view.
class TokensView::Canvas : public QWidget
{
public:
    explicit Canvas(TokensView *view)
        : QWidget(view)
        , m_view(view)
    {
        setMouseTracking(true);
        setAttribute(Qt::WA_OpaquePaintEvent);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }
    QSize minimumSizeHint() const override { return {320, 240}; }
    QSize sizeHint() const override { return {900, 560}; }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        paintTokenFigure(&painter, QRectF(rect()), m_view->m_result.get(), m_view->options());
    }
    void mouseMoveEvent(QMouseEvent *event) override
    {
        const auto &r = m_view->m_result;
        if (!r || m_view->m_options.view != TokenView::Heads)
            return;
        const TokenHit hit = tokenHeadHit(tokenHeadLayout(*r, m_view->options(), QRectF(rect())),
                                          event->position());
        m_view->setHover(hit.side == 0 ? hit.index : -1, hit.side == 1 ? hit.index : -1);
    }
    void leaveEvent(QEvent *) override { m_view->setHover(-1, -1); }
    void mousePressEvent(QMouseEvent *event) override
    {
        const auto &r = m_view->m_result;
        if (!r || event->button() != Qt::LeftButton)
            return;
        if (m_view->m_options.view == TokenView::Text) {
            const TokenHit hit = tokenTextHit(
                tokenTextLayout(*r, m_view->options(), QRectF(rect())), event->position());
            if (hit.side == 0)
                m_view->setQuery(hit.index);
        } else {
            // A query clicked in the head view becomes the text view's query.
            const TokenHit hit = tokenHeadHit(
                tokenHeadLayout(*r, m_view->options(), QRectF(rect())), event->position());
            if (hit.side == 0)
                m_view->setQuery(hit.index);
        }
    }
    bool event(QEvent *event) override
    {
        if (event->type() == QEvent::ToolTip) {
            auto *help = static_cast<QHelpEvent *>(event);
            const auto &r = m_view->m_result;
            const QString text = r
                ? tokenToolTip(*r, m_view->options(), QRectF(rect()), QPointF(help->pos()))
                : QString();
            if (text.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(help->globalPos(), text, this);
            return true;
        }
        return QWidget::event(event);
    }

private:
    TokensView *m_view;
};

TokensView::TokensView(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);

    auto *strip = new QHBoxLayout;
    auto *viewLabel = new QLabel(tr("&Show:"));
    m_viewCombo = new QComboBox;
    m_viewCombo->setObjectName(QStringLiteral("tokensViewCombo"));
    m_viewCombo->addItem(tr("Head view (lines)"));
    m_viewCombo->addItem(tr("Coloured text"));
    m_viewCombo->setToolTip(
        tr("Head view: a line from each query to each key per head, opacity "
           "in proportion to the weight (as BertViz). Coloured text: the keys coloured by the "
           "attention one query gives them (as CircuitsVis)."));
    viewLabel->setBuddy(m_viewCombo);
    strip->addWidget(viewLabel);
    strip->addWidget(m_viewCombo);

    m_headsRow = new QWidget;
    m_headsLayout = new QGridLayout(m_headsRow);
    m_headsLayout->setContentsMargins(0, 0, 0, 0);
    m_headsLayout->setHorizontalSpacing(10);
    m_headsLayout->setVerticalSpacing(2);
    // The label on a line of its own, the checkboxes six to a line under it: 12 or 32 heads fit
    // the centre of a 1280 × 800 window.
    m_headsLayout->addWidget(new QLabel(tr("Lines of heads:")), 0, 0, 1, kHeadsPerLine);
    m_headsLayout->setColumnStretch(kHeadsPerLine, 1);

    m_textRow = new QWidget;
    auto *textLayout = new QHBoxLayout(m_textRow);
    textLayout->setContentsMargins(0, 0, 0, 0);
    auto *headLabel = new QLabel(tr("&Head:"));
    m_textHeadCombo = new QComboBox;
    m_textHeadCombo->setObjectName(QStringLiteral("tokensTextHeadCombo"));
    m_textHeadCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_textHeadCombo->setToolTip(tr("The head whose weights colour the keys, or their mean"));
    headLabel->setBuddy(m_textHeadCombo);
    auto *rangeLabel = new QLabel(tr("&Range:"));
    m_rangeCombo = new QComboBox;
    m_rangeCombo->setObjectName(QStringLiteral("tokensRangeCombo"));
    m_rangeCombo->addItem(tr("[0, row max]"));
    m_rangeCombo->addItem(tr("[0, 1]"));
    m_rangeCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_viewCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_rangeCombo->setToolTip(tr("Colours span 0 to the query's largest weight, or the fixed "
                                "range [0, 1]"));
    rangeLabel->setBuddy(m_rangeCombo);
    textLayout->addWidget(headLabel);
    textLayout->addWidget(m_textHeadCombo);
    textLayout->addWidget(rangeLabel);
    textLayout->addWidget(m_rangeCombo);
    strip->addStretch(1);

    m_exportButton = new QPushButton(tr("Export…"));
    m_exportButton->setObjectName(QStringLiteral("tokensExportButton"));
    m_exportButton->setToolTip(tr("Save the token view with its legend and the parameter caption "
                                  "as PNG, SVG or PDF"));
    strip->addWidget(m_exportButton);
    layout->addLayout(strip);
    // The heads' checkboxes (head view) or the head and range (coloured text) on a line of their
    // own: beside the view selector they were squeezed to "he" at 1280 × 800.
    auto *options = new QHBoxLayout;
    options->addWidget(m_headsRow);
    options->addWidget(m_textRow);
    options->addStretch(1);
    layout->addLayout(options);

    m_hint = new QLabel;
    m_hint->setObjectName(QStringLiteral("tokensHint"));
    m_hint->setWordWrap(true);
    layout->addWidget(m_hint);

    m_canvas = new Canvas(this);
    m_canvas->setObjectName(QStringLiteral("tokensCanvas"));
    layout->addWidget(m_canvas, 1);

    connect(m_viewCombo, &QComboBox::currentIndexChanged, this,
            [this](int index) { setView(index == 1 ? TokenView::Text : TokenView::Heads); });
    connect(m_textHeadCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            setTextHead(index);
    });
    connect(m_rangeCombo, &QComboBox::currentIndexChanged, this,
            [this](int index) { setRowRange(index != 1); });
    connect(m_exportButton, &QPushButton::clicked, this, &TokensView::exportInteractive);
    syncControls();
}

void TokensView::setResult(std::shared_ptr<const SessionResult> result)
{
    m_result = std::move(result);
    m_options.hoverQuery = m_options.hoverKey = -1;
    syncControls();
    m_canvas->update();
}

void TokensView::changed()
{
    syncControls();
    m_canvas->update();
    emit stateChanged();
}

void TokensView::setView(TokenView view)
{
    if (m_options.view == view)
        return;
    m_options.view = view;
    m_options.hoverQuery = m_options.hoverKey = -1;
    changed();
}

void TokensView::setHeadShown(int head, bool shown)
{
    if (head < 0 || isHeadShown(head) == shown)
        return;
    if (shown) {
        m_options.hiddenHeads.removeAll(head);
    } else {
        m_options.hiddenHeads.append(head);
        std::sort(m_options.hiddenHeads.begin(), m_options.hiddenHeads.end());
    }
    changed();
}

void TokensView::setMeanShown(bool shown)
{
    if (m_options.showMean == shown)
        return;
    m_options.showMean = shown;
    changed();
}

void TokensView::setHover(int query, int key)
{
    if (m_options.hoverQuery == query && m_options.hoverKey == key)
        return;
    m_options.hoverQuery = query;
    m_options.hoverKey = key;
    m_canvas->update();
}

void TokensView::setTextHead(int head)
{
    head = std::max(head, 0);
    if (m_options.textHead == head)
        return;
    m_options.textHead = head;
    changed();
}

void TokensView::setQuery(int query)
{
    query = std::max(query, -1);
    if (m_options.query == query)
        return;
    m_options.query = query;
    changed();
}

void TokensView::setRowRange(bool rowRange)
{
    if (m_options.rowRange == rowRange)
        return;
    m_options.rowRange = rowRange;
    changed();
}

void TokensView::setColormap(ColormapId id)
{
    id = StepsRenderer::effectiveWeightsColormap(id);
    if (m_options.colormap == id)
        return;
    m_options.colormap = id;
    m_canvas->update();
}

TokenViewOptions TokensView::options() const
{
    TokenViewOptions o = m_options;
    o.background = palette().color(QPalette::Base);
    o.foreground = palette().color(QPalette::Text);
    o.fontPixelSize = QFontInfo(font()).pixelSize();
    return o;
}

TokenViewOptions TokensView::exportOptions() const
{
    TokenViewOptions o = options();
    o.background = Qt::white;
    o.foreground = Qt::black;
    o.hoverQuery = o.hoverKey = -1;
    return o;
}

QCheckBox *TokensView::headCheckBox(int head) const
{
    return head >= 0 && head < m_headBoxes.size() ? m_headBoxes[head] : nullptr;
}

void TokensView::syncControls()
{
    const int h = m_result && m_result->ok() ? m_result->headCount() : 0;
    const bool heads = m_options.view == TokenView::Heads;
    {
        const QSignalBlocker blocker(m_viewCombo);
        m_viewCombo->setCurrentIndex(heads ? 0 : 1);
    }
    // One checkbox per head in its line colour, then "mean".
    if (m_headBoxes.size() != h + 1) {
        qDeleteAll(m_headBoxes);
        m_headBoxes.clear();
        for (int k = 0; k <= h; ++k) {
            auto *box = new QCheckBox(k < h ? QString::number(k) : tr("mean"));
            box->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
            box->setObjectName(k < h ? QStringLiteral("tokensHead%1").arg(k)
                                     : QStringLiteral("tokensMean"));
            QPixmap swatch(12, 12);
            swatch.fill(k < h ? tokenHeadColor(k) : palette().color(QPalette::Text));
            box->setIcon(QIcon(swatch));
            box->setToolTip(k < h ? tr("Draw the lines of head %1").arg(k)
                                  : tr("Draw the lines of the mean over the heads"));
            connect(box, &QCheckBox::toggled, this, [this, k, h](bool on) {
                if (k < h)
                    setHeadShown(k, on);
                else
                    setMeanShown(on);
            });
            m_headsLayout->addWidget(box, 1 + k / kHeadsPerLine, k % kHeadsPerLine);
            m_headBoxes.append(box);
        }
    }
    for (int k = 0; k <= h; ++k) {
        const QSignalBlocker blocker(m_headBoxes[k]);
        m_headBoxes[k]->setChecked(k < h ? isHeadShown(k) : m_options.showMean);
    }
    {
        const QSignalBlocker blocker(m_textHeadCombo);
        if (m_textHeadCombo->count() != (h > 0 ? h + 1 : 0)) {
            m_textHeadCombo->clear();
            for (int k = 0; k < h; ++k)
                m_textHeadCombo->addItem(tr("head %1").arg(k));
            if (h > 0)
                m_textHeadCombo->addItem(tr("mean"));
        }
        if (h > 0)
            m_textHeadCombo->setCurrentIndex(std::clamp(m_options.textHead, 0, h));
    }
    {
        const QSignalBlocker blocker(m_rangeCombo);
        m_rangeCombo->setCurrentIndex(m_options.rowRange ? 0 : 1);
    }
    m_headsRow->setVisible(heads);
    m_textRow->setVisible(!heads);
    const bool signedWeights = m_result && m_result->signedWeights;
    m_hint->setText(
        heads && signedWeights
            ? tr("Each head's lines join query i (left) to key j (right), opacity ∝ |w_ij| (the "
                 "largest opaque), dashed where the signed weight is negative; |w| below %1 and "
                 "masked cells draw no line. Hover a token to keep only its lines.")
                  .arg(m_options.threshold)
            : heads
            ? tr("Each head's lines join query i (left) to key j (right), opacity ∝ "
                 "weight w_ij (the largest opaque); weights below %1 and masked cells draw no "
                 "line. Hover a token to keep "
                 "only its lines.")
                  .arg(m_options.threshold)
            : tr("Click a query token: every key is coloured by the weight it gives it; "
                 "masked keys are grey and hatched."));
}

QJsonObject TokensView::state() const
{
    return tokenViewToJson(m_options);
}

void TokensView::setState(const QJsonObject &state)
{
    m_options = tokenViewFromJson(state, m_options);
    m_options.hoverQuery = m_options.hoverKey = -1;
    changed();
}

QSize TokensView::defaultExportSize() const
{
    const QSize s = m_canvas->size();
    return {std::max(900, s.width()), std::max(560, s.height())};
}

QString TokensView::exportName() const
{
    return m_options.view == TokenView::Heads ? tr("Token Head View") : tr("Coloured Tokens");
}

QString TokensView::exportFileName() const
{
    return m_options.view == TokenView::Heads ? QStringLiteral("attention-tokens.png")
                                              : QStringLiteral("attention-text.png");
}

bool TokensView::exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return saveTokenFigure(path, size, dpr, m_result.get(), exportOptions(), error);
}

void TokensView::exportInteractive()
{
    exportFigureInteractive(this, tr("Export %1").arg(exportName()), exportFileName(),
                            [this](const QString &path, QString *error) {
                                return exportFigure(path, defaultExportSize(), 2.0, error);
                            });
}

} // namespace attn
