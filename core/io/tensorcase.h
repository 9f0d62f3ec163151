#pragma once
// A user's tensors read from NumPy files, shared by `attnlab compute` and
// the window's File → Open tensors…:
//
// 1. An attention problem ("tensor case"), arrays named as in torch.nn.MultiheadAttention's
//    forward() arguments and state_dict:
//      query n_q × d_model, key n_k × d_model, value n_k × d_v          (required)
//      in_proj_weight 3·d_model × d_model ([W_Q; W_K; W_V]), in_proj_bias 3·d_model,
//      out_proj_weight d_model × d_model, out_proj_bias d_model, num_heads (0-d integer)
//        → multi-head attention (Vaswani et al. 2017, §3.2.2; matches
//          torch.nn.MultiheadAttention(batch_first=True)); d_v = d_model; a missing bias is zero
//          (bias=False); any of these five arrays makes the case multi-head.
//      q_proj_weight d_model × d_model, k_proj_weight d_model × kdim, v_proj_weight
//      d_model × vdim instead of in_proj_weight → the same with separate projections, as
//        torch.nn.MultiheadAttention(kdim=…, vdim=…) holds them: key n_k × kdim,
//        value n_k × vdim (in_proj_bias still 3·d_model).
//      num_heads (and optionally num_kv_heads) without any of the four parameter arrays
//        → already-projected heads (grouped-query attention, core/attention/groupedattention.h):
//          query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v, g = num_kv_heads (default h);
//          head i is columns i·d_k … (i+1)·d_k − 1.
//      none of them → plain scaled dot-product attention (§3.2.1), one head, d_k = d_model.
//      For already-projected heads (and plain attention, one head) the 2025 variants
//      (core/attention/variants.h):
//        sink_logits (h, or one number for every head): learned sinks, finite or −inf;
//        query2, key2 (shaped as query and key) with lambda (one number or h): differential
//          attention, weights A₁ − λA₂; not with sink_logits;
//        gate_logits n_q × h·d_v: each head's output times σ(g), before any output projection.
//      attn_mask n_q × n_k: bool (meaning by MaskConvention) or additive float (finite or −inf)
//      key_padding_mask n_k (or 1 × n_k) bool (True = padding under MaskConvention::Masked)
// 2. Attention weights computed elsewhere (e.g. dumped from a real model): one array shaped
//    (n_q × n_k), (h × n_q × n_k) or (layers × h × n_q × n_k), shown without recomputation.
//
// Errors throw InvalidArgument whose message names the array, its dtype/shape and what was
// expected (NpyError comes through from reading the file).

#include "core/attention/mask.h"
#include "core/attention/multihead.h"
#include "core/attention/variants.h"
#include "core/base/types.h"
#include "core/io/npy.h"

#include <string>
#include <utility>
#include <vector>

