#include "ui/views/longmapview_p.h"

#include "ui/export/dataexport.h"
#include "ui/render/figurefile.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"
#include "ui/views/figureexport.h"

#include "core/attention/mask.h"

#include <QComboBox>
#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonValue>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <memory>

namespace attn {

/// The hover text's parts of the 2025 variants (4 significant digits): A₁ and A₂ under
/// differential attention, the row's gate σ(g) and learned-sink mass.
static QString variantParts(const SessionParameters &p, const TileCell &c)
{
    const auto number = [](double v) { return figure::minusSign(QString::number(v, 'g', 4)); };
    QString out;
    if (p.differential)
        out += LongMapView::tr(", A\u2081 %1, A\u2082 %2")
                   .arg(number(c.firstWeight), number(c.secondWeight));
    if (p.outputGate)
        out += LongMapView::tr(", gate %1").arg(number(c.gate));
    if (p.learnedSink)
        out += LongMapView::tr(", row's sink mass %1").arg(number(c.sinkMass));
    return out;
}

using namespace longmap;

LongMapView::LongMapView(QWidget *parent, int tilePixels)
    : QWidget(parent)
    , m_tiles(new LongMapTiles(this, tilePixels))
{
    buildControls();
    connectControls();
    connectTiles();
    updateHeads();
    updateStatus();
}

void LongMapView::buildControls()
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);

    auto *controls = new QHBoxLayout;
    auto *nLabel = new QLabel(tr("&n"));
    m_nSpin = new QSpinBox;
    m_nSpin->setObjectName(QStringLiteral("longLengthSpin"));
    m_nSpin->setRange(2, SessionParameters::maxLongSequence);
    m_nSpin->setValue(defaultLength);
    m_length = defaultLength;
    m_nSpin->setKeyboardTracking(false);
    m_nSpin->setToolTip(tr("Sequence length of this map (n_q = n_k), up to %1. The other "
                           "parameters are the session's.")
                            .arg(SessionParameters::maxLongSequence));
    nLabel->setBuddy(m_nSpin);
    m_headCombo = new QComboBox;
    m_headCombo->setObjectName(QStringLiteral("longHeadCombo"));
    m_headCombo->setToolTip(tr("The head shown, or the mean over heads"));
    m_headCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_poolingCombo = new QComboBox;
    m_poolingCombo->setObjectName(QStringLiteral("longPoolingCombo"));
    m_poolingCombo->addItem(tr("max pool"));
    m_poolingCombo->addItem(tr("mean pool"));
    m_poolingCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_poolingCombo->setToolTip(tr("How a pixel combines its cells: the largest weight (a single "
                                  "spike stays visible at every zoom) or their mean"));
    m_scaleCombo = new QComboBox;
    m_scaleCombo->setObjectName(QStringLiteral("longScaleCombo"));
    m_scaleCombo->addItem(tr("0 … max w"));
    m_scaleCombo->addItem(tr("0 … 1"));
    m_scaleCombo->addItem(tr("log"));
    // Log by default: over thousands of keys most weights are near 1/n, and one weight of 1 (a
    // causal map's first row) leaves a linear scale black.
    m_scaleCombo->setCurrentIndex(int(Scale::Log));
    m_scaleCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_scaleCombo->setToolTip(tr("Colour scale: linear up to the head's largest weight, linear "
                                "over [0, 1], or log₁₀ over the five decades below the largest "
                                "weight; signed weights (differential attention): linear over "
                                "±the largest |w| or ±1, or a symmetric log over ±the largest "
                                "|w|, linear within 10⁻⁵ of it"));
    m_fitButton = new QPushButton(tr("Fit"));
    m_fitButton->setObjectName(QStringLiteral("longFitButton"));
    m_fitButton->setToolTip(tr("Show every cell (Home)"));
    m_exportButton = new QPushButton(tr("Export…"));
    m_exportButton->setObjectName(QStringLiteral("longExportButton"));
    m_exportButton->setToolTip(tr("Save the visible window as a figure computed at the export's "
                                  "resolution (PNG, SVG, PDF) or as data (CSV, JSON, .npy)"));
    m_stepsButton = new QPushButton(tr("Steps"));
    m_stepsButton->setObjectName(QStringLiteral("longStepsButton"));
    m_stepsButton->setToolTip(tr("Open the visible window (zoom in to at most %1 × %1 cells) in "
                                 "the Steps tab: raw scores → scaled scores → weights, exactly, "
                                 "with each row's metrics over every key")
                                  .arg(maxStepsSide));
    m_compareButton = new QPushButton(tr("A/B"));
    m_compareButton->setObjectName(QStringLiteral("longCompareButton"));
    m_compareButton->setToolTip(tr("Compare the visible window (at most %1 × %1 cells) in the "
                                   "Compare A/B tab: B is the same window with B's scale, "
                                   "temperature, mask or d_k, each row over every key")
                                    .arg(maxStepsSide));
    m_computeButton = new QPushButton(tr("Compute"));
    m_computeButton->setObjectName(QStringLiteral("longComputeButton"));
    m_computeButton->setToolTip(tr("Compute the map again"));
    controls->addWidget(nLabel);
    controls->addWidget(m_nSpin);
    controls->addWidget(m_headCombo);
    controls->addWidget(m_poolingCombo);
    controls->addWidget(m_scaleCombo);
    controls->addStretch(1);
    layout->addLayout(controls);

    auto *progressRow = new QHBoxLayout;
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("longProgress"));
    m_progress->setRange(0, 1000);
    // The percentage is in the status line, not on the bar, whose fill hides half the text.
    m_progress->setTextVisible(false);
    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setObjectName(QStringLiteral("longCancelButton"));
    // The second row: the first full view's progress and Cancel while it runs, then the view's
    // buttons.
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancelButton);
    progressRow->addStretch(0);
    progressRow->addWidget(m_stepsButton);
    progressRow->addWidget(m_compareButton);
    progressRow->addWidget(m_fitButton);
    progressRow->addWidget(m_computeButton);
    progressRow->addWidget(m_exportButton);
    layout->addLayout(progressRow);

    m_canvas = new Canvas(this);
    layout->addWidget(m_canvas, 1);
    m_hover = new QLabel;
    m_hover->setObjectName(QStringLiteral("longHoverLabel"));
    m_hover->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_hover->setWordWrap(true);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("longStatusLabel"));
    m_status->setWordWrap(true);
    // Three lines and two, whatever the text: a label that changes its height on every hover would
    // lay out the whole window again.
    for (QLabel *label : {m_hover, m_status}) {
        label->setFixedHeight((label == m_hover ? 3 : 2) * label->fontMetrics().lineSpacing() + 4);
        label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    }
    layout->addWidget(m_hover);
    layout->addWidget(m_status);
}

