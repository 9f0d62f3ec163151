#include "core/training/layer.h"

#include "core/analysis/metrics.h"
#include "core/attention/positional.h"
#include "core/base/blas.h"
#include "core/base/threads.h"

#if defined(ATTN_HAVE_AVX2_TRAINING)
#include "core/training/avx2.h"
#endif

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

namespace attn::training {

#if defined(ATTN_HAVE_AVX2_TRAINING)
static_assert(std::is_same_v<detail::avx2::Index, Index>);

bool detail::avx2::enabled()
{
    static const bool on = [] {
        // GCC's and clang's checks read CPUID and XCR0 (the OS saves the ymm registers).
        __builtin_cpu_init();
        const char *off = std::getenv("ATTN_NO_AVX2");
        const bool userOff = off != nullptr && off[0] != '\0' && std::string_view(off) != "0";
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !userOff;
    }();
    return on;
}
#endif

namespace {

/// Whether the float32 row passes go through training/avx2.h.
template<typename T> bool avx2Rows()
{
#if defined(ATTN_HAVE_AVX2_TRAINING)
    return std::is_same_v<T, float> && detail::avx2::enabled();
#else
    return false;
#endif
}

std::string num(double v)
{
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0')
        s.pop_back();
    if (!s.empty() && s.back() == '.')
        s.pop_back();
    return s;
}

template<typename T> void checkFinite(const Matrix<T> &m, const char *what)
{
    // x − x is 0 for every finite x and NaN for ±inf and NaN; Eigen's vectorised sum carries a
    // NaN through. The loop below only names the first bad entry.
    if ((m.array() - m.array()).sum() == T(0))
        return;
    for (Index i = 0; i < m.rows(); ++i)
        for (Index j = 0; j < m.cols(); ++j)
            if (!std::isfinite(double(m(i, j))))
                throw NonFiniteInput(std::string(what) + " holds " + num(double(m(i, j))) + " at ("
                                     + std::to_string(i) + ", " + std::to_string(j) + ")");
}

/// Row-wise softmax of P (n × n scores, masked cells −inf) in place; a row whose cells are all
/// masked becomes zeros and sets fullyMasked[i]. `vectorRows`: through training/avx2.h (float).
template<typename T> void softmaxRows(Matrix<T> &p, std::uint8_t *fullyMasked, bool vectorRows)
{
#if defined(ATTN_HAVE_AVX2_TRAINING)
    if constexpr (std::is_same_v<T, float>)
        if (vectorRows) {
            detail::avx2::softmaxRows(p.data(), p.rows(), p.cols(), fullyMasked);
            return;
        }
#endif
    (void)vectorRows;
    const T negInf = -std::numeric_limits<T>::infinity();
    for (Index i = 0; i < p.rows(); ++i) {
        const T m = p.row(i).maxCoeff();
        if (m == negInf) { // every key masked: zero weights, flagged
            p.row(i).setZero();
            fullyMasked[i] = 1;
            continue;
        }
        p.row(i) = (p.row(i).array() - m).exp();
        p.row(i) /= p.row(i).sum();
    }
}

/// dS = s · P ⊙ (dP − rowsum(dP ⊙ P)) (n × n; masked cells have p = 0 and get 0), `rowDot` the
/// n row sums as scratch. `vectorRows`: through training/avx2.h (float).
template<typename T>
void softmaxBackward(const Matrix<T> &p, const Matrix<T> &dP, T scale, Matrix<T> &dS,
                     Vector<T> &rowDot, bool vectorRows)
{
#if defined(ATTN_HAVE_AVX2_TRAINING)
    if constexpr (std::is_same_v<T, float>)
        if (vectorRows) {
            detail::avx2::softmaxBackward(p.data(), dP.data(), dS.data(), p.rows(), p.cols(),
                                          scale);
            return;
        }
#endif
    (void)vectorRows;
    rowDot = (dP.array() * p.array()).rowwise().sum();
    dS = (p.array() * (dP.array().colwise() - rowDot.array())).matrix();
    dS *= scale;
}

/// out = Σ_rows m (the bias gradients), m row-major: added row after row, each a contiguous
/// vector operation, in the order of rows (Eigen's colwise().sum() walks down the columns, one
/// strided pass over m per packet of columns).
template<typename T> void columnSums(const Matrix<T> &m, Vector<T> &out)
{
    out.setZero(m.cols());
    for (Index r = 0; r < m.rows(); ++r)
        out += m.row(r).transpose();
}

/// Threads for one forward or backward pass over rows = B·n tokens: the four E × E projections
/// (8·rows·E² flops) and the attention products (4·B·n²·E), by threadsForFlops
/// (core/base/threads.h).
Index passThreads(Index rows, Index length, Index dModel)
{
    const double flops = 8.0 * double(rows) * double(dModel) * double(dModel)
        + 4.0 * double(rows) * double(length) * double(dModel);
    return threadsForFlops(flops);
}

} // namespace

double LayerConfig::scale() const
{
    return scoreScale(headDim(), scaleExponent, temperature);
}

void LayerConfig::validate() const
{
    if (dModel < 1)
        throw InvalidArgument("d_model must be >= 1, got " + std::to_string(dModel));
    if (heads < 1)
        throw InvalidArgument("heads must be >= 1, got " + std::to_string(heads));
    if (dModel % heads != 0)
        throw InvalidArgument("heads = " + std::to_string(heads)
                              + " does not divide d_model = " + std::to_string(dModel));
    if (!std::isfinite(scaleExponent))
        throw InvalidArgument("scale exponent must be finite, got " + num(scaleExponent));
    if (!(temperature > 0) || !std::isfinite(temperature))
        throw InvalidArgument("temperature must be > 0 and finite, got " + num(temperature));
    if (!std::isfinite(scale()))
        throw InvalidArgument("the scale d_k^-alpha / temperature overflows (temperature "
                              + num(temperature) + "): use a temperature of at least 1e-300");
    if (positionWidth < 0 || positionWidth > dModel)
        throw InvalidArgument("position width must be in [0, d_model = " + std::to_string(dModel)
                              + "], got " + std::to_string(positionWidth));
}

template<typename T> Parameters<T> Parameters<T>::zeros(Index dModel)
{
    return {Matrix<T>::Zero(3 * dModel, dModel), Vector<T>::Zero(3 * dModel),
            Matrix<T>::Zero(dModel, dModel), Vector<T>::Zero(dModel)};
}

template<typename T> Parameters<T> Parameters<T>::fromLayer(const MultiheadAttention<T> &layer)
{
    return {layer.inProjWeight(), layer.inProjBias(), layer.outProjWeight(), layer.outProjBias()};
}

template<typename T> MultiheadAttention<T> Parameters<T>::toLayer(Index heads) const
{
    MultiheadAttention<T> layer(dModel(), heads, true);
    layer.setParameters(inProjWeight, inProjBias, outProjWeight, outProjBias);
    return layer;
}

template<typename T> Index Parameters<T>::count() const
{
    return inProjWeight.size() + inProjBias.size() + outProjWeight.size() + outProjBias.size();
}

template<typename T> double Parameters<T>::norm() const
{
    const double s = double(inProjWeight.squaredNorm()) + double(inProjBias.squaredNorm())
        + double(outProjWeight.squaredNorm()) + double(outProjBias.squaredNorm());
    return std::sqrt(s);
}

template<typename T> void Parameters<T>::checkShapes(Index dModel) const
{
    const auto check
        = [](const char *what, Index rows, Index cols, Index wantRows, Index wantCols) {
              if (rows != wantRows || cols != wantCols)
                  throw InvalidArgument(std::string(what) + " is " + shapeString(rows, cols)
                                        + ", expected " + shapeString(wantRows, wantCols));
          };
    check("in_proj_weight", inProjWeight.rows(), inProjWeight.cols(), 3 * dModel, dModel);
    check("in_proj_bias", inProjBias.rows(), 1, 3 * dModel, 1);
    check("out_proj_weight", outProjWeight.rows(), outProjWeight.cols(), dModel, dModel);
    check("out_proj_bias", outProjBias.rows(), 1, dModel, 1);
}

template<typename T> void Batch<T>::validate(Index dModel) const
{
    if (batch < 1 || length < 1)
        throw InvalidArgument("batch size B and sequence length n must be >= 1, got B = "
                              + std::to_string(batch) + ", n = " + std::to_string(length));
    const Index rows = batch * length;
    if (inputs.rows() != rows || inputs.cols() != dModel)
        throw InvalidArgument("inputs are " + shapeString(inputs.rows(), inputs.cols())
                              + ", expected (B·n) × d_model = " + shapeString(rows, dModel));
    if (targets.rows() != rows || targets.cols() != dModel)
        throw InvalidArgument("targets are " + shapeString(targets.rows(), targets.cols())
                              + ", expected (B·n) × d_model = " + shapeString(rows, dModel));
    if (rowWeights.size() != 0) {
        if (rowWeights.size() != rows)
            throw InvalidArgument("row weights have " + std::to_string(rowWeights.size())
                                  + " entries, expected B·n = " + std::to_string(rows));
        double sum = 0;
        for (Index i = 0; i < rows; ++i) {
            const double w = double(rowWeights(i));
            if (!std::isfinite(w) || w < 0)
                throw InvalidArgument("row weight " + std::to_string(i) + " is " + num(w)
                                      + ", expected a finite value >= 0");
            sum += w;
        }
        if (!(sum > 0))
            throw InvalidArgument("row weights sum to 0: no row is scored");
    }
    if (mask.size() != 0 && (mask.rows() != length || mask.cols() != length))
        throw InvalidArgument("attn_mask is " + shapeString(mask.rows(), mask.cols())
                              + ", expected n × n = " + shapeString(length, length));
    checkFinite(inputs, "inputs");
    checkFinite(targets, "targets");
}

MatrixB combinedMask(const LayerConfig &config, const MatrixB &batchMask, Index length)
{
    if (!config.causal && batchMask.size() == 0)
        return {};
    MatrixB m = batchMask.size() ? batchMask : MatrixB::Zero(length, length);
    if (config.causal)
        for (Index i = 0; i < length; ++i)
            for (Index j = i + 1; j < length; ++j)
                m(i, j) = 1;
    return m;
}

template<typename T>
void forwardInto(const LayerConfig &config, const Parameters<T> &params, const Batch<T> &batch,
                 ForwardCache<T> &c)
{
    config.validate();
    params.checkShapes(config.dModel);
    batch.validate(config.dModel);
    const Index E = config.dModel, h = config.heads, dk = config.headDim();
    const Index B = batch.batch, n = batch.length;
    const T scale = T(config.scale());
    const MatrixB mask = combinedMask(config, batch.mask, n);
    const ScopedKernelThreads threads(passThreads(B * n, n, E));

    c.x = batch.inputs; // (B·n) × E
    if (config.positionWidth > 0) {
        const Matrix<T> pe = sinusoidalEncoding(n, config.positionWidth).cast<T>(); // n × p
        for (Index b = 0; b < B; ++b)
            c.x.block(b * n, E - config.positionWidth, n, config.positionWidth) += pe;
    }
    // Every product through core/base/blas.h: OpenBLAS's kernels (chosen at run time) where the
    // build has it, Eigen's GEMM otherwise.
    // The biases go into the outputs first and the products are added to them (BLAS's β = 1):
    // no separate pass to clear C and none to add the bias.
    c.qkv.resize(B * n, 3 * E);
    c.qkv.rowwise() = params.inProjBias.transpose();
    gemmTransposedAdd<T>(c.x, params.inProjWeight, c.qkv); // (B·n) × 3E
    c.concat.resize(B * n, E);
    c.weights.resize(std::size_t(B * h));
    c.fullyMasked.resize(std::size_t(B * h));
    for (std::vector<std::uint8_t> &flags : c.fullyMasked)
        flags.assign(std::size_t(n), 0);
    const T negInf = -std::numeric_limits<T>::infinity();
    const bool vectorRows = avx2Rows<T>();
    for (Index b = 0; b < B; ++b) {
        for (Index head = 0; head < h; ++head) {
            const auto qh = c.qkv.block(b * n, head * dk, n, dk); // n × d_k
            const auto kh = c.qkv.block(b * n, E + head * dk, n, dk); // n × d_k
            const auto vh = c.qkv.block(b * n, 2 * E + head * dk, n, dk); // n × d_k
            Matrix<T> &p = c.weights[std::size_t(b * h + head)]; // n × n
            p.resize(n, n);
            gemmTransposed<T>(qh, kh, p);
            p *= scale;
            if (mask.size())
                for (Index i = 0; i < n; ++i)
                    for (Index j = 0; j < n; ++j)
                        if (mask(i, j))
                            p(i, j) = negInf;
            softmaxRows(p, c.fullyMasked[std::size_t(b * h + head)].data(), vectorRows);
            auto ch = c.concat.block(b * n, head * dk, n, dk);
            gemm<T>(p, vh, ch);
        }
    }
    c.output.resize(B * n, E);
    c.output.rowwise() = params.outProjBias.transpose();
    gemmTransposedAdd<T>(c.concat, params.outProjWeight, c.output); // (B·n) × E
}

template<typename T>
ForwardCache<T> forward(const LayerConfig &config, const Parameters<T> &params,
                        const Batch<T> &batch)
{
    ForwardCache<T> c;
    forwardInto(config, params, batch, c);
    return c;
}

namespace {

template<typename T> double rowWeight(const Batch<T> &batch, Index r)
{
    return batch.rowWeights.size() ? double(batch.rowWeights(r)) : 1.0;
}

template<typename T> double rowWeightSum(const Batch<T> &batch)
{
    return batch.rowWeights.size() ? double(batch.rowWeights.sum()) : double(batch.inputs.rows());
}

template<typename T> void checkOutput(const Matrix<T> &output, const Batch<T> &batch)
{
    if (output.rows() != batch.targets.rows() || output.cols() != batch.targets.cols())
        throw InvalidArgument("output is " + shapeString(output.rows(), output.cols())
                              + " but targets are "
                              + shapeString(batch.targets.rows(), batch.targets.cols()));
}

} // namespace

template<typename T> double lossValue(Loss loss, const Matrix<T> &output, const Batch<T> &batch)
{
    checkOutput(output, batch);
    const Index rows = output.rows(), E = output.cols();
    const double scored = rowWeightSum(batch);
    double total = 0;
    for (Index r = 0; r < rows; ++r) {
        const double w = rowWeight(batch, r);
        if (w == 0)
            continue;
        double rowLoss = 0;
        if (loss == Loss::MeanSquaredError) {
            for (Index e = 0; e < E; ++e) {
                const double d = double(output(r, e)) - double(batch.targets(r, e));
                rowLoss += d * d;
            }
            rowLoss /= double(E);
        } else {
            double m = -std::numeric_limits<double>::infinity();
            for (Index e = 0; e < E; ++e)
                m = std::max(m, double(output(r, e)));
            double s = 0;
            for (Index e = 0; e < E; ++e)
                s += std::exp(double(output(r, e)) - m);
            const double logSum = m + std::log(s);
            for (Index e = 0; e < E; ++e)
                rowLoss -= double(batch.targets(r, e)) * (double(output(r, e)) - logSum);
        }
        total += w * rowLoss;
    }
    return total / scored;
}

template<typename T>
void lossGradientInto(Loss loss, const Matrix<T> &output, const Batch<T> &batch, Matrix<T> &d)
{
    checkOutput(output, batch);
    const Index rows = output.rows(), E = output.cols();
    const T scored = T(rowWeightSum(batch));
    d.resize(rows, E); // (B·n) × E
    for (Index r = 0; r < rows; ++r) {
        const T w = T(rowWeight(batch, r));
        if (w == T(0)) {
            d.row(r).setZero();
            continue;
        }
        if (loss == Loss::MeanSquaredError) {
            // ∂/∂y of w Σ_e (y − t)² / (E·Σw)
            d.row(r) = (output.row(r) - batch.targets.row(r)) * (T(2) * w / (T(E) * scored));
        } else {
            // ∂/∂y of −w Σ_e t_e log softmax(y)_e / Σw = w (softmax(y)·Σ_e t_e − t) / Σw
            const T m = output.row(r).maxCoeff();
            RowVector<T> p = (output.row(r).array() - m).exp();
            p /= p.sum();
            const T tSum = batch.targets.row(r).sum();
            d.row(r) = (p * tSum - batch.targets.row(r)) * (w / scored);
        }
    }
}

template<typename T>
Matrix<T> lossGradient(Loss loss, const Matrix<T> &output, const Batch<T> &batch)
{
    Matrix<T> d;
    lossGradientInto(loss, output, batch, d);
    return d;
}

template<typename T>
void backwardInto(const LayerConfig &config, const Parameters<T> &params,
                  const ForwardCache<T> &cache, const Matrix<T> &dOutput, Parameters<T> &g,
                  BackwardScratch<T> &scratch)
{
    const Index E = config.dModel, h = config.heads, dk = config.headDim();
    const Index rows = cache.x.rows();
    if (dOutput.rows() != rows || dOutput.cols() != E)
        throw InvalidArgument("dOutput is " + shapeString(dOutput.rows(), dOutput.cols())
                              + ", expected " + shapeString(rows, E));
    const Index B = Index(cache.weights.size()) / h;
    const Index n = B > 0 ? rows / B : 0;
    const T scale = T(config.scale());
    const ScopedKernelThreads threads(passThreads(rows, n, E));
    const bool vectorRows = avx2Rows<T>();

    g.outProjWeight.resize(E, E);
    gemmTransposedA<T>(dOutput, cache.concat, g.outProjWeight); // E × E
    columnSums(dOutput, g.outProjBias); // E
    Matrix<T> &dConcat = scratch.dConcat;
    dConcat.resize(rows, E);
    gemm<T>(dOutput, params.outProjWeight, dConcat); // (B·n) × E
    Matrix<T> &dQkv = scratch.dQkv;
    dQkv.resize(rows, 3 * E); // (B·n) × 3E
    Matrix<T> &dP = scratch.dP, &dS = scratch.dS;
    dP.resize(n, n);
    dS.resize(n, n);
    Vector<T> &rowDot = scratch.rowDot;
    rowDot.resize(n);
    for (Index b = 0; b < B; ++b) {
        for (Index head = 0; head < h; ++head) {
            const Matrix<T> &p = cache.weights[std::size_t(b * h + head)]; // n × n
            const auto qh = cache.qkv.block(b * n, head * dk, n, dk);
            const auto kh = cache.qkv.block(b * n, E + head * dk, n, dk);
            const auto vh = cache.qkv.block(b * n, 2 * E + head * dk, n, dk);
            const auto dO = dConcat.block(b * n, head * dk, n, dk); // n × d_k
            gemmTransposed<T>(dO, vh, dP); // n × n
            auto dV = dQkv.block(b * n, 2 * E + head * dk, n, dk);
            gemmTransposedA<T>(p, dO, dV);
            softmaxBackward(p, dP, scale, dS, rowDot, vectorRows);
            auto dQ = dQkv.block(b * n, head * dk, n, dk);
            gemm<T>(dS, kh, dQ);
            auto dK = dQkv.block(b * n, E + head * dk, n, dk);
            gemmTransposedA<T>(dS, qh, dK);
        }
    }
    g.inProjWeight.resize(3 * E, E);
    gemmTransposedA<T>(dQkv, cache.x, g.inProjWeight); // 3E × E
    columnSums(dQkv, g.inProjBias); // 3E
}

template<typename T>
Parameters<T> backward(const LayerConfig &config, const Parameters<T> &params,
                       const ForwardCache<T> &cache, const Matrix<T> &dOutput)
{
    Parameters<T> g;
    BackwardScratch<T> scratch;
    backwardInto(config, params, cache, dOutput, g, scratch);
    return g;
}

template<typename T> AttentionDiagnostics diagnostics(const ForwardCache<T> &cache)
{
    AttentionDiagnostics d;
    std::vector<double> row;
    double count = 0;
    for (std::size_t k = 0; k < cache.weights.size(); ++k) {
        const Matrix<T> &p = cache.weights[k];
        row.resize(std::size_t(p.cols()));
        for (Index i = 0; i < p.rows(); ++i) {
            if (cache.fullyMasked[k][std::size_t(i)])
                continue;
            for (Index j = 0; j < p.cols(); ++j)
                row[std::size_t(j)] = double(p(i, j));
            d.meanMaxWeight += maxWeight(row.data(), p.cols());
            d.meanJacobianNorm += jacobianNorm(row.data(), p.cols());
            count += 1;
        }
    }
    if (count > 0) {
        d.meanMaxWeight /= count;
        d.meanJacobianNorm /= count;
    }
    return d;
}

#define ATTN_TRAINING_INSTANTIATE(T)                                                               \
    template struct Parameters<T>;                                                                 \
    template struct Batch<T>;                                                                      \
    template ForwardCache<T> forward(const LayerConfig &, const Parameters<T> &,                   \
                                     const Batch<T> &);                                            \
    template double lossValue(Loss, const Matrix<T> &, const Batch<T> &);                          \
    template Matrix<T> lossGradient(Loss, const Matrix<T> &, const Batch<T> &);                    \
    template Parameters<T> backward(const LayerConfig &, const Parameters<T> &,                    \
                                    const ForwardCache<T> &, const Matrix<T> &);                   \
    template void forwardInto(const LayerConfig &, const Parameters<T> &, const Batch<T> &,        \
                              ForwardCache<T> &);                                                  \
    template void lossGradientInto(Loss, const Matrix<T> &, const Batch<T> &, Matrix<T> &);        \
    template void backwardInto(const LayerConfig &, const Parameters<T> &,                         \
                               const ForwardCache<T> &, const Matrix<T> &, Parameters<T> &,        \
                               BackwardScratch<T> &);                                              \
    template AttentionDiagnostics diagnostics(const ForwardCache<T> &);

ATTN_TRAINING_INSTANTIATE(float)
ATTN_TRAINING_INSTANTIATE(double)

double trainingStepBytes(Index batch, Index heads, Index n, std::size_t elementBytes)
{
    return (2.0 * double(batch) * double(heads) + 3.0) * double(n) * double(n)
        * double(elementBytes);
}

} // namespace attn::training
