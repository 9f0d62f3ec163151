// The experiments E1–E20: registry and parameter checking, the headline property of each one
// (what docs/experiments.md says it shows), E1–E3 equal to the NumPy scripts' output digit for
// digit, cancellation and progress.

#include "testutil.h"

#include "core/analysis/metrics.h"
#include "core/experiments/experiments.h"
#include "core/experiments/livecharts.h"

#include <QFile>
#include <QTest>

#include <tuple>

#include <atomic>
#include <cmath>
#include <set>

using namespace attn;

namespace {

ExperimentResult run(const char *id, const ExperimentParams &params = {})
{
    return runExperiment(id, params);
}

std::string readFixture(const QString &name)
{
    QFile file(QStringLiteral(ATTN_FIXTURE_DIR "/experiments/") + name);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll().toStdString();
}

/// First differing cell of two CSV texts, for a readable failure message.
QString firstCsvDifference(const std::string &actual, const std::string &expected)
{
    const QList<QByteArray> a = QByteArray::fromStdString(actual).split('\n');
    const QList<QByteArray> e = QByteArray::fromStdString(expected).split('\n');
    for (qsizetype i = 0; i < std::max(a.size(), e.size()); ++i) {
        const QList<QByteArray> ca = a.value(i).split(','), ce = e.value(i).split(',');
        for (qsizetype j = 0; j < std::max(ca.size(), ce.size()); ++j) {
            if (ca.value(j) != ce.value(j)) {
                return QStringLiteral("line %1, column %2 ('%3'): app '%4', NumPy '%5'")
                    .arg(i + 1)
                    .arg(j + 1)
                    .arg(QString::fromLatin1(e.value(0).split(',').value(j)),
                         QString::fromLatin1(ca.value(j)), QString::fromLatin1(ce.value(j)));
            }
        }
    }
    return QStringLiteral("texts differ");
}

double column(const ExperimentResult &r, std::size_t row, const char *name)
{
    return r.table.number(row, name);
}

std::string textCell(const ExperimentResult &r, std::size_t row, const char *name)
{
    return std::get<std::string>(r.table.cell(row, r.table.columnIndex(name)));
}

/// Small, fast parameters for every experiment (the defaults where they are already fast).
ExperimentParams fastParams(const std::string &id)
{
    if (id == "E2")
        return {{"trials", "300"}, {"d_k", "4,64"}};
    if (id == "E3")
        return {{"keys", "500"}};
    if (id == "E8")
        return {{"n", "16,32,64"}, {"repeats", "2"}};
    if (id == "E9")
        return {{"n", "32"}, {"d", "16"}, {"repeats", "2"}};
    if (id == "E13")
        return {{"d_k", "8,16"}, {"steps", "12"}};
    if (id == "E17")
        return {{"steps", "20"}, {"eval_every", "10"}, {"vocab", "16"}, {"d_model", "16"},
                {"repeat", "6"}, {"min_repeat", "4"},  {"batch", "4"},  {"held_out", "4"}};
    return {};
}

} // namespace

class TestExperiments : public QObject
{
    Q_OBJECT

private slots:
    void registryListsAll();
    void everyExperimentRuns_data();
    void everyExperimentRuns();
    void matchesNumpyDigits_data();
    void matchesNumpyDigits();
    void badParameters_data();
    void badParameters();
    void matrixMemoryRefusedBeforeRunning();
    void e15SaysWhySinkMassIsNaN();
    void cancellation_data();
    void cancellation();

    void e1RowSumsAndCore();
    void e2Headline();
    void e2EntryPointEqualsExperiment();
    void e2JacobianMatchesExplicitMatrix();
    void e3Headline();
    void e3EffectiveTermsMatchMetrics();
    void e4ParameterCount_data();
    void e4ParameterCount();
    void e4HeadMatrices();
    void e5Permutation();
    void e6Rotation();
    void e7CausalMask();
    void e8ShapeAndConsistency();
    void e8RefusesOverBudget();
    void e9LoopEqualsMatrix();
    void e10MaskConvention();
    void e11FillValues();
    void e12Pitfalls();
    void e13ScaleLearning();
    void e14RopeOffsets();
    void e15HeadReach();
    void e16SharedKeys();
    void e17InductionHeadForms();
    void fitPowerLaw();
    void fitLargeN();
    void scalingSweepCustomScale();
};

void TestExperiments::registryListsAll()
{
    // E1–E12 follow Vaswani et al. 2017, E13 trains a layer; E14–E16 the later schemes (RoPE,
    // ALiBi, GQA); E17 trains a two-layer attention-only transformer (Olsson et al. 2022);
    // E18–E20 the variants of 2025 models (learned sinks, differential and latent attention).
    const std::vector<ExperimentInfo> &list = experimentList();
    const QStringList expectedIds {"E1",  "E2",  "E3",  "E4",  "E5",  "E6",  "E7",
                                   "E8",  "E9",  "E10", "E11", "E12", "E13", "E14",
                                   "E15", "E16", "E17", "E18", "E19", "E20"};
    QCOMPARE(list.size(), std::size_t(expectedIds.size()));
    for (std::size_t i = 0; i < list.size(); ++i) {
        const ExperimentInfo &info = list[i];
        QCOMPARE(QString::fromStdString(info.id), expectedIds[int(i)]);
        QVERIFY(!info.title.empty());
        QVERIFY(!info.note.empty());
        if (i < 12)
            QVERIFY(info.paperSection.find("Vaswani") != std::string::npos);
        else
            QVERIFY(info.paperSection.find(" 20") != std::string::npos); // "Author et al. 20xx"
        QVERIFY(!info.columns.empty());
        std::set<std::string> names;
        for (const ParamSpec &p : info.params) {
            QVERIFY2(names.insert(p.name).second, p.name.c_str());
            QVERIFY2(!p.help.empty(), p.name.c_str());
        }
        QVERIFY2(names.count("seed"), info.id.c_str());
    }
    QCOMPARE(experimentInfo("e10").id, std::string("E10"));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, experimentInfo("E99"));
}

void TestExperiments::everyExperimentRuns_data()
{
    QTest::addColumn<QString>("id");
    for (const ExperimentInfo &info : experimentList())
        QTest::newRow(info.id.c_str()) << QString::fromStdString(info.id);
}