void LongMapView::connectControls()
{
    m_restart = new QTimer(this);
    m_restart->setSingleShot(true);
    m_restart->setInterval(250);
    connect(m_restart, &QTimer::timeout, this, &LongMapView::recompute);
    connect(m_nSpin, &QSpinBox::valueChanged, this, [this](int n) {
        if (!m_params.tensors)
            m_length = n;
        scheduleRecompute();
        emit stateChanged();
    });
    connect(m_headCombo, &QComboBox::activated, this,
            [this](int index) { setHead(index < m_params.heads ? Index(index) : kHeadMean); });
    connect(m_poolingCombo, &QComboBox::activated, this, [this] { setPooling(pooling()); });
    connect(m_scaleCombo, &QComboBox::activated, this, [this] {
        updateColors();
        emit stateChanged();
    });
    connect(m_fitButton, &QPushButton::clicked, this, &LongMapView::fit);
    connect(m_stepsButton, &QPushButton::clicked, this, &LongMapView::openWindowInSteps);
    connect(m_compareButton, &QPushButton::clicked, this, &LongMapView::openWindowInCompare);
    connect(m_exportButton, &QPushButton::clicked, this, &LongMapView::exportInteractive);
    connect(m_cancelButton, &QPushButton::clicked, this, [this] {
        m_cancelledByUser = true;
        m_tiles->cancel();
    });
    connect(m_computeButton, &QPushButton::clicked, this, [this] {
        m_shownKey.clear();
        recompute();
    });
}

