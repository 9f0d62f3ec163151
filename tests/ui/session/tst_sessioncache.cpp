// SessionComputeCache (ui/session/sessioncompute.h): a computation that reuses the raw scores of
// the previous one gives the same numbers, bit for bit, as one computed from scratch, and those
// equal MultiheadAttention<T>::forward (the core's reference) for every dtype, mask and kind.
// Also: which changes reuse the cache (α, τ, mask) and which do not (seed, generator, n,
// d_model, h, kind, positions, dtype, tokens); AttentionSession's work counters.

#include "testutil.h"

#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"

#include "core/attention/multihead.h"
#include "core/attention/positional.h"
#include "core/random/random.h"
#include "core/random/torchrandom.h"

#include <QSignalSpy>
#include <QTest>

#include <functional>
#include <type_traits>

Q_DECLARE_METATYPE(attn::DType)

using namespace attn;

Q_DECLARE_METATYPE(std::function<void(attn::SessionParameters &)>)

namespace {

using Change = std::function<void(SessionParameters &)>;

void compareExactly(const SessionResult &a, const SessionResult &b)
{
    QVERIFY2(a.ok(), qPrintable(a.error));
    QVERIFY2(b.ok(), qPrintable(b.error));
    QCOMPARE(a.headCount(), b.headCount());
    for (int h = 0; h < a.headCount(); ++h) {
        const auto u = std::size_t(h);
        QVERIFY(a.weights[u] == b.weights[u]);
        QVERIFY(a.scores[u] == b.scores[u]);
        QVERIFY(a.scaledScores[u] == b.scaledScores[u]);
        QVERIFY(a.fullyMasked[u] == b.fullyMasked[u]);
        QVERIFY(a.metrics[u].entropy == b.metrics[u].entropy);
        QVERIFY(a.metrics[u].jacobianNorm == b.metrics[u].jacobianNorm);
    }
    QVERIFY(a.weightsMean == b.weightsMean);
    QVERIFY(a.maskState == b.maskState);
    QCOMPARE(a.scale, b.scale);
    QCOMPARE(a.worstRowSumError, b.worstRowSumError);
}

/// The same parameters through MultiheadAttention<T>::forward (no cache, no staging).
template<typename T>
void compareWithForward(const SessionParameters &p, const SessionResult &r, double tol)
{
    const Index nQ = p.queryCount(), nK = p.keyCount(), d = p.dModel;
    MultiheadAttention<T> layer(d, p.heads);
    MatrixD x, e;
    if (p.generator == RandomSource::Torch) {
        // nn.MultiheadAttention's init, then torch.randn(1, n, d) in T (core/random/torchrandom.h).
        TorchGenerator rng(p.seed);
        initTorchDefault(layer, rng);
        const auto draw = [&rng, d](Index rows) {
            if constexpr (std::is_same_v<T, float>)
                return MatrixD(rng.randnMatrixFloat(rows, d).template cast<double>());
            else
                return rng.randnMatrix(rows, d);
        };
        x = draw(nQ);
        if (p.kind == AttentionKind::EncoderDecoder)
            e = draw(nK);
    } else {
        Generator rng(p.seed);
        layer.initXavier(rng);
        x = rng.standardNormal(nQ, d);
        if (p.kind == AttentionKind::EncoderDecoder)
            e = rng.standardNormal(nK, d);
    }
    QVERIFY(p.tokens.empty()); // the rows below would be replaced otherwise
    if (p.positional) {
        x += sinusoidalEncoding(nQ, d);
        if (e.size() > 0)
            e += sinusoidalEncoding(nK, d);
    }
    AttentionMask mask;
    if (p.causalMasked())
        mask = AttentionMask::causal(nQ, nK, CausalAlignment::TopLeft);
    if (p.mask == MaskChoice::KeyPadding)
        mask = mask | AttentionMask::keyPaddingLast(nQ, nK, p.paddingCount);
    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;
    const Matrix<T> query = x.cast<T>();
    const Matrix<T> kv = e.size() > 0 ? Matrix<T>(e.cast<T>()) : query;
    const MultiheadResult<T> ref = layer.forward(query, kv, kv, mask, options);
    QCOMPARE(r.scale, ref.scale);
    for (int h = 0; h < p.heads; ++h) {
        const auto u = std::size_t(h);
        ATTN_COMPARE_CLOSE(r.weights[u], ref.weights[u].template cast<double>(), tol, tol);
        ATTN_COMPARE_CLOSE(r.scores[u], ref.scores[u].template cast<double>(), tol, tol);
        // Masked cells are −inf on both sides (compareClose treats equal values as equal).
        ATTN_COMPARE_CLOSE(r.scaledScores[u], ref.scaledScores[u].template cast<double>(), tol,
                           tol);
        QVERIFY(r.fullyMasked[u] == ref.fullyMasked[u]);
    }
    ATTN_COMPARE_CLOSE(r.weightsMean, ref.weightsMean.template cast<double>(), tol, tol);
}

SessionParameters base(int n, int dModel, int heads, DType dtype)
{
    SessionParameters p;
    p.n = n;
    p.nK = n + 3;
    p.dModel = dModel;
    p.heads = heads;
    p.seed = 11;
    p.dtype = dtype;
    return p;
}

} // namespace

