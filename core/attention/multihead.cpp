#include "core/attention/multihead.h"

#include "core/base/blas.h"
#include "core/kernels/detail.h"
#include "core/random/random.h"

#include <cmath>
#include <string>

namespace attn {

namespace {

std::string vectorShape(Index n)
{
    std::string s(1, '('); // built step by step: GCC 12 warns falsely on "(" + std::string
    s += std::to_string(n);
    s += ')';
    return s;
}

} // namespace

template<typename T>
MultiheadAttention<T>::MultiheadAttention(Index dModel, Index heads, bool bias)
    : m_dModel(dModel)
    , m_heads(heads)
    , m_bias(bias)
{
    if (dModel < 1 || heads < 1)
        throw InvalidArgument("d_model and h must be >= 1, got d_model = " + std::to_string(dModel)
                              + ", h = " + std::to_string(heads));
    if (dModel % heads != 0)
        throw InvalidArgument("d_model = " + std::to_string(dModel)
                              + " is not divisible by h = " + std::to_string(heads)
                              + " heads (d_k = d_model / h must be an integer)");
    m_inProjWeight.setZero(3 * dModel, dModel);
    m_inProjBias.setZero(3 * dModel);
    m_outProjWeight.setZero(dModel, dModel);
    m_outProjBias.setZero(dModel);
}

template<typename T> void MultiheadAttention<T>::initXavier(Generator &rng)
{
    clearSeparate();
    m_inProjWeight.setZero(3 * m_dModel, m_dModel);
    // xavier_uniform_(in_proj_weight): fan_in = d_model, fan_out = 3·d_model.
    const double inBound = std::sqrt(6.0 / double(m_dModel + 3 * m_dModel));
    for (Index i = 0; i < m_inProjWeight.rows(); ++i)
        for (Index j = 0; j < m_inProjWeight.cols(); ++j)
            m_inProjWeight(i, j) = T(inBound * (2.0 * rng.random() - 1.0));
    // nn.Linear's kaiming_uniform_(a = √5): gain √(2 / (1 + 5)), bound gain·√(3 / fan_in)
    // = 1 / √d_model.
    const double outBound = 1.0 / std::sqrt(double(m_dModel));
    for (Index i = 0; i < m_outProjWeight.rows(); ++i)
        for (Index j = 0; j < m_outProjWeight.cols(); ++j)
            m_outProjWeight(i, j) = T(outBound * (2.0 * rng.random() - 1.0));
    m_inProjBias.setZero();
    m_outProjBias.setZero();
}

template<typename T> void MultiheadAttention<T>::clearSeparate()
{
    m_separate = false;
    m_qProjWeight.resize(0, 0);
    m_kProjWeight.resize(0, 0);
    m_vProjWeight.resize(0, 0);
}

template<typename T> void MultiheadAttention<T>::setIdentity()
{
    clearSeparate();
    const Index d = m_dModel;
    m_inProjWeight.setZero(3 * d, d);
    for (Index p = 0; p < 3; ++p)
        m_inProjWeight.middleRows(p * d, d).setIdentity();
    m_outProjWeight.setIdentity(d, d);
    m_inProjBias.setZero();
    m_outProjBias.setZero();
}

template<typename T> Index MultiheadAttention<T>::parameterCount() const
{
    const Index d = m_dModel;
    const Index weights = m_separate ? d * (2 * d + keyDim() + valueDim()) : 4 * d * d;
    return weights + (m_bias ? 4 * d : 0);
}

template<typename T>
void MultiheadAttention<T>::setSeparateProjections(
    const Matrix<T> &qProjWeight, const Matrix<T> &kProjWeight, const Matrix<T> &vProjWeight,
    const Vector<T> &inProjBias, const Matrix<T> &outProjWeight, const Vector<T> &outProjBias)
{
    const Index d = m_dModel;
    const auto fail
        = [d](const std::string &name, const std::string &expected, const std::string &got) {
              throw InvalidArgument("MultiheadAttention (d_model = " + std::to_string(d)
                                    + ", separate projections): " + name + " must be " + expected
                                    + ", got " + got);
          };
    if (qProjWeight.rows() != d || qProjWeight.cols() != d)
        fail("q_proj_weight", shapeString(d, d) + " (d_model × d_model)",
             shapeString(qProjWeight.rows(), qProjWeight.cols()));
    if (kProjWeight.rows() != d || kProjWeight.cols() < 1)
        fail("k_proj_weight", "(" + std::to_string(d) + ", kdim) with kdim >= 1 (d_model × kdim)",
             shapeString(kProjWeight.rows(), kProjWeight.cols()));
    if (vProjWeight.rows() != d || vProjWeight.cols() < 1)
        fail("v_proj_weight", "(" + std::to_string(d) + ", vdim) with vdim >= 1 (d_model × vdim)",
             shapeString(vProjWeight.rows(), vProjWeight.cols()));
    // in_proj_weight's checks for the biases and out_proj (setParameters) on a stand-in.
    MultiheadAttention<T> check(d, m_heads, m_bias);
    Matrix<T> stacked(3 * d, d);
    stacked.setZero();
    check.setParameters(stacked, inProjBias, outProjWeight, outProjBias);
    detail::checkFiniteInput<T>(qProjWeight, "q_proj_weight", "MultiheadAttention");
    detail::checkFiniteInput<T>(kProjWeight, "k_proj_weight", "MultiheadAttention");
    detail::checkFiniteInput<T>(vProjWeight, "v_proj_weight", "MultiheadAttention");
    m_separate = true;
    m_qProjWeight = qProjWeight;
    m_kProjWeight = kProjWeight;
    m_vProjWeight = vProjWeight;
    m_inProjWeight.resize(0, d);
    m_inProjBias = check.m_inProjBias;
    m_outProjWeight = check.m_outProjWeight;
    m_outProjBias = check.m_outProjBias;
}

template<typename T>
void MultiheadAttention<T>::setParameters(const Matrix<T> &inProjWeight,
                                          const Vector<T> &inProjBias,
                                          const Matrix<T> &outProjWeight,
                                          const Vector<T> &outProjBias)
{
    const Index d = m_dModel;
    const auto fail
        = [d](const std::string &name, const std::string &expected, const std::string &got) {
              throw InvalidArgument("MultiheadAttention (d_model = " + std::to_string(d)
                                    + "): " + name + " must be " + expected + ", got " + got);
          };
    if (inProjWeight.rows() != 3 * d || inProjWeight.cols() != d)
        fail("in_proj_weight", shapeString(3 * d, d),
             shapeString(inProjWeight.rows(), inProjWeight.cols()));
    if (outProjWeight.rows() != d || outProjWeight.cols() != d)
        fail("out_proj.weight", shapeString(d, d),
             shapeString(outProjWeight.rows(), outProjWeight.cols()));
    const bool inBiasEmpty = inProjBias.size() == 0 && !m_bias;
    const bool outBiasEmpty = outProjBias.size() == 0 && !m_bias;
    if (!inBiasEmpty && inProjBias.size() != 3 * d)
        fail("in_proj_bias", vectorShape(3 * d), vectorShape(inProjBias.size()));
    if (!outBiasEmpty && outProjBias.size() != d)
        fail("out_proj.bias", vectorShape(d), vectorShape(outProjBias.size()));
    if (!m_bias
        && ((!inBiasEmpty && !inProjBias.isZero(0)) || (!outBiasEmpty && !outProjBias.isZero(0))))
        throw InvalidArgument("MultiheadAttention was built with bias = false but the given "
                              "biases are not zero");
    detail::checkFiniteInput<T>(inProjWeight, "in_proj_weight", "MultiheadAttention");
    detail::checkFiniteInput<T>(outProjWeight, "out_proj.weight", "MultiheadAttention");
    clearSeparate();
    m_inProjWeight = inProjWeight;
    m_outProjWeight = outProjWeight;
    if (inBiasEmpty)
        m_inProjBias.setZero(3 * d);
    else
        m_inProjBias = inProjBias;
    if (outBiasEmpty)
        m_outProjBias.setZero(d);
    else
        m_outProjBias = outProjBias;
    if (!m_inProjBias.allFinite() || !m_outProjBias.allFinite())
        throw NonFiniteInput("MultiheadAttention: a bias has NaN or Inf entries");
}

template<typename T>
ProjectedInputs<T>
MultiheadAttention<T>::project(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                               const ConstMatrixRef<T> &value, bool checkFinite) const
{
    static constexpr const char *who = "MultiheadAttention::forward";
    const Index d = m_dModel;
    const auto checkWidth = [](const char *name, Index rows, Index cols, const char *dimName,
                               Index want) {
        if (cols != want)
            throw InvalidArgument(std::string(who) + ": " + name + " has " + std::to_string(cols)
                                  + " columns but " + dimName + " = " + std::to_string(want) + " ("
                                  + name + " " + shapeString(rows, cols) + ")");
    };
    checkWidth("query", query.rows(), query.cols(), "d_model", d);
    checkWidth("key", key.rows(), key.cols(), m_separate ? "kdim" : "d_model", keyDim());
    checkWidth("value", value.rows(), value.cols(), m_separate ? "vdim" : "d_model", valueDim());
    if (key.rows() != value.rows())
        throw InvalidArgument(std::string(who) + ": key has n_k = " + std::to_string(key.rows())
                              + " rows but value has " + std::to_string(value.rows()) + " (key "
                              + shapeString(key.rows(), key.cols()) + ", value "
                              + shapeString(value.rows(), value.cols()) + ")");
    if (checkFinite) {
        detail::checkFiniteInputs<T>(query, key, value, who);
    }

    // Projections: q = query · W_Qᵀ + b_Q (n_q × d_model); k, v: n_k × d_model.
    const Index nQ = query.rows(), nK = key.rows();
    ProjectedInputs<T> p {Matrix<T>(nQ, d), Matrix<T>(nK, d), Matrix<T>(nK, d)};
    if (m_separate) { // key n_k × kdim, value n_k × vdim
        gemmTransposed<T>(query, m_qProjWeight, p.query);
        gemmTransposed<T>(key, m_kProjWeight, p.key);
        gemmTransposed<T>(value, m_vProjWeight, p.value);
    } else {
        gemmTransposed<T>(query, m_inProjWeight.topRows(d), p.query);
        gemmTransposed<T>(key, m_inProjWeight.middleRows(d, d), p.key);
        gemmTransposed<T>(value, m_inProjWeight.bottomRows(d), p.value);
    }
    if (m_bias) {
        p.query.rowwise() += m_inProjBias.segment(0, d).transpose();
        p.key.rowwise() += m_inProjBias.segment(d, d).transpose();
        p.value.rowwise() += m_inProjBias.segment(2 * d, d).transpose();
    }
    return p;
}

template<typename T>
MultiheadResult<T>
MultiheadAttention<T>::forward(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                               const ConstMatrixRef<T> &value, const AttentionMask &mask,
                               const AttentionOptions &options) const
{
    static constexpr const char *who = "MultiheadAttention::forward";
    const Index d = m_dModel;
    // Widths first, so that a wrong key names its columns before the mask names its rows.
    ProjectedInputs<T> projected = project(query, key, value, false);
    try {
        mask.checkShape(query.rows(), key.rows());
    } catch (const InvalidArgument &e) {
        throw InvalidArgument(std::string(who) + ": " + e.what());
    }
    if (options.checkFinite) {
        detail::checkFiniteInputs<T>(query, key, value, who);
    }

    const Index nQ = query.rows();
    const Index nK = key.rows();
    const Index h = m_heads;
    const Index dK = headDim();
    Matrix<T> &q = projected.query, &k = projected.key, &v = projected.value;

    MultiheadResult<T> r;
    r.weights.resize(std::size_t(h));
    r.scores.resize(std::size_t(h));
    r.scaledScores.resize(std::size_t(h));
    r.fullyMasked.resize(std::size_t(h));
    r.weightsMean.setZero(nQ, nK);
    Matrix<T> concat(nQ, d); // heads side by side: n_q × d_model

    AttentionOptions headOptions = options;
    headOptions.checkFinite = false; // checked above; projections of finite inputs are finite
    // Head i: columns i·d_k … (i+1)·d_k − 1 of m. A matrix without rows (n_q = 0 or n_k = 0)
    // has no storage, and a block of it would offset a null pointer: it gets an empty n × d_k.
    const auto headColumns = [dK](const Matrix<T> &m, Index i) -> Matrix<T> {
        if (m.rows() == 0)
            return Matrix<T>(0, dK);
        return m.middleCols(i * dK, dK);
    };
    concat.setZero(); // n_k = 0: every row is fully masked and its output 0
    for (Index i = 0; i < h; ++i) {
        AttentionResult<T> a = scaledDotProductAttention<T>(headColumns(q, i), headColumns(k, i),
                                                            headColumns(v, i), mask, headOptions);
        if (nQ > 0)
            concat.middleCols(i * dK, dK) = a.output;
        r.weightsMean += a.weights;
        r.scale = a.scale;
        const auto u = std::size_t(i);
        r.weights[u] = std::move(a.weights);
        r.scores[u] = std::move(a.scores);
        r.scaledScores[u] = std::move(a.scaledScores);
        r.fullyMasked[u] = std::move(a.fullyMasked);
    }
    r.weightsMean /= T(h);

    // output = concat · out_proj_weightᵀ + out_proj_bias (n_q × d_model)
    r.output.resize(nQ, d);
    gemmTransposed<T>(concat, m_outProjWeight, r.output);
    if (m_bias)
        r.output.rowwise() += m_outProjBias.transpose();
    return r;
}

template class MultiheadAttention<float>;
template class MultiheadAttention<double>;

} // namespace attn