void LongMapView::connectTiles()
{

    connect(m_tiles, &LongMapTiles::progressChanged, this, [this](double f) {
        m_progress->setValue(int(std::lround(f * 1000)));
        updateStatus();
    });
    connect(m_tiles, &LongMapTiles::fullViewReady, this, [this] {
        m_fullViewSeconds = double(QDateTime::currentMSecsSinceEpoch() - m_startedMs) / 1000.0;
        m_message.clear();
        updateColors();
        requestTiles();
        updateStatus();
        m_canvas->update();
        emit fullViewShown();
    });
    connect(m_tiles, &LongMapTiles::failed, this, [this](const QString &message) {
        m_message = tr("Cannot show this map: %1").arg(message);
        updateStatus();
        m_canvas->update();
    });
    connect(m_tiles, &LongMapTiles::cancelled, this, [this] {
        m_message = tr("Cancelled. Press Compute to compute the map, or change a parameter.");
        updateStatus();
        m_canvas->update();
    });
    connect(m_tiles, &LongMapTiles::tileReady, this, [this] {
        m_canvas->update();
        if (viewComplete())
            emit viewCompleted();
    });
    connect(m_tiles, &LongMapTiles::rowReady, this, [this](const LongRowStrip &strip) {
        if (strip.head != m_head)
            return;
        m_rowStrip = strip;
        m_canvas->update();
        emit rowStripChanged();
    });
    connect(m_tiles, &LongMapTiles::cellReady, this,
            [this](Index head, Index i, Index j, const TileCell &c) {
                if (head != m_head || i != m_hoverRow || j != m_hoverCol)
                    return;
                const QString mask = c.maskState == MaskAllowed
                    ? tr("allowed")
                    : tr("masked (%1)").arg(QString::fromStdString(maskStateText(c.maskState)));
                m_hoverCell = c.hasScores
                    ? tr("query %1, key %2: raw score %3, scaled score %4, weight %5, %6")
                          .arg(i)
                          .arg(j)
                          .arg(number(c.rawScore), number(c.scaledScore), number(c.weight), mask)
                    : tr("query %1, key %2: mean weight over heads %3, %4")
                          .arg(i)
                          .arg(j)
                          .arg(number(c.weight), mask);
                m_hoverCell += variantParts(mapParameters(), c);
                m_hover->setText(hoverText());
                emit hoverChanged();
            });
}

LongMapView::~LongMapView() = default;

QWidget *LongMapView::canvas() const
{
    return m_canvas;
}

QString LongMapView::keyOf(const SessionParameters &p) const
{
    return keyOf(p, pooling());
}

QString LongMapView::keyOf(const SessionParameters &p, TilePooling pooling)
{
    // Opened tensors are not in the JSON: the source (file, array, layer, batch item) is.
    const QString source = p.tensors ? QStringLiteral("/%1/%2/%3/%4/%5")
                                           .arg(p.tensors->path(), p.tensors->arrayName())
                                           .arg(p.tensors->layer())
                                           .arg(p.tensors->batch())
                                           .arg(int(p.tensors->maskConvention()))
                                     : QString();
    return QString::fromUtf8(QJsonDocument(p.toJson()).toJson(QJsonDocument::Compact))
        + QLatin1Char('/') + QString::number(int(pooling)) + source;
}

void LongMapView::setParameters(const SessionParameters &p)
{
    m_params = p;
    // Opened tensors have their own lengths: the map shows them at the file's n_q × n_k.
    m_nSpin->setEnabled(!p.tensors);
    {
        // Opened tensors show the file's length; the seeded inputs the length set for them.
        const QSignalBlocker quiet(m_nSpin);
        m_nSpin->setValue(p.tensors
                              ? int(std::clamp<Index>(p.n, 2, SessionParameters::maxLongSequence))
                              : m_length);
    }
    updateHeads();
    scheduleRecompute();
}

void LongMapView::setLength(int n)
{
    m_length = std::clamp(n, 2, int(SessionParameters::maxLongSequence));
    if (!m_params.tensors)
        m_nSpin->setValue(m_length);
    scheduleRecompute();
    emit stateChanged();
}

int LongMapView::length() const
{
    return m_length;
}

SessionParameters LongMapView::mapParameters() const
{
    SessionParameters p = m_params;
    if (p.tensors) {
        // A model run's queries and keys are the forward's float32 numbers: its map computes in
        // float32 too (half the engine's memory at long n).
        if (p.tensors->isModelRun())
            p.dtype = DType::Float32;
        return p; // opened tensors: the file's lengths and token labels
    }
    p.n = length();
    p.nK = length();
    p.tokens.clear();
    return p;
}

void LongMapView::setHead(Index head)
{
    if (head != kHeadMean && (head < 0 || head >= m_params.heads))
        head = 0;
    if (head == kHeadMean && m_params.heads < 2)
        head = 0;
    const bool changed = head != m_head;
    m_head = head;
    m_headCombo->setCurrentIndex(head == kHeadMean ? m_params.heads : int(head));
    if (changed)
        emit stateChanged();
    m_hoverCell.clear();
    updateColors();
    requestTiles();
    m_canvas->update();
}

void LongMapView::setPooling(TilePooling pooling)
{
    m_poolingCombo->setCurrentIndex(pooling == TilePooling::Max ? 0 : 1);
    emit stateChanged();
    // A computed map keeps its zoom and row statistics: only the tiles are pooled anew.
    if (m_tiles->isReady() && pooling != m_tiles->pooling()
        && keyOf(mapParameters(), m_tiles->pooling()) == m_shownKey) {
        m_tiles->setPooling(pooling);
        m_shownKey = keyOf(mapParameters());
        m_rowStrip = LongRowStrip();
        m_hoverCell.clear();
        m_hoverPixel.clear();
        requestTiles();
        updateStatus();
        m_canvas->update();
        return;
    }
    scheduleRecompute();
}

