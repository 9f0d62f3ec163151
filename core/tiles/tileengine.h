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
    double rawScore = 0; ///< q_i · k_j
    double scaledScore = 0; ///< raw · scale + additive term; the fill value where masked
    double weight = 0; ///< softmax weight (mean over heads for kHeadMean)
    std::uint8_t maskState = MaskAllowed; ///< MaskStateBits of (i, j)
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

    Index queries() const { return m_query.rows(); }
    Index keys() const { return m_key.rows(); }
    Index heads() const { return m_heads; }
    Index headDim() const { return m_dK; }
    double scale() const { return m_scaleValue; }
    const AttentionMask &mask() const { return m_mask; }

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
    /// row's largest weight is exp(0) / Σ); for kHeadMean the largest of the heads' (an upper
    /// bound of the mean's). 0 when every row is fully masked. Throws InvalidArgument when the
    /// head is out of range or rowStatisticsComplete(head) is false.
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
    static std::size_t heldBytes(Index nQ, Index nK, Index heads, Index dK,
                                 std::size_t elementBytes);
    /// Bytes of one pooled image of width × height pixels (values and mask states).
    static std::size_t imageBytes(Index width, Index height, std::size_t elementBytes);

    /// Query rows per block for n_k keys: about 512 KiB of scores per block, 8 … 256 rows on the
    /// AVX-512 float32 code, 64 … 256 on Eigen's GEMM (which repacks the keys on every call).
    static Index blockRows(Index nK, std::size_t elementBytes);

private:
    struct RowStats
    {
        std::vector<T> shift; ///< n_q: the row's max scaled score (−inf: fully masked)
        std::vector<T> inverseSum; ///< n_q: 1 / Σ_j exp(x_j − shift)
        std::vector<std::uint8_t> known; ///< n_q: 1 once computed
    };
    struct Scratch;

    void checkHead(Index head, const char *who) const;
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
    std::vector<RowStats> m_stats; // per head
};

extern template class TileEngine<float>;
extern template class TileEngine<double>;

} // namespace attn
