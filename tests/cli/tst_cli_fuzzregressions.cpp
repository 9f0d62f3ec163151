// Inputs found by fuzzing and by hostile command lines (tests/reference/fixtures/fuzz/), run
// through the attnlab executable: each exits with status 2 and a message naming the problem,
// writes nothing, and (in the sanitizer build of .ci/run) draws no sanitizer report. Also the
// padding range of heatmap and its all-or-nothing multi-file export. Core-level tests of the
// same inputs: tst_fuzzregressions.

#include "core/io/npy.h"
#include "testutil.h"

#include "ui/document/sessionfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <csignal>
#include <string>
#include <vector>

using namespace attn;

namespace {

QString fuzzInput(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/fuzz/%1").arg(name);
}

struct Run
{
    int exitCode = -1;
    QString out, err;
};

/// attnlab with `arguments`; `fileSizeLimit` > 0 caps every file the child writes (RLIMIT_FSIZE,
/// what a full disk amounts to for the file being written: the write fails with EFBIG).
Run attnlab(const QStringList &arguments, rlim_t fileSizeLimit = 0)
{
    QProcess p;
    p.setProgram(QStringLiteral(ATTNLAB_EXE));
    p.setArguments(arguments);
    if (fileSizeLimit > 0) {
        p.setChildProcessModifier([fileSizeLimit] {
            std::signal(SIGXFSZ, SIG_IGN); // a failed write, not a killed process
            const rlimit limit {fileSizeLimit, fileSizeLimit};
            setrlimit(RLIMIT_FSIZE, &limit);
        });
    }
    p.start();
    Run r;
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit) {
        r.err = QStringLiteral("crashed or timed out: ")
            + QString::fromUtf8(p.readAllStandardError());
        return r;
    }
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

/// `attnlab compute --in npz` and `attnlab heatmap --in npz`, writing `out`.npz / `out`.png.
QList<QStringList> computeAndHeatmap(const QString &npz, const QString &out)
{
    return {{QStringLiteral("compute"), QStringLiteral("--in"), npz, QStringLiteral("--out"),
             out + QStringLiteral(".npz")},
            {QStringLiteral("heatmap"), QStringLiteral("--in"), npz, QStringLiteral("--out"),
             out + QStringLiteral(".png")}};
}

/// Every entry of `dir`, hidden ones included (staging folders start with a dot).
QStringList everything(const QString &dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

NpyArray matrixArray(Index rows, Index cols)
{
    MatrixD m(rows, cols);
    for (Index i = 0; i < m.size(); ++i)
        m.data()[i] = 0.5 - 0.0625 * double(i % 11);
    return NpyArray::fromMatrix<double>(m);
}

} // namespace

class TestCliFuzzRegressions : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void computeRefusesFuzzInputs_data()
    {
        QTest::addColumn<QString>("input"); // a committed input, or "generated: …"
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("message");
        QTest::newRow("F2 Fortran-order stride overflow")
            << "cli-fortran-stride-overflow.npz" << QStringList {}
            << "member 'query.npy': shape (0, 5123094776113237558, 5) has more elements than fit "
               "in int64";
        QTest::newRow("F3 zero queries") << "cli-mh-zero-queries.npz" << QStringList {}
                                         << "array 'query' float64 (0, 32) has an empty axis";
        QTest::newRow("F3 zero keys") << "cli-mh-zero-keys.npz" << QStringList {}
                                      << "array 'key' float64 (0, 32) has an empty axis";
        QTest::newRow("F4 d_model 0, num_heads INT64_MAX")
            << "cli-mh-dmodel0-hugeheads.npz" << QStringList {}
            << "member 'num_heads.npy': int64 value 9223372036854775807 at flat index 0 has no "
               "exact float64";
        // 2^62: beyond any d_model, and exact in the double the writer converts from.
        QTest::newRow("F4 num_heads 2^62")
            << "generated: num_heads 2^62" << QStringList {}
            << "num_heads = 4611686018427387904 must be at least 1 and divide d_model = 16";
        QTest::newRow("F8 256 MiB of uint8 in 255 KiB, budget 16")
            << "oom-npz-amplify-256mi.npz" << QStringList {"--memory-budget-mib", "16"}
            << "declare 2304 MiB once read (as stored plus as float64; the largest is 'query' "
               "uint8 (268435456,)), over --memory-budget-mib 16: nothing was decompressed";
        QTest::newRow("F8 default budget")
            << "oom-npz-amplify-256mi.npz" << QStringList {}
            << "over --memory-budget-mib 2048: nothing was decompressed";
        // Separate projections: a d_model-wide encoding cannot be added to a key of kdim
        // columns (it read past the key's buffer, then misstated its shape).
        QTest::newRow("N2 sinusoidal, kdim 1 < d_model 4")
            << "cli-separate-proj-kdim-lt-dmodel.npz" << QStringList {"--positional", "sinusoidal"}
            << "the key is 3 x 1 (kdim = 1) and d_model = 4";
        QTest::newRow("N2b sinusoidal, kdim 8 > d_model 2")
            << "cli-separate-proj-kdim-gt-dmodel.npz" << QStringList {"--positional", "sinusoidal"}
            << "the key is 3 x 8 (kdim = 8) and d_model = 2";
    }

