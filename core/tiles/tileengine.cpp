// The tile engine (tileengine.h): blocks of query rows, each scored against every key (or, once
// the rows' max and sum are known, against the window's keys only), normalised and pooled.
//
// Per block and head, in a per-thread buffer of rows × (n_k + 32) elements:
//   S_b = Q_b K_ηᵀ (GEMM, or the AVX-512 float32 micro-kernel on Kᵀ packed in panels of 32),
//   x = S_b · scale (+ additive mask), masked cells = fill,
//   full rows:  shift_i = max_j x_ij, w_ij = exp(x_ij − shift_i) / Σ_j exp(x_ij − shift_i),
//   window:     w_ij = exp(x_ij − shift_i) · inverseSum_i with the recorded shift and sum,
// the passes of softmaxRowScaled (core/kernels/rowops.h) on the same code paths as the
// materialized kernel, so the weights agree with it to rounding. Tasks are runs of whole pixel
// rows (no two threads write the same pixel), spread over the OpenMP threads.

#include "core/tiles/tileengine.h"

#include "core/base/threads.h"

#include "core/base/blas.h"
#include "core/base/threads.h"
#include "core/kernels/avx512.h"
#include "core/kernels/detail.h"
#include "core/kernels/kernels.h"
#include "core/kernels/rowops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace attn {

namespace {

/// MaskStateBits of keys [j0, j0 + cols) of query i into out[0, cols).
void maskStateRow(const AttentionMask &mask, Index nK, Index i, Index j0, Index cols,
                  std::uint8_t *out)
{
    if (mask.isPureCausal()) {
        const Index limit = mask.causalLimit(i, nK);
        const Index from = std::clamp<Index>(limit - j0, 0, cols);
        std::fill(out, out + from, std::uint8_t(MaskAllowed));
        std::fill(out + from, out + cols, std::uint8_t(MaskCausal));
        return;
    }
    for (Index c = 0; c < cols; ++c)
        out[c] = mask.state(i, j0 + c);
}

void reportRow(std::atomic<Index> &badRow, Index i)
{
    Index cur = badRow.load();
    while (i < cur && !badRow.compare_exchange_weak(cur, i)) { }
}

/// Pooling accumulators of the pixel rows of one task for one image.
struct PoolAccumulator
{
    std::vector<double> value; // pixel rows × width: max or sum of unmasked cells
    std::vector<Index> count; // unmasked cells
    std::vector<std::uint8_t> masked; // OR of masked cells' states

    void reset(Index pixels, bool max, bool signedMax)
    {
        value.assign(std::size_t(pixels),
                     max && !signedMax ? -std::numeric_limits<double>::infinity() : 0.0);
        count.assign(std::size_t(pixels), 0);
        masked.assign(std::size_t(pixels), 0);
    }
};

/// The value of larger magnitude, a on a tie (signed Max pooling).
inline double largerMagnitude(double a, double b)
{
    return std::abs(b) > std::abs(a) ? b : a;
}

/// Pools one row's window segment w[0, cols) (states st, or null when nothing is masked) into
/// pixel row `y` of `acc` (width pixels of bk columns each). With signedMax, Max pooling keeps
/// the value of largest magnitude (its sign kept).
template<typename T>
void poolRow(const T *w, const std::uint8_t *st, Index cols, Index bk, Index width, Index y,
             bool max, bool signedMax, PoolAccumulator &acc)
{
    double *value = acc.value.data() + y * width;
    Index *count = acc.count.data() + y * width;
    std::uint8_t *masked = acc.masked.data() + y * width;
    for (Index x = 0; x < width; ++x) {
        const Index jb = x * bk;
        const Index je = std::min(cols, jb + bk);
        if (max && signedMax) {
            double v = value[x];
            Index c = 0;
            std::uint8_t m = 0;
            for (Index j = jb; j < je; ++j) {
                if (st && st[j]) {
                    m |= st[j];
                    continue;
                }
                v = largerMagnitude(v, double(w[j]));
                ++c;
            }
            value[x] = v;
            count[x] += c;
            masked[x] |= m;
            continue;
        }
        if (!st) {
            const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> seg(w + jb, je - jb);
            if (max)
                value[x] = std::max(value[x], double(seg.maxCoeff()));
            else
                value[x] += double(seg.template cast<double>().sum());
            count[x] += je - jb;
            continue;
        }
        double v = value[x];
        Index c = 0;
        std::uint8_t m = 0;
        for (Index j = jb; j < je; ++j) {
            if (st[j]) {
                m |= st[j];
                continue;
            }
            v = max ? std::max(v, double(w[j])) : v + double(w[j]);
            ++c;
        }
        value[x] = v;
        count[x] += c;
        masked[x] |= m;
    }
}

/// Writes metrics of one row into `out` at `r` (fully masked rows keep zeros and their flag).
void storeMetrics(RowMetrics &out, Index r, const RowMetricValues &v)
{
    out.maxWeight(r) = v.maxWeight;
    out.entropy(r) = v.entropy;
    out.effectiveTerms(r) = v.effectiveTerms;
    out.jacobianNorm(r) = v.jacobianNorm;
    out.rowSumError(r) = std::abs(v.rowSum - 1.0);
}

RowMetrics zeroMetrics(Index rows)
{
    RowMetrics m;
    m.maxWeight.setZero(rows);
    m.entropy.setZero(rows);
    m.effectiveTerms.setZero(rows);
    m.jacobianNorm.setZero(rows);
    m.rowSumError.setZero(rows);
    m.fullyMasked.assign(std::size_t(rows), 0);
    return m;
}

} // namespace

