#pragma once
// The seeded inputs of the window's computation (core/engine/sessionengine.h): the layer's
// parameters and the query-side and encoder inputs drawn from one generator, typed tokens'
// embeddings and positional encoding. Qt-free; tokens are UTF-8 std::string.

#include "core/attention/multihead.h"
#include "core/attention/variants.h"
#include "core/base/types.h"
#include "core/engine/engineparameters.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace attn {

/// FNV-1a 64-bit hash of the token's UTF-8 bytes (offset basis 14695981039346656037, prime
/// 1099511628211; Fowler, Noll, Vo). The same on every platform and build (unlike std::hash or
/// qHash, which may be seeded or differ between builds).
std::uint64_t tokenHash(std::string_view utf8);

/// The input vector of a typed token (UTF-8), d_model standard normals: in NumPy
/// `np.random.default_rng(seed + 2**64 * tokenHash(token)).standard_normal(d_model)` (the seed
/// words are [seed low 32 bits, seed high, hash low, hash high]). It depends on the token's text
/// and the seed only, never on the token's position: equal tokens get equal vectors, and with
/// positional encoding off reordering the words permutes the rows of X and, with them, the
/// rows and columns of the attention weights (the E5 lesson). Throws InvalidArgument for
/// dModel < 0.
VectorD tokenEmbedding(std::string_view utf8, std::uint64_t seed, Index dModel);

/// A layer and its inputs, as the window computes them.
template<typename T> struct SessionInputs
{
    MultiheadAttention<T> layer; ///< d_model, h; initXavier, or initTorchDefault (Torch)
    MatrixD query; ///< X: n_q × d_model (decoder / query side), float64 as drawn
    MatrixD encoder; ///< E: n_k × d_model for encoder–decoder attention, else 0 × 0
    /// Differential attention (p.differential): the layer whose W_Q, W_K give Q₂ = X W_Q₂ᵀ and
    /// K₂ (its W_V and W_O are drawn but unused), drawn after the inputs.
    std::optional<MultiheadAttention<T>> secondLayer;
    /// The head-wise output gate (p.outputGate): w_θ, d_model × h, float64 as drawn; head u's
    /// gate logit of query row i is x_i·w_θ[:, u] + p.gateBias. Else 0 × 0.
    MatrixD gateWeights;
    /// Multi-head latent attention (p.latent): its projections (d_c = p.latentDim, d_h = d_k,
    /// d_v = d_k, d_r = p.latentRopeDim, RoPE base p.ropeBase).
    std::optional<MlaWeights<T>> latent;
};

/// Draw order (one generator seeded with p.seed): MultiheadAttention::initXavier, then the
/// query-side input X (n × d_model) then, for encoder–decoder attention, the encoder input
/// (n_k × d_model), all standard normal in C order, then with p.differential a second layer
/// (initXavier, or initTorchDefault with Torch) from the same generator, then with p.latent the
/// MLA projections W_DKV (d_model × d_c), W_UK (d_c × h·d_k), W_UV (d_c × h·d_k), W_KR (d_model ×
/// d_r), W_Q (d_model × h·d_k), W_QR (d_model × h·d_r), in this order, then with p.outputGate the
/// gate's w_θ (d_model × h) — last, so the gate never changes the weights it scales — each a
/// standard normal matrix (rows × cols, C order) divided by √rows (torch: torch.randn(rows, cols)
/// in T, then the same division in float64). With
/// p.generator Torch the generator is torch.manual_seed(p.seed)'s (core/random/torchrandom.h):
/// nn.MultiheadAttention's default initialisation (initTorchDefault) in T, then torch.randn(1, n,
/// d_model) and, for encoder–decoder attention, torch.randn(1, n_k, d_model), drawn in T (float32
/// draws are torch's float32 randn, widened exactly to float64 here). Typed tokens (p.tokens): row
/// i of X is then replaced by tokenEmbedding(tokens[i]) for every i < n with a token
/// (cross-attention: row j of the encoder input by tokenEmbedding(tokens[n + j])); rows without a
/// token keep their draw. Positional encoding (sinusoidalEncoding, positions 0…) is added to each
/// input when p.positional. Float32 computations round these float64 inputs (like NumPy's
/// `rng.standard_normal(shape).astype(np.float32)`). Throws InvalidArgument (p.check()).
template<typename T> SessionInputs<T> sessionInputs(const EngineParameters &p);

} // namespace attn
