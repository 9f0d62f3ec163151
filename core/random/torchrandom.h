#pragma once
// PyTorch-compatible random numbers: reproduces, bit for bit, what a PyTorch 1.13 script gets on
// the CPU after torch.manual_seed(seed) (or torch.Generator().manual_seed(seed)):
//   the mt19937 stream and its random() / random64() draws
//     (aten/src/ATen/core/MT19937RNGEngine.h, aten/src/ATen/CPUGeneratorImpl.cpp),
//   uniform doubles and floats (aten/src/ATen/core/TransformationHelper.h uniform_real,
//     aten/src/ATen/core/DistributionsHelper.h uniform_real_distribution),
//   torch.randn in float64 and float32: the element-wise Box–Muller path with its cached second
//     normal below 16 elements, the 16-wide path with its tail rule from 16 elements on, and the
//     AVX2 float32 kernel (aten/src/ATen/native/cpu/DistributionTemplates.h normal_kernel,
//     normal_fill, normal_fill_16_AVX2; aten/src/ATen/native/cpu/avx_mathfun.h log256_ps,
//     sincos256_ps; DistributionsHelper.h normal_distribution),
//   Tensor.uniform_ (DistributionTemplates.h uniform_kernel),
//   torch.randperm on the CPU (aten/src/ATen/native/TensorFactories.cpp randperm_cpu),
//   torch.nn.MultiheadAttention's default initialisation (torch/nn/modules/activation.py
//     MultiheadAttention._reset_parameters, torch/nn/modules/linear.py Linear.reset_parameters,
//     torch/nn/init.py kaiming_uniform_, xavier_uniform_).
// Arrays are filled in C (row-major) order, as torch fills a fresh contiguous tensor.
// tests/core/tst_torchrandom.cpp checks every function bitwise against the fixtures of
// tests/reference/make_torch_random_fixtures.py.

#include "core/base/types.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace attn {

template<typename T> class MultiheadAttention;

/// Which library's random streams a seeded experiment or session reproduces.
enum class RandomSource {
    NumPy, ///< numpy.random.default_rng(seed) (core/random/random.h)
    Torch, ///< torch.manual_seed(seed) on the CPU (this file)
};

/// "numpy" or "torch".
const char *randomSourceName(RandomSource source);
/// Parses "numpy" or "torch" (exact, lower case). Throws InvalidArgument naming the text and
/// the two accepted names.
RandomSource parseRandomSource(std::string_view name);

/// The CPU kernel set ("capability") torch dispatched to. Two places depend on it:
/// Tensor.uniform_ computes x·(to − from) + from with one rounding (fused multiply-add) in the
/// AVX2 and AVX-512 builds and with two in the default build, and float32 torch.randn of 16 or
/// more elements uses the AVX2 vector kernel (avx_mathfun.h) or the C library's logf/cosf/sinf.
/// torch's normal kernel has no AVX-512 variant: an AVX-512 CPU runs the AVX2 one, so Avx2
/// stands for both. The C++ code emulates either set on any CPU.
enum class TorchCpuCapability {
    Default, ///< ATEN_CPU_CAPABILITY=default, or a CPU without AVX2 + FMA
    Avx2, ///< torch's pick on CPUs with AVX2 and FMA (also with AVX-512)
};

/// The capability torch would pick on this CPU (AVX2 and FMA present → Avx2), ignoring the
/// ATEN_CPU_CAPABILITY environment variable.
TorchCpuCapability torchCpuCapabilityOfThisCpu();

/// torch's CPU generator (at::CPUGeneratorImpl): an mt19937 engine plus the cached second
/// normal of the element-wise Box–Muller path.
///
/// Every method consumes the stream exactly as the torch call named in its comment, so a
/// sequence of calls here equals the same sequence of calls in torch.
class TorchGenerator
{
public:
    /// torch.manual_seed(seed): only the low 32 bits of the seed are used (2^32 + 5 seeds as 5).
    /// `capability` selects the kernel set torch ran with (see TorchCpuCapability); the default,
    /// Avx2, is what torch picks on current x86-64 CPUs.
    explicit TorchGenerator(std::uint64_t seed,
                            TorchCpuCapability capability = TorchCpuCapability::Avx2);

    /// torch.manual_seed(seed) / Generator.manual_seed(seed): reseeds and clears the cached
    /// normal.
    void manualSeed(std::uint64_t seed);
    TorchCpuCapability capability() const { return m_capability; }

    std::uint32_t random(); ///< CPUGeneratorImpl::random(): one tempered mt19937 output
    /// CPUGeneratorImpl::random64(): two outputs, the first one is the high word.
    std::uint64_t random64();
    /// uniform_real_distribution<double>(0, 1): the low 53 bits of random64() · 2^−53, in [0, 1).
    double uniformDouble();
    /// uniform_real_distribution<float>(0, 1): the low 24 bits of random() · 2^−24, in [0, 1).
    float uniformFloat();