TileGrid tileGridWithCells(const TileWindow &window, Index rowsPerPixel, Index colsPerPixel)
{
    if (window.rows() < 1 || window.cols() < 1)
        throw InvalidArgument("tileGridWithCells: the window "
                              + shapeString(window.rows(), window.cols()) + " has no cells");
    if (rowsPerPixel < 1 || colsPerPixel < 1)
        throw InvalidArgument("tileGridWithCells: a pixel must cover at least 1×1 cells, got "
                              + shapeString(rowsPerPixel, colsPerPixel));
    TileGrid g;
    g.rowsPerPixel = std::min(rowsPerPixel, window.rows());
    g.colsPerPixel = std::min(colsPerPixel, window.cols());
    g.height = (window.rows() + g.rowsPerPixel - 1) / g.rowsPerPixel;
    g.width = (window.cols() + g.colsPerPixel - 1) / g.colsPerPixel;
    return g;
}

TileGrid tileGrid(const TileWindow &window, Index maxWidth, Index maxHeight)
{
    if (window.rows() < 1 || window.cols() < 1)
        throw InvalidArgument("tileGrid: the window " + shapeString(window.rows(), window.cols())
                              + " has no cells");
    if (maxWidth < 1 || maxHeight < 1)
        throw InvalidArgument("tileGrid: the grid must be at least 1×1 pixels, got "
                              + shapeString(maxHeight, maxWidth));
    TileGrid g;
    g.rowsPerPixel = (window.rows() + maxHeight - 1) / maxHeight;
    g.colsPerPixel = (window.cols() + maxWidth - 1) / maxWidth;
    g.height = (window.rows() + g.rowsPerPixel - 1) / g.rowsPerPixel;
    g.width = (window.cols() + g.colsPerPixel - 1) / g.colsPerPixel;
    return g;
}

template<typename T>
TileEngine<T>::TileEngine(Matrix<T> query, Matrix<T> key, Index heads, AttentionMask mask,
                          const AttentionOptions &options)
    : TileEngine(std::move(query), std::move(key), heads, std::move(mask), options,
                 TileVariants<T> {})
{ }

template<typename T>
TileEngine<T>::TileEngine(Matrix<T> query, Matrix<T> key, Index heads, AttentionMask mask,
                          const AttentionOptions &options, TileVariants<T> variants)
    : m_query(std::move(query))
    , m_key(std::move(key))
    , m_heads(heads)
    , m_mask(std::move(mask))
{
    static constexpr const char *who = "TileEngine";
    if (heads < 1)
        throw InvalidArgument(std::string(who) + ": heads must be >= 1, got "
                              + std::to_string(heads));
    if (m_query.cols() != m_key.cols())
        throw InvalidArgument(std::string(who) + ": query "
                              + shapeString(m_query.rows(), m_query.cols()) + " and key "
                              + shapeString(m_key.rows(), m_key.cols())
                              + " must have the same width h·d_k");
    if (m_query.cols() < heads || m_query.cols() % heads != 0)
        throw InvalidArgument(std::string(who) + ": the width " + std::to_string(m_query.cols())
                              + " of query and key is not a positive multiple of heads = "
                              + std::to_string(heads));
    if (m_query.rows() < 1 || m_key.rows() < 1)
        throw InvalidArgument(std::string(who) + ": query "
                              + shapeString(m_query.rows(), m_query.cols()) + " and key "
                              + shapeString(m_key.rows(), m_key.cols())
                              + " need at least one row each");
    if (std::isnan(options.maskFill) || options.maskFill == std::numeric_limits<double>::infinity())
        throw InvalidArgument(std::string(who) + ": mask fill must be finite or -inf, got "
                              + detail::valueName(options.maskFill));
    m_mask.checkShape(m_query.rows(), m_key.rows());
    if (options.checkFinite) {
        detail::checkFiniteInput<T>(m_query, "query", who);
        detail::checkFiniteInput<T>(m_key, "key", who);
    }
    m_dK = m_query.cols() / heads;
    takeVariants(std::move(variants), options, who);
    m_scaleValue = effectiveScale(m_dK, options);
    m_scale = T(m_scaleValue);
    m_fill = T(options.maskFill);
    const bool negInfFill = options.maskFill == -std::numeric_limits<double>::infinity();
    m_causalSkip = m_mask.isPureCausal() && negInfFill;
    m_foldScale = m_scale > T(0) && (m_mask.empty() || m_causalSkip) && m_alibiSlopes.empty();
    m_stats.resize(std::size_t(streamHeads()));
    for (RowStats &s : m_stats) {
        s.shift.assign(std::size_t(queries()), T(0));
        s.inverseSum.assign(std::size_t(queries()), T(0));
        s.known.assign(std::size_t(queries()), 0);
        if (m_variants) {
            s.peak.assign(std::size_t(queries()), T(0));
            s.peakKnown.assign(std::size_t(queries()), 0);
        }
    }
#ifdef ATTN_HAVE_AVX512_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        if (detail::avx512::enabled()) {
            m_packedStride = detail::avx512::packedKeysSize(keys(), m_dK);
            m_packedKeys.resize(std::size_t(m_packedStride) * std::size_t(streamHeads()));
            for (Index h = 0; h < streamHeads(); ++h)
                detail::avx512::packKeys(m_key.data() + h * m_dK, m_key.outerStride(), keys(), m_dK,
                                         m_packedKeys.data() + h * m_packedStride);
        }
    }
