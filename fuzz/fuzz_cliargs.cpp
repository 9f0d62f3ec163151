// libFuzzer target: the command line of the commands that read models, tokenizers and attention
// stacks (attnlab model, heads, tokenize), parse → plan → run as `attnlab` runs them
// (runGuarded). The input is the command's arguments, one per line, after a first byte that
// picks the command. A temporary folder holds small fixtures under short names — gpt2/ (a
// 2-layer GPT-2 checkpoint with a WordPiece tokenizer.json whose word "wK" is id K), llama/ (a
// Llama checkpoint with grouped-query heads, no tokenizer), stack.npz (an attention stack with
// string tokens), text.txt — and the value of a path option (--model, --in, --file, --out,
// --out-npz, as "--opt value" or "--opt=value") names a file there, so outputs land there too.
// Every input must end in an exit status (0, 1 or 2) with no crash, sanitizer report or hang.
// Arguments that would leave the folder (a '/', a leading ".."), read standard input ("-") or
// lift the memory budget are not tried: they reach files and sizes outside the fuzzer's
// control, not the commands' code.

#include "cli/common.h"

#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QStringList>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

const char *const kSourceFixtures = ATTN_FIXTURE_DIR;

bool copyFile(const QString &from, const QString &to)
{
    QFile::remove(to);
    return QFile::copy(from, to);
}

std::unique_ptr<QTemporaryDir> folder;

/// The fixtures in a temporary folder.
void setUpFolder()
{
    folder = std::make_unique<QTemporaryDir>();
    if (!folder->isValid())
        std::abort();
    const QDir root(folder->path());
    const QString fixtures = QString::fromUtf8(kSourceFixtures);
    root.mkpath(QStringLiteral("gpt2"));
    root.mkpath(QStringLiteral("llama"));
    for (const char *file : {"config.json", "model.safetensors"}) {
        if (!copyFile(fixtures + "/models/gpt2/" + file, root.filePath("gpt2/") + file)
            || !copyFile(fixtures + "/models/llama_gqa/" + file, root.filePath("llama/") + file))
            std::abort();
    }
    QStringList vocab;
    for (int k = 0; k < 48; ++k)
        vocab << QStringLiteral("\"w%1\": %1").arg(k);
    QFile json(root.filePath(QStringLiteral("gpt2/tokenizer.json")));
    if (!json.open(QIODevice::WriteOnly))
        std::abort();
    json.write(QStringLiteral(R"({"version": "1.0", "added_tokens": [], "normalizer": null,
        "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null,
        "model": {"type": "WordPiece", "unk_token": "w0", "vocab": {%1}}})")
                   .arg(vocab.join(QStringLiteral(", ")))
                   .toUtf8());
    json.close();
    if (!copyFile(fixtures + "/headscores/strings.npz", root.filePath(QStringLiteral("stack.npz"))))
        std::abort();
    QFile text(root.filePath(QStringLiteral("text.txt")));
    if (!text.open(QIODevice::WriteOnly))
        std::abort();
    text.write("w1 w2 w3 w1 w2 w3\n");
    text.close();
}

bool isPathOption(const QString &name)
{
    return name == QLatin1String("--model") || name == QLatin1String("--in")
        || name == QLatin1String("--file") || name == QLatin1String("--out")
        || name == QLatin1String("--out-npz");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    static QGuiApplication app(*argc, *argv);
    setUpFolder();
    // The commands' reports go to standard output and error: the fuzzer's own lines stay
    // readable without them.
    if (!std::getenv("ATTN_FUZZ_VERBOSE")) {
        if (!std::freopen("/dev/null", "w", stdout))
            std::abort();
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attn::cli;
    if (size < 1 || size > 4096)
        return 0;
    static const char *const kCommands[] = {"model", "heads", "tokenize"};
    static int (*const kRuns[])(const QStringList &) = {runModel, runHeads, runTokenize};
    const int command = data[0] % 3;
    QStringList arguments {QStringLiteral("attnlab %1").arg(QLatin1String(kCommands[command]))};
    const QString text
        = QString::fromUtf8(reinterpret_cast<const char *>(data + 1), qsizetype(size - 1));
    const QStringList lines = text.split(QLatin1Char('\n'));
    if (lines.size() > 32)
        return 0;
    const QString root = folder->path() + QLatin1Char('/');
    bool pathNext = false;
    for (const QString &arg : lines) {
        if (arg.contains(QLatin1Char('/')) || arg.startsWith(QLatin1String("..")) || arg == "-"
            || arg.contains(QLatin1String("memory-budget")))
            return 0;
        const qsizetype equals = arg.indexOf(QLatin1Char('='));
        if (pathNext)
            arguments << root + arg;
        else if (equals > 0 && isPathOption(arg.left(equals)))
            arguments << arg.left(equals + 1) + root + arg.mid(equals + 1);
        else
            arguments << arg;
        pathNext = isPathOption(arg);
    }
    const int status = runGuarded(kRuns[command], arguments);
    if (status < 0 || status > 2)
        std::abort();
    return 0;
}
