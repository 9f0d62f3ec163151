#include "ui/export/weightsexport.h"

#include "core/io/npy.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <charconv>
#include <cmath>

namespace attn {

namespace {

void appendNumber(QByteArray &out, double v)
{
    if (std::isnan(v)) {
        out += "nan";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "inf" : "-inf";
        return;
    }
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
    out.append(buffer, int(r.ptr - buffer));
}

void appendField(QByteArray &out, const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    if (utf8.contains(',') || utf8.contains('"') || utf8.contains('\n') || utf8.contains('\r')) {
        QByteArray escaped = utf8;
        escaped.replace("\"", "\"\"");
        out += '"' + escaped + '"';
    } else {
        out += utf8;
    }
}

const MatrixD &headWeights(const SessionResult &r, int head)
{
    return head == r.headCount() ? r.weightsMean : r.weights[std::size_t(head)];
}

void appendRows(QByteArray &out, const SessionResult &r, int head, bool headColumn)
{
    const MatrixD &w = headWeights(r, head);
    for (Index i = 0; i < w.rows(); ++i) {
        if (headColumn) {
            out += QByteArray::number(head);
            out += ',';
        }
        appendField(out, r.queryLabel(int(i)));
        for (Index j = 0; j < w.cols(); ++j) {
            out += ',';
            appendNumber(out, w(i, j));
        }
        out += '\n';
    }
}

} // namespace

QByteArray weightsCsv(const SessionResult &r, int head)
{
    QByteArray out;
    const bool all = head == allHeads;
    if (all)
        out += "head,";
    out += "query";
    for (Index j = 0; j < r.keyCount(); ++j) {
        out += ',';
        appendField(out, r.keyLabel(int(j)));
    }
    out += '\n';
    if (all) {
        for (int h = 0; h < r.headCount(); ++h)
            appendRows(out, r, h, true);
    } else {
        appendRows(out, r, head, false);
    }
    return out;
}

bool exportWeights(const SessionResult &result, const QString &path, int head, QString *error)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (!result.ok() || result.headCount() == 0)
        return fail(QStringLiteral("There are no computed weights to export yet."));
    if (head != allHeads && (head < 0 || head > result.headCount()))
        return fail(QStringLiteral("head %1 does not exist (h = %2)")
                        .arg(QString::number(head), QString::number(result.headCount())));
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("npy")) {
        try {
            const NpyArray array = head == allHeads
                ? NpyArray::fromMatrices(result.weights)
                : NpyArray::fromMatrix(headWeights(result, head));
            writeNpy(QFile::encodeName(path).toStdString(), array);
        } catch (const std::exception &e) {
            return fail(QString::fromUtf8(e.what()));
        }
        return true;
    }
    if (suffix == QLatin1String("csv")) {
        QSaveFile file(path);
        // Unbuffered: a failed write shows in write(), not in commit()'s unchecked flush.
        if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered))
            return fail(QStringLiteral("%1: cannot write (%2)").arg(path, file.errorString()));
        const QByteArray text = weightsCsv(result, head);
        if (file.write(text) != text.size() || !file.commit())
            return fail(QStringLiteral("%1: cannot write (%2)").arg(path, file.errorString()));
        return true;
    }
    return fail(QStringLiteral("%1: unknown format '.%2' (use .npy or .csv)").arg(path, suffix));
}

} // namespace attn
