// attnlab compute: a user's tensors in (.npz), attention results out (.npz).
//
// Input arrays (names as in torch.nn.MultiheadAttention's state_dict):
//   query n_q × d_model, key n_k × d_model, value n_k × d_v       (required)
//   in_proj_weight 3·d_model × d_model, in_proj_bias 3·d_model,
//   out_proj_weight d_model × d_model, out_proj_bias d_model, num_heads (0-d integer)
//     → multi-head attention (Vaswani et al. 2017, §3.2.2; matches
//       torch.nn.MultiheadAttention(batch_first=True)); d_v = d_model; biases optional (absent
//       means zero, like bias=False).
//   q_proj_weight d_model × d_model, k_proj_weight d_model × kdim, v_proj_weight d_model × vdim
//     instead of in_proj_weight → separate projections (torch.nn.MultiheadAttention(kdim=…,
//     vdim=…)): key n_k × kdim, value n_k × vdim.
//   num_heads (optionally num_kv_heads) without those parameters → already-projected heads of
//     grouped-query attention: query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v.
//   none of them → plain scaled dot-product attention (§3.2.1), one head, d_k = d_model.
//   attn_mask n_q × n_k (bool: convention below; float: added to the scaled scores)
//   key_padding_mask n_k bool (True = padding under the default convention)
//   For already-projected heads (or plain attention, one head), the 2025 variants
//   (core/attention/variants.h): sink_logits (h) learned sinks; query2, key2 (as query, key)
//   and lambda (1 or h) differential attention; gate_logits (n_q × h·d_v) an output gate.
// Output arrays: output (n_q × d_model or d_v), weights, scores (raw q kᵀ) (h × n_q × n_k),
// weights_mean (n_q × n_k), max_weight, entropy (nats), effective_terms, jacobian_norm
// (h × n_q, float64), fully_masked (h × n_q bool); alibi_slopes (h) with --positional alibi,
// sink_mass (h × n_q) with --sinks. With the variants: row_sum (h × n_q); learned sinks
// learned_sink_mass (h × n_q) and sink_logits (h), the metrics of the row over the keys and the
// sink; differential weights_first, weights_second (A₁, A₂), lambda (h), weights A₁ − λA₂ and the
// metrics h × 2 × n_q (A₁, A₂); gated gate (σ(g), n_q × h·d_v), output gated.
// --positional, --rope-convention, --rope-base, --kv-heads, --window, --sinks (positionoptions.h)
// run every case as grouped-query attention (core/attention/groupedattention.h). Reading and
// validating the input is core/io/tensorcase.h (shared with the window's File → Open tensors…).

#include "common.h"
#include "positionoptions.h"

#include "core/analysis/metrics.h"
#include "core/attention/attention.h"
#include "core/attention/groupedattention.h"
#include "core/attention/mask.h"
#include "core/attention/multihead.h"
#include "core/attention/variants.h"
#include "core/io/npy.h"
#include "core/io/tensorcase.h"

#include <QDir>
#include <QFileInfo>
#include <QTextStream>

#include <cmath>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

const QString kCommand = QStringLiteral("compute");

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Everything written to the output file, per head.
template<typename T> struct Computed
{
    Matrix<T> output;
    std::vector<Matrix<T>> weights;
    Matrix<T> weightsMean;
    std::vector<Matrix<T>> scores;
    std::vector<std::vector<std::uint8_t>> fullyMasked;
    std::vector<double> alibiSlopes;
    /// The 2025 variants (core/attention/variants.h), when the case has them.
    std::vector<Matrix<T>> firstWeights, secondWeights; ///< differential: A₁, A₂ (h each)
    std::vector<double> lambda, sinkLogits; ///< h each, differential / learned sinks
    std::vector<VectorD> learnedSinkMass; ///< h × n_q, learned sinks
    Matrix<T> gate; ///< n_q × h·d_v σ(g), gated attention
    Index heads = 1;
    Index dK = 0;
    double scale = 1;
    QString mode;
    /// What a fully masked row's output is: out_proj_bias through the output projection, or 0.
    bool outputProjection = false;
};

