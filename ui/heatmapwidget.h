#pragma once
// HeatmapWidget: shows HeatmapRenderer's picture of a SessionResult. The picture is cached as a
// pixmap (rebuilt only when the result, options or size change); hovering a cell shows a
// tooltip (head, query i, key j, weight, raw and scaled score, mask state) and outlines the
// cell; clicking a tile emits tileActivated(head) so the window can enlarge it.

#include "heatmaprenderer.h"

#include <QPixmap>
#include <QWidget>

#include <memory>

namespace attn {

class HeatmapWidget : public QWidget
{
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget *parent = nullptr);

    void setResult(std::shared_ptr<const SessionResult> result);
    std::shared_ptr<const SessionResult> result() const { return m_renderer.result(); }

    /// Options other than the text size (the widget uses its own font's size unless the
    /// options set one) and colours (the palette's, unless set explicitly).
    void setOptions(const HeatmapOptions &options);
    HeatmapOptions options() const { return m_renderer.options(); }
    const HeatmapRenderer &renderer() const { return m_renderer; }

    /// One large tile of `head` (h = the mean over heads).
    void showSingleHead(int head);
    /// All heads plus the mean.
    void showGrid();
    bool isSingleHead() const { return m_renderer.options().view == HeatmapView::SingleHead; }

    /// The cell under a widget position (invalid when none).
    HeatmapHit cellAt(const QPointF &pos) const;
    /// The tooltip text for the cell under `pos` (empty when none).
    QString toolTipAt(const QPointF &pos) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// A tile was clicked: head 0 … h−1, or h for the mean over heads.
    void tileActivated(int head);
    /// The hovered cell changed (invalid hit when the pointer left the heatmaps).
    void cellHovered(const attn::HeatmapHit &hit);
    /// Emitted at the end of every paint that showed a result: its SessionResult::requestId.
    /// (The GUI latency benchmark, bench/bench_gui.cpp, times control change → this signal.)
    void painted(quint64 requestId);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void invalidate();
    void setHover(const HeatmapHit &hit);
    HeatmapOptions effectiveOptions(HeatmapOptions options) const;

    HeatmapRenderer m_renderer;
    HeatmapOptions m_requested; // as set by the caller (before palette/font defaults)
    QPixmap m_cache;
    HeatmapHit m_hover;
    QPointF m_pressPos;
    bool m_pressed = false;
};

} // namespace attn