TilePooling LongMapView::pooling() const
{
    return m_poolingCombo->currentIndex() == 1 ? TilePooling::Mean : TilePooling::Max;
}

void LongMapView::setScale(Scale scale)
{
    m_scaleCombo->setCurrentIndex(int(scale));
    updateColors();
    emit stateChanged();
}

QJsonObject LongMapView::state() const
{
    static const char *scales[] = {"max_weight", "unit", "log"};
    QJsonObject o;
    o.insert(QStringLiteral("n"), length());
    o.insert(QStringLiteral("head"), m_head == kHeadMean ? -1 : int(m_head));
    o.insert(QStringLiteral("pooling"),
             pooling() == TilePooling::Max ? QStringLiteral("max") : QStringLiteral("mean"));
    o.insert(QStringLiteral("scale"),
             QLatin1String(scales[std::clamp(m_scaleCombo->currentIndex(), 0, 2)]));
    return o;
}

void LongMapView::setState(const QJsonObject &state)
{
    const QJsonValue n = state.value(QLatin1String("n"));
    if (n.isDouble() && n.toDouble() >= 2 && n.toDouble() <= SessionParameters::maxLongSequence
        && n.toDouble() == std::floor(n.toDouble()))
        setLength(n.toInt());
    const QString pool = state.value(QLatin1String("pooling")).toString();
    if (pool == QLatin1String("max") || pool == QLatin1String("mean"))
        m_poolingCombo->setCurrentIndex(pool == QLatin1String("max") ? 0 : 1);
    const QString scale = state.value(QLatin1String("scale")).toString();
    const QStringList scales
        = {QStringLiteral("max_weight"), QStringLiteral("unit"), QStringLiteral("log")};
    if (scales.contains(scale))
        m_scaleCombo->setCurrentIndex(int(scales.indexOf(scale)));
    const QJsonValue head = state.value(QLatin1String("head"));
    if (head.isDouble() && head.toDouble() == std::floor(head.toDouble())) {
        const int h = head.toInt();
        if (h == -1 && m_params.heads > 1)
            setHead(kHeadMean);
        else if (h >= 0 && h < m_params.heads)
            setHead(h);
    }
    updateColors();
    scheduleRecompute();
}

void LongMapView::updateHeads()
{
    const int h = int(std::max<Index>(1, m_params.heads));
    if (m_headCombo->count() != h + (h > 1 ? 1 : 0)) {
        m_headCombo->clear();
        for (int i = 0; i < h; ++i)
            m_headCombo->addItem(tr("head %1").arg(i));
        if (h > 1)
            m_headCombo->addItem(tr("mean"));
    }
    if (m_head != kHeadMean && m_head >= h)
        m_head = 0;
    if (m_head == kHeadMean && h < 2)
        m_head = 0;
    m_headCombo->setCurrentIndex(m_head == kHeadMean ? h : int(m_head));
}

void LongMapView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    scheduleRecompute();
}

void LongMapView::scheduleRecompute()
{
    if (isVisible() && keyOf(mapParameters()) != m_shownKey)
        m_restart->start();
}

void LongMapView::recompute()
{
    m_restart->stop();
    const SessionParameters p = mapParameters();
    const QString key = keyOf(p);
    if (key == m_shownKey && (m_tiles->isReady() || m_tiles->isComputingFullView()))
        return;
    m_shownKey = key;
    m_cancelledByUser = false;
    m_message.clear();
    m_hoverCell.clear();
    m_hoverPixel.clear();
    m_hoverRow = m_hoverCol = -1;
    m_rowStrip = LongRowStrip();
    // The memory budget, counting what this view holds: the projection's inputs while they
    // exist, then the engine and both tile caches.
    const LongMapBytes bytes = m_tiles->bytesFor(p);
    if (p.validate(SessionParameters::maxLongSequence).isEmpty()
        && bytes.total() > double(sessionMemoryBudget())) {
        m_tiles->clear();
        m_message = tr("Cannot show this map: it needs %1, the larger of the inputs while they "
                       "are projected (%2) and the tile engine with its tile caches (%3 + %4), "
                       "over the budget of %5 (a quarter of this machine's memory). Lower n or "
                       "d_model, or choose float32.")
                        .arg(mib(bytes.total()), mib(bytes.inputs), mib(bytes.engine),
                             mib(bytes.cache), mib(double(sessionMemoryBudget())));
        updateStatus();
        m_canvas->update();
        return;
    }
    // The whole map, at the level that fits it.
    std::optional<TilePyramid> fitted;
    try {
        fitted.emplace(p.queryCount(), p.keyCount(), m_tiles->tilePixels());
    } catch (const InvalidArgument &) {
        // invalid n: start() names the problem
    }
    LongMapViewport &vp = viewport();
    vp.setPyramid(fitted);
    vp.fit();
    const int fitLevel = vp.level();
    m_startedMs = QDateTime::currentMSecsSinceEpoch();
    m_progress->setValue(0);
    m_tiles->start(p, pooling(), fitLevel);
    updateStatus();
    m_canvas->update();
}