NpyArray perHeadRows(const std::vector<VectorD> &rows)
{
    NpyArray a;
    const Index nQ = rows.empty() ? 0 : rows.front().size();
    a.shape = {std::int64_t(rows.size()), std::int64_t(nQ)};
    a.type = NpyType::Float64;
    for (const VectorD &r : rows)
        a.values.insert(a.values.end(), r.data(), r.data() + r.size());
    return a;
}

/// Bytes compute holds at its peak for h heads of n_q × n_k attention in elements of
/// `elementBytes`: the per-head weights and raw scores and their mean in T, the same as float64
/// NpyArrays for the output, and the .npz archive built in memory (every member in T, plus one
/// head-stacked member being serialised); plus `inputBytes` (the arrays as read, converted
/// to double, and their typed copies) and the n × d-sized projections and outputs; plus
/// (3h + 2) n_q × n_k matrices in T more, which the counted ones leave out (the scaled scores,
/// copies made while the members are converted and serialised): with them the estimate is the
/// peak resident set `/usr/bin/time -v` measures within 5 % for h = 2 … 8, n = 1 000 … 2 000,
/// float32 and float64 (without them it was 30 % low).
double computeBytes(Index heads, Index nQ, Index nK, Index dModel, Index dV,
                    std::size_t elementBytes, double inputBytes)
{
    const double e = double(elementBytes);
    const double cells = double(nQ) * double(nK);
    const double stacked = double(2 * heads + 1) * cells; // weights, scores (h each), mean
    const double rows = double(nQ + 2 * nK) * double(dModel) + 2.0 * double(nQ) * double(dV);
    return stacked * (2.0 * e + 8.0) + double(heads) * cells * e + 3.0 * rows * e
        + (3.0 * double(heads) + 2.0) * cells * e + 6.0 * double(heads) * double(nQ) * 8.0
        + inputBytes;
}

/// Positions as text for the summary line ("RoPE (half, base 10000)").
QString positionText(const PositionSettings &ps)
{
    switch (ps.scheme) {
    case PositionalScheme::Rope:
        return QStringLiteral("RoPE (%1, base %2)")
            .arg(q(ropeConventionName(ps.ropeConvention)))
            .arg(ps.ropeBase, 0, 'g', 10);
    case PositionalScheme::Alibi:
        return QStringLiteral("ALiBi");
    case PositionalScheme::Sinusoidal:
        return QStringLiteral("sinusoidal added to the inputs");
    case PositionalScheme::None:
        break;
    }
    return QStringLiteral("no positions");
}

/// "0.5, 1, 2" (or "0.5" when every head has the same value).
QString numberList(const std::vector<double> &values)
{
    QStringList parts;
    for (const double v : values)
        parts << QString::number(v, 'g', 6);
    parts.removeDuplicates();
    return parts.join(QStringLiteral(", "));
}

/// h × 2 × n_q: the metric of A₁ (index 0) and A₂ (index 1) of each head.
NpyArray perHeadPairRows(const std::vector<VectorD> &first, const std::vector<VectorD> &second)
{
    NpyArray a;
    const Index nQ = first.empty() ? 0 : first.front().size();
    a.shape = {std::int64_t(first.size()), 2, std::int64_t(nQ)};
    a.type = NpyType::Float64;
    for (std::size_t h = 0; h < first.size(); ++h) {
        a.values.insert(a.values.end(), first[h].data(), first[h].data() + first[h].size());
        a.values.insert(a.values.end(), second[h].data(), second[h].data() + second[h].size());
    }
    return a;
}

/// "multi-head attention (PyTorch layout, with bias, separate q/k/v projections, kdim = 10,
/// vdim = 6)": what the summary says of a layer.
template<typename T> QString layerModeText(const MultiheadAttention<T> &layer)
{
    return QStringLiteral("multi-head attention (PyTorch layout, %1%2)")
        .arg(layer.hasBias() ? QStringLiteral("with bias") : QStringLiteral("no bias"),
             layer.hasSeparateProjections()
                 ? QStringLiteral(", separate q/k/v projections, kdim = %1, vdim = %2")
                       .arg(layer.keyDim())
                       .arg(layer.valueDim())
                 : QString());
}

