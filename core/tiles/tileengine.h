#pragma once
// Attention maps of long sequences at constant memory: a view window of the n_q × n_k weights
// (rows i0 … i1 − 1, columns j0 … j1 − 1) pooled to a grid of pixels, computed exactly from Q and
// K in blocks of query rows, without the n_q × n_k matrix.
//
// For every block of query rows the engine computes the block's scores against every key (a
// rows × n_k buffer per thread, O(n_k) memory), takes each row's max and sum (the softmax's
// normaliser over the whole row, not only the window: Milakov & Gimelshein 2018; Dao et al.
// 2022, FlashAttention), normalises and pools the window's columns to the grid. The row max and
// sum are kept (two numbers per row and head), so a later window that does not span every key
// computes only its own rows × columns: exp(s·scale − max) / sum. The multi-resolution view is
// HiGlass's (Kerpedjiev et al. 2018), but pooled by max as well as mean, so that a single spike
// stays visible at every zoom level.
//
// Pooling follows HeatmapRenderer: a pixel covers a block of rowsPerPixel × colsPerPixel cells,
// rowsPerPixel = ⌈window rows / max height⌉ (likewise columns), the last block of a row or
// column may be shorter; its value is the max or the mean of the block's unmasked cells, and a
// block whose cells are all masked takes the OR of their MaskStateBits and the value 0.
//
// Weights are those of scaledDotProductAttention (core/attention/attention.h) and of the kernels
// (core/kernels/kernels.h): softmax(Q Kᵀ · scale + additive mask) with masked cells = the fill
// value (−inf by default: weight 0), fully masked rows all zeros.

#include "core/analysis/metrics.h"
#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/base/cancel.h"
#include "core/base/types.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

/// How a pixel combines its cells.
enum class TilePooling { Max, Mean };

/// "Head" index that selects the mean over heads (MultiheadResult::weightsMean).
inline constexpr Index kHeadMean = -1;

/// A rectangle of cells: queries [rowBegin, rowEnd) × keys [colBegin, colEnd).
struct TileWindow
{
    Index rowBegin = 0, rowEnd = 0;
    Index colBegin = 0, colEnd = 0;
    Index rows() const { return rowEnd - rowBegin; }
    Index cols() const { return colEnd - colBegin; }
};

/// Pixels of a window pooled to at most maxWidth × maxHeight pixels.
struct TileGrid
{
    Index rowsPerPixel = 1; ///< ⌈window rows / maxHeight⌉ cells per pixel row
    Index colsPerPixel = 1; ///< ⌈window cols / maxWidth⌉ cells per pixel column
    Index width = 0; ///< ⌈window cols / colsPerPixel⌉ pixels
    Index height = 0; ///< ⌈window rows / rowsPerPixel⌉ pixels
};

/// The grid of `window` for at most maxWidth × maxHeight pixels. Throws InvalidArgument when the
/// window is empty or maxWidth, maxHeight < 1.
TileGrid tileGrid(const TileWindow &window, Index maxWidth, Index maxHeight);

/// The grid of `window` with exactly rowsPerPixel × colsPerPixel cells per pixel (the last pixel
/// row or column may cover fewer): the tiles of one zoom level of a tile pyramid share their
/// pixel size whatever their window's size (a pixel covers at most the whole window). Throws
/// InvalidArgument when the window is empty or
/// rowsPerPixel, colsPerPixel < 1.
TileGrid tileGridWithCells(const TileWindow &window, Index rowsPerPixel, Index colsPerPixel);

/// One pooled image of a window.
template<typename T> struct PooledTile
{
    Index head = 0; ///< head index, or kHeadMean
    TileWindow window;
    TileGrid grid;
    TilePooling pooling = TilePooling::Max;
    /// grid.height × grid.width, row-major: the pooled weight of each pixel's unmasked cells
    /// (0 where every cell is masked).
    Matrix<T> values;
    /// grid.height × grid.width: OR of the cells' MaskStateBits where every cell of the pixel is
    /// masked, else 0.
    MatrixB maskState;

    /// Query rows [first, last) of pixel row y (0 ≤ y < grid.height).
    Index pixelRowBegin(Index y) const { return window.rowBegin + y * grid.rowsPerPixel; }
    Index pixelRowEnd(Index y) const
    {
        return std::min(window.rowEnd, pixelRowBegin(y) + grid.rowsPerPixel);
    }
    /// Keys [first, last) of pixel column x (0 ≤ x < grid.width).
    Index pixelColBegin(Index x) const { return window.colBegin + x * grid.colsPerPixel; }
    Index pixelColEnd(Index x) const
    {
        return std::min(window.colEnd, pixelColBegin(x) + grid.colsPerPixel);
    }
};

