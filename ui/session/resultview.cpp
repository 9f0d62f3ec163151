#include "ui/session/resultview.h"

#include "core/analysis/shownview.h"

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>

namespace attn {

namespace {

bool isIdentitySelection(const std::vector<int> &kept, Index count)
{
    if (Index(kept.size()) != count)
        return false;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        if (kept[i] != int(i))
            return false;
    }
    return true;
}

} // namespace

QString rangesText(QList<int> values)
{
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    QStringList parts;
    for (qsizetype i = 0; i < values.size();) {
        qsizetype j = i;
        while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
            ++j;
        if (j == i)
            parts << QString::number(values[i]);
        else if (j == i + 1)
            parts << QString::number(values[i]) << QString::number(values[j]);
        else
            parts << QStringLiteral("%1\u2013%2").arg(values[i]).arg(values[j]);
        i = j + 1;
    }
    return parts.join(QStringLiteral(", "));
}

namespace { } // namespace

ViewSelection viewSelection(const SessionParameters &params, Index queryCount, Index keyCount,
                            const ViewTransform &transform)
{
    Index realQueries = queryCount, realKeys = keyCount;
    if (transform.trimPadding && params.mask == MaskChoice::KeyPadding && params.paddingCount > 0) {
        realKeys = std::max<Index>(0, keyCount - params.paddingCount);
        if (params.kind != AttentionKind::EncoderDecoder) // queries are the same positions
            realQueries = std::max<Index>(0, queryCount - params.paddingCount);
    }
    ViewSelection s;
    s.queries.reserve(std::size_t(realQueries));
    for (Index i = 0; i < realQueries; ++i)
        s.queries.push_back(int(i));
    for (Index j = 0; j < realKeys; ++j) {
        if (!transform.hiddenKeys.contains(int(j)))
            s.keys.push_back(int(j));
    }
    return s;
}

bool parseKeyList(const QString &text, QList<int> *keys, QString *error)
{
    QList<int> out;
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    static const QRegularExpression single(QStringLiteral("^\\d{1,9}$"));
    static const QRegularExpression range(QStringLiteral("^(\\d{1,9})\\s*[-\u2013](\\d{1,9})$"));
    // Ranges may be written "5-7" or "5 - 7": join the spaced form first.
    QString normalized = text.trimmed();
    normalized.replace(QRegularExpression(QStringLiteral("\\s*([-\u2013])\\s*")),
                       QStringLiteral("\\1"));
    for (const QString &part : normalized.split(separators, Qt::SkipEmptyParts)) {
        if (single.match(part).hasMatch()) {
            out.append(part.toInt());
            continue;
        }
        const QRegularExpressionMatch m = range.match(part);
        if (m.hasMatch()) {
            const int a = m.captured(1).toInt(), b = m.captured(2).toInt();
            if (a > b || b - a > 100000) {
                if (error)
                    *error = QStringLiteral("'%1': a key range must go from low to high (at "
                                            "most 100000 keys)")
                                 .arg(part);
                return false;
            }
            for (int k = a; k <= b; ++k)
                out.append(k);
            continue;
        }
        if (error)
            *error = QStringLiteral("'%1' is not a key index (write e.g. \"0\", \"0, 3\" or "
                                    "\"5-7\")")
                         .arg(part);
        return false;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (keys)
        *keys = out;
    return true;
}

std::shared_ptr<const SessionResult> applyViewTransform(std::shared_ptr<const SessionResult> result,
                                                        const ViewTransform &transform)
{
    if (!result || !result->ok() || transform.isIdentity())
        return result;
    const SessionResult &in = *result;
    const Index nQ = in.queryCount(), nK = in.keyCount();
    const ViewSelection sel = viewSelection(in.params, nQ, nK, transform);
    const bool sameQueries = isIdentitySelection(sel.queries, nQ);
    const bool sameKeys = isIdentitySelection(sel.keys, nK);
    if (sameQueries && sameKeys)
        return result; // nothing to trim and no valid key hidden

    auto out = std::make_shared<SessionResult>();
    out->requestId = in.requestId;
    out->params = in.params;
    out->computeSeconds = in.computeSeconds;
    if (sel.queries.empty() || sel.keys.empty()) {
        out->error = sel.queries.empty() ? QStringLiteral("every query is padding: nothing left "
                                                          "to show after trimming")
                                         : QStringLiteral("every key is hidden or padding: "
                                                          "nothing left to show");
        return out;
    }

    // Which of the shown keys were hidden on purpose (not just trimmed padding)?
    QList<int> hidden;
    for (int k : transform.hiddenKeys) {
        if (k >= 0 && k < nK
            && !(transform.trimPadding && in.params.mask == MaskChoice::KeyPadding
                 && k >= nK - in.params.paddingCount))
            hidden.append(k);
    }
    // Signed weights (differential attention) are never renormalised: a row of A₁ − λA₂ over
    // the shown keys may sum to 0 or less.
    const bool renormalize = transform.renormalize && !hidden.isEmpty() && !in.signedWeights;
    // The numbers (the shown cells, renormalised rows, their metrics) are core's.
    ShownCells cells;
    cells.queries = sel.queries;
    cells.keys = sel.keys;
    cells.renormalize = renormalize;
    cells.keepRowMetrics = hidden.isEmpty();
    static_cast<EngineResult &>(*out) = selectShownCells(in, cells);
    out->queryIndex = sel.queries;
    out->keyIndex = sel.keys;
    out->renormalized = renormalize;

    QStringList notes;
    if (Index(sel.queries.size()) < nQ
        || (transform.trimPadding && !sameKeys && Index(sel.keys.size() + hidden.size()) < nK))
        notes << QStringLiteral("padding trimmed (%1 \u00d7 %2 real tokens; metrics over real "
                                "tokens only)")
                     .arg(sel.queries.size())
                     .arg(sel.keys.size() + std::size_t(hidden.size()));
    if (!hidden.isEmpty()) {
        QList<int> shownKeys;
        for (int j : sel.keys)
            shownKeys << j;
        notes << QStringLiteral("hidden: %1 \u00b7 shown: %2 \u00b7 %3")
                     .arg(rangesText(hidden), rangesText(shownKeys),
                          renormalize ? QStringLiteral("weights renormalised over the shown keys")
                              : in.signedWeights
                              ? QStringLiteral("raw signed weights (a row of A\u2081 \u2212 "
                                               "\u03bbA\u2082 is not renormalised)")
                              : QStringLiteral("raw weights (rows sum to less than 1)"));
    }
    out->viewNote = notes.join(QStringLiteral("; "));
    return out;
}

} // namespace attn
