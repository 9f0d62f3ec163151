#include "ui/views/modelview.h"

#include "ui/session/jobrunner.h"

#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollBar>

#include <algorithm>
#include <cmath>

namespace attn {

class ModelView::Canvas : public QWidget
{
public:
    explicit Canvas(ModelView *view)
        : QWidget(view)
        , m_view(view)
    {
        setObjectName(QStringLiteral("modelCanvas"));
        setMouseTracking(true);
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        const ModelRenderer &r = m_view->m_renderer;
        if (r.stack() && !r.thumbnailsReady()) {
            p.setPen(palette().text().color());
            p.drawText(rect(), Qt::AlignCenter, tr("Drawing the thumbnails\u2026"));
            return;
        }
        r.paint(&p, QRectF(rect()), false, palette().text().color());
    }
    void mousePressEvent(QMouseEvent *event) override
    {
        if (event->button() != Qt::LeftButton)
            return;
        if (const auto hit = m_view->thumbnailAt(event->position().toPoint()))
            emit m_view->thumbnailActivated(hit->first, hit->second);
    }
    void mouseMoveEvent(QMouseEvent *event) override
    {
        const auto hit = m_view->thumbnailAt(event->position().toPoint());
        setCursor(hit ? Qt::PointingHandCursor : Qt::ArrowCursor);
        setToolTip(hit ? tr("layer %1, head %2: click to open it in the Heads view")
                             .arg(hit->first)
                             .arg(hit->second)
                       : QString());
    }

private:
    ModelView *m_view;
};

ModelView::ModelView(QWidget *parent)
    : QScrollArea(parent)
    , m_canvas(new Canvas(this))
    , m_jobs(new JobRunner(this, 1))
{
    setObjectName(QStringLiteral("modelView"));
    setWidget(m_canvas);
    setWidgetResizable(false);
    setFrameShape(QFrame::NoFrame);
    setAlignment(Qt::AlignLeft | Qt::AlignTop);
    fitCanvas();
}

ModelView::~ModelView()
{
    m_jobs->cancel();
}

void ModelView::setSource(const std::shared_ptr<const TensorSource> &source)
{
    const bool weights = source && source->isWeights();
    const std::shared_ptr<const TensorSource> shown = weights ? source : nullptr;
    // A layer change keeps the same stack: nothing to redraw.
    if (shown && m_source && shown->thumbnailStack() == m_source->thumbnailStack())
        return;
    m_source = shown;
    if (!shown) {
        m_jobs->cancel();
        m_renderer.setStack(nullptr);
        m_renderer.setNotes({});
        m_renderer.setSizeText(QString());
        m_renderer.setSequenceKeys(0);
    } else {
        m_renderer.setSequenceKeys(shown->keyCount());
        // Aliasing: the stack lives as long as the source holding it.
        m_renderer.setStack(std::shared_ptr<const WeightStack>(shown, shown->thumbnailStack()),
                            shown->title());
        m_renderer.setSizeText(shown->weightsOnDemand()
                                   ? tr("n = %1 (thumbnails max-pooled %2 \u00d7 %2)")
                                         .arg(shown->queryCount())
                                         .arg(shown->thumbnailBlock())
                                   : QString());
        QStringList notes;
        if (shown->isAttentionStack() && !shown->weightsOnDemand())
            notes << QString::fromStdString(shown->rowSumCheck().text());
        if (shown->isModelRun())
            notes << shown->notes();
        m_renderer.setNotes(notes);
    }
    rebuild();
}

void ModelView::setColormap(ColormapId colormap)
{
    if (colormap == m_renderer.options().colormap)
        return;
    ModelViewOptions o = m_renderer.options();
    o.colormap = colormap;
    m_renderer.setOptions(o);
    rebuild();
}

void ModelView::rebuild()
{
    fitCanvas();
    m_canvas->update();
    if (!m_source)
        return;
    const auto stack = std::shared_ptr<const WeightStack>(m_source, m_source->thumbnailStack());
    const int first = m_renderer.firstLayer(), count = m_renderer.layerCount();
    const ColorNorm norm = m_renderer.norm();
    const ColormapId colormap = m_renderer.options().colormap;
    m_jobs->run(
        [stack, first, count, norm, colormap](const JobContext &) {
            return ModelRenderer::buildThumbnails(*stack, first, count, norm, colormap);
        },
        [this](QVector<QImage> images) {
            m_renderer.setThumbnails(std::move(images));
            m_canvas->update();
        });
}

void ModelView::fitCanvas()
{
    const QSize area = maximumViewportSize();
    ModelViewOptions o = m_renderer.options();
    const WeightStack *s = m_renderer.stack();
    if (!s) {
        m_canvas->resize(area);
        return;
    }
    // The largest thumbnail that fits the tab (both ways), within the limits.
    o.thumbnail = kMaximumThumbnail;
    m_renderer.setOptions(o);
    const QSize big = m_renderer.naturalSize();
    const int heads = int(s->heads), rows = m_renderer.layerCount();
    const double spareW = double(big.width() - area.width()) / heads;
    const double spareH = double(big.height() - area.height()) / rows;
    const int shrink = int(std::ceil(std::max({0.0, spareW, spareH})));
    o.thumbnail = std::clamp(kMaximumThumbnail - shrink, kMinimumThumbnail, kMaximumThumbnail);
    m_renderer.setOptions(o);
    const QSize natural = m_renderer.naturalSize();
    m_canvas->resize(natural.expandedTo(QSize(0, 0)));
}

void ModelView::resizeEvent(QResizeEvent *event)
{
    QScrollArea::resizeEvent(event);
    fitCanvas();
}

QRect ModelView::thumbnailRect(int layer, int head) const
{
    return m_renderer.layout(QRectF(m_canvas->rect())).thumbnailRect(layer, head).toRect();
}

std::optional<std::pair<int, int>> ModelView::thumbnailAt(const QPoint &pos) const
{
    return m_renderer.thumbnailAt(QRectF(m_canvas->rect()), QPointF(pos));
}

bool ModelView::thumbnailsReady() const
{
    return !m_renderer.stack() || m_renderer.thumbnailsReady();
}

void ModelView::waitForThumbnails()
{
    m_jobs->waitUntilIdle();
}

QSize ModelView::defaultExportSize() const
{
    return m_renderer.stack() ? m_renderer.naturalSize() : QSize();
}

bool ModelView::exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return m_renderer.save(path, size.isEmpty() ? defaultExportSize() : size, dpr, error);
}

} // namespace attn
