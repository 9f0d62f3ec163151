#include "core/attention/mask.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace attn {

namespace {

void checkNonNegative(Index value, const char *name)
{
    if (value < 0)
        throw InvalidArgument(std::string(name) + " must be >= 0, got " + std::to_string(value));
}

} // namespace

std::string maskStateText(std::uint8_t state, MaskTextStyle style)
{
    static constexpr std::pair<std::uint8_t, const char *> names[] = {
        {MaskCausal, "causal"},
        {MaskPadding, "padding"},
        {MaskCustom, "custom"},
        {MaskWindow, "window"},
    };
    const bool spaced = style != MaskTextStyle::Field;
    std::string text;
    for (const auto &[bit, name] : names) {
        if (!(state & bit))
            continue;
        if (!text.empty())
            text += spaced ? " + " : "+";
        text += name;
    }
    if (text.empty())
        return style == MaskTextStyle::Name ? "none" : "allowed";
    return style == MaskTextStyle::Label ? text + "-masked" : text;
}

AttentionMask AttentionMask::causal(Index nQ, Index nK, CausalAlignment alignment)
{
    checkNonNegative(nQ, "causal mask n_q");
    checkNonNegative(nK, "causal mask n_k");
    AttentionMask m;
    m.m_rows = nQ;
    m.m_cols = nK;
    m.m_causal = alignment;
    return m;
}

AttentionMask AttentionMask::keyPadding(Index nQ, const std::vector<std::uint8_t> &keyIsPadding)
{
    checkNonNegative(nQ, "key padding mask n_q");
    AttentionMask m;
    m.m_rows = nQ;
    m.m_cols = Index(keyIsPadding.size());
    m.m_keyPadding.resize(keyIsPadding.size());
    for (std::size_t j = 0; j < keyIsPadding.size(); ++j)
        m.m_keyPadding[j] = keyIsPadding[j] != 0 ? 1 : 0;
    return m;
}

AttentionMask AttentionMask::keyPaddingLast(Index nQ, Index nK, Index count)
{
    checkNonNegative(nK, "key padding mask n_k");
    if (count < 0 || count > nK)
        throw InvalidArgument("key padding count must be in [0, n_k = " + std::to_string(nK)
                              + "], got " + std::to_string(count));
    std::vector<std::uint8_t> padding(std::size_t(nK), 0);
    std::fill(padding.begin() + (nK - count), padding.end(), std::uint8_t(1));
    return keyPadding(nQ, padding);
}

AttentionMask AttentionMask::slidingWindow(Index nQ, Index nK, Index window, Index sinks,
                                           CausalAlignment alignment)
{
    checkNonNegative(nQ, "sliding window mask n_q");
    checkNonNegative(nK, "sliding window mask n_k");
    if (window < 1)
        throw InvalidArgument("sliding window width w must be >= 1, got " + std::to_string(window));
    checkNonNegative(sinks, "number of attention sinks");
    AttentionMask m = causal(nQ, nK, alignment);
    m.m_window = window;
    m.m_sinks = sinks;
    return m;
}

AttentionMask AttentionMask::fromMasked(const MatrixB &masked)
{
    AttentionMask m;
    m.m_rows = masked.rows();
    m.m_cols = masked.cols();
    m.m_custom = MatrixB(masked.rows(), masked.cols());
    for (Index i = 0; i < masked.rows(); ++i)
        for (Index j = 0; j < masked.cols(); ++j)
            (*m.m_custom)(i, j) = masked(i, j) != 0 ? 1 : 0;
    return m;
}

AttentionMask AttentionMask::fromAllowed(const MatrixB &allowed)
{
    AttentionMask m;
    m.m_rows = allowed.rows();
    m.m_cols = allowed.cols();
    m.m_custom = MatrixB(allowed.rows(), allowed.cols());
    for (Index i = 0; i < allowed.rows(); ++i)
        for (Index j = 0; j < allowed.cols(); ++j)
            (*m.m_custom)(i, j) = allowed(i, j) != 0 ? 0 : 1;
    return m;
}

AttentionMask AttentionMask::additive(const MatrixD &add)
{
    for (Index i = 0; i < add.rows(); ++i) {
        for (Index j = 0; j < add.cols(); ++j) {
            const double v = add(i, j);
            if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
                throw NonFiniteInput("additive mask has "
                                     + std::string(std::isnan(v) ? "NaN" : "+inf") + " at row "
                                     + std::to_string(i) + ", col " + std::to_string(j)
                                     + " (only finite values and -inf allowed)");
        }
    }
    AttentionMask m;
    m.m_rows = add.rows();
    m.m_cols = add.cols();
    m.m_additive = add;
    return m;
}

