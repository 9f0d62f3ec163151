// SessionParameters (validation, JSON round trip, caption), computeSession (against the NumPy
// reference of tests/reference/make_session_fixtures.py; invariants for every kind, mask and
// dtype) and AttentionSession (one change → one result; rapid changes → newest wins, no stale
// result delivered; clean destruction while busy).

#include "testutil.h"

#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/sessionparameters.h"

#include "core/attention/groupedattention.h"
#include "core/attention/multihead.h"
#include "core/engine/sessioninputs.h"
#include "core/random/random.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using namespace attn;

namespace {

MatrixD matrixFromJson(const QJsonArray &rows)
{
    const Index r = rows.size();
    const Index c = r ? rows.at(0).toArray().size() : 0;
    MatrixD m(r, c);
    for (Index i = 0; i < r; ++i) {
        const QJsonArray row = rows.at(int(i)).toArray();
        for (Index j = 0; j < c; ++j)
            m(i, j) = row.at(int(j)).toDouble();
    }
    return m;
}

SessionParameters makeParams(AttentionKind kind, MaskChoice mask, DType dtype, int n = 7,
                             int nK = 5)
{
    SessionParameters p;
    p.n = n;
    p.nK = nK;
    p.dModel = 16;
    p.heads = 4;
    p.seed = 3;
    p.kind = kind;
    p.mask = mask;
    p.paddingCount = 2;
    p.dtype = dtype;
    return p;
}

} // namespace

class TestSession : public QObject
{
    Q_OBJECT

private:
    QJsonArray m_cases;
    QJsonArray m_torchCases;

private slots:
    void initTestCase()
    {
        QFile file(QStringLiteral(ATTN_FIXTURE_DIR "/session/session.json"));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        m_cases = QJsonDocument::fromJson(file.readAll())
                      .object()
                      .value(QStringLiteral("cases"))
                      .toArray();
        QVERIFY(m_cases.size() >= 5);
        QFile torchFile(QStringLiteral(ATTN_FIXTURE_DIR "/session/session_torch.json"));
        QVERIFY2(torchFile.open(QIODevice::ReadOnly), qPrintable(torchFile.fileName()));
        m_torchCases = QJsonDocument::fromJson(torchFile.readAll())
                           .object()
                           .value(QStringLiteral("cases"))
                           .toArray();
        QVERIFY(m_torchCases.size() >= 10);
    }

    // ---- SessionParameters ----

    void validate_data()
    {
        QTest::addColumn<SessionParameters>("params");
        QTest::addColumn<QString>("mentions"); // empty: valid
        SessionParameters ok;
        QTest::newRow("defaults") << ok << QString();
        SessionParameters p = ok;
        p.heads = 3;
        p.dModel = 16;
        QTest::newRow("h does not divide d_model") << p << QStringLiteral("d_model=16");
        p = ok;
        p.n = 0;
        QTest::newRow("n = 0") << p << QStringLiteral("n must");
        p = ok;
        p.n = 5000;
        QTest::newRow("n too large") << p << QStringLiteral("n must");
        p = ok;
        p.kind = AttentionKind::EncoderDecoder;
        p.nK = 0;
        QTest::newRow("n_k = 0") << p << QStringLiteral("n_k");
        p = ok;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 9;
        QTest::newRow("padding > n") << p << QStringLiteral("padding");
        p = ok;
        p.scaleExponent = 1.5;
        QTest::newRow("alpha > 1") << p << QStringLiteral("\u03b1");
        p = ok;
        p.temperature = 0;
        QTest::newRow("temperature 0") << p << QStringLiteral("temperature");
        p = ok;
        p.temperature = std::nan("");
        QTest::newRow("temperature NaN") << p << QStringLiteral("temperature");
        p = ok;
        p.heads = 0;
        QTest::newRow("h = 0") << p << QStringLiteral("h (heads)");
        p = ok;
        p.learnedSink = true;
        p.sinkLogit = 60;
        QTest::newRow("sink logit 60") << p << QStringLiteral("sink logit b must be in [-50, 50]");
        p = ok;
        p.differential = true;
        p.lambda = std::nan("");
        QTest::newRow("lambda NaN") << p << QStringLiteral("differential \u03bb");
        p = ok;
        p.learnedSink = true;
        p.differential = true;
        QTest::newRow("sink and differential") << p << QStringLiteral("do not combine");
        p = ok;
        p.differential = true;
        p.headLambdas = {0.1, 0.2};
        QTest::newRow("lambda count") << p << QStringLiteral("one \u03bb or h=4 of them, got 2");
        p.headLambdas = {0.1, 0.2, 2.5, 0.0};
        QTest::newRow("lambda of head 2")
            << p << QStringLiteral("\u03bb of head 2 must be in [-1, 2]");
        p = ok;
        p.outputGate = true;
        p.gateBias = -51;
        QTest::newRow("gate bias") << p << QStringLiteral("gate bias must be in [-50, 50]");
        p = ok;
        p.latent = true;
        p.latentRopeDim = 5;
        QTest::newRow("odd d_r") << p << QStringLiteral("d_r=5 must be even");
        p.latentRopeDim = 8;
        p.latentDim = 0;
        QTest::newRow("d_c 0") << p << QStringLiteral("latent d_c must be in [1, 4096]");
        p.latentDim = 16;
        p.rope = true;
        QTest::newRow("MLA with RoPE") << p << QStringLiteral("turn RoPE off");
        p.rope = false;
        p.kvHeads = 2;
        QTest::newRow("MLA with GQA") << p << QStringLiteral("g=2 key/value heads");
        p.kvHeads = 0;
        p.kind = AttentionKind::EncoderDecoder;
        QTest::newRow("MLA cross") << p << QStringLiteral("self-attention here");
        p.kind = AttentionKind::EncoderSelf;
        p.differential = true;
        QTest::newRow("MLA differential")
            << p << QStringLiteral("latent attention and differential");
    }
    void validate()
    {
        QFETCH(SessionParameters, params);
        QFETCH(QString, mentions);
        const QString error = params.validate();
        if (mentions.isEmpty()) {
            QVERIFY2(error.isEmpty(), qPrintable(error));
        } else {
            QVERIFY2(error.contains(mentions), qPrintable(error));
            // computeSession reports the same message and never throws.
            const SessionResult r = computeSession(params);
            QVERIFY(!r.ok());
            QCOMPARE(r.error, error);
            QVERIFY(r.weights.empty());
        }
    }

