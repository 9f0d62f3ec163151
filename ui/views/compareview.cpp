#include "ui/views/compareview.h"

#include "ui/document/sessionfile.h"
#include "ui/render/stepsrenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/session/tensorsource.h"
#include "ui/views/figurecanvas.h"
#include "ui/views/figureexport.h"
#include "ui/views/numberspinbox.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>

namespace attn {

namespace {

const QList<CompareVariant::Mask> maskOrder
    = {CompareVariant::Mask::None, CompareVariant::Mask::Causal, CompareVariant::Mask::Padding,
       CompareVariant::Mask::CausalPadding};

} // namespace

CompareView::CompareView(QWidget *parent)
    : QWidget(parent)
{
    m_sessionB = new AttentionSession(this);
    m_sessionB->setObjectName(QStringLiteral("compareSessionB"));
    buildUi();
    connect(m_sessionB, &AttentionSession::resultChanged, this, &CompareView::onResultB);
    connect(m_sessionB, &AttentionSession::computeFailed, this,
            [this](const QString &message) { showBFailed(message); });
    connect(m_sessionB, &AttentionSession::busyChanged, this, [this](bool busy) {
        if (busy)
            m_status->setText(tr("computing B…"));
    });
    syncStrip();
    syncHeads();
}

CompareView::~CompareView() = default;

void CompareView::buildUi()
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);

    // Row 1: configuration B.
    auto *strip = new QHBoxLayout;
    auto *bLabel = new QLabel(tr("<b>B</b> = A with:"));
    bLabel->setToolTip(tr("A is the current parameters (the Controls panel); B copies them and "
                          "changes what is set here. Both use the same seed. Until you change "
                          "B it follows A with the 1/√d_k scale toggled."));
    strip->addWidget(bLabel);

    auto *alphaLabel = new QLabel(tr("&α"));
    auto *alphaSpin = new NumberSpinBox;
    alphaSpin->setQuantityName(tr("B's α"));
    m_alphaSpin = alphaSpin;
    m_alphaSpin->setObjectName(QStringLiteral("compareAlphaSpin"));
    m_alphaSpin->setRange(0.0, 1.0);
    m_alphaSpin->setSingleStep(0.05);
    m_alphaSpin->setToolTip(tr("B's scale exponent α: scale = d_k^−α / τ (0.5 = the paper's "
                               "1/√d_k, 0 = unscaled)"));
    alphaLabel->setBuddy(m_alphaSpin);
    // Its range's texts ("0", "1") are all its minimum size counts: room for a value such as
    // 0.125 too, so a full row never squeezes the number out of sight.
    const QFontMetrics alphaMetrics(m_alphaSpin->font());
    m_alphaSpin->setMinimumWidth(m_alphaSpin->minimumSizeHint().width()
                                 + alphaMetrics.horizontalAdvance(QStringLiteral("0.125"))
                                 - alphaMetrics.horizontalAdvance(QStringLiteral("1")));
    strip->addWidget(alphaLabel);
    strip->addWidget(m_alphaSpin);

    auto *tauLabel = new QLabel(tr("&τ"));
    auto *tauSpin = new NumberSpinBox;
    tauSpin->setQuantityName(tr("B's τ"));
    m_tauSpin = tauSpin;
    m_tauSpin->setObjectName(QStringLiteral("compareTauSpin"));
    m_tauSpin->setRange(CompareVariant::minTemperature, CompareVariant::maxTemperature);
    m_tauSpin->setSingleStep(0.1);
    m_tauSpin->setToolTip(tr("B's softmax temperature τ (> 0): the scores are divided by it"));
    tauLabel->setBuddy(m_tauSpin);
    strip->addWidget(tauLabel);
    strip->addWidget(m_tauSpin);

    auto *maskLabel = new QLabel(tr("Mas&k"));
    m_maskCombo = new QComboBox;
    m_maskCombo->setObjectName(QStringLiteral("compareMaskCombo"));
    for (CompareVariant::Mask m : maskOrder)
        m_maskCombo->addItem(CompareVariant::maskName(m));
    m_maskCombo->setToolTip(tr("B's mask (key padding masks A's number of padding keys)"));
    maskLabel->setBuddy(m_maskCombo);
    strip->addWidget(maskLabel);
    strip->addWidget(m_maskCombo);

    auto *dkLabel = new QLabel(tr("&d_k"));
    m_dkSpin = new QSpinBox;
    m_dkSpin->setObjectName(QStringLiteral("compareDkSpin"));
    m_dkSpin->setRange(1, SessionParameters::maxDModel);
    m_dkSpin->setToolTip(tr("B's head dimension d_k; B's d_model = d_k · h. A different d_model "
                            "means different layer weights and inputs (other shapes drawn from "
                            "the same seed)."));
    dkLabel->setBuddy(m_dkSpin);
    strip->addWidget(dkLabel);
    strip->addWidget(m_dkSpin);

    // The values B changes on a line of their own (the reset button goes with Export below): in
    // a narrow centre a sixth control squeezed the α box to a sliver.
    strip->addStretch(1);
    m_resetButton = new QPushButton(tr("B = A"));
    m_resetButton->setObjectName(QStringLiteral("compareResetButton"));
    m_resetButton->setToolTip(tr("Make B a copy of A (every difference 0), then change one thing"));
    layout->addLayout(strip);
    // A number refused by α or τ, with the range, until one is accepted.
    auto *message = new QLabel;
    message->setObjectName(QStringLiteral("compareMessage"));
    alphaSpin->setMessageLabel(message);
    tauSpin->setMessageLabel(message);
    layout->addWidget(message);

    // Row 2: head, status, export.
    auto *row2 = new QHBoxLayout;
    auto *headLabel = new QLabel(tr("&Head:"));
    m_headCombo = new QComboBox;
    m_headCombo->setObjectName(QStringLiteral("compareHeadCombo"));
    m_headCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_headCombo->setToolTip(tr("The head compared (or the mean over heads)"));
    headLabel->setBuddy(m_headCombo);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setWordWrap(true);
    m_status->setToolTip(tr("What B changes and whether A and B share their inputs"));
    m_exportButton = new QPushButton(tr("Export…"));
    m_exportButton->setObjectName(QStringLiteral("compareExportButton"));
    m_exportButton->setToolTip(tr("Save A, B, B − A, the metric table and both parameter "
                                  "captions as PNG, SVG or PDF"));
    row2->addWidget(headLabel);
    row2->addWidget(m_headCombo);
    row2->addSpacing(12);
    row2->addWidget(m_status, 1);
    row2->addWidget(m_resetButton);
    row2->addWidget(m_exportButton);
    layout->addLayout(row2);

    m_canvas = new FigureCanvas(&m_renderer);
    m_canvas->setObjectName(QStringLiteral("compareCanvas"));
    // Many panels in a small window scroll instead of shrinking below a readable cell.
    m_scroll = new FigureScrollArea(m_canvas);
    layout->addWidget(m_scroll, 1);

    // Typing a number computes B once, for the finished number (Enter, focus out, arrows).
    m_alphaSpin->setKeyboardTracking(false);
    m_tauSpin->setKeyboardTracking(false);
    m_dkSpin->setKeyboardTracking(false);
    connect(m_alphaSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double v) { editVariant([v](CompareVariant &c) { c.scaleExponent = v; }); });
    connect(m_tauSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double v) { editVariant([v](CompareVariant &c) { c.temperature = v; }); });
    connect(m_maskCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0 && index < maskOrder.size())
            editVariant([index](CompareVariant &c) { c.mask = maskOrder[index]; });
    });
    connect(m_dkSpin, &QSpinBox::valueChanged, this,
            [this](int v) { editVariant([v](CompareVariant &c) { c.dK = v; }); });
    connect(m_resetButton, &QPushButton::clicked, this, &CompareView::resetVariant);
    connect(m_headCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            setHead(index);
    });
    connect(m_exportButton, &QPushButton::clicked, this, &CompareView::exportInteractive);
}