void TestExperiments::everyExperimentRuns()
{
    QFETCH(QString, id);
    const ExperimentInfo &info = experimentInfo(id.toStdString());
    std::vector<double> progress;
    RunContext context;
    context.progress = [&](double f) { progress.push_back(f); };
    const ExperimentResult r = runExperiment(info.id, fastParams(info.id), context);
    QCOMPARE(r.id, info.id);
    QCOMPARE(r.table.columns(), info.columns);
    QVERIFY(r.table.rowCount() > 0);
    // Every parameter is reported, defaults filled in.
    QCOMPARE(r.params.size(), info.params.size());
    for (const ParamSpec &p : info.params)
        QVERIFY2(r.params.count(p.name), p.name.c_str());
    // Progress runs from 0 to 1 without going back.
    QVERIFY(!progress.empty());
    QCOMPARE(progress.front(), 0.0);
    QCOMPARE(progress.back(), 1.0);
    for (std::size_t i = 1; i < progress.size(); ++i)
        QVERIFY2(progress[i] >= progress[i - 1], qPrintable(QString::number(i)));
    for (const NamedMatrix &m : r.matrices) {
        QVERIFY(!m.name.empty());
        QVERIFY(m.values.size() > 0);
    }
}

void TestExperiments::matchesNumpyDigits_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("fixture");
    QTest::newRow("E1 one head") << "E1"
                                 << "e1_one_head.csv";
    QTest::newRow("E2 scaling sweep") << "E2"
                                      << "e2_scaling_sweep.csv";
    QTest::newRow("E3 softmax collapse") << "E3"
                                         << "e3_softmax_collapse.csv";
}

void TestExperiments::matchesNumpyDigits()
{
    QFETCH(QString, id);
    QFETCH(QString, fixture);
    const std::string expected = readFixture(fixture);
    QVERIFY2(!expected.empty(), qPrintable(fixture));
    // Default parameters are the ones of docs/experiments.md, which the NumPy scripts use.
    const std::string actual = run(id.toLatin1().constData()).table.toCsv();
    if (actual != expected)
        QFAIL(qPrintable(firstCsvDifference(actual, expected)));
}

// E15 and E16 hold several h × n × n float64 matrices: beyond 2 GiB they are refused before any
// allocation, naming the MiB (E16: 3 · 256 · 2048² · 8 bytes = 24 576 MiB; E15: 5 · 64 · 2048² · 8
// = 10 240 MiB), while the largest runs under the budget still run.
void TestExperiments::matrixMemoryRefusedBeforeRunning()
{
    try {
        run("E16",
            {{"heads", "256"}, {"d_model", "4096"}, {"n", "2048"}, {"kv_heads_list", "256"}});
        QFAIL("E16 at 24 GiB ran");
    } catch (const InvalidArgument &e) {
        QVERIFY2(std::string(e.what()).find("24576 MiB") != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).find("2048 MiB") != std::string::npos, e.what());
    }
    try {
        run("E15", {{"heads", "64"}, {"d_k", "1"}, {"n", "2048"}});
        QFAIL("E15 at 10 GiB ran");
    } catch (const InvalidArgument &e) {
        QVERIFY2(std::string(e.what()).find("10240 MiB") != std::string::npos, e.what());
    }
    // 3 · 8 · 300² · 8 bytes is far under the budget: it runs.
    QCOMPARE(run("E16", {{"n", "300"}}).table.rowCount(), std::size_t(3));
}

// With n ≤ w + s no row has its window past the sinks: the sink-mass columns are NaN and a
// note says why (n = 2 against the default w = 8, s = 4).
void TestExperiments::e15SaysWhySinkMassIsNaN()
{
    const ExperimentResult r = run("E15", {{"n", "2"}});
    QVERIFY(std::isnan(std::get<double>(r.table.rows().front().back())));
    bool said = false;
    for (const std::string &note : r.table.notes)
        said |= note.find("no row has i >= w + s = 12 with n = 2") != std::string::npos;
    QVERIFY(said);
    // … and no note claims a mean over rows that do not exist.
    for (const std::string &note : r.table.notes)
        QVERIFY2(note.find("mean over the rows i >= w + s") == std::string::npos, note.c_str());
    const ExperimentResult normal = run("E15", {});
    bool defined = false;
    for (const std::string &note : normal.table.notes) {
        QVERIFY(note.find("no row has") == std::string::npos);
        defined |= note.find("mean over the rows i >= w + s = 12") != std::string::npos;
    }
    QVERIFY(defined);
}

void TestExperiments::badParameters_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("mentioned");
    const auto row = [](const char *label, const char *id, const char *name, const char *value,
                        const char *mentioned) {
        QTest::newRow(label) << QString::fromUtf8(id) << QString::fromUtf8(name)
                             << QString::fromUtf8(value) << QString::fromUtf8(mentioned);
    };
    row("unknown experiment", "E99", "seed", "0", "E99");
    row("d_k too small for the classes", "E13", "d_k", "6", "d_k = 6");
    row("heads not dividing d_model", "E17", "heads", "3", "heads = 3 must divide d_model = 64");
    row("shortest half above the longest", "E17", "min_repeat", "20",
        "min_repeat = 20 must be <= repeat = 16");
    row("unknown parameter", "E2", "n", "5", "'n'");
    row("not an integer", "E2", "trials", "many", "'trials'");
    row("integer with junk", "E2", "trials", "40x", "'trials'");
    row("below minimum", "E2", "keys", "0", "'keys'");
    row("negative seed", "E1", "seed", "-1", "'seed'");
    row("seed over 64 bits", "E1", "seed", "18446744073709551616", "'seed'");
    row("bad list element", "E2", "d_k", "4,x,16", "'d_k'");
    row("empty list element", "E3", "d_k", "16,,64", "'d_k'");
    row("bad choice", "E8", "dtype", "float16", "'dtype'");
    row("bad number", "E12", "vector_scale", "ten", "'vector_scale'");
    row("non-finite number", "E12", "vector_scale", "inf", "'vector_scale'");
    row("heads not dividing d_model", "E4", "heads", "3", "heads = 3");
    row("heads_list not dividing", "E4", "heads_list", "1,5", "heads = 5");
    row("dashed name accepted", "E5", "d-model", "15", "heads = 4");
    row("changed_from past n", "E7", "changed_from", "8", "changed_from");
    row("too many padded keys", "E11", "padded_keys", "7", "padded_keys");
}

