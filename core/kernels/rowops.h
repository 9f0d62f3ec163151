#pragma once
// Internal row primitives shared by softmax, attention and the fast kernels (not installed,
// not part of the API). They run on contiguous rows with Eigen's packet math (SSE2 by default,
// AVX2/AVX-512 with ATTN_NATIVE), so exp is vectorised (Eigen's Cephes-style pexp).
//
// Masking convention: an entry equal to -inf is a masked key; its exp is written as exactly 0
// (Eigen's pexp alone returns a denormal there, not 0). Large finite negative arguments (a
// −1e9 fill value) give what std::exp gives: a subnormal or exactly 0.

#include "core/base/types.h"
#include "core/kernels/avx512.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

namespace attn::detail {

template<typename T> using PacketOf = typename Eigen::internal::packet_traits<T>::type;
template<typename T>
inline constexpr Index packetSize = Eigen::internal::unpacket_traits<PacketOf<T>>::size;

/// Largest entry of x[0, n) (−inf for n = 0). `suspicious` is set when the plain sum of the
/// entries is NaN or +inf, i.e. when the row may hold a NaN or +inf (or merely overflows the
/// sum; callers then scan the row to tell which).
template<typename T> inline T rowMax(const T *x, Index n, bool &suspicious)
{
    using namespace Eigen::internal;
    using P = PacketOf<T>;
    constexpr Index ps = packetSize<T>;
    const T negInf = -std::numeric_limits<T>::infinity();
    T mx = negInf;
    T sum = 0;
    Index j = 0;
    if (n >= 2 * ps) {
        P m0 = pset1<P>(negInf), m1 = pset1<P>(negInf);
        P s0 = pset1<P>(T(0)), s1 = pset1<P>(T(0));
        for (; j + 2 * ps <= n; j += 2 * ps) {
            const P a = ploadu<P>(x + j);
            const P b = ploadu<P>(x + j + ps);
            m0 = pmax(m0, a);
            m1 = pmax(m1, b);
            s0 = padd(s0, a);
            s1 = padd(s1, b);
        }
        mx = predux_max(pmax(m0, m1));
        sum = predux(padd(s0, s1));
    }
    for (; j < n; ++j) {
        mx = x[j] > mx ? x[j] : mx;
        sum += x[j];
    }
    suspicious = std::isnan(sum) || sum == std::numeric_limits<T>::infinity() || std::isnan(mx);
    return mx;
}

/// Arguments under this are not given to Eigen's pexp (which clamps them; see expShiftSum):
/// exp of them is below the smallest normal number, 1.2e-38 (float) / 2.2e-308 (double).
template<typename T>
inline constexpr T expPacketLowest = std::is_same_v<T, float> ? T(-87) : T(-708);

/// x[j] = exp(x[j]·scale − shift) for j in [0, n) (one fused multiply-add per entry), with −inf
/// entries giving exactly 0; returns the sum of the new entries. `shift` must be finite and
/// `scale` > 0 (use scale = 1 on already scaled scores).
template<typename T> inline T expShiftSum(T *x, Index n, T shift, T scale = T(1))
{
    using namespace Eigen::internal;
    using P = PacketOf<T>;
    constexpr Index ps = packetSize<T>;
    const T negInf = -std::numeric_limits<T>::infinity();
    T sum = 0;
    Index j = 0;
    if (n >= 2 * ps) {
        const P pshift = pset1<P>(-shift);
        const P pscale = pset1<P>(scale);
        const P pneg = pset1<P>(negInf);
        const P plow = pset1<P>(expPacketLowest<T>);
        // Eigen's pexp clamps its argument from below (−88.7 in float, −709.8 in double), so
        // exp(−1e9) would come out as a tiny positive number instead of NumPy's 0: lanes under
        // expPacketLowest are redone with std::exp (subnormal or exactly 0, as the C library).
        const auto expLanes = [&](const P &a) {
            const P t = pmadd(a, pscale, pshift);
            P e = pand(pexp(t), pcmp_lt(pneg, a));
            if (predux_any(pcmp_lt(t, plow))) {
                alignas(64) T tv[ps], av[ps];
                pstore(tv, t);
                pstore(av, a);
                for (Index k = 0; k < ps; ++k)
                    tv[k] = av[k] == negInf ? T(0) : std::exp(tv[k]);
                e = pload<P>(tv);
            }
            return e;
        };
        P s0 = pset1<P>(T(0)), s1 = pset1<P>(T(0));
        for (; j + 2 * ps <= n; j += 2 * ps) {
            const P a = ploadu<P>(x + j);
            const P b = ploadu<P>(x + j + ps);
            const P ea = expLanes(a);
            const P eb = expLanes(b);
            pstoreu(x + j, ea);
            pstoreu(x + j + ps, eb);
            s0 = padd(s0, ea);
            s1 = padd(s1, eb);
        }
        sum = predux(padd(s0, s1));
    }
    for (; j < n; ++j) {
        const T e = x[j] == negInf ? T(0) : std::exp(x[j] * scale - shift);
        x[j] = e;
        sum += e;
    }
    return sum;
}

/// x[j] *= s for j in [0, n).
template<typename T> inline void scaleRow(T *x, Index n, T s)
{
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(x, n) *= s;
}

/// Result of softmaxRow.
enum class RowStatus { Ok, FullyMasked, NonFinite };

/// The row passes of softmaxRowScaled: Eigen's packet math as compiled (the AVX-512 kernels pass
/// their own, avx512.h).
struct PacketRowOps
{
    template<typename T> static T max(const T *x, Index n, bool &suspicious)
    {
        return rowMax(x, n, suspicious);
    }
    template<typename T> static T expShiftSum(T *x, Index n, T shift, T scale)
    {
        return detail::expShiftSum(x, n, shift, scale);
    }
    template<typename T> static void scale(T *x, Index n, T s) { scaleRow(x, n, s); }
};

#ifdef ATTN_HAVE_AVX512_KERNELS
/// The row passes of softmaxRowScaled on 16 float / 8 double lanes (avx512.h); only while
/// avx512::enabled().
struct Avx512RowOps
{
    template<typename T> static T max(const T *x, Index n, bool &suspicious)
    {
        return avx512::rowMax(x, n, suspicious);
    }
    template<typename T> static T expShiftSum(T *x, Index n, T shift, T scale)
    {
        return avx512::expShiftSum(x, n, shift, scale);
    }
    template<typename T> static void scale(T *x, Index n, T s) { avx512::scaleRow(x, n, s); }
};
#endif

/// softmaxRow of x·scale (scale > 0) without a separate scaling pass: the max is taken on x and
/// the exponent is x·scale − max·scale. The row must not contain −inf unless scale is finite
/// and > 0 (then −inf·scale = −inf stays a masked key). `Ops` does the passes (PacketRowOps).
template<typename T, typename Ops = PacketRowOps>
inline RowStatus softmaxRowScaled(T *x, Index n, T scale, Index &badCol)
{
    bool suspicious = false;
    const T mx = Ops::max(x, n, suspicious);
    if (suspicious) {
        for (Index j = 0; j < n; ++j) {
            if (std::isnan(x[j]) || x[j] == std::numeric_limits<T>::infinity()) {
                badCol = j;
                return RowStatus::NonFinite;
            }
        }
        // Only the check sum overflowed; the entries are fine.
    }
    if (mx == -std::numeric_limits<T>::infinity()) {
        std::fill(x, x + n, T(0));
        return RowStatus::FullyMasked;
    }
    const T shift = mx * scale;
    if (!std::isfinite(shift)) { // finite scores overflow once scaled (scale > 1)
        badCol = Index(std::find(x, x + n, mx) - x);
        return RowStatus::NonFinite;
    }
    const T sum = Ops::expShiftSum(x, n, shift, scale);
    // sum >= ~1: the max entry contributes exp(mx·scale − shift) ≈ 1 (exactly 1 when scale = 1).
    Ops::scale(x, n, T(1) / sum);
    return RowStatus::Ok;
}

/// Softmax of one contiguous row in place (max subtracted). Fully masked row (all −inf, or
/// n = 0) → zeros and FullyMasked. A NaN or +inf entry → NonFinite with `badCol` set and the
/// row left untouched.
template<typename T, typename Ops = PacketRowOps>
inline RowStatus softmaxRow(T *x, Index n, Index &badCol)
{
    return softmaxRowScaled<T, Ops>(x, n, T(1), badCol);
}

/// The row passes (max, exp-and-sum, scale, and the softmax made of them) on the code every
/// caller in core runs: the AVX-512 passes (Avx512RowOps) when avx512::enabled() said so at
/// construction, else Eigen's packet math (PacketRowOps). The one place that chooses.
struct RowPasses
{
#ifdef ATTN_HAVE_AVX512_KERNELS
    bool avx512 = avx512::enabled();
#else
    static constexpr bool avx512 = false;
#endif

