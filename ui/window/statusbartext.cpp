#include "ui/window/statusbartext.h"

#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"

#include "core/attention/variants.h"

#include <QLabel>
#include <QStatusBar>
#include <QStringList>

#include <cmath>

namespace attn {

StatusBarText::StatusBarText(QStatusBar *bar, QLabel *tensorsLabel)
    : QObject(bar)
{
    setObjectName(QStringLiteral("statusBarText"));
    auto makeLabel = [bar](const QString &name, const QString &tip) {
        auto *label = new QLabel(bar);
        label->setObjectName(name);
        label->setToolTip(tip);
        label->setContentsMargins(6, 0, 6, 0);
        bar->addPermanentWidget(label);
        return label;
    };
    bar->addPermanentWidget(tensorsLabel);
    m_nonFinite = makeLabel(QStringLiteral("nonFiniteStatus"),
                            tr("NaN or Inf values were found in the weights: they are shown, "
                               "never hidden"));
    m_nonFinite->setStyleSheet(QStringLiteral(
        "QLabel { background: #d62728; color: white; font-weight: bold; border-radius: 3px; }"));
    m_nonFinite->hide();
    m_busy = makeLabel(QStringLiteral("busyStatus"),
                       tr("Shown while the worker thread computes a newer result"));
    m_dk = makeLabel(QStringLiteral("dkStatus"), tr("Head dimension d_k = d_model / h"));
    m_scale = makeLabel(QStringLiteral("scaleStatus"),
                        tr("The factor the scores Q Kᵀ are multiplied by"));
    m_rowSum = makeLabel(QStringLiteral("rowSumStatus"),
                         tr("Largest |Σ_j w_ij − 1| over every head and row (rounding error; "
                            "fully masked rows excluded)"));
    m_time = makeLabel(QStringLiteral("timeStatus"),
                       tr("Wall time of the last computation (worker thread)"));
}

QString StatusBarText::secondsText(double seconds)
{
    if (seconds < 1e-3)
        return tr("%1 µs").arg(seconds * 1e6, 0, 'f', 0);
    if (seconds < 1.0)
        return tr("%1 ms").arg(seconds * 1e3, 0, 'f', 1);
    return tr("%1 s").arg(seconds, 0, 'f', 2);
}

void StatusBarText::showResult(const SessionResult &result)
{
    const SessionParameters &p = result.params;
    m_dk->setText(tr("d_k = %1").arg(p.dK()));
    m_scale->setText(tr("scale %1 = %2")
                         .arg(scaleFormula(p.scaleExponent, p.temperature,
                                           p.latent && !p.tensors ? p.scoreDim() : 0))
                         .arg(result.scale, 0, 'g', 4));
    m_rowSum->setText(rowSumText(result));
    m_time->setText(tr("computed in %1").arg(secondsText(result.computeSeconds)));
    if (p.tensors && p.tensors->isModelRun()) { // a model's forward pass, shown as computed
        m_dk->setText(tr("%1 (%2)").arg(p.tensors->modelName(), p.tensors->modelFamily()));
        m_scale->setText(tr("layer %1 of %2, n = %3 tokens")
                             .arg(p.tensors->layer())
                             .arg(p.tensors->layerCount())
                             .arg(p.tensors->queryCount()));
    } else if (p.tensors && p.tensors->isWeights()) { // loaded weights: no d_k, not recomputed
        m_dk->setText(tr("stored weights"));
        m_scale->setText(tr("not recomputed"));
    }
    const NonFiniteReport &nf = result.nonFinite;
    if (nf.found) {
        m_nonFinite->setText(tr("⚠ NaN/Inf in weights: %1 NaN, %2 Inf, first at (i = %3, j = %4)")
                                 .arg(nf.nanCount)
                                 .arg(nf.infCount)
                                 .arg(nf.row)
                                 .arg(nf.col));
        m_nonFinite->show();
    } else {
        m_nonFinite->hide();
    }
}

QString StatusBarText::rowSumText(const SessionResult &result)
{
    // Rows holding NaN or Inf have no sum error to compare (NaN, or Inf): they are counted and
    // named, and the worst error (result.worstRowSumError, over the finite rows) is said to be
    // that of the others, never a number standing for every row.
    int nanRows = 0, infRows = 0, finiteRows = 0;
    for (const RowMetrics &m : result.metrics)
        for (Index i = 0; i < m.rowSumError.size(); ++i) {
            if (i < Index(m.fullyMasked.size()) && m.fullyMasked[std::size_t(i)])
                continue;
            const double e = m.rowSumError(i);
            nanRows += std::isnan(e) ? 1 : 0;
            infRows += std::isinf(e) ? 1 : 0;
            finiteRows += std::isfinite(e) ? 1 : 0;
        }
    const auto rowCount
        = [](int count) { return count == 1 ? tr("1 row") : tr("%1 rows").arg(count); };
    QStringList notAvailable;
    if (nanRows > 0)
        notAvailable << tr("%1 NaN").arg(rowCount(nanRows));
    if (infRows > 0)
        notAvailable << tr("%1 Inf").arg(rowCount(infRows));
    // With a learned sink, differential attention or the gate the rows do not sum to 1: the
    // check is that of the softmax rows, and the shown rows' mean sum is given beside it.
    const QString worst = result.meanRowSum.empty()
        ? tr("worst |Σw − 1| = %1").arg(result.worstRowSumError, 0, 'g', 2)
        : tr("softmax rows: worst |Σ − 1| = %1 · shown rows sum to %2 on average")
              .arg(result.worstRowSumError, 0, 'g', 2)
              .arg(meanRowSumOverHeads(result.meanRowSum), 0, 'g', 3);
    if (notAvailable.isEmpty())
        return worst;
    const QString rows = tr("row sums: %1").arg(notAvailable.join(QStringLiteral(", ")));
    if (finiteRows == 0)
        return rows;
    return tr("%1 · the other %2: %3").arg(rows, rowCount(finiteRows), worst);
}

void StatusBarText::setBusy(bool busy)
{
    m_busy->setText(busy ? tr("computing…") : QString());
}

QString StatusBarText::notComputedNotice(const SessionParameters &wanted,
                                         const SessionParameters &shown, const QString &full)
{
    // The sizes that differ, e.g. "h = 4, d_k = 288" against "h = 16, d_k = 72".
    auto brief = [](const SessionParameters &p, const SessionParameters &other) {
        QStringList parts;
        const bool all = p.queryCount() == other.queryCount() && p.keyCount() == other.keyCount()
            && p.dModel == other.dModel && p.heads == other.heads;
        if (all || p.queryCount() != other.queryCount() || p.keyCount() != other.keyCount()) {
            if (p.kind == AttentionKind::EncoderDecoder)
                parts << tr("n_q = %1, n_k = %2").arg(p.queryCount()).arg(p.keyCount());
            else
                parts << tr("n = %1").arg(p.n);
        }
        if (p.dModel != other.dModel)
            parts << tr("d_model = %1").arg(p.dModel);
        if (all || p.heads != other.heads)
            parts << tr("h = %1").arg(p.heads);
        if (all || p.dK() != other.dK())
            parts << tr("d_k = %1").arg(p.dK());
        return parts.join(QStringLiteral(", "));
    };
    // A long model run is shown by the Model and Long tabs only: say so, and what the other
    // views still show.
    if (wanted.tensors && wanted.tensors->longOnly())
        return tr("%1: %2 tokens, every layer \u00d7 head in the Model tab and each head whole in "
                  "the Long tab; the Heads, Steps, A/B and Tokens views still show the previous "
                  "session (%3).\n%4")
            .arg(wanted.tensors->modelName())
            .arg(wanted.tensors->queryCount())
            .arg(brief(shown, wanted), full);
    // First line (wrapped): what the heatmaps show; second (elided, whole in the tooltip): why.
    return tr("Not computed for %1: the heatmaps and Steps show the previous parameters, %2.\n%3")
        .arg(brief(wanted, shown), brief(shown, wanted), full);
}

} // namespace attn
