// TileScheduler, the worker behind the Long tab's tiles, driven from the test's thread as the
// render tier drives it, with a painter of the test's own: the first full view leaves its level's
// values cached (painted again, not computed again), a deeper tile carries computeSession's
// materialized weights and mask states, the painter runs on the worker and what it returns on
// the GUI thread; Cancel, a restart with new parameters, a new pooling and destruction while the
// worker computes; refused parameters fail at once. The tsan preset runs these under
// ThreadSanitizer.

#include "testutil.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tilescheduler.h"

#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

using namespace attn;

namespace {

SessionParameters smallParameters(Index n)
{
    SessionParameters p;
    p.n = n;
    p.nK = n;
    p.dModel = 16;
    p.heads = 2;
    p.mask = MaskChoice::Causal;
    p.seed = 7;
    return p;
}

/// What the test's painter saw: how many tiles it painted off the test's thread, and the tiles
/// whose hand-over ran on the test's thread (key and values).
struct Painted
{
    std::thread::id guiThread = std::this_thread::get_id();
    std::atomic<int> offGui {0};
    std::atomic<int> onGui {0};
    std::vector<std::pair<LongTileKey, TileValues>> taken; // the test's thread only
};

TileScheduler::TilePainter painterFor(Painted *seen)
{
    return [seen](const LongTileKey &key, const TileValues &values) -> std::function<void()> {
        if (std::this_thread::get_id() != seen->guiThread)
            ++seen->offGui;
        return [seen, key, values] {
            if (std::this_thread::get_id() == seen->guiThread)
                ++seen->onGui;
            seen->taken.emplace_back(key, values);
        };
    };
}

} // namespace

class TestTileScheduler : public QObject
{
    Q_OBJECT

private slots:
    void fullViewThenTiles()
    {
        Painted seen;
        TileScheduler scheduler(nullptr, 16, 64);
        scheduler.setPainter(painterFor(&seen));
        QSignalSpy ready(&scheduler, &TileScheduler::fullViewReady);
        QSignalSpy progress(&scheduler, &TileScheduler::progressChanged);
        const SessionParameters p = smallParameters(256);
        // 256 cells in tiles of 16 pixels: the top level is ⌈log₂(256 / 16)⌉ = 4; level 2 has
        // 256 / (16 · 4) = 4 × 4 tiles.
        scheduler.start(p, TilePooling::Max, 2);
        QVERIFY(scheduler.isComputingFullView());
        QVERIFY(!scheduler.isReady());
        QVERIFY(ready.wait(test::kWorkTimeoutMs));
        QCOMPARE(ready.count(), 1);
        QVERIFY(scheduler.isReady());
        QVERIFY(!scheduler.isComputingFullView());
        QCOMPARE(progress.first().first().toDouble(), 0.0);
        QCOMPARE(progress.last().first().toDouble(), 1.0);
        QVERIFY(scheduler.pyramid());
        QCOMPARE(scheduler.pyramid()->topLevel(), 4);
        // A causal map's first row has one weight of 1.
        QCOMPARE(scheduler.maxWeight(0), 1.0);

        // The full view's level: every tile painted from the values cache, none computed.
        const std::vector<TileIndex> level2
            = scheduler.pyramid()->tilesCovering(2, {0, 256, 0, 256});
        QCOMPARE(level2.size(), std::size_t(16));
        scheduler.request(0, 2, level2);
        QVERIFY(QTest::qWaitFor([&] { return seen.taken.size() == 16; }, test::kWorkTimeoutMs));
        QCOMPARE(scheduler.stats().tilesComputed, quint64(0));
        QCOMPARE(scheduler.stats().tilesRecoloured, quint64(16));
        QCOMPARE(seen.offGui.load(), 16);
        QCOMPARE(seen.onGui.load(), 16);

        // A tile of level 0 is computed: one cell a pixel, computeSession's weights.
        seen.taken.clear();
        scheduler.request(1, 0, {TileIndex {2, 2}});
        QVERIFY(QTest::qWaitFor([&] { return seen.taken.size() == 1; }, test::kWorkTimeoutMs));
        QCOMPARE(scheduler.stats().tilesComputed, quint64(1));
        const auto &[key, values] = seen.taken.front();
        QCOMPARE(key, (LongTileKey {1, 0, TileIndex {2, 2}}));
        QCOMPARE(values.values.rows(), Index(16));
        QCOMPARE(values.values.cols(), Index(16));
        const SessionResult ref = computeSession(p);
        QVERIFY2(ref.ok(), qPrintable(ref.error));
        int masked = 0;
        for (Index y = 0; y < 16; ++y)
            for (Index x = 0; x < 16; ++x) {
                const Index i = 32 + y, j = 32 + x; // tile (tx 2, ty 2): queries and keys 32…
                QCOMPARE(values.maskState(y, x) != 0, ref.maskState(i, j) != 0);
                if (ref.maskState(i, j)) {
                    ++masked;
                    QCOMPARE(values.values(y, x), 0.0f);
                } else {
                    QVERIFY(std::abs(double(values.values(y, x)) - ref.weights[1](i, j)) < 1e-6);
                }
            }
        // Queries 32 … 47 over keys 32 … 47 under a causal mask: key j > query i is masked, the
        // 16 · 15 / 2 cells above the diagonal.
        QCOMPARE(masked, 120);
    }

