#pragma once
// HeatmapViewPanel: how the heads heatmaps are drawn — colormap, linear or log scale, fixed [0, 1]
// or auto range, max or mean pooling of long sequences, zoom, the order of the heads (by index,
// mean entropy or mean max weight), the pinned query, the row strip, "trim padding" and
// "hide keys" with or without renormalisation. It edits a HeatmapWidget's options and view
// transform directly; nothing here changes the computation (the session's parameters).

#include <QStringList>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace attn {

class HeatmapWidget;

class HeatmapViewPanel : public QWidget
{
    Q_OBJECT
public:
    /// Drives `heatmap` (not owned; must outlive the panel).
    explicit HeatmapViewPanel(HeatmapWidget *heatmap, QWidget *parent = nullptr);

    /// Shows the widget's current options and transform in the controls.
    void syncFromWidget();

    QComboBox *colormapCombo() const { return m_colormap; }
    QComboBox *scaleCombo() const { return m_scale; }
    QComboBox *rangeCombo() const { return m_range; }
    QComboBox *poolingCombo() const { return m_pooling; }
    QComboBox *quantityCombo() const { return m_quantity; }
    QComboBox *headSortCombo() const { return m_headSort; }
    QLabel *pinnedLabel() const { return m_pinnedLabel; }
    QCheckBox *trimPaddingCheck() const { return m_trimPadding; }
    QLineEdit *hideKeysEdit() const { return m_hideKeys; }
    QCheckBox *renormalizeCheck() const { return m_renormalize; }

private:
    void applyOptions();
    void applyTransform();
    void updateZoomLabel();
    void updatePinnedLabel();
    void updateHints();
    /// Why the "Hide keys" text cannot be followed, one phrase per problem ("'abc' is not a
    /// key index", "99 is beyond n_k = 8", "5-2 is an empty range"); empty when it can.
    QStringList hideKeysProblems() const;

    HeatmapWidget *m_heatmap;
    QComboBox *m_quantity = nullptr;
    QComboBox *m_colormap = nullptr;
    QComboBox *m_scale = nullptr;
    QComboBox *m_range = nullptr;
    QComboBox *m_pooling = nullptr;
    QComboBox *m_headSort = nullptr;
    QLabel *m_pinnedLabel = nullptr;
    QToolButton *m_unpin = nullptr;
    QCheckBox *m_rowStrip = nullptr;
    QCheckBox *m_stretch = nullptr;
    QToolButton *m_zoomIn = nullptr;
    QToolButton *m_zoomOut = nullptr;
    QToolButton *m_zoomReset = nullptr;
    QLabel *m_zoomLabel = nullptr;
    QCheckBox *m_trimPadding = nullptr;
    QLineEdit *m_hideKeys = nullptr;
    QString m_hideKeysToolTip; ///< the field's tooltip while its text is fine
    QCheckBox *m_renormalize = nullptr;
    QLabel *m_transformNote = nullptr;
};

} // namespace attn