void TestExperiments::badParameters()
{
    QFETCH(QString, id);
    QFETCH(QString, name);
    QFETCH(QString, value);
    QFETCH(QString, mentioned);
    try {
        runExperiment(id.toStdString(), {{name.toStdString(), value.toStdString()}});
        QFAIL("accepted");
    } catch (const InvalidArgument &e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(mentioned), e.what());
    }
}

void TestExperiments::cancellation_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<bool>("raisedBefore");
    QTest::newRow("E2 cancelled mid-run") << "E2" << false;
    QTest::newRow("E8 cancelled mid-run") << "E8" << false;
    QTest::newRow("E3 cancelled before") << "E3" << true;
    QTest::newRow("E9 cancelled before") << "E9" << true;
}

void TestExperiments::cancellation()
{
    QFETCH(QString, id);
    QFETCH(bool, raisedBefore);
    std::atomic<bool> cancel {raisedBefore};
    int reportsAfterCancel = 0;
    RunContext context;
    context.cancel = &cancel;
    context.progress = [&](double f) {
        if (cancel)
            ++reportsAfterCancel;
        if (f > 0)
            cancel = true; // the user presses Cancel once the run is under way
    };
    ExperimentParams params = {{"seed", "3"}};
    if (id == "E2")
        params = {{"trials", "4000"}, {"d_k", "1024,1024"}};
    if (id == "E8")
        params = {{"n", "64,128,256"}, {"repeats", "3"}};
    QVERIFY_THROWS_EXCEPTION(Cancelled, runExperiment(id.toStdString(), params, context));
    if (!raisedBefore)
        QVERIFY2(reportsAfterCancel <= 1, "the run stops at its next check");
}

void TestExperiments::e1RowSumsAndCore()
{
    const ExperimentResult r = run("E1");
    QCOMPARE(r.table.rowCount(), std::size_t(5));
    const MatrixD *weights = nullptr;
    for (const NamedMatrix &m : r.matrices)
        if (m.name == "weights")
            weights = &m.values;
    QVERIFY(weights);
    QCOMPARE(weights->rows(), Index(5));
    QCOMPARE(weights->cols(), Index(5));
    for (std::size_t i = 0; i < 5; ++i) {
        QVERIFY(std::abs(column(r, i, "row_sum") - 1.0) <= 1e-12);
        QCOMPARE(column(r, i, "row_sum_error"), std::abs(column(r, i, "row_sum") - 1.0));
        for (int j = 0; j < 5; ++j)
            QCOMPARE(column(r, i, ("key_" + std::to_string(j)).c_str()), (*weights)(Index(i), j));
    }
    // The NumPy-order path and the core's Eigen path agree to rounding.
    QVERIFY(r.scalars.at("max_abs_diff_vs_core") <= 1e-15);
    // Other sizes change the key columns with n.
    const ExperimentResult r7 = run("E1", {{"n", "7"}});
    QCOMPARE(r7.table.columnCount(), std::size_t(7 + 3));
    QCOMPARE(r7.table.columns()[7], std::string("key_6"));
}

void TestExperiments::e2Headline()
{
    const ExperimentResult r = run("E2");
    QCOMPARE(r.table.rowCount(), std::size_t(5));
    double previousMax = 0, previousJacobian = 1;
    for (std::size_t i = 0; i < 5; ++i) {
        const double root = column(r, i, "sqrt_dk");
        QCOMPARE(root, std::sqrt(column(r, i, "d_k")));
        QVERIFY2(std::abs(column(r, i, "score_std") / root - 1.0) <= 0.02,
                 qPrintable(QString::number(column(r, i, "score_std"))));
        const double scaledMax = column(r, i, "max_weight_scaled");
        QVERIFY2(scaledMax >= 0.2 && scaledMax <= 0.3, qPrintable(QString::number(scaledMax)));
        const double scaledJ = column(r, i, "jacobian_norm_scaled");
        QVERIFY2(std::abs(scaledJ - 0.30) <= 0.02, qPrintable(QString::number(scaledJ)));
        // Unscaled: the max weight climbs toward 1 and ‖J‖ falls toward 0, never NaN.
        const double unscaledMax = column(r, i, "max_weight_unscaled");
        const double unscaledJ = column(r, i, "jacobian_norm_unscaled");
        QVERIFY(std::isfinite(unscaledJ));
        QVERIFY(unscaledMax > previousMax);
        QVERIFY(unscaledJ < previousJacobian);
        previousMax = unscaledMax;
        previousJacobian = unscaledJ;
    }
    QVERIFY(previousMax > 0.95);
    QVERIFY(previousJacobian < 0.06);
}

