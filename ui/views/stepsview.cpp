#include "ui/views/stepsview.h"

#include "ui/views/figurecanvas.h"
#include "ui/views/figureexport.h"
#include "ui/views/pipelinestrip.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>

namespace attn {

StepsView::StepsView(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);

    auto *strip = new QHBoxLayout;
    auto *headLabel = new QLabel(tr("&Head:"));
    m_headCombo = new QComboBox;
    m_headCombo->setObjectName(QStringLiteral("stepsHeadCombo"));
    m_headCombo->setToolTip(tr("The head whose attention steps are shown (clicking a tile in the "
                               "Heads tab selects it too)"));
    m_headCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    headLabel->setBuddy(m_headCombo);
    m_hint = new QLabel(tr("Raw scores Q Kᵀ → scaled + masked Q Kᵀ·scale + M → softmax weights. "
                           "Hover a cell: it is outlined in all three panels."));
    m_hint->setObjectName(QStringLiteral("stepsHint"));
    m_hint->setWordWrap(true); // never widens the window
    m_hint->setToolTip(tr("Scores use a diverging scale centred on 0 (the triangles mark their "
                          "true min and max); weights use the fixed range [0, 1]. Masked cells "
                          "are grey and hatched (causal /, padding \\, custom |, outside the "
                          "window \u2014; crossed when masked twice), unlike a weight near 0. "
                          "The weights panel lists its min, max, mean and worst row-sum "
                          "error."));
    m_exportButton = new QPushButton(tr("Export…"));
    m_exportButton->setObjectName(QStringLiteral("stepsExportButton"));
    m_exportButton->setToolTip(tr("Save the three panels with their legends and the parameter "
                                  "caption as PNG, SVG or PDF"));
    strip->addWidget(headLabel);
    strip->addWidget(m_headCombo);
    strip->addStretch(1);
    m_sharedRange = new QCheckBox(tr("&Same score range"));
    m_sharedRange->setObjectName(QStringLiteral("stepsSharedRange"));
    m_sharedRange->setToolTip(tr("Raw and scaled scores on one colour range: the scaled panel "
                                 "fades as much as the scale shrinks the scores (unchecked: "
                                 "each panel spans its own values)"));
    strip->addWidget(m_sharedRange);
    m_vectors = new QCheckBox(tr("Vect&ors"));
    m_vectors->setObjectName(QStringLiteral("stepsVectors"));
    m_vectors->setToolTip(tr("Under the panels, the head's vectors from the token embeddings "
                             "to the layer's output: X (+ positions) → q, k, v → weights → "
                             "weights · v → the heads side by side → the output projection"));
    strip->addWidget(m_vectors);
    strip->addWidget(m_exportButton);
    layout->addLayout(strip);
    // The hint on a line of its own under the controls: squeezed between them it wrapped into a
    // tall column that took the panels' height in a narrow window.
    layout->addWidget(m_hint);

    m_canvas = new FigureCanvas(&m_renderer);
    m_canvas->setObjectName(QStringLiteral("stepsCanvas"));
    // Many panels in a small window scroll instead of shrinking below a readable cell.
    m_scroll = new FigureScrollArea(m_canvas);
    layout->addWidget(m_scroll, 1);
    m_pipeline = new PipelineStrip;
    m_pipeline->setVisible(false);
    layout->addWidget(m_pipeline);
    // New panels or a new font (presentation mode) change what the panels and the strip need.
    connect(m_pipeline, &PipelineStrip::panelsChanged, this, &StepsView::fitVectors);
    connect(m_canvas, &FigureCanvas::refreshed, this, &StepsView::fitVectors);

    connect(m_headCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            setHead(index);
    });
    connect(m_exportButton, &QPushButton::clicked, this, &StepsView::exportInteractive);
    connect(m_vectors, &QCheckBox::toggled, this, &StepsView::setVectorsShown);
    for (QCheckBox *check : {m_vectors, m_sharedRange})
        connect(check, &QCheckBox::toggled, this, &StepsView::stateChanged);
    connect(m_sharedRange, &QCheckBox::toggled, this, [this](bool shared) {
        m_renderer.setSharedScoreRange(shared);
        m_canvas->refresh();
    });
    syncHeads();
}

