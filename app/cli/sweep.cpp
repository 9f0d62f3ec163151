// attnlab sweep: the E2 scaling sweep (why divide by √d_k), docs/experiments.md.
//   attnlab sweep --seed 1 --trials 4000 --keys 16 --dk 4,16,64,256,1024
//                 [--generator numpy|torch] [--format table|csv|json] [--out FILE]

#include "common.h"

#include "core/experiments/experiments.h"

#include <QTextStream>

#include <limits>

namespace attn::cli {

int runSweep(const QStringList &arguments)
{
    const QString command = QStringLiteral("sweep");
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Print the E2 scaling sweep of docs/experiments.md: for each d_k, the std of raw scores "
        "q\u00b7k next to sqrt(d_k), and the mean largest softmax weight and mean softmax-"
        "Jacobian norm without and with the 1/sqrt(d_k) scale. One generator (NumPy's or, with "
        "--generator torch, PyTorch's): for each d_k, q (trials x 1 x d_k) then k (trials x keys "
        "x d_k). Columns: d_k, "
        "score_std, sqrt_dk, max_weight_unscaled, jacobian_norm_unscaled, max_weight_scaled, "
        "jacobian_norm_scaled. Same numbers as 'attnlab experiment E2'."));
    const QCommandLineOption seed(
        QStringLiteral("seed"),
        QStringLiteral("Generator seed (numpy.random.default_rng(S) or torch.manual_seed(S))."),
        QStringLiteral("S"), QStringLiteral("1"));
    const QCommandLineOption generator(
        QStringLiteral("generator"),
        QStringLiteral("Random streams: numpy (numpy.random.default_rng) or torch (PyTorch 1.13's "
                       "CPU generator: torch.randn in float64, bit for bit)."),
        QStringLiteral("numpy|torch"), QStringLiteral("numpy"));
    const QCommandLineOption trials(QStringLiteral("trials"),
                                    QStringLiteral("Queries per d_k (one per trial)."),
                                    QStringLiteral("N"), QStringLiteral("4000"));
    const QCommandLineOption keys(QStringLiteral("keys"), QStringLiteral("Keys per query."),
                                  QStringLiteral("K"), QStringLiteral("16"));
    const QCommandLineOption dk({QStringLiteral("dk"), QStringLiteral("d-k")},
                                QStringLiteral("Comma-separated d_k values, in order."),
                                QStringLiteral("LIST"), QStringLiteral("4,16,64,256,1024"));
    const QCommandLineOption format(QStringLiteral("format"),
                                    QStringLiteral("Output format: table, csv or json."),
                                    QStringLiteral("format"), QStringLiteral("table"));
    const QCommandLineOption out(QStringLiteral("out"),
                                 QStringLiteral("Write the output to FILE instead of stdout."),
                                 QStringLiteral("file"));
    addOptionsWithDefaults(parser, {seed, generator, trials, keys, dk, format, out});
    if (const std::optional<int> done = parseCommandLine(parser, command, arguments))
        return *done;
    if (const auto refused
        = checkOutputPaths(command, {{QStringLiteral("--out"), parser.value(out)}}))
        return *refused;

    // The ranges are E2's parameter ranges (core/experiments/e02_scaling_sweep.cpp).
    QString error;
    const auto seedValue = seedOption(parser, QStringLiteral("seed"), &error);
    if (!seedValue)
        return usageError(command, error);
    const auto trialsValue = intOption(parser, QStringLiteral("trials"), 1, 1000000, &error);
    if (!trialsValue)
        return usageError(command, error);
    const auto keysValue = intOption(parser, QStringLiteral("keys"), 1, 4096, &error);
    if (!keysValue)
        return usageError(command, error);
    const auto dkValues = intListOption(parser, QStringLiteral("dk"), 1, 65536, &error);
    if (!dkValues)
        return usageError(command, error);
    const QString generatorName = parser.value(generator);
    if (generatorName != QLatin1String("numpy") && generatorName != QLatin1String("torch"))
        return usageError(
            command,
            QStringLiteral("--generator must be numpy or torch, got '%1'").arg(generatorName));
    const RandomSource source = parseRandomSource(generatorName.toStdString());
    const QString formatName = parser.value(format);
    if (formatName != QLatin1String("table") && formatName != QLatin1String("csv")
        && formatName != QLatin1String("json"))
        return usageError(
            command,
            QStringLiteral("--format must be table, csv or json, got '%1'").arg(formatName));

    const std::vector<Index> dks(dkValues->begin(), dkValues->end());
    Table table;
    try {
        table = scalingSweep(std::uint64_t(*seedValue), *trialsValue, *keysValue, dks, source);
    } catch (const InvalidArgument &e) {
        return usageError(command, QString::fromUtf8(e.what()));
    } catch (const std::exception &e) {
        return failure(command, QString::fromUtf8(e.what()));
    }

    std::string dkText;
    for (const Index v : dks) {
        if (!dkText.empty())
            dkText += ',';
        dkText += std::to_string(v);
    }
    const std::map<std::string, std::string> params = {
        {"seed", std::to_string(*seedValue)},
        {"generator", randomSourceName(source)},
        {"trials", std::to_string(*trialsValue)},
        {"keys", std::to_string(*keysValue)},
        {"d_k", dkText},
    };
    std::string text;
    if (formatName == QLatin1String("csv"))
        text = table.toCsv();
    else if (formatName == QLatin1String("json"))
        text = table.toJson("E2", params);
    else
        text = table.toText();
    if (!writeText(parser.value(out), QByteArray::fromStdString(text), &error))
        return failure(command, error);
    return ExitOk;
}

} // namespace attn::cli