void TestExperiments::e2EntryPointEqualsExperiment()
{
    const Table direct = scalingSweep(1, 500, 16, {4, 16});
    const ExperimentResult r = run("E2", {{"seed", "1"}, {"trials", "500"}, {"d_k", "4,16"}});
    QCOMPARE(direct.toCsv(), r.table.toCsv());
    // A different key count changes the numbers but keeps the shape.
    const Table eight = scalingSweep(1, 500, 8, {4, 16});
    QCOMPARE(eight.rowCount(), std::size_t(2));
    QVERIFY(eight.toCsv() != direct.toCsv());
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, scalingSweep(1, 0, 16, {4}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, scalingSweep(1, 10, 16, {}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, scalingSweep(1, 10, 16, {4, 0}));
    // Memory caps: 10⁶ × 4096 scores or 10⁶ × 65536 queries would not fit in 1 GiB.
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, scalingSweep(1, 1000000, 4096, {4}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, scalingSweep(1, 1000000, 16, {65536}));
}

void TestExperiments::e2JacobianMatchesExplicitMatrix()
{
    // The norm E2 averages (metrics.h jacobianNorm) against the explicit diag(p) − ppᵀ on the
    // kind of rows E2 produces: ordinary (scaled) and near-one-hot (unscaled, large d_k).
    const double ordinary[4] = {0.1, 0.2, 0.3, 0.4};
    const double nearOneHot[4] = {1.0 - 3e-14, 1e-14, 1e-14, 1e-14};
    for (const double *p : {ordinary, nearOneHot}) {
        const double fast = jacobianNorm(p, 4), slow = jacobianNormExplicit(p, 4);
        QVERIFY(std::isfinite(fast) && fast > 0);
        QVERIFY2(std::abs(fast - slow) <= 1e-12 * slow, qPrintable(QString::number(fast)));
    }
}

void TestExperiments::e3Headline()
{
    const ExperimentResult r = run("E3");
    QCOMPARE(r.table.rowCount(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
        // Scaling spreads the weight: more effective terms and a smaller largest weight.
        QVERIFY(column(r, i, "effective_terms_scaled") > column(r, i, "effective_terms_unscaled"));
        QVERIFY(column(r, i, "max_weight_scaled") < column(r, i, "max_weight_unscaled"));
        QVERIFY(column(r, i, "effective_terms_scaled") <= 2000.0);
        QVERIFY(column(r, i, "effective_terms_unscaled") >= 1.0);
    }
    // Unscaled at d_k = 512 the row collapses onto about one key.
    QVERIFY(column(r, 2, "effective_terms_unscaled") < 2.0);
    QVERIFY(column(r, 2, "effective_terms_scaled") > 100.0);
}

void TestExperiments::e3EffectiveTermsMatchMetrics()
{
    // E3 sums w² in NumPy's order; metrics.h effectiveTerms sums left to right: same to rounding.
    const ExperimentResult r = run("E3");
    for (const NamedMatrix &m : r.matrices) {
        const double metric = effectiveTerms(m.values.data(), m.values.cols());
        const char *col
            = m.name == "weights_scaled" ? "effective_terms_scaled" : "effective_terms_unscaled";
        const double table = column(r, 2, col);
        QVERIFY2(std::abs(metric - table) <= 1e-12 * table, m.name.c_str());
    }
    QCOMPARE(r.matrices.size(), std::size_t(2));
}

void TestExperiments::e4ParameterCount_data()
{
    QTest::addColumn<int>("h");
    QTest::newRow("h=1") << 1;
    QTest::newRow("h=4") << 4;
    QTest::newRow("h=16") << 16;
}

void TestExperiments::e4ParameterCount()
{
    QFETCH(int, h);
    const ExperimentResult r = run("E4", {{"heads", std::to_string(h)}});
    // The table lists h = 1, 4, 16 by default; each row has 4d² + 4d = 1088 at d = 16.
    QCOMPARE(r.table.rowCount(), std::size_t(3));
    for (std::size_t i = 0; i < 3; ++i) {
        QCOMPARE(column(r, i, "parameter_count"), 1088.0);
        QCOMPARE(column(r, i, "expected_parameter_count"), 1088.0);
        QCOMPARE(column(r, i, "d_k"), 16.0 / column(r, i, "h"));
    }
    QCOMPARE(r.scalars.at("parameter_count"), 1088.0);
    QCOMPARE(r.matrices.size(), std::size_t(h + 1)); // h heads + the mean
}

void TestExperiments::e4HeadMatrices()
{
    const ExperimentResult r = run("E4");
    QCOMPARE(r.matrices.size(), std::size_t(5));
    MatrixD mean = MatrixD::Zero(6, 6);
    for (int i = 0; i < 4; ++i) {
        const MatrixD &w = r.matrices[std::size_t(i)].values;
        QCOMPARE(r.matrices[std::size_t(i)].name, "head_" + std::to_string(i));
        QCOMPARE(w.rows(), Index(6));
        ATTN_COMPARE_CLOSE(w.rowwise().sum(), VectorD::Ones(6), 1e-12, 0.0);
        mean += w / 4.0;
    }
    QCOMPARE(r.matrices[4].name, std::string("mean"));
    ATTN_COMPARE_CLOSE(r.matrices[4].values, mean, 1e-12, 0.0);
    // Heads differ from each other (each uses its own columns).
    QVERIFY((r.matrices[0].values - r.matrices[1].values).cwiseAbs().maxCoeff() > 1e-3);
}

void TestExperiments::e5Permutation()
{
    const ExperimentResult r = run("E5");
    QCOMPARE(r.table.rowCount(), std::size_t(7));
    QVERIFY(r.scalars.at("max_diff_no_positions") <= 1e-12);
    QVERIFY(r.scalars.at("max_diff_with_positions") > 1e-3);
    std::set<double> sources;
    for (std::size_t i = 0; i < 7; ++i) {
        QVERIFY(column(r, i, "diff_no_positions") <= 1e-12);
        sources.insert(column(r, i, "source_position"));
    }
    QCOMPARE(sources.size(), std::size_t(7)); // a permutation
}

void TestExperiments::e6Rotation()
{
    const ExperimentResult r = run("E6");
    QCOMPARE(r.table.rowCount(), std::size_t(8)); // d = 16: 8 (sin, cos) pairs
    QVERIFY(r.scalars.at("worst_error") <= 1e-13);
    for (std::size_t i = 0; i < 8; ++i) {
        QCOMPARE(column(r, i, "omega"), std::pow(10000.0, -2.0 * double(i) / 16.0));
        QCOMPARE(column(r, i, "angle"), column(r, i, "omega") * 5.0);
        QVERIFY(column(r, i, "max_error") <= 1e-13);
    }
    // Larger offsets and widths stay at rounding level too.
    const ExperimentResult wide = run("E6", {{"d_model", "64"}, {"offset", "17"}});
    QVERIFY(wide.scalars.at("worst_error") <= 1e-13);
}

void TestExperiments::e7CausalMask()
{
    const ExperimentResult r = run("E7");
    QCOMPARE(r.table.rowCount(), std::size_t(8));
    for (std::size_t i = 0; i < 8; ++i) {
        QVERIFY2(column(r, i, "change_no_mask") > 0, qPrintable(QString::number(i)));
        if (i < 5)
            QCOMPARE(column(r, i, "change_causal"), 0.0); // exactly
        else
            QVERIFY(column(r, i, "change_causal") > 0);
    }
    QCOMPARE(r.scalars.at("max_change_causal_before"), 0.0);
}

void TestExperiments::e8ShapeAndConsistency()
{
    for (const char *dtype : {"float32", "float64"}) {
        for (const char *kernel : {"materialized", "streaming", "loop"}) {
            const ExperimentResult r = run(
                "E8", {{"n", "16,32,64"}, {"repeats", "2"}, {"dtype", dtype}, {"kernel", kernel}});
            const double bytes = std::string(dtype) == "float32" ? 4.0 : 8.0;
            QCOMPARE(r.table.rowCount(), std::size_t(3));
            for (std::size_t i = 0; i < 3; ++i) {
                const double n = column(r, i, "n");
                QCOMPARE(n, 16.0 * double(1 << i));
                QCOMPARE(column(r, i, "entries"), n * n);
                QCOMPARE(column(r, i, "mib"), n * n * bytes / (1024.0 * 1024.0));
                QVERIFY(column(r, i, "seconds_mean") > 0);
                QVERIFY(column(r, i, "seconds_min") <= column(r, i, "seconds_mean"));
                QCOMPARE(textCell(r, i, "kernel"), std::string(kernel));
                if (std::string(kernel) == "materialized")
                    QVERIFY(column(r, i, "kernel_extra_mib") >= column(r, i, "mib"));
            }
            // Each doubling of n quadruples the entries.
            QCOMPARE(column(r, 1, "entries"), 4 * column(r, 0, "entries"));
            QVERIFY(std::isfinite(r.scalars.at("fitted_exponent")));
            // The exponent is fitted to the fastest runs, and the notes say so.
            std::vector<double> ns, fastest;
            for (std::size_t i = 0; i < 3; ++i) {
                ns.push_back(column(r, i, "n"));
                fastest.push_back(column(r, i, "seconds_min"));
                QVERIFY(column(r, i, "seconds_min") <= column(r, i, "seconds_median"));
                QCOMPARE(column(r, i, "seconds_median"), column(r, i, "seconds_mean")); // 2 runs
            }
            QCOMPARE(r.scalars.at("fitted_exponent"), fitPowerLawExponent(ns, fastest));
            QVERIFY(r.table.notes.at(0).find("seconds_min") != std::string::npos);
        }
    }
    // The typed entry point: one n gives no exponent.
    double exponent = 0;
    const Table one = timingSweep({32}, 8, true, "materialized", 1, 0, &exponent);
    QCOMPARE(one.rowCount(), std::size_t(1));
    QVERIFY(std::isnan(exponent));
    // E8_single_n_exponent_nan: one n (or one n repeated) has no exponent; the table says so
    // in words rather than printing "nan", and JSON gives null.
    for (const char *n : {"64", "64,64"}) {
        const ExperimentResult single = run("E8", {{"n", n}, {"repeats", "1"}});
        QVERIFY(std::isnan(single.scalars.at("fitted_exponent")));
        QVERIFY2(single.table.notes.at(0).find("n/a (needs") != std::string::npos,
                 single.table.notes.at(0).c_str());
        QVERIFY(single.table.toText().find("nan") == std::string::npos);
        const std::string json = single.table.toJson(single.id, single.params, single.scalars);
        QVERIFY2(json.find("\"fitted_exponent\": null") != std::string::npos
                     || json.find("\"fitted_exponent\":null") != std::string::npos,
                 json.c_str());
    }
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, timingSweep({32}, 8, true, "fast", 1, 0, nullptr));
}

void TestExperiments::e8RefusesOverBudget()
{
    // 65536² float32 scores are 16 GiB: refused up front with a message naming n and the way out.
    try {
        run("E8", {{"n", "16,65536"}});
        QFAIL("accepted");
    } catch (const InvalidArgument &e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(what.contains("n = 65536") && what.contains("16384 MiB")
                     && what.contains("streaming") && what.contains("2048 MiB"),
                 e.what());
    }
    // Streaming at the same n needs only its tiles, but keep the test fast: just the check.
    QVERIFY_THROWS_EXCEPTION(
        InvalidArgument,
        timingSweep({1024}, 64, true, "materialized", 1, 0, std::size_t(1) << 20, nullptr));
}

void TestExperiments::e9LoopEqualsMatrix()
{
    for (const char *dtype : {"float64", "float32"}) {
        const ExperimentResult r
            = run("E9", {{"n", "64"}, {"d", "16"}, {"repeats", "2"}, {"dtype", dtype}});
        QCOMPARE(r.table.rowCount(), std::size_t(2));
        QCOMPARE(textCell(r, 0, "method"), std::string("loop"));
        QCOMPARE(textCell(r, 1, "method"), std::string("matrix"));
        const double tolerance = std::string(dtype) == "float64" ? 1e-12 : 1e-5;
        QVERIFY(column(r, 0, "max_abs_diff") <= tolerance);
        QCOMPARE(column(r, 1, "max_abs_diff"), 0.0);
        QCOMPARE(column(r, 1, "time_ratio"), 1.0);
        // The ratio of the fastest runs (least disturbed by other load).
        QCOMPARE(column(r, 0, "time_ratio"),
                 column(r, 0, "seconds_min") / column(r, 1, "seconds_min"));
        for (std::size_t i = 0; i < 2; ++i) {
            QVERIFY(column(r, i, "seconds_min") > 0);
            QVERIFY(column(r, i, "seconds_min") <= column(r, i, "seconds_median"));
            QCOMPARE(column(r, i, "seconds_median"), column(r, i, "seconds_mean")); // 2 runs
        }
        QCOMPARE(r.scalars.at("time_ratio"), column(r, 0, "time_ratio"));
    }
}

void TestExperiments::e10MaskConvention()
{
    const ExperimentResult r = run("E10");
    QVERIFY(r.scalars.at("max_diff_right") <= 1e-12);
    QVERIFY(r.scalars.at("max_diff_reversed") > 0.1);
    const std::size_t n = r.table.rowCount();
    QCOMPARE(n, std::size_t(6));
    for (std::size_t i = 0; i < n; ++i) {
        QCOMPARE(column(r, i, "future_weight_right"), 0.0);
        if (i + 1 < n) {
            // Reversed: all weight on the future keys, none on the allowed past.
            QVERIFY(std::abs(column(r, i, "future_weight_reversed") - 1.0) <= 1e-12);
            QCOMPARE(column(r, i, "fully_masked_reversed"), 0.0);
        } else {
            QCOMPARE(column(r, i, "fully_masked_reversed"), 1.0); // last query: nothing left
        }
    }
    std::set<std::string> names;
    for (const NamedMatrix &m : r.matrices)
        names.insert(m.name);
    QVERIFY(names.count("right_convention") && names.count("reversed_convention")
            && names.count("difference"));
}

void TestExperiments::e11FillValues()
{
    const ExperimentResult r = run("E11");
    QCOMPARE(r.table.rowCount(), std::size_t(6));
    for (std::size_t i = 0; i < 6; ++i) {
        const std::string dtype = textCell(r, i, "dtype"), fill = textCell(r, i, "fill");
        QVERIFY(dtype == (i < 3 ? "float32" : "float64"));
        const double textbookSum = column(r, i, "full_row_sum_textbook");
        const double coreSum = column(r, i, "full_row_sum_core");
        if (fill == "-inf") {
            // −inf − (−inf) = NaN: the textbook softmax turns a fully masked row into NaN; our
            // policy gives zeros and the flag.
            QVERIFY(std::isnan(textbookSum));
            QCOMPARE(textCell(r, i, "full_row_textbook").substr(0, 3), std::string("nan"));
            QCOMPARE(coreSum, 0.0);
            QCOMPARE(textCell(r, i, "full_row_core"), std::string("zeros, flagged fully masked"));
            QCOMPARE(column(r, i, "masked_weight_core"), 0.0);
            QCOMPARE(column(r, i, "masked_weight_textbook"), 0.0);
        } else {
            // Finite fills: the fully masked row spreads uniformly over the masked keys.
            QVERIFY(std::abs(textbookSum - 1.0) <= 1e-6);
            QCOMPARE(textCell(r, i, "full_row_textbook"),
                     std::string("uniform 1/6 over masked keys"));
            QCOMPARE(column(r, i, "full_row_sum_core"), textbookSum);
            if (fill == "-1e9") {
                QCOMPARE(column(r, i, "masked_weight_textbook"), 0.0); // exp underflows to 0
            } else {
                QCOMPARE(fill, std::string("0"));
                QVERIFY(column(r, i, "masked_weight_textbook") > 0.1); // the bug leaks weight
                QCOMPARE(column(r, i, "masked_weight_core"),
                         column(r, i, "masked_weight_textbook"));
            }
        }
    }
}

void TestExperiments::e12Pitfalls()
{
    const ExperimentResult r = run("E12");
    QCOMPARE(r.table.rowCount(), std::size_t(8));
    const double logMax = std::log(double(std::numeric_limits<float>::max()));
    int nanRows = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        QCOMPARE(textCell(r, i, "part"), std::string("naive_float32"));
        const bool nan = std::isnan(column(r, i, "row_sum_pitfall"));
        // NaN exactly where the arithmetic makes it: exp overflows past log(FLT_MAX).
        QCOMPARE(nan, column(r, i, "score_max") > logMax);
        QCOMPARE(nan, column(r, i, "nan_count_pitfall") > 0);
        nanRows += nan ? 1 : 0;
        // The max-subtracted softmax stays finite and normalised.
        QVERIFY(std::abs(column(r, i, "row_sum_correct") - 1.0) <= 1e-5);
    }
    QVERIFY2(nanRows > 0, "1024-dim vectors scaled by 10 overflow float32 exp");
    QCOMPARE(r.scalars.at("naive_nan_rows"), double(nanRows));
    double wrongTotal = 0;
    bool someRowOff = false;
    for (std::size_t i = 4; i < 8; ++i) {
        QCOMPARE(textCell(r, i, "part"), std::string("wrong_axis"));
        QVERIFY(std::abs(column(r, i, "row_sum_correct") - 1.0) <= 1e-12);
        wrongTotal += column(r, i, "row_sum_pitfall");
        someRowOff = someRowOff || std::abs(column(r, i, "row_sum_pitfall") - 1.0) > 0.01;
    }
    QVERIFY(someRowOff);
    QVERIFY(std::abs(wrongTotal - 8.0) <= 1e-12); // each of the 8 key columns sums to 1
}