/// One cell computed on demand.
struct TileCell
{
    bool hasScores = true; ///< false for kHeadMean (the scores are per head)
    double rawScore = 0; ///< q_i · k_j (the first softmax's under differential attention)
    double scaledScore = 0; ///< raw · scale + additive term; the fill value where masked
    /// The weight shown: the softmax weight, or with the variants (TileVariants) the gated
    /// g_i·(A₁ − λA₂)_ij; the mean over heads for kHeadMean.
    double weight = 0;
    double firstWeight = 0; ///< A₁'s weight (the softmax weight before λ and the gate)
    double secondWeight = 0; ///< A₂'s weight under differential attention, else 0
    double gate = 1; ///< σ(g) of query i's row (1 without a gate)
    double sinkMass = 0; ///< the learned sink's share of row i (0 without one)
    std::uint8_t maskState = MaskAllowed; ///< MaskStateBits of (i, j)
};

/// The attention variants of 2025 (core/attention/variants.h) the tile engine applies to its
/// softmax rows; each is off while its field is empty. All rows keep O(n_q) state: a row's max
/// and sum per softmax, as for plain attention.
template<typename T> struct TileVariants
{
    /// Learned sinks (gpt-oss): h logits b_u in the softmax denominator of head u,
    /// w_ij = exp(x_ij) / (exp(b_u) + Σ_k exp(x_ik)) with x the scaled and masked scores; a
    /// fully masked row gives its whole mass to the sink. −inf: no sink in that head.
    std::vector<double> sinkLogits;
    /// Differential attention (Ye et al. 2025, Eq. 1): the second softmax's queries and keys,
    /// shaped as the engine's query (n_q × h·d_k) and key (n_k × h·d_k), with the same scale and
    /// mask, and h values λ_u: head u's weights are A₁ − λ_u A₂ (signed; rows sum to 1 − λ_u).
    Matrix<T> query2, key2;
    std::vector<double> lambda;
    /// Head-wise output gate (Qiu et al. 2025): n_q × h values σ(g_iu) in [0, 1]; head u's row
    /// i is scaled by gate(i, u) (the weights the gated output is built from).
    MatrixD gate;
    /// ALiBi (Press et al. 2022): h slopes m_u; head u's scaled score of (i, j) gains
    /// −m_u·(i − j) with alibiCausal, else −m_u·|i − j| (alibiBias, core/attention/positional.h),
    /// before the mask; in both softmaxes under differential attention.
    std::vector<double> alibiSlopes;
    bool alibiCausal = false;

    bool differential() const { return query2.size() > 0; }
    bool any() const
    {
        return !sinkLogits.empty() || differential() || gate.size() > 0 || !alibiSlopes.empty();
    }
};

