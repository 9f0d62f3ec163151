// `attnlab tokenize` end to end: runs the built executable (ATTNLAB_EXE) on the GPT-2 and
// Llama 3 reference folders of the tokenizer_refs fixture (tests/CMakeLists.txt) and checks its
// JSON and table output against the ids of tests/reference/tokenizers/goldens; bad command
// lines exit 2 naming the problem, an unusable folder exits 1.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kModels = QStringLiteral(ATTN_TOKENIZER_MODELS);

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QString err;
};

Run tokenize(const QStringList &arguments)
{
    QProcess p;
    p.setProgram(QStringLiteral(ATTNLAB_EXE));
    p.setArguments(QStringList {QStringLiteral("tokenize")} + arguments);
    p.start();
    Run r;
    if (!p.waitForFinished(120000)) {
        return r;
    }
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

} // namespace

class TestCliTokenize : public QObject
{
    Q_OBJECT

private slots:
    void json()
    {
        const Run r = tokenize(
            {"--model", kModels + "/gpt2-openai", "--text", "Hello world", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["ids"].toArray(), (QJsonArray {15496, 995}));
        QCOMPARE(o["tokens"].toArray(), (QJsonArray {"Hello", "\u0120world"}));
        QCOMPARE(o["offsets"].toArray(), (QJsonArray {QJsonArray {0, 5}, QJsonArray {5, 11}}));
        // The labels the window shows: the space as "␣", not the byte-level "Ġ".
        QCOMPARE(o["labels"].toArray(), (QJsonArray {"Hello", "\u2423world"}));
    }

    void fileAndTable()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("text.txt");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("Hello world\n");
        f.close();
        const Run r = tokenize({"--model", kModels + "/llama3", "--file", path});
        QCOMPARE(r.exitCode, 0);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 4); // header, Hello, Ġworld, Ċ
        QCOMPARE(lines[0], QByteArray("index\tid\tbegin\tend\tpiece\tlabel"));
        QCOMPARE(lines[1], QByteArray("0\t9906\t0\t5\tHello\tHello"));
        QCOMPARE(lines[2], QString::fromUtf8("1\t1917\t5\t11\t\u0120world\t\u2423world").toUtf8());
        QVERIFY(lines[3].startsWith("2\t198\t11\t12\t"));
        QVERIFY2(lines[3].endsWith(QString::fromUtf8("\t\u21b5").toUtf8()), lines[3].constData());
    }

    void refused_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("no model") << QStringList {"--text", "x"} << 2 << "--model is required";
        QTest::newRow("no text") << QStringList {"--model", kModels + "/llama3"} << 2
                                 << "exactly one of --text and --file";
        QTest::newRow("both") << QStringList {"--model", kModels + "/llama3",
                                              "--text",  "x",
                                              "--file",  "y"}
                              << 2 << "exactly one of --text and --file";
        QTest::newRow("bad format")
            << QStringList {"--model", kModels + "/llama3", "--text", "x", "--format", "xml"} << 2
            << "--format";
        QTest::newRow("missing file")
            << QStringList {"--model", kModels + "/llama3", "--file", "/nonexistent/x.txt"} << 2
            << "--file /nonexistent/x.txt";
        QTest::newRow("no tokenizer")
            << QStringList {"--model", "/", "--text", "x"} << 2 << "no tokenizer files";
    }

    void refused()
    {
        QFETCH(QStringList, arguments);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const Run r = tokenize(arguments);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliTokenize)
#include "tst_cli_tokenize.moc"