    template<typename T> T max(const T *x, Index n, bool &suspicious) const
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        if (avx512)
            return Avx512RowOps::max(x, n, suspicious);
#endif
        return PacketRowOps::max(x, n, suspicious);
    }
    template<typename T> T expShiftSum(T *x, Index n, T shift, T scale) const
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        if (avx512)
            return Avx512RowOps::expShiftSum(x, n, shift, scale);
#endif
        return PacketRowOps::expShiftSum(x, n, shift, scale);
    }
    template<typename T> void scale(T *x, Index n, T s) const
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        if (avx512) {
            Avx512RowOps::scale(x, n, s);
            return;
        }
#endif
        PacketRowOps::scale(x, n, s);
    }
    /// softmaxRowScaled on these passes.
    template<typename T> RowStatus softmaxScaled(T *x, Index n, T scale, Index &badCol) const
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        if (avx512)
            return softmaxRowScaled<T, Avx512RowOps>(x, n, scale, badCol);
#endif
        return softmaxRowScaled<T, PacketRowOps>(x, n, scale, badCol);
    }
};

/// "NaN" or "+inf" or "-inf" or the number, for messages.
template<typename T> inline std::string valueName(T v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "+inf" : "-inf";
    return std::to_string(double(v));
}

} // namespace attn::detail
