#pragma once
// What the Long tab's tests share: a small causal session, the pooling of materialized weights
// over a window computed cell by cell, a shown view of n tokens, and the checks of an exported
// window and of the tiles' colours against computeSession's weights.

#include "ui/render/colormap.h"
#include "ui/render/longmaptiles.h"
#include "ui/session/sessioncompute.h"
#include "ui/views/longmapview.h"

#include "core/io/npy.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>

namespace attn::test::longmap {

inline SessionParameters smallParameters()
{
    SessionParameters p;
    p.dModel = 16;
    p.heads = 2;
    p.mask = MaskChoice::Causal;
    p.seed = 7;
    return p;
}

/// Max or mean of each block of `per` × `per` unmasked cells of `w` in `window` (0 where every
/// cell is masked), pixel by pixel; with signedMax the max is the value of largest magnitude.
inline MatrixD poolReference(const MatrixD &w, const MatrixB &mask, Index r0, Index r1, Index c0,
                             Index c1, Index perRow, Index perCol, bool max, bool signedMax = false)
{
    const Index h = (r1 - r0 + perRow - 1) / perRow, wd = (c1 - c0 + perCol - 1) / perCol;
    MatrixD out(h, wd);
    for (Index y = 0; y < h; ++y)
        for (Index x = 0; x < wd; ++x) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            Index count = 0;
            for (Index i = r0 + y * perRow; i < std::min(r1, r0 + (y + 1) * perRow); ++i)
                for (Index j = c0 + x * perCol; j < std::min(c1, c0 + (x + 1) * perCol); ++j) {
                    if (mask(i, j))
                        continue;
                    if (!signedMax)
                        best = std::max(best, w(i, j));
                    else if (count == 0 || std::abs(w(i, j)) > std::abs(best))
                        best = w(i, j);
                    sum += w(i, j);
                    ++count;
                }
            out(y, x) = count == 0 ? 0.0 : (max ? best : sum / double(count));
        }
    return out;
}

inline bool waitFor(const std::function<bool()> &done, int ms = 60000)
{
    return QTest::qWaitFor(done, ms);
}

/// A shown view of n tokens with 16-pixel tiles, its first full view on screen.
inline std::unique_ptr<LongMapView> makeView(const SessionParameters &p, int n, int tilePixels = 16)
{
    auto view = std::make_unique<LongMapView>(nullptr, tilePixels);
    view->resize(760, 620);
    view->setParameters(p);
    view->setLength(n);
    QSignalSpy shown(view.get(), &LongMapView::fullViewShown);
    view->show();
    if (!QTest::qWaitForWindowExposed(view.get()))
        return nullptr;
    if (!shown.wait(60000))
        return nullptr;
    return view;
}

