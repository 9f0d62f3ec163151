#pragma once
// What the heatmap feature tests (tst_heatmapfeatures.cpp: colours, tokens, view transforms and
// the widget; tst_heatmapexports.cpp: files, data exports, panels and the command line) share:
// computed and hand-made results, JSON fixtures and an SVG's texts.

#include "testutil.h"
#include "ui/handmaderesult.h"

#include "core/engine/sessioninputs.h"
#include "core/io/npy.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/export/dataexport.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/heatmapviewpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/resultview.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tokenizer.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <QXmlStreamReader>

#include <cmath>
#include <limits>

using namespace attn;

namespace heatmaptest {

using attn::test::makeResult;

inline std::shared_ptr<const SessionResult> compute(const SessionParameters &p)
{
    return std::make_shared<SessionResult>(computeSession(p));
}

inline QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline MatrixD jsonMatrix(const QJsonArray &rows)
{
    MatrixD m(rows.size(), rows.isEmpty() ? 0 : rows.at(0).toArray().size());
    for (int i = 0; i < rows.size(); ++i) {
        const QJsonArray row = rows.at(i).toArray();
        for (int j = 0; j < row.size(); ++j)
            m(i, j) = row.at(j).isNull() ? -std::numeric_limits<double>::infinity()
                                         : row.at(j).toDouble();
    }
    return m;
}

// Texts of the <text> elements of an SVG, and whether it parsed.
inline QStringList svgTexts(const QByteArray &svg, QString *error)
{
    QStringList texts;
    QXmlStreamReader xml(svg);
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    if (xml.hasError() && error)
        *error = xml.errorString();
    return texts;
}

inline QString fixture(const QString &relative)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/") + relative;
}

} // namespace heatmaptest