    /// torch.randn(count, dtype=torch.float64) into `out` (C order): count < 16 draws normals
    /// one by one with the cached second value, count ≥ 16 fills 16 at a time and redraws the
    /// last 16 when count is not a multiple of 16 (the cache is neither used nor changed then).
    void randn(double *out, std::size_t count);
    /// torch.randn(count, dtype=torch.float32): below 16 elements the float64 path (and its
    /// cache) rounded to float; from 16 on float32 uniforms and the capability's kernel.
    void randn(float *out, std::size_t count);
    /// torch.randn(rows, cols, dtype=torch.float64) (also randn(1, rows, cols)): rows × cols,
    /// row-major. Throws InvalidArgument for a negative size or more than 2^31 elements.
    MatrixD randnMatrix(Index rows, Index cols);
    /// As randnMatrix in float32.
    MatrixF randnMatrixFloat(Index rows, Index cols);

    /// Tensor.uniform_(from, to) of `count` float64 elements (C order): from and to as given,
    /// x = uniformDouble(), value x·(to − from) + from (one rounding under Avx2, two under
    /// Default). No checks: torch itself accepts from > to.
    void uniform(double *out, std::size_t count, double from, double to);
    /// Tensor.uniform_(from, to) of float32 elements: from and to rounded to float first, then
    /// as above in float arithmetic with uniformFloat().
    void uniform(float *out, std::size_t count, double from, double to);

    /// torch.randperm(n, generator=this) on the CPU: 0 … n−1 shuffled with one random() per
    /// step (n − 1 draws; none for n ≤ 1). Throws InvalidArgument if n < 0 or n > 2^30.
    std::vector<std::int64_t> randperm(std::int64_t n);

    /// The mt19937 state words (torch.get_rng_state()'s state array) and the position.
    const std::array<std::uint32_t, 624> &state() const { return m_state; }
    int left() const { return m_left; }
    std::uint32_t next() const { return m_next; }

private:
    friend class TorchNormalStream;
    void nextState();
    double normalDouble(); ///< at::normal_distribution<double>(0, 1) with the cache
    template<typename T> void fill16Libm(T *data) const;

    std::array<std::uint32_t, 624> m_state {};
    int m_left = 1;
    std::uint32_t m_next = 0;
    std::optional<double> m_nextDoubleNormal;
    TorchCpuCapability m_capability = TorchCpuCapability::Avx2;
};

/// torch.randn(count, dtype=torch.float64) read in pieces, for tensors too large to hold at once
/// (e.g. trials × keys × d_k keys): reading all `count` values in any split gives exactly what
/// TorchGenerator::randn(out, count) writes, and leaves the generator in the same state. The
/// stream draws from `rng` as it is read; nothing else may draw from `rng` until the stream is
/// read to its end. Holds 16 values.
class TorchNormalStream
{
public:
    TorchNormalStream(TorchGenerator &rng, std::size_t count);
    /// The next `n` values. Throws InvalidArgument when fewer than `n` values remain.
    void read(double *out, std::size_t n);
    std::size_t remaining() const { return m_count - m_position; }

private:
    void refill();
    TorchGenerator &m_rng;
    std::size_t m_count;
    std::size_t m_position = 0; ///< values handed out
    std::array<double, 16> m_block {};
    std::size_t m_blockStart = 0, m_blockEnd = 0; ///< stream positions m_block holds
};

/// The AVX2 float32 Box–Muller step of torch (normal_fill_16_AVX2 with avx_mathfun.h's
/// log256_ps and sincos256_ps), emulated in scalar IEEE float arithmetic with the fused
/// multiply-adds of the shipped binary. `data` holds 16 uniforms in [0, 1) and receives 16
/// standard normals: data[0..7] = r·cos θ, data[8..15] = r·sin θ, r = √(−2 ln(1 − data[j])),
/// θ = 2π·data[j+8]. Exposed for tests.
void torchNormalFill16Avx2(float *data);

/// torch.nn.MultiheadAttention(d_model, heads)'s default initialisation drawn from `rng`, in
/// torch's order: out_proj = Linear(d_model, d_model) is reset first (kaiming_uniform_(a = √5)
/// on out_proj_weight: bound √3·(√(2/(1 + a²))/√d_model), d_model² draws; then
/// uniform_(±1/√d_model) on out_proj_bias, d_model draws that are overwritten below), then
/// xavier_uniform_ on in_proj_weight (3·d_model × d_model, bound √3·√(2/(d_model + 3·d_model)),
/// 3·d_model² draws), and in_proj_bias = out_proj_bias = 0. The number of heads plays no part.
/// float64 layers use float64 draws (two mt19937 outputs each), float32 layers float32 ones.
/// Without bias the out_proj bias draws are skipped, as in torch (bias=False).
template<typename T> void initTorchDefault(MultiheadAttention<T> &layer, TorchGenerator &rng);

extern template void initTorchDefault<double>(MultiheadAttention<double> &, TorchGenerator &);
extern template void initTorchDefault<float>(MultiheadAttention<float> &, TorchGenerator &);

} // namespace attn
