// PyTorch-compatible random numbers (see torchrandom.h for the PyTorch sources followed).
// Compiled with -ffp-contract=off (core/CMakeLists.txt): every fused multiply-add below is
// written out with std::fma exactly where torch's shipped binary fuses one, and every other
// product and sum is rounded on its own.

#include "core/random/torchrandom.h"

#include "core/attention/multihead.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <string>

namespace attn {

namespace {

constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;
constexpr int kStateSize = 624;
constexpr int kShift = 397;

/// normal_fill / normal_fill_AVX2 work on blocks of this many values.
constexpr std::size_t kNormalBlock = 16;

// avx_mathfun.h constants (Cephes single precision).
constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kLogP0 = 7.0376836292E-2f;
constexpr float kLogP[8]
    = {-1.1514610310E-1f, 1.1676998740E-1f, -1.2420140846E-1f, 1.4249322787E-1f,
       -1.6668057665E-1f, 2.0000714765E-1f, -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f;
constexpr float kLogQ2 = 0.693359375f;
constexpr float kMinNormPos = 1.17549435e-38f; // bits 0x00800000
constexpr float kFourOverPi = 1.27323954473516f;
constexpr float kDp1 = -0.78515625f;
constexpr float kDp2 = -2.4187564849853515625e-4f;
constexpr float kDp3 = -3.77489497744594108e-8f;
constexpr float kSinP0 = -1.9515295891E-4f;
constexpr float kSinP1 = 8.3321608736E-3f;
constexpr float kSinP2 = -1.6666654611E-1f;
constexpr float kCosP0 = 2.443315711809948E-005f;
constexpr float kCosP1 = -1.388731625493765E-003f;
constexpr float kCosP2 = 4.166664568298827E-002f;

float flipSign(float v, std::uint32_t signBit)
{
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) ^ signBit);
}

/// avx_mathfun.h log256_ps for one lane.
float log256(float x)
{
    const bool invalid = x <= 0.0f; // _CMP_LE_OS: false for NaN
    x = std::fmax(x, kMinNormPos); // _mm256_max_ps(x, min_norm_pos): NaN x gives min_norm_pos
    std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const std::int32_t exponent = std::int32_t(bits >> 23) - 0x7f;
    bits = (bits & ~0x7f800000U) | std::bit_cast<std::uint32_t>(0.5f);
    x = std::bit_cast<float>(bits);
    float e = float(exponent) + 1.0f;
    const bool below = x < kSqrtHalf;
    const float tmp = below ? x : 0.0f;
    x = x - 1.0f;
    e = e - (below ? 1.0f : 0.0f);
    x = x + tmp;
    const float z = x * x;
    float y = kLogP0;
    for (const float p : kLogP)
        y = std::fma(y, x, p);
    y = y * x;
    y = std::fma(y, z, e * kLogQ1);
    y = std::fma(-z, 0.5f, y);
    float result = std::fma(e, kLogQ2, x + y);
    if (invalid)
        result = std::bit_cast<float>(0xffffffffU); // or-ed with the all-ones mask: NaN
    return result;
}

/// avx_mathfun.h sincos256_ps for one lane.
void sincos256(float theta, float *sinOut, float *cosOut)
{
    std::uint32_t signSin = std::bit_cast<std::uint32_t>(theta) & 0x80000000U;
    float x = std::fabs(theta);
    std::int32_t j = std::int32_t(x * kFourOverPi); // _mm256_cvttps_epi32: truncation
    j = (j + 1) & ~1;
    const float y = float(j);
    const std::uint32_t swapSin = std::uint32_t(j & 4) << 29;
    const bool poly = (j & 2) == 0;
    x = std::fma(y, kDp1, x);
    x = std::fma(y, kDp2, x);
    x = std::fma(y, kDp3, x);
    const std::uint32_t signCos = (~std::uint32_t(j - 2) & 4U) << 29;
    signSin ^= swapSin;
    const float z = x * x;
    float yc = std::fma(std::fma(kCosP0, z, kCosP1), z, kCosP2);
    yc = yc * z;
    yc = std::fma(yc, z, -(z * 0.5f));
    yc = yc + 1.0f;
    float ys = std::fma(std::fma(kSinP0, z, kSinP1), z, kSinP2);
    ys = ys * z;
    ys = std::fma(ys, x, x);
    const float s1 = poly ? ys : 0.0f;
    const float c1 = poly ? 0.0f : yc;
    *sinOut = flipSign(c1 + s1, signSin);
    *cosOut = flipSign((yc - c1) + (ys - s1), signCos);
}

std::size_t checkedCount(Index rows, Index cols)
{
    if (rows < 0 || cols < 0)
        throw InvalidArgument("torch.randn: negative size " + std::to_string(rows) + " x "
                              + std::to_string(cols));
    constexpr Index kMaxElements = Index(1) << 31;
    if (cols != 0 && rows > kMaxElements / cols)
        throw InvalidArgument("torch.randn: " + std::to_string(rows) + " x " + std::to_string(cols)
                              + " elements exceed 2^31");
    return std::size_t(rows) * std::size_t(cols);
}

} // namespace