    // N1: separate q/k/v projections with a positional scheme or a window were projected
    // through the empty in_proj_weight (a crash, or an output of 0). One query and one key: the
    // weight is 1 and the output is out_proj(v_proj(value)) = 1 whatever the positions.
    void separateProjectionsWithPositions_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("expected"); // the output's entries, as text
        QTest::newRow("1 x 1 alibi")
            << "cli-separate-proj-1x1.npz" << QStringList {"--positional", "alibi"} << "1";
        QTest::newRow("1 x 1 window")
            << "cli-separate-proj-1x1.npz" << QStringList {"--window", "1"} << "1";
    }
    void separateProjectionsWithPositions()
    {
        QFETCH(QString, input);
        QFETCH(QStringList, options);
        QFETCH(QString, expected);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
        const QString out = m_dir.filePath(tag + QStringLiteral("_out.npz"));
        const Run r = attnlab(QStringList {QStringLiteral("compute"), QStringLiteral("--in"),
                                           fuzzInput(input), QStringLiteral("--out"), out}
                              + options);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains(QLatin1String("runtime error")), qPrintable(r.err)); // UBSan
        const NpyArray output = readNpzMember(out.toStdString(), "output");
        QCOMPARE(output.values.size(), std::size_t(1));
        QCOMPARE(output.values[0], expected.toDouble());
        const NpyArray weights = readNpzMember(out.toStdString(), "weights");
        QCOMPARE(weights.values.size(), std::size_t(1));
        QCOMPARE(weights.values[0], 1.0);
    }

    // N3: heatmap --in and a session naming a tensor file read the archive through the same
    // budget as compute: what the headers declare decides before any member is decompressed.
    void heatmapReadsArchivesWithinTheBudget_data()
    {
        QTest::addColumn<bool>("viaSession");
        QTest::newRow("--in") << false;
        QTest::newRow("--session") << true;
    }
    void heatmapReadsArchivesWithinTheBudget()
    {
        QFETCH(bool, viaSession);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).remove('-');
        const QString png = m_dir.filePath(tag + QStringLiteral("_bomb.png"));
        QStringList arguments {QStringLiteral("heatmap")};
        if (viaSession) {
            const QString session = m_dir.filePath(QStringLiteral("bomb.attnlab.json"));
            QFile f(session);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral("{\"format\": \"attnlab-session\", \"version\": 1, "
                                   "\"parameters\": {}, \"tensors\": {\"file\": \"%1\"}}")
                        .arg(fuzzInput(QStringLiteral("oom-npz-amplify-256mi.npz")))
                        .toUtf8());
            f.close();
            arguments << QStringLiteral("--session") << session;
        } else {
            arguments << QStringLiteral("--in")
                      << fuzzInput(QStringLiteral("oom-npz-amplify-256mi.npz"));
        }
        rusage before {};
        getrusage(RUSAGE_CHILDREN, &before);
        const Run r = attnlab(arguments << QStringLiteral("--out") << png);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("nothing was decompressed")), qPrintable(r.err));
        QVERIFY(!QFile::exists(png));
        rusage after {};
        getrusage(RUSAGE_CHILDREN, &after);
        QVERIFY2(after.ru_maxrss < 1024 * 1024,
                 qPrintable(QStringLiteral("peak RSS %1 KiB").arg(after.ru_maxrss)));
    }

    // A session path that is a FIFO blocked in open() forever: only regular files are read.
    void sessionThatIsAPipeIsRefused()
    {
        const QString fifo = m_dir.filePath(QStringLiteral("session.fifo"));
        QCOMPARE(mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        const QString png = m_dir.filePath(QStringLiteral("fifo.png"));
        const Run r = attnlab({QStringLiteral("heatmap"), QStringLiteral("--session"), fifo,
                               QStringLiteral("--out"), png});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("is not a regular file")), qPrintable(r.err));
        QVERIFY(!QFile::exists(png));
    }
    // An archive of 65 535 members: the refusals of compute and heatmap name a few and the
    // count, in one short line (not 1.3 MB).
    void manyMembersNamedBriefly()
    {
        std::vector<std::pair<std::string, NpyArray>> members;
        for (int i = 0; i < 65535; ++i)
            members.emplace_back(QStringLiteral("m%1").arg(i).toStdString(),
                                 NpyArray::scalarInt(i));
        const QString npz = m_dir.filePath(QStringLiteral("many.npz"));
        writeNpz(npz.toStdString(), members, false);
        for (const QStringList &args :
             computeAndHeatmap(npz, m_dir.filePath(QStringLiteral("many_out")))) {
            const Run r = attnlab(args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(QLatin1String("and 65527 more")), qPrintable(r.err.left(2000)));
            QVERIFY2(r.err.size() < 1000, qPrintable(r.err.left(2000)));
        }
    }
    // Inputs whose scores overflow: the input's fault, exit status 2 from compute and from
    // heatmap alike.
    void overflowIsAnInputErrorEverywhere()
    {
        MatrixD q = MatrixD::Constant(3, 4, 1e200);
        const QString npz = m_dir.filePath(QStringLiteral("overflow.npz"));
        writeNpz(npz.toStdString(),
                 {{"query", NpyArray::fromMatrix<double>(q)},
                  {"key", NpyArray::fromMatrix<double>(q)},
                  {"value", NpyArray::fromMatrix<double>(q)}});
        const QString out = m_dir.filePath(QStringLiteral("overflow_out"));
        for (const QStringList &args : computeAndHeatmap(npz, out)) {
            const Run r = attnlab(args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(QLatin1String("overflowed")), qPrintable(r.err));
        }
        QVERIFY(!QFile::exists(out + QStringLiteral(".png")));
    }
    void computeRefusesFuzzInputs()
    {
        QFETCH(QString, input);
        QFETCH(QStringList, options);
        QFETCH(QString, message);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
        QString in = fuzzInput(input);
        if (input == QLatin1String("generated: num_heads 2^62")) {
            in = m_dir.filePath(tag + QStringLiteral(".npz"));
            const Index d = 16;
            NpyArray heads;
            heads.type = NpyType::Int64;
            heads.values = {4611686018427387904.0};
            writeNpz(in.toStdString(),
                     {{"query", matrixArray(3, d)},
                      {"key", matrixArray(3, d)},
                      {"value", matrixArray(3, d)},
                      {"in_proj_weight", matrixArray(3 * d, d)},
                      {"out_proj_weight", matrixArray(d, d)},
                      {"num_heads", heads}});
        }
        const QString out = m_dir.filePath(tag + QStringLiteral("_out.npz"));
        rusage before {};
        getrusage(RUSAGE_CHILDREN, &before);
        const Run r = attnlab(QStringList {QStringLiteral("compute"), QStringLiteral("--in"), in,
                                           QStringLiteral("--out"), out}
                              + options);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QLatin1String("runtime error")), qPrintable(r.err)); // UBSan
        QVERIFY(r.out.isEmpty());
        QVERIFY(!QFile::exists(out));
        QCOMPARE(QDir(m_dir.path())
                     .entryList({tag + QStringLiteral("_out*")}, QDir::Files | QDir::Hidden),
                 QStringList());
        if (input.startsWith(QLatin1String("oom"))) {
            // Nothing was decompressed: the child's peak memory stayed far below the 2.4 GiB
            // the archive expands to (ru_maxrss in KiB; the largest child so far).
            rusage after {};
            getrusage(RUSAGE_CHILDREN, &after);
            QVERIFY2(after.ru_maxrss < 1024 * 1024,
                     qPrintable(QStringLiteral("peak RSS %1 KiB").arg(after.ru_maxrss)));
        }
    }

    // F5: view-state numbers are range-checked before any cast; a session holding one out of
    // range is refused, naming it (it used to be cast to int: undefined, and then shown).
    void sessionViewOutOfRange_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("message");
        QTest::newRow("window 1e300")
            << "session-window-1e300.min.json"
            << "invalid view state: \"view\": \"heatmap\": "
               "\"window\"[0] must be an integer in [0, 4096], got 1e+300";
        QTest::newRow("junk view") << "cli-session-view-junk.json"
                                   << "invalid view state: \"view\": \"heatmap\": \"head\" "
                                      "must be an integer in [0, 4096], got 1e+300";
    }
    void sessionViewOutOfRange()
    {
        QFETCH(QString, file);
        QFETCH(QString, message);
        // The reader itself (what the window's File → Open Session uses) …
        QString error;
        QVERIFY(!SessionFile::load(fuzzInput(file), &error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY2(error.contains(fuzzInput(file)), qPrintable(error));
        // … and heatmap --session: exit 2, nothing written.
        const QString out = m_dir.filePath(file + QStringLiteral(".png"));
        const Run r = attnlab({QStringLiteral("heatmap"), QStringLiteral("--session"),
                               fuzzInput(file), QStringLiteral("--out"), out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
    }

    void sessionViewChecks_data()
    {
        QTest::addColumn<QString>("view"); // the "view" object
        QTest::addColumn<QString>("message"); // empty: accepted
        QTest::newRow("window in range") << R"({"heatmap": {"window": [0, 1, 4, 3]}})"
                                         << "";
        QTest::newRow("window size 0") << R"({"heatmap": {"window": [0, 0, 0, 3]}})"
                                       << R"("window"[2] must be an integer in [1, 4096], got 0)";
        QTest::newRow("window of 3")
            << R"({"heatmap": {"window": [0, 0, 3]}})"
            << R"("window" must be [key0, query0, keys, queries], got [0,0,3])";
        QTest::newRow("window -1") << R"({"heatmap": {"window": [-1, 0, 1, 1]}})"
                                   << R"("window"[0] must be an integer in [0, 4096], got -1)";
        QTest::newRow("hidden key 0.5")
            << R"({"transform": {"hidden_keys": [1, 0.5]}})"
            << R"("hidden_keys"[1] must be an integer in [0, 4095], got 0.5)";
        QTest::newRow("hidden key string")
            << R"({"transform": {"hidden_keys": ["x"]}})"
            << R"("hidden_keys"[0] must be an integer in [0, 4095], got "x")";
        QTest::newRow("compare d_k 1e12") << R"({"compare": {"d_k": 1000000000000}})"
                                          << R"("d_k" must be an integer in [1, 4096], got 1e+12)";
        QTest::newRow("compare alpha 1e308") << R"({"compare": {"alpha": 1e308}})"
                                             << R"("alpha" must be a number in [0, 1], got 1e+308)";
        QTest::newRow("compare head -1") << R"({"compare": {"head": -1}})"
                                         << R"("head" must be an integer in [0, 4096], got -1)";
        QTest::newRow("compare in range")
            << R"({"compare": {"alpha": 0.5, "temperature": 2, "d_k": 8, "head": 1}})"
            << "";
    }
    void sessionViewChecks()
    {
        QFETCH(QString, view);
        QFETCH(QString, message);
        const QByteArray json = QStringLiteral(R"({"format": "attnlab-session", "version": 1, )"
                                               R"("parameters": {}, "view": %1})")
                                    .arg(view)
                                    .toUtf8();
        QString error;
        const auto document = SessionFile::fromJson(json, &error);
        QCOMPARE(document.has_value(), message.isEmpty());
        QVERIFY2(error.contains(message), qPrintable(error));
    }

    // A session's tokens must match n (for encoder-decoder attention n or n + n_k): refused
    // naming both numbers, where it used to load with positions labelling the rest.
    void sessionTokensMatchN_data()
    {
        QTest::addColumn<QString>("parameters");
        QTest::addColumn<QString>("message"); // empty: accepted
        QTest::newRow("3 tokens, n 5")
            << R"("n": 5, "tokens": ["a", "b", "c"])"
            << "'tokens' holds 3 tokens but n = 5: there must be one token per position";
        QTest::newRow("6 tokens, n 5") << R"("n": 5, "tokens": ["a", "b", "c", "d", "e", "f"])"
                                       << "'tokens' holds 6 tokens but n = 5";
        QTest::newRow("5 tokens, n 5") << R"("n": 5, "tokens": ["a", "b", "c", "d", "e"])"
                                       << "";
        QTest::newRow("cross, n + n_k tokens")
            << R"("kind": "cross", "n": 2, "n_k": 3, "tokens": ["a", "b", "c", "d", "e"])"
            << "";
        QTest::newRow("cross, n tokens")
            << R"("kind": "cross", "n": 2, "n_k": 3, "tokens": ["a", "b"])"
            << "";
        QTest::newRow("cross, 4 tokens")
            << R"("kind": "cross", "n": 2, "n_k": 3, "tokens": ["a", "b", "c", "d"])"
            << "'tokens' holds 4 tokens but n = 2 and n_k = 3";
    }
    void sessionTokensMatchN()
    {
        QFETCH(QString, parameters);
        QFETCH(QString, message);
        const QByteArray json = QStringLiteral(R"({"format": "attnlab-session", "version": 1, )"
                                               R"("parameters": {%1}})")
                                    .arg(parameters)
                                    .toUtf8();
        QString error;
        const auto document = SessionFile::fromJson(json, &error);
        QCOMPARE(document.has_value(), message.isEmpty());
        QVERIFY2(error.contains(message), qPrintable(error));
        if (message.isEmpty())
            return;
        // heatmap --session refuses it too (exit 2, nothing written).
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
        const QString session = m_dir.filePath(tag + QStringLiteral(".attnlab.json"));
        QFile f(session);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(json);
        f.close();
        const QString out = m_dir.filePath(tag + QStringLiteral(".png"));
        const Run r = attnlab({QStringLiteral("heatmap"), QStringLiteral("--session"), session,
                               QStringLiteral("--out"), out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
    }

    // F9: the default padding (2) is no error with fewer keys; an explicit count is checked
    // against [0, n_k] (the window's and the session's range) with the padding mask only.
    void heatmapPaddingRange_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QStringList base {"heatmap", "--d-model", "8", "--heads", "1"};
        QTest::newRow("--n 1, no mask")
            << base + QStringList {"--n", "1", "--mask", "none"} << 0 << "";
        QTest::newRow("--n-k 1 cross")
            << base + QStringList {"--n", "3", "--kind", "cross", "--n-k", "1"} << 0 << "";
        QTest::newRow("--n 1, padding mask, default count")
            << base + QStringList {"--n", "1", "--mask", "padding"} << 0 << "";
        QTest::newRow("--padding 1 of n_k 1")
            << base + QStringList {"--n", "1", "--mask", "padding", "--padding", "1"} << 0 << "";
        QTest::newRow("--padding 2 of n_k 1")
            << base + QStringList {"--n", "1", "--mask", "padding", "--padding", "2"} << 2
            << "--padding must be an integer in [0, 1], got '2'";
        QTest::newRow("--padding 2 of cross n_k 1")
            << base + QStringList {"--n", "4",      "--kind",  "cross",     "--n-k",
                                   "1",   "--mask", "padding", "--padding", "2"}
            << 2 << "--padding must be an integer in [0, 1], got '2'";
        QTest::newRow("--padding -1 without the mask")
            << base + QStringList {"--n", "4", "--padding", "-1"} << 2
            << "--padding must be an integer in [0, 4096], got '-1'";
    }
    void heatmapPaddingRange()
    {
        QFETCH(QStringList, arguments);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
        const QString out = m_dir.filePath(tag + QStringLiteral(".png"));
        const Run r = attnlab(arguments + QStringList {QStringLiteral("--out"), out});
        QVERIFY2(r.exitCode == exitCode, qPrintable(r.err));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(QFileInfo(out).isFile() && QFileInfo(out).size() > 0, exitCode == 0);
    }

    // F10: --out, --batch-dir and --data are written all or nothing. A file-size limit on the
    // child makes the large .npz of --data fail after the PNGs were complete: none is left.
    void multiFileExportIsAllOrNothing()
    {
        const QString dir = m_dir.filePath(QStringLiteral("set"));
        QVERIFY(QDir().mkpath(dir));
        const QStringList arguments {
            "heatmap", "--n",         "200",          "--d-model",   "8",
            "--heads", "4",           "--width",      "600",         "--height",
            "600",     "--out",       dir + "/a.png", "--batch-dir", dir + "/heads",
            "--data",  dir + "/a.npz"};
        // The weights and scores of 4 heads of 200 x 200 float64: about 2.6 MB compressed;
        // each PNG of 600 x 600 pixels is far below the limit.
        const Run failed = attnlab(arguments, rlim_t(1) << 20);
        QCOMPARE(failed.exitCode, 1);
        QVERIFY2(failed.err.contains(dir + QStringLiteral("/a.npz")), qPrintable(failed.err));
        QVERIFY2(!failed.err.contains(QLatin1String(".attnlab-export")), qPrintable(failed.err));
        QCOMPARE(everything(dir), QStringList()); // no PNG, no head file, no staging folder

        const Run ok = attnlab(arguments);
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
        QCOMPARE(everything(dir), (QStringList {"a.npz", "a.png", "heads"}));
        QCOMPARE(everything(dir + QStringLiteral("/heads")),
                 (QStringList {"head-0.png", "head-1.png", "head-2.png", "head-3.png",
                               "head-mean.png"}));
        const auto data = readNpz((dir + QStringLiteral("/a.npz")).toStdString());
        QVERIFY(!data.empty());
    }

    // animate on a full disk (a file-size limit on the child): no frame and no frames.csv are
    // left behind (a truncated frame was), and a complete run writes them all.
    void animateIsAllOrNothing()
    {
        const QString dir = m_dir.filePath(QStringLiteral("frames"));
        QVERIFY(QDir().mkpath(dir));
        // Frames of about 110, 118 and 92 KB: under a 113 KB limit the first is written and the
        // second fails.
        const QStringList arguments {"animate", "--param",  "tau", "--from",    "0.1", "--to",
                                     "10",      "--frames", "3",   "--n",       "48",  "--width",
                                     "1200",    "--height", "900", "--out-dir", dir};
        const Run failed = attnlab(arguments, rlim_t(113000));
        QCOMPARE(failed.exitCode, 1);
        QVERIFY2(failed.err.contains(dir), qPrintable(failed.err));
        QVERIFY2(failed.err.contains(QLatin1String("frame_001.png")), qPrintable(failed.err));
        QCOMPARE(everything(dir), QStringList());

        const Run ok = attnlab(arguments);
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
        QCOMPARE(everything(dir),
                 (QStringList {"frame_000.png", "frame_001.png", "frame_002.png", "frames.csv"}));
    }
};

QTEST_GUILESS_MAIN(TestCliFuzzRegressions)
#include "tst_cli_fuzzregressions.moc"
