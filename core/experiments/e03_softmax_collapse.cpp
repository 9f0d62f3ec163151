// E3 — softmax collapse over many keys (docs/experiments.md; Vaswani et al. 2017, §3.2.1).

#include "core/experiments/experiments_p.h"

#include "core/random/random.h"

#include <cmath>

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index keys = pv.integer("keys");
    const std::vector<Index> dks = pv.indexList("d_k");
    for (const Index dK : dks) {
        if (double(keys) * double(dK) * 8.0 > double(std::size_t(1) << 30))
            throw InvalidArgument("E3: keys × d_k = " + std::to_string(keys) + " × "
                                  + std::to_string(dK)
                                  + " would need more than 1 GiB for k; lower keys or d_k");
    }
    Table table({"d_k", "dot_std", "max_weight_unscaled", "max_weight_scaled",
                 "effective_terms_unscaled", "effective_terms_scaled"});
    ExperimentResult result;
    const auto keyCount = static_cast<std::size_t>(keys);
    std::vector<double> scratch, dots(keyCount), w(keyCount), squares(keyCount);
    for (std::size_t c = 0; c < dks.size(); ++c) {
        context.checkCancel();
        context.report(double(c) / double(dks.size()));
        const Index dK = dks[c];
        Generator rng(pv.seed()); // a fresh generator per d_k
        const MatrixD q = rng.standardNormal(1, dK); // d_k
        const MatrixD k = rng.standardNormal(keys, dK); // keys × d_k
        for (Index j = 0; j < keys; ++j)
            dots[std::size_t(j)] = numpyDot(k.row(j).data(), q.data(), dK, scratch);
        std::vector<Table::Cell> row = {std::int64_t(dK), numpyStd(dots.data(), keys)};
        double maxW[2], effective[2];
        MatrixD weightsRow(1, keys);
        const double root = std::sqrt(double(dK));
        for (const int scaled : {0, 1}) {
            for (Index j = 0; j < keys; ++j)
                w[std::size_t(j)] = scaled ? dots[std::size_t(j)] / root : dots[std::size_t(j)];
            numpySoftmaxRow(w.data(), w.data(), keys);
            double m = w[0];
            for (Index j = 0; j < keys; ++j) {
                m = std::max(m, w[std::size_t(j)]);
                squares[std::size_t(j)] = w[std::size_t(j)] * w[std::size_t(j)];
            }
            maxW[scaled] = m;
            effective[scaled] = 1.0 / numpySum(squares.data(), keys);
            if (c + 1 == dks.size()) {
                for (Index j = 0; j < keys; ++j)
                    weightsRow(0, j) = w[std::size_t(j)];
                result.matrices.push_back({scaled ? "weights_scaled" : "weights_unscaled",
                                           "E3 weights over " + std::to_string(keys)
                                               + " keys, d_k = " + std::to_string(dK)
                                               + (scaled ? ", scaled" : ", unscaled"),
                                           weightsRow});
            }
        }
        row.emplace_back(maxW[0]);
        row.emplace_back(maxW[1]);
        row.emplace_back(effective[0]);
        row.emplace_back(effective[1]);
        table.addRow(std::move(row));
    }
    table.notes.push_back("effective terms 1/sum(w^2): how many of the keys a query really "
                          "attends to ("
                          + std::to_string(keys)
                          + " for a uniform row, 1 for "
                            "one-hot)");
    table.notes.push_back("unscaled the softmax collapses onto a few keys as d_k grows; scaled "
                          "it keeps spreading over hundreds");
    result.table = std::move(table);
    return result;
}

} // namespace

Entry softmaxCollapseEntry()
{
    ExperimentInfo info;
    info.id = "E3";
    info.title = "Softmax collapse over many keys";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.1";
    info.note = "One query against many keys. Without the 1/\u221ad_k scale the dot products "
                "spread over \u00b1\u221ad_k and the softmax puts almost all weight on one or two "
                "keys: the effective number of terms 1/\u03a3w\u00b2 drops toward 1. Scaled, "
                "the query keeps attending to hundreds of keys. A fresh generator per d_k: q "
                "(d_k), then k (keys \u00d7 d_k); the last d_k's weights are kept as matrices.";
    info.params = {
        seedParam(7, "seed of a fresh generator for every d_k (numpy.random.default_rng)"),
        intParam("keys", 2000, 1, 1000000, "keys attended to by the one query"),
        intListParam("d_k", "16,64,512", 1, 65536, "query/key widths, in order"),
    };
    info.columns = {"d_k",
                    "dot_std",
                    "max_weight_unscaled",
                    "max_weight_scaled",
                    "effective_terms_unscaled",
                    "effective_terms_scaled"};
    return {info, &run};
}

} // namespace attn::experiments