    void jsonRoundTrip_data()
    {
        QTest::addColumn<SessionParameters>("params");
        SessionParameters p;
        QTest::newRow("defaults") << p;
        p.n = 300;
        p.nK = 17;
        p.dModel = 96;
        p.heads = 12;
        p.seed = 18446744073709551615ull; // above 2^53: written as a string
        p.kind = AttentionKind::EncoderDecoder;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 5;
        p.scaleExponent = 0.123456789012345;
        p.temperature = 0.7;
        p.positional = true;
        p.dtype = DType::Float32;
        // One token per query (a session's tokens must match n): two typed ones, then t2 …
        p.setTokens({QStringLiteral("the"), QStringLiteral("cat \u00e9")});
        for (int i = 2; i < p.n; ++i)
            p.tokens.push_back(QStringLiteral("t%1").arg(i).toStdString());
        QTest::newRow("everything set") << p;
        p.generator = RandomSource::Torch;
        QTest::newRow("torch generator") << p;
        p.learnedSink = true;
        p.sinkLogit = -2.5;
        QTest::newRow("learned sink") << p;
        p.learnedSink = false;
        p.differential = true;
        p.lambda = 0.8;
        QTest::newRow("differential") << p;
        p.headLambdas.assign(std::size_t(p.heads), 0.25);
        p.headLambdas[3] = -0.5;
        QTest::newRow("per-head lambda") << p;
        p.outputGate = true;
        p.gateBias = -1.25;
        QTest::newRow("gate") << p;
        p.differential = false;
        p.headLambdas.clear();
        p.kind = AttentionKind::DecoderCausal;
        p.latent = true;
        p.latentDim = 24;
        p.latentRopeDim = 16;
        p.latentAbsorbed = true;
        QTest::newRow("latent") << p;
    }
    void jsonRoundTrip()
    {
        QFETCH(SessionParameters, params);
        const QByteArray text = QJsonDocument(params.toJson()).toJson();
        QString error;
        const auto back
            = SessionParameters::fromJson(QJsonDocument::fromJson(text).object(), &error);
        QVERIFY2(back.has_value(), qPrintable(error));
        QVERIFY(*back == params);
        // Every key written is one the reader knows (unknown ones are reported to the user).
        for (const QString &key : params.toJson().keys())
            QVERIFY2(SessionParameters::jsonKeys().contains(key), qPrintable(key));
    }