/// Grouped-query attention for every kind of case (projected heads; PyTorch layout projected
/// here, then out_proj; plain attention as one head) with RoPE/ALiBi and the window.
template<typename T>
void computeGrouped(const TensorCase<T> &tc, const Matrix<T> &query, const Matrix<T> &key,
                    const Matrix<T> &value, const PositionSettings &ps, Computed<T> &c)
{
    const Index nQ = tc.queryCount(), nK = tc.keyCount();
    AttentionMask mask = tc.mask;
    if (ps.window > 0)
        mask = AttentionMask::slidingWindow(nQ, nK, ps.window, ps.sinks) | mask;
    PositionOptions po;
    po.scheme = ps.scheme;
    po.ropeConvention = ps.ropeConvention;
    po.ropeBase = ps.ropeBase;
    GroupedAttentionResult<T> r;
    if (tc.multihead) {
        // The layer's own projections (in_proj_weight or the separate q/k/v_proj_weight):
        // q n_q × d_model, k and v n_k × d_model, as nn.MultiheadAttention.
        const MultiheadAttention<T> layer = tc.layer();
        const ProjectedInputs<T> p = layer.project(query, key, value);
        r = groupedQueryAttention<T>(p.query, p.key, p.value, tc.heads, tc.heads, mask, {}, po);
        c.output = (r.output * tc.outProjWeight.transpose()).rowwise() + tc.outProjBias.transpose();
        c.outputProjection = true;
        c.mode = layerModeText(layer);
        c.dK = tc.headDim();
    } else {
        const Index h = tc.projectedHeads ? tc.heads : 1, g = tc.projectedHeads ? tc.kvHeads : 1;
        if (tc.variants.any()) {
            GroupedVariantResult<T> v
                = groupedVariantAttention<T>(query, key, value, h, g, tc.variants, mask, {}, po);
            r = std::move(v.attention);
            c.firstWeights = std::move(v.firstWeights);
            c.secondWeights = std::move(v.secondWeights);
            c.lambda = std::move(v.lambda);
            c.sinkLogits = std::move(v.sinkLogits);
            c.learnedSinkMass = std::move(v.sinkMass);
            c.gate = std::move(v.gate);
        } else {
            r = groupedQueryAttention<T>(query, key, value, h, g, mask, {}, po);
        }
        c.output = r.output;
        c.mode = !tc.projectedHeads ? QStringLiteral("plain scaled dot-product attention")
            : g == h ? QStringLiteral("multi-head attention on projected heads (h = g = %1)").arg(h)
            : g == 1 ? QStringLiteral("multi-query attention on projected heads (g = 1 key/value "
                                      "head)")
                     : QStringLiteral("grouped-query attention on projected heads (g = %1 "
                                      "key/value heads)")
                           .arg(g);
        c.dK = query.cols() / h;
    }
    if (!c.sinkLogits.empty())
        c.mode += QStringLiteral(", learned sinks (b = %1)").arg(numberList(c.sinkLogits));
    if (!c.lambda.empty())
        c.mode += QStringLiteral(", differential attention (A1 - lambda A2, lambda = %1)")
                      .arg(numberList(c.lambda));
    if (c.gate.size() > 0)
        c.mode += QStringLiteral(", gated outputs (sigmoid of gate_logits)");
    c.mode += QStringLiteral(", ") + positionText(ps);
    if (ps.window > 0)
        c.mode += QStringLiteral(", sliding window w = %1 with %2")
                      .arg(ps.window)
                      .arg(ps.sinks == 1 ? QStringLiteral("1 sink")
                                         : QStringLiteral("%1 sinks").arg(ps.sinks));
    c.heads = Index(r.weights.size());
    c.weightsMean = Matrix<T>::Zero(nQ, nK);
    for (const Matrix<T> &w : r.weights)
        c.weightsMean += w;
    c.weightsMean /= T(c.heads);
    c.weights = std::move(r.weights);
    c.scores = std::move(r.scores);
    c.fullyMasked = std::move(r.fullyMasked);
    c.alibiSlopes = std::move(r.alibiSlopes);
    c.scale = r.scale;
}