#endif
}

template<typename T> Index TileEngine<T>::blockRows(Index nK, std::size_t elementBytes)
{
    // About 512 KiB of scores per block. Eigen's GEMM packs the keys (n_k × d_k) anew on every
    // call, which costs as much as the product itself for a few rows: its blocks have at least
    // 64 rows. The AVX-512 float32 code reads keys packed once (avx512.h), so 8 rows do.
    bool packedKeys = false;
#ifdef ATTN_HAVE_AVX512_KERNELS
    packedKeys = elementBytes == sizeof(float) && detail::avx512::enabled();
#endif
    const std::size_t target = std::size_t(512) << 10;
    const std::size_t rowBytes = std::max<std::size_t>(std::size_t(nK) * elementBytes, 1);
    return std::clamp<Index>(Index(target / rowBytes) / 8 * 8, packedKeys ? 8 : 64, 256);
}

template<typename T>
std::size_t TileEngine<T>::heldBytes(Index nQ, Index nK, Index heads, Index dK,
                                     std::size_t elementBytes, bool differential, bool gate)
{
    const double streams = differential ? 2.0 : 1.0;
    const double width = streams * double(heads) * double(dK);
    double bytes = (double(nQ) + double(nK)) * width * double(elementBytes);
#ifdef ATTN_HAVE_AVX512_KERNELS
    if (elementBytes == sizeof(float) && detail::avx512::enabled())
        bytes += double((nK + 31) / 32 * 32) * width * sizeof(float);
#endif
    bytes += streams * double(nQ) * double(heads) * (2.0 * double(elementBytes) + 1.0);
    if (differential || gate) // the rows' peaks
        bytes += double(nQ) * double(heads) * (double(elementBytes) + 1.0);
    if (gate)
        bytes += double(nQ) * double(heads) * sizeof(double);
    const double rows = double(blockRows(nK, elementBytes));
    double perThread
        = (1.0 + streams) * rows * double(nK + 32) * double(elementBytes) + rows * double(nK);
    if (elementBytes == sizeof(float))
        perThread += rows * double(nK) * sizeof(double);
    bytes += perThread * double(kernelThreads());
    return std::size_t(bytes);
}

template<typename T>
std::size_t TileEngine<T>::imageBytes(Index width, Index height, std::size_t elementBytes)
{
    return std::size_t(double(width) * double(height) * double(elementBytes + 1));
}

template<typename T> void TileEngine<T>::checkHead(Index head, const char *who) const
{
    if (head != kHeadMean && (head < 0 || head >= m_heads))
        throw InvalidArgument(std::string(who) + ": head " + std::to_string(head)
                              + " out of range [0, " + std::to_string(m_heads)
                              + ") (or kHeadMean)");
}

template<typename T> bool TileEngine<T>::statsKnown(Index head, Index i0, Index rows) const
{
    // Head u's rows are known once each of its softmaxes' are (A₂'s too).
    for (Index eta = head; eta < streamHeads(); eta += m_heads) {
        const std::vector<std::uint8_t> &known = m_stats[std::size_t(eta)].known;
        if (!std::all_of(known.begin() + i0, known.begin() + i0 + rows,
                         [](std::uint8_t k) { return k != 0; }))
            return false;
    }
    return true;
}