void StepsView::setResult(std::shared_ptr<const SessionResult> result)
{
    if (isVisible()) {
        m_pending.reset();
        m_stale = false;
        m_renderer.setResult(std::move(result));
        syncHeads();
        m_canvas->refresh();
        syncVectors();
        return;
    }
    // Hidden: keep the result for when the view is shown or read. The renderer lets go of the
    // one it shows (a cheap "No result yet" rebuild), so no outdated n × n matrices stay alive.
    if (!m_stale && m_renderer.result())
        m_renderer.setResult(nullptr);
    m_pending = std::move(result);
    m_stale = true;
    syncHeads();
}

void StepsView::ensureCurrent() const
{
    if (!m_stale)
        return;
    m_stale = false;
    m_renderer.setResult(std::move(m_pending));
    m_pending.reset();
    m_canvas->refresh();
}

void StepsView::showEvent(QShowEvent *event)
{
    ensureCurrent();
    syncVectors();
    QWidget::showEvent(event);
}

void StepsView::setVectorsShown(bool shown)
{
    if (m_vectors->isChecked() != shown)
        m_vectors->setChecked(shown); // comes back here through toggled
    m_pipeline->setVisible(shown);
    fitVectors();
    syncVectors();
}

void StepsView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    fitVectors();
}

void StepsView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        fitVectors();
}

void StepsView::fitVectors()
{
    const bool shown = m_vectors->isChecked();
    // With the vectors, the panels side by side share the first one's query labels: three
    // maps in a row of the room the strip leaves.
    if (m_renderer.style().shareQueryLabels != shown) {
        FigureStyle style = m_renderer.style();
        style.shareQueryLabels = shown;
        m_renderer.setStyle(style);
        m_canvas->refresh(); // (comes back here through refreshed, the style now set)
        return;
    }
    if (!shown || m_pipeline->panels().empty()) {
        m_scroll->setFitToViewport(false);
        return; // (a note alone: the strip keeps its own two lines)
    }
    const int width = m_scroll->width();
    const int region = height() - m_scroll->geometry().top() - layout()->spacing();
    const int least = m_pipeline->minimumHeightFor(width);
    const int most = std::max(least, m_pipeline->preferredHeightFor(width));
    // The chain from the embeddings to the output seen at once: the strip with its titles
    // whole, the panels above it never scrolled to, when what the strip leaves them (at its
    // least) still gives cells of kMinimumCell. Then the panels take the height that gives
    // cells as readable as the width allows (kReadableCell or nearly the width's limit) and
    // the strip the rest, up to rows a line tall. Too little room (a narrow pane between the
    // docks): the strip at its least and the panels scroll, each whole when scrolled to.
    const PanelFigure *figure = m_canvas->figure();
    const bool fits = figure->layout(QRectF(0, 0, width, std::max(region - least, 1))).cellSize
        >= FigureScrollArea::kMinimumCell;
    m_scroll->setFitToViewport(fits);
    if (!fits) {
        m_pipeline->setFixedHeight(least);
        return;
    }
    const qreal widest = 0.95 * figure->layout(QRectF(0, 0, width, 8192)).cellSize;
    const int panels
        = m_scroll->heightForCell(width, std::min<qreal>(FigureScrollArea::kReadableCell, widest));
    m_pipeline->setFixedHeight(std::clamp(region - panels, least, most));
}

QJsonObject StepsView::state() const
{
    return {{QStringLiteral("head"), std::max(m_requestedHead, 0)},
            {QStringLiteral("vectors"), m_vectors->isChecked()},
            {QStringLiteral("same_score_range"), m_sharedRange->isChecked()}};
}

void StepsView::setState(const QJsonObject &state)
{
    if (const QJsonValue head = state.value(QLatin1String("head")); head.isDouble())
        setHead(head.toInt());
    if (const QJsonValue shared = state.value(QLatin1String("same_score_range")); shared.isBool())
        m_sharedRange->setChecked(shared.toBool());
    if (const QJsonValue vectors = state.value(QLatin1String("vectors")); vectors.isBool())
        setVectorsShown(vectors.toBool());
}

