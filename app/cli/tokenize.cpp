// attnlab tokenize: a model folder's tokenizer (core/text/loader.h: tokenizer.json,
// tokenizer.model, vocab.json + merges.txt, encoder.json + vocab.bpe or vocab.txt) on a text.
//   attnlab tokenize --model DIR (--text T | --file F) [--format table|json] [--no-special]
// table: one line per token, "index id begin end piece" (the piece with \n, \t, \r and the
// backslash escaped); json: {"ids": [...], "tokens": [...], "offsets": [[begin, end], ...]},
// offsets in bytes of the text (UTF-8), end one past. Text from --file is its bytes as they are
// (invalid UTF-8 included: see core/text/alignedtext.h).

#include "common.h"

#include "core/text/loader.h"
#include "core/text/piecelabel.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <cstdio>
#include <memory>
#include <string>
#include <variant>

namespace attn::cli {
namespace {

const QString kCommand = QStringLiteral("tokenize");

enum class Format { Table, Json };

/// What to do, from a parsed command line.
struct Plan
{
    QString model;
    std::string text;
    Format format = Format::Table;
    bool addSpecialTokens = true;
};

/// The plan, or the exit code of a refused command line.
std::variant<Plan, int> parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Tokenize a text with a model folder's tokenizer and print the tokens "
                       "with their ids and byte offsets."));
    parser.addOptions({
        {QStringLiteral("model"),
         QStringLiteral("Model folder: tokenizer.json, tokenizer.model, vocab.json + merges.txt, "
                        "encoder.json + vocab.bpe or vocab.txt; builtin: the built-in model's."),
         QStringLiteral("dir")},
        {QStringLiteral("text"), QStringLiteral("The text to tokenize."), QStringLiteral("text")},
        {QStringLiteral("file"), QStringLiteral("Tokenize this file's bytes instead."),
         QStringLiteral("path")},
        {QStringLiteral("format"), QStringLiteral("table (default) or json."),
         QStringLiteral("format"), QStringLiteral("table")},
        {QStringLiteral("no-special"),
         QStringLiteral("Leave out the special tokens the post-processor adds (BOS, [CLS] ...).")},
    });
    if (const auto exit = parseArguments(parser, kCommand, arguments)) {
        return *exit;
    }
    Plan plan;
    plan.model = modelFolderArgument(parser.value(QStringLiteral("model")));
    if (plan.model.isEmpty()) {
        return usageError(kCommand, QStringLiteral("--model is required"));
    }
    const bool hasText = parser.isSet(QStringLiteral("text"));
    const bool hasFile = parser.isSet(QStringLiteral("file"));
    if (hasText == hasFile) {
        return usageError(kCommand, QStringLiteral("give exactly one of --text and --file"));
    }
    if (hasText) {
        plan.text = parser.value(QStringLiteral("text")).toStdString();
    } else {
        const QString path = parser.value(QStringLiteral("file"));
        // Only regular files: a FIFO or a device would block or never end.
        const QFileInfo info(path);
        if (!info.isFile())
            return usageError(kCommand,
                              QStringLiteral("--file %1: %2")
                                  .arg(path,
                                       info.exists() ? QStringLiteral("not a regular file")
                                                     : QStringLiteral("no such file")));
        constexpr qint64 maxTextBytes = qint64(1) << 30;
        if (info.size() > maxTextBytes)
            return usageError(kCommand,
                              QStringLiteral("--file %1: %2 bytes, more than the %3 this reads")
                                  .arg(path)
                                  .arg(info.size())
                                  .arg(maxTextBytes));
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            return usageError(kCommand, QStringLiteral("--file %1: %2").arg(path, f.errorString()));
        }
        const QByteArray bytes = f.readAll();
        plan.text.assign(bytes.constData(), static_cast<std::size_t>(bytes.size()));
    }
    const QString format = parser.value(QStringLiteral("format"));
    if (format == QLatin1String("json")) {
        plan.format = Format::Json;
    } else if (format != QLatin1String("table")) {
        return usageError(
            kCommand, QStringLiteral("--format: expected table or json, found '%1'").arg(format));
    }
    plan.addSpecialTokens = !parser.isSet(QStringLiteral("no-special"));
    return plan;
}

/// The piece for a table line: \n, \t, \r and the backslash escaped.
QString escaped(const std::string &piece)
{
    QString out;
    for (QChar c : QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size()))) {
        if (c == QLatin1Char('\n')) {
            out += QLatin1String("\\n");
        } else if (c == QLatin1Char('\t')) {
            out += QLatin1String("\\t");
        } else if (c == QLatin1Char('\r')) {
            out += QLatin1String("\\r");
        } else if (c == QLatin1Char('\\')) {
            out += QLatin1String("\\\\");
        } else {
            out += c;
        }
    }
    return out;
}

// `labels`: what each token stands for as the window and `model --top-k` show it
// (text::tokenLabels: "␣" for a space, "‹NN›" for a split byte).
QByteArray asTable(const text::Encoding &e, const std::vector<std::string> &labels)
{
    QString out;
    QTextStream s(&out);
    s << "index\tid\tbegin\tend\tpiece\tlabel\n";
    for (std::size_t k = 0; k < e.tokens.size(); ++k) {
        const text::Token &t = e.tokens[k];
        s << k << '\t' << t.id << '\t' << t.begin << '\t' << t.end << '\t' << escaped(t.piece)
          << '\t' << QString::fromStdString(labels[k]) << '\n';
    }
    s.flush();
    return out.toUtf8();
}

QByteArray asJson(const text::Encoding &e, const std::vector<std::string> &labels)
{
    QJsonArray ids, tokens, offsets, labelArray;
    for (std::size_t k = 0; k < e.tokens.size(); ++k) {
        const text::Token &t = e.tokens[k];
        ids.append(static_cast<qint64>(t.id));
        tokens.append(QString::fromStdString(t.piece));
        offsets.append(QJsonArray {static_cast<qint64>(t.begin), static_cast<qint64>(t.end)});
        labelArray.append(QString::fromStdString(labels[k]));
    }
    const QJsonObject root {
        {"ids", ids}, {"tokens", tokens}, {"offsets", offsets}, {"labels", labelArray}};
    return QJsonDocument(root).toJson(QJsonDocument::Compact) + '\n';
}

int run(const Plan &plan)
{
    std::unique_ptr<text::Tokenizer> tokenizer;
    try {
        tokenizer = text::loadTokenizer(plan.model.toStdString());
    } catch (const text::TokenizerError &e) { // the folder's files: the input's fault
        return inputError(kCommand, QString::fromUtf8(e.what()));
    }
    const text::Encoding e = tokenizer->encode(plan.text, plan.addSpecialTokens);
    const std::vector<std::string> labels = text::tokenLabels(*tokenizer, e, plan.text);
    const QByteArray out = plan.format == Format::Json ? asJson(e, labels) : asTable(e, labels);
    std::fwrite(out.constData(), 1, static_cast<std::size_t>(out.size()), stdout);
    std::fflush(stdout);
    return ExitOk;
}

} // namespace

int runTokenize(const QStringList &arguments)
{
    const auto parsed = parse(arguments);
    if (const int *exit = std::get_if<int>(&parsed)) {
        return *exit;
    }
    return run(std::get<Plan>(parsed));
}

} // namespace attn::cli