// Every run of a d_k starts from the same weights on the same batches: the three scale choices
// differ from their first step on only through the scale. Trained with the default settings,
// the 1/sqrt(d_k) head at d_k = 32 learns the recall task (accuracy far above chance 1/4), and
// the unit_qk initialisation gives q and k unit variance (scores of std ~ sqrt(d_k) unscaled:
// the unscaled runs start with sharper weights than the scaled ones).
void TestExperiments::e13ScaleLearning()
{
    const ExperimentParams params = {{"d_k", "32"}, {"dtype", "float64"}};
    const ExperimentResult r = run("E13", params);
    QCOMPARE(r.table.rowCount(), std::size_t(6));
    const auto find = [&](const std::string &init, const std::string &scale) {
        for (std::size_t i = 0; i < r.table.rowCount(); ++i)
            if (textCell(r, i, "init") == init && textCell(r, i, "scale") == scale)
                return i;
        return std::size_t(-1);
    };
    for (const char *init : {"xavier", "unit_qk"}) {
        const std::size_t scaled = find(init, "1/sqrt(d_k)"), none = find(init, "none"),
                          overDk = find(init, "1/d_k");
        QVERIFY(scaled < 6 && none < 6 && overDk < 6);
        QCOMPARE(column(r, scaled, "scale_value"), 1.0 / std::sqrt(32.0));
        QCOMPARE(column(r, none, "scale_value"), 1.0);
        QCOMPARE(column(r, overDk, "scale_value"), 1.0 / 32.0);
        QVERIFY(column(r, none, "mean_max_weight") > column(r, scaled, "mean_max_weight"));
        QVERIFY(column(r, scaled, "mean_max_weight") > column(r, overDk, "mean_max_weight"));
    }
    QVERIFY2(column(r, find("xavier", "1/sqrt(d_k)"), "accuracy") >= 0.9,
             "the scaled head learns recall at d_k = 32");
    // The per-step curves have one row per run and one column per step.
    for (const NamedMatrix &m : r.matrices) {
        QCOMPARE(m.values.rows(), Index(6));
        QCOMPARE(m.values.cols(), Index(300));
    }
    // Deterministic: the same seed gives the same table (on a short run: the steps are the same
    // code and the full run is slow under the sanitizers).
    const ExperimentParams shortRun = {{"d_k", "32"}, {"dtype", "float64"}, {"steps", "20"}};
    QCOMPARE(run("E13", shortRun).table.toCsv(), run("E13", shortRun).table.toCsv());
    const auto divergedNote = [](const ExperimentResult &e) {
        for (const std::string &note : e.table.notes)
            if (note.find("diverged") != std::string::npos)
                return note;
        return std::string();
    };
    QVERIFY(divergedNote(r).empty());

    // A learning rate far too large: the runs whose final loss is above twice the initial one
    // (or not finite) are counted in a note that asks for a smaller rate.
    const ExperimentResult big
        = run("E13", {{"d_k", "8"}, {"dtype", "float64"}, {"steps", "20"}, {"lr", "100"}});
    std::size_t diverged = 0;
    for (std::size_t i = 0; i < big.table.rowCount(); ++i) {
        const double before = column(big, i, "loss_initial"), after = column(big, i, "loss_final");
        diverged += (!std::isfinite(after) || after > 2.0 * before) ? 1 : 0;
    }
    QVERIFY(diverged > 0);
    const std::string note = divergedNote(big);
    QVERIFY2(note.rfind(std::to_string(diverged) + " of 6 runs diverged", 0) == 0, note.c_str());
    QVERIFY(note.find("try a smaller lr (the default is 0.005)") != std::string::npos);
}

