#include "core/analysis/shownview.h"

#include "core/analysis/metrics.h"
#include "core/base/threads.h"

#include <algorithm>
#include <cmath>
#include <string>
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

void checkIndices(const std::vector<int> &kept, Index count, const char *what)
{
    if (kept.empty())
        throw InvalidArgument(std::string("selectShownCells: no ") + what + " kept");
    for (int k : kept)
        if (k < 0 || Index(k) >= count)
            throw InvalidArgument(std::string("selectShownCells: ") + what + " index "
                                  + std::to_string(k) + " outside 0 … "
                                  + std::to_string(count - 1));
}

} // namespace

EngineResult selectShownCells(const EngineResult &in, const ShownCells &cells)
{
    const Index nQ = in.weightsMean.rows(), nK = in.weightsMean.cols();
    checkIndices(cells.queries, nQ, "query");
    checkIndices(cells.keys, nK, "key");
    const std::vector<int> &qs = cells.queries, &ks = cells.keys;
    EngineResult out;
    out.scale = in.scale;
    out.alibiSlopes = in.alibiSlopes;
    out.sinkMass = in.sinkMass; // of the whole rows, before keys are hidden
    out.positionBiasCausal = in.positionBiasCausal;
    // The variants' numbers: differential attention's A₁ and A₂ and λ, the learned sink's mass
    // and the gate of each shown row (of the whole row), signed weights staying signed.
    out.signedWeights = in.signedWeights;
    out.lambda = in.lambda;
    out.sinkLogits = in.sinkLogits;

    const int h = int(in.weights.size());
    const Index rows = Index(qs.size()), cols = Index(ks.size());
    const auto whole = [&](const MatrixD &m) { return m.rows() == nQ && m.cols() == nK; };
    if (in.maskState.rows() == nQ && in.maskState.cols() == nK)
        out.maskState = pick(in.maskState, qs, ks);
    const bool haveScores = int(in.scores.size()) == h && int(in.scaledScores.size()) == h;
    out.weights.resize(std::size_t(h));
    out.fullyMasked.resize(std::size_t(h));
    out.metrics.resize(std::size_t(h));
    if (haveScores) {
        out.scores.resize(std::size_t(h));
        out.scaledScores.resize(std::size_t(h));
    }
    // The position scheme's step (RoPE's unrotated scores, ALiBi's bias): the shown cells.
    for (auto [from, to] : {std::pair {&in.unrotatedScores, &out.unrotatedScores},
                            std::pair {&in.positionBias, &out.positionBias}}) {
        for (const MatrixD &m : *from)
            to->push_back(whole(m) ? pick(m, qs, ks) : MatrixD());
    }
    for (auto [from, to] : {std::pair {&in.firstWeights, &out.firstWeights},
                            std::pair {&in.secondWeights, &out.secondWeights}}) {
        for (const MatrixD &m : *from)
            to->push_back(whole(m) ? pick(m, qs, ks) : MatrixD());
    }
    // Per-row values of each head (the learned sink's mass, the gate σ(g)): the shown rows'.
    for (auto [from, to] :
         {std::pair {&in.learnedSinkMass, &out.learnedSinkMass}, std::pair {&in.gate, &out.gate}}) {
        for (const VectorD &values : *from) {
            VectorD shown(rows);
            for (Index r = 0; r < rows && values.size() == nQ; ++r)
                shown(r) = values(qs[std::size_t(r)]);
            to->push_back(values.size() == nQ ? shown : VectorD());
        }
    }
    // A signed row (A₁ − λA₂) has no distribution over the shown keys to renormalise to.
    const bool renormalize = cells.renormalize && !in.signedWeights;
    std::vector<NonFiniteReport> nonFinite(static_cast<std::size_t>(h));
    // Heads are independent: both cores for long sequences (n = 4096 takes seconds otherwise),
    // by the core's policy for ~20 flops per cell (pick, renormalise, metrics).
    [[maybe_unused]] const bool parallel
        = threadsForFlops(double(h) * double(rows) * double(cols) * 20.0) > 1;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (int head = 0; head < h; ++head) {
        const std::size_t k = std::size_t(head);
        MatrixD w = pick(in.weights[k], qs, ks);
        // A gated row is σ(g_i)·a_i: its softmax row a_i is what is renormalised over the shown
        // keys and measured (the full engine's metrics are of the rows before the gate), and
        // the gate multiplies the renormalised row again.
        const bool gated = k < out.gate.size() && out.gate[k].size() == rows;
        MatrixD beforeGate;
        if (gated) {
            beforeGate = w;
            for (Index r = 0; r < rows; ++r) {
                const double g = out.gate[k](r);
                if (g > 0.0)
                    beforeGate.row(r) /= g;
                else
                    beforeGate.row(r).setZero();
            }
        }
        MatrixD &rowsShown = gated ? beforeGate : w;
        std::vector<std::uint8_t> flags(std::size_t(rows), 0);
        const std::vector<std::uint8_t> *inFlags
            = k < in.fullyMasked.size() ? &in.fullyMasked[k] : nullptr;
        for (Index r = 0; r < rows; ++r) {
            const std::size_t src = std::size_t(qs[std::size_t(r)]);
            bool masked = inFlags && src < inFlags->size() && (*inFlags)[src];
            if (renormalize && !masked) {
                const double sum = rowsShown.row(r).sum();
                if (sum > 0.0 && std::isfinite(sum))
                    rowsShown.row(r) /= sum;
                else if (!(sum > 0.0)) {
                    rowsShown.row(r).setZero(); // the shown keys had no weight
                    masked = true;
                }
            }
            flags[std::size_t(r)] = masked ? 1 : 0;
        }
        if (gated && renormalize)
            w = out.gate[k].asDiagonal() * beforeGate;
        if (haveScores) { // (stored weights may come without scores: those stay empty)
            if (whole(in.scores[k]))
                out.scores[k] = pick(in.scores[k], qs, ks);
            if (whole(in.scaledScores[k]))
                out.scaledScores[k] = pick(in.scaledScores[k], qs, ks);
        }
        if (cells.keepRowMetrics && k < in.metrics.size() && in.metrics[k].maxWeight.size() == nQ) {
            // Trimmed padding only: the padded keys had weight 0, so each kept row's metrics
            // are the computation's (over its real keys already); keep the real rows.
            const RowMetrics &m = in.metrics[k];
            RowMetrics &o = out.metrics[k];
            for (VectorD RowMetrics::*series :
                 {&RowMetrics::maxWeight, &RowMetrics::entropy, &RowMetrics::effectiveTerms,
                  &RowMetrics::jacobianNorm, &RowMetrics::rowSumError}) {
                (o.*series).resize(rows);
                for (Index r = 0; r < rows; ++r)
                    (o.*series)(r) = (m.*series)(qs[std::size_t(r)]);
            }
            o.fullyMasked = flags;
        } else {
            out.metrics[k] = rowMetrics(gated ? beforeGate : w, flags);
        }
        nonFinite[k] = findNonFinite(w);
        out.fullyMasked[k] = std::move(flags);
        out.weights[k] = std::move(w);
    }
    out.weightsMean = MatrixD::Zero(rows, cols);
    for (int head = 0; head < h; ++head) {
        const std::size_t k = std::size_t(head);
        out.weightsMean += out.weights[k];
        out.worstRowSumError
            = std::max(out.worstRowSumError, summarize(out.metrics[k]).worstRowSumError);
        const NonFiniteReport &nf = nonFinite[k];
        if (nf.found) {
            if (!out.nonFinite.found) {
                out.nonFinite = nf;
            } else {
                out.nonFinite.nanCount += nf.nanCount;
                out.nonFinite.infCount += nf.infCount;
            }
        }
    }
    if (h > 0)
        out.weightsMean /= double(h);
    return out;
}

} // namespace attn