template<typename T>
Index TileEngine<T>::headBlock(Index head, Index i0, Index rows, Index c0, Index c1, bool full,
                               T *s, Index ld, std::atomic<Index> &badRow)
{
    const Index nK = keys();
    const T negInf = -std::numeric_limits<T>::infinity();
    const detail::RowPasses passes; // the kernels' row passes (rowops.h)
    RowStats &stats = m_stats[std::size_t(head)];
    // Keys the block computes: [c0, keyEnd); a causal mask with −inf fill cuts the rest.
    const Index keyEnd = m_causalSkip ? std::min(c1, m_mask.causalLimit(i0 + rows - 1, nK)) : c1;
    Index offset = 0;
    if (keyEnd > c0) {
        const T *q = m_query.data() + i0 * m_query.outerStride() + head * m_dK;
        bool done = false;
#ifdef ATTN_HAVE_AVX512_KERNELS
        if constexpr (std::is_same_v<T, float>) {
            if (!m_packedKeys.empty() && detail::avx512::enabled()) {
                const Index j0 = c0 / 32 * 32; // key tiles start on a panel of 32
                offset = c0 - j0;
                detail::avx512::scores(q, m_query.outerStride(), rows,
                                       m_packedKeys.data() + head * m_packedStride, m_dK, j0,
                                       keyEnd - j0, s, ld);
                done = true;
            }
        }
#endif
        if (!done) {
            Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>> sb(s, rows, keyEnd - c0,
                                                              Eigen::OuterStride<>(ld));
            gemmTransposed<T>(m_query.block(i0, head * m_dK, rows, m_dK),
                              m_key.block(c0, head * m_dK, keyEnd - c0, m_dK), sb); // GEMM
        }
    }
    const Index cols = c1 - c0;
    const T rowScale = m_foldScale ? m_scale : T(1);
    const bool masked = !m_mask.empty();
    // A learned sink: exp(b) in the denominator, b against the scaled scores.
    const T sink
        = m_sinkLogits.empty() || head >= m_heads ? negInf : m_sinkLogits[std::size_t(head)];
    for (Index r = 0; r < rows; ++r) {
        const Index i = i0 + r;
        T *row = s + r * ld + offset; // key c0 of query i
        // Keys of this row that may be allowed: [c0, n) (the rest is causally masked).
        const Index n = m_causalSkip ? std::clamp<Index>(m_mask.causalLimit(i, nK), c0, c1) : c1;
        std::fill(row + (n - c0), row + cols, T(0));
        const Index len = n - c0;
        if (!m_foldScale) {
            passes.scale(row, len, m_scale);
            if (!m_alibiSlopes.empty())
                addAlibi(head, i, c0, len, row);
            if (masked && !m_causalSkip)
                detail::applyMaskTile(row, ld, i, 1, c0, cols, m_mask, m_fill);
        }
        if (full) {
            bool suspicious = false;
            const T mx = passes.max(row, len, suspicious);
            bool bad = false;
            if (suspicious)
                for (Index c = 0; c < len && !bad; ++c)
                    bad = std::isnan(row[c]) || row[c] == -negInf;
            const T shift = mx * rowScale;
            if (!bad && mx != negInf && !std::isfinite(shift))
                bad = true; // finite scores overflow once scaled
            if (bad) {
                reportRow(badRow, i);
                std::fill(row, row + cols, T(0));
                continue;
            }
            if (mx == negInf) { // fully masked row: zeros
                std::fill(row, row + cols, T(0));
                stats.shift[std::size_t(i)] = negInf;
                stats.inverseSum[std::size_t(i)] = T(0);
                stats.known[std::size_t(i)] = 1;
                continue;
            }
            // With a sink larger than every score the row shifts by b (exp stays ≤ 1).
            const T rowShift = std::max(shift, sink);
            T sum = passes.expShiftSum(row, len, rowShift, rowScale);
            if (sink != negInf)
                sum += std::exp(sink - rowShift);
            const T inverse = T(1) / sum;
            passes.scale(row, len, inverse);
            stats.shift[std::size_t(i)] = rowShift;
            stats.inverseSum[std::size_t(i)] = inverse;
            stats.known[std::size_t(i)] = 1;
        } else {
            const T shift = stats.shift[std::size_t(i)];
            if (shift == negInf) {
                std::fill(row, row + cols, T(0));
                continue;
            }
            passes.expShiftSum(row, len, shift, rowScale);
            passes.scale(row, len, stats.inverseSum[std::size_t(i)]);
        }
    }
    return offset;
}

template<typename T> struct TileEngine<T>::Scratch
{
    std::vector<T> scores; // rows × ld
    std::vector<T> second; // rows × ld: A₂ (differential attention)
    std::vector<T> mean; // rows × ld (head mean)
    std::vector<T> metricMean; // rows × ld: the head mean of A₁ and the sink (with variants)
    std::vector<std::uint8_t> states; // rows × window cols
    std::vector<double> rowsAsDouble; // rows × n_k (float32 metrics)
    std::vector<PoolAccumulator> pools; // per requested image
    RowMetricsScratch metrics;
};

template<typename T>
std::vector<PooledTile<T>>
TileEngine<T>::render(const std::vector<Index> &heads, const TileWindow &window, Index maxWidth,
                      Index maxHeight, TilePooling pooling, std::vector<RowMetrics> *metrics,
                      const CancelToken &cancel)
{
    // An empty window gets render()'s message, which names the window and the weights' shape.
    const bool cells = window.rows() >= 1 && window.cols() >= 1;
    return render(heads, window, cells ? tileGrid(window, maxWidth, maxHeight) : TileGrid {},
                  pooling, metrics, cancel);
}