namespace attn {

/// Meaning of True in boolean attn_mask / key_padding_mask arrays.
enum class MaskConvention {
    Masked, ///< True = masked out (torch.nn.MultiheadAttention's attn_mask, key_padding_mask)
    Allowed, ///< True = may attend (torch.nn.functional.scaled_dot_product_attention)
};

/// Named arrays as read by readNpz (names without ".npy").
using NamedArrays = std::vector<std::pair<std::string, NpyArray>>;

/// The attention problem of a tensor file, converted to T and validated.
template<typename T> struct TensorCase
{
    Matrix<T> query; ///< n_q × d_model
    Matrix<T> key; ///< n_k × d_model (n_k × kdim with separate projections)
    Matrix<T> value; ///< n_k × d_v (d_model when multihead; vdim with separate projections)
    bool multihead = false; ///< PyTorch-named parameters were given
    /// q/k/v_proj_weight instead of in_proj_weight (torch's kdim/vdim layout); multihead too.
    bool separateProjections = false;
    /// num_heads without projection parameters: query, key, value are projected heads.
    bool projectedHeads = false;
    Index heads = 1; ///< num_heads (1 for plain attention)
    Index kvHeads = 1; ///< num_kv_heads g for projected heads (default h); else = heads
    bool bias = false; ///< in_proj_bias or out_proj_bias present
    Matrix<T> inProjWeight; ///< 3·d_model × d_model (multihead, not separate)
    Matrix<T> qProjWeight; ///< d_model × d_model (separate projections only)
    Matrix<T> kProjWeight; ///< d_model × kdim (separate projections only)
    Matrix<T> vProjWeight; ///< d_model × vdim (separate projections only)
    Vector<T> inProjBias; ///< 3·d_model, zeros when absent (multihead only)
    Matrix<T> outProjWeight; ///< d_model × d_model (multihead only)
    Vector<T> outProjBias; ///< d_model, zeros when absent (multihead only)
    /// Learned sinks, differential attention, the output gate (projected heads and plain
    /// attention only; empty when the file has none of their arrays).
    GroupedVariants<T> variants;
    /// attn_mask | key_padding_mask (empty when neither is given); n_q × n_k.
    AttentionMask mask;
    /// One entry per mask given, e.g. "attn_mask bool (True = masked out)".
    std::vector<std::string> maskDescription;
    /// Arrays present in the file that the case does not use (e.g. expected_weights).
    std::vector<std::string> unusedArrays;

    Index queryCount() const { return query.rows(); }
    Index keyCount() const { return key.rows(); }
    Index dModel() const { return query.cols(); }
    Index headDim() const { return dModel() / heads; }
    /// "query (6, 16), key (6, 16), value (6, 16)" style summary of the shapes.
    std::string shapeSummary() const;
    /// The layer with this case's parameters. Throws InvalidArgument unless multihead.
    MultiheadAttention<T> layer() const;
};

/// True when `arrays` hold query, key and value (a tensor case rather than weights).
bool hasTensorCase(const NamedArrays &arrays);

/// B when query, key and value carry a leading batch axis, as PyTorch saves the inputs of
/// torch.nn.MultiheadAttention(batch_first=True): query (B, n_q, d_model), key (B, n_k, …),
/// value (B, n_k, d_v), all 3-d with the same B ≥ 1; 0 when they are 2-d (or absent). Throws
/// InvalidArgument naming the shapes when some are 3-d and the others not, or the B differ.
Index tensorBatchSize(const NamedArrays &arrays);

/// Item `batch` (0 … B − 1) of batched inputs (tensorBatchSize > 0): query, key and value become
/// their slices [batch] (2-d), key_padding_mask (B, n_k) its row [batch], attn_mask (B, n_q, n_k)
/// its slice [batch] (a 2-d attn_mask is shared by every item); the other arrays are kept. Without
/// a batch axis the arrays come back unchanged when batch = 0. Throws InvalidArgument naming B
/// and the valid range when batch is outside [0, B − 1] (or ≠ 0 without a batch axis), and for a
/// mask whose leading axis is not B (attn_mask of PyTorch's (B·num_heads, n_q, n_k) form
/// included: save one head's mask per item).
NamedArrays tensorBatchItem(const NamedArrays &arrays, Index batch);

/// Builds and validates a case from named arrays; `source` (the file name) appears in "missing
/// array" messages. Checks, in this order: query, key, value present, 2-d, numeric (not bool)
/// and finite in T, no axis of them 0 (n_q, n_k, d_model, d_v ≥ 1); key has d_model columns; value
/// has n_k rows (and d_model columns for multi-head); masks shaped n_q × n_k / n_k with 0/1
/// booleans or finite/−inf floats; for multi-head in_proj_weight, out_proj_weight and num_heads
/// present, shapes (3·d_model, d_model) and (d_model, d_model) (or q/k/v_proj_weight (d_model,
/// d_model), (d_model, kdim), (d_model, vdim), all three, without in_proj_weight, kdim and vdim the
/// widths of key and value), biases of length 3·d_model and d_model, num_heads a 0-d integer in [1,
/// d_model] dividing d_model (checked on the value before it is cast); for projected heads
/// num_heads dividing the query's columns, num_kv_heads a 0-d integer dividing num_heads, key g·d_k
/// columns and value columns divisible by g; the variants' arrays (see the file comment) shaped
/// as stated, finite (sink logits may be −inf), query2/key2/lambda all or none, not with
/// sink_logits, and none of them with multi-head parameters. Throws InvalidArgument naming the
/// array and the shapes.
template<typename T>
TensorCase<T> tensorCaseFromArrays(const NamedArrays &arrays, const std::string &source,
                                   MaskConvention convention = MaskConvention::Masked);

/// Reads an .npz (readNpz) and builds its case. Throws NpyError (file problems) or
/// InvalidArgument (see tensorCaseFromArrays).
template<typename T>
TensorCase<T> loadTensorCase(const std::string &path,
                             MaskConvention convention = MaskConvention::Masked);

/// Attention weights computed elsewhere: layers × heads matrices n_q × n_k, stored by layer
/// then head (as the array's C order).
struct WeightStack
{
    Index layers = 1;
    Index heads = 1;
    Index queries = 0; ///< n_q
    Index keys = 0; ///< n_k
    NpyType type = NpyType::Float64; ///< dtype of the array the weights came from
    std::vector<MatrixD> weights; ///< layers·heads matrices n_q × n_k, row-major