const char *randomSourceName(RandomSource source)
{
    return source == RandomSource::Torch ? "torch" : "numpy";
}

RandomSource parseRandomSource(std::string_view name)
{
    if (name == "numpy")
        return RandomSource::NumPy;
    if (name == "torch")
        return RandomSource::Torch;
    throw InvalidArgument("generator must be numpy or torch, got '" + std::string(name) + "'");
}

TorchCpuCapability torchCpuCapabilityOfThisCpu()
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return TorchCpuCapability::Avx2;
#endif
    return TorchCpuCapability::Default;
}

TorchGenerator::TorchGenerator(std::uint64_t seed, TorchCpuCapability capability)
    : m_capability(capability)
{
    manualSeed(seed);
}

void TorchGenerator::manualSeed(std::uint64_t seed)
{
    // mt19937_engine::init_with_uint32: the seed is truncated to 32 bits.
    m_state[0] = std::uint32_t(seed & 0xffffffffU);
    for (int j = 1; j < kStateSize; ++j) {
        const std::uint32_t prev = m_state[std::size_t(j - 1)];
        m_state[std::size_t(j)] = 1812433253U * (prev ^ (prev >> 30)) + std::uint32_t(j);
    }
    m_left = 1;
    m_next = 0;
    m_nextDoubleNormal.reset();
}

void TorchGenerator::nextState()
{
    // The standard MT19937 twist in place, j ascending (mt19937_engine::next_state).
    for (int j = 0; j < kStateSize; ++j) {
        const std::uint32_t next = m_state[std::size_t((j + 1) % kStateSize)];
        const std::uint32_t y = (m_state[std::size_t(j)] & kUpperMask) | (next & kLowerMask);
        m_state[std::size_t(j)] = m_state[std::size_t((j + kShift) % kStateSize)] ^ (y >> 1)
            ^ ((next & 1U) ? kMatrixA : 0U);
    }
    m_left = kStateSize;
    m_next = 0;
}