template<typename T>
std::vector<PooledTile<T>>
TileEngine<T>::render(const std::vector<Index> &heads, const TileWindow &window,
                      const TileGrid &grid, TilePooling pooling, std::vector<RowMetrics> *metrics,
                      const CancelToken &cancel)
{
    static constexpr const char *who = "TileEngine::render";
    if (heads.empty())
        throw InvalidArgument(std::string(who) + ": no head requested");
    for (Index h : heads)
        checkHead(h, who);
    const Index nQ = queries(), nK = keys();
    if (window.rowBegin < 0 || window.rowEnd > nQ || window.colBegin < 0 || window.colEnd > nK
        || window.rows() < 1 || window.cols() < 1)
        throw InvalidArgument(
            std::string(who) + ": the window of queries [" + std::to_string(window.rowBegin) + ", "
            + std::to_string(window.rowEnd) + ") × keys [" + std::to_string(window.colBegin) + ", "
            + std::to_string(window.colEnd) + ") is empty or does not lie in the "
            + shapeString(nQ, nK) + " weights");
    const auto covers = [](Index pixels, Index perPixel, Index cells) {
        return pixels >= 1 && perPixel >= 1 && pixels <= cells && perPixel <= cells
            && (pixels - 1) * perPixel < cells && pixels * perPixel >= cells;
    };
    if (!covers(grid.width, grid.colsPerPixel, window.cols())
        || !covers(grid.height, grid.rowsPerPixel, window.rows()))
        throw InvalidArgument(std::string(who) + ": a grid of "
                              + shapeString(grid.height, grid.width) + " pixels of "
                              + shapeString(grid.rowsPerPixel, grid.colsPerPixel)
                              + " cells does not cover a window of "
                              + shapeString(window.rows(), window.cols()) + " cells");
    const bool max = pooling == TilePooling::Max;
    const bool wantMean = std::find(heads.begin(), heads.end(), kHeadMean) != heads.end();
    // Heads computed per block: every head for the mean, else the requested ones.
    std::vector<Index> computed;
    for (Index h = 0; h < m_heads; ++h)
        if (wantMean || std::find(heads.begin(), heads.end(), h) != heads.end())
            computed.push_back(h);
    const std::size_t images = heads.size();

    std::vector<PooledTile<T>> out(images);
    for (std::size_t k = 0; k < images; ++k) {
        out[k].head = heads[k];
        out[k].window = window;
        out[k].grid = grid;
        out[k].pooling = pooling;
        out[k].values.resize(grid.height, grid.width);
        out[k].maskState.resize(grid.height, grid.width);
    }
    if (metrics)
        metrics->assign(images, zeroMetrics(window.rows()));

    // Differential attention holds a second block (A₂) beside the first: half the rows keep the
    // two within the cache one block was sized for.
    const Index blockR = std::max<Index>(8, blockRows(nK, sizeof(T)) / (m_differential ? 2 : 1));
    const Index ld = nK + 32;
    const Index bq = grid.rowsPerPixel, bk = grid.colsPerPixel;
    const Index pixelRowsPerTask = std::max<Index>(1, blockR / bq);
    const Index tasks = (grid.height + pixelRowsPerTask - 1) / pixelRowsPerTask;
    const bool masked = !m_mask.empty();
    const bool fullWidth = window.colBegin == 0 && window.colEnd == nK;
    const Index wc = window.cols();
    // Metrics over every key and, with a learned sink, the sink (column n_k of a row).
    const Index metricCols = nK + (m_sinkLogits.empty() ? 0 : 1);
    // Signed weights pool to the value of largest magnitude, its sign kept.
    const bool signedMax = m_differential;
    std::atomic<Index> badRow {std::numeric_limits<Index>::max()};
    std::atomic<bool> stopped {false};

    // Q Kᵀ of the computed heads: 2 flops per multiply-add. Small windows run on this thread
    // alone, its products included (threadsForFlops, core/base/threads.h).
    const double flops
        = 2.0 * double(window.rows()) * double(nK) * double(m_dK) * double(computed.size());
    const Index threads = threadsForFlops(flops);
    const bool parallel = tasks > 1 && threads > 1;
    std::optional<ScopedKernelThreads> oneThread;
    if (threads == 1)
        oneThread.emplace(1);
#pragma omp parallel if (parallel)
    {
        Scratch sc;
        sc.scores.resize(std::size_t(blockR) * std::size_t(ld));
        if (m_differential)
            sc.second.resize(std::size_t(blockR) * std::size_t(ld));
        if (wantMean)
            sc.mean.resize(std::size_t(blockR) * std::size_t(ld));
        if (wantMean && metrics && m_variants)
            sc.metricMean.resize(std::size_t(blockR) * std::size_t(ld));
        if (masked)
            sc.states.resize(std::size_t(blockR) * std::size_t(wc));
        if (metrics && std::is_same_v<T, float>)
            sc.rowsAsDouble.resize(std::size_t(blockR) * std::size_t(metricCols));
        sc.pools.resize(images);

#pragma omp for schedule(dynamic, 1)
        for (Index t = 0; t < tasks; ++t) {
            if (stopped.load(std::memory_order_relaxed)
                || badRow.load() != std::numeric_limits<Index>::max())
                continue;
            if (cancel.isCancelled()) {
                stopped = true;
                continue;
            }
            const Index y0 = t * pixelRowsPerTask;
            const Index y1 = std::min(grid.height, y0 + pixelRowsPerTask);
            const Index rBegin = window.rowBegin + y0 * bq;
            const Index rEnd = std::min(window.rowEnd, window.rowBegin + y1 * bq);
            for (PoolAccumulator &p : sc.pools)
                p.reset((y1 - y0) * grid.width, max, signedMax);

            for (Index i0 = rBegin; i0 < rEnd; i0 += blockR) {
                const Index rows = std::min(blockR, rEnd - i0);
                if (masked)
                    for (Index r = 0; r < rows; ++r)
                        maskStateRow(m_mask, nK, i0 + r, window.colBegin, wc,
                                     sc.states.data() + r * wc);
                bool full = metrics || fullWidth;
                for (Index h : computed)
                    full = full || !statsKnown(h, i0, rows);
                const Index c0 = full ? 0 : window.colBegin;
                const Index c1 = full ? nK : window.colEnd;
                const Index segment = window.colBegin - c0; // window column 0 in a computed row
                // Pools rows × [c0, c1) at `w` (rows ld apart, first computed column at w) into
                // image k.
                const auto pool = [&](std::size_t k, const T *w) {
                    for (Index r = 0; r < rows; ++r) {
                        const Index i = i0 + r;
                        const Index y = (i - window.rowBegin) / bq - y0;
                        const T *row = w + r * ld;
                        poolRow(row + segment, masked ? sc.states.data() + r * wc : nullptr, wc, bk,
                                grid.width, y, max, signedMax, sc.pools[k]);
                    }
                };
                // The metrics of image k from the softmax rows at `w` (every key, and the
                // learned sink's mass in column n_k): a row with no weight anywhere (every key
                // masked, no sink) is flagged fully masked and stays 0.
                const auto measure = [&](std::size_t k, const T *w) {
                    RowMetrics &m = (*metrics)[k];
                    std::vector<const double *> ptrs;
                    std::vector<Index> at;
                    for (Index r = 0; r < rows; ++r) {
                        const Index i = i0 + r;
                        const T *row = w + r * ld;
                        if (m_stats[std::size_t(computed.front())].shift[std::size_t(i)]
                                == -std::numeric_limits<T>::infinity()
                            && !(metricCols > nK && row[nK] > T(0))) {
                            m.fullyMasked[std::size_t(i - window.rowBegin)] = 1;
                            continue;
                        }
                        if constexpr (std::is_same_v<T, double>) {
                            ptrs.push_back(row);
                        } else {
                            double *d = sc.rowsAsDouble.data() + r * metricCols;
                            for (Index j = 0; j < metricCols; ++j)
                                d[j] = double(row[j]);
                            ptrs.push_back(d);
                        }
                        at.push_back(i - window.rowBegin);
                    }
                    std::vector<RowMetricValues> values(ptrs.size());
                    rowMetricValues(ptrs.data(), int(ptrs.size()), metricCols, values.data(),
                                    sc.metrics);
                    for (std::size_t q = 0; q < ptrs.size(); ++q)
                        storeMetrics(m, at[q], values[q]);
                };
                // acc (+)= add over n entries of each row.
                const auto accumulate = [&](T *acc, const T *add, Index n, bool first) {
                    for (Index r = 0; r < rows; ++r) {
                        Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> a(acc + r * ld, n);
                        const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> b(add + r * ld,
                                                                                     n);
                        if (first)
                            a = b;
                        else
                            a += b;
                    }
                };

                for (std::size_t hi = 0; hi < computed.size(); ++hi) {
                    const Index h = computed[hi];
                    const Index off
                        = headBlock(h, i0, rows, c0, c1, full, sc.scores.data(), ld, badRow);
                    T *w = sc.scores.data() + off;
                    if (metrics) { // full rows: off = 0
                        if (metricCols > nK)
                            for (Index r = 0; r < rows; ++r)
                                w[r * ld + nK] = sinkMass(h, i0 + r);
                        for (std::size_t k = 0; k < images; ++k)
                            if (heads[k] == h)
                                measure(k, w);
                        if (wantMean && m_variants)
                            accumulate(sc.metricMean.data(), w, metricCols, hi == 0);
                    }
                    if (m_variants) {
                        const T *w2 = nullptr;
                        if (m_differential)
                            w2 = sc.second.data()
                                + headBlock(h + m_heads, i0, rows, c0, c1, full, sc.second.data(),
                                            ld, badRow);
                        combine(h, i0, rows, c1 - c0, full, w, w2, ld);
                    }
                    for (std::size_t k = 0; k < images; ++k)
                        if (heads[k] == h)
                            pool(k, w);
                    if (wantMean)
                        accumulate(sc.mean.data(), w, c1 - c0, hi == 0);
                }
                if (wantMean) {
                    for (Index r = 0; r < rows; ++r)
                        Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(sc.mean.data() + r * ld,
                                                                       c1 - c0)
                            /= T(m_heads);
                    for (std::size_t k = 0; k < images; ++k) {
                        if (heads[k] != kHeadMean)
                            continue;
                        pool(k, sc.mean.data());
                        if (!metrics)
                            continue;
                        if (m_variants) {
                            for (Index r = 0; r < rows; ++r)
                                Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(
                                    sc.metricMean.data() + r * ld, metricCols)
                                    /= T(m_heads);
                            measure(k, sc.metricMean.data());
                        } else {
                            measure(k, sc.mean.data());
                        }
                    }
                }
            }

            for (std::size_t k = 0; k < images; ++k) {
                const PoolAccumulator &p = sc.pools[k];
                for (Index y = y0; y < y1; ++y) {
                    for (Index x = 0; x < grid.width; ++x) {
                        const std::size_t a = std::size_t((y - y0) * grid.width + x);
                        const bool any = p.count[a] > 0;
                        out[k].values(y, x)
                            = any ? T(max ? p.value[a] : p.value[a] / double(p.count[a])) : T(0);
                        out[k].maskState(y, x) = any ? std::uint8_t(0) : p.masked[a];
                    }
                }
            }
        }
    }
    if (badRow.load() != std::numeric_limits<Index>::max())
        throw NonFiniteInput(std::string(who) + ": scaled scores overflowed in row "
                             + std::to_string(badRow.load()));
    if (stopped.load())
        throw Cancelled();
    return out;
}