void TestExperiments::e14RopeOffsets()
{
    // RoPE: score(m, n) = score(m + t, n + t) to rounding for every shift; sinusoidal encodings
    // added to q and k move the score by order one. A larger base decays more slowly.
    const ExperimentResult r = run("E14");
    QCOMPARE(r.table.rowCount(), std::size_t(4));
    for (std::size_t i = 0; i < r.table.rowCount(); ++i) {
        QVERIFY2(column(r, i, "rope_worst_diff") <= 1e-11,
                 qPrintable(QString::number(column(r, i, "rope_worst_diff"))));
        QVERIFY(column(r, i, "sinusoidal_worst_diff") > 1.0);
    }
    const NamedMatrix *decay = nullptr;
    for (const NamedMatrix &m : r.matrices)
        if (m.name == "score_decay")
            decay = &m;
    QVERIFY(decay);
    QCOMPARE(decay->values.rows(), Index(3)); // bases 100, 10000, 1000000
    QCOMPARE(decay->values.cols(), Index(257));
    for (Index b = 0; b < 3; ++b) {
        QCOMPARE(decay->values(b, 0), 1.0);
        // q = k = 1: score(0, Δ)/score(0, 0) = (2/d_k) Σ_i cos(Δ θ_i), θ_i = base^(−2i/d_k).
        const double base = b == 0 ? 100.0 : b == 1 ? 10000.0 : 1e6;
        double expected = 0;
        for (int i = 0; i < 32; ++i)
            expected += std::cos(16.0 * std::pow(base, -2.0 * i / 64.0));
        QVERIFY(std::abs(decay->values(b, 16) - expected / 32.0) <= 1e-12);
    }
    QVERIFY(decay->values(0, 64) < decay->values(1, 64));
    QVERIFY(decay->values(1, 64) < decay->values(2, 64));
}