std::uint32_t TorchGenerator::random()
{
    if (--m_left == 0)
        nextState();
    std::uint32_t y = m_state[m_next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

std::uint64_t TorchGenerator::random64()
{
    const std::uint64_t hi = random();
    const std::uint64_t lo = random();
    return (hi << 32) | lo;
}

double TorchGenerator::uniformDouble()
{
    constexpr std::uint64_t kMask = (std::uint64_t(1) << 53) - 1;
    constexpr double kDivisor = 1.0 / double(std::uint64_t(1) << 53);
    return double(random64() & kMask) * kDivisor;
}

float TorchGenerator::uniformFloat()
{
    constexpr std::uint32_t kMask = (std::uint32_t(1) << 24) - 1;
    constexpr float kDivisor = 1.0f / float(std::uint32_t(1) << 24);
    return float(random() & kMask) * kDivisor;
}

double TorchGenerator::normalDouble()
{
    // at::normal_distribution<double>(mean 0, std 1): value · std + mean, cached second value.
    if (m_nextDoubleNormal) {
        const double v = *m_nextDoubleNormal;
        m_nextDoubleNormal.reset();
        return v * 1.0 + 0.0;
    }
    const double u1 = uniformDouble();
    const double u2 = uniformDouble();
    const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
    const double theta = 2.0 * std::numbers::pi * u1;
    m_nextDoubleNormal = r * std::sin(theta);
    return r * std::cos(theta) * 1.0 + 0.0;
}

template<typename T> void TorchGenerator::fill16Libm(T *data) const
{
    // normal_fill_16: the libm Box–Muller step for 8 pairs (data[j], data[j + 8]).
    for (std::size_t j = 0; j < 8; ++j) {
        const T u1 = T(1) - data[j];
        const T u2 = data[j + 8];
        const T radius = std::sqrt(T(-2) * std::log(u1));
        const T theta = T(2.0 * std::numbers::pi * double(u2));
        data[j] = radius * std::cos(theta) * T(1) + T(0);
        data[j + 8] = radius * std::sin(theta) * T(1) + T(0);
    }
}

void torchNormalFill16Avx2(float *data)
{
    constexpr float kTwoPi = 6.28318530717958647692f; // bits 0x40c90fdb
    float radius[8], sinValue[8], cosValue[8];
    for (std::size_t j = 0; j < 8; ++j) {
        const float u1 = 1.0f - data[j];
        const float u2 = data[j + 8];
        radius[j] = std::sqrt(-2.0f * log256(u1));
        sincos256(kTwoPi * u2, &sinValue[j], &cosValue[j]);
    }
    for (std::size_t j = 0; j < 8; ++j) {
        // _mm256_fmadd_ps(radius · cos, std = 1, mean = 0)
        data[j] = std::fma(radius[j] * cosValue[j], 1.0f, 0.0f);
        data[j + 8] = std::fma(radius[j] * sinValue[j], 1.0f, 0.0f);
    }
}

void TorchGenerator::randn(double *out, std::size_t count)
{
    if (count < kNormalBlock) {
        for (std::size_t i = 0; i < count; ++i)
            out[i] = normalDouble();
        return;
    }
    // normal_fill: all uniforms first, then the Box–Muller step block by block; a partial last
    // block is redrawn as the last 16 values.
    for (std::size_t i = 0; i < count; ++i)
        out[i] = uniformDouble();
    for (std::size_t i = 0; i + kNormalBlock <= count; i += kNormalBlock)
        fill16Libm(out + i);
    if (count % kNormalBlock != 0) {
        double *tail = out + count - kNormalBlock;
        for (std::size_t k = 0; k < kNormalBlock; ++k)
            tail[k] = uniformDouble();
        fill16Libm(tail);
    }
}

void TorchGenerator::randn(float *out, std::size_t count)
{
    if (count < kNormalBlock) {
        // The element-wise path draws at::normal_distribution<double> and casts.
        for (std::size_t i = 0; i < count; ++i)
            out[i] = float(normalDouble());
        return;
    }
    const bool avx2 = m_capability == TorchCpuCapability::Avx2;
    const auto fill = [&](float *block) {
        if (avx2)
            torchNormalFill16Avx2(block);
        else
            fill16Libm(block);
    };
    // uniform_real_distribution<float>(0, 1): x · (1 − 0) + 0 = x under either capability.
    for (std::size_t i = 0; i < count; ++i)
        out[i] = uniformFloat();
    for (std::size_t i = 0; i + kNormalBlock <= count; i += kNormalBlock)
        fill(out + i);
    if (count % kNormalBlock != 0) {
        float *tail = out + count - kNormalBlock;
        for (std::size_t k = 0; k < kNormalBlock; ++k)
            tail[k] = uniformFloat();
        fill(tail);
    }
}

TorchNormalStream::TorchNormalStream(TorchGenerator &rng, std::size_t count)
    : m_rng(rng)
    , m_count(count)
{ }

void TorchNormalStream::refill()
{
    // Stream position m_position starts the next piece. Below 16 values: one by one from the
    // cached Box–Muller path. Else blocks of 16 in order; with a partial last block, the last
    // full block keeps only its first count % 16 values, the uniforms of the partial block are
    // drawn and dropped, and 16 new ones give the last 16 values (normal_fill's tail rule).
    if (m_count < kNormalBlock) {
        m_block[0] = m_rng.normalDouble();
        m_blockStart = m_position;
        m_blockEnd = m_position + 1;
        return;
    }
    const std::size_t full = m_count / kNormalBlock, tail = m_count % kNormalBlock;
    const std::size_t tailStart = m_count - kNormalBlock;
    if (tail != 0 && m_position >= full * kNormalBlock - (kNormalBlock - tail)) {
        for (std::size_t k = 0; k < tail; ++k)
            (void)m_rng.uniformDouble();
        for (std::size_t k = 0; k < kNormalBlock; ++k)
            m_block[k] = m_rng.uniformDouble();
        m_rng.fill16Libm(m_block.data());
        m_blockStart = tailStart;
        m_blockEnd = m_count;
        return;
    }
    for (std::size_t k = 0; k < kNormalBlock; ++k)
        m_block[k] = m_rng.uniformDouble();
    m_rng.fill16Libm(m_block.data());
    m_blockStart = m_position;
    m_blockEnd = m_position + kNormalBlock;
    if (tail != 0 && m_blockEnd > tailStart)
        m_blockEnd = tailStart; // the rest of the last full block is overwritten by the tail
}

void TorchNormalStream::read(double *out, std::size_t n)
{
    if (n > remaining())
        throw InvalidArgument("torch.randn stream: " + std::to_string(n) + " values asked, "
                              + std::to_string(remaining()) + " left");
    for (std::size_t i = 0; i < n; ++i) {
        if (m_position >= m_blockEnd)
            refill();
        out[i] = m_block[m_position - m_blockStart];
        ++m_position;
    }
}

MatrixD TorchGenerator::randnMatrix(Index rows, Index cols)
{
    const std::size_t count = checkedCount(rows, cols);
    MatrixD m(rows, cols);
    randn(m.data(), count);
    return m;
}

MatrixF TorchGenerator::randnMatrixFloat(Index rows, Index cols)
{
    const std::size_t count = checkedCount(rows, cols);
    MatrixF m(rows, cols);
    randn(m.data(), count);
    return m;
}

void TorchGenerator::uniform(double *out, std::size_t count, double from, double to)
{
    const double width = to - from;
    if (m_capability == TorchCpuCapability::Avx2) {
        for (std::size_t i = 0; i < count; ++i)
            out[i] = std::fma(uniformDouble(), width, from);
    } else {
        for (std::size_t i = 0; i < count; ++i)
            out[i] = uniformDouble() * width + from;
    }
}

void TorchGenerator::uniform(float *out, std::size_t count, double from, double to)
{
    const float lo = float(from), hi = float(to);
    const float width = hi - lo;
    if (m_capability == TorchCpuCapability::Avx2) {
        for (std::size_t i = 0; i < count; ++i)
            out[i] = std::fma(uniformFloat(), width, lo);
    } else {
        for (std::size_t i = 0; i < count; ++i)
            out[i] = uniformFloat() * width + lo;
    }
}

std::vector<std::int64_t> TorchGenerator::randperm(std::int64_t n)
{
    if (n < 0)
        throw InvalidArgument("torch.randperm: n = " + std::to_string(n) + " must be >= 0");
    if (n > (std::int64_t(1) << 30))
        throw InvalidArgument("torch.randperm: n = " + std::to_string(n)
                              + " exceeds 2^30 (8 GiB of int64)");
    std::vector<std::int64_t> r(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        r[std::size_t(i)] = i;
    for (std::int64_t i = 0; i + 1 < n; ++i) {
        const std::int64_t z = std::int64_t(random()) % (n - i);
        std::swap(r[std::size_t(i)], r[std::size_t(i + z)]);
    }
    return r;
}

template<typename T> void initTorchDefault(MultiheadAttention<T> &layer, TorchGenerator &rng)
{
    const Index d = layer.dModel();
    // out_proj.reset_parameters(): kaiming_uniform_(weight, a=√5), fan_in = d.
    const double a = std::sqrt(5.0);
    const double gain = std::sqrt(2.0 / (1.0 + a * a));
    const double outBound = std::sqrt(3.0) * (gain / std::sqrt(double(d)));
    Matrix<T> &outWeight = layer.outProjWeight(); // d × d, row-major
    rng.uniform(outWeight.data(), std::size_t(outWeight.size()), -outBound, outBound);
    if (layer.hasBias()) {
        // uniform_(bias, ±1/√fan_in): drawn, then zeroed by _reset_parameters.
        const double biasBound = 1.0 / std::sqrt(double(d));
        Vector<T> &outBias = layer.outProjBias();
        rng.uniform(outBias.data(), std::size_t(outBias.size()), -biasBound, biasBound);
    }
    // _reset_parameters(): xavier_uniform_(in_proj_weight), fan_in = d, fan_out = 3·d.
    const double inBound = std::sqrt(3.0) * (1.0 * std::sqrt(2.0 / double(d + 3 * d)));
    Matrix<T> &inWeight = layer.inProjWeight(); // 3d × d, row-major
    rng.uniform(inWeight.data(), std::size_t(inWeight.size()), -inBound, inBound);
    layer.inProjBias().setZero();
    layer.outProjBias().setZero();
}

template void initTorchDefault<double>(MultiheadAttention<double> &, TorchGenerator &);
template void initTorchDefault<float>(MultiheadAttention<float> &, TorchGenerator &);

} // namespace attn
