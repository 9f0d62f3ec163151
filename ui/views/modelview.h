#pragma once
// ModelView: the "Model" tab — every layer and head of a loaded stack of attention weights at
// once (ui/render/modelrenderer.h: a layers × heads grid of thumbnails on one colour scale),
// scrolling when the grid is larger than the tab. The thumbnails are built on a worker
// (JobRunner); until they arrive the tab says so. Clicking a thumbnail asks for that (layer,
// head) in the Heads view (thumbnailActivated). Without a stack (random inputs, a file of
// query/key/value) it says how to load one.

#include "ui/render/modelrenderer.h"
#include "ui/session/tensorsource.h"

#include <QScrollArea>

#include <memory>
#include <optional>

namespace attn {

class JobRunner;

class ModelView : public QScrollArea
{
    Q_OBJECT
public:
    static constexpr int kMinimumThumbnail = 28; ///< pixels; smaller grids scroll
    static constexpr int kMaximumThumbnail = 128; ///< pixels; a larger tab leaves room around

    explicit ModelView(QWidget *parent = nullptr);
    ~ModelView() override;

    /// Shows the weights of `source` (every layer); nullptr or inputs: the placeholder.
    void setSource(const std::shared_ptr<const TensorSource> &source);
    std::shared_ptr<const TensorSource> source() const { return m_source; }
    void setColormap(ColormapId colormap);
    const ModelRenderer &renderer() const { return m_renderer; }
    /// The widget the figure is painted on (inside the scroll area).
    QWidget *canvas() const { return m_canvas; }
    /// The map of (layer, head) in canvas coordinates (empty when not shown).
    QRect thumbnailRect(int layer, int head) const;
    /// (layer, head) under `pos` (canvas coordinates).
    std::optional<std::pair<int, int>> thumbnailAt(const QPoint &pos) const;
    /// True once the thumbnails of the current stack are there (or there is no stack).
    bool thumbnailsReady() const;
    /// Waits for the thumbnail job (tests).
    void waitForThumbnails();

    /// The figure's export size: the canvas's size.
    QSize defaultExportSize() const;
    /// Writes the figure (PNG at `dpr`, SVG, PDF by suffix); an empty size takes
    /// defaultExportSize(). False with `error` (no stack, suffix, write failure).
    bool exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const;

signals:
    /// A thumbnail was clicked.
    void thumbnailActivated(int layer, int head);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    class Canvas;
    void fitCanvas();
    void rebuild();

    QWidget *m_canvas; ///< a Canvas
    JobRunner *m_jobs;
    ModelRenderer m_renderer;
    std::shared_ptr<const TensorSource> m_source;
};

} // namespace attn
