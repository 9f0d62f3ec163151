#include "ui/panels/heatmapviewpanel.h"

#include "ui/panels/wheelguard.h"
#include "ui/views/heatmapwidget.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

namespace attn {

namespace {

/// The Range combo's entries (HeatmapOptions::autoRange and maxWeightRange).
enum class RangeChoice { Fixed, Auto, MaxWeight };

} // namespace

HeatmapViewPanel::HeatmapViewPanel(HeatmapWidget *heatmap, QWidget *parent)
    : QWidget(parent)
    , m_heatmap(heatmap)
{
    auto *form = new QFormLayout(this);
    form->setContentsMargins(6, 6, 6, 6);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    m_quantity = new QComboBox(this);
    m_quantity->setObjectName(QStringLiteral("quantityCombo"));
    m_quantity->addItem(tr("Weights"), int(HeatmapQuantity::Weights));
    m_quantity->addItem(tr("Raw scores q·kᵀ"), int(HeatmapQuantity::Scores));
    m_quantity->addItem(tr("Scaled + masked scores"), int(HeatmapQuantity::ScaledScores));
    m_quantity->setToolTip(tr("What the tiles show: the softmax weights (rows sum to 1), the raw "
                              "scores q kᵀ, or the scores after scaling and masking. Scores use "
                              "their own range (symmetric about 0 with RdBu_r)."));
    form->addRow(tr("S&how:"), m_quantity);

    m_colormap = new QComboBox(this);
    m_colormap->setObjectName(QStringLiteral("colormapCombo"));
    for (ColormapId id : Colormap::all()) {
        const Colormap map(id);
        const QString name
            = map.isDiverging() ? tr("%1 (diverging, for scores)").arg(map.name()) : map.name();
        m_colormap->addItem(QIcon(QPixmap::fromImage(map.strip(48, Qt::Horizontal).scaled(48, 12))),
                            name, int(id));
    }
    m_colormap->setToolTip(tr("Colormap (matplotlib's tables): viridis, magma and cividis are "
                              "perceptually uniform, cividis suits colour-vision deficiencies; "
                              "gray is black → white. The choice is written on the colourbar "
                              "and in every export."));
    form->addRow(tr("Color&map:"), m_colormap);

    m_scale = new QComboBox(this);
    m_scale->setObjectName(QStringLiteral("scaleCombo"));
    m_scale->addItem(tr("Linear"), int(ColorScale::Linear));
    m_scale->addItem(tr("Log₁₀"), int(ColorScale::Log));
    m_scale->setToolTip(tr("Colour scale for the weights: linear, or logarithmic (small weights "
                           "become visible; the fixed log range is [10⁻⁴, 1])."));
    form->addRow(tr("Sc&ale:"), m_scale);

    m_range = new QComboBox(this);
    m_range->setObjectName(QStringLiteral("rangeCombo"));
    m_range->addItem(tr("Fixed [0, 1]"), int(RangeChoice::Fixed));
    m_range->addItem(tr("Auto (data min … max)"), int(RangeChoice::Auto));
    m_range->addItem(tr("Up to max weight"), int(RangeChoice::MaxWeight));
    m_range->setToolTip(tr("Fixed: a weight of 1.0 is always the top of the scale, so "
                           "heatmaps compare across settings. Auto: the shown tiles' smallest "
                           "and largest unmasked values span the colormap. Up to max weight: "
                           "linear [0, largest weight], or log over the five decades below it, "
                           "as the Long tab colours. Until you pick a scale or range, maps of "
                           "1 024 keys or more use the log scale up to the max weight (their "
                           "weights near 1/n are dark on [0, 1]); shorter ones fixed [0, 1]."));
    form->addRow(tr("&Range:"), m_range);

    m_pooling = new QComboBox(this);
    m_pooling->setObjectName(QStringLiteral("poolingCombo"));
    m_pooling->addItem(tr("Max"), int(HeatmapPooling::Max));
    m_pooling->addItem(tr("Mean"), int(HeatmapPooling::Mean));
    m_pooling->setToolTip(tr("When there are more cells than pixels (long sequences), each pixel "
                             "shows the max (keeps sharp peaks visible) or the mean of its "
                             "cells. Hovering still reports the exact cell."));
    form->addRow(tr("&Pooling:"), m_pooling);

    auto *zoomRow = new QWidget(this);
    auto *zoomLayout = new QHBoxLayout(zoomRow);
    zoomLayout->setContentsMargins(0, 0, 0, 0);
    auto makeButton = [zoomRow](const QString &text, const QString &tip, const QString &name) {
        auto *b = new QToolButton(zoomRow);
        b->setText(text);
        b->setToolTip(tip);
        b->setObjectName(name);
        b->setAutoRaise(false);
        return b;
    };
    m_zoomOut = makeButton(QStringLiteral("−"),
                           tr("Zoom out (−, or the mouse wheel; Ctrl+wheel when the grid scrolls)"),
                           QStringLiteral("zoomOutButton"));
    m_zoomIn = makeButton(QStringLiteral("+"),
                          tr("Zoom in (+, or the mouse wheel over a cell; Ctrl+wheel when the grid "
                             "scrolls)"),
                          QStringLiteral("zoomInButton"));
    m_zoomReset = makeButton(tr("All"), tr("Show every cell again (0 or Home)"),
                             QStringLiteral("zoomResetButton"));
    m_zoomLabel = new QLabel(zoomRow);
    m_zoomLabel->setObjectName(QStringLiteral("zoomLabel"));
    m_zoomLabel->setToolTip(tr("The visible queries and keys. Drag a zoomed heatmap, or use the "
                               "arrow keys, to pan."));
    m_zoomLabel->setWordWrap(true);
    zoomLayout->addWidget(m_zoomOut);
    zoomLayout->addWidget(m_zoomIn);
    zoomLayout->addWidget(m_zoomReset);
    zoomLayout->addWidget(m_zoomLabel, 1);
    form->addRow(tr("Zoom:"), zoomRow);

    m_headSort = new QComboBox(this);
    m_headSort->setObjectName(QStringLiteral("headSortCombo"));
    // Data: HeadOrderKey · 2 + descending.
    m_headSort->addItem(tr("By index"), int(HeadOrderKey::Index) * 2);
    m_headSort->addItem(tr("Entropy, low first (focused heads)"), int(HeadOrderKey::Entropy) * 2);
    m_headSort->addItem(tr("Entropy, high first (diffuse heads)"),
                        int(HeadOrderKey::Entropy) * 2 + 1);
    m_headSort->addItem(tr("Max weight, low first"), int(HeadOrderKey::MaxWeight) * 2);
    m_headSort->addItem(tr("Max weight, high first"), int(HeadOrderKey::MaxWeight) * 2 + 1);
    m_headSort->setToolTip(tr("The order of the head tiles in the grid: by head number, or by "
                              "the head's mean row entropy (nats) or mean row max weight. Titles "
                              "keep the head numbers; the mean tile stays last. Saved with the "
                              "session and used by exports."));
    form->addRow(tr("Sort &heads:"), m_headSort);

    auto *pinRow = new QWidget(this);
    auto *pinLayout = new QHBoxLayout(pinRow);
    pinLayout->setContentsMargins(0, 0, 0, 0);
    m_pinnedLabel = new QLabel(pinRow);
    m_pinnedLabel->setObjectName(QStringLiteral("pinnedLabel"));
    m_pinnedLabel->setWordWrap(true);
    m_pinnedLabel->setToolTip(tr("Click a query label left of a map, or Shift+click a cell, to "
                                 "outline that query's row in every head; the same again or Esc "
                                 "unpins."));
    m_unpin = new QToolButton(pinRow);
    m_unpin->setObjectName(QStringLiteral("unpinButton"));
    m_unpin->setText(tr("Unpin"));
    m_unpin->setToolTip(tr("Unpin the query (Esc over the heatmaps)"));
    pinLayout->addWidget(m_pinnedLabel, 1);
    pinLayout->addWidget(m_unpin);
    form->addRow(tr("Pinned:"), pinRow);

    m_rowStrip = new QCheckBox(tr("Row strip under the heatmaps"), this);
    m_rowStrip->setObjectName(QStringLiteral("rowStripCheck"));
    m_rowStrip->setToolTip(tr("While a cell is hovered, show its row's keys with their tokens "
                              "and values, coloured like the heatmap."));
    form->addRow(m_rowStrip);

    m_stretch = new QCheckBox(tr("&Stretch maps to fit their tiles"), this);
    m_stretch->setObjectName(QStringLiteral("stretchCheck"));
    m_stretch->setToolTip(tr("Off: square cells (a map with few keys and many queries is kept "
                             "at least 96 pixels wide). On: each map fills its tile, cells as "
                             "wide and as tall as that gives (View → Stretch Maps to Fit)."));
    form->addRow(m_stretch);

    m_trimPadding = new QCheckBox(tr("&Trim padding"), this);
    m_trimPadding->setObjectName(QStringLiteral("trimPaddingCheck"));
    m_trimPadding->setToolTip(tr("With the key padding mask: hide the padded keys (and, for "
                                 "self-attention, the padded queries). The per-row metrics are "
                                 "then over real tokens only."));
    form->addRow(m_trimPadding);

    m_hideKeys = new QLineEdit(this);
    m_hideKeys->setObjectName(QStringLiteral("hideKeysEdit"));
    m_hideKeys->setPlaceholderText(tr("e.g. 0 (a BOS token), 0, 3 or 5-7"));
    m_hideKeys->setClearButtonEnabled(true);
    if (auto *clear = m_hideKeys->findChild<QAction *>(QStringLiteral("_q_qlineeditclearaction")))
        clear->setToolTip(tr("Show every key again"));
    m_hideKeysToolTip = tr("Keys not to show, by position from 0 (e.g. a first/BOS token that "
                           "soaks up attention): \"0\", \"0, 3\" or \"5-7\". Empty shows "
                           "every key.");
    m_hideKeys->setToolTip(m_hideKeysToolTip);
    form->addRow(tr("&Hide keys:"), m_hideKeys);

    m_renormalize = new QCheckBox(tr("Re&normalise rows over the shown keys"), this);
    m_renormalize->setObjectName(QStringLiteral("renormalizeCheck"));
    m_renormalize->setChecked(true);
    m_renormalize->setToolTip(tr("On: each row is divided by the weight left on the shown keys, "
                                 "so it sums to 1 again (labelled \"renormalised\"). Off: the raw "
                                 "weights (labelled \"raw\"; rows sum to less than 1)."));
    form->addRow(m_renormalize);

    m_transformNote = new QLabel(this);
    m_transformNote->setObjectName(QStringLiteral("transformNote"));
    m_transformNote->setWordWrap(true);
    m_transformNote->setForegroundRole(QPalette::PlaceholderText);
    form->addRow(m_transformNote);

    connect(m_headSort, &QComboBox::currentIndexChanged, this, [this] {
        const int v = m_headSort->currentData().toInt();
        m_heatmap->setHeadSort(HeadOrderKey(v / 2), v % 2 == 1);
    });
    connect(m_unpin, &QToolButton::clicked, this, [this] { m_heatmap->setPinnedQuery(-1); });
    for (QComboBox *combo : {m_quantity, m_colormap, m_scale, m_range, m_pooling})
        connect(combo, &QComboBox::currentIndexChanged, this, &HeatmapViewPanel::applyOptions);
    connect(m_rowStrip, &QCheckBox::toggled, m_heatmap, &HeatmapWidget::setRowStripVisible);
    connect(m_stretch, &QCheckBox::toggled, m_heatmap, &HeatmapWidget::setStretch);
    connect(m_zoomIn, &QToolButton::clicked, m_heatmap, &HeatmapWidget::zoomIn);
    connect(m_zoomOut, &QToolButton::clicked, m_heatmap, &HeatmapWidget::zoomOut);
    connect(m_zoomReset, &QToolButton::clicked, m_heatmap, &HeatmapWidget::resetZoom);
    connect(m_trimPadding, &QCheckBox::toggled, this, &HeatmapViewPanel::applyTransform);
    connect(m_renormalize, &QCheckBox::toggled, this, &HeatmapViewPanel::applyTransform);
    connect(m_hideKeys, &QLineEdit::textChanged, this, &HeatmapViewPanel::applyTransform);
    connect(m_heatmap, &HeatmapWidget::visibleCellsChanged, this,
            &HeatmapViewPanel::updateZoomLabel);
    connect(m_heatmap, &HeatmapWidget::optionsChanged, this, &HeatmapViewPanel::syncFromWidget);
    connect(m_heatmap, &HeatmapWidget::transformingChanged, this, &HeatmapViewPanel::updateHints);
    connect(m_heatmap, &HeatmapWidget::shownResultChanged, this, [this] {
        updateZoomLabel();
        updatePinnedLabel();
        updateHints();
    });
    syncFromWidget();
    // Scrolling the dock must not change the combo box under the pointer.
    WheelGuard::install(this);
}

void HeatmapViewPanel::syncFromWidget()
{
    const HeatmapOptions o = m_heatmap->options();
    const ViewTransform t = m_heatmap->viewTransform();
    const QSignalBlocker b1(m_quantity), b2(m_colormap), b3(m_scale), b4(m_range), b5(m_pooling),
        b6(m_rowStrip), b7(m_trimPadding), b8(m_hideKeys), b9(m_renormalize), b10(m_stretch),
        b11(m_headSort);
    m_quantity->setCurrentIndex(m_quantity->findData(int(o.quantity)));
    m_colormap->setCurrentIndex(m_colormap->findData(int(o.colormap)));
    m_scale->setCurrentIndex(m_scale->findData(int(o.scale)));
    m_range->setCurrentIndex(m_range->findData(int(o.autoRange            ? RangeChoice::Auto
                                                       : o.maxWeightRange ? RangeChoice::MaxWeight
                                                                          : RangeChoice::Fixed)));
    m_pooling->setCurrentIndex(m_pooling->findData(int(o.pooling)));
    m_rowStrip->setChecked(m_heatmap->isRowStripVisible());
    m_stretch->setChecked(m_heatmap->isStretched());
    m_headSort->setCurrentIndex(m_headSort->findData(
        int(o.headSort) * 2 + (o.headSort != HeadOrderKey::Index && o.headSortDescending)));
    m_trimPadding->setChecked(t.trimPadding);
    QStringList keys;
    for (int k : t.hiddenKeys)
        keys << QString::number(k);
    if (!m_hideKeys->hasFocus())
        m_hideKeys->setText(keys.join(QStringLiteral(", ")));
    m_renormalize->setChecked(t.renormalize);
    updateZoomLabel();
    updatePinnedLabel();
    updateHints();
}

void HeatmapViewPanel::updatePinnedLabel()
{
    const int row = m_heatmap->renderer().pinnedRow();
    m_pinnedLabel->setText(row >= 0 ? tr("query %1").arg(m_heatmap->renderer().queryAxisLabel(row))
                                    : tr("none (click a query label)"));
    m_unpin->setEnabled(row >= 0);
}

void HeatmapViewPanel::applyOptions()
{
    HeatmapOptions o = m_heatmap->options();
    // Only what this panel owns; the view, head, window, fonts and colours stay.
    HeatmapOptions requested = o;
    requested.quantity = HeatmapQuantity(m_quantity->currentData().toInt());
    requested.colormap = ColormapId(m_colormap->currentData().toInt());
    requested.scale = ColorScale(m_scale->currentData().toInt());
    const auto range = RangeChoice(m_range->currentData().toInt());
    requested.autoRange = range == RangeChoice::Auto;
    requested.maxWeightRange = range == RangeChoice::MaxWeight;
    requested.pooling = HeatmapPooling(m_pooling->currentData().toInt());
    // The widget derives the font size and palette colours itself: pass the defaults back.
    const HeatmapOptions defaults;
    requested.fontPixelSize = defaults.fontPixelSize;
    requested.background = defaults.background;
    requested.foreground = defaults.foreground;
    m_heatmap->setOptions(requested);
    updateHints();
}

void HeatmapViewPanel::applyTransform()
{
    ViewTransform t;
    t.trimPadding = m_trimPadding->isChecked();
    t.renormalize = m_renormalize->isChecked();
    QString error;
    QList<int> keys;
    if (!parseKeyList(m_hideKeys->text(), &keys, &error)) {
        updateHints(); // says why, in the field's tooltip and the note under it
        return; // keep the last valid transform
    }
    t.hiddenKeys = keys;
    m_heatmap->setViewTransform(t);
    updateHints();
}

void HeatmapViewPanel::updateZoomLabel()
{
    const auto r = m_heatmap->result();
    const QRect c = m_heatmap->visibleCells();
    if (!r || c.isEmpty()) {
        m_zoomLabel->clear();
        return;
    }
    if (!m_heatmap->isZoomed()) {
        m_zoomLabel->setText(tr("all %1 × %2").arg(r->queryCount()).arg(r->keyCount()));
    } else {
        m_zoomLabel->setText(tr("q %1–%2, k %3–%4")
                                 .arg(r->originalQuery(c.top()))
                                 .arg(r->originalQuery(c.bottom()))
                                 .arg(r->originalKey(c.left()))
                                 .arg(r->originalKey(c.right())));
    }
    m_zoomOut->setEnabled(m_heatmap->isZoomed());
    m_zoomReset->setEnabled(m_heatmap->isZoomed());
}

QStringList HeatmapViewPanel::hideKeysProblems() const
{
    // The grammar of parseKeyList (resultview.h), every problem named rather than the first.
    const auto session = m_heatmap->sessionResult();
    const qint64 nK = session && session->ok() ? qint64(session->keyCount()) : -1;
    QString text = m_hideKeys->text().trimmed();
    text.replace(QRegularExpression(QStringLiteral("\\s*([-\u2013])\\s*")), QStringLiteral("\\1"));
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    static const QRegularExpression single(QStringLiteral("^\\d{1,9}$"));
    static const QRegularExpression range(QStringLiteral("^(\\d{1,9})[-\u2013](\\d{1,9})$"));
    QStringList problems;
    for (const QString &part : text.split(separators, Qt::SkipEmptyParts)) {
        if (single.match(part).hasMatch()) {
            if (nK >= 0 && part.toLongLong() >= nK)
                problems << tr("%1 is beyond n_k = %2 (keys 0–%3)").arg(part).arg(nK).arg(nK - 1);
            continue;
        }
        const QRegularExpressionMatch m = range.match(part);
        if (!m.hasMatch()) {
            problems << tr("'%1' is not a key index").arg(part);
            continue;
        }
        const qint64 a = m.captured(1).toLongLong(), b = m.captured(2).toLongLong();
        if (a > b)
            problems << tr("%1 is an empty range (write the lower key first)").arg(part);
        else if (b - a > 100000)
            problems << tr("%1 is longer than 100000 keys").arg(part);
        else if (nK >= 0 && a >= nK)
            problems << tr("%1 is beyond n_k = %2 (keys 0–%3)").arg(part).arg(nK).arg(nK - 1);
        else if (nK >= 0 && b >= nK)
            problems << tr("%1 goes beyond n_k = %2 (keys 0–%3)").arg(part).arg(nK).arg(nK - 1);
    }
    return problems;
}

void HeatmapViewPanel::updateHints()
{
    // "Hide keys": a red border, and why in the tooltip and the note under the fields.
    const QStringList problems = hideKeysProblems();
    const QString keysProblem = problems.join(QStringLiteral("; "));
    const QString border = problems.isEmpty()
        ? QString()
        : QStringLiteral("QLineEdit { border: 1px solid #d62728; }");
    if (m_hideKeys->styleSheet() != border)
        m_hideKeys->setStyleSheet(border);
    m_hideKeys->setToolTip(problems.isEmpty() ? m_hideKeysToolTip
                                              : tr("<p><b>%1.</b></p><p>%2</p>")
                                                    .arg(keysProblem.toHtmlEscaped(),
                                                         m_hideKeysToolTip.toHtmlEscaped()));

    const auto session = m_heatmap->sessionResult();
    const bool padding = session && session->params.mask == MaskChoice::KeyPadding
        && session->params.paddingCount > 0;
    m_trimPadding->setToolTip(
        padding ? tr("Hide the %1 padded keys (and, for self-attention, the padded queries); "
                     "the per-row metrics are then over real tokens only.")
                      .arg(session->params.paddingCount)
                : tr("Only with the key padding mask (Mask → Key padding): hides the padded "
                     "keys and queries; metrics are then over real tokens only."));
    m_renormalize->setEnabled(!m_hideKeys->text().trimmed().isEmpty());
    const auto shown = m_heatmap->result();
    if (!problems.isEmpty())
        m_transformNote->setText(tr("Hide keys: %1.").arg(keysProblem));
    else if (m_heatmap->isTransforming())
        m_transformNote->setText(tr("Applying to the long sequence…"));
    else if (shown && !shown->ok())
        m_transformNote->setText(shown->error);
    else if (shown && !shown->viewNote.isEmpty())
        m_transformNote->setText(shown->viewNote + QLatin1Char('.'));
    else if (m_trimPadding->isChecked() && !padding)
        m_transformNote->setText(tr("No padding to trim (the mask is not key padding)."));
    else
        m_transformNote->clear();
    m_transformNote->setVisible(!m_transformNote->text().isEmpty());
}

} // namespace attn