QRectF LongMapView::mapArea() const
{
    const QRectF r = m_canvas->rect();
    return r.adjusted(axisLeft, axisTop, -legendWidth, -axisBottom);
}

LongMapViewport &LongMapView::viewport() const
{
    m_viewport.setMapArea(mapArea());
    m_viewport.setPyramid(m_tiles->pyramid());
    return m_viewport;
}

CellRect LongMapView::viewRect() const
{
    return viewport().viewRect();
}

void LongMapView::setViewRect(const CellRect &cells)
{
    viewport().setViewRect(cells);
    requestTiles();
    updateStatus();
    refreshHover();
    m_canvas->update();
}

int LongMapView::level() const
{
    return viewport().level();
}

void LongMapView::clampView()
{
    viewport().clamp();
}

void LongMapView::zoomAt(QPointF pos, double factor)
{
    if (!m_tiles->isReady() || !(factor > 0))
        return;
    viewport().zoomAt(pos, factor);
    requestTiles();
    updateStatus();
    refreshHover();
    m_canvas->update();
}

void LongMapView::panBy(QPointF delta)
{
    if (!m_tiles->isReady())
        return;
    viewport().panBy(delta);
    requestTiles();
    refreshHover();
    m_canvas->update();
}

void LongMapView::refreshHover()
{
    // The pointer stays where it is while the view moves under it (wheel, keys, drag): the
    // readout names the cell now under it and the pixel of the new level.
    if (m_hoverRow >= 0 && m_hoverPos.x() >= 0)
        hover(m_hoverPos);
}

void LongMapView::fit()
{
    viewport().fit();
    requestTiles();
    updateStatus();
    refreshHover();
    m_canvas->update();
}

void LongMapView::requestTiles()
{
    const std::optional<TilePyramid> &pyramid = m_tiles->pyramid();
    if (!m_tiles->isReady() || !pyramid)
        return;
    const int l = level();
    m_tiles->request(m_head, l, pyramid->tilesCovering(l, viewRect()));
    requestHovered(); // the row strip follows the visible keys
    updateStatus(); // its level and cells per pixel follow the view (a resize changes them)
    if (viewComplete())
        emit viewCompleted();
}

bool LongMapView::viewComplete() const
{
    const std::optional<TilePyramid> &pyramid = m_tiles->pyramid();
    if (!m_tiles->isReady() || !pyramid)
        return false;
    const int l = level();
    for (const TileIndex &t : pyramid->tilesCovering(l, viewRect()))
        if (!m_tiles->image({m_head, l, t}))
            return false;
    return true;
}

void LongMapView::updateColors()
{
    if (!m_tiles->isReady())
        return;
    const double top = m_tiles->maxWeight(m_head);
    const bool signedWeights = mapParameters().differential;
    // The scale menu names what each entry means for the weights drawn.
    const QStringList names = signedWeights
        ? QStringList {tr("± max |w|"), tr("−1 … 1"), tr("symmetric log")}
        : QStringList {tr("0 … max w"), tr("0 … 1"), tr("log")};
    for (int i = 0; i < names.size(); ++i)
        m_scaleCombo->setItemText(i, names[i]);
    if (signedWeights) {
        // Signed weights (A₁ − λA₂): the diverging map centred on 0, over ±the largest |w|, ±1,
        // or a symmetric log over ±the largest |w| (linear within 10⁻⁵ of it): over thousands of
        // keys most |w| are near 1/n, which a linear scale leaves white.
        const double m = top > 0 ? top : 1.0;
        ColorNorm norm;
        switch (Scale(m_scaleCombo->currentIndex())) {
        case Scale::MaxWeight:
            norm = ColorNorm::symmetric(m);
            break;
        case Scale::Unit:
            norm = ColorNorm::symmetric(1.0);
            break;
        case Scale::Log:
            norm = ColorNorm::symmetricLog(m);
            break;
        }
        m_tiles->setColors(ColormapId::RdBu, norm);
        requestTiles();
        updateStatus();
        m_canvas->update();
        return;
    }
    ColorNorm norm;
    switch (Scale(m_scaleCombo->currentIndex())) {
    case Scale::MaxWeight:
        norm = ColorNorm::upToLargestWeight(ColorScale::Linear, top);
        break;
    case Scale::Unit:
        norm = ColorNorm::linear(0, 1);
        break;
    case Scale::Log:
        norm = ColorNorm::upToLargestWeight(ColorScale::Log, top);
        break;
    }
    m_tiles->setColors(ColormapId::Viridis, norm);
    requestTiles();
    updateStatus();
    m_canvas->update();
}

