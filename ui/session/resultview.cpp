#include "ui/session/resultview.h"

#include "core/base/threads.h"

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>

namespace attn {

namespace {

// First index and length when `kept` is a run of consecutive indices, else length −1.
std::pair<int, int> run(const std::vector<int> &kept)
{
    if (kept.empty())
        return {0, 0};
    for (std::size_t i = 1; i < kept.size(); ++i) {
        if (kept[i] != kept[i - 1] + 1)
            return {0, -1};
    }
    return {kept.front(), int(kept.size())};
}

// rows × cols sub-matrix of m at the kept rows and columns (a block copy when both are runs:
// trimmed padding, a hidden first key).
template<typename M> M pick(const M &m, const std::vector<int> &rows, const std::vector<int> &cols)
{
    const auto [r0, nr] = run(rows);
    const auto [c0, nc] = run(cols);
    if (nr >= 0 && nc >= 0)
        return m.block(r0, c0, nr, nc);
    M out(Index(rows.size()), Index(cols.size()));
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto src = m.row(rows[r]);
        auto dst = out.row(Index(r));
        for (std::size_t c = 0; c < cols.size(); ++c)
            dst(Index(c)) = src(cols[c]);
    }
    return out;
}

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
    out->scale = in.scale;
    out->alibiSlopes = in.alibiSlopes;
    out->sinkMass = in.sinkMass; // of the whole rows, before keys are hidden
    out->positionBiasCausal = in.positionBiasCausal;
    out->computeSeconds = in.computeSeconds;
    if (sel.queries.empty() || sel.keys.empty()) {
        out->error = sel.queries.empty() ? QStringLiteral("every query is padding: nothing left "
                                                          "to show after trimming")
                                         : QStringLiteral("every key is hidden or padding: "
                                                          "nothing left to show");
        return out;
    }
    out->queryIndex = sel.queries;
    out->keyIndex = sel.keys;

    // Which of the shown keys were hidden on purpose (not just trimmed padding)?
    QList<int> hidden;
    for (int k : transform.hiddenKeys) {
        if (k >= 0 && k < nK
            && !(transform.trimPadding && in.params.mask == MaskChoice::KeyPadding
                 && k >= nK - in.params.paddingCount))
            hidden.append(k);
    }
    const bool renormalize = transform.renormalize && !hidden.isEmpty();
    out->renormalized = renormalize;

    const int h = in.headCount();
    const Index rows = Index(sel.queries.size()), cols = Index(sel.keys.size());
    if (in.maskState.rows() == nQ && in.maskState.cols() == nK)
        out->maskState = pick(in.maskState, sel.queries, sel.keys);
    const bool haveScores = int(in.scores.size()) == h && int(in.scaledScores.size()) == h;
    out->weights.resize(std::size_t(h));
    out->fullyMasked.resize(std::size_t(h));
    out->metrics.resize(std::size_t(h));
    if (haveScores) {
        out->scores.resize(std::size_t(h));
        out->scaledScores.resize(std::size_t(h));
    }
    // The position scheme's step (RoPE's unrotated scores, ALiBi's bias): the shown cells.
    for (auto [from, to] : {std::pair {&in.unrotatedScores, &out->unrotatedScores},
                            std::pair {&in.positionBias, &out->positionBias}}) {
        to->clear();
        for (const MatrixD &m : *from)
            to->push_back(m.rows() == nQ && m.cols() == nK ? pick(m, sel.queries, sel.keys)
                                                           : MatrixD());
    }
    std::vector<NonFiniteReport> nonFinite(static_cast<std::size_t>(h));
    // Heads are independent: both cores for long sequences (n = 4096 takes seconds otherwise),
    // by the core's policy for ~20 flops per cell (pick, renormalise, metrics).
    [[maybe_unused]] const bool parallel
        = threadsForFlops(double(h) * double(rows) * double(cols) * 20.0) > 1;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (int head = 0; head < h; ++head) {
        MatrixD w = pick(in.weights[std::size_t(head)], sel.queries, sel.keys);
        std::vector<std::uint8_t> flags(std::size_t(rows), 0);
        const std::vector<std::uint8_t> *inFlags = std::size_t(head) < in.fullyMasked.size()
            ? &in.fullyMasked[std::size_t(head)]
            : nullptr;
        for (Index r = 0; r < rows; ++r) {
            const std::size_t src = std::size_t(sel.queries[std::size_t(r)]);
            bool masked = inFlags && src < inFlags->size() && (*inFlags)[src];
            if (renormalize && !masked) {
                const double sum = w.row(r).sum();
                if (sum > 0.0 && std::isfinite(sum))
                    w.row(r) /= sum;
                else if (!(sum > 0.0)) {
                    w.row(r).setZero(); // the shown keys had no weight: nothing to renormalise
                    masked = true;
                }
            }
            flags[std::size_t(r)] = masked ? 1 : 0;
        }
        const std::size_t k = std::size_t(head);
        if (haveScores) { // (loaded weights may come without scores: those stay empty)
            if (in.scores[k].rows() == nQ && in.scores[k].cols() == nK)
                out->scores[k] = pick(in.scores[k], sel.queries, sel.keys);
            if (in.scaledScores[k].rows() == nQ && in.scaledScores[k].cols() == nK)
                out->scaledScores[k] = pick(in.scaledScores[k], sel.queries, sel.keys);
        }
        if (hidden.isEmpty() && k < in.metrics.size() && in.metrics[k].maxWeight.size() == nQ) {
            // Trimmed padding only: the padded keys had weight 0, so each kept row's metrics
            // are the computation's (over its real keys already); keep the real rows.
            const RowMetrics &m = in.metrics[k];
            RowMetrics &o = out->metrics[k];
            for (VectorD RowMetrics::*series :
                 {&RowMetrics::maxWeight, &RowMetrics::entropy, &RowMetrics::effectiveTerms,
                  &RowMetrics::jacobianNorm, &RowMetrics::rowSumError}) {
                (o.*series).resize(rows);
                for (Index r = 0; r < rows; ++r)
                    (o.*series)(r) = (m.*series)(sel.queries[std::size_t(r)]);
            }
            o.fullyMasked = flags;
        } else {
            out->metrics[k] = rowMetrics(w, flags);
        }
        nonFinite[k] = findNonFinite(w);
        out->fullyMasked[k] = std::move(flags);
        out->weights[k] = std::move(w);
    }
    out->weightsMean = MatrixD::Zero(rows, cols);
    for (int head = 0; head < h; ++head) {
        const std::size_t k = std::size_t(head);
        out->weightsMean += out->weights[k];
        out->worstRowSumError
            = std::max(out->worstRowSumError, summarize(out->metrics[k]).worstRowSumError);
        const NonFiniteReport &nf = nonFinite[k];
        if (nf.found) {
            if (!out->nonFinite.found) {
                out->nonFinite = nf;
            } else {
                out->nonFinite.nanCount += nf.nanCount;
                out->nonFinite.infCount += nf.infCount;
            }
        }
    }
    if (h > 0)
        out->weightsMean /= double(h);

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
                                      : QStringLiteral("raw weights (rows sum to less than 1)"));
    }
    out->viewNote = notes.join(QStringLiteral("; "));
    return out;
}

} // namespace attn
