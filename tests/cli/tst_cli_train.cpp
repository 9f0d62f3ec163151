// `attnlab train` against PyTorch: the cli_* cases of tests/reference/make_training_fixtures.py
// (torch.nn.MultiheadAttention(batch_first=True) trained with torch.optim.SGD on
// mse_loss(mha(x, x, x), targets)); loss curve and final parameters at 1e-12 in float64.
// Also the --mask-convention, the built-in tasks' output formats and the refusals (exit 2).

#include "cliprocess.h"
#include "testutil.h"

#include "core/io/npy.h"
#include "core/training/layer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <map>
#include <string>

using namespace attn;
using attn::test::runAttnlab;

namespace {

using Arrays = std::map<std::string, NpyArray>;

QString fixture(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/training/%1.npz").arg(name);
}

Arrays load(const QString &path)
{
    Arrays a;
    for (auto &[name, array] : readNpz(path.toStdString()))
        a.emplace(name, std::move(array));
    return a;
}

void save(const QString &path, const Arrays &arrays)
{
    std::vector<std::pair<std::string, NpyArray>> members(arrays.begin(), arrays.end());
    writeNpz(path.toStdString(), members);
}

/// The case's training inputs only (what a user would hand to attnlab train).
Arrays inputsOnly(const Arrays &c)
{
    Arrays a;
    for (const char *name : {"in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias",
                             "num_heads", "inputs", "targets", "attn_mask"})
        if (c.count(name))
            a[name] = c.at(name);
    return a;
}

Eigen::Map<const Eigen::VectorXd> values(const NpyArray &a)
{
    return {a.values.data(), Eigen::Index(a.values.size())};
}

} // namespace

class TestCliTrain : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    QString path(const QString &name) const { return m_dir.filePath(name); }