void TestExperiments::e15HeadReach()
{
    // ALiBi's first head (slope 1/2) reaches fewer keys than its last (1/256); a window alone
    // leaves no weight on the first keys of far rows, sinks take more than the causal share.
    const ExperimentResult r = run("E15");
    QCOMPARE(r.table.rowCount(), std::size_t(8));
    QCOMPARE(column(r, 0, "alibi_slope"), 0.5);
    QCOMPARE(column(r, 7, "alibi_slope"), 1.0 / 256);
    QVERIFY(column(r, 0, "reach_alibi") < column(r, 7, "reach_alibi"));
    QVERIFY(column(r, 0, "reach_alibi") < column(r, 0, "reach_no_positions"));
    for (std::size_t i = 0; i < 8; ++i) {
        QCOMPARE(column(r, i, "sink_mass_window"), 0.0);
        QVERIFY(column(r, i, "sink_mass_window_sinks") > column(r, i, "sink_mass_causal"));
        QVERIFY(column(r, i, "sink_mass_window_sinks") < 1.0);
    }
}

void TestExperiments::e16SharedKeys()
{
    // d_model = 64, h = 8, d_k = 8: parameters 2·64² + 2·g·8·64 (no biases), KV cache
    // 4096 · 2 · g · 8 · 2 bytes; g = h reproduces itself (ΔW = 0), fewer kv heads move W.
    const ExperimentResult r = run("E16");
    QCOMPARE(r.table.rowCount(), std::size_t(3));
    const int gs[] = {8, 2, 1};
    for (std::size_t i = 0; i < 3; ++i) {
        const double g = gs[i];
        QCOMPARE(column(r, i, "kv_heads"), g);
        QCOMPARE(column(r, i, "parameters"), 2.0 * 64 * 64 + 2.0 * g * 8 * 64);
        QCOMPARE(column(r, i, "kv_cache_bytes"), 4096.0 * 2 * g * 8 * 2);
    }
    QCOMPARE(column(r, 0, "mean_abs_dw"), 0.0);
    QVERIFY(column(r, 1, "mean_abs_dw") > 1e-4);
    QVERIFY(column(r, 2, "mean_abs_dw") > 1e-4);
}