template<typename T>
PooledTile<T> TileEngine<T>::render(Index head, const TileWindow &window, Index maxWidth,
                                    Index maxHeight, TilePooling pooling)
{
    return std::move(render(std::vector<Index> {head}, window, maxWidth, maxHeight, pooling)[0]);
}

template<typename T>
typename TileEngine<T>::WindowScores TileEngine<T>::windowScores(Index head,
                                                                 const TileWindow &window) const
{
    static constexpr const char *who = "TileEngine::windowScores";
    if (head == kHeadMean)
        throw InvalidArgument(std::string(who) + ": the mean over heads has no scores");
    checkHead(head, who);
    if (window.rowBegin < 0 || window.rowEnd > queries() || window.colBegin < 0
        || window.colEnd > keys() || window.rows() < 1 || window.cols() < 1)
        throw InvalidArgument(
            std::string(who) + ": the window of queries [" + std::to_string(window.rowBegin) + ", "
            + std::to_string(window.rowEnd) + ") × keys [" + std::to_string(window.colBegin) + ", "
            + std::to_string(window.colEnd) + ") is empty or does not lie in the "
            + shapeString(queries(), keys()) + " weights");
    WindowScores out;
    out.raw = m_query.block(window.rowBegin, head * m_dK, window.rows(), m_dK)
        * m_key.block(window.colBegin, head * m_dK, window.cols(), m_dK).transpose();
    out.scaled = out.raw * m_scale;
    const MatrixD *add = m_mask.additiveTerm();
    for (Index r = 0; r < window.rows(); ++r)
        for (Index c = 0; c < window.cols(); ++c) {
            const Index i = window.rowBegin + r, j = window.colBegin + c;
            if (add)
                out.scaled(r, c) = T(out.scaled(r, c) + T((*add)(i, j)));
            if (!m_alibiSlopes.empty())
                addAlibi(head, i, j, 1, &out.scaled(r, c));
            if (m_mask.state(i, j) != MaskAllowed)
                out.scaled(r, c) = m_fill;
        }
    return out;
}