void CompareView::editVariant(const std::function<void(CompareVariant &)> &change)
{
    CompareVariant v = m_variant;
    change(v);
    setVariant(v);
}

void CompareView::setVariant(const CompareVariant &variant)
{
    m_variantEdited = true;
    emit stateChanged(); // B's settings are saved from now on, even unchanged
    if (variant == m_variant)
        return;
    m_variant = variant;
    syncStrip();
    refresh();
}

void CompareView::resetVariant()
{
    if (m_a && m_a->ok())
        setVariant(CompareVariant::from(m_a->params));
}

std::optional<SessionParameters> CompareView::parametersB() const
{
    if (!m_a || !m_a->ok())
        return std::nullopt;
    return variant().apply(m_a->params);
}

CompareVariant CompareView::variant() const
{
    CompareVariant v = m_variant;
    if (m_a && m_a->ok() && m_a->params.tensors)
        v.dK = m_a->params.dK();
    return v;
}

void CompareView::syncStrip()
{
    const QSignalBlocker b1(m_alphaSpin), b2(m_tauSpin), b3(m_maskCombo), b4(m_dkSpin);
    m_alphaSpin->setValue(m_variant.scaleExponent);
    m_tauSpin->setValue(m_variant.temperature);
    m_maskCombo->setCurrentIndex(int(maskOrder.indexOf(m_variant.mask)));
    const int h = m_a && m_a->ok() ? int(std::max<Index>(m_a->params.heads, 1)) : 1;
    m_dkSpin->setMaximum(int(std::max<Index>(1, SessionParameters::maxDModel / h)));
    m_dkSpin->setValue(variant().dK);
    // Cross-attention holds one mask choice: no causal + padding.
    if (auto *model = qobject_cast<QStandardItemModel *>(m_maskCombo->model())) {
        const bool cross = m_a && m_a->ok() && m_a->params.kind == AttentionKind::EncoderDecoder;
        if (QStandardItem *item
            = model->item(int(maskOrder.indexOf(CompareVariant::Mask::CausalPadding))))
            item->setEnabled(!cross);
    }
    const bool haveA = m_a && m_a->ok();
    for (QWidget *w : {static_cast<QWidget *>(m_alphaSpin), static_cast<QWidget *>(m_tauSpin),
                       static_cast<QWidget *>(m_maskCombo), static_cast<QWidget *>(m_dkSpin),
                       static_cast<QWidget *>(m_resetButton)})
        w->setEnabled(haveA);
    const bool tensors = haveA && m_a->params.tensors;
    m_dkSpin->setEnabled(haveA && !tensors);
    if (tensors && m_a->params.tensors->isWeights())
        for (QWidget *w :
             {static_cast<QWidget *>(m_alphaSpin), static_cast<QWidget *>(m_tauSpin),
              static_cast<QWidget *>(m_maskCombo), static_cast<QWidget *>(m_resetButton)})
            w->setEnabled(false);
}