void LongMapView::hover(QPointF pos)
{
    m_hoverPos = pos;
    const auto [i, j] = cellAt(pos);
    if (i < 0) {
        m_hoverRow = m_hoverCol = -1;
        m_hoverPixel.clear();
        m_hoverCell.clear();
        m_hover->setText(QString());
        emit hoverChanged();
        return;
    }
    if (i == m_hoverRow && j == m_hoverCol && m_hoverLevel == level())
        return;
    m_hoverLevel = level();
    m_hoverRow = i;
    m_hoverCol = j;
    const TilePyramid &pyramid = *m_tiles->pyramid();
    const int l = level();
    const Index per = TilePyramid::cellsPerPixel(l);
    const Index r0 = i / per * per, c0 = j / per * per;
    const Index r1 = std::min(pyramid.queries(), r0 + per) - 1;
    const Index c1 = std::min(pyramid.keys(), c0 + per) - 1;
    const QString pool = m_tiles->pooling() == TilePooling::Max
        ? tr("the largest of")
        : tr("the mean of the unmasked among");
    m_hoverPixel = per == 1
        ? tr("pixel: query %1 × key %2 (one cell)").arg(i).arg(j)
        : tr("pixel: queries %1–%2 × keys %3–%4; the map shows %5 its %6 × %7 cells")
              .arg(r0)
              .arg(r1)
              .arg(c0)
              .arg(c1)
              .arg(pool)
              .arg(r1 - r0 + 1)
              .arg(c1 - c0 + 1);
    m_hoverCell = tr("query %1, key %2: computing…").arg(i).arg(j);
    requestHovered();
    m_hover->setText(hoverText());
    emit hoverChanged();
}

void LongMapView::requestHovered()
{
    if (!m_tiles->isReady())
        return;
    const TileWindow w = visibleWindow();
    if (m_hoverRow >= 0) {
        m_tiles->requestCell(m_head, m_hoverRow, m_hoverCol, w.colBegin, w.colEnd,
                             TilePyramid::cellsPerPixel(level()));
        return;
    }
    // The pointer has left the map (to press Fit, say): the strip keeps the last hovered query
    // and follows the view over it, the cell asked for with it going unread.
    const Index query = m_rowStrip.query;
    if (query < 0 || query >= m_tiles->pyramid()->queries() || w.colEnd <= w.colBegin)
        return;
    m_tiles->requestCell(m_head, query, w.colBegin, w.colBegin, w.colEnd,
                         TilePyramid::cellsPerPixel(level()));
}

std::pair<Index, Index> LongMapView::cellAt(QPointF pos) const
{
    if (!m_tiles->isReady())
        return {-1, -1};
    return viewport().cellAt(pos);
}

QString LongMapView::hoverText() const
{
    if (m_hoverPixel.isEmpty())
        return QString();
    return m_hoverCell + QStringLiteral(" · ") + m_hoverPixel;
}

QString LongMapView::statusText() const
{
    return m_status->text();
}