/// Writes --out (the output, weights, scores, per-row metrics, and the ALiBi slopes and sink
/// mass when used) and prints the one-line summary.
template<typename T>
int writeComputed(const Computed<T> &c, const QString &inPath, const QString &outPath,
                  const QString &dtypeName, const QStringList &maskDescription,
                  const PositionSettings &ps, Index nQ, Index nK, Index dModel, Index keyColumns,
                  Index valueColumns)
{
    constexpr NpyType outType = std::is_same_v<T, float> ? NpyType::Float32 : NpyType::Float64;
    // Per-row metrics (h × n_q).
    std::vector<VectorD> maxW, entropy, effective, jacobian;
    NpyArray fully;
    fully.shape = {std::int64_t(c.heads), std::int64_t(nQ)};
    fully.type = NpyType::Bool;
    double worstRowSum = 0;
    QStringList maskedRows;
    // The metrics describe softmax rows: with learned sinks the row over the keys and the sink
    // (n_k + 1 entries, the sink last); with differential attention A₁ and A₂ (h × 2 × n_q).
    std::vector<VectorD> maxW2, entropy2, effective2, jacobian2, rowSums;
    const bool differential = !c.lambda.empty(), learnedSinks = !c.sinkLogits.empty();
    for (Index h = 0; h < c.heads; ++h) {
        const std::size_t hi = std::size_t(h);
        const auto keep = [&](const RowMetrics &m, bool second) {
            (second ? maxW2 : maxW).push_back(m.maxWeight);
            (second ? entropy2 : entropy).push_back(m.entropy);
            (second ? effective2 : effective).push_back(m.effectiveTerms);
            (second ? jacobian2 : jacobian).push_back(m.jacobianNorm);
            worstRowSum = std::max(worstRowSum, summarize(m).worstRowSumError);
        };
        if (differential) {
            keep(rowMetrics<T>(c.firstWeights[hi], c.fullyMasked[hi]), false);
            keep(rowMetrics<T>(c.secondWeights[hi], c.fullyMasked[hi]), true);
        } else if (learnedSinks) {
            keep(learnedSinkRowMetrics(c.weights[hi].template cast<double>(), c.learnedSinkMass[hi],
                                       c.fullyMasked[hi]),
                 false);
        } else {
            keep(rowMetrics<T>(c.weights[hi], c.fullyMasked[hi]), false);
        }
        if (differential || learnedSinks || c.gate.size() > 0)
            rowSums.push_back(c.weights[hi].template cast<double>().rowwise().sum());
        for (Index i = 0; i < nQ; ++i) {
            const bool f = c.fullyMasked[std::size_t(h)].at(std::size_t(i)) != 0;
            fully.values.push_back(f ? 1.0 : 0.0);
            if (f)
                maskedRows << (c.heads > 1 ? QStringLiteral("head %1 row %2").arg(h).arg(i)
                                           : QStringLiteral("row %1").arg(i));
        }
    }

    auto typed = [](NpyArray a) {
        a.type = outType;
        return a;
    };
    std::vector<std::pair<std::string, NpyArray>> members = {
        {"output", typed(NpyArray::fromMatrix<T>(c.output))},
        {"weights", typed(NpyArray::fromMatrices<T>(c.weights))},
        {"weights_mean", typed(NpyArray::fromMatrix<T>(c.weightsMean))},
        {"scores", typed(NpyArray::fromMatrices<T>(c.scores))},
        {"max_weight", differential ? perHeadPairRows(maxW, maxW2) : perHeadRows(maxW)},
        {"entropy", differential ? perHeadPairRows(entropy, entropy2) : perHeadRows(entropy)},
        {"effective_terms",
         differential ? perHeadPairRows(effective, effective2) : perHeadRows(effective)},
        {"jacobian_norm",
         differential ? perHeadPairRows(jacobian, jacobian2) : perHeadRows(jacobian)},
        {"fully_masked", fully},
    };
    const auto perHeadNumbers = [](const std::vector<double> &v) {
        NpyArray a;
        a.shape = {std::int64_t(v.size())};
        a.values = v;
        return a;
    };
    if (!rowSums.empty())
        members.emplace_back("row_sum", perHeadRows(rowSums));
    if (differential) {
        members.emplace_back("weights_first", typed(NpyArray::fromMatrices<T>(c.firstWeights)));
        members.emplace_back("weights_second", typed(NpyArray::fromMatrices<T>(c.secondWeights)));
        members.emplace_back("lambda", perHeadNumbers(c.lambda));
    }
    if (learnedSinks) {
        members.emplace_back("learned_sink_mass", perHeadRows(c.learnedSinkMass));
        members.emplace_back("sink_logits", perHeadNumbers(c.sinkLogits));
    }
    if (c.gate.size() > 0)
        members.emplace_back("gate", typed(NpyArray::fromMatrix<T>(c.gate)));
    if (!c.alibiSlopes.empty()) {
        NpyArray slopes;
        slopes.shape = {std::int64_t(c.alibiSlopes.size())};
        slopes.values = c.alibiSlopes;
        members.emplace_back("alibi_slopes", slopes);
    }
    if (ps.sinks > 0) {
        std::vector<VectorD> mass;
        for (const Matrix<T> &w : c.weights)
            mass.push_back(sinkWeightMass<T>(w, ps.sinks));
        members.emplace_back("sink_mass", perHeadRows(mass));
    }
    try {
        writeNpz(outPath.toStdString(), members);
    } catch (const NpyError &e) {
        return failure(kCommand, QString::fromUtf8(e.what()));
    }

    QTextStream out(stdout);
    out << QStringLiteral("%1 → %2: %3 on query %4, key %5, value %6; h = %7, d_k = %8, "
                          "scale %9, %10; masks: %11. Output %12; worst row-sum error %13; "
                          "fully masked rows: %14.\n")
               .arg(QFileInfo(inPath).fileName(),
                    QDir::toNativeSeparators(QFileInfo(outPath).absoluteFilePath()), c.mode,
                    q(shapeString(nQ, dModel)), q(shapeString(nK, keyColumns)),
                    q(shapeString(nK, valueColumns)))
               .arg(c.heads)
               .arg(c.dK)
               .arg(c.scale, 0, 'g', 6)
               .arg(dtypeName,
                    maskDescription.isEmpty() ? QStringLiteral("none")
                                              : maskDescription.join(QStringLiteral(", ")),
                    q(shapeString(c.output.rows(), c.output.cols())))
               .arg(worstRowSum, 0, 'g', 3)
               .arg(maskedRows.isEmpty()
                        ? QStringLiteral("none")
                        : QStringLiteral("%1 (weights 0, output row = %2)")
                              .arg(maskedRows.join(QStringLiteral(", ")),
                                   c.outputProjection ? QStringLiteral("out_proj_bias")
                                                      : QStringLiteral("0")));
    return ExitOk;
}