    void jsonErrors_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("newer version")
            << QByteArray(R"({"version": 99})") << QStringLiteral("newer");
        QTest::newRow("n not a number") << QByteArray(R"({"n": "eight"})") << QStringLiteral("'n'");
        QTest::newRow("n fractional") << QByteArray(R"({"n": 2.5})") << QStringLiteral("'n'");
        QTest::newRow("n 2^40") << QByteArray(R"({"n": 1099511627776})")
                                << QStringLiteral("'n' = 1099511627776 is out of range");
        QTest::newRow("bad kind") << QByteArray(R"({"kind": "sideways"})")
                                  << QStringLiteral("'kind'");
        QTest::newRow("bad mask") << QByteArray(R"({"mask": "all"})") << QStringLiteral("'mask'");
        QTest::newRow("bad dtype")
            << QByteArray(R"({"dtype": "float16"})") << QStringLiteral("'dtype'");
        QTest::newRow("negative seed") << QByteArray(R"({"seed": -1})") << QStringLiteral("'seed'");
        QTest::newRow("seed text") << QByteArray(R"({"seed": "12x"})") << QStringLiteral("'seed'");
        QTest::newRow("bad generator")
            << QByteArray(R"({"generator": "jax"})") << QStringLiteral("'generator'");
        QTest::newRow("generator not text")
            << QByteArray(R"({"generator": 1})") << QStringLiteral("'generator'");
        QTest::newRow("tokens not strings")
            << QByteArray(R"({"tokens": [1, 2]})") << QStringLiteral("'tokens'");
        QTest::newRow("invalid combination")
            << QByteArray(R"({"d_model": 10, "heads": 4})") << QStringLiteral("does not divide");
        // The CLI's spelling (--positional rope) is not the file's: the message names the key.
        QTest::newRow("positional rope")
            << QByteArray(R"({"positional": "rope"})") << QStringLiteral("\"rope\": true");
    }
    void jsonErrors()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, mentions);
        QString error;
        const auto p = SessionParameters::fromJson(QJsonDocument::fromJson(json).object(), &error);
        QVERIFY(!p.has_value());
        QVERIFY2(error.contains(mentions), qPrintable(error));
    }

    void jsonMissingKeysTakeDefaults()
    {
        QString error;
        const auto p = SessionParameters::fromJson(QJsonObject {{QStringLiteral("n"), 12}}, &error);
        QVERIFY2(p.has_value(), qPrintable(error));
        SessionParameters expected;
        expected.n = 12;
        QVERIFY(*p == expected);
    }

    void caption_data()
    {
        QTest::addColumn<SessionParameters>("params");
        QTest::addColumn<QString>("caption");
        SessionParameters p;
        p.mask = MaskChoice::Causal;
        QTest::newRow("header example")
            << p
            << QStringLiteral("n=8, d_model=64, h=4, d_k=16, scale=1/\u221ad_k, mask=causal, "
                              "PE=off, float64, seed=0");
        p = SessionParameters();
        p.kind = AttentionKind::EncoderDecoder;
        p.mask = MaskChoice::KeyPadding;
        p.scaleExponent = 0.0;
        p.positional = true;
        p.dtype = DType::Float32;
        p.seed = 7;
        QTest::newRow("cross, padding, unscaled")
            << p
            << QStringLiteral("encoder\u2013decoder, n_q=8, n_k=10, d_model=64, h=4, d_k=16, "
                              "scale=1 (unscaled), mask=padding(2), PE=on, float32, seed=7");
        p = SessionParameters();
        p.kind = AttentionKind::DecoderCausal;
        p.mask = MaskChoice::KeyPadding;
        p.scaleExponent = 0.25;
        p.temperature = 2;
        QTest::newRow("decoder, alpha, tau")
            << p
            << QStringLiteral("decoder, n=8, d_model=64, h=4, d_k=16, scale=d_k^\u22120.25 / "
                              "\u03c4 (\u03c4=2), mask=causal+padding(2), PE=off, float64, seed=0");
        p = SessionParameters();
        p.generator = RandomSource::Torch;
        QTest::newRow("torch generator")
            << p
            << QStringLiteral("n=8, d_model=64, h=4, d_k=16, scale=1/\u221ad_k, mask=none, "
                              "PE=off, float64, seed=0, torch");
    }
    void caption()
    {
        QFETCH(SessionParameters, params);
        QFETCH(QString, caption);
        QCOMPARE(params.caption(), caption);
    }

    // One wording of the scale formula for captions, the status bar, the controls and A/B.
    void scaleFormula_data()
    {
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("tau");
        QTest::addColumn<int>("dK");
        QTest::addColumn<QString>("text");
        QTest::newRow("paper") << 0.5 << 1.0 << 0 << QStringLiteral("1/\u221ad_k");
        QTest::newRow("paper, d_k 64") << 0.5 << 1.0 << 64 << QStringLiteral("1/\u221a64");
        QTest::newRow("unscaled") << 0.0 << 1.0 << 0 << QStringLiteral("1 (unscaled)");
        QTest::newRow("unscaled, d_k 64") << 0.0 << 1.0 << 64 << QStringLiteral("1 (unscaled)");
        QTest::newRow("alpha 0.25") << 0.25 << 1.0 << 0 << QStringLiteral("d_k^\u22120.25");
        QTest::newRow("alpha 1, d_k 16") << 1.0 << 1.0 << 16 << QStringLiteral("16^\u22121");
        QTest::newRow("tau 2") << 0.5 << 2.0 << 0
                               << QStringLiteral("1/\u221ad_k / \u03c4 (\u03c4=2)");
        QTest::newRow("unscaled, tau 0.01")
            << 0.0 << 0.01 << 8 << QStringLiteral("1 (unscaled) / \u03c4 (\u03c4=0.01)");
    }
    void scaleFormula()
    {
        QFETCH(double, alpha);
        QFETCH(double, tau);
        QFETCH(int, dK);
        QFETCH(QString, text);
        QCOMPARE(attn::scaleFormula(alpha, tau, dK), text);
    }

    // ---- RoPE, ALiBi, grouped-query heads, sliding window and sinks ----

    void modernSchemesMatchCore_data()
    {
        QTest::addColumn<QString>("scheme"); // none, rope-half, rope-interleaved, alibi
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("sinks");
        QTest::addColumn<bool>("causal");
        QTest::newRow("rope half") << "rope-half" << 0 << 0 << 0 << false;
        QTest::newRow("rope interleaved causal") << "rope-interleaved" << 0 << 0 << 0 << true;
        QTest::newRow("alibi causal") << "alibi" << 0 << 0 << 0 << true;
        QTest::newRow("alibi bidirectional g=2") << "alibi" << 2 << 0 << 0 << false;
        QTest::newRow("g=1") << "none" << 1 << 0 << 0 << false;
        QTest::newRow("window 3 + 1 sink") << "none" << 0 << 3 << 1 << false;
        QTest::newRow("rope g=2 window 4 + 2 sinks") << "rope-half" << 2 << 4 << 2 << false;
    }
    void modernSchemesMatchCore()
    {
        // The session's fused computation against core's groupedQueryAttention on the same
        // seeded projections: q = X W_Qᵀ + b_Q, the h heads' k mean-pooled into g heads.
        QFETCH(QString, scheme);
        QFETCH(int, kvHeads);
        QFETCH(int, window);
        QFETCH(int, sinks);
        QFETCH(bool, causal);
        SessionParameters p;
        p.n = 11;
        p.dModel = 32;
        p.heads = 4;
        p.seed = 7;
        p.rope = scheme.startsWith(QLatin1String("rope"));
        p.ropeConvention = scheme == QLatin1String("rope-interleaved") ? RopeConvention::Interleaved
                                                                       : RopeConvention::Half;
        p.alibi = scheme == QLatin1String("alibi");
        p.kvHeads = kvHeads;
        p.window = window;
        p.sinks = sinks;
        p.mask = causal ? MaskChoice::Causal : MaskChoice::None;
        QVERIFY2(p.validate().isEmpty(), qPrintable(p.validate()));
        const SessionResult r = computeSession(p);
        QVERIFY2(r.ok(), qPrintable(r.error));

        Generator rng(p.seed);
        MultiheadAttention<double> layer(p.dModel, p.heads);
        layer.initXavier(rng);
        const MatrixD x = rng.standardNormal(p.n, p.dModel);
        const Index d = p.dModel, h = p.heads, g = p.keyValueHeads(), dK = p.dK();
        const MatrixD &w = layer.inProjWeight();
        const MatrixD q = (x * w.topRows(d).transpose()).rowwise()
            + layer.inProjBias().segment(0, d).transpose();
        const MatrixD k = (x * w.middleRows(d, d).transpose()).rowwise()
            + layer.inProjBias().segment(d, d).transpose();
        MatrixD kg = MatrixD::Zero(p.n, g * dK);
        for (Index i = 0; i < h; ++i)
            kg.middleCols((i / (h / g)) * dK, dK) += k.middleCols(i * dK, dK);
        kg /= double(h / g);
        AttentionMask mask;
        if (window > 0)
            mask = AttentionMask::slidingWindow(p.n, p.n, window, sinks);
        else if (causal)
            mask = AttentionMask::causal(p.n, p.n);
        PositionOptions pos;
        pos.scheme = p.positionalScheme();
        pos.ropeConvention = p.ropeConvention;
        const GroupedAttentionResult<double> ref
            = groupedQueryAttention<double>(q, kg, kg, h, g, mask, {}, pos);
        QCOMPARE(r.weights.size(), std::size_t(h));
        for (std::size_t i = 0; i < std::size_t(h); ++i) {
            ATTN_COMPARE_CLOSE(r.scores[i], ref.scores[i], 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(r.weights[i], ref.weights[i], 1e-12, 0.0);
        }
        if (p.alibi)
            QCOMPARE(r.alibiSlopes, ref.alibiSlopes);
        // Window cells are MaskWindow (own state), sinks stay visible.
        if (window > 0) {
            const Index last = p.n - 1;
            QCOMPARE(r.maskState(last, last - window), std::uint8_t(MaskWindow));
            for (Index j = 0; j < sinks; ++j)
                QCOMPARE(r.maskState(last, j), std::uint8_t(MaskAllowed));
        }
        // The weight mass on the sinks per head over the rows past the window, i >= w + s:
        // Σ_{i ≥ w+s} Σ_{j<s} w_ij / (n − w − s) of the reference.
        if (window > 0 && sinks > 0) {
            QCOMPARE(r.sinkMass.size(), std::size_t(h));
            const Index far = p.n - (window + sinks);
            QVERIFY(far > 0);
            for (std::size_t i = 0; i < std::size_t(h); ++i) {
                const double expected
                    = ref.weights[i].bottomRows(far).leftCols(sinks).sum() / double(far);
                QVERIFY2(std::abs(r.sinkMass[i] - expected) <= 1e-12,
                         qPrintable(QString::number(r.sinkMass[i] - expected)));
            }
        } else {
            QVERIFY(r.sinkMass.empty());
        }
    }

    void modernParametersRoundTrip()
    {
        SessionParameters p;
        p.rope = true;
        p.ropeConvention = RopeConvention::Interleaved;
        p.ropeBase = 500;
        p.kvHeads = 2;
        p.window = 5;
        p.sinks = 1;
        QVERIFY(p.validate().isEmpty());
        QString error;
        const auto back = SessionParameters::fromJson(p.toJson(), &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(*back, p);
        QVERIFY(p.caption().contains(QLatin1String("RoPE interleaved base 500")));
        QVERIFY(p.caption().contains(QLatin1String("g=2")));
        QVERIFY(p.caption().contains(QLatin1String("window=5+1 sink,")));
        // Defaults are not written: files without the new keys stay as they were.
        const QJsonObject plain = SessionParameters().toJson();
        for (const char *key :
             {"rope", "rope_convention", "rope_base", "alibi", "kv_heads", "window", "sinks"})
            QVERIFY2(!plain.contains(QLatin1String(key)), key);
        // Refused combinations name the problem.
        SessionParameters bad;
        bad.rope = bad.alibi = true;
        QVERIFY(bad.validate().contains(QLatin1String("one position scheme")));
        bad = SessionParameters();
        bad.kvHeads = 3;
        QVERIFY(bad.validate().contains(QLatin1String("must divide h=4")));
        bad = SessionParameters();
        bad.sinks = 2;
        QVERIFY(bad.validate().contains(QLatin1String("sliding window")));
        bad = SessionParameters();
        bad.rope = true;
        bad.dModel = 12;
        bad.heads = 4; // d_k = 3
        QVERIFY(bad.validate().contains(QLatin1String("must be even")));
    }

    // ---- computeSession ----

    // The NumPy reference follows the documented draw order independently of the C++ code.
    void matchesNumpy_data()
    {
        QTest::addColumn<int>("index");
        QTest::addColumn<bool>("float32");
        for (int k = 0; k < m_cases.size(); ++k) {
            const QString name = m_cases.at(k).toObject().value(QStringLiteral("name")).toString();
            QTest::addRow("%s float64", qPrintable(name)) << k << false;
            QTest::addRow("%s float32", qPrintable(name)) << k << true;
        }
    }
    void matchesNumpy()
    {
        QFETCH(int, index);
        QFETCH(bool, float32);
        const QJsonObject c = m_cases.at(index).toObject();
        QString error;
        auto params
            = SessionParameters::fromJson(c.value(QStringLiteral("params")).toObject(), &error);
        QVERIFY2(params.has_value(), qPrintable(error));
        if (float32)
            params->dtype = DType::Float32;
        const SessionResult r = computeSession(*params);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const QJsonArray weights = c.value(QStringLiteral("weights")).toArray();
        const QJsonArray scores = c.value(QStringLiteral("scores")).toArray();
        QCOMPARE(r.headCount(), int(weights.size()));
        const double tol = float32 ? 1e-5 : 1e-12;
        MatrixD mean = MatrixD::Zero(r.queryCount(), r.keyCount());
        for (int h = 0; h < r.headCount(); ++h) {
            const MatrixD w = matrixFromJson(weights.at(h).toArray());
            const MatrixD s = matrixFromJson(scores.at(h).toArray());
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(h)], w, tol, tol);
            ATTN_COMPARE_CLOSE(r.scores[std::size_t(h)], s, tol, tol);
            mean += w / r.headCount();
        }
        ATTN_COMPARE_CLOSE(r.weightsMean, mean, tol, tol);
    }

    void matchesTorch_data()
    {
        QTest::addColumn<int>("index");
        for (int k = 0; k < m_torchCases.size(); ++k) {
            const QString name
                = m_torchCases.at(k).toObject().value(QStringLiteral("name")).toString();
            QTest::addRow("%s", qPrintable(name)) << k;
        }
    }
    void matchesTorch()
    {
        // Generator torch: the weights torch.nn.MultiheadAttention itself returns after
        // torch.manual_seed (tests/reference/make_session_torch_fixtures.py).
        QFETCH(int, index);
        const QJsonObject c = m_torchCases.at(index).toObject();
        QString error;
        const auto params
            = SessionParameters::fromJson(c.value(QStringLiteral("params")).toObject(), &error);
        QVERIFY2(params.has_value(), qPrintable(error));
        QCOMPARE(params->generator, RandomSource::Torch);
        const SessionResult r = computeSession(*params);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const QJsonArray weights = c.value(QStringLiteral("weights")).toArray();
        const QJsonArray scores = c.value(QStringLiteral("scores")).toArray();
        QCOMPARE(r.headCount(), int(weights.size()));
        const double tol = params->dtype == DType::Float32 ? 1e-5 : 1e-12;
        for (int h = 0; h < r.headCount(); ++h) {
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(h)], matrixFromJson(weights.at(h).toArray()),
                               tol, tol);
            ATTN_COMPARE_CLOSE(r.scores[std::size_t(h)], matrixFromJson(scores.at(h).toArray()),
                               tol, tol);
        }
        // NumPy's streams give another layer and other inputs.
        SessionParameters numpy = *params;
        numpy.generator = RandomSource::NumPy;
        const SessionResult other = computeSession(numpy);
        QVERIFY(other.ok());
        QVERIFY((other.scores[0] - r.scores[0]).cwiseAbs().maxCoeff() > 1e-3);
    }

    void invariants_data()
    {
        QTest::addColumn<SessionParameters>("params");
        for (DType t : {DType::Float64, DType::Float32})
            for (AttentionKind k : {AttentionKind::EncoderSelf, AttentionKind::DecoderCausal,
                                    AttentionKind::EncoderDecoder})
                for (MaskChoice m : {MaskChoice::None, MaskChoice::Causal, MaskChoice::KeyPadding})
                    QTest::addRow("%s, mask %s, %s", qPrintable(attentionKindId(k)),
                                  qPrintable(maskChoiceId(m)), qPrintable(dtypeId(t)))
                        << makeParams(k, m, t);
    }
    // Rows sum to 1, causal upper triangle exactly 0, padding keys exactly 0, metrics per head.
    void invariants()
    {
        QFETCH(SessionParameters, params);
        const SessionResult r = computeSession(params);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const double tol = params.dtype == DType::Float32 ? 1e-5 : 1e-12;
        const Index nQ = params.queryCount(), nK = params.keyCount();
        QCOMPARE(r.queryCount(), nQ);
        QCOMPARE(r.keyCount(), nK);
        QCOMPARE(r.headCount(), params.heads);
        QCOMPARE(int(r.metrics.size()), params.heads);
        QCOMPARE(r.maskState.rows(), nQ);
        QCOMPARE(r.maskState.cols(), nK);
        QVERIFY(r.worstRowSumError <= tol);
        QVERIFY(!r.nonFinite.found);
        QCOMPARE(r.scale,
                 std::pow(double(params.dK()), -params.scaleExponent) / params.temperature);
        for (int h = 0; h < params.heads; ++h) {
            const MatrixD &w = r.weights[std::size_t(h)];
            for (Index i = 0; i < nQ; ++i) {
                QVERIFY(!r.fullyMasked[std::size_t(h)][std::size_t(i)]);
                QVERIFY2(std::abs(w.row(i).sum() - 1.0) <= tol,
                         qPrintable(QStringLiteral("head %1 row %2 sums to %3")
                                        .arg(h)
                                        .arg(i)
                                        .arg(w.row(i).sum(), 0, 'g', 17)));
                for (Index j = 0; j < nK; ++j) {
                    const bool causal = params.causalMasked() && j > i;
                    const bool padding
                        = params.mask == MaskChoice::KeyPadding && j >= nK - params.paddingCount;
                    QCOMPARE(bool(r.maskState(i, j) & MaskCausal), causal);
                    QCOMPARE(bool(r.maskState(i, j) & MaskPadding), padding);
                    if (causal || padding) {
                        QCOMPARE(w(i, j), 0.0); // exactly
                        QVERIFY(std::isinf(r.scaledScores[std::size_t(h)](i, j)));
                    } else {
                        QVERIFY(w(i, j) > 0.0);
                    }
                }
            }
            QCOMPARE(r.metrics[std::size_t(h)].maxWeight.size(), nQ);
        }
    }

    // A learned sink keeps each row plus its sink mass at 1 (a fully masked row all sink) and
    // leaves the scores alone; differential attention keeps A₁ (the weights without it, bit for
    // bit) and A₂, and its rows sum to 1 − λ, some weights negative.
    void variantInvariants()
    {
        SessionParameters p;
        p.n = 9;
        p.dModel = 16;
        p.heads = 4;
        p.kind = AttentionKind::DecoderCausal;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 9; // every key padding: fully masked rows
        const SessionResult plain = computeSession(p);
        QVERIFY2(plain.ok(), qPrintable(plain.error));
        SessionParameters sink = p;
        sink.learnedSink = true;
        sink.sinkLogit = 0.75;
        const SessionResult s = computeSession(sink);
        QVERIFY2(s.ok(), qPrintable(s.error));
        QCOMPARE(int(s.learnedSinkMass.size()), p.heads);
        for (int h = 0; h < p.heads; ++h) {
            const VectorD total
                = s.weights[std::size_t(h)].rowwise().sum() + s.learnedSinkMass[std::size_t(h)];
            QVERIFY(((total.array() - 1.0).abs() <= 1e-12).all());
            QVERIFY(s.learnedSinkMass[std::size_t(h)].isOnes()); // every row fully masked
            QVERIFY(std::isnan(s.meanRowSum.at(std::size_t(h)))); // no row left to average
            QCOMPARE(s.scores[std::size_t(h)], plain.scores[std::size_t(h)]);
        }
        p.mask = MaskChoice::None;
        const SessionResult a1 = computeSession(p);
        SessionParameters diff = p;
        diff.differential = true;
        diff.lambda = 0.6;
        const SessionResult d = computeSession(diff);
        QVERIFY2(d.ok(), qPrintable(d.error));
        QVERIFY(d.signedWeights);
        bool negative = false;
        for (int h = 0; h < p.heads; ++h) {
            const std::size_t u = std::size_t(h);
            QCOMPARE(d.firstWeights[u], a1.weights[u]);
            const VectorD sums = d.weights[u].rowwise().sum();
            QVERIFY(((sums.array() - 0.4).abs() <= 1e-12).all());
            QVERIFY(std::abs(d.meanRowSum.at(u) - 0.4) <= 1e-12);
            ATTN_COMPARE_CLOSE(d.weights[u], d.firstWeights[u] - 0.6 * d.secondWeights[u], 0.0,
                               0.0);
            negative = negative || (d.weights[u].array() < 0.0).any();
        }
        QVERIFY(negative);
    }

    // The head-wise gate scales each query row of the plain weights by σ(g) in (0, 1); per-head
    // λ gives each head its own row sum 1 − λ_u; MLA's absorbed computation gives the
    // decompressed weights, with the scale (d_k + d_r)^(−α).
    void gateLambdaLatentInvariants()
    {
        SessionParameters p;
        p.n = 9;
        p.dModel = 16;
        p.heads = 4;
        p.mask = MaskChoice::Causal;
        const SessionResult plain = computeSession(p);
        QVERIFY2(plain.ok(), qPrintable(plain.error));
        SessionParameters gated = p;
        gated.outputGate = true;
        gated.gateBias = 0.3;
        const SessionResult g = computeSession(gated);
        QVERIFY2(g.ok(), qPrintable(g.error));
        QCOMPARE(int(g.gate.size()), p.heads);
        for (std::size_t u = 0; u < std::size_t(p.heads); ++u) {
            const VectorD &gate = g.gate[u];
            QCOMPARE(gate.size(), Index(p.n));
            QVERIFY((gate.array() > 0.0).all() && (gate.array() < 1.0).all());
            QVERIFY(gate.maxCoeff() - gate.minCoeff() > 1e-3); // a gate per token, not one
            const MatrixD expected = gate.asDiagonal() * plain.weights[u];
            QCOMPARE(g.weights[u], expected);
            const VectorD sums = g.weights[u].rowwise().sum();
            QVERIFY(((sums - gate).array().abs() <= 1e-12).all());
            QVERIFY(std::abs(g.meanRowSum.at(u) - gate.mean()) <= 1e-12);
            QCOMPARE(g.metrics[u].entropy, plain.metrics[u].entropy); // of the softmax rows
        }
        gated.gateBias = 50; // the gate open: σ → 1
        const SessionResult open = computeSession(gated);
        QVERIFY2(open.ok(), qPrintable(open.error));
        for (std::size_t u = 0; u < std::size_t(p.heads); ++u)
            ATTN_COMPARE_CLOSE(open.weights[u], plain.weights[u], 1e-12, 0.0);

        SessionParameters diff = p;
        diff.differential = true;
        diff.headLambdas = {0.1, 0.5, -0.25, 1.0};
        const SessionResult d = computeSession(diff);
        QVERIFY2(d.ok(), qPrintable(d.error));
        QCOMPARE(d.lambda, diff.headLambdas);
        for (std::size_t u = 0; u < std::size_t(p.heads); ++u) {
            const VectorD sums = d.weights[u].rowwise().sum();
            QVERIFY(((sums.array() - (1.0 - diff.headLambdas[u])).abs() <= 1e-12).all());
        }

        SessionParameters mla = p;
        mla.latent = true;
        mla.latentDim = 6;
        mla.latentRopeDim = 4;
        const SessionResult dec = computeSession(mla);
        QVERIFY2(dec.ok(), qPrintable(dec.error));
        mla.latentAbsorbed = true;
        const SessionResult abs = computeSession(mla);
        QVERIFY2(abs.ok(), qPrintable(abs.error));
        QCOMPARE(dec.scale, 1.0 / std::sqrt(4.0 + 4.0)); // d_k = 4, d_r = 4
        for (std::size_t u = 0; u < std::size_t(p.heads); ++u) {
            ATTN_COMPARE_CLOSE(abs.weights[u], dec.weights[u], 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(abs.scores[u], dec.scores[u], 1e-12, 1e-12);
            QVERIFY(!dec.weights[u].isApprox(plain.weights[u], 1e-3)); // not the MHA layer
            const VectorD sums = dec.weights[u].rowwise().sum();
            QVERIFY(((sums.array() - 1.0).abs() <= 1e-12).all());
            QCOMPARE(dec.weights[u](0, 1), 0.0); // causal
        }
        // The gate is drawn last: turned on over MLA it scales MLA's own weights, unchanged.
        mla.outputGate = true;
        mla.gateBias = -1;
        const SessionResult gatedMla = computeSession(mla);
        QVERIFY2(gatedMla.ok(), qPrintable(gatedMla.error));
        for (std::size_t u = 0; u < std::size_t(p.heads); ++u) {
            QCOMPARE(gatedMla.scores[u], abs.scores[u]);
            QCOMPARE(gatedMla.weights[u], MatrixD(gatedMla.gate[u].asDiagonal() * abs.weights[u]));
        }
    }

    void fullyMaskedRows()
    {
        // Decoder with every key padded: every row fully masked → zeros and flags, never NaN.
        SessionParameters p
            = makeParams(AttentionKind::DecoderCausal, MaskChoice::KeyPadding, DType::Float64, 4);
        p.paddingCount = 4;
        const SessionResult r = computeSession(p);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(!r.nonFinite.found);
        for (int h = 0; h < p.heads; ++h) {
            QCOMPARE(r.weights[std::size_t(h)], MatrixD(MatrixD::Zero(4, 4)));
            for (Index i = 0; i < 4; ++i)
                QCOMPARE(r.fullyMasked[std::size_t(h)][std::size_t(i)], std::uint8_t(1));
        }
        QCOMPARE(r.worstRowSumError, 0.0);
    }

    void deterministic_data() { invariants_data(); }
    // The window's numbers against an independent computation: MultiheadAttention<T>::forward
    // (its own projections, per-head scaledDotProductAttention, softmaxRowsInPlace) on the same
    // seeded inputs gives the same weights, raw and scaled scores bit for bit, and the mean over
    // heads within rounding (forward sums in T, head order, then divides). Another seed changes
    // the weights.
    void deterministic()
    {
        QFETCH(SessionParameters, params);
        const SessionResult a = computeSession(params);
        QVERIFY2(a.ok(), qPrintable(a.error));
        const EngineParameters e = engineParameters(params);
        AttentionOptions options;
        options.scaleExponent = params.scaleExponent;
        options.temperature = params.temperature;
        auto check = [&](auto zero) {
            using T = decltype(zero);
            const SessionInputs<T> in = sessionInputs<T>(e);
            const Matrix<T> x = in.query.template cast<T>();
            const Matrix<T> enc
                = in.encoder.size() > 0 ? Matrix<T>(in.encoder.template cast<T>()) : x;
            const MultiheadResult<T> m = in.layer.forward(x, enc, enc, e.attentionMask(), options);
            QCOMPARE(a.headCount(), int(m.weights.size()));
            for (std::size_t h = 0; h < m.weights.size(); ++h) {
                QCOMPARE(a.weights[h], MatrixD(m.weights[h].template cast<double>()));
                QCOMPARE(a.scores[h], MatrixD(m.scores[h].template cast<double>()));
                QCOMPARE(a.scaledScores[h], MatrixD(m.scaledScores[h].template cast<double>()));
            }
            ATTN_COMPARE_CLOSE(a.weightsMean, m.weightsMean.template cast<double>().eval(),
                               (std::is_same_v<T, float> ? 1e-6 : 1e-15), 0.0);
        };
        if (params.dtype == DType::Float32)
            check(0.0f);
        else
            check(0.0);
        SessionParameters other = params;
        other.seed = 4;
        QVERIFY(computeSession(other).weights[1] != a.weights[1]);
    }

    void cancelled()
    {
        const SessionResult r = computeSession(
            makeParams(AttentionKind::EncoderSelf, MaskChoice::None, DType::Float64),
            CancelToken([] { return true; }));
        QCOMPARE(r.error, QStringLiteral("cancelled"));
        QVERIFY(r.weights.empty());
    }

    void memoryBudget()
    {
        SessionParameters p
            = makeParams(AttentionKind::EncoderSelf, MaskChoice::None, DType::Float64);
        // ((3·h + 1)·8 + 1) bytes per cell.
        const std::size_t cells = std::size_t(p.queryCount()) * std::size_t(p.keyCount());
        QCOMPARE(sessionResultBytes(p), ((3 * std::size_t(p.heads) + 1) * 8 + 1) * cells);
        SessionParameters big = p;
        big.n = 4096;
        big.heads = 8;
        big.dModel = 512;
        QCOMPARE(sessionResultBytes(big), std::size_t(25 * 8 + 1) * 4096 * 4096);
        QVERIFY(sessionMemoryBudget() >= (std::size_t(256) << 20));

        setSessionMemoryBudget(sessionResultBytes(p) - 1);
        const SessionResult refused = computeSession(p);
        setSessionMemoryBudget(0);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error.contains(QLatin1String("budget"))
                     && refused.error.contains(QStringLiteral("h = %1").arg(p.heads)),
                 qPrintable(refused.error));
        QVERIFY(refused.weights.empty());
        setSessionMemoryBudget(sessionResultBytes(p));
        const SessionResult fits = computeSession(p);
        setSessionMemoryBudget(0);
        QVERIFY2(fits.ok(), qPrintable(fits.error));
    }

    // ---- AttentionSession ----
    // ---- AttentionSession ----

    void oneChangeOneResult()
    {
        AttentionSession session;
        QSignalSpy results(&session, &AttentionSession::resultChanged);
        QSignalSpy params(&session, &AttentionSession::parametersChanged);
        QSignalSpy busy(&session, &AttentionSession::busyChanged);
        QVERIFY(!session.result());
        SessionParameters p = session.parameters();
        p.n = 12;
        p.mask = MaskChoice::Causal;
        session.setParameters(p);
        QCOMPARE(params.count(), 1);
        QVERIFY(session.isBusy());
        QTRY_COMPARE_WITH_TIMEOUT(results.count(), 1, attn::test::kWorkTimeoutMs);
        QTest::qWait(100);
        QCOMPARE(results.count(), 1); // exactly one
        const auto result = results.at(0).at(0).value<std::shared_ptr<const SessionResult>>();
        QVERIFY(result);
        QVERIFY(result->params == p);
        QVERIFY(session.result() == result);
        QVERIFY(!session.isBusy());
        QCOMPARE(busy.count(), 2);
        QCOMPARE(busy.at(0).at(0).toBool(), true);
        QCOMPARE(busy.at(1).at(0).toBool(), false);

        // The same parameters again: no computation.
        session.setParameters(p);
        QTest::qWait(100);
        QCOMPARE(results.count(), 1);
        QCOMPARE(params.count(), 1);

        // recompute() gives one more result with the same numbers.
        session.recompute();
        QTRY_COMPARE_WITH_TIMEOUT(results.count(), 2, attn::test::kWorkTimeoutMs);
        QCOMPARE(session.result()->weights[0], result->weights[0]);
        QVERIFY(session.result()->requestId > result->requestId);
    }

    // A window that pushes its (default) parameters first must still get a first result.
    void firstSetParametersComputes()
    {
        AttentionSession session;
        QSignalSpy results(&session, &AttentionSession::resultChanged);
        QSignalSpy params(&session, &AttentionSession::parametersChanged);
        session.setParameters(session.parameters());
        QTRY_COMPARE_WITH_TIMEOUT(results.count(), 1, attn::test::kWorkTimeoutMs);
        QCOMPARE(params.count(), 0); // they did not change
        session.setParameters(session.parameters());
        QTest::qWait(100);
        QCOMPARE(results.count(), 1);
    }

    void rapidChangesNewestWins_data()
    {
        QTest::addColumn<bool>("processEventsBetween");
        QTest::newRow("burst") << false;
        QTest::newRow("interleaved with the event loop") << true;
    }
    void rapidChangesNewestWins()
    {
        QFETCH(bool, processEventsBetween);
        AttentionSession session;
        QList<std::shared_ptr<const SessionResult>> delivered;
        connect(&session, &AttentionSession::resultChanged, this,
                [&](std::shared_ptr<const SessionResult> r) { delivered.append(r); });
        QSignalSpy failed(&session, &AttentionSession::computeFailed);
        SessionParameters p = session.parameters();
        p.n = 192; // a few milliseconds per computation, so requests overlap
        p.dModel = 64;
        p.heads = 8;
        for (int k = 0; k < 50; ++k) {
            p.seed = quint64(k + 1);
            p.mask = k % 2 ? MaskChoice::Causal : MaskChoice::None;
            session.setParameters(p);
            if (processEventsBetween) {
                QTest::qWait(k % 5 == 0 ? 15 : 0);
            }
        }
        QTRY_VERIFY_WITH_TIMEOUT(!session.isBusy(), attn::test::kWorkTimeoutMs);
        QTest::qWait(200); // nothing else may arrive
        QCOMPARE(failed.count(), 0);
        QVERIFY(!delivered.isEmpty());
        QVERIFY(delivered.size() <= 50);
        // Results arrive in request order, and the last one is the last request.
        for (int k = 1; k < delivered.size(); ++k)
            QVERIFY(delivered[k]->requestId > delivered[k - 1]->requestId);
        QVERIFY(delivered.last()->params == p);
        QVERIFY(session.result()->params == p);
        // The delivered numbers are those of its parameters.
        const SessionResult direct = computeSession(p);
        QCOMPARE(session.result()->weights[3], direct.weights[3]);
        if (!processEventsBetween)
            QCOMPARE(delivered.size(), 1); // a burst without the event loop: only the newest
    }

    void invalidParametersKeepResult()
    {
        AttentionSession session;
        QSignalSpy results(&session, &AttentionSession::resultChanged);
        QSignalSpy failed(&session, &AttentionSession::computeFailed);
        session.recompute();
        QTRY_COMPARE_WITH_TIMEOUT(results.count(), 1, attn::test::kWorkTimeoutMs);
        const SessionParameters good = session.parameters();
        SessionParameters bad = good;
        bad.heads = 5; // does not divide d_model = 64
        session.setParameters(bad);
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("d_model=64")));
        QVERIFY(session.parameters() == good);
        QTest::qWait(100);
        QCOMPARE(results.count(), 1);
        QVERIFY(!session.isBusy());
    }

    void destroyWhileBusy()
    {
        int delivered = 0;
        auto *session = new AttentionSession;
        connect(session, &AttentionSession::resultChanged, this, [&delivered] { ++delivered; });
        SessionParameters p = session->parameters();
        p.n = 1024;
        p.dModel = 256;
        p.heads = 8;
        session->setParameters(p);
        QVERIFY(session->isBusy());
        delete session; // aborts between heads and joins the worker (a hang fails by timeout)
        QTest::qWait(100);
        QCOMPARE(delivered, 0); // the abandoned computation is never delivered
    }
};

QTEST_MAIN(TestSession)
#include "tst_session.moc"