AttentionMask AttentionMask::operator|(const AttentionMask &other) const
{
    const bool fixedA = m_rows != 0 || m_cols != 0 || !empty();
    const bool fixedB = other.m_rows != 0 || other.m_cols != 0 || !other.empty();
    if (fixedA && fixedB && (m_rows != other.m_rows || m_cols != other.m_cols))
        throw InvalidArgument("cannot combine masks of different shapes: "
                              + shapeString(m_rows, m_cols) + " and "
                              + shapeString(other.m_rows, other.m_cols));
    if (!fixedA)
        return other;
    if (!fixedB)
        return *this;

    AttentionMask r = *this;
    // Causal: keep the more restrictive alignment (they coincide when n_q == n_k).
    if (other.m_causal) {
        if (!r.m_causal) {
            r.m_causal = other.m_causal;
        } else if (*r.m_causal != *other.m_causal) {
            // TopLeft limit i+1, BottomRight limit i+1+(n_k-n_q): the smaller one masks more.
            r.m_causal
                = r.m_cols >= r.m_rows ? CausalAlignment::TopLeft : CausalAlignment::BottomRight;
        }
    }
    if (other.m_window != 0) {
        if (r.m_window == 0) {
            r.m_window = other.m_window;
            r.m_sinks = other.m_sinks;
        } else if (r.m_window != other.m_window || r.m_sinks != other.m_sinks) {
            throw InvalidArgument(
                "cannot combine two sliding windows: w = " + std::to_string(r.m_window) + " with "
                + std::to_string(r.m_sinks) + " sinks and w = " + std::to_string(other.m_window)
                + " with " + std::to_string(other.m_sinks) + " sinks");
        }
    }
    if (!other.m_keyPadding.empty()) {
        if (r.m_keyPadding.empty()) {
            r.m_keyPadding = other.m_keyPadding;
        } else {
            for (std::size_t j = 0; j < r.m_keyPadding.size(); ++j)
                r.m_keyPadding[j] = (r.m_keyPadding[j] | other.m_keyPadding[j]) != 0 ? 1 : 0;
        }
    }
    if (other.m_custom) {
        if (!r.m_custom)
            r.m_custom = other.m_custom;
        else
            *r.m_custom = (r.m_custom->array() != 0 || other.m_custom->array() != 0)
                              .cast<std::uint8_t>()
                              .matrix();
    }
    if (other.m_additive) {
        if (!r.m_additive)
            r.m_additive = other.m_additive;
        else
            *r.m_additive += *other.m_additive; // -inf + finite = -inf stays masked
    }
    return r;
}

bool AttentionMask::empty() const
{
    return !m_causal && m_keyPadding.empty() && !m_custom && !m_additive;
}

bool AttentionMask::isPureCausal() const
{
    return m_causal && m_window == 0 && m_keyPadding.empty() && !m_custom && !m_additive;
}

std::optional<CausalAlignment> AttentionMask::causalAlignment() const
{
    return m_causal;
}

void AttentionMask::checkShape(Index nQ, Index nK) const
{
    if (m_rows == 0 && m_cols == 0 && empty())
        return;
    if (m_rows != nQ || m_cols != nK)
        throw InvalidArgument("mask is " + shapeString(m_rows, m_cols) + " but the attention is "
                              + shapeString(nQ, nK) + " (n_q × n_k)");
}

Index AttentionMask::causalLimit(Index i, Index nK) const
{
    if (!m_causal)
        return nK;
    Index limit = i + 1;
    if (*m_causal == CausalAlignment::BottomRight)
        limit += nK - m_rows;
    return std::clamp<Index>(limit, 0, nK);
}

Index AttentionMask::windowStart(Index i, Index nK) const
{
    if (m_window == 0)
        return 0;
    return std::max<Index>(causalLimit(i, nK) - m_window, 0);
}

std::uint8_t AttentionMask::state(Index i, Index j) const
{
    std::uint8_t s = MaskAllowed;
    if (m_causal && j >= causalLimit(i, m_cols))
        s |= MaskCausal;
    if (m_window != 0 && j >= m_sinks && j < windowStart(i, m_cols))
        s |= MaskWindow;
    if (!m_keyPadding.empty() && m_keyPadding[std::size_t(j)] != 0)
        s |= MaskPadding;
    if (m_custom && (*m_custom)(i, j) != 0)
        s |= MaskCustom;
    if (m_additive && (*m_additive)(i, j) == -std::numeric_limits<double>::infinity())
        s |= MaskCustom;
    return s;
}

MatrixB AttentionMask::stateMatrix(Index nQ, Index nK) const
{
    checkShape(nQ, nK);
    MatrixB out(nQ, nK);
    for (Index i = 0; i < nQ; ++i)
        for (Index j = 0; j < nK; ++j)
            out(i, j) = state(i, j);
    return out;
}

} // namespace attn
