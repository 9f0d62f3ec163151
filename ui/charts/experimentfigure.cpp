#include "ui/charts/experimentfigure.h"
#include "ui/charts/figurerecipes.h"

#include "ui/render/figurefile.h"

#include <QApplication>
#include <QBuffer>
#include <QFileInfo>
#include <QLabel>
#include <QLayout>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

namespace attn {

using namespace expfig;

namespace {

/// Builds the figure into a new frame; throws FigureUnavailable.
std::unique_ptr<FigureFrame> buildFigure(const ExperimentResult &r)
{
    static const std::map<QString, void (*)(const ExperimentResult &, FigureFrame &)> builders = {
        {QStringLiteral("E1"), buildE1},   {QStringLiteral("E2"), buildE2},
        {QStringLiteral("E3"), buildE3},   {QStringLiteral("E4"), buildE4},
        {QStringLiteral("E5"), buildE5},   {QStringLiteral("E6"), buildE6},
        {QStringLiteral("E7"), buildE7},   {QStringLiteral("E8"), buildE8},
        {QStringLiteral("E9"), buildE9},   {QStringLiteral("E10"), buildE10},
        {QStringLiteral("E11"), buildE11}, {QStringLiteral("E12"), buildE12},
        {QStringLiteral("E13"), buildE13}, {QStringLiteral("E14"), buildE14},
        {QStringLiteral("E15"), buildE15}, {QStringLiteral("E16"), buildE16},
        {QStringLiteral("E17"), buildE17}, {QStringLiteral("E18"), buildE18},
        {QStringLiteral("E19"), buildE19}, {QStringLiteral("E20"), buildE20},
    };
    auto frame = std::make_unique<FigureFrame>(r);
    const auto it = builders.find(q(r.id).toUpper());
    if (it == builders.end()) {
        if (r.matrices.empty())
            throw FigureUnavailable("no figure is defined for experiment '" + r.id + "'");
        addHeatmaps(*frame, allMatrices(r), 0, true);
        return frame;
    }
    it->second(r, *frame);
    if (frame->panelCount() == 0)
        throw FigureUnavailable("nothing to draw");
    return frame;
}

} // namespace

bool experimentHasFigure(const ExperimentResult &result, QString *reason)
{
    try {
        buildFigure(result);
        return true;
    } catch (const std::exception &e) {
        if (reason)
            *reason = QString::fromUtf8(e.what());
        return false;
    }
}

QSize defaultExperimentFigureSize(const ExperimentResult &result)
{
    const QString id = q(result.id).toUpper();
    if (id == QLatin1String("E2") || id == QLatin1String("E10"))
        return {1500, 520};
    if (id == QLatin1String("E3") || id == QLatin1String("E8"))
        return {1200, 520};
    if (id == QLatin1String("E1"))
        return {640, 600};
    if (id == QLatin1String("E4")) {
        int n = 0;
        for (const NamedMatrix &m : result.matrices)
            n += q(m.name).contains(QLatin1String("head"), Qt::CaseInsensitive) ? 1 : 0;
        if (n == 0)
            n = int(result.matrices.size());
        if (n <= 4)
            return {std::max(1, n) * 380, 460};
        const int perRow = int(std::ceil(std::sqrt(double(n))));
        const int rows = (n + perRow - 1) / perRow;
        return {perRow * 300, rows * 280 + 80};
    }
    if (id == QLatin1String("E11") || id == QLatin1String("E12"))
        return {1000, 760};
    if (id == QLatin1String("E13"))
        return {1800, 1500};
    if (id == QLatin1String("E14"))
        return {1500, 520};
    if (id == QLatin1String("E15") || id == QLatin1String("E16"))
        return {1300, 900};
    if (id == QLatin1String("E17"))
        return {1300, 1000};
    if (id == QLatin1String("E18") || id == QLatin1String("E19"))
        return {1200, 850};
    if (id == QLatin1String("E20"))
        return {1200, 1000};
    return {1000, 600};
}

QVector<ExperimentHeatmap> experimentHeatmaps(const QWidget *figure)
{
    QVector<ExperimentHeatmap> out;
    if (!figure)
        return out;
    for (const QWidget *w : figure->findChildren<const QWidget *>())
        if (const auto *view = dynamic_cast<const HeatmapView *>(w))
            out.append(view->content());
    return out;
}

QWidget *createExperimentFigure(const ExperimentResult &result, QWidget *parent)
{
    try {
        std::unique_ptr<FigureFrame> frame = buildFigure(result);
        frame->setParent(parent);
        return frame.release();
    } catch (const std::exception &e) {
        auto *label = new QLabel(parent);
        label->setObjectName(QStringLiteral("experimentFigureUnavailable"));
        label->setWordWrap(true);
        label->setAlignment(Qt::AlignCenter);
        label->setText(QObject::tr("No figure for %1: %2. The table shows the result.")
                           .arg(q(result.id), QString::fromUtf8(e.what())));
        return label;
    }
}

bool exportExperimentFigure(const ExperimentResult &result, const QString &path, QSize size,
                            QString *error)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg"))
        return fail(QObject::tr("%1: unknown figure format '%2' (use .png or .svg)")
                        .arg(path, suffix.isEmpty() ? QStringLiteral("(none)") : suffix));
    if (!qobject_cast<QApplication *>(QCoreApplication::instance()))
        return fail(QObject::tr("%1: drawing a figure needs a QApplication").arg(path));
    if (size.isEmpty())
        size = defaultExperimentFigureSize(result);
    if (size.width() > 20000 || size.height() > 20000)
        return fail(QObject::tr("%1: figure size %2\u00d7%3 is too large (at most 20000 pixels a "
                                "side)")
                        .arg(path)
                        .arg(size.width())
                        .arg(size.height()));

    std::unique_ptr<FigureFrame> frame;
    try {
        frame = buildFigure(result);
    } catch (const std::exception &e) {
        return fail(QObject::tr("%1: no figure for %2: %3")
                        .arg(path, q(result.id), QString::fromUtf8(e.what())));
    }
    // Lay the widget out at the requested size without showing it on screen: the same widget
    // tree the panel shows, painted by QWidget::render into an image or an SVG generator.
    frame->setAttribute(Qt::WA_DontShowOnScreen);
    frame->setMinimumSize(0, 0);
    frame->resize(size);
    frame->layout()->activate();
    QCoreApplication::sendPostedEvents();

    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (suffix == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        frame->render(&painter);
        painter.end();
        if (!image.save(&buffer, "PNG"))
            return fail(QObject::tr("%1: could not encode the PNG image").arg(path));
    } else {
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(0, 0), size));
        generator.setTitle(QStringLiteral("Attention Lab %1").arg(q(result.id)));
        generator.setDescription(
            QStringLiteral("Figure of experiment %1 exported by attnlab").arg(q(result.id)));
        QPainter painter;
        if (!painter.begin(&generator))
            return fail(QObject::tr("%1: could not start the SVG generator").arg(path));
        painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
        frame->render(&painter);
        painter.end();
    }
    buffer.close();

    QString why;
    if (!writeFileBytes(path, bytes, &why))
        return fail(why);
    return true;
}

} // namespace attn