class TestSessionCache : public QObject
{
    Q_OBJECT

private slots:
    void cachedEqualsFresh_data()
    {
        QTest::addColumn<SessionParameters>("first");
        QTest::addColumn<Change>("change");
        QTest::addColumn<bool>("reuses");

        for (DType dtype : {DType::Float64, DType::Float32}) {
            const char *t = dtype == DType::Float64 ? "float64" : "float32";
            for (int n : {7, 40}) {
                const SessionParameters p = base(n, 64, n == 7 ? 4 : 8, dtype);
                const QByteArray tag = QByteArray(t) + " n=" + QByteArray::number(n) + " ";
                QTest::newRow(tag + "alpha")
                    << p << Change([](SessionParameters &q) { q.scaleExponent = 0.3; }) << true;
                QTest::newRow(tag + "temperature")
                    << p << Change([](SessionParameters &q) { q.temperature = 0.25; }) << true;
                QTest::newRow(tag + "causal mask")
                    << p << Change([](SessionParameters &q) { q.mask = MaskChoice::Causal; })
                    << true;
                QTest::newRow(tag + "key padding") << p << Change([](SessionParameters &q) {
                    q.mask = MaskChoice::KeyPadding;
                    q.paddingCount = 3;
                }) << true;
                QTest::newRow(tag + "decoder kind") << p << Change([](SessionParameters &q) {
                    q.kind = AttentionKind::DecoderCausal;
                }) << true;
                QTest::newRow(tag + "encoder-decoder kind")
                    << p
                    << Change([](SessionParameters &q) { q.kind = AttentionKind::EncoderDecoder; })
                    << false;
                QTest::newRow(tag + "seed")
                    << p << Change([](SessionParameters &q) { q.seed = 12; }) << false;
                QTest::newRow(tag + "generator")
                    << p << Change([](SessionParameters &q) { q.generator = RandomSource::Torch; })
                    << false;
                QTest::newRow(tag + "heads")
                    << p << Change([](SessionParameters &q) { q.heads = 2; }) << false;
                QTest::newRow(tag + "positions")
                    << p << Change([](SessionParameters &q) { q.positional = true; }) << false;
            }
            // n·n·h ≥ 2^20 cells runs the per-head loops on both cores (smaller ones on one).
            const SessionParameters big = base(368, 32, 8, dtype);
            QTest::newRow(QByteArray(t) + " n=368 two threads alpha")
                << big << Change([](SessionParameters &q) { q.scaleExponent = 0.3; }) << true;
            QTest::newRow(QByteArray(t) + " n=368 two threads seed")
                << big << Change([](SessionParameters &q) { q.seed = 3; }) << false;
            QTest::newRow(QByteArray(t) + " tokens")
                << base(5, 16, 2, dtype) << Change([](SessionParameters &q) {
                       q.setTokens({"a", "b", "a"});
                   })
                << false;
        }
        QTest::newRow("dtype") << base(9, 16, 2, DType::Float64)
                               << Change([](SessionParameters &q) { q.dtype = DType::Float32; })
                               << false;
        QTest::newRow("cross attention, then n_k") <<
            [] {
                SessionParameters p = base(6, 32, 4, DType::Float64);
                p.kind = AttentionKind::EncoderDecoder;
                return p;
            }() << Change([](SessionParameters &q) { q.nK = 4; })
                                                   << false;
    }

