#pragma once
// What the Steps view tests (tst_stepsview.cpp: the view and its pictures, tst_stepsvalues.cpp:
// the numbers it shows) share: a computed result, numbers as the tooltips write them, and the
// colours and cells of a painted figure.

#include "ui/render/stepsrenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/session/resultview.h"
#include "ui/session/tensorsource.h"
#include "ui/svgtext.h"
#include "ui/views/atlasview.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figurecanvas.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/modelview.h"
#include "ui/views/positionsview.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"

#include "core/attention/positional.h"
#include "core/engine/sessioninputs.h"

#include "testutil.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QFontMetricsF>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>
#include <limits>
#include <map>

using namespace attn;

namespace stepstest {

using ResultPtr = std::shared_ptr<const SessionResult>;

inline ResultPtr compute(const SessionParameters &p)
{
    auto r = std::make_shared<SessionResult>(computeSession(p));
    return r;
}

// "−1.5" style, 6 significant digits, as a reader of the tooltip expects.
inline QString shown(double v)
{
    if (std::isinf(v))
        return v < 0 ? QStringLiteral("\u2212\u221e") : QStringLiteral("+\u221e");
    QString s = QString::number(v, 'g', 6);
    if (s.startsWith(QLatin1Char('-')))
        s.replace(0, 1, QChar(0x2212));
    return s;
}

// The most frequent colour inside a cell (hatch lines are thinner than the background).
inline QRgb dominantColor(const QImage &image, const QRectF &cell)
{
    std::map<QRgb, int> counts;
    for (int y = int(std::ceil(cell.top())) + 1; y < int(cell.bottom()) - 1; ++y)
        for (int x = int(std::ceil(cell.left())) + 1; x < int(cell.right()) - 1; ++x)
            ++counts[image.pixel(x, y) | 0xff000000u];
    QRgb best = 0;
    int bestCount = -1;
    for (auto [c, n] : counts)
        if (n > bestCount) {
            best = c;
            bestCount = n;
        }
    return best;
}

inline double distance(QRgb a, QRgb b)
{
    const double dr = qRed(a) - qRed(b), dg = qGreen(a) - qGreen(b), db = qBlue(a) - qBlue(b);
    return std::sqrt(dr * dr + dg * dg + db * db);
}

inline QRectF cellRect(const PanelFigureLayout &lay, int panel, int i, int j)
{
    const QRectF &map = lay.maps.at(panel);
    return {map.left() + j * lay.cellSize, map.top() + i * lay.cellSize, lay.cellSize,
            lay.cellSize};
}

} // namespace stepstest