template<typename T> bool TileEngine<T>::rowStatisticsComplete(Index head) const
{
    checkHead(head, "TileEngine::rowStatisticsComplete");
    const Index first = head == kHeadMean ? 0 : head;
    const Index last = head == kHeadMean ? m_heads : head + 1;
    for (Index h = first; h < last; ++h)
        if (!statsKnown(h, 0, queries()))
            return false;
    return true;
}

template<typename T> bool TileEngine<T>::rowFullyMasked(Index i) const
{
    if (i < 0 || i >= queries())
        throw InvalidArgument("TileEngine::rowFullyMasked: query " + std::to_string(i)
                              + " out of range [0, " + std::to_string(queries()) + ")");
    // The mask is shared by the heads: any head whose row is known tells.
    for (const RowStats &st : m_stats)
        if (st.known[std::size_t(i)])
            return st.shift[std::size_t(i)] == -std::numeric_limits<T>::infinity();
    return false;
}

template<typename T> double TileEngine<T>::maxWeight(Index head) const
{
    if (!rowStatisticsComplete(head))
        throw InvalidArgument("TileEngine::maxWeight: the row statistics of head "
                              + std::to_string(head) + " are not computed yet");
    const Index first = head == kHeadMean ? 0 : head;
    const Index last = head == kHeadMean ? m_heads : head + 1;
    double best = 0;
    for (Index h = first; h < last; ++h) {
        const RowStats &st = m_stats[std::size_t(h)];
        for (Index i = 0; i < queries(); ++i) {
            if (m_variants) // the rows' largest |w|, recorded as they were computed
                best = std::max(best, double(st.peak[std::size_t(i)]));
            else if (st.shift[std::size_t(i)] != -std::numeric_limits<T>::infinity())
                best = std::max(best, double(st.inverseSum[std::size_t(i)]));
        }
    }
    return best;
}