template<typename T>
int computeAs(const NamedArrays &arrays, const QString &inPath, const QString &outPath,
              MaskConvention convention, const QString &dtypeName, double budgetBytes,
              const PositionSettings &ps)
{
    // Parsing and validation are shared with the window's File → Open tensors… (tensorcase.h).
    const TensorCase<T> tc = tensorCaseFromArrays<T>(arrays, inPath.toStdString(), convention);
    if (!tc.unusedArrays.empty()) {
        QStringList names;
        for (const std::string &n : tc.unusedArrays)
            names << q(n);
        QTextStream(stderr) << "attnlab compute: note: ignoring arrays not used by compute: "
                            << names.join(QStringLiteral(", ")) << "\n";
    }
    const Index nQ = tc.queryCount(), nK = tc.keyCount(), dModel = tc.dModel();
    const QString note = windowNote(ps, nQ, nK);
    if (!note.isEmpty())
        QTextStream(stderr) << "attnlab compute: " << note << "\n";
    if (ps.scheme == PositionalScheme::Sinusoidal && tc.projectedHeads)
        throw InvalidArgument("--positional sinusoidal adds the encoding to the inputs before the "
                              "projections; these are already-projected heads (use rope or "
                              "alibi)");
    if (ps.scheme == PositionalScheme::Sinusoidal && tc.key.cols() != dModel)
        throw InvalidArgument(
            QStringLiteral(
                "--positional sinusoidal adds the d_model-wide encoding to the query and "
                "the key, but the key is %1 x %2 (kdim = %2) and d_model = %3 (separate "
                "projections): use rope or alibi, which act on the projected heads")
                .arg(nK)
                .arg(tc.key.cols())
                .arg(dModel)
                .toStdString());
    // Copies only when the encoding is added (the inputs may be large).
    Matrix<T> queryPe, keyPe, valuePe;
    const bool addPe = ps.scheme == PositionalScheme::Sinusoidal;
    if (addPe) {
        // PE (Vaswani et al. 2017, §3.5) at positions 0…n−1, added to every d_model-wide input.
        queryPe = tc.query + sinusoidalEncoding(nQ, dModel).cast<T>();
        keyPe = tc.key + sinusoidalEncoding(nK, dModel).cast<T>();
        valuePe = tc.value.cols() == dModel
            ? Matrix<T>(tc.value + sinusoidalEncoding(nK, dModel).cast<T>())
            : tc.value;
    }
    const Matrix<T> &query = addPe ? queryPe : tc.query;
    const Matrix<T> &key = addPe ? keyPe : tc.key;
    const Matrix<T> &value = addPe ? valuePe : tc.value;
    const bool grouped = tc.projectedHeads || tc.variants.any()
        || ps.scheme == PositionalScheme::Rope || ps.scheme == PositionalScheme::Alibi
        || ps.window > 0;
    QStringList maskDescription;
    for (const std::string &d : tc.maskDescription)
        maskDescription << q(d);

    // The n_q × n_k matrices of every head dominate: refuse before computing them.
    double inputBytes = 0;
    for (const auto &[name, array] : arrays)
        inputBytes += double(array.values.size()) * (8.0 + double(sizeof(T)));
    // Differential attention keeps A₁ and A₂ beside A₁ − λA₂.
    const Index stacks = tc.variants.isDifferential() ? 3 : 1;
    const double need
        = computeBytes(stacks * tc.heads, nQ, nK, dModel, value.cols(), sizeof(T), inputBytes);
    if (need > budgetBytes) {
        return inputError(
            kCommand,
            QStringLiteral("h = %1 head(s) of n_q = %2 queries x n_k = %3 keys need about %4 "
                           "(weights and raw scores, %5 x %2 x %3 %6 each, kept for the output "
                           ".npz, plus the inputs), over --memory-budget-mib %7: use fewer "
                           "queries or keys, or raise --memory-budget-mib")
                .arg(tc.heads)
                .arg(nQ)
                .arg(nK)
                .arg(mibText(need))
                .arg(tc.heads)
                .arg(dtypeName)
                .arg(budgetBytes / (1024.0 * 1024.0), 0, 'f', 0));
    }

    Computed<T> c;
    if (grouped) {
        computeGrouped<T>(tc, query, key, value, ps, c);
    } else if (tc.multihead) {
        const MultiheadAttention<T> layer = tc.layer();
        MultiheadResult<T> r = layer.forward(query, key, value, tc.mask);
        c.output = std::move(r.output);
        c.weights = std::move(r.weights);
        c.weightsMean = std::move(r.weightsMean);
        c.scores = std::move(r.scores);
        c.fullyMasked = std::move(r.fullyMasked);
        c.heads = layer.heads();
        c.dK = layer.headDim();
        c.scale = r.scale;
        c.outputProjection = true;
        c.mode = layerModeText(layer);
    } else {
        AttentionResult<T> r = scaledDotProductAttention<T>(query, key, value, tc.mask);
        c.output = std::move(r.output);
        c.weightsMean = r.weights;
        c.weights.push_back(std::move(r.weights));
        c.scores.push_back(std::move(r.scores));
        c.fullyMasked.push_back(std::move(r.fullyMasked));
        c.heads = 1;
        c.dK = dModel;
        c.scale = r.scale;
        c.mode = QStringLiteral("plain scaled dot-product attention");
    }
    if (!grouped && addPe)
        c.mode += QStringLiteral(", ") + positionText(ps);
    // The sliding window is causal: name it with the file's masks.
    if (ps.window > 0)
        maskDescription << QStringLiteral("causal sliding window");

    return writeComputed<T>(c, inPath, outPath, dtypeName, maskDescription, ps, nQ, nK, dModel,
                            key.cols(), value.cols());
}