    void cellsAndRows()
    {
        Painted seen;
        TileScheduler scheduler(nullptr, 16, 64);
        scheduler.setPainter(painterFor(&seen));
        QSignalSpy ready(&scheduler, &TileScheduler::fullViewReady);
        const SessionParameters p = smallParameters(64);
        scheduler.start(p, TilePooling::Max, 0);
        QVERIFY(ready.wait(test::kWorkTimeoutMs));
        QSignalSpy cells(&scheduler, &TileScheduler::cellReady);
        QSignalSpy rows(&scheduler, &TileScheduler::rowReady);
        scheduler.requestCell(0, 10, 3, 0, 64, 4);
        QVERIFY(rows.wait(test::kWorkTimeoutMs));
        QCOMPARE(cells.count(), 1);
        const SessionResult ref = computeSession(p);
        const TileCell cell = cells.first().at(3).value<TileCell>();
        QVERIFY(std::abs(cell.weight - ref.weights[0](10, 3)) < 1e-12);
        const LongRowStrip strip = rows.first().first().value<LongRowStrip>();
        QCOMPARE(strip.query, Index(10));
        QCOMPARE(strip.values.size(), std::size_t(16)); // 64 keys, 4 a point
        // Point 0 pools keys 0 … 3 of row 10 (all before it): their largest weight.
        const double top = ref.weights[0].row(10).segment(0, 4).maxCoeff();
        QVERIFY(std::abs(strip.values[0] - top) < 1e-12);
        // Points past key 10 are masked: keys 12 … 15 onwards.
        QVERIFY(strip.maskState[3] != 0);
        QCOMPARE(strip.maskState[0], std::uint8_t(0));
    }

    void newPoolingComputesAgain()
    {
        Painted seen;
        TileScheduler scheduler(nullptr, 16, 64);
        scheduler.setPainter(painterFor(&seen));
        QSignalSpy ready(&scheduler, &TileScheduler::fullViewReady);
        scheduler.start(smallParameters(64), TilePooling::Max, 1);
        // A pooling before the full view is ignored (start() takes the pooling of a map still
        // to be computed).
        scheduler.setPainter(painterFor(&seen), TilePooling::Mean);
        QCOMPARE(scheduler.pooling(), TilePooling::Max);
        QVERIFY(ready.wait(test::kWorkTimeoutMs));
        QCOMPARE(scheduler.pooling(), TilePooling::Max);
        // After it, the values cache goes with the old pooling: level 1's tiles, which the full
        // view left there, are computed again.
        scheduler.setPainter(painterFor(&seen), TilePooling::Mean);
        QCOMPARE(scheduler.pooling(), TilePooling::Mean);
        scheduler.request(0, 1, {TileIndex {0, 0}, TileIndex {1, 0}});
        QVERIFY(QTest::qWaitFor([&] { return seen.taken.size() == 2; }, test::kWorkTimeoutMs));
        QCOMPARE(scheduler.stats().tilesComputed, quint64(2));
        QCOMPARE(scheduler.stats().tilesRecoloured, quint64(0));
    }

    void cancelAndRestart()
    {
        Painted seen;
        TileScheduler scheduler(nullptr, 64, 64);
        scheduler.setPainter(painterFor(&seen));
        QSignalSpy ready(&scheduler, &TileScheduler::fullViewReady);
        QSignalSpy cancelled(&scheduler, &TileScheduler::cancelled);
        SessionParameters big = smallParameters(16384);
        big.dModel = 64;
        scheduler.start(big, TilePooling::Max, 0);
        scheduler.cancel();
        QCOMPARE(cancelled.count(), 1); // at once, on this thread
        QVERIFY(!scheduler.isComputingFullView());
        QVERIFY(!scheduler.isReady());
        // A second Cancel does nothing.
        scheduler.cancel();
        QCOMPARE(cancelled.count(), 1);
        // A restart with other parameters supersedes a start still computing: only the newest
        // full view arrives, with its own pyramid.
        scheduler.start(big, TilePooling::Max, 0);
        scheduler.start(smallParameters(128), TilePooling::Max, 1);
        QVERIFY(ready.wait(test::kWorkTimeoutMs));
        QTest::qWait(200);
        QCOMPARE(ready.count(), 1);
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(scheduler.pyramid()->queries(), Index(128));
        QCOMPARE(scheduler.parameters().n, Index(128));
        // clear() drops the map; a wish after it is ignored.
        scheduler.clear();
        QVERIFY(!scheduler.isReady());
        QVERIFY(!scheduler.pyramid());
        scheduler.request(0, 0, {TileIndex {0, 0}});
        QTest::qWait(100);
        QVERIFY(seen.taken.empty());
    }

    void refusedParametersFailAtOnce()
    {
        TileScheduler scheduler(nullptr, 16, 64);
        QSignalSpy failed(&scheduler, &TileScheduler::failed);
        SessionParameters p = smallParameters(64);
        p.heads = 3; // d_model 16 is not divisible by 3
        QVERIFY(!TileScheduler::refusal(p).isEmpty());
        scheduler.start(p, TilePooling::Max, 0);
        QCOMPARE(failed.count(), 1);
        QVERIFY(!scheduler.isComputingFullView());
        QVERIFY(!scheduler.pyramid());
    }

    void destroyedWhileComputing()
    {
        // The destructor cancels the full view and waits for the worker; nothing it posted runs.
        Painted seen;
        QSignalSpy *readySpy = nullptr;
        {
            auto scheduler = std::make_unique<TileScheduler>(nullptr, 64, 64);
            scheduler->setPainter(painterFor(&seen));
            readySpy = new QSignalSpy(scheduler.get(), &TileScheduler::fullViewReady);
            SessionParameters big = smallParameters(16384);
            big.dModel = 64;
            scheduler->start(big, TilePooling::Max, 0);
            QTest::qWait(50);
        }
        QTest::qWait(100);
        QCOMPARE(readySpy->count(), 0);
        QVERIFY(seen.taken.empty());
        delete readySpy;
    }
};

QTEST_GUILESS_MAIN(TestTileScheduler)
#include "tst_tilescheduler.moc"