/// Exact pooled attention maps and per-row metrics of one multi-head attention from its projected
/// queries and keys, in O(n_q + n_k) memory per head (see the file comment).
///
/// Not thread-safe: call one member at a time (each call uses every OpenMP thread itself).
template<typename T> class TileEngine
{
public:
    /// query: n_q × (h·d_k), key: n_k × (h·d_k), heads side by side by columns as
    /// MultiheadAttention projects them (head η uses columns η·d_k … (η+1)·d_k − 1). The scale is
    /// effectiveScale(d_k, options) (α, τ or an explicit scale); options.maskFill is the masked
    /// cells' value. Throws InvalidArgument when heads < 1, the widths differ or are not a
    /// multiple of heads, the mask does not fit n_q × n_k, or the fill is NaN or +inf;
    /// NonFiniteInput naming the input, row and column on NaN/Inf (when options.checkFinite).
    TileEngine(Matrix<T> query, Matrix<T> key, Index heads, AttentionMask mask = {},
               const AttentionOptions &options = {});
    /// The engine above with the 2025 variants applied to every head's rows (TileVariants).
    /// Pooled values, cells and maxWeight() are then the variants' weights (signed under
    /// differential attention, where Max pooling keeps the value of largest magnitude); the
    /// per-row metrics stay those of the softmax rows — A₁'s, before λ and the gate — over the
    /// keys and the learned sink, as the full engine's (core/engine/sessionengine.h). Throws as
    /// the constructor above, and InvalidArgument when sinkLogits does not hold h values or one
    /// is NaN or +inf, query2/key2 are not shaped as query/key, lambda does not hold h finite
    /// values, the gate is not n_q × h or holds a value outside [0, 1], a learned sink is
    /// combined with differential attention (no published model does), the mask fill is not
    /// −inf with a learned sink (a finite fill would give masked keys weight beside the sink), or
    /// alibiSlopes does not hold h finite values.
    TileEngine(Matrix<T> query, Matrix<T> key, Index heads, AttentionMask mask,
               const AttentionOptions &options, TileVariants<T> variants);

    Index queries() const { return m_query.rows(); }
    Index keys() const { return m_key.rows(); }
    Index heads() const { return m_heads; }
    Index headDim() const { return m_dK; }
    double scale() const { return m_scaleValue; }
    const AttentionMask &mask() const { return m_mask; }
    /// Whether weights can be negative (differential attention).
    bool signedWeights() const { return m_differential; }
    bool hasVariants() const { return m_variants; }

    /// Pooled images of `window` for each entry of `heads` (head indices and/or kHeadMean), on
    /// tileGrid(window, maxWidth, maxHeight), in one pass over the window's rows (the mean reuses
    /// the heads' weights). When `metrics` is non-null it receives, per entry of `heads`, the
    /// per-row metrics of the window's rows (vectors of window.rows() entries) as
    /// rowMetrics(weights, fullyMasked) gives them, computed over every key of each row (the
    /// window's columns do not matter); the rows are then computed in full.
    /// `cancel`, polled before each block of rows, stops the pass once cancelled (throws
    /// Cancelled).
    /// Throws InvalidArgument when the window does not lie in n_q × n_k, is empty, the grid size
    /// is < 1 or a head is out of range; NonFiniteInput when finite inputs overflow the scaled
    /// scores (naming the row).
    std::vector<PooledTile<T>> render(const std::vector<Index> &heads, const TileWindow &window,
                                      Index maxWidth, Index maxHeight, TilePooling pooling,
                                      std::vector<RowMetrics> *metrics = nullptr,
                                      const CancelToken &cancel = {});
    /// render() on the given grid (tileGridWithCells or tileGrid of `window`) instead of
    /// tileGrid(window, maxWidth, maxHeight). Throws InvalidArgument as render(), and when the
    /// grid does not cover the window (grid.width · colsPerPixel < window.cols() or
    /// (grid.width − 1) · colsPerPixel ≥ window.cols(), likewise for rows).
    std::vector<PooledTile<T>> render(const std::vector<Index> &heads, const TileWindow &window,
                                      const TileGrid &grid, TilePooling pooling,
                                      std::vector<RowMetrics> *metrics = nullptr,
                                      const CancelToken &cancel = {});
    /// render() of one head (or kHeadMean).
    PooledTile<T> render(Index head, const TileWindow &window, Index maxWidth, Index maxHeight,
                         TilePooling pooling);

    /// Per-row metrics of every row of `head` (or kHeadMean): n_q entries, as rowMetrics().
    RowMetrics rowMetrics(Index head, const CancelToken &cancel = {});

    /// Cell (i, j) of `head` (or kHeadMean, which has no scores), computed on demand from q_i, k_j
    /// and row i's max and sum (row i is computed once if they are not known yet). Throws
    /// InvalidArgument when i, j or the head are out of range.
    TileCell cell(Index head, Index i, Index j);

    /// Raw scores q_i · k_j (raw) and scaled scores (raw · scale + the additive term; the fill
    /// value where masked: scaled) of `head` over `window`, window.rows() × window.cols() each,
    /// row-major, as scaledDotProductAttention's scores and scaledScores. Throws
    /// InvalidArgument when the head is out of range or kHeadMean (no scores), or the window
    /// does not lie in n_q × n_k or is empty.
    struct WindowScores
    {
        Matrix<T> raw;
        Matrix<T> scaled;
    };
    WindowScores windowScores(Index head, const TileWindow &window) const;

    /// True once every row's max and sum of `head` (every head for kHeadMean) are known: after
    /// a render() whose window spans every key and every query, or rowMetrics().
    bool rowStatisticsComplete(Index head) const;
    /// The largest weight of `head` over every cell, max_i 1 / Σ_j exp(x_ij − max_j x_ij) (a
    /// row's largest weight is exp(0) / Σ); with variants the largest |w| of the rows as
    /// computed; for kHeadMean the largest of the heads' (an upper bound of the mean's). 0 when
    /// every row is fully masked. Throws InvalidArgument when the head is out of range or
    /// rowStatisticsComplete(head) is false.
    double maxWeight(Index head) const;

    /// Whether query i's row is fully masked — every key masked and the fill −inf, so the row
    /// has no weight at all — by its statistics: false while they are not known (the first
    /// render over every key of the row, or rowMetrics(), computes them). Throws
    /// InvalidArgument for i outside [0, n_q).
    bool rowFullyMasked(Index i) const;

    /// The window covering every cell.
    TileWindow fullWindow() const { return {0, queries(), 0, keys()}; }

    /// Bytes this engine holds for n_q × n_k attention over `heads` heads of d_k each with
    /// element size `elementBytes`, excluding the images render() returns: Q and K
    /// ((n_q + n_k)·h·d_k elements), on the AVX-512 float32 code Kᵀ packed in panels of 32 keys
    /// (⌈n_k/32⌉·32·h·d_k floats), two row statistics per row and head plus a flag byte
    /// (n_q·h·(2·elementBytes + 1)), and per OpenMP thread two blocks of rows × (n_k + 32)
    /// elements (rows: blockRows(n_k)), a block of mask states and, in float32, one of
    /// doubles for the metrics.
    /// With `differential`, the second queries and keys, their statistics and a second block
    /// per thread too; with `gate`, n_q × h doubles.
    static std::size_t heldBytes(Index nQ, Index nK, Index heads, Index dK,
                                 std::size_t elementBytes, bool differential = false,
                                 bool gate = false);
    /// Bytes of one pooled image of width × height pixels (values and mask states).
    static std::size_t imageBytes(Index width, Index height, std::size_t elementBytes);

    /// Query rows per block for n_k keys: about 512 KiB of scores per block, 8 … 256 rows on the
    /// AVX-512 float32 code, 64 … 256 on Eigen's GEMM (which repacks the keys on every call).
    static Index blockRows(Index nK, std::size_t elementBytes);

private:
    struct RowStats
    {
        /// n_q: the row's max scaled score, or the sink logit where larger (−inf: fully masked)
        std::vector<T> shift;
        std::vector<T> inverseSum; ///< n_q: 1 / (Σ_j exp(x_j − shift) + exp(b − shift))
        std::vector<std::uint8_t> known; ///< n_q: 1 once computed
        std::vector<T> peak; ///< n_q with variants: max_j |w_ij| of the final weights
        std::vector<std::uint8_t> peakKnown; ///< n_q with variants: 1 once computed
    };
    struct Scratch;

    /// Checks `variants` (see the constructor) and keeps them; appends A₂'s queries and keys.
    void takeVariants(TileVariants<T> variants, const AttentionOptions &options, const char *who);
    void checkHead(Index head, const char *who) const;
    /// The softmax heads of user head u: u, and u + h (A₂) under differential attention.
    Index streamHeads() const { return m_differential ? 2 * m_heads : m_heads; }
    /// Head u's final weights (λ and the gate) from A₁ in `s` and A₂ in `s2` (rows × [c0, c1),
    /// the first column at s + offset, rows ld apart); records each row's peak when full.
    void combine(Index head, Index i0, Index rows, Index cols, bool full, T *s, const T *s2,
                 Index ld);
    /// ALiBi's bias of query i, keys [j0, j0 + cols) of softmax head η added to row[0, cols).
    void addAlibi(Index stream, Index i, Index j0, Index cols, T *row) const;
    /// The sink mass of row i of softmax head η (0 without a sink).
    T sinkMass(Index stream, Index i) const;
    /// Head η's weights of rows [i0, i0 + rows) × keys [c0, c1) into `s` (rows `ld` apart);
    /// returns the offset of column c0 in each row. `full` (c0 = 0, c1 = n_k): every key,
    /// recording the rows' statistics; else the statistics must be known.
    Index headBlock(Index head, Index i0, Index rows, Index c0, Index c1, bool full, T *s, Index ld,
                    std::atomic<Index> &badRow);
    bool statsKnown(Index head, Index i0, Index rows) const;

    Matrix<T> m_query; // n_q × h·d_k
    Matrix<T> m_key; // n_k × h·d_k
    Index m_heads = 1;
    Index m_dK = 1;
    AttentionMask m_mask;
    double m_scaleValue = 1; // effectiveScale(d_k, options)
    T m_scale = 1;
    T m_fill = 0;
    bool m_foldScale = false; // exp(s·scale − shift) on raw scores (no mask, or causal with −inf)
    bool m_causalSkip = false; // pure causal mask with −inf fill: keys past the limit skipped
    std::vector<float> m_packedKeys; // AVX-512 float32: each head's Kᵀ packed (avx512.h)
    Index m_packedStride = 0; // floats per head in m_packedKeys
    std::vector<RowStats> m_stats; // per softmax head (streamHeads())
    std::vector<T> m_sinkLogits; // h, or empty
    std::vector<double> m_alibiSlopes; // h, or empty
    bool m_alibiCausal = false;
    std::vector<T> m_lambda; // h, or empty
    MatrixD m_gate; // n_q × h, or empty
    bool m_differential = false;
    bool m_variants = false;
};

extern template class TileEngine<float>;
extern template class TileEngine<double>;

} // namespace attn