/// --kv-heads g for already-projected heads: added to the arrays as num_kv_heads when the file
/// has none; a usage error when the file has nn.MultiheadAttention's projections (g = h), no
/// num_heads, or a num_kv_heads that disagrees.
std::optional<int> statedKeyValueHeads(NamedArrays &arrays, const QString &inPath, Index kvHeads)
{
    // --kv-heads states g for already-projected heads (num_kv_heads when the file
    // has none; it must agree when it has).
    const auto has = [&](const char *name) {
        for (const auto &[n, a] : arrays)
            if (n == name)
                return &a;
        return static_cast<const NpyArray *>(nullptr);
    };
    if (has("in_proj_weight") || has("out_proj_weight"))
        return usageError(kCommand,
                          QStringLiteral("--kv-heads needs already-projected heads "
                                         "(num_heads without in_proj_weight); "
                                         "nn.MultiheadAttention's layout has g = h"));
    if (!has("num_heads"))
        return usageError(kCommand,
                          QStringLiteral("--kv-heads needs num_heads in '%1' (query "
                                         "n_q x h*d_k, key n_k x g*d_k)")
                              .arg(inPath));
    if (const NpyArray *g = has("num_kv_heads")) {
        if (g->values.size() != 1 || g->values[0] != double(kvHeads))
            return usageError(kCommand,
                              QStringLiteral("--kv-heads %1 disagrees with "
                                             "num_kv_heads in '%2'")
                                  .arg(kvHeads)
                                  .arg(inPath));
    } else {
        arrays.emplace_back("num_kv_heads", NpyArray::scalarInt(kvHeads));
    }
    return std::nullopt;
}

} // namespace

