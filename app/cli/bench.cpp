// attnlab bench: times one attention kernel over a list of n, printing the median of
// --repeat runs, GFLOP/s (4·n²·d flop) and the kernel's extra memory. Used by
// bench/compare_numpy.py to compare against NumPy in the same run.

#include "common.h"

#include "core/io/table.h"
#include "core/kernels/kernels.h"
#include "core/random/random.h"

#include <QTextStream>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace attn::cli {
namespace {

struct BenchRow
{
    std::int64_t n = 0;
    double secondsMedian = 0;
    double secondsMin = 0;
    double gflops = 0;
    std::size_t peakBytes = 0;
};

template<typename T> BenchRow timeKernel(KernelKind kind, Index n, Index d, int repeat)
{
    Generator rng(0);
    const Matrix<T> q = rng.standardNormal(n, d).cast<T>();
    const Matrix<T> k = rng.standardNormal(n, d).cast<T>();
    const Matrix<T> v = rng.standardNormal(n, d).cast<T>();
    const T scale = T(1) / std::sqrt(T(d));
    // One untimed warm-up run (page faults, thread pool start-up).
    Matrix<T> out = attentionKernel<T>(kind, q, k, v, scale);
    std::vector<double> seconds;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        out = attentionKernel<T>(kind, q, k, v, scale);
        const auto stop = std::chrono::steady_clock::now();
        seconds.push_back(std::chrono::duration<double>(stop - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    BenchRow row;
    row.n = n;
    const std::size_t m = seconds.size();
    row.secondsMedian = m % 2 ? seconds[m / 2] : 0.5 * (seconds[m / 2 - 1] + seconds[m / 2]);
    row.secondsMin = seconds.front();
    row.gflops = 4.0 * double(n) * double(n) * double(d) / row.secondsMedian * 1e-9;
    row.peakBytes = kernelExtraBytes(kind, n, n, d, sizeof(T));
    return row;
}

} // namespace

int runBench(const QStringList &arguments)
{
    const QString command = QStringLiteral("bench");
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Time one attention kernel, O = softmax(Q K^T / sqrt(d)) V with n queries and keys,\n"
        "on seeded random float inputs. Prints the median of --repeat runs (seconds), GFLOP/s\n"
        "(4 n^2 d flop) and the kernel's extra memory (bytes). Columns: n, kernel, d, dtype,\n"
        "seconds_median, seconds_min, gflops, peak_bytes, instruction_set (avx512: the float32\n"
        "materialized and streaming kernels on CPUs with AVX-512F unless ATTN_NO_AVX512=1;\n"
        "eigen: otherwise, float64 and the loop kernel).\n"
        "Problems under 2e7 flops (n = 256, d = 64) run on one thread, where starting threads\n"
        "costs more than it saves; larger ones use every OpenMP thread (OMP_NUM_THREADS). On a\n"
        "busy machine compare seconds_min.");
    addOptionsWithDefaults(
        parser,
        {
            {"n", "Comma-separated sequence lengths.", "list", "512,1024,2048,4096"},
            {"d", "Head dimension d (columns of Q, K, V).", "d", "64"},
            {"dtype", "float32 or float64.", "dtype", "float32"},
            {"kernel", "materialized, streaming, loop or fused (the window's row pass).", "kernel",
             "materialized"},
            {"repeat", "Timed runs per n (after one warm-up run).", "count", "5"},
            {"memory-budget-mib",
             "Refuse an n whose inputs, output and kernel scratch need more (MiB).", "mib", "2048"},
            {"format", "table, csv or json.", "format", "table"},
            {"out", "Write to FILE instead of standard output.", "file"},
        });
    if (const std::optional<int> done = parseCommandLine(parser, command, arguments))
        return *done;
    if (const auto refused
        = checkOutputPaths(command, {{QStringLiteral("--out"), parser.value("out")}}))
        return *refused;
    QString error;
    const auto ns = intListOption(parser, "n", 1, 1 << 17, &error);
    if (!ns)
        return usageError(command, error);
    const auto d = intOption(parser, "d", 1, 4096, &error);
    if (!d)
        return usageError(command, error);
    const auto repeat = intOption(parser, "repeat", 1, 1000, &error);
    if (!repeat)
        return usageError(command, error);
    const QString dtype = parser.value("dtype");
    if (dtype != QLatin1String("float32") && dtype != QLatin1String("float64"))
        return usageError(
            command, QStringLiteral("--dtype must be float32 or float64, got '%1'").arg(dtype));
    const QString format = parser.value("format");
    if (format != QLatin1String("table") && format != QLatin1String("csv")
        && format != QLatin1String("json"))
        return usageError(
            command, QStringLiteral("--format must be table, csv or json, got '%1'").arg(format));
    KernelKind kind;
    try {
        kind = kernelFromName(parser.value("kernel").toStdString());
    } catch (const std::exception &e) {
        return usageError(command, QStringLiteral("--kernel: %1").arg(QString::fromUtf8(e.what())));
    }

    const auto budgetBytes = memoryBudgetBytes(parser, &error);
    if (!budgetBytes)
        return usageError(command, error);
    const std::optional<std::int64_t> budgetMib = std::int64_t(*budgetBytes / (1024.0 * 1024.0));
    const std::size_t elementBytes = dtype == QLatin1String("float32") ? 4 : 8;
    for (std::int64_t n : *ns) {
        // Q, K, V and the output (4 · n · d elements) plus what the kernel allocates.
        const double bytes = 4.0 * double(n) * double(*d) * double(elementBytes)
            + double(kernelExtraBytes(kind, n, n, *d, elementBytes));
        const double mib = bytes / (1024.0 * 1024.0);
        if (mib > double(*budgetMib)) {
            const std::string_view kname = kernelName(kind);
            return usageError(command,
                              QStringLiteral("n = %1 with the %2 kernel needs %3 MiB, over the "
                                             "--memory-budget-mib of %4 MiB (the streaming kernel "
                                             "needs no n x n matrix)")
                                  .arg(n)
                                  .arg(QString::fromUtf8(kname.data(), qsizetype(kname.size())))
                                  .arg(mib, 0, 'f', 0)
                                  .arg(*budgetMib));
        }
    }

    // The code the kernels run (kernels.h): float64 is always Eigen's; the loop kernel too.
    const std::string isa = dtype == QLatin1String("float32") && kind != KernelKind::Loop
        ? std::string(kernelInstructionSet())
        : std::string("eigen");
    Table table({"n", "kernel", "d", "dtype", "seconds_median", "seconds_min", "gflops",
                 "peak_bytes", "instruction_set"});
    try {
        for (std::int64_t n : *ns) {
            const BenchRow row = dtype == QLatin1String("float32")
                ? timeKernel<float>(kind, n, *d, int(*repeat))
                : timeKernel<double>(kind, n, *d, int(*repeat));
            table.addRow({row.n, std::string(kernelName(kind)), std::int64_t(*d),
                          dtype.toStdString(), row.secondsMedian, row.secondsMin, row.gflops,
                          std::int64_t(row.peakBytes), isa});
        }
    } catch (const std::bad_alloc &) {
        return failure(command,
                       QStringLiteral("out of memory: n is too large for the %1 kernel")
                           .arg(parser.value("kernel")));
    } catch (const std::exception &e) {
        return failure(command, QString::fromUtf8(e.what()));
    }

    std::string text;
    if (format == QLatin1String("json")) {
        std::map<std::string, std::string> params {{"d", std::to_string(*d)},
                                                   {"dtype", dtype.toStdString()},
                                                   {"kernel", std::string(kernelName(kind))},
                                                   {"instruction_set", isa},
                                                   {"repeat", std::to_string(*repeat)}};
        text = table.toJson("bench", params) + "\n";
    } else if (format == QLatin1String("csv")) {
        text = table.toCsv();
    } else {
        text = table.toText();
    }
    if (!writeText(parser.value("out"), QByteArray::fromStdString(text), &error))
        return failure(command, error);
    return ExitOk;
}

} // namespace attn::cli
