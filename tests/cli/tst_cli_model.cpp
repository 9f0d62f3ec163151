// `attnlab model` run as a process on the PyTorch reference checkpoints of
// tests/reference/make_model_fixtures.py (fixtures/models/<case>/): the .npz it writes holds
// the reference's attention (layers × heads × n × n), logits and hidden states; --layer/--head
// write one slice; --top-k prints the softmax of the last logits; --info describes the model;
// the attention stack over the memory budget is refused with its arithmetic; --model builtin
// runs the built-in model.

#include "testutil.h"

#include "core/io/npy.h"

#include <QColor>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

using namespace attn;

namespace {

using Arrays = std::map<std::string, NpyArray>;

QString caseDir(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/models/%1").arg(name);
}

Arrays load(const QString &path, NpzStrings *strings = nullptr)
{
    Arrays arrays;
    NpzStrings ignored;
    for (auto &[name, array] :
         readNpz(path.toStdString(), std::numeric_limits<std::uint64_t>::max(),
                 strings ? strings : &ignored))
        arrays.emplace(name, std::move(array));
    return arrays;
}

struct Run
{
    int exitCode = -1;
    QString out, err;
};

Run runModel(const QStringList &arguments)
{
    QProcess p;
    p.setProgram(QStringLiteral(ATTNLAB_EXE));
    p.setArguments(QStringList {QStringLiteral("model")} + arguments);
    p.start();
    Run r;
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QString idsText(const NpyArray &ids)
{
    QStringList parts;
    for (double v : ids.values)
        parts << QString::number(std::int64_t(v));
    return parts.join(',');
}

// Largest |a − b| over two equally long value lists (infinity when the lengths differ).
double worst(const std::vector<double> &a, const std::vector<double> &b)
{
    if (a.size() != b.size())
        return INFINITY;
    double w = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        w = std::max(w, std::abs(a[i] - b[i]));
    return w;
}

} // namespace

class TestCliModel : public QObject
{
    Q_OBJECT

private slots:
    void matchesReference_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name : {"gpt2", "llama_bf16", "qwen2_window", "qwen3", "bert", "sharded"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void matchesReference()
    {
        QFETCH(QString, name);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Arrays expected = load(caseDir(name) + "/expected.npz");
        const QString out = dir.filePath("out.npz");
        const Run r = runModel(
            {"--model", caseDir(name), "--ids", idsText(expected.at("ids")), "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Arrays got = load(out);
        QCOMPARE(got.at("ids").values, expected.at("ids").values);
        QCOMPARE(got.at("attention").shape, expected.at("attention").shape);
        QCOMPARE(got.at("attention").type, NpyType::Float32);
        QVERIFY(worst(got.at("attention").values, expected.at("attention").values) <= 1e-5);
        QVERIFY(worst(got.at("logits").values, expected.at("logits").values) <= 1e-4);
        QVERIFY(worst(got.at("hidden").values, expected.at("hidden").values) <= 1e-4);
    }

    void oneLayerAndHead()
    {
        QTemporaryDir dir;
        const Arrays expected = load(caseDir("llama_gqa") + "/expected.npz");
        const QString out = dir.filePath("one.npz");
        const Run r
            = runModel({"--model", caseDir("llama_gqa"), "--ids", idsText(expected.at("ids")),
                        "--layer", "1", "--head", "2", "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Arrays got = load(out);
        const NpyArray &a = got.at("attention");
        const std::int64_t n = expected.at("attention").shape[2];
        QCOMPARE(a.shape, (std::vector<std::int64_t> {1, 1, n, n}));
        // Slice [1][2] of the reference's 2 × 4 × n × n stack.
        const auto &all = expected.at("attention").values;
        const std::size_t base = std::size_t((1 * 4 + 2) * n * n);
        const std::vector<double> slice(all.begin() + std::ptrdiff_t(base),
                                        all.begin() + std::ptrdiff_t(base + std::size_t(n * n)));
        QVERIFY(worst(a.values, slice) <= 1e-5);
        QCOMPARE(got.at("layers").values, std::vector<double> {1});
        QCOMPARE(got.at("heads").values, std::vector<double> {2});
    }

    void topK()
    {
        const Arrays expected = load(caseDir("gpt2") + "/expected.npz");
        const Run r = runModel(
            {"--model", caseDir("gpt2"), "--ids", idsText(expected.at("ids")), "--top-k", "3"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // The reference's last logits row, softmaxed; its largest entry is rank 1.
        const NpyArray &logits = expected.at("logits");
        const std::int64_t vocab = logits.shape[1], rows = logits.shape[0];
        std::vector<double> last(logits.values.end() - vocab, logits.values.end());
        (void)rows;
        const auto best = std::max_element(last.begin(), last.end()) - last.begin();
        double total = 0;
        for (double v : last)
            total += std::exp(v - last[std::size_t(best)]);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        const QStringList first = lines[1].split('\t');
        QCOMPARE(first[0], QStringLiteral("1"));
        QCOMPARE(first[1].toLongLong(), std::int64_t(best));
        QVERIFY(std::abs(first[2].toDouble() - 1.0 / total) < 1e-5);
    }

    // --text through the folder's tokenizer: a WordPiece tokenizer.json whose word "wK" is id K
    // (K < 48, the fixture's vocabulary) turns "w17 w13 …" into the reference's ids, so the
    // .npz must hold the reference's attention and logits, and the text's pieces as tokens.
    void textUsesTheFolderTokenizer()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (const char *file : {"config.json", "model.safetensors"})
            QVERIFY(QFile::copy(caseDir("gpt2") + "/" + file, dir.filePath(file)));
        QStringList vocab;
        for (int k = 0; k < 48; ++k)
            vocab << QStringLiteral("\"w%1\": %1").arg(k);
        QFile json(dir.filePath("tokenizer.json"));
        QVERIFY(json.open(QIODevice::WriteOnly));
        json.write(QStringLiteral(R"({"version": "1.0", "added_tokens": [], "normalizer": null,
            "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null,
            "model": {"type": "WordPiece", "unk_token": "w0", "vocab": {%1}}})")
                       .arg(vocab.join(", "))
                       .toUtf8());
        json.close();
        const Arrays expected = load(caseDir("gpt2") + "/expected.npz");
        QStringList words;
        for (double id : expected.at("ids").values)
            words << QStringLiteral("w%1").arg(std::int64_t(id));
        const QString text = words.join(QStringLiteral("  "));
        const QString out = dir.filePath("out.npz");
        const Run r
            = runModel({"--model", dir.path(), "--text", text, "--out", out, "--top-k", "2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        NpzStrings strings;
        const Arrays got = load(out, &strings);
        QCOMPARE(got.at("ids").values, expected.at("ids").values);
        QVERIFY(worst(got.at("attention").values, expected.at("attention").values) <= 1e-5);
        QVERIFY(worst(got.at("logits").values, expected.at("logits").values) <= 1e-4);
        QCOMPARE(strings.size(), std::size_t(1));
        QCOMPARE(strings[0].first, std::string("tokens"));
        std::vector<std::string> labels;
        for (const QString &w : words)
            labels.push_back(w.toStdString());
        QCOMPARE(strings[0].second.values, labels);
        // The top-k lines name the pieces: "rank id probability logit token".
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.value(0), QStringLiteral("rank\tid\tprobability\tlogit\ttoken"));
        const QStringList first = lines.value(1).split('\t');
        QCOMPARE(first.value(4), QStringLiteral("w%1").arg(first.value(1)));
    }

    void textRefusals()
    {
        // No tokenizer files in the folder: the error names the folder and what was looked for.
        Run r = runModel({"--model", caseDir("gpt2"), "--text", "hello", "--top-k", "1"});
        QCOMPARE(r.exitCode, 2); // the input's fault
        QVERIFY2(r.err.contains("tokenizer.json"), qPrintable(r.err));
        r = runModel({"--model", caseDir("gpt2"), "--text", "a", "--ids", "1", "--top-k", "1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("either --ids or --text"), qPrintable(r.err));
    }

    // --out FILE.png: the head drawn by the heatmap renderers equals the reference's weights of
    // that layer drawn the same way (the same stack written from expected.npz; colours within
    // one step of 255 where float32 rounding moves a cell across a colormap entry).
    void figureDrawsTheReference()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Arrays expected = load(caseDir("gpt2") + "/expected.npz");
        const NpyArray &all = expected.at("attention"); // 2 × 4 × n × n
        const std::int64_t n = all.shape[2];
        NpyArray layer1;
        layer1.type = NpyType::Float32;
        layer1.shape = {1, 4, n, n};
        layer1.values.assign(all.values.begin() + std::ptrdiff_t(4 * n * n), all.values.end());
        std::vector<std::string> tokens;
        for (double id : expected.at("ids").values)
            tokens.push_back(std::to_string(std::int64_t(id)));
        const QString stack = dir.filePath("gpt2 layer 1.npz");
        writeNpz(stack.toStdString(), {{"attentions", layer1}}, false,
                 {{"tokens", NpyStrings {{n}, tokens}}});
        const QString ours = dir.filePath("ours.png"), theirs = dir.filePath("theirs.png");
        Run r = runModel({"--model", caseDir("gpt2"), "--ids", idsText(expected.at("ids")),
                          "--layer", "1", "--head", "2", "--out", ours});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QProcess p;
        p.start(QStringLiteral(ATTNLAB_EXE),
                {"heatmap", "--in", stack, "--view", "head", "--head", "2", "--out", theirs});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QImage a(ours), b(theirs);
        QVERIFY(!a.isNull());
        QCOMPARE(a.size(), b.size());
        int worstChannel = 0;
        for (int y = 0; y < a.height(); ++y)
            for (int x = 0; x < a.width(); ++x) {
                const QColor u = a.pixelColor(x, y), v = b.pixelColor(x, y);
                worstChannel
                    = std::max({worstChannel, std::abs(u.red() - v.red()),
                                std::abs(u.green() - v.green()), std::abs(u.blue() - v.blue())});
            }
        QVERIFY2(worstChannel <= 1, qPrintable(QString::number(worstChannel)));
        // A figure of one head needs its layer.
        r = runModel({"--model", caseDir("gpt2"), "--ids", "1,2", "--head", "2", "--out", ours});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("needs its --layer"), qPrintable(r.err));
    }

    void info()
    {
        const Run r = runModel({"--model", caseDir("qwen3"), "--info"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const char *part : {"family: qwen3", "heads: 4 (key/value heads 2, head_dim 8)",
                                 "hidden: 16", "dtype: F32", "rope: theta 10000"})
            QVERIFY2(r.out.contains(QLatin1String(part)), qPrintable(r.out));
    }

    // --model builtin is the built-in model (models/brown-gpt/ of the source tree for a build
    // tree): one token a byte, and the reference logits of fixtures/builtin/brown_gpt.npz.
    void builtinModel()
    {
        Run r = runModel({"--model", "builtin", "--info"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const char *part : {"family: gpt2", "layers: 4", "vocab: 256", "dtype: F32"})
            QVERIFY2(r.out.contains(QLatin1String(part)), qPrintable(r.out));
        QTemporaryDir dir;
        const QString out = dir.filePath("builtin.npz");
        const Arrays ref = load(QStringLiteral(ATTN_FIXTURE_DIR "/builtin/brown_gpt.npz"));
        QByteArray text;
        for (double v : ref.at("ids").values)
            text.append(char(int(v)));
        r = runModel({"--model", "builtin", "--text", QString::fromUtf8(text), "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Arrays got = load(out);
        QCOMPARE(idsText(got.at("ids")), idsText(ref.at("ids")));
        QVERIFY(worst(got.at("logits").values, ref.at("logits").values) <= 1e-4);
    }

    void refusals()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("x.npz");
        // 300 ids: 2 layers × 4 heads × 300² values × 12 bytes = 8.24 MiB > 1 MiB.
        QStringList many;
        for (int i = 0; i < 300; ++i)
            many << QString::number(i % 48);
        Run r = runModel({"--model", caseDir("llama_gqa"), "--ids", many.join(','), "--out", out,
                          "--memory-budget-mib", "1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("2 layers x 4 heads x 300 x 300 values x 12 bytes"),
                 qPrintable(r.err));
        // One layer is allowed whatever its size.
        r = runModel({"--model", caseDir("llama_gqa"), "--ids", many.join(','), "--layer", "0",
                      "--out", out, "--memory-budget-mib", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // The logits an .npz holds count too (2000 × 48 × 12 bytes = 1.10 MiB > 1 MiB); --top-k
        // keeps only the last row.
        QStringList longer;
        for (int i = 0; i < 2000; ++i)
            longer << QString::number(i % 48);
        r = runModel({"--model", caseDir("llama_gqa"), "--ids", longer.join(','), "--layer", "0",
                      "--head", "0", "--out", out, "--memory-budget-mib", "1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("the logits need 2000 x 48 values x 12 bytes"), qPrintable(r.err));
        r = runModel({"--model", caseDir("llama_gqa"), "--ids", longer.join(','), "--top-k", "1",
                      "--memory-budget-mib", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = runModel({"--model", caseDir("llama_gqa"), "--ids", "1,48", "--out", out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("token id 48 is outside the vocabulary [0, 48)"),
                 qPrintable(r.err));
        r = runModel({"--model", caseDir("llama_gqa"), "--ids", "1", "--head", "4", "--out", out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--head 4 is past the model's last (3)"), qPrintable(r.err));
        r = runModel({"--model", caseDir("gpt2"), "--bogus"});
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.err.section(QLatin1Char('\n'), 0, 0),
                 QStringLiteral("attnlab model: unknown option '--bogus'"));
        r = runModel({"--model", dir.path(), "--info"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("not a model folder: no config.json"), qPrintable(r.err));
        // A GGUF file given as the model: named as GGUF, with what to use instead.
        const QString gguf = dir.filePath("model.gguf");
        QFile file(gguf);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("GGUF\x03\0\0\0", 8));
        file.close();
        r = runModel({"--model", gguf, "--info"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("GGUF"), qPrintable(r.err));
        // Neither input: says which to give.
        r = runModel({"--model", caseDir("gpt2"), "--top-k", "3"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("give the input: --ids"), qPrintable(r.err));
        // config.json itself given as the model: give its folder.
        r = runModel({"--model", caseDir("gpt2") + "/config.json", "--ids", "1", "--top-k", "1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("give the folder holding config.json"), qPrintable(r.err));
        // --out must not replace a file of the model folder, nor write an unknown format.
        const QString copy = dir.filePath("gpt2");
        QVERIFY(QDir().mkpath(copy));
        for (const QString &name : QDir(caseDir("gpt2")).entryList(QDir::Files))
            QVERIFY(QFile::copy(caseDir("gpt2") + "/" + name, copy + "/" + name));
        const QByteArray weights = [&] {
            QFile f(copy + "/model.safetensors");
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        for (const char *target : {"model.safetensors", "config.json"}) {
            r = runModel({"--model", copy, "--ids", "1,2", "--out", copy + "/" + target});
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(QLatin1String(target)), qPrintable(r.err));
        }
        QFile kept(copy + "/model.safetensors");
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), weights);
        r = runModel({"--model", copy, "--ids", "1,2", "--out", dir.filePath("x.txt")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("write .npz"), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("x.txt")));
    }
};

QTEST_GUILESS_MAIN(TestCliModel)
#include "tst_cli_model.moc"