void CompareView::syncHeads()
{
    const int h = m_a && m_a->ok() ? m_a->headCount() : 0;
    const QSignalBlocker blocker(m_headCombo);
    if (m_headCombo->count() != (h > 0 ? h + 1 : 0)) {
        m_headCombo->clear();
        for (int k = 0; k < h; ++k)
            m_headCombo->addItem(tr("head %1").arg(k));
        if (h > 0)
            m_headCombo->addItem(tr("mean over heads"));
    }
    m_headCombo->setEnabled(h > 0);
    if (h > 0)
        m_headCombo->setCurrentIndex(std::clamp(m_requestedHead, 0, h));
}

void CompareView::setResultA(std::shared_ptr<const SessionResult> result)
{
    m_windowSource = nullptr;
    setA(std::move(result));
}

void CompareView::setWindowResultA(std::shared_ptr<const SessionResult> result,
                                   CompareWindowSource source)
{
    m_windowSource = std::move(source);
    m_b.reset();
    setA(std::move(result));
}

void CompareView::setA(std::shared_ptr<const SessionResult> result)
{
    m_a = std::move(result);
    if (m_a && m_a->ok() && !m_variantEdited) {
        // B not edited yet: B follows A with the scale toggled, the comparison the paper's
        // §3.2.1 is about (so a d_k or α set before the tab is shown reaches B too).
        m_variant = defaultVariant(m_a->params);
    }
    // Loaded tensors fix d_model (and so d_k): B is compared with A's (variant()), and the d_k
    // set for B comes back with random inputs.
    syncStrip();
    syncHeads();
    if (isVisible())
        refresh();
    else
        m_dirty = true;
}