    void cachedEqualsFresh()
    {
        QFETCH(SessionParameters, first);
        QFETCH(Change, change);
        QFETCH(bool, reuses);
        SessionParameters second = first;
        change(second);
        QVERIFY2(second.validate().isEmpty(), qPrintable(second.validate()));

        SessionComputeCache cache;
        QVERIFY(!cache.covers(first));
        const SessionResult a = computeSession(first, {}, &cache);
        QVERIFY2(a.ok(), qPrintable(a.error));
        QVERIFY(cache.covers(first));
        QVERIFY(cache.bytes() > 0);
        QCOMPARE(cache.covers(second), reuses);

        const SessionResult cached = computeSession(second, {}, &cache);
        const SessionResult fresh = computeSession(second);
        compareExactly(cached, fresh);
        QVERIFY(cache.covers(second));
        // And going back gives the first result again.
        compareExactly(computeSession(first, {}, &cache), a);

        if (second.tokens.empty()) {
            if (second.dtype == DType::Float64)
                compareWithForward<double>(second, cached, 1e-12);
            else
                compareWithForward<float>(second, cached, 1e-5);
        }
    }

    // Scores larger than SessionComputeCache::maxBytes() are not kept (and the result is right).
    void largeProblemsAreNotCached()
    {
        SessionComputeCache cache;
        QCOMPARE(cache.maxBytes(), std::size_t(256) << 20);
        SessionParameters p = base(32, 16, 4, DType::Float64);
        cache.setMaxBytes(32 * 32 * 4 * sizeof(double)); // exactly these scores
        QVERIFY(computeSession(p, {}, &cache).ok());
        QVERIFY(cache.covers(p));
        QCOMPARE(cache.bytes(), std::size_t(32 * 32 * 4 * sizeof(double)));
        p.n = 33;
        const SessionResult big = computeSession(p, {}, &cache);
        compareExactly(big, computeSession(p));
        QVERIFY(!cache.covers(p));
        QCOMPARE(cache.bytes(), std::size_t(0));
        // float32 keeps a float copy beside the double one.
        p.n = 16;
        p.dtype = DType::Float32;
        cache.setMaxBytes(std::size_t(1) << 20);
        QVERIFY(computeSession(p, {}, &cache).ok());
        QCOMPARE(cache.bytes(), std::size_t(16 * 16 * 4 * (sizeof(double) + sizeof(float))));
    }

    // A dropped result's matrices are reused by the next computation (no fresh pages), and
    // the numbers are still those of a fresh computation.
    void sharedResultsRecycleBuffers_data()
    {
        QTest::addColumn<DType>("dtype");
        QTest::newRow("float64") << DType::Float64;
        QTest::newRow("float32") << DType::Float32;
    }
    void sharedResultsRecycleBuffers()
    {
        QFETCH(DType, dtype);
        SessionComputeCache cache;
        SessionParameters p = base(48, 32, 4, dtype);
        auto first = cache.share(computeSession(p, {}, &cache));
        QVERIFY(first->ok());
        auto buffers = [](const SessionResult &r) {
            QList<const double *> data;
            for (const auto *list : {&r.weights, &r.scores, &r.scaledScores})
                for (const MatrixD &m : *list)
                    data.append(m.data());
            data.append(r.weightsMean.data());
            return data;
        };
        const QList<const double *> old = buffers(*first);
        QCOMPARE(old.size(), 3 * 4 + 1);
        first.reset();

        p.scaleExponent = 0.3;
        auto second = cache.share(computeSession(p, {}, &cache));
        int reused = 0;
        for (const double *d : buffers(*second))
            reused += old.contains(d) ? 1 : 0;
        QCOMPARE(reused, 3 * 4 + 1);
        compareExactly(*second, computeSession(p));

        // Held results keep their buffers; another shape does not reuse the spares.
        auto third = cache.share(computeSession(p, {}, &cache));
        for (const double *d : buffers(*third))
            QVERIFY(!buffers(*second).contains(d));
        second.reset();
        p.n = 47;
        const auto other = cache.share(computeSession(p, {}, &cache));
        compareExactly(*other, computeSession(p));
        // The pool may outlive the cache: results dropped later are still safe.
        {
            SessionComputeCache shortLived;
            third = shortLived.share(computeSession(p, {}, &shortLived));
        }
        third.reset();
    }