    /// Weights of (layer, head), n_q × n_k. Throws InvalidArgument when out of range.
    const MatrixD &at(Index layer, Index head) const;
};

/// Interprets `array` as weights: 2-d (n_q × n_k) is one layer with one head, 3-d is
/// (h × n_q × n_k), 4-d is (layers × h × n_q × n_k). Values are kept as they are — NaN/Inf and
/// rows that do not sum to 1 included (they are reported by the viewer, never hidden).
/// Throws InvalidArgument naming `what` and the shape for other ranks, zero-sized axes or bool
/// arrays.
WeightStack weightStackFromArray(const NpyArray &array, const std::string &what);

/// Names tried, in order, for the weights of an .npz with several arrays.
inline constexpr const char *weightArrayNames[]
    = {"weights", "attn_weights", "attention", "attentions"};

/// Rows of a weight stack checked against Σ_j w_ij = 1.
struct RowSumCheck
{
    Index rows = 0; ///< layers · heads · n_q rows checked
    Index badRows = 0; ///< rows with |Σ_j w_ij − 1| > tolerance
    Index negativeRows = 0; ///< rows with a negative weight
    double worstError = 0; ///< the largest |Σ_j w_ij − 1|
    Index worstLayer = 0, worstHead = 0, worstRow = 0; ///< where worstError is
    double tolerance = 0;
    bool ok() const { return badRows == 0 && negativeRows == 0; }
    /// "all 720 rows sum to 1 within 1e-06 (worst |Σw − 1| = 2.2e-16)" or how many do not,
    /// with the worst one's layer, head and row.
    std::string text() const;
};

/// The tolerance of a row sum for weights over `keys` keys stored as `type`: 1e-6, plus
/// 4·n_k·2⁻²⁴ for float32 (the rounding of each weight and of the softmax's sum).
double rowSumTolerance(NpyType type, Index keys);

/// Every row of `stack` against Σ_j w_ij = 1 within `tolerance` (all values must be finite).
RowSumCheck checkRowSums(const WeightStack &stack, double tolerance);

/// The member of a model's attention stack (see attentionStackFromArrays).
inline constexpr const char *attentionStackArray = "attentions";
/// The member of its token strings.
inline constexpr const char *attentionTokensArray = "tokens";

/// A Hugging Face model's attention weights, as `outputs.attentions` (one (B, H, n_q, n_k) tensor
/// per layer, `output_attentions=True`) stacked with numpy.stack, one batch item chosen.
struct AttentionStack
{
    WeightStack weights; ///< layers × heads matrices n_q × n_k
    std::vector<std::string> tokens; ///< n_q labels (n_q + n_k when n_q ≠ n_k), or none
    Index batchCount = 0; ///< B of a 5-d array, 0 for a 4-d one
    Index batch = 0; ///< the item taken (0 … B − 1)
    RowSumCheck rowSums; ///< every row against Σ_j w_ij = 1
};

/// Smallest and largest finite weight of `stack` ({0, 0} when none is finite): the range of the
/// model view's one colour scale.
std::pair<double, double> finiteWeightRange(const WeightStack &stack);

/// Largest stack read: 1 GiB of float64 weights (stored plus as read).
inline constexpr std::uint64_t kDefaultStackBudgetBytes = std::uint64_t(1) << 30;

/// Checks what the .npy headers of an attention stack's .npz declare, before any data is read:
/// `attentions` present, 4-d (layers, heads, n_q, n_k) or 5-d (layers, B, heads, n_q, n_k),
/// numeric, no empty axis, at most 4096 matrices (layers · heads); its weights (stored plus
/// 8 bytes a value once read, and one item's layers · heads · n_q · n_k float64 matrices) within
/// `budgetBytes`; `tokens`, when present, a 1-d unicode string array. Throws InvalidArgument
/// naming `source`, the array, its declared shape and the limit.
void checkAttentionStackHeaders(const std::vector<std::pair<std::string, NpyHeader>> &headers,
                                std::uint64_t budgetBytes, const std::string &source);

/// The attention stack in `arrays` (`attentions`) with its tokens (`tokens` in `strings`,
/// optional), batch item `batch` of a 5-d array (0 without a batch axis). Refuses (InvalidArgument
/// naming the array and the problem): another rank, bool weights, an empty axis, NaN/±Inf (the
/// first one's layer, head, row and key named), `batch` outside [0, B − 1], tokens that are not a
/// 1-d string array or whose count is not n_q (self-attention, n_q = n_k) or n_q + n_k (queries,
/// then keys). Rows that do not sum to 1 are kept and counted in rowSums (tolerance
/// rowSumTolerance), never hidden.
AttentionStack attentionStackFromArrays(const NamedArrays &arrays, const NpzStrings &strings,
                                        Index batch = 0);

/// B of the `attentions` array: its axis 1 when 5-d, else 0 (also when absent).
Index attentionStackBatchSize(const NamedArrays &arrays);

/// Reads an attention stack .npz: headers first (checkAttentionStackHeaders with `budgetBytes`),
/// then the arrays. Throws NpyError (file problems) or InvalidArgument.
AttentionStack loadAttentionStack(const std::string &path, Index batch = 0,
                                  std::uint64_t budgetBytes = kDefaultStackBudgetBytes);

/// The member holding weights: the first of weightArrayNames present, else the only array of
/// the file; empty when the choice is ambiguous (several arrays, none of those names) or the
/// file holds nothing.
std::string defaultWeightArray(const NamedArrays &arrays);

/// "float64 (6, 16)" for messages.
std::string describeArray(const NpyArray &array);

} // namespace attn