void LongMapView::updateStatus()
{
    const bool computing = m_tiles->isComputingFullView();
    m_progress->setVisible(computing);
    m_cancelButton->setVisible(computing);
    m_computeButton->setVisible(!computing);
    m_exportButton->setEnabled(m_tiles->isReady());
    m_fitButton->setEnabled(m_tiles->isReady());
    const TileWindow shown = visibleWindow();
    m_stepsButton->setEnabled(m_tiles->isReady() && shown.rows() <= maxStepsSide
                              && shown.cols() <= maxStepsSide);
    m_compareButton->setEnabled(m_stepsButton->isEnabled());
    const SessionParameters p = mapParameters();
    if (!m_tiles->isReady()) {
        // Until the first band of rows is done the inputs are being projected: Q = X W_Qᵀ and
        // K = E W_Kᵀ, 2 n d_model² flops each.
        const double projection = 4.0 * double(p.n) * double(p.dModel) * double(p.dModel);
        m_status->setText(!computing ? m_message
                              : m_progress->value() == 0
                              ? tr("n = %1, h = %2, d_k = %3: projecting the inputs to "
                                   "queries and keys (%4 GFLOP), then the first full "
                                   "view from Q and K, without the n × n matrix")
                                    .arg(p.n)
                                    .arg(p.heads)
                                    .arg(p.dK())
                                    .arg(projection * 1e-9, 0, 'g', 3)
                              : tr("n = %1, h = %2, d_k = %3: computing the first full "
                                   "view from Q and K, without the n × n matrix: %4 %")
                                    .arg(p.n)
                                    .arg(p.heads)
                                    .arg(p.dK())
                                    .arg(m_progress->value() / 10));
        return;
    }
    const int l = level();
    const Index per = TilePyramid::cellsPerPixel(l);
    const QString pool = m_tiles->pooling() == TilePooling::Max
        ? (p.differential ? tr("largest-|w| pooling (sign kept)") : tr("max pooling"))
        : tr("mean pooling (unmasked cells)");
    const ColorNorm norm = m_tiles->norm();
    const QString signedNote = p.differential ? tr(" · signed A₁ − λA₂") : QString();
    m_status->setText(
        tr("%1 of %2 × %2 cells per pixel (level %3) · colour %4 %5 … %6 · scale %7 · first "
           "full view %8 s · n = %9, h = %10, %11")
            .arg(pool)
            .arg(per)
            .arg(l)
            .arg(norm.scaleName(), figure::minusSign(QString::number(norm.vmin, 'g', 3)),
                 figure::minusSign(QString::number(norm.vmax, 'g', 3)))
            .arg(number(m_tiles->scale()))
            .arg(m_fullViewSeconds, 0, 'f', 2)
            .arg(p.n)
            .arg(p.heads)
            .arg(dtypeId(p.dtype))
        + (p.tensors && p.tensors->layerCount() > 1
               ? tr(" · layer %1 of %2").arg(p.tensors->layer()).arg(p.tensors->layerCount())
               : QString())
        + signedNote);
}

TileWindow LongMapView::visibleWindow() const
{
    return viewport().visibleWindow();
}

void LongMapView::materializeVisibleWindow(
    const QString &where, QPushButton *button,
    const std::function<void(std::shared_ptr<const SessionResult>, const TileWindow &)> &then)
{
    const TileWindow w = visibleWindow();
    if (!m_tiles->isReady() || w.rows() > maxStepsSide || w.cols() > maxStepsSide) {
        m_status->setText(tr("Zoom in to at most %1 × %1 cells to open the window in %2 "
                             "(now %3 × %4)")
                              .arg(maxStepsSide)
                              .arg(where)
                              .arg(w.rows())
                              .arg(w.cols()));
        return;
    }
    button->setEnabled(false);
    m_status->setText(tr("Computing the window's scores and weights for %1…").arg(where));
    m_tiles->materializeWindow(
        w, [this, where, w, then](std::shared_ptr<const SessionResult> r, const QString &error) {
            updateStatus();
            if (!r) {
                m_status->setText(tr("Cannot open the window in %1: %2").arg(where, error));
                return;
            }
            then(std::move(r), w);
        });
}

void LongMapView::openWindowInSteps()
{
    const Index head = m_head;
    materializeVisibleWindow(
        tr("Steps"), m_stepsButton,
        [this, head](std::shared_ptr<const SessionResult> r, const TileWindow &) {
            emit windowMaterialized(r, head);
        });
}

void LongMapView::openWindowInCompare()
{
    const Index head = m_head;
    materializeVisibleWindow(
        tr("A/B"), m_compareButton,
        [this, head](std::shared_ptr<const SessionResult> r, const TileWindow &w) {
            const SessionParameters a = r->params;
            CompareWindowSource source
                = [self = QPointer<LongMapView>(this), a,
                   w](const SessionParameters &b,
                      std::function<void(std::shared_ptr<const SessionResult>, const QString &)>
                          deliver) {
                      if (!self) {
                          deliver(nullptr, tr("the Long tab is gone"));
                          return;
                      }
                      self->computeVariantWindow(a, b, w, std::move(deliver));
                  };
            emit windowForCompare(r, head, std::move(source));
        });
}