CompareVariant CompareView::defaultVariant(const SessionParameters &a)
{
    CompareVariant v = CompareVariant::from(a);
    v.scaleExponent = a.scaleExponent == 0.5 ? 0.0 : 0.5;
    return v;
}

QJsonObject CompareView::state() const
{
    if (m_variantEdited)
        return compareViewToJson(m_variant, m_requestedHead);
    if (!m_a || !m_a->ok())
        return {}; // nothing shown yet
    // B follows A: only the head compared is the view's own (B follows A again when opened).
    QJsonObject o;
    o.insert(QStringLiteral("head"), m_requestedHead);
    return o;
}

void CompareView::setState(const QJsonObject &state)
{
    if (state.isEmpty())
        return;
    int headValue = m_requestedHead;
    const CompareVariant v = compareViewFromJson(state, m_variant, &headValue);
    const bool variantKeys = state.contains(QLatin1String("alpha"))
        || state.contains(QLatin1String("temperature")) || state.contains(QLatin1String("mask"))
        || state.contains(QLatin1String("d_k"));
    if (!variantKeys) { // a head alone, saved while B followed A: B follows A again
        if (!state.contains(QLatin1String("head")))
            return; // unknown keys only
        if (headValue != m_requestedHead)
            setHead(headValue);
        if (m_variantEdited) {
            m_variantEdited = false;
            setResultA(m_a);
        }
        return;
    }
    // Loaded tensors fix d_k: B keeps A's (as setResultA does).
    CompareVariant applied = v;
    if (m_a && m_a->ok() && m_a->params.tensors)
        applied.dK = m_a->params.dK();
    setVariant(applied);
    if (headValue != m_requestedHead)
        setHead(headValue);
}

void CompareView::setHead(int head)
{
    m_requestedHead = std::max(head, 0);
    m_renderer.setHead(m_requestedHead);
    syncHeads();
    m_canvas->refresh();
    emit stateChanged();
}

void CompareView::setWeightsColormap(ColormapId id)
{
    if (StepsRenderer::effectiveWeightsColormap(id) == m_renderer.weightsColormap())
        return;
    m_renderer.setWeightsColormap(id);
    m_canvas->refresh();
}

bool CompareView::isUpToDate() const
{
    const auto pb = parametersB();
    return pb && m_renderer.resultA() == m_a && m_renderer.resultB() && m_renderer.comparable()
        && m_renderer.resultB()->params == *pb;
}

void CompareView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_dirty)
        refresh();
}

