// E6 — a shift is a rotation (docs/experiments.md; Vaswani et al. 2017, §3.5).

#include "core/experiments/experiments_p.h"

#include "core/attention/positional.h"

#include <cmath>

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index d = pv.integer("d_model");
    const Index offset = pv.integer("offset");
    const Index positions = pv.integer("positions");
    const MatrixD pe = sinusoidalEncoding(positions + offset, d); // (positions + k) × d
    context.checkCancel();

    Table table({"pair", "omega", "angle", "max_error"});
    MatrixD errors(positions, d / 2); // |R(ω_i k) PE[pos, pair i] − PE[pos + k, pair i]|
    double worst = 0;
    for (Index i = 0; i < d / 2; ++i) {
        const double omega = sinusoidFrequency(i, d);
        const double angle = omega * double(offset);
        const double c = std::cos(angle), s = std::sin(angle);
        double pairWorst = 0;
        for (Index pos = 0; pos < positions; ++pos) {
            // (sin a, cos a) rotated by θ: (sin(a+θ), cos(a+θ)) = (sin a cos θ + cos a sin θ,
            //                                                     cos a cos θ − sin a sin θ).
            const double sa = pe(pos, 2 * i), ca = pe(pos, 2 * i + 1);
            const double e = std::max(std::abs(sa * c + ca * s - pe(pos + offset, 2 * i)),
                                      std::abs(ca * c - sa * s - pe(pos + offset, 2 * i + 1)));
            errors(pos, i) = e;
            pairWorst = std::max(pairWorst, e);
        }
        worst = std::max(worst, pairWorst);
        table.addRow({std::int64_t(i), omega, angle, pairWorst});
    }
    table.notes.push_back("PE[pos + k] is PE[pos] rotated by omega_i k in every (sin, cos) pair: "
                          "worst error "
                          + Table::formatNumber(worst)
                          + " (rounding), so a fixed offset is a linear map the model can learn");
    if (d % 2 == 1)
        table.notes.emplace_back("odd d_model: the last column is a lone sin without its cos "
                                 "partner and is left out");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["worst_error"] = worst;
    result.matrices.push_back(
        {"encoding", "E6 sinusoidal encoding PE (positions \u00d7 d_model)", pe});
    result.matrices.push_back(
        {"rotation_error", "E6 rotation error (position \u00d7 pair)", errors});
    return result;
}

} // namespace

Entry shiftRotationEntry()
{
    ExperimentInfo info;
    info.id = "E6";
    info.title = "A shift is a rotation";
    info.paperSection = "Vaswani et al. 2017, \u00a73.5";
    info.note = "In the sinusoidal encoding each pair of columns (sin, cos) turns at its own "
                "frequency \u03c9_i = 10000^(\u22122i/d). Moving k positions ahead rotates every "
                "pair by the angle \u03c9_i\u00b7k, the same for every position: PE[pos+k] is a "
                "fixed linear function of PE[pos]. The error is at rounding level (~1e-15). "
                "No random numbers are drawn.";
    ParamSpec seed = seedParam(0, "accepted for uniformity; E6 draws no random numbers");
    seed.unused = true;
    info.params = {
        seed,
        intParam("d_model", 16, 2, 1024, "encoding width d_model"),
        intParam("offset", 5, 0, 10000, "shift k in positions"),
        intParam("positions", 30, 1, 10000, "positions 0 \u2026 positions\u22121 are shifted"),
    };
    info.columns = {"pair", "omega", "angle", "max_error"};
    return {info, &run};
}

} // namespace attn::experiments