private slots:
    void matchesTorch_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("allowedConvention");
        QTest::newRow("module") << QStringLiteral("cli_sgd_torch_module") << false;
        QTest::newRow("causal mask") << QStringLiteral("cli_sgd_causal_mask") << false;
        QTest::newRow("causal mask, allowed convention")
            << QStringLiteral("cli_sgd_causal_mask") << true;
    }
    void matchesTorch()
    {
        QFETCH(QString, name);
        QFETCH(bool, allowedConvention);
        const Arrays c = load(fixture(name));
        Arrays in = inputsOnly(c);
        QStringList args = {QStringLiteral("train")};
        if (allowedConvention) { // the same mask written as "True = may attend"
            for (double &v : in.at("attn_mask").values)
                v = v != 0 ? 0.0 : 1.0;
            args << QStringLiteral("--mask-convention") << QStringLiteral("allowed");
        }
        const QString inPath = path(name + QStringLiteral("_in.npz"));
        const QString outPath = path(name + QStringLiteral("_out.npz"));
        save(inPath, in);
        const int steps = int(c.at("steps").values.at(0));
        args << QStringLiteral("--in") << inPath << QStringLiteral("--steps")
             << QString::number(steps) << QStringLiteral("--lr")
             << QString::number(c.at("lr").values.at(0), 'g', 17) << QStringLiteral("--optimizer")
             << QStringLiteral("sgd") << QStringLiteral("--scale-exponent") << QStringLiteral("0.5")
             << QStringLiteral("--out") << outPath;
        const auto run = runAttnlab(args);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const Arrays r = load(outPath);
        QCOMPARE(r.at("loss").shape, std::vector<std::int64_t>({steps + 1}));
        const auto lossCheck = test::compareClose(values(r.at("loss")),
                                                  values(c.at("expected_losses")), 1e-12, 1e-12);
        QVERIFY2(lossCheck.ok, qPrintable(lossCheck.message()));
        for (const char *p :
             {"in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"}) {
            QCOMPARE(r.at(p).shape, c.at(p).shape);
            const auto check = test::compareClose(
                values(r.at(p)), values(c.at(std::string("final_") + p)), 1e-12, 1e-12);
            QVERIFY2(check.ok, qPrintable(QStringLiteral("%1: %2").arg(p, check.message())));
        }
        // The parameters moved: the comparison is not between initial values.
        QVERIFY((values(r.at("in_proj_weight")) - values(c.at("in_proj_weight"))).norm() > 1e-4);
    }

    void tasksPrintProgress_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("format");
        QTest::newRow("recall table")
            << QStringList {QStringLiteral("--task"), QStringLiteral("recall")}
            << QStringLiteral("table");
        QTest::newRow("copy csv") << QStringList {QStringLiteral("--task"), QStringLiteral("copy"),
                                                  QStringLiteral("--offset"), QStringLiteral("2")}
                                  << QStringLiteral("csv");
        QTest::newRow("average json float32")
            << QStringList {QStringLiteral("--task"), QStringLiteral("average"),
                            QStringLiteral("--dtype"), QStringLiteral("float32")}
            << QStringLiteral("json");
    }
    void tasksPrintProgress()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, format);
        const QString out = path(QStringLiteral("task_%1.npz").arg(format));
        const auto run = runAttnlab(
            QStringList {QStringLiteral("train")} + args
            + QStringList {QStringLiteral("--steps"), QStringLiteral("30"),
                           QStringLiteral("--optimizer"), QStringLiteral("adam"),
                           QStringLiteral("--format"), format, QStringLiteral("--out"), out});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        std::vector<double> losses;
        if (format == QLatin1String("json")) {
            const QJsonObject o = QJsonDocument::fromJson(run.out).object();
            const QJsonArray rows = o.value(QStringLiteral("rows")).toArray();
            QVERIFY2(rows.size() >= 2, run.out.constData());
        } else if (format == QLatin1String("csv")) {
            const QList<QByteArray> lines = run.out.trimmed().split('\n');
            QCOMPARE(lines.front(),
                     QByteArray("step,loss,mean_max_weight,mean_jacobian_norm,"
                                "grad_norm_w_q,grad_norm_w_k,grad_norm"));
            QCOMPARE(lines.size(), 1 + 10 + 1); // steps 1, 4, …, 28 and the last
        } else {
            QVERIFY(run.out.contains("mean_jacobian_norm"));
        }
        // The same seed gives the same run; the loss fell.
        const Arrays r = load(out);
        QCOMPARE(r.at("loss").shape, std::vector<std::int64_t>({31}));
        const auto again
            = runAttnlab(QStringList {QStringLiteral("train")} + args
                         + QStringList {QStringLiteral("--steps"), QStringLiteral("30"),
                                        QStringLiteral("--optimizer"), QStringLiteral("adam"),
                                        QStringLiteral("--format"), format});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(again.out, run.out);
        QVERIFY(r.at("loss").values.back() < r.at("loss").values.front());
    }

    void defaultRunsLearn_data()
    {
        QTest::addColumn<QString>("task");
        for (const char *task : {"recall", "copy", "average"})
            QTest::newRow(task) << QString::fromLatin1(task);
    }
    // `--task recall --steps 20` showed a flat loss (plain SGD at lr 0.01 barely moves it): the
    // default run of each task (Adam, lr 0.01, 100 steps) at least halves its loss and says
    // nothing; a 20-step run, or one with SGD, has not halved it and says so on stderr.
    void defaultRunsLearn()
    {
        QFETCH(QString, task);
        const QString out = path(QStringLiteral("default_%1.npz").arg(task));
        auto run = runAttnlab({QStringLiteral("train"), QStringLiteral("--task"), task,
                               QStringLiteral("--out"), out});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const std::vector<double> loss = load(out).at("loss").values;
        QCOMPARE(loss.size(), std::size_t(101));
        QVERIFY2(loss.back() < 0.5 * loss.front(),
                 qPrintable(QStringLiteral("%1 -> %2").arg(loss.front()).arg(loss.back())));
        QVERIFY2(!run.err.contains("note:"), run.err.constData());

        for (const QStringList &extra :
             {QStringList {QStringLiteral("--steps"), QStringLiteral("3")},
              QStringList {QStringLiteral("--optimizer"), QStringLiteral("sgd")}}) {
            run = runAttnlab(QStringList {QStringLiteral("train"), QStringLiteral("--task"), task}
                             + extra);
            QVERIFY2(run.exitCode == 0, run.err.constData());
            QVERIFY2(run.err.contains("attnlab train: note: the loss went from "),
                     run.err.constData());
            QVERIFY(run.err.contains("not yet half"));
        }
        // A step far too large blows the loss up: the note asks for a smaller rate, not more.
        run = runAttnlab({QStringLiteral("train"), QStringLiteral("--task"), task,
                          QStringLiteral("--steps"), QStringLiteral("5"), QStringLiteral("--lr"),
                          QStringLiteral("1000")});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.contains("attnlab train: note: the loss grew from "), run.err.constData());
        QVERIFY(run.err.contains("try a smaller --lr"));
        QVERIFY(!run.err.contains("larger --lr"));
    }

    // A row of attn_mask that masks every key: training runs (zero weights, finite loss) and a
    // note names the query, since PyTorch would give NaN there.
    void fullyMaskedQueryIsNoted()
    {
        Arrays a = inputsOnly(load(fixture(QStringLiteral("cli_sgd_causal_mask"))));
        NpyArray &mask = a["attn_mask"];
        QCOMPARE(mask.shape.size(), std::size_t(2));
        for (std::int64_t j = 0; j < mask.shape[1]; ++j)
            mask.values[std::size_t(j)] = 1; // query 0: every key masked
        const QString in = path(QStringLiteral("blind_query.npz"));
        save(in, a);
        const QString out = path(QStringLiteral("blind_query_out.npz"));
        const auto run = runAttnlab({QStringLiteral("train"), QStringLiteral("--in"), in,
                                     QStringLiteral("--steps"), QStringLiteral("2"),
                                     QStringLiteral("--out"), out});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.contains("note: attn_mask masks every key for query 0: their weights are "
                                  "0"),
                 run.err.constData());
        const NpyArray loss = load(out).at("loss");
        QCOMPARE(loss.values.size(), std::size_t(3));
        for (double l : loss.values)
            QVERIFY(std::isfinite(l));
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("edit"); // what is wrong with the case file ("" = nothing)
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QStringList ok = {QStringLiteral("--steps"), QStringLiteral("2"),
                                QStringLiteral("--out"), QStringLiteral("OUT")};
        QTest::newRow("no targets")
            << QStringLiteral("drop targets") << ok << QStringLiteral("no array 'targets'");
        QTest::newRow("in_proj_weight shape")
            << QStringLiteral("bad in_proj_weight") << ok << QStringLiteral("in_proj_weight is");
        QTest::newRow("heads") << QStringLiteral("heads 3") << ok
                               << QStringLiteral("num_heads = 3");
        QTest::newRow("targets shape")
            << QStringLiteral("bad targets") << ok << QStringLiteral("targets is");
        QTest::newRow("nan input") << QStringLiteral("nan") << ok << QStringLiteral("inputs");
        QTest::newRow("mask shape")
            << QStringLiteral("bad mask") << ok << QStringLiteral("attn_mask");
        QTest::newRow("optimizer")
            << QString()
            << (ok + QStringList {QStringLiteral("--optimizer"), QStringLiteral("rmsprop")})
            << QStringLiteral("--optimizer");
        QTest::newRow("lr") << QString()
                            << (ok + QStringList {QStringLiteral("--lr"), QStringLiteral("-1")})
                            << QStringLiteral("--lr must be a number in (0, 1e+06], got '-1'");
        QTest::newRow("lr 0") << QString()
                              << (ok + QStringList {QStringLiteral("--lr"), QStringLiteral("0")})
                              << QStringLiteral("--lr must be a number in (0, 1e+06], got '0'");
        QTest::newRow("loss") << QString()
                              << (ok + QStringList {QStringLiteral("--loss"), QStringLiteral("l1")})
                              << QStringLiteral("--loss");
        QTest::newRow("temperature")
            << QString()
            << (ok + QStringList {QStringLiteral("--temperature"), QStringLiteral("0")})
            << QStringLiteral("--temperature");
        QTest::newRow("denormal temperature")
            << QString()
            << (ok + QStringList {QStringLiteral("--temperature"), QStringLiteral("1e-320")})
            << QStringLiteral("the scale d_k^-alpha / temperature overflows");
        QTest::newRow("overflowing inputs")
            << QStringLiteral("huge") << ok << QStringLiteral("not finite before any update");
        QTest::newRow("no out") << QString()
                                << QStringList {QStringLiteral("--steps"), QStringLiteral("2")}
                                << QStringLiteral("--out");
        QTest::newRow("in and task")
            << QString() << (ok + QStringList {QStringLiteral("--task"), QStringLiteral("copy")})
            << QStringLiteral("exactly one");
        QTest::newRow("task option with --in")
            << QString() << (ok + QStringList {QStringLiteral("--d-model"), QStringLiteral("8")})
            << QStringLiteral("--d-model");
    }
    void refusals()
    {
        QFETCH(QString, edit);
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        Arrays a = inputsOnly(load(fixture(QStringLiteral("cli_sgd_causal_mask"))));
        if (edit == QLatin1String("drop targets"))
            a.erase("targets");
        else if (edit == QLatin1String("bad in_proj_weight"))
            a["in_proj_weight"].shape = {12, 36};
        else if (edit == QLatin1String("heads 3"))
            a["num_heads"] = NpyArray::scalarInt(5);
        else if (edit == QLatin1String("bad targets"))
            a["targets"].shape = {3, 12, 5};
        else if (edit == QLatin1String("nan"))
            a["inputs"].values[7] = std::nan("");
        else if (edit == QLatin1String("huge"))
            for (double &v : a["inputs"].values)
                v *= 1e300;
        else if (edit == QLatin1String("bad mask")) {
            a["attn_mask"].shape = {1, 25};
        }
        if (edit == QLatin1String("heads 3"))
            message = QStringLiteral("num_heads = 5");
        const QString in = path(QStringLiteral("refused.npz"));
        save(in, a);
        const QString out = path(QStringLiteral("refused_out.npz"));
        QFile::remove(out);
        args.replaceInStrings(QStringLiteral("OUT"), out);
        const auto run
            = runAttnlab(QStringList {QStringLiteral("train"), QStringLiteral("--in"), in} + args);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(message.toUtf8()), run.err.constData());
        QVERIFY(!QFile::exists(out));
    }

    // A built-in task's step is checked against the memory budget before anything is
    // allocated: (2·B·h + 3)·n² doubles (training::trainingStepBytes, measured).
    void taskMemoryRefused()
    {
        const auto run = runAttnlab(
            {QStringLiteral("train"), QStringLiteral("--task"), QStringLiteral("average"),
             QStringLiteral("--n"), QStringLiteral("4096"), QStringLiteral("--d-model"),
             QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("8"),
             QStringLiteral("--batch-size"), QStringLiteral("2"), QStringLiteral("--steps"),
             QStringLiteral("1")});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("B = 2 sequences x h = 8 heads of n = 4096 tokens hold "
                                  "(2 x B x h + 3) x n x n x 8 bytes = 4480 MiB"),
                 run.err.constData());
        QCOMPARE(training::trainingStepBytes(2, 8, 4096, 8), 35.0 * 4096 * 4096 * 8);
    }
};

QTEST_GUILESS_MAIN(TestCliTrain)
#include "tst_cli_train.moc"