template<typename T> RowMetrics TileEngine<T>::rowMetrics(Index head, const CancelToken &cancel)
{
    checkHead(head, "TileEngine::rowMetrics");
    std::vector<RowMetrics> m;
    render(std::vector<Index> {head}, fullWindow(), 1, queries(), TilePooling::Max, &m, cancel);
    return std::move(m[0]);
}

template<typename T> TileCell TileEngine<T>::cell(Index head, Index i, Index j)
{
    static constexpr const char *who = "TileEngine::cell";
    checkHead(head, who);
    if (i < 0 || i >= queries() || j < 0 || j >= keys())
        throw InvalidArgument(std::string(who) + ": cell (" + std::to_string(i) + ", "
                              + std::to_string(j) + ") does not lie in the "
                              + shapeString(queries(), keys()) + " weights");
    TileCell c;
    c.maskState = m_mask.state(i, j);
    const Index first = head == kHeadMean ? 0 : head;
    const Index last = head == kHeadMean ? m_heads : head + 1;
    // Row i's max and sum (one row against every key) where not known yet; with variants
    // through render(), which records the row's peak too.
    bool known = true;
    for (Index h = first; h < last; ++h)
        known = known && statsKnown(h, i, 1);
    if (m_variants && !known)
        render(std::vector<Index> {head}, TileWindow {i, i + 1, 0, keys()}, 1, 1, TilePooling::Max);
    for (Index h = first; h < last && !m_variants; ++h) {
        if (!m_stats[std::size_t(h)].known[std::size_t(i)]) {
            std::vector<T> buffer(std::size_t(keys() + 32));
            std::atomic<Index> badRow {std::numeric_limits<Index>::max()};
            headBlock(h, i, 1, 0, keys(), true, buffer.data(), keys() + 32, badRow);
            if (badRow.load() != std::numeric_limits<Index>::max())
                throw NonFiniteInput(std::string(who) + ": scaled scores overflowed in row "
                                     + std::to_string(i));
        }
    }
    // Softmax head η's raw score, scaled score and weight of cell (i, j).
    struct Softmax
    {
        T raw, scaled, weight;
    };
    const auto softmax = [&](Index eta) {
        Softmax out;
        out.raw
            = m_query.row(i).segment(eta * m_dK, m_dK).dot(m_key.row(j).segment(eta * m_dK, m_dK));
        out.scaled = out.raw * m_scale;
        if (const MatrixD *add = m_mask.additiveTerm())
            out.scaled = T(out.scaled + T((*add)(i, j)));
        if (!m_alibiSlopes.empty())
            addAlibi(eta, i, j, 1, &out.scaled);
        if (c.maskState != MaskAllowed)
            out.scaled = m_fill;
        const RowStats &st = m_stats[std::size_t(eta)];
        out.weight = 0;
        if (st.shift[std::size_t(i)] != -std::numeric_limits<T>::infinity()
            && out.scaled != -std::numeric_limits<T>::infinity())
            out.weight
                = std::exp(out.scaled - st.shift[std::size_t(i)]) * st.inverseSum[std::size_t(i)];
        return out;
    };
    double weightSum = 0, firstSum = 0, secondSum = 0, gateSum = 0, sinkSum = 0;
    T meanAcc = 0;
    for (Index h = first; h < last; ++h) {
        const Softmax a1 = softmax(h);
        T w = a1.weight;
        T a2 = 0;
        if (m_differential) {
            a2 = softmax(h + m_heads).weight;
            w = w - m_lambda[std::size_t(h)] * a2;
        }
        const double g = m_gate.size() > 0 ? m_gate(i, h) : 1.0;
        if (m_gate.size() > 0)
            w *= T(g);
        meanAcc += w;
        weightSum += double(w);
        firstSum += double(a1.weight);
        secondSum += double(a2);
        gateSum += g;
        sinkSum += double(sinkMass(h, i));
        if (head != kHeadMean) {
            c.rawScore = double(a1.raw);
            c.scaledScore = double(a1.scaled);
        }
    }
    const double count = double(last - first);
    c.hasScores = head != kHeadMean;
    c.weight = head == kHeadMean ? double(meanAcc / T(m_heads)) : weightSum;
    c.firstWeight = firstSum / count;
    c.secondWeight = secondSum / count;
    c.gate = gateSum / count;
    c.sinkMass = sinkSum / count;
    return c;
}

template class TileEngine<float>;
template class TileEngine<double>;

} // namespace attn
