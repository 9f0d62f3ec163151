#include "core/analysis/headreport.h"

#include "core/base/types.h"

#include <cmath>
#include <cstdio>

namespace attn {

models::ForwardOptions modelHeadForwardOptions(bool contributions)
{
    models::ForwardOptions options;
    options.keepWeights = [](Index, Index) { return true; };
    options.keepQueriesKeys = false;
    options.keepResidual = true;
    options.keepValues = contributions;
    options.logits = false;
    return options;
}

namespace {

/// Value-weighted norms and their summaries, rollout and ablation.
void addContributions(const models::Model &model, const models::ForwardResult &run,
                      const ModelHeadOptions &options, const CancelToken &cancel,
                      ModelHeadReport &report)
{
    const models::ModelConfig &c = model.config();
    const Index n = Index(run.ids.size());
    report.contributions = true;
    report.valueNormSink.resize(c.layers, c.heads);
    report.valueNormMass.resize(c.layers, c.heads);
    if (options.keepValueNorms)
        report.valueNorms.reserve(std::size_t(c.layers * c.heads * n * n));
    std::vector<MatrixD> means;
    for (Index l = 0; l < c.layers; ++l) {
        cancel.throwIfCancelled();
        const models::LayerAttention &layer = run.layers[std::size_t(l)];
        if (Index(layer.values.size()) != run.kvHeads)
            throw InvalidArgument("reportModelHeads: the forward kept no values (keepValues)");
        MatrixD mean = MatrixD::Zero(n, n);
        for (Index h = 0; h < c.heads; ++h) {
            const MatrixD a = layer.weights[std::size_t(h)].cast<double>();
            mean += a / double(c.heads);
            const MatrixD norms = valueWeightedNorms(
                a, layer.values[std::size_t(run.kvHeadOf(h, c.heads))].cast<double>(),
                headOutputProjection(model, l, h));
            const ValueNormSummary s = summarizeValueNorms(norms);
            report.valueNormSink(l, h) = s.sink;
            report.valueNormMass(l, h) = s.mass;
            if (options.keepValueNorms) {
                const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows
                    = norms;
                report.valueNorms.insert(report.valueNorms.end(), rows.data(),
                                         rows.data() + rows.size());
            }
        }
        means.push_back(std::move(mean));
    }
    report.rollout = attentionRollout(means);
    report.ablation = ablateHeads(model, run.ids, options.ablation, cancel);
    report.ablationKind = options.ablation;
}

std::string jsonNumber(double v)
{
    return std::isfinite(v) ? Table::formatNumber(v) : std::string("null");
}

/// [v, …] of a row of numbers.
template<typename Row> std::string jsonRow(const Row &row)
{
    std::string out = "[";
    for (Index j = 0; j < Index(row.size()); ++j)
        out += (j ? ", " : "") + jsonNumber(double(row[std::size_t(j)]));
    return out + "]";
}

/// [[per head] per layer] of a layers × heads matrix, through `cell`.
template<typename Cell> std::string jsonGrid(Index layers, Index heads, Cell cell)
{
    std::string out = "[";
    for (Index l = 0; l < layers; ++l) {
        out += l ? ", [" : "[";
        for (Index h = 0; h < heads; ++h)
            out += (h ? ", " : "") + cell(l, h);
        out += "]";
    }
    return out + "]";
}

/// A score as the text table shows it: 4 decimals (nan for NaN).
std::string roundedText(double v)
{
    if (std::isnan(v))
        return "nan";
    char text[64];
    std::snprintf(text, sizeof text, "%.4f", v);
    return text;
}

} // namespace

ModelHeadReport reportModelHeads(const models::Model &model, const models::ForwardResult &run,
                                 const ModelHeadOptions &options, const CancelToken &cancel)
{
    const models::ModelConfig &c = model.config();
    if (Index(run.layers.size()) != c.layers)
        throw InvalidArgument("reportModelHeads: the forward has "
                              + std::to_string(run.layers.size()) + " layers, the model "
                              + std::to_string(c.layers));
    for (const models::LayerAttention &layer : run.layers)
        for (const MatrixF &w : layer.weights)
            if (w.size() == 0)
                throw InvalidArgument("reportModelHeads: the forward kept not every head's "
                                      "weights (keepWeights)");
    ModelHeadReport report;
    report.rankCollapse = layerRankCollapse(run);
    report.prefixMatching = modelPrefixMatching(model, options.prefixTokens, options.prefixDraws,
                                                options.seed, options.bos, cancel);
    if (options.contributions)
        addContributions(model, run, options, cancel, report);
    return report;
}

std::vector<std::pair<const char *, const MatrixD *>>
headReportColumns(const HeadScores &scores, const ModelHeadReport *report)
{
    std::vector<std::pair<const char *, const MatrixD *>> columns = headScoreColumns(scores);
    if (report)
        columns.emplace_back("prefix_matching", &report->prefixMatching);
    if (report && report->contributions) {
        columns.emplace_back("value_norm_sink", &report->valueNormSink);
        columns.emplace_back("value_norm_mass", &report->valueNormMass);
        columns.emplace_back("ablation_kl", &report->ablation.kl);
    }
    return columns;
}

Table headReportTable(const HeadScores &scores, const ModelHeadReport *report, bool rounded)
{
    const auto scoreColumns = headReportColumns(scores, report);
    std::vector<std::string> columns = {"layer", "head"};
    for (const auto &[name, matrix] : scoreColumns)
        columns.emplace_back(name);
    columns.insert(columns.end(), {"sink_flag", "zero_rows"});
    const bool top1 = report && report->contributions;
    if (top1)
        columns.emplace_back("ablation_top1");
    Table table(columns);
    for (Index l = 0; l < scores.layers; ++l) {
        for (Index h = 0; h < scores.heads; ++h) {
            std::vector<Table::Cell> row = {std::int64_t(l), std::int64_t(h)};
            for (const auto &[name, matrix] : scoreColumns) {
                if (rounded)
                    row.emplace_back(roundedText((*matrix)(l, h)));
                else
                    row.emplace_back((*matrix)(l, h));
            }
            row.emplace_back(std::int64_t(scores.sinkFlag(l, h)));
            row.emplace_back(std::int64_t(scores.zeroRows(l, h)));
            if (top1)
                row.emplace_back(report->ablation.top1Ablated(l, h));
            table.addRow(std::move(row));
        }
    }
    return table;
}

std::string headReportJson(const HeadScores &s, const ModelHeadReport *report)
{
    std::string out = "{\"layers\": " + std::to_string(s.layers)
        + ", \"heads\": " + std::to_string(s.heads) + ", \"scores\": {";
    bool first = true;
    for (const auto &[name, matrix] : headReportColumns(s, report)) {
        out += std::string(first ? "" : ", ") + "\"" + name + "\": "
            + jsonGrid(s.layers, s.heads,
                       [m = matrix](Index l, Index h) { return jsonNumber((*m)(l, h)); });
        first = false;
    }
    out += "}";
    if (report) {
        out += ", \"rank_collapse\": " + jsonRow(report->rankCollapse);
        if (report->contributions) {
            out += ", \"rollout\": [";
            for (Index i = 0; i < report->rollout.rows(); ++i) {
                const std::vector<double> row(report->rollout.row(i).begin(),
                                              report->rollout.row(i).end());
                out += (i ? ", " : "") + jsonRow(row);
            }
            out += "], \"ablation\": \"" + std::string(models::ablationName(report->ablationKind))
                + "\", \"ablation_top1\": {\"original\": " + std::to_string(report->ablation.top1)
                + ", \"ablated\": "
                + jsonGrid(s.layers, s.heads,
                           [report](Index l, Index h) {
                               return std::to_string(report->ablation.top1Ablated(l, h));
                           })
                + "}";
        }
    }
    return out + "}\n";
}

} // namespace attn