int runCompute(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Attention on your tensors. Reads query, key, value (and optionally PyTorch-named "
        "in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, num_heads for "
        "multi-head attention, or q_proj_weight, k_proj_weight, v_proj_weight instead of "
        "in_proj_weight when key and value have their own widths kdim, vdim; attn_mask n_q×n_k "
        "bool or additive float; key_padding_mask n_k bool; or already-projected heads: query "
        "n_q×h·d_k, key n_k×g·d_k, value n_k×g·d_v with num_heads and optional num_kv_heads, no "
        "in_proj_weight; with them the 2025 variants: sink_logits (h) learned sinks, query2 "
        "and key2 (as query, key) with lambda differential attention, gate_logits "
        "(n_q×h·d_v) an output gate) from an .npz and writes output, weights (h×n_q×n_k), "
        "weights_mean, scores, max_weight, entropy, effective_terms, jacobian_norm and "
        "fully_masked (plus alibi_slopes, sink_mass; row_sum, learned_sink_mass, weights_first, "
        "weights_second, gate with the variants) to another .npz. "
        "Bad input exits with status 2 and writes nothing."));
    const QCommandLineOption inOption(QStringLiteral("in"), QStringLiteral("Input .npz file."),
                                      QStringLiteral("file"));
    const QCommandLineOption outOption(QStringLiteral("out"),
                                       QStringLiteral("Output .npz file (written atomically)."),
                                       QStringLiteral("file"));
    const QCommandLineOption conventionOption(
        QStringLiteral("mask-convention"),
        QStringLiteral("Meaning of True in boolean attn_mask and key_padding_mask: 'masked' "
                       "(nn.MultiheadAttention) or 'allowed' (F.scaled_dot_product_attention)."),
        QStringLiteral("masked|allowed"), QStringLiteral("masked"));
    const QCommandLineOption dtypeOption(
        QStringLiteral("dtype"),
        QStringLiteral("Compute type: float64 or float32. Metrics are float64."),
        QStringLiteral("float32|float64"), QStringLiteral("float64"));
    const QCommandLineOption batchOption(
        QStringLiteral("batch"),
        QStringLiteral("Batch item to compute when query, key and value have a leading batch "
                       "axis (B, n, E), as PyTorch saves batch_first inputs; 0 ... B-1."),
        QStringLiteral("I"), QStringLiteral("0"));
    addOptionsWithDefaults(
        parser,
        QList<QCommandLineOption> {inOption, outOption, conventionOption, dtypeOption, batchOption,
                                   memoryBudgetOption(QStringLiteral(
                                       "inputs whose weights and scores (h x n_q x n_k, twice, "
                                       "plus the output .npz built in memory) need"))}
            + positionOptions());
    if (const std::optional<int> done = parseCommandLine(parser, kCommand, arguments))
        return *done;
    if (!parser.isSet(inOption))
        return usageError(kCommand, QStringLiteral("--in <file> is required"));
    if (!parser.isSet(outOption))
        return usageError(kCommand, QStringLiteral("--out <file> is required"));
    const QString convention = parser.value(conventionOption);
    if (convention != QLatin1String("masked") && convention != QLatin1String("allowed"))
        return usageError(kCommand,
                          QStringLiteral("--mask-convention must be 'masked' or "
                                         "'allowed', got '%1'")
                              .arg(convention));
    const QString dtype = parser.value(dtypeOption);
    if (dtype != QLatin1String("float32") && dtype != QLatin1String("float64"))
        return usageError(
            kCommand,
            QStringLiteral("--dtype must be 'float32' or 'float64', got '%1'").arg(dtype));
    bool batchOk = false;
    const int batch = parser.value(batchOption).toInt(&batchOk);
    if (!batchOk || batch < 0)
        return usageError(kCommand,
                          QStringLiteral("--batch must be an integer >= 0, got '%1'")
                              .arg(parser.value(batchOption)));
    const QString inPath = parser.value(inOption);
    const QString outPath = parser.value(outOption);
    if (outPath.isEmpty() || outPath == QLatin1String("-"))
        return usageError(kCommand,
                          QStringLiteral("--out needs a file name (.npz); standard output "
                                         "cannot hold an .npz archive"));
    if (QFileInfo(outPath).absoluteFilePath() == QFileInfo(inPath).absoluteFilePath())
        return usageError(kCommand,
                          QStringLiteral("--out '%1' is the input file: choose another "
                                         "name so the input is not overwritten")
                              .arg(outPath));
    // Also the input reached another way (a link, "./"): see checkOutputPaths.
    if (const auto refused = checkOutputPaths(kCommand, {{QStringLiteral("--out"), outPath}},
                                              {{QStringLiteral("--in"), inPath}}))
        return *refused;
    // np.load opens an archive by its contents, but a user who typed "r.csv" expects text: an
    // .npz under another name is refused rather than written.
    if (!outPath.endsWith(QLatin1String(".npz"), Qt::CaseInsensitive))
        return usageError(kCommand,
                          QStringLiteral("--out '%1' must end in .npz: compute writes an .npz "
                                         "archive (NumPy's np.load reads it)")
                              .arg(outPath));
    const MaskConvention maskConvention
        = convention == QLatin1String("allowed") ? MaskConvention::Allowed : MaskConvention::Masked;
    QString error;
    const auto budget = memoryBudgetBytes(parser, &error);
    if (!budget)
        return usageError(kCommand, error);
    const auto position = positionSettings(parser, &error);
    if (!position)
        return usageError(kCommand, error);

    try {
        NamedArrays arrays = readInputNpz(
            inPath, *budget,
            QStringLiteral("--memory-budget-mib %1").arg(*budget / (1024.0 * 1024.0), 0, 'f', 0));
        // A leading batch axis (B, n, E): item --batch (an error naming B when out of range).
        arrays = tensorBatchItem(arrays, batch);
        if (position->kvHeads) {
            if (const auto refused = statedKeyValueHeads(arrays, inPath, *position->kvHeads))
                return *refused;
        }
        return dtype == QLatin1String("float32")
            ? computeAs<float>(arrays, inPath, outPath, maskConvention, dtype, *budget, *position)
            : computeAs<double>(arrays, inPath, outPath, maskConvention, dtype, *budget, *position);
    } catch (const NpyError &e) {
        return inputError(kCommand, QString::fromUtf8(e.what()));
    } catch (const InvalidArgument &e) {
        return inputError(kCommand, QString::fromUtf8(e.what()));
    } catch (const NonFiniteInput &e) {
        return inputError(kCommand, QString::fromUtf8(e.what()));
    } catch (const std::bad_alloc &) {
        return failure(kCommand,
                       QStringLiteral("out of memory while computing '%1': its sizes fit "
                                      "--memory-budget-mib but not this machine's free memory; "
                                      "use a lower --memory-budget-mib or smaller inputs")
                           .arg(inPath));
    } catch (const std::exception &e) {
        return failure(kCommand, QString::fromUtf8(e.what()));
    }
}

} // namespace attn::cli
