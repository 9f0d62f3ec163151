#include "ui/export/dataexport.h"

#include "core/attention/mask.h"
#include "core/io/npy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSaveFile>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>

namespace attn {

namespace {

// Buffered text output to a QSaveFile; commit() reports the first error.
class TextOut
{
public:
    explicit TextOut(const QString &path)
        : m_file(path)
    {
        // Unbuffered: a failed write shows at once (QSaveFile misses the error of a final
        // buffered flush inside commit() and would rename a truncated file into place).
        m_ok = m_file.open(QIODevice::WriteOnly | QIODevice::Unbuffered);
        m_buffer.reserve(1 << 20);
    }
    TextOut &operator<<(std::string_view text)
    {
        m_buffer.append(text);
        if (m_buffer.size() >= (1u << 20))
            flush();
        return *this;
    }
    TextOut &operator<<(const char *text) { return *this << std::string_view(text); }
    TextOut &operator<<(const std::string &text) { return *this << std::string_view(text); }
    TextOut &operator<<(char c)
    {
        m_buffer.push_back(c);
        return *this;
    }
    TextOut &operator<<(const QString &text)
    {
        return *this << std::string_view(text.toStdString());
    }
    // Shortest round-trip text of a finite double; `nonFinite` for NaN/±inf handling.
    void number(double v, bool json)
    {
        if (!std::isfinite(v)) {
            if (json)
                *this << std::string_view("null");
            else
                *this << std::string_view(std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf"));
            return;
        }
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        *this << std::string_view(buf, std::size_t(r.ptr - buf));
    }
    void integer(long long v) { *this << std::string_view(std::to_string(v)); }
    bool commit(QString *error)
    {
        flush();
        if (!m_ok || !m_file.commit()) {
            if (error)
                *error = QStringLiteral("cannot write '%1': %2")
                             .arg(QDir::toNativeSeparators(m_file.fileName()),
                                  m_file.error() != QFileDevice::NoError
                                      ? m_file.errorString()
                                      : QStringLiteral("write failed (disk full?)"));
            return false;
        }
        return true;
    }

private:
    void flush()
    {
        // A short write (a disk filling up) is retried, so the real error (ENOSPC) is reported.
        qint64 done = 0;
        const qint64 size = qint64(m_buffer.size());
        while (m_ok && done < size) {
            const qint64 n = m_file.write(m_buffer.data() + done, size - done);
            m_ok = n > 0;
            done += std::max<qint64>(n, 0);
        }
        m_buffer.clear();
    }
    QSaveFile m_file;
    std::string m_buffer;
    bool m_ok = false;
};

// RFC 4180 field: quoted when it holds a comma, quote, CR or LF (quotes doubled).
QString csvField(const QString &text)
{
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"'))
        && !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString siblingPath(const QString &path, const QString &suffix)
{
    const QFileInfo info(path);
    return info.dir().filePath(info.completeBaseName() + suffix);
}

struct MetricSeries
{
    const char *name;
    const VectorD RowMetrics::*member;
};
const MetricSeries metricSeries[] = {
    {"max_weight", &RowMetrics::maxWeight},           {"entropy", &RowMetrics::entropy},
    {"effective_terms", &RowMetrics::effectiveTerms}, {"jacobian_norm", &RowMetrics::jacobianNorm},
    {"row_sum_error", &RowMetrics::rowSumError},
};

bool hasMaskState(const SessionResult &r)
{
    return r.maskState.rows() == r.queryCount() && r.maskState.cols() == r.keyCount();
}

std::uint8_t maskAt(const SessionResult &r, Index i, Index j)
{
    return hasMaskState(r) ? r.maskState(i, j) : std::uint8_t(0);
}

bool rowFullyMasked(const SessionResult &r, int head, Index i)
{
    return std::size_t(head) < r.fullyMasked.size()
        && std::size_t(i) < r.fullyMasked[std::size_t(head)].size()
        && r.fullyMasked[std::size_t(head)][std::size_t(i)];
}

std::vector<std::pair<std::string, NpyArray>> npyArrays(const SessionResult &r)
{
    const int h = r.headCount();
    const Index nQ = r.queryCount(), nK = r.keyCount();
    std::vector<std::pair<std::string, NpyArray>> arrays;
    arrays.emplace_back("weights", NpyArray::fromMatrices(r.weights));
    arrays.emplace_back("weights_mean", NpyArray::fromMatrix(r.weightsMean));
    // A pooled view (the tile engine's) has neither scores nor per-row metrics: leave them out
    // rather than write arrays of zeros.
    const bool hasScores = int(r.scores.size()) == h && int(r.scaledScores.size()) == h && h > 0;
    const bool hasMetrics = int(r.metrics.size()) == h && h > 0;
    if (hasScores) {
        arrays.emplace_back("scores", NpyArray::fromMatrices(r.scores));
        arrays.emplace_back("scaled_scores", NpyArray::fromMatrices(r.scaledScores));
    }
    NpyArray mask;
    mask.shape = {nQ, nK};
    mask.type = NpyType::UInt8;
    mask.values.resize(std::size_t(nQ * nK));
    for (Index i = 0; i < nQ; ++i)
        for (Index j = 0; j < nK; ++j)
            mask.values[std::size_t(i * nK + j)] = maskAt(r, i, j);
    arrays.emplace_back("mask_state", std::move(mask));
    for (const MetricSeries &series : metricSeries) {
        if (!hasMetrics)
            break;
        NpyArray a;
        a.shape = {h, nQ};
        a.values.resize(std::size_t(h * nQ), 0.0);
        for (int head = 0; head < h && std::size_t(head) < r.metrics.size(); ++head) {
            const VectorD &v = r.metrics[std::size_t(head)].*(series.member);
            for (Index i = 0; i < nQ && i < v.size(); ++i)
                a.values[std::size_t(head * nQ + i)] = v(i);
        }
        arrays.emplace_back(series.name, std::move(a));
    }
    NpyArray flags;
    flags.shape = {h, nQ};
    flags.type = NpyType::Bool;
    flags.values.resize(std::size_t(h * nQ), 0.0);
    for (int head = 0; head < h; ++head)
        for (Index i = 0; i < nQ; ++i)
            flags.values[std::size_t(head * nQ + i)] = rowFullyMasked(r, head, i) ? 1.0 : 0.0;
    arrays.emplace_back("fully_masked", std::move(flags));
    NpyArray qi, ki;
    qi.type = ki.type = NpyType::Int64;
    qi.shape = {nQ};
    ki.shape = {nK};
    for (Index i = 0; i < nQ; ++i)
        qi.values.push_back(r.originalQuery(int(i)));
    for (Index j = 0; j < nK; ++j)
        ki.values.push_back(r.originalKey(int(j)));
    arrays.emplace_back("query_index", std::move(qi));
    arrays.emplace_back("key_index", std::move(ki));
    // The 2025 variants' own numbers, as attnlab compute names them.
    const auto perHeadRows = [h, nQ](const std::vector<VectorD> &rows) {
        NpyArray a;
        a.shape = {h, nQ};
        for (const VectorD &v : rows)
            a.values.insert(a.values.end(), v.data(), v.data() + v.size());
        return a;
    };
    const auto perHead = [](const std::vector<double> &values) {
        NpyArray a;
        a.shape = {Index(values.size())};
        a.values = values;
        return a;
    };
    if (int(r.learnedSinkMass.size()) == h && h > 0) {
        arrays.emplace_back("learned_sink_mass", perHeadRows(r.learnedSinkMass));
        arrays.emplace_back("sink_logits", perHead(r.sinkLogits));
    }
    if (int(r.firstWeights.size()) == h && int(r.secondWeights.size()) == h && h > 0) {
        arrays.emplace_back("weights_first", NpyArray::fromMatrices(r.firstWeights));
        arrays.emplace_back("weights_second", NpyArray::fromMatrices(r.secondWeights));
        arrays.emplace_back("lambda", perHead(r.lambda));
    }
    if (int(r.gate.size()) == h && h > 0)
        arrays.emplace_back("gate", perHeadRows(r.gate));
    if (int(r.meanRowSum.size()) == h && h > 0)
        arrays.emplace_back("mean_row_sum", perHead(r.meanRowSum));
    return arrays;
}

bool writeNpyFiles(const SessionResult &r, const QString &path, QStringList *written,
                   QString *error)
{
    try {
        for (const auto &[name, array] : npyArrays(r)) {
            const QString file
                = siblingPath(path, QStringLiteral("_%1.npy").arg(QString::fromStdString(name)));
            writeNpy(QFile::encodeName(file).toStdString(), array);
            if (written)
                written->append(file);
        }
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromLocal8Bit(e.what());
        return false;
    }
    return true;
}

bool writeNpzFile(const SessionResult &r, const QString &path, QStringList *written, QString *error)
{
    try {
        writeNpz(QFile::encodeName(path).toStdString(), npyArrays(r), true);
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromLocal8Bit(e.what());
        return false;
    }
    if (written)
        written->append(path);
    return true;
}

void jsonMatrix(TextOut &out, const MatrixD &m)
{
    out << '[';
    for (Index i = 0; i < m.rows(); ++i) {
        out << (i ? ",\n  [" : "\n  [");
        for (Index j = 0; j < m.cols(); ++j) {
            if (j)
                out << ',';
            out.number(m(i, j), true);
        }
        out << ']';
    }
    out << ']';
}

void jsonVector(TextOut &out, const VectorD &v)
{
    out << '[';
    for (Index i = 0; i < v.size(); ++i) {
        if (i)
            out << ',';
        out.number(v(i), true);
    }
    out << ']';
}

QString compact(const QJsonValue &value)
{
    if (value.isArray())
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    // A lone string: wrap it in an array and strip the brackets.
    const QByteArray a = QJsonDocument(QJsonArray {value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(a.mid(1, a.size() - 2));
}

bool writeJsonFile(const SessionResult &r, const QString &path, QStringList *written,
                   QString *error)
{
    const int h = r.headCount();
    const Index nQ = r.queryCount(), nK = r.keyCount();
    TextOut out(path);
    QJsonArray queryLabels, keyLabels, queryIndex, keyIndex;
    for (Index i = 0; i < nQ; ++i) {
        queryLabels.append(r.queryLabel(int(i)));
        queryIndex.append(r.originalQuery(int(i)));
    }
    for (Index j = 0; j < nK; ++j) {
        keyLabels.append(r.keyLabel(int(j)));
        keyIndex.append(r.originalKey(int(j)));
    }
    // The masks that hide exported cells (the parameters hold the user's choice: "mask": "none"
    // under decoder self-attention or a sliding window, whose causal mask is always on).
    std::uint8_t maskedBy = 0;
    for (Index i = 0; i < nQ; ++i)
        for (Index j = 0; j < nK; ++j)
            maskedBy |= maskAt(r, i, j);
    out << "{\"format\": \"attnlab-data\", \"version\": 1,\n\"parameters\": "
        << compact(r.params.toJson()) << ",\n\"masked_by\": "
        << compact(QString::fromStdString(maskStateText(maskedBy, MaskTextStyle::Name)))
        << ",\n\"caption\": " << compact(r.params.caption())
        << ",\n\"view\": " << compact(r.viewNote)
        << ",\n\"renormalized\": " << (r.renormalized ? "true" : "false") << ",\n\"scale\": ";
    out.number(r.scale, true);
    out << ",\n\"query_labels\": " << compact(queryLabels)
        << ",\n\"key_labels\": " << compact(keyLabels)
        << ",\n\"query_index\": " << compact(queryIndex)
        << ",\n\"key_index\": " << compact(keyIndex) << ",\n\"mask_state\": [";
    for (Index i = 0; i < nQ; ++i) {
        out << (i ? ",\n  [" : "\n  [");
        for (Index j = 0; j < nK; ++j) {
            if (j)
                out << ',';
            out.integer(maskAt(r, i, j));
        }
        out << ']';
    }
    out << "],\n\"weights_mean\": ";
    jsonMatrix(out, r.weightsMean);
    out << ",\n\"heads\": [";
    for (int head = 0; head < h; ++head) {
        const std::size_t k = std::size_t(head);
        out << (head ? ",\n{\"head\": " : "\n{\"head\": ");
        out.integer(head);
        out << ",\n\"weights\": ";
        jsonMatrix(out, r.weights[k]);
        out << ",\n\"scores\": ";
        jsonMatrix(out, k < r.scores.size() ? r.scores[k] : MatrixD());
        out << ",\n\"scaled_scores\": ";
        jsonMatrix(out, k < r.scaledScores.size() ? r.scaledScores[k] : MatrixD());
        out << ",\n\"metrics\": {";
        bool first = true;
        for (const MetricSeries &series : metricSeries) {
            out << (first ? "\"" : ", \"") << std::string_view(series.name) << "\": ";
            first = false;
            jsonVector(out, k < r.metrics.size() ? r.metrics[k].*(series.member) : VectorD());
        }
        out << ", \"fully_masked\": [";
        for (Index i = 0; i < nQ; ++i) {
            if (i)
                out << ',';
            out << (rowFullyMasked(r, head, i) ? "true" : "false");
        }
        out << "]}";
        // The 2025 variants' own numbers, as attnlab compute names them.
        if (k < r.learnedSinkMass.size()) {
            out << ",\n\"learned_sink_mass\": ";
            jsonVector(out, r.learnedSinkMass[k]);
            out << ", \"sink_logit\": ";
            out.number(r.sinkLogits.at(k), true);
        }
        if (k < r.firstWeights.size() && k < r.secondWeights.size() && k < r.lambda.size()) {
            out << ",\n\"weights_first\": ";
            jsonMatrix(out, r.firstWeights[k]);
            out << ",\n\"weights_second\": ";
            jsonMatrix(out, r.secondWeights[k]);
            out << ",\n\"lambda\": ";
            out.number(r.lambda[k], true);
        }
        if (k < r.gate.size()) {
            out << ",\n\"gate\": ";
            jsonVector(out, r.gate[k]);
        }
        if (k < r.meanRowSum.size()) {
            out << ",\n\"mean_row_sum\": ";
            out.number(r.meanRowSum[k], true);
        }
        out << "}";
    }
    out << "]}\n";
    if (!out.commit(error))
        return false;
    if (written)
        written->append(path);
    return true;
}

bool writeCsvFiles(const SessionResult &r, const QString &path, QStringList *written,
                   QString *error)
{
    const int h = r.headCount();
    const Index nQ = r.queryCount(), nK = r.keyCount();
    std::vector<std::string> qText, kText; // CSV fields of the labels, UTF-8
    for (Index i = 0; i < nQ; ++i)
        qText.push_back(csvField(r.queryLabel(int(i))).toStdString());
    for (Index j = 0; j < nK; ++j)
        kText.push_back(csvField(r.keyLabel(int(j))).toStdString());
    std::vector<std::string> masks; // every combination of the four MaskStateBits
    for (int s = 0; s < 16; ++s)
        masks.push_back(maskStateText(std::uint8_t(s), MaskTextStyle::Field));

    {
        TextOut out(path);
        // A pooled view (the tile engine's) has no scores: no columns for them.
        const bool hasScores = int(r.scores.size()) == h && h > 0;
        out << (hasScores ? "head,query,key,query_label,key_label,weight,raw_score,scaled_score,"
                            "mask\n"
                          : "head,query,key,query_label,key_label,weight,mask\n");
        for (int head = 0; head <= h; ++head) {
            const bool mean = head == h;
            if (mean && h < 2)
                break; // with one head the mean is that head
            const std::size_t k = std::size_t(head);
            const MatrixD &w = mean ? r.weightsMean : r.weights[k];
            const std::string headText = mean ? "mean" : std::to_string(head);
            for (Index i = 0; i < nQ; ++i) {
                for (Index j = 0; j < nK; ++j) {
                    out << headText << ',';
                    out.integer(r.originalQuery(int(i)));
                    out << ',';
                    out.integer(r.originalKey(int(j)));
                    out << ',' << qText[std::size_t(i)] << ',' << kText[std::size_t(j)] << ',';
                    out.number(w(i, j), false);
                    if (hasScores) {
                        out << ',';
                        if (!mean)
                            out.number(r.scores[k](i, j), false);
                        out << ',';
                        if (!mean && k < r.scaledScores.size())
                            out.number(r.scaledScores[k](i, j), false);
                    }
                    out << ',' << masks[maskAt(r, i, j) & 15] << '\n';
                }
            }
        }
        if (!out.commit(error))
            return false;
        if (written)
            written->append(path);
    }

    if (int(r.metrics.size()) != h || h == 0)
        return true; // a pooled view has no per-row metrics: no file of zeros
    const QString metricsPath = siblingPath(path, QStringLiteral("_metrics.csv"));
    TextOut out(metricsPath);
    out << "head,query,query_label";
    for (const MetricSeries &series : metricSeries)
        out << ',' << std::string_view(series.name);
    out << ",fully_masked\n";
    for (int head = 0; head < h; ++head) {
        for (Index i = 0; i < nQ; ++i) {
            out.integer(head);
            out << ',';
            out.integer(r.originalQuery(int(i)));
            out << ',' << qText[std::size_t(i)];
            for (const MetricSeries &series : metricSeries) {
                out << ',';
                const VectorD *v = std::size_t(head) < r.metrics.size()
                    ? &(r.metrics[std::size_t(head)].*(series.member))
                    : nullptr;
                out.number(v && i < v->size() ? (*v)(i) : 0.0, false);
            }
            out << ',' << (rowFullyMasked(r, head, i) ? "1" : "0") << '\n';
        }
    }
    if (!out.commit(error))
        return false;
    if (written)
        written->append(metricsPath);
    return true;
}

} // namespace

double dataExportBytes(DataFormat format, int heads, Index rows, Index cols)
{
    if (format != DataFormat::Npz && format != DataFormat::Npy)
        return 0;
    return double(rows) * double(cols) * (88.0 * double(std::max(heads, 1)) + 56.0);
}

std::optional<DataFormat> dataFormatForPath(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("csv"))
        return DataFormat::Csv;
    if (suffix == QLatin1String("npy"))
        return DataFormat::Npy;
    if (suffix == QLatin1String("npz"))
        return DataFormat::Npz;
    if (suffix == QLatin1String("json"))
        return DataFormat::Json;
    return std::nullopt;
}

QString dataFormatName(DataFormat format)
{
    switch (format) {
    case DataFormat::Csv:
        return QStringLiteral("csv");
    case DataFormat::Npy:
        return QStringLiteral("npy");
    case DataFormat::Npz:
        return QStringLiteral("npz");
    case DataFormat::Json:
        return QStringLiteral("json");
    }
    return {};
}

bool exportData(const SessionResult &result, const QString &path, DataFormat format,
                QStringList *written, QString *error)
{
    if (!result.ok() || result.headCount() == 0) {
        if (error)
            *error = result.ok() ? QStringLiteral("there is no computed result to export")
                                 : QStringLiteral("the result has an error: ") + result.error;
        return false;
    }
    const qint64 cells = qint64(result.headCount()) * result.queryCount() * result.keyCount();
    if ((format == DataFormat::Csv || format == DataFormat::Json) && cells > maxTextCells) {
        if (error)
            *error = QStringLiteral("cannot write '%1': %2 cells (h \u00d7 n_q \u00d7 n_k) are "
                                    "too many for %3 (at most %4); export .npz instead")
                         .arg(QDir::toNativeSeparators(path))
                         .arg(cells)
                         .arg(dataFormatName(format).toUpper())
                         .arg(maxTextCells);
        return false;
    }
    switch (format) {
    case DataFormat::Csv:
        return writeCsvFiles(result, path, written, error);
    case DataFormat::Npy:
        return writeNpyFiles(result, path, written, error);
    case DataFormat::Npz:
        return writeNpzFile(result, path, written, error);
    case DataFormat::Json:
        return writeJsonFile(result, path, written, error);
    }
    return false;
}

bool exportData(const SessionResult &result, const QString &path, QStringList *written,
                QString *error)
{
    const auto format = dataFormatForPath(path);
    if (!format) {
        if (error)
            *error = QStringLiteral("cannot write '%1': unknown data format '%2' (expected .csv, "
                                    ".npy, .npz or .json)")
                         .arg(QDir::toNativeSeparators(path), QFileInfo(path).suffix());
        return false;
    }
    return exportData(result, path, *format, written, error);
}

} // namespace attn