    // A large problem replaced by a small one: the pool's spare matrices of the large shape
    // are released (held bytes drop to what the small results give back), and the large
    // result dropped afterwards is not kept either.
    void largeThenSmallReleasesPool()
    {
        SessionComputeCache cache;
        const std::shared_ptr<EngineBufferPool> pool = cache.engine().pool();
        SessionParameters p = base(256, 32, 4, DType::Float64);
        auto large = cache.share(computeSession(p, {}, &cache));
        QVERIFY(large->ok());
        QCOMPARE(pool->heldBytes(), std::size_t(0));
        p.scaleExponent = 0.3;
        auto larger = cache.share(computeSession(p, {}, &cache));
        large.reset(); // 3·h + 1 matrices of 256 × 256 float64 become spares
        const std::size_t bigShape = std::size_t(256) * 256 * sizeof(double);
        QCOMPARE(pool->heldBytes(), (3 * 4 + 1) * bigShape);

        p.n = 8;
        auto small = cache.share(computeSession(p, {}, &cache));
        QVERIFY(small->ok());
        QCOMPARE(pool->heldBytes(), std::size_t(0)); // the large spares are gone
        larger.reset(); // the large result shown until now: not kept
        QCOMPARE(pool->heldBytes(), std::size_t(0));
        small.reset();
        QCOMPARE(pool->heldBytes(), (3 * 4 + 1) * std::size_t(8) * 8 * sizeof(double));
        pool->release();
        QCOMPARE(pool->heldBytes(), std::size_t(0));
    }

    // A cancel during the computation leaves no half-filled cache behind.
    void cancelClearsCache()
    {
        SessionComputeCache cache;
        const SessionParameters p = base(64, 32, 4, DType::Float64);
        int polls = 0;
        const SessionResult r
            = computeSession(p, CancelToken([&polls] { return ++polls > 2; }), &cache);
        QCOMPARE(r.error, QStringLiteral("cancelled"));
        QVERIFY(!cache.covers(p));
        const SessionResult ok = computeSession(p, {}, &cache);
        compareExactly(ok, computeSession(p));
    }

    // The work counters: one request, one computation, one delivery; a burst of requests made
    // without the event loop delivers one result, the newest.
    void workStats()
    {
        AttentionSession session;
        QSignalSpy results(&session, &AttentionSession::resultChanged);
        SessionParameters p = session.parameters();
        p.n = 64;
        session.setParameters(p);
        QTRY_COMPARE_WITH_TIMEOUT(results.count(), 1, attn::test::kWorkTimeoutMs);
        AttentionSession::WorkStats s = session.workStats();
        QCOMPARE(s.requests, quint64(1));
        QCOMPARE(s.started, quint64(1));
        QCOMPARE(s.completed, quint64(1));
        QCOMPARE(s.delivered, quint64(1));

        for (int k = 1; k <= 40; ++k) {
            p.scaleExponent = k / 100.0;
            session.setParameters(p);
        }
        QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), attn::test::kWorkTimeoutMs);
        QTest::qWait(50);
        s = session.workStats();
        QCOMPARE(s.requests, quint64(41));
        // How many the worker took up while the loop ran depends on timing; the newest always.
        QVERIFY(s.started >= 2 && s.started <= s.requests);
        QVERIFY(s.completed >= 2 && s.completed <= s.started);
        QCOMPARE(s.delivered, quint64(2)); // the others were superseded before delivery
        QCOMPARE(results.count(), 2);
        QVERIFY(session.result()->params == p);
    }
};

QTEST_MAIN(TestSessionCache)
#include "tst_sessioncache.moc"
