#pragma once
// NumPy-compatible random numbers: reproduces numpy.random.default_rng(seed) bit for bit.
// SeedSequence (numpy/random/bit_generator.pyx) -> PCG64 (numpy/random/_pcg64.pyx, 128-bit LCG
// with XSL-RR output) -> Generator methods random(), standard_normal() (256-layer ziggurat of
// numpy/random/src/distributions/distributions.c, tail and wedge paths included), normal(),
// integers() (Lemire's bounded method as NumPy uses it) and permutation() (Fisher-Yates as
// numpy.random.Generator.shuffle). Arrays are filled in C (row-major) order.

#include "core/base/types.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace attn {

/// numpy.random.SeedSequence restricted to integer entropy (no spawn keys, pool size 4).
class SeedSequence
{
public:
    /// Entropy as little-endian 32-bit words, as NumPy splits a Python int (0 -> {0}). Any
    /// number of words; words past the pool size are mixed in as NumPy's mix_entropy() does.
    explicit SeedSequence(std::vector<std::uint32_t> entropyWords);
    /// `count` 32-bit words of state, like SeedSequence.generate_state(count, np.uint32).
    std::vector<std::uint32_t> generateState(std::size_t count) const;

private:
    std::array<std::uint32_t, 4> m_pool {};
};

/// The PCG64 bit generator (128-bit state and increment, XSL-RR 64-bit output).
class Pcg64
{
public:
    /// Seeds as numpy.random.PCG64(SeedSequence): 4 uint64 words -> state, increment.
    explicit Pcg64(const SeedSequence &seq);
    std::uint64_t next64(); ///< PCG64.random_raw(): one 64-bit output
    /// NumPy's buffered 32-bit draw: the low half of a 64-bit draw, then its high half.
    std::uint32_t next32();

private:
    std::uint64_t m_stateHi = 0, m_stateLo = 0, m_incHi = 0, m_incLo = 0;
    bool m_hasUint32 = false;
    std::uint32_t m_uinteger = 0;
};

/// numpy.random.Generator(PCG64(seed)) == numpy.random.default_rng(seed).
///
/// Every method consumes the stream exactly as the NumPy method of the same name, so a sequence
/// of calls here equals the same sequence of calls in NumPy (tests/core/tst_random.cpp checks this
/// bitwise against fixtures of tests/reference/make_random_fixtures.py).
class Generator
{
public:
    /// Seed from a non-negative integer that fits 64 bits (default_rng(seed)).
    explicit Generator(std::uint64_t seed);
    /// Seed from a non-negative decimal integer of any size (e.g.
    /// "1267650600228229401496703205379" = 2**100 + 3). Leading zeros are allowed; signs,
    /// spaces and other characters are not. Throws InvalidArgument when the text is empty or
    /// not a non-negative decimal integer.
    static Generator fromDecimalString(std::string_view decimal);
    /// Seed from little-endian 32-bit words of the integer (high zero words are ignored).
    static Generator fromWords(std::vector<std::uint32_t> words);

    double random(); ///< Generator.random(): uniform in [0, 1), 53 bits
    double standardNormal(); ///< Generator.standard_normal(), ziggurat
    float standardNormalFloat(); ///< Generator.standard_normal(dtype=np.float32)
    /// Generator.normal(loc, scale) == loc + scale * standard_normal. Throws InvalidArgument if
    /// scale < 0 or NaN.
    double normal(double loc, double scale);
    /// Generator.integers(low, high) for int64 (high exclusive). Throws InvalidArgument if low >=
    /// high.
    std::int64_t integers(std::int64_t low, std::int64_t high);
    /// Generator.permutation(n): a shuffled 0..n-1. Throws InvalidArgument if n < 0 (NumPy
    /// returns an empty array there).
    std::vector<std::int64_t> permutation(std::int64_t n);

    /// Generator.standard_normal(size=(rows, cols)) filled in C order: rows × cols, row-major.
    /// Throws InvalidArgument for a negative size.
    MatrixD standardNormal(Index rows, Index cols);
    /// Generator.normal(loc, scale, size=(rows, cols)) == loc + scale * standard_normal, in C
    /// order. Throws InvalidArgument for a negative size or scale < 0.
    MatrixD normal(double loc, double scale, Index rows, Index cols);
    /// Generator.random(size=(rows, cols)) in C order. Throws InvalidArgument for a negative size.
    MatrixD random(Index rows, Index cols);
    /// Fills `count` doubles with standard normals in order.
    void fillStandardNormal(double *out, std::size_t count);
    /// Fills `count` doubles with Generator.random() values in order.
    void fillRandom(double *out, std::size_t count);

    Pcg64 &bitGenerator() { return m_bits; }

private:
    explicit Generator(const SeedSequence &seq);
    Pcg64 m_bits;
};

} // namespace attn