/// The visible window's weights exported as .npz, against the materialized pooling.
inline void checkExport(LongMapView &view, const SessionResult &ref, double tol, const char *what)
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("window.npz"));
    QSignalSpy done(&view, &LongMapView::exported);
    view.exportWindow(path);
    QVERIFY(done.wait(60000));
    QVERIFY2(done.first().at(1).toString().isEmpty(), qPrintable(done.first().at(1).toString()));
    const auto members = readNpz(path.toStdString());
    const auto find = [&](const char *name) -> const NpyArray & {
        for (const auto &m : members)
            if (m.first == name)
                return m.second;
        static const NpyArray none;
        return none;
    };
    const NpyArray &weights = find("weights");
    // Pooled weights only: no scores and no per-row metrics written as zeros.
    for (const auto &m : members)
        QVERIFY2(m.first != "scores" && m.first != "max_weight" && m.first != "entropy",
                 m.first.c_str());
    const NpyArray &qi = find("query_index");
    const NpyArray &ki = find("key_index");
    const NpyArray &fullyMasked = find("fully_masked");
    QCOMPARE(weights.ndim(), 3);
    QCOMPARE(weights.shape[0], std::int64_t(ref.headCount()));
    const Index rows = weights.shape[1], cols = weights.shape[2];
    const Index r0 = Index(qi.values.front()), c0 = Index(ki.values.front());
    const Index perRow = rows > 1 ? Index(qi.values[1] - qi.values[0]) : 1;
    const Index perCol = cols > 1 ? Index(ki.values[1] - ki.values[0]) : 1;
    const CellRect v = view.viewRect();
    QCOMPARE(r0, std::max<Index>(0, Index(std::floor(v.rowBegin))));
    QCOMPARE(c0, std::max<Index>(0, Index(std::floor(v.colBegin))));
    const Index r1 = std::min<Index>(ref.queryCount(), Index(std::ceil(v.rowEnd)));
    const Index c1 = std::min<Index>(ref.keyCount(), Index(std::ceil(v.colEnd)));
    for (int h = 0; h < ref.headCount(); ++h) {
        const MatrixD expected = poolReference(
            ref.weights[std::size_t(h)], ref.maskState, r0, r1, c0, c1, perRow, perCol,
            view.pooling() == TilePooling::Max, view.mapParameters().differential);
        QCOMPARE(expected.rows(), rows);
        QCOMPARE(expected.cols(), cols);
        const MatrixD got = weights.slice<double>(h, "weights");
        const double err = (got - expected).cwiseAbs().maxCoeff();
        QVERIFY2(err <= tol,
                 qPrintable(QStringLiteral("%1 head %2: %3").arg(what).arg(h).arg(err)));
        // A pixel row is fully masked when each of its queries is over every key, not
        // when the visible keys happen to be masked.
        for (Index y = 0; y < rows; ++y) {
            bool all = true;
            for (Index i = r0 + y * perRow; all && i < std::min(r1, r0 + (y + 1) * perRow); ++i)
                all = ref.fullyMasked[std::size_t(h)][std::size_t(i)] != 0;
            QCOMPARE(fullyMasked.values[std::size_t(h * rows + y)] != 0, all);
        }
    }
}

/// Every tile drawn at the view's level has the colour of its pooled materialized value
/// (the colormap index of norm(v), or a neighbour for values on a bin's edge after the
/// float32 rounding of the tile values).
inline void checkTileColours(LongMapView &view, const SessionResult &ref)
{
    LongMapTiles *tiles = view.tiles();
    const TilePyramid &pyramid = *tiles->pyramid();
    const int level = view.level();
    const Index per = TilePyramid::cellsPerPixel(level);
    const Colormap map(tiles->colormap());
    const ColorNorm norm = tiles->norm();
    const MatrixD &w
        = view.head() == kHeadMean ? ref.weightsMean : ref.weights[std::size_t(view.head())];
    int checked = 0;
    for (const TileIndex &t : pyramid.tilesCovering(level, view.viewRect())) {
        const QImage *image = tiles->image({view.head(), level, t});
        QVERIFY(image);
        const TileWindow tw = pyramid.tileWindow(level, t);
        const MatrixD expected = poolReference(
            w, ref.maskState, tw.rowBegin, tw.rowEnd, tw.colBegin, tw.colEnd, per, per,
            tiles->pooling() == TilePooling::Max, view.mapParameters().differential);
        QCOMPARE(image->width(), int(expected.cols()));
        QCOMPARE(image->height(), int(expected.rows()));
        for (Index y = 0; y < expected.rows(); ++y)
            for (Index x = 0; x < expected.cols(); ++x) {
                bool allMasked = true;
                for (Index i = tw.rowBegin + y * per;
                     i < std::min(tw.rowEnd, tw.rowBegin + (y + 1) * per); ++i)
                    for (Index j = tw.colBegin + x * per;
                         j < std::min(tw.colEnd, tw.colBegin + (x + 1) * per); ++j)
                        allMasked = allMasked && ref.maskState(i, j) != 0;
                if (allMasked)
                    continue;
                const QRgb got = image->pixel(int(x), int(y)) | 0xff000000u;
                const double t0 = norm(expected(y, x));
                const bool ok = got == map.map(t0) || got == map.map(t0 - 1.0 / 256)
                    || got == map.map(t0 + 1.0 / 256);
                QVERIFY2(ok,
                         qPrintable(QStringLiteral("tile (%1, %2) pixel (%3, %4)")
                                        .arg(t.tx)
                                        .arg(t.ty)
                                        .arg(x)
                                        .arg(y)));
                ++checked;
            }
    }
    QVERIFY(checked > 0);
}

} // namespace attn::test::longmap