void LongMapView::computeVariantWindow(
    const SessionParameters &a, const SessionParameters &b, const TileWindow &w,
    std::function<void(std::shared_ptr<const SessionResult>, const QString &)> deliver)
{
    if (!m_tiles->isReady() || !(m_tiles->parameters() == a)) {
        deliver(nullptr,
                tr("the long map changed after the window was taken; open it in A/B "
                   "again"));
        return;
    }
    // The budget: the map as it is held, and B's inputs while projecting, then its engine.
    const LongMapBytes map = m_tiles->bytesFor(a);
    const LongMapBytes variant = m_tiles->bytesFor(b);
    const double total = map.engine + map.cache + std::max(variant.inputs, variant.engine);
    if (total > double(sessionMemoryBudget())) {
        deliver(nullptr,
                tr("B needs %1 (the map's engine and caches, %2, and B's inputs while "
                   "projecting, %3, or its engine, %4), over the budget of %5")
                    .arg(mib(total), mib(map.engine + map.cache), mib(variant.inputs),
                         mib(variant.engine), mib(double(sessionMemoryBudget()))));
        return;
    }
    m_tiles->materializeVariantWindow(b, w, std::move(deliver));
}

void LongMapView::exportInteractive()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the Visible Window"), exportStartPath(QStringLiteral("long-map.png")),
        tr("Figures (*.png *.svg *.pdf);;Data (*.csv *.json *.npy *.npz)"));
    if (path.isEmpty())
        return;
    rememberExportFolder(path);
    exportWindow(path);
}

void LongMapView::exportWindow(const QString &path, QSize size, qreal dpr)
{
    const std::optional<TilePyramid> &pyramid = m_tiles->pyramid();
    if (!m_tiles->isReady() || !pyramid) {
        emit exported(path, tr("the map is not computed yet"));
        return;
    }
    const TileWindow window = visibleWindow();
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool figure = suffix == QLatin1String("png") || suffix == QLatin1String("svg")
        || suffix == QLatin1String("pdf");
    const std::optional<DataFormat> data = dataFormatForPath(path);
    if (!figure && !data) {
        emit exported(path,
                      tr("unknown file type \".%1\": use .png, .svg, .pdf, .csv, .json, "
                         ".npy or .npz")
                          .arg(suffix));
        return;
    }
    const SessionParameters params = m_tiles->parameters();
    const Index heads = params.heads;
    const int shownHead = m_head == kHeadMean ? int(heads) : int(m_head);
    // The colours on screen (updateColors).
    const ColorNorm norm = m_tiles->norm();
    // A figure: pooled to the figure's device pixels; data: to at most 1024 × 1024. Square
    // pixels (as many cells down as across), so that the figure keeps the window's aspect.
    const Index side
        = figure ? Index(std::ceil(std::max(size.width(), size.height()) * dpr)) : Index(1024);
    const Index per
        = std::max<Index>(1, (std::max(window.rows(), window.cols()) + side - 1) / side);
    const Index gridWidth = (window.cols() + per - 1) / per;
    const Index gridHeight = (window.rows() + per - 1) / per;
    const ColormapId colormap = m_tiles->colormap();
    m_exportButton->setEnabled(false);
    // A figure draws the head shown; data holds every head and their mean.
    const QString what = !figure ? tr("every head")
        : m_head == kHeadMean    ? tr("the mean over heads")
                                 : tr("head %1").arg(m_head);
    m_status->setText(tr("Exporting the visible window (%1 × %2 cells, %3) to %4…")
                          .arg(window.rows())
                          .arg(window.cols())
                          .arg(what, QFileInfo(path).fileName()));
    m_tiles->runOnEngine(
        [=](const LongMapTiles::WindowRenderer &render) -> QString {
            std::vector<Index> which;
            for (Index h = 0; h < heads; ++h)
                which.push_back(h);
            if (heads > 1)
                which.push_back(kHeadMean);
            SessionResult r = render(which, window, gridWidth, gridHeight);
            r.params = params;
            auto shared = std::make_shared<const SessionResult>(std::move(r));
            QString error;
            if (!figure)
                return exportData(*shared, path, *data, nullptr, &error) ? QString() : error;
            HeatmapRenderer renderer;
            renderer.setResult(shared);
            HeatmapOptions o;
            o.view = HeatmapView::SingleHead;
            o.head = shownHead;
            o.colormap = colormap;
            o.useFixedNorm(norm);
            o.maxImageSide = int(side);
            renderer.setOptions(o);
            bool ok = false;
            if (suffix == QLatin1String("png"))
                ok = renderer.savePng(path, size, dpr, &error);
            else if (suffix == QLatin1String("svg"))
                ok = renderer.saveSvg(path, size, &error);
            else
                ok = renderer.savePdf(path, size, &error);
            return ok ? QString() : error;
        },
        [this, path](const QString &error) {
            m_exportButton->setEnabled(m_tiles->isReady());
            updateStatus();
            if (!error.isEmpty())
                m_status->setText(tr("Export failed: %1").arg(error));
            emit exported(path, error);
        });
}

} // namespace attn