void CompareView::refresh()
{
    m_dirty = false;
    if (!m_a || !m_a->ok()) {
        m_renderer.setResults(m_a, nullptr);
        m_status->setText(m_a ? tr("A not computed: %1").arg(m_a->error) : tr("waiting for A…"));
        m_canvas->refresh();
        return;
    }
    if (m_a->params.tensors && m_a->params.tensors->isWeights()) {
        // Stored weights are shown as they are: no scale, mask or d_k can be varied for B.
        const QString text = tr("A/B needs attention computed from inputs; the loaded file has "
                                "weights only (nothing can be varied for B).");
        m_renderer.setResults(m_a, nullptr);
        m_renderer.showMessage(text);
        m_status->setText(text);
        m_canvas->refresh();
        return;
    }
    const SessionParameters pb = variant().apply(m_a->params);
    const QString invalid = pb.validate(m_windowSource ? SessionParameters::maxLongSequence
                                                       : SessionParameters::maxSequence);
    if (!invalid.isEmpty()) {
        m_renderer.setResults(m_a, nullptr);
        m_renderer.showMessage(tr("B cannot be computed: %1").arg(invalid));
        m_status->setText(tr("B not computed: %1").arg(invalid));
        m_canvas->refresh();
        return;
    }
    if (m_b && m_b->ok() && m_b->params == pb) {
        m_renderer.setResults(m_a, m_b);
        const QStringList diffs = compareDifferences(m_a->params, pb);
        QString text = diffs.isEmpty() ? tr("B equals A.")
                                       : tr("B: %1").arg(diffs.join(QStringLiteral("; ")));
        if (m_windowSource)
            text = tr("%1 · %2").arg(m_a->viewNote, text);
        m_status->setText(text);
        m_status->setToolTip(sharedInputsNote(m_a->params, pb));
        m_canvas->refresh();
        emit comparisonChanged();
        return;
    }
    // B is computed off the GUI thread; the last consistent comparison stays on screen meanwhile.
    m_status->setText(tr("computing B…"));
    if (m_windowSource) {
        // The window's B comes from the long map's worker; only the newest answer counts.
        const quint64 request = ++m_windowRequest;
        m_windowSource(pb,
                       [self = QPointer<CompareView>(this),
                        request](std::shared_ptr<const SessionResult> r, const QString &error) {
                           if (!self || request != self->m_windowRequest || !self->m_windowSource)
                               return;
                           if (!r) {
                               self->showBFailed(error);
                               return;
                           }
                           self->onResultB(std::move(r));
                       });
        return;
    }
    if (m_sessionB->parameters() == pb && m_sessionB->result() && m_sessionB->result()->params == pb
        && !m_sessionB->isBusy())
        onResultB(m_sessionB->result());
    else
        m_sessionB->setParameters(pb);
}

void CompareView::showBFailed(const QString &message)
{
    // The B drawn before was computed for other parameters: it goes, and the message says why.
    m_b.reset();
    m_renderer.setResults(m_a, nullptr);
    m_renderer.showMessage(tr("B not computed: %1").arg(message));
    m_status->setText(tr("B not computed: %1").arg(message));
    m_canvas->refresh();
    emit comparisonChanged();
}

void CompareView::onResultB(std::shared_ptr<const SessionResult> result)
{
    m_b = std::move(result);
    if (isVisible() || !m_dirty)
        refresh();
}

QSize CompareView::defaultExportSize() const
{
    const QSize s = m_canvas->size();
    return {std::max(1200, s.width()), std::max(640, s.height())};
}

bool CompareView::exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const
{
    if (!m_renderer.comparable()) {
        if (error)
            *error = tr("There is no A/B comparison to export yet.");
        return false;
    }
    CompareRenderer copy = m_renderer;
    FigureStyle style = m_canvas->screenStyle();
    style.background = Qt::white;
    style.foreground = Qt::black;
    style.shareQueryLabels = false; // a figure of its own: every panel labelled
    copy.setStyle(style);
    return copy.save(path, size, dpr, error);
}

void CompareView::exportInteractive()
{
    exportFigureInteractive(this, tr("Export A/B Comparison"),
                            QStringLiteral("attention-compare.png"),
                            [this](const QString &path, QString *error) {
                                return exportFigure(path, defaultExportSize(), 2.0, error);
                            });
}

void CompareView::setPresenting(bool presenting)
{
    // A and B side by side share A's query labels: larger maps in a row.
    FigureStyle style = m_renderer.style();
    style.shareQueryLabels = presenting;
    m_renderer.setStyle(style);
    m_scroll->setPreferLargeMaps(presenting);
    m_canvas->refresh();
}

} // namespace attn
