#include "core/engine/pipeline.h"

#include "core/attention/groupedattention.h"
#include "core/attention/positional.h"
#include "core/engine/sessioninputs.h"

#include <string>

namespace attn {

namespace {

template<typename T>
AttentionPipeline pipelineIn(const EngineParameters &p, const std::vector<MatrixD> &weights)
{
    const Index d = p.dModel, h = p.heads, dK = p.dK();
    const Index g = p.kvHeads > 0 ? p.kvHeads : h;
    const Index nQ = p.queryCount();
    AttentionPipeline r;
    const SessionInputs<T> in = sessionInputs<T>(p);
    EngineParameters bare = p;
    bare.positional = false;
    r.embeddings = sessionInputs<T>(bare).query;
    r.positions = p.positional ? sinusoidalEncoding(nQ, d) : MatrixD::Zero(nQ, d);
    r.input = in.query;
    r.source = in.encoder.size() > 0 ? in.encoder : in.query;

    // As the engine computes them (sessionengine.cpp, computeScores): the inputs rounded to T,
    // q = X W_Qᵀ + b_Q, k and v from the source; grouped heads pooled; RoPE on q and k.
    const Matrix<T> x = r.input.template cast<T>(), s = r.source.template cast<T>();
    const Matrix<T> &w = in.layer.inProjWeight();
    const Vector<T> &b = in.layer.inProjBias();
    Matrix<T> q = x * w.topRows(d).transpose();
    Matrix<T> k = s * w.middleRows(d, d).transpose();
    Matrix<T> v = s * w.bottomRows(d).transpose();
    q.rowwise() += b.segment(0, d).transpose();
    k.rowwise() += b.segment(d, d).transpose();
    v.rowwise() += b.segment(2 * d, d).transpose();
    k = meanPoolHeads<T>(k, h, g); // as the engine pools the keys
    v = meanPoolHeads<T>(v, h, g);
    if (p.rope) {
        applyRopeHeads<T>(q, h, p.ropeConvention, p.ropeBase);
        applyRopeHeads<T>(k, g, p.ropeConvention, p.ropeBase);
    }

    Matrix<T> concatenated(nQ, d);
    for (Index head = 0; head < h; ++head) {
        const Index kvHead = head * g / h; // torch.repeat_interleave's order
        const Matrix<T> vi = v.middleCols(kvHead * dK, dK);
        const Matrix<T> oi = weights[std::size_t(head)].template cast<T>() * vi;
        concatenated.middleCols(head * dK, dK) = oi;
        r.queries.push_back(q.middleCols(head * dK, dK).template cast<double>());
        r.keys.push_back(k.middleCols(kvHead * dK, dK).template cast<double>());
        r.values.push_back(vi.template cast<double>());
        r.headOutputs.push_back(oi.template cast<double>());
    }
    Matrix<T> output = concatenated * in.layer.outProjWeight().transpose();
    output.rowwise() += in.layer.outProjBias().transpose();
    r.concatenated = concatenated.template cast<double>();
    r.output = output.template cast<double>();
    return r;
}

} // namespace

AttentionPipeline attentionPipeline(const EngineParameters &p, const std::vector<MatrixD> &weights)
{
    p.check(EngineParameters::maxSequence);
    if (Index(weights.size()) != p.heads)
        throw InvalidArgument("attentionPipeline: " + std::to_string(weights.size())
                              + " weight matrices for h = " + std::to_string(p.heads) + " heads");
    for (const MatrixD &w : weights)
        if (w.rows() != p.queryCount() || w.cols() != p.keyCount())
            throw InvalidArgument("attentionPipeline: weights " + shapeString(w.rows(), w.cols())
                                  + " but n_q × n_k = "
                                  + shapeString(p.queryCount(), p.keyCount()));
    return p.dtype == DType::Float32 ? pipelineIn<float>(p, weights)
                                     : pipelineIn<double>(p, weights);
}

} // namespace attn