void TestExperiments::e17InductionHeadForms()
{
    // A small model (V = 32, d_model = 32, N in [5, 10], B = 16, Adam lr 0.01) shows the phase
    // change within 400 steps: the best layer-1 head's prefix-matching score starts at the
    // uniform causal weight and ends near 0.8 together with a layer-0 previous-token head, and
    // the held-out loss on the repeated half falls from ln 32 to about a tenth of it.
    const ExperimentResult r = run("E17",
                                   {{"steps", "400"},
                                    {"eval_every", "100"},
                                    {"vocab", "32"},
                                    {"d_model", "32"},
                                    {"repeat", "10"},
                                    {"min_repeat", "5"},
                                    {"batch", "16"},
                                    {"held_out", "16"},
                                    {"lr", "0.01"}});
    QCOMPARE(r.table.rowCount(), std::size_t(5));
    for (std::size_t i = 0; i < 5; ++i)
        QCOMPARE(column(r, i, "step"), 100.0 * double(i));
    QVERIFY(std::abs(column(r, 0, "loss") - std::log(32.0)) < 0.1);
    QVERIFY2(column(r, 0, "induction_score") <= 0.2,
             qPrintable(QString::number(column(r, 0, "induction_score"))));
    QVERIFY2(column(r, 4, "induction_score") >= 0.5,
             qPrintable(QString::number(column(r, 4, "induction_score"))));
    QVERIFY2(column(r, 4, "loss") <= 0.5 * column(r, 0, "loss"),
             qPrintable(QString::number(column(r, 4, "loss"))));
    QVERIFY(column(r, 4, "accuracy") >= 0.7);
    QVERIFY(column(r, 4, "previous_token_score") >= column(r, 0, "previous_token_score") + 0.1);
    QCOMPARE(r.scalars.at("induction_score_final"), column(r, 4, "induction_score"));
    QVERIFY(r.scalars.at("phase_change_step") > 0);
    // The two best heads' maps on the first held-out sequence (n = 20): causal rows summing to 1.
    const MatrixD *induction = nullptr;
    for (const NamedMatrix &m : r.matrices)
        if (m.name == "induction_head_weights")
            induction = &m.values;
    QVERIFY(induction);
    QCOMPARE(induction->rows(), Eigen::Index(20));
    QVERIFY((induction->rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-5);
    QCOMPARE(induction->triangularView<Eigen::StrictlyUpper>().toDenseMatrix().norm(), 0.0);
}

void TestExperiments::fitPowerLaw()
{
    const std::vector<double> x = {512, 1024, 2048, 4096};
    std::vector<double> y;
    for (const double v : x)
        y.push_back(3e-9 * v * v);
    QVERIFY(std::abs(fitPowerLawExponent(x, y) - 2.0) <= 1e-12);
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, fitPowerLawExponent({1}, {1}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, fitPowerLawExponent({1, 2}, {1}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, fitPowerLawExponent({1, 2}, {1, 0}));
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, fitPowerLawExponent({2, 2}, {1, 3}));
}

// The timing headline's fit on synthetic timings: a fixed cost of 5 ms that flattens small n,
// then exactly c·n² (c = 1e-10 s) from n = 2048. The fit over n ≥ n_max/8 = 2048 recovers 2 with
// R² = 1; over every n the slope is far lower (the "∝ n^1.2" of a loaded machine); a time that
// jumps (another program busy) is flagged noisy; two points are never trusted, one gives none.
void TestExperiments::fitLargeN()
{
    std::vector<double> n, t;
    for (int i = 0; i < 8; ++i) { // n = 128 … 16384
        const double size = 128.0 * std::exp2(i);
        n.push_back(size);
        t.push_back(size < 2048 ? 5e-3 : 1e-10 * size * size);
    }
    const LargeNFit fit = fitLargeNExponent(n, t);
    QCOMPARE(fit.fromN, 2048.0);
    QCOMPARE(fit.points, 4);
    QVERIFY2(std::abs(fit.exponent - 2.0) <= 1e-12, qPrintable(QString::number(fit.exponent)));
    QVERIFY(std::abs(fit.rSquared - 1.0) <= 1e-12);
    QVERIFY(!fit.noisy);
    QVERIFY(fitPowerLawExponent(n, t) < 1.6); // every n: the fixed cost flattens the slope

    std::vector<double> loaded = t;
    loaded[5] *= 3.0; // n = 4096 measured while another program ran
    const LargeNFit noisy = fitLargeNExponent(n, loaded);
    QCOMPARE(noisy.points, 4);
    QVERIFY(noisy.rSquared < 0.98);
    QVERIFY(noisy.noisy);

    const LargeNFit two = fitLargeNExponent({1024, 2048}, {1e-3, 4e-3});
    QCOMPARE(two.exponent, 2.0);
    QVERIFY(two.noisy);
    const LargeNFit one = fitLargeNExponent({1024}, {1e-3});
    QVERIFY(std::isnan(one.exponent));
    QVERIFY(!one.noisy);
    // A zero or infinite time is left out, never thrown on.
    const LargeNFit gaps = fitLargeNExponent({2048, 4096, 8192}, {0.0, 4e-3, qInf()});
    QCOMPARE(gaps.points, 1);
    QVERIFY(std::isnan(gaps.exponent));
}

// The live d_k charts' third curve: scalingSweep with the user's d_k^(−α)/τ adds two columns
// on the same scores. α = ½, τ = 1 is the scaled column and α = 0, τ = 1 the unscaled one
// (within rounding: s·d_k^(−½) vs s/√d_k); the other columns do not change; τ = 2 at α = 0 with
// one key gives weight 1 and ‖J‖ = 0 (a one-key softmax), and α, τ out of range are refused.
void TestExperiments::scalingSweepCustomScale()
{
    const std::vector<Index> dks = {4, 64, 512};
    const Table plain = scalingSweep(3, 50, 12, dks, RandomSource::NumPy);
    for (auto [alpha, tau, column] : {std::tuple {0.5, 1.0, std::string("scaled")},
                                      std::tuple {0.0, 1.0, std::string("unscaled")}}) {
        AttentionOptions custom;
        custom.scaleExponent = alpha;
        custom.temperature = tau;
        const Table t = scalingSweep(3, 50, 12, dks, RandomSource::NumPy, custom);
        QCOMPARE(t.rowCount(), plain.rowCount());
        for (std::size_t row = 0; row < t.rowCount(); ++row) {
            for (const char *same : {"score_std", "max_weight_scaled", "jacobian_norm_unscaled"})
                QCOMPARE(t.number(row, same), plain.number(row, same));
            QVERIFY(std::abs(t.number(row, "max_weight_custom")
                             - plain.number(row, "max_weight_" + column))
                    <= 1e-12);
            QVERIFY(std::abs(t.number(row, "jacobian_norm_custom")
                             - plain.number(row, "jacobian_norm_" + column))
                    <= 1e-12);
        }
    }
    AttentionOptions hot;
    hot.scaleExponent = 0.25;
    hot.temperature = 2.0;
    const Table one = scalingSweep(3, 5, 1, dks, RandomSource::NumPy, hot);
    for (std::size_t row = 0; row < one.rowCount(); ++row) {
        QCOMPARE(one.number(row, "max_weight_custom"), 1.0);
        QCOMPARE(one.number(row, "jacobian_norm_custom"), 0.0);
    }
    AttentionOptions bad;
    bad.scaleExponent = 1.5;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, scalingSweep(3, 5, 2, dks, RandomSource::NumPy, bad));
}

QTEST_APPLESS_MAIN(TestExperiments)
#include "tst_experiments.moc"
