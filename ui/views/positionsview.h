#pragma once
// PositionsView: the Positions tab of the attention views — the session's sinusoidal positional
// encoding PE (n × d_model) and its similarity PE·PEᵀ (n × n) drawn by PositionsRenderer, with a
// note on RoPE or ALiBi when the session uses one instead, and an Export button (PNG, SVG, PDF).
// It follows the session's n and d_model: the figure is computed on a JobRunner (newest wins)
// when they change while the tab is shown, or when it is next shown; the GUI thread only paints.

#include "ui/render/positionsrenderer.h"

#include <QWidget>

class QPushButton;

namespace attn {

class JobRunner;

class PositionsView : public QWidget
{
    Q_OBJECT
public:
    explicit PositionsView(QWidget *parent = nullptr);

    /// The session's parameters (only n, d_model, heads and the position scheme matter).
    void setParameters(const SessionParameters &p);
    /// The figure shown, brought up to date first (waits for the worker when it is behind).
    const PositionsRenderer &renderer();
    /// True while the figure is being computed.
    bool isComputing() const;
    QPushButton *exportButton() const { return m_exportButton; }

    /// Writes the figure to `path` (PNG, SVG or PDF by suffix), black on white; `size` in
    /// logical pixels (PDF: points), PNG at `dpr`. False with `error` naming the problem.
    bool exportFigure(const QString &path, QSize size, qreal dpr, QString *error);
    /// The view's size, at least 1200 × 600.
    QSize defaultExportSize() const;

public slots:
    void exportInteractive();

signals:
    /// A new figure is shown.
    void figureChanged();

protected:
    void showEvent(QShowEvent *event) override;

private:
    class Canvas;
    void recompute();
    /// What the figure depends on, as a key (n, d_model, scheme, d_k, base, heads).
    static QString keyOf(const SessionParameters &p);

    PositionsRenderer m_renderer;
    SessionParameters m_params;
    QString m_shownKey; ///< keyOf the figure shown
    QString m_pendingKey; ///< keyOf the figure being computed (empty: none)
    JobRunner *m_jobs = nullptr;
    Canvas *m_canvas = nullptr;
    QPushButton *m_exportButton = nullptr;
};

} // namespace attn