void StepsView::syncVectors()
{
    if (!m_vectors->isChecked() || !isVisible())
        return;
    ensureCurrent();
    m_pipeline->setResult(m_renderer.result(), head());
}

void StepsView::setHead(int head)
{
    const int before = this->head();
    m_requestedHead = std::max(head, 0);
    m_renderer.setHead(m_requestedHead); // (while stale: cheap, the renderer holds no result)
    syncHeads();
    if (!m_stale)
        m_canvas->refresh();
    if (this->head() != before) {
        syncVectors();
        emit headChanged(this->head());
    }
}

int StepsView::head() const
{
    // StepsRenderer::head() of the newest result (the renderer's head is m_requestedHead).
    const auto r = result();
    if (!r || !r->ok() || r->headCount() == 0)
        return -1;
    return std::clamp(m_requestedHead, 0, r->headCount() - 1);
}

void StepsView::setWeightsColormap(ColormapId id)
{
    if (StepsRenderer::effectiveWeightsColormap(id) == m_renderer.weightsColormap())
        return;
    m_renderer.setWeightsColormap(id); // (while stale: cheap, the renderer holds no result)
    m_canvas->refresh();
}

void StepsView::syncHeads()
{
    const auto r = result(); // the newest, also while the panels wait
    const int h = r && r->ok() ? r->headCount() : 0;
    const QSignalBlocker blocker(m_headCombo);
    if (m_headCombo->count() != h) {
        m_headCombo->clear();
        for (int k = 0; k < h; ++k)
            m_headCombo->addItem(tr("head %1").arg(k));
    }
    // The hint names the steps shown: a position scheme inside attention adds one.
    const bool rope = r && r->ok() && !r->unrotatedScores.empty();
    const bool alibi = r && r->ok() && !rope && !r->positionBias.empty();
    m_hint->setText(rope ? tr("Raw scores Q Kᵀ → RoPE rotates q, k → scaled + masked → softmax "
                              "weights. Hover a cell: it is outlined in all four panels.")
                        : alibi ? tr("Raw scores Q Kᵀ → ALiBi bias → scaled + bias + masked → "
                                     "softmax weights. Hover a cell: it is outlined in all four "
                                     "panels.")
                                : tr("Raw scores Q Kᵀ → scaled + masked Q Kᵀ·scale + M → softmax "
                                     "weights. Hover a cell: it is outlined in all three panels."));
    m_headCombo->setEnabled(h > 0);
    if (h > 0)
        m_headCombo->setCurrentIndex(std::clamp(m_requestedHead, 0, h - 1));
}

QSize StepsView::defaultExportSize() const
{
    const QSize s = m_canvas->size();
    return {std::max(1200, s.width()), std::max(520, s.height())};
}

bool StepsView::exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const
{
    ensureCurrent(); // a hidden view exports the newest result too
    const auto r = m_renderer.result();
    if (!r || !r->ok()) {
        if (error)
            *error = tr("There are no attention steps to export yet.");
        return false;
    }
    if (m_renderer.panelCount() == 0) {
        if (error) // e.g. stored weights only: no scores
            *error = m_renderer.message();
        return false;
    }
    StepsRenderer copy = m_renderer;
    FigureStyle style = m_canvas->screenStyle();
    style.background = Qt::white;
    style.foreground = Qt::black;
    style.shareQueryLabels = false; // a figure of its own: every panel labelled
    copy.setStyle(style);
    return copy.save(path, size, dpr, error);
}

void StepsView::exportInteractive()
{
    const QString name = QStringLiteral("attention-steps-head%1.png").arg(std::max(head(), 0));
    exportFigureInteractive(this, tr("Export Attention Steps"), name,
                            [this](const QString &path, QString *error) {
                                return exportFigure(path, defaultExportSize(), 2.0, error);
                            });
}

} // namespace attn
