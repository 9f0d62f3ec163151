#include "ui/views/positionsview.h"

#include "ui/session/jobrunner.h"
#include "ui/views/figureexport.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace attn {

class PositionsView::Canvas : public QWidget
{
public:
    explicit Canvas(PositionsView *view)
        : m_view(view)
    {
        setObjectName(QStringLiteral("positionsCanvas"));
        setMinimumSize(320, 240);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter painter(this);
        PositionsRenderer &r = m_view->m_renderer;
        r.setColors(palette().color(QPalette::Base), palette().color(QPalette::Text));
        r.paint(&painter, QRectF(rect()));
        if (m_view->isComputing()) {
            painter.setPen(palette().color(QPalette::PlaceholderText));
            painter.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignRight | Qt::AlignBottom,
                             tr("computing…"));
        }
    }

private:
    PositionsView *m_view;
};

PositionsView::PositionsView(QWidget *parent)
    : QWidget(parent)
    , m_jobs(new JobRunner(this, 1))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);
    auto *strip = new QHBoxLayout;
    auto *hint = new QLabel(tr("The positional encoding of this session's n and d_model and how "
                               "similar the positions are to each other (E5, E6)."));
    hint->setObjectName(QStringLiteral("positionsHint"));
    hint->setWordWrap(true);
    m_exportButton = new QPushButton(tr("Export…"));
    m_exportButton->setObjectName(QStringLiteral("positionsExportButton"));
    m_exportButton->setToolTip(tr("Save PE and PE·PEᵀ with their colourbars and the caption as "
                                  "PNG, SVG or PDF"));
    strip->addWidget(hint, 1);
    strip->addWidget(m_exportButton);
    layout->addLayout(strip);
    m_canvas = new Canvas(this);
    layout->addWidget(m_canvas, 1);
    connect(m_exportButton, &QPushButton::clicked, this, &PositionsView::exportInteractive);
    connect(m_jobs, &JobRunner::busyChanged, m_canvas, qOverload<>(&QWidget::update));
}

QString PositionsView::keyOf(const SessionParameters &p)
{
    return QStringLiteral("%1/%2/%3/%4/%5/%6")
        .arg(p.n)
        .arg(p.dModel)
        .arg(int(p.positionalScheme()))
        .arg(p.heads)
        .arg(p.ropeBase, 0, 'g', 17)
        .arg(p.dK());
}

void PositionsView::setParameters(const SessionParameters &p)
{
    m_params = p;
    if (isVisible())
        recompute();
}

void PositionsView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    recompute();
}

bool PositionsView::isComputing() const
{
    return m_jobs->isBusy();
}

void PositionsView::recompute()
{
    const QString key = keyOf(m_params);
    if (key == m_shownKey || key == m_pendingKey)
        return;
    m_pendingKey = key;
    SessionParameters p = m_params;
    p.tensors = nullptr; // only sizes and the scheme matter; never read the tensors on the worker
    m_jobs->run([p](const JobContext &) { return computePositionsFigure(p); },
                [this, key](PositionsFigure figure) {
                    m_renderer.setFigure(std::move(figure));
                    m_shownKey = key;
                    m_pendingKey.clear();
                    m_canvas->update();
                    emit figureChanged();
                });
}

const PositionsRenderer &PositionsView::renderer()
{
    const QString key = keyOf(m_params);
    if (key != m_shownKey) { // behind (hidden, or still computing): wait for the worker
        SessionParameters p = m_params;
        p.tensors = nullptr;
        m_pendingKey.clear();
        auto figure
            = m_jobs->runAndWait([p](const JobContext &) { return computePositionsFigure(p); });
        if (figure) {
            m_renderer.setFigure(std::move(*figure));
            m_shownKey = key;
            m_canvas->update();
        }
    }
    return m_renderer;
}

bool PositionsView::exportFigure(const QString &path, QSize size, qreal dpr, QString *error)
{
    return renderer().save(path, size, dpr, error);
}

QSize PositionsView::defaultExportSize() const
{
    return QSize(std::max(1200, m_canvas->width()), std::max(600, m_canvas->height()));
}

void PositionsView::exportInteractive()
{
    exportFigureInteractive(this, tr("Export Positional Encoding"),
                            QStringLiteral("positional-encoding.png"),
                            [this](const QString &path, QString *error) {
                                return exportFigure(path, defaultExportSize(), 2.0, error);
                            });
}

} // namespace attn
