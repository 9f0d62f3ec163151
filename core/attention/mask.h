#pragma once
// Attention masks (Vaswani et al. 2017, §3.2.3: masked scores are set to -inf before softmax).
//
// A mask never stores a bare bool whose meaning must be guessed: the named constructors say
// whether `true` means "masked out" (torch.nn.MultiheadAttention's attn_mask / key_padding_mask)
// or "may attend" (torch.nn.functional.scaled_dot_product_attention's boolean attn_mask).
// Components are kept implicitly (causal alignment, padding vector) so that a causal mask for
// n = 16 384 costs nothing; combining masks is a boolean OR of "masked", never a sum of
// sentinels. An additive float mask is added literally to the scaled scores.

#include "core/base/types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

/// Why a cell is masked; bits may combine.
enum MaskStateBits : std::uint8_t {
    MaskAllowed = 0,
    MaskCausal = 1, ///< key j lies in the future of query i
    MaskPadding = 2, ///< key j is a padding key
    MaskCustom = 4, ///< masked by a user-given boolean mask
    MaskWindow = 8, ///< key j lies before query i's sliding window and is not a sink
};

/// How maskStateText words a state.
enum class MaskTextStyle {
    /// For people (tooltips, legends, captions): "allowed", "causal-masked",
    /// "causal + custom-masked", "padding + window-masked".
    Label,
    /// For data files (the mask column of a CSV export): "allowed", "causal", "causal+custom",
    /// "padding+window".
    Field,
    /// The mask's kinds, for a title: "none", "causal", "causal + custom", "padding + window".
    Name,
};

/// The name of a cell's MaskStateBits: "allowed" for 0 ("none" for Name), else the components in
/// the order causal, padding, custom, window (outside the sliding window), joined as `style` says.
/// Bits above MaskWindow are ignored. The one wording of mask states (window, figures, exports).
std::string maskStateText(std::uint8_t state, MaskTextStyle style = MaskTextStyle::Label);

/// Alignment of a causal mask when n_q != n_k.
/// TopLeft: query i may attend keys j <= i (PyTorch's is_causal / torch.tril(ones(n_q, n_k))).
/// BottomRight: query i may attend keys j <= i + (n_k - n_q) (the last query sees every key;
/// FlashAttention 2's convention for decoding with a cache).
enum class CausalAlignment { TopLeft, BottomRight };

class AttentionMask
{
public:
    /// No mask (every key allowed); applies to any shape.
    AttentionMask() = default;

    /// Causal mask for n_q × n_k.
    static AttentionMask causal(Index nQ, Index nK,
                                CausalAlignment alignment = CausalAlignment::TopLeft);
    /// Key padding mask: keyIsPadding[j] != 0 means key j is padding (masked for every query),
    /// as torch.nn.MultiheadAttention's key_padding_mask with True = ignore.
    static AttentionMask keyPadding(Index nQ, const std::vector<std::uint8_t> &keyIsPadding);
    /// Key padding mask where the last `count` of nK keys are padding. Throws InvalidArgument if
    /// count < 0 or count > nK.
    static AttentionMask keyPaddingLast(Index nQ, Index nK, Index count);
    /// Sliding-window causal mask (Beltagy et al. 2020, Longformer §3.1; Mistral 7B's
    /// sliding_window): query i sees the w keys i − w < j ≤ i (with BottomRight alignment the
    /// window ends at the causal limit instead: i + n_k − n_q − w < j ≤ i + n_k − n_q). Keys
    /// beyond i are MaskCausal, keys before the window MaskWindow. The first `sinks` keys are
    /// attention sinks (Xiao et al. 2023, StreamingLLM §3.2): never masked by the window (the
    /// causal and padding masks still apply to them). Libraries disagree on w vs w + 1 visible
    /// keys; here a query sees exactly w keys of its window (plus the sinks before it). The
    /// window's end is the causal limit clamped to the keys: with n_q > n_k (top-left), every
    /// query i ≥ n_k sees the last w keys n_k − w ≤ j < n_k, as the causal mask lets it see all.
    /// Throws InvalidArgument for n_q or n_k < 0, w < 1 or sinks < 0.
    static AttentionMask slidingWindow(Index nQ, Index nK, Index window, Index sinks = 0,
                                       CausalAlignment alignment = CausalAlignment::TopLeft);
    /// Boolean n_q × n_k mask where 1 means "masked out" (nn.MultiheadAttention attn_mask).
    static AttentionMask fromMasked(const MatrixB &masked);
    /// Boolean n_q × n_k mask where 1 means "may attend" (F.scaled_dot_product_attention).
    static AttentionMask fromAllowed(const MatrixB &allowed);
    /// Float n_q × n_k mask added literally to the scaled scores; entries of -inf mask a cell
    /// (reported as MaskCustom). Throws NonFiniteInput on NaN or +inf entries.
    static AttentionMask additive(const MatrixD &add);

    /// Boolean OR of the "masked" cells of both masks; additive terms are summed.
    /// Throws InvalidArgument when both have fixed shapes and the shapes differ, or when both
    /// have sliding windows of different widths or sink counts.
    AttentionMask operator|(const AttentionMask &other) const;

    bool empty() const; ///< true when no component is set
    bool isPureCausal() const; ///< only a causal component (the streaming kernel skips tiles)
    std::optional<CausalAlignment> causalAlignment() const;

    /// Shape this mask was built for (n_q, n_k); 0 × 0 when it applies to any shape.
    Index rows() const { return m_rows; }
    Index cols() const { return m_cols; }
    /// Throws InvalidArgument naming both shapes unless the mask applies to nQ × nK.
    void checkShape(Index nQ, Index nK) const;

    /// MaskStateBits of cell (i, j); 0 means allowed.
    std::uint8_t state(Index i, Index j) const;
    bool isMasked(Index i, Index j) const { return state(i, j) != MaskAllowed; }
    /// Every cell's state as an nQ × nK byte matrix (for display).
    MatrixB stateMatrix(Index nQ, Index nK) const;
    /// Additive term (n_q × n_k) or nullptr.
    const MatrixD *additiveTerm() const { return m_additive ? &*m_additive : nullptr; }
    /// Custom boolean component (n_q × n_k, 1 = masked out) or nullptr.
    const MatrixB *customMasked() const { return m_custom ? &*m_custom : nullptr; }
    /// Key padding component: n_k flags (1 = padding), or empty when there is none.
    const std::vector<std::uint8_t> &keyPaddingFlags() const { return m_keyPadding; }
    bool hasCausal() const { return m_causal.has_value(); }
    /// Sliding window width w, or 0 when there is no window.
    Index window() const { return m_window; }
    /// Number of attention sinks (the first keys the window never masks); 0 without a window.
    Index sinks() const { return m_sinks; }
    /// With a window: query i's window starts at key windowStart(i, nK) (keys before it, other
    /// than sinks, are MaskWindow); 0 without a window.
    Index windowStart(Index i, Index nK) const;

    /// For key j in [0, nK): the first key index that query i may not attend because of the
    /// causal component, i.e. query i may attend keys < causalLimit(i) (nK when not causal).
    Index causalLimit(Index i, Index nK) const;

private:
    Index m_rows = 0, m_cols = 0;
    std::optional<CausalAlignment> m_causal;
    Index m_window = 0; // 0 = no sliding window; a window always comes with m_causal
    Index m_sinks = 0;
    std::vector<std::uint8_t> m_keyPadding; // size n_k or empty
    std::optional<MatrixB> m_custom; // 1 = masked
    std::optional<MatrixD> m_additive;
};

} // namespace attn
