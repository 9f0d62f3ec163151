#include "core/io/tensorcase.h"

#include "core/analysis/metrics.h"
#include "core/base/messages.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>
#include <type_traits>

namespace attn {

namespace {

const char *const knownArrays[] = {
    "query",           "key",           "value",         "in_proj_weight", "in_proj_bias",
    "out_proj_weight", "out_proj_bias", "num_heads",     "attn_mask",      "key_padding_mask",
    "q_proj_weight",   "k_proj_weight", "v_proj_weight", "num_kv_heads",   "sink_logits",
    "query2",          "key2",          "lambda",        "gate_logits",
};
/// The 2025 variants' arrays (core/attention/variants.h), for already-projected heads.
const char *const variantArrays[] = {"sink_logits", "query2", "key2", "lambda", "gate_logits"};
/// Parameter arrays of torch.nn.MultiheadAttention: any of them makes the case multi-head (without
/// them, num_heads marks already-projected heads).
const char *const projectionArrays[]
    = {"in_proj_weight", "in_proj_bias",  "out_proj_weight", "out_proj_bias",
       "q_proj_weight",  "k_proj_weight", "v_proj_weight"};
/// torch.nn.MultiheadAttention's parameters when kdim or vdim differ from embed_dim.
const char *const separateArrays[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};

bool isFloat(NpyType t)
{
    return t == NpyType::Float32 || t == NpyType::Float64;
}

bool isInteger(NpyType t)
{
    return t == NpyType::Int32 || t == NpyType::Int64 || t == NpyType::UInt8;
}

/// Shortest text that reads back to `v` ("nan", "inf", "-inf" for the non-finite values).
std::string num(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
    return std::string(buffer, r.ptr);
}

std::string num(Index v)
{
    return std::to_string(v);
}

std::string quoted(const char *name)
{
    return std::string("'") + name + "'";
}

class Inputs
{
public:
    Inputs(const NamedArrays &arrays, const std::string &source)
        : m_source(source)
    {
        for (const auto &[name, array] : arrays)
            m_arrays.emplace(name, &array);
    }

    bool has(const char *name) const { return m_arrays.count(name) > 0; }
    const NpyArray *find(const char *name) const
    {
        auto it = m_arrays.find(name);
        return it == m_arrays.end() ? nullptr : it->second;
    }
    const NpyArray &require(const char *name, const std::string &why = {}) const
    {
        if (const NpyArray *a = find(name))
            return *a;
        std::vector<std::string> present;
        for (const auto &[n, a] : m_arrays)
            present.push_back(n + " " + describeArray(*a));
        throw InvalidArgument("missing array " + quoted(name) + why + " in " + m_source
                              + " (it holds: " + (present.empty() ? "nothing" : shortList(present))
                              + ")");
    }
    std::vector<std::string> unknownNames() const
    {
        std::vector<std::string> unknown;
        for (const auto &[n, a] : m_arrays) {
            bool known = false;
            for (const char *k : knownArrays)
                known = known || n == k;
            if (!known)
                unknown.push_back(n);
        }
        return unknown;
    }

private:
    std::string m_source;
    std::map<std::string, const NpyArray *> m_arrays;
};

/// A numeric (float or integer, not bool) 2-d array as a Matrix<T>, finite in T.
template<typename T>
Matrix<T> numericMatrix(const NpyArray &a, const char *name, const std::string &expectedShape)
{
    if (a.type == NpyType::Bool)
        throw InvalidArgument("array " + quoted(name) + " must hold numbers, got "
                              + describeArray(a));
    if (a.ndim() != 2)
        throw InvalidArgument("array " + quoted(name) + " must be 2-d (" + expectedShape
                              + "), got shape " + a.shapeString());
    const Matrix<T> m = a.toMatrix<T>(name);
    const NonFiniteReport bad = findNonFinite(m);
    if (bad.found)
        throw InvalidArgument("array " + quoted(name) + " " + a.shapeString()
                              + " holds a non-finite value at (" + num(bad.row) + ", "
                              + num(bad.col) + "): "
                              + num(a.values[std::size_t(bad.row * a.shape[1] + bad.col)]) + " ("
                              + num(bad.nanCount) + " NaN, " + num(bad.infCount) + " Inf in all)");
    return m;
}

/// A 1-d numeric array of length n as a Vector<T>, finite in T.
template<typename T> Vector<T> numericVector(const NpyArray &a, const char *name, Index n)
{
    if (a.type == NpyType::Bool || a.ndim() != 1 || a.shape[0] != n)
        throw InvalidArgument("array " + quoted(name) + " must be a 1-d numeric array of length "
                              + num(n) + ", got " + describeArray(a));
    Vector<T> v(n);
    for (Index i = 0; i < n; ++i) {
        v(i) = T(a.values[std::size_t(i)]);
        if (!std::isfinite(v(i)))
            throw InvalidArgument("array " + quoted(name) + " " + a.shapeString()
                                  + " holds a non-finite value at (" + num(i)
                                  + "): " + num(a.values[std::size_t(i)]));
    }
    return v;
}

void checkShape(const NpyArray &a, const char *name, std::int64_t rows, std::int64_t cols,
                const std::string &meaning, const std::string &context)
{
    if (a.shape[0] != rows || a.shape[1] != cols)
        throw InvalidArgument("array " + quoted(name) + " has shape " + a.shapeString()
                              + " but must be (" + num(Index(rows)) + ", " + num(Index(cols))
                              + ") (" + meaning + "); " + context);
}

/// A 0-d (or one-element) integer array's value.
double scalarCount(const NpyArray &a, const char *name)
{
    const bool scalar = a.ndim() == 0 || (a.ndim() == 1 && a.shape[0] == 1);
    if (!scalar || !isInteger(a.type))
        throw InvalidArgument("array " + quoted(name)
                              + " must be a 0-d integer array "
                                "(np.array(4)), got "
                              + describeArray(a));
    return a.values.at(0);
}

/// Bool (or 0/1 uint8) values.
std::vector<std::uint8_t> boolValues(const NpyArray &a, const char *name)
{
    std::vector<std::uint8_t> bits;
    bits.reserve(a.values.size());
    for (double v : a.values) {
        if (v != 0 && v != 1)
            throw InvalidArgument("array " + quoted(name) + " " + describeArray(a)
                                  + " must hold booleans (0/1), found " + num(v));
        bits.push_back(v != 0 ? 1 : 0);
    }
    return bits;
}

void buildMask(const Inputs &in, Index nQ, Index nK, MaskConvention convention,
               const std::string &context, AttentionMask &mask,
               std::vector<std::string> &description)
{
    const bool allowed = convention == MaskConvention::Allowed;
    const std::string boolMeaning = allowed ? "True = may attend" : "True = masked out";
    if (const NpyArray *a = in.find("attn_mask")) {
        if (a->ndim() != 2)
            throw InvalidArgument("array 'attn_mask' must be 2-d (n_q \u00d7 n_k = "
                                  + shapeString(nQ, nK) + "), got shape " + a->shapeString() + "; "
                                  + context);
        checkShape(*a, "attn_mask", nQ, nK, "n_q \u00d7 n_k", context);
        if (a->type == NpyType::Bool || a->type == NpyType::UInt8) {
            const std::vector<std::uint8_t> bits = boolValues(*a, "attn_mask");
            MatrixB m(nQ, nK);
            std::copy(bits.begin(), bits.end(), m.data());
            mask = allowed ? AttentionMask::fromAllowed(m) : AttentionMask::fromMasked(m);
            description.push_back("attn_mask bool (" + boolMeaning + ")");
        } else if (isFloat(a->type)) {
            const MatrixD add = a->toMatrix<double>("attn_mask");
            for (Index i = 0; i < nQ; ++i) {
                for (Index j = 0; j < nK; ++j) {
                    const double v = add(i, j);
                    if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
                        throw InvalidArgument("array 'attn_mask' " + describeArray(*a) + " holds "
                                              + num(v) + " at (" + num(i) + ", " + num(j)
                                              + "); an additive mask may hold finite values "
                                                "and -inf only");
                }
            }
            mask = AttentionMask::additive(add);
            description.emplace_back("attn_mask additive float");
        } else {
            throw InvalidArgument("array 'attn_mask' must be bool or float, got "
                                  + describeArray(*a));
        }
    }
    if (const NpyArray *a = in.find("key_padding_mask")) {
        const bool rowShape = a->ndim() == 2 && a->shape[0] == 1;
        if (!(a->ndim() == 1 || rowShape) || a->shape.back() != nK)
            throw InvalidArgument("array 'key_padding_mask' has shape " + a->shapeString()
                                  + " but must be (" + num(nK) + ",) (n_k); " + context);
        if (a->type != NpyType::Bool && a->type != NpyType::UInt8)
            throw InvalidArgument("array 'key_padding_mask' must be bool, got "
                                  + describeArray(*a));
        std::vector<std::uint8_t> padding = boolValues(*a, "key_padding_mask");
        if (allowed) {
            for (std::uint8_t &p : padding)
                p = p ? 0 : 1;
        }
        const AttentionMask pad = AttentionMask::keyPadding(nQ, padding);
        mask = mask.empty() ? pad : (mask | pad);
        description.push_back(std::string("key_padding_mask (")
                              + (allowed ? "True = key kept" : "True = padding") + ")");
    }
}

} // namespace

namespace {

const NpyArray *findArray(const NamedArrays &arrays, const char *name)
{
    for (const auto &[n, a] : arrays)
        if (n == name)
            return &a;
    return nullptr;
}

// Slice k of the first axis of array `name` (any rank ≥ 1): shape without its first axis. Throws
// InvalidArgument when `a` has no item k (a file may hold a second array of the same name with
// another shape).
NpyArray firstAxisSlice(const std::string &name, const NpyArray &a, std::int64_t k)
{
    if (a.ndim() < 1 || k < 0 || k >= a.shape[0])
        throw InvalidArgument("array '" + name + "' " + a.shapeString() + " has no batch item "
                              + std::to_string(k));
    NpyArray out;
    out.type = a.type;
    out.shape.assign(a.shape.begin() + 1, a.shape.end());
    const std::int64_t step = out.size();
    out.values.assign(a.values.begin() + std::ptrdiff_t(k * step),
                      a.values.begin() + std::ptrdiff_t((k + 1) * step));
    return out;
}

} // namespace

Index tensorBatchSize(const NamedArrays &arrays)
{
    const NpyArray *q = findArray(arrays, "query");
    const NpyArray *k = findArray(arrays, "key");
    const NpyArray *v = findArray(arrays, "value");
    if (!q || !k || !v)
        return 0;
    const int batched = int(q->ndim() == 3) + int(k->ndim() == 3) + int(v->ndim() == 3);
    if (batched == 0)
        return 0;
    const std::string dims
        = "query " + q->shapeString() + ", key " + k->shapeString() + ", value " + v->shapeString();
    if (batched != 3 || q->ndim() != 3 || k->ndim() != 3 || v->ndim() != 3)
        throw InvalidArgument("query, key and value must all be 2-d (n, E) or all 3-d with a "
                              "leading batch axis (B, n, E): "
                              + dims);
    if (q->shape[0] != k->shape[0] || q->shape[0] != v->shape[0])
        throw InvalidArgument("query, key and value have different batch sizes B: " + dims);
    if (q->shape[0] < 1)
        throw InvalidArgument("the batch axis is empty (B = 0): " + dims);
    return Index(q->shape[0]);
}

NamedArrays tensorBatchItem(const NamedArrays &arrays, Index batch)
{
    const Index b = tensorBatchSize(arrays);
    if (b == 0) {
        if (batch != 0)
            throw InvalidArgument("batch index " + std::to_string(batch)
                                  + " given, but query, key and value have no batch axis (2-d)");
        return arrays;
    }
    if (batch < 0 || batch >= b)
        throw InvalidArgument("batch index " + std::to_string(batch)
                              + " is out of range: the tensors have a batch axis of B = "
                              + std::to_string(b) + " (valid 0 … " + std::to_string(b - 1) + ")");
    NamedArrays out;
    out.reserve(arrays.size());
    for (const auto &[name, a] : arrays) {
        const bool variant
            = (name == "query2" || name == "key2" || name == "gate_logits") && a.ndim() == 3;
        const bool input = name == "query" || name == "key" || name == "value" || variant;
        if (variant && a.shape[0] != b)
            throw InvalidArgument("array '" + name + "' " + a.shapeString()
                                  + " must have the batch size B = " + std::to_string(b)
                                  + " as its first axis");
        const bool padding = name == "key_padding_mask" && a.ndim() == 2;
        const bool attnMask = name == "attn_mask" && a.ndim() == 3;
        if ((padding || attnMask) && a.shape[0] != b)
            throw InvalidArgument("array '" + name + "' " + a.shapeString()
                                  + " must have the batch size B = " + std::to_string(b)
                                  + " as its first axis");
        if (input || padding || attnMask)
            out.emplace_back(name, firstAxisSlice(name, a, std::int64_t(batch)));
        else
            out.emplace_back(name, a);
    }
    return out;
}

std::string describeArray(const NpyArray &array)
{
    return std::string(npyTypeName(array.type)) + " " + array.shapeString();
}

bool hasTensorCase(const NamedArrays &arrays)
{
    auto has = [&](const char *name) {
        return std::any_of(arrays.begin(), arrays.end(),
                           [name](const auto &a) { return a.first == name; });
    };
    return has("query") && has("key") && has("value");
}

template<typename T> std::string TensorCase<T>::shapeSummary() const
{
    return "query " + shapeString(query.rows(), query.cols()) + ", key "
        + shapeString(key.rows(), key.cols()) + ", value "
        + shapeString(value.rows(), value.cols());
}

template<typename T> MultiheadAttention<T> TensorCase<T>::layer() const
{
    if (!multihead)
        throw InvalidArgument("TensorCase::layer: the case has no multi-head parameters");
    MultiheadAttention<T> l(dModel(), heads, bias);
    if (separateProjections)
        l.setSeparateProjections(qProjWeight, kProjWeight, vProjWeight, inProjBias, outProjWeight,
                                 outProjBias);
    else
        l.setParameters(inProjWeight, inProjBias, outProjWeight, outProjBias);
    return l;
}

namespace {

/// Per-head numbers (sink_logits, lambda): a 0-d or 1-element array (shared by every head) or
/// a 1-d array of h entries, float or integer; −inf allowed where `allowMinusInf`.
std::vector<double> perHeadValues(const NpyArray &a, const char *name, Index heads,
                                  bool allowMinusInf)
{
    const bool single = a.ndim() == 0 || (a.ndim() == 1 && a.shape[0] == 1);
    const bool perHead = a.ndim() == 1 && a.shape[0] == heads;
    if (a.type == NpyType::Bool || !(single || perHead))
        throw InvalidArgument("array " + quoted(name) + " must be a number or a 1-d array of h = "
                              + num(heads) + " numbers (one per head), got " + describeArray(a));
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        const double v = a.values[i];
        const bool ok
            = std::isfinite(v) || (allowMinusInf && v == -std::numeric_limits<double>::infinity());
        if (!ok)
            throw InvalidArgument("array " + quoted(name) + " " + a.shapeString() + " holds "
                                  + num(v) + " at " + num(Index(i)) + " (it must be finite"
                                  + (allowMinusInf ? std::string(" or -inf)") : std::string(")")));
    }
    return a.values;
}

/// The variants' arrays of a case of already-projected heads (or plain attention as one head).
template<typename T> void readVariants(const Inputs &in, TensorCase<T> &c, const std::string &dims)
{
    const Index h = c.heads;
    if (const NpyArray *a = in.find("sink_logits"))
        c.variants.sinkLogits = perHeadValues(*a, "sink_logits", h, true);
    const bool q2 = in.has("query2"), k2 = in.has("key2"), l = in.has("lambda");
    if (q2 || k2 || l) {
        const std::string why = " (differential attention: query2, key2 and lambda go together)";
        const NpyArray &qa = in.require("query2", why);
        const NpyArray &ka = in.require("key2", why);
        const NpyArray &la = in.require("lambda", why);
        c.variants.query2 = numericMatrix<T>(qa, "query2", "shaped as query");
        c.variants.key2 = numericMatrix<T>(ka, "key2", "shaped as key");
        if (c.variants.query2.rows() != c.query.rows()
            || c.variants.query2.cols() != c.query.cols())
            throw InvalidArgument("array 'query2' " + qa.shapeString()
                                  + " must be shaped as query: " + dims);
        if (c.variants.key2.rows() != c.key.rows() || c.variants.key2.cols() != c.key.cols())
            throw InvalidArgument("array 'key2' " + ka.shapeString()
                                  + " must be shaped as key: " + dims);
        c.variants.lambda = perHeadValues(la, "lambda", h, false);
    }
    if (c.variants.hasSinks() && c.variants.isDifferential())
        throw InvalidArgument("sink_logits and query2/key2/lambda are given: learned sinks and "
                              "differential attention do not combine (no published model uses "
                              "both)");
    if (const NpyArray *g = in.find("gate_logits")) {
        const Index width = h * (c.value.cols() / c.kvHeads);
        c.variants.gateLogits = numericMatrix<T>(*g, "gate_logits", "n_q × h·d_v");
        if (c.variants.gateLogits.rows() != c.query.rows() || c.variants.gateLogits.cols() != width)
            throw InvalidArgument("array 'gate_logits' " + g->shapeString()
                                  + " must be n_q × h·d_v = (" + num(c.query.rows()) + ", "
                                  + num(width) + ") for h = " + num(h)
                                  + ", d_v = " + num(c.value.cols() / c.kvHeads) + ": " + dims);
    }
}

} // namespace

template<typename T>
TensorCase<T> tensorCaseFromArrays(const NamedArrays &arrays, const std::string &source,
                                   MaskConvention convention)
{
    const Inputs in(arrays, source);
    TensorCase<T> c;
    for (const char *p : projectionArrays)
        c.multihead = c.multihead || in.has(p);
    c.projectedHeads = !c.multihead && (in.has("num_heads") || in.has("num_kv_heads"));
    if (c.multihead && in.has("num_kv_heads"))
        throw InvalidArgument("array 'num_kv_heads' is for already-projected heads (query "
                              "n_q × h·d_k, key n_k × g·d_k) without "
                              "in_proj_weight; torch.nn.MultiheadAttention's layout has g = h");

    const NpyArray &qa = in.require("query");
    const NpyArray &ka = in.require("key");
    const NpyArray &va = in.require("value");
    const std::string dims
        = "query " + qa.shapeString() + ", key " + ka.shapeString() + ", value " + va.shapeString();
    c.query = numericMatrix<T>(qa, "query", "n_q \u00d7 d_model");
    c.key = numericMatrix<T>(ka, "key", "n_k \u00d7 d_model");
    c.value = numericMatrix<T>(va, "value", "n_k \u00d7 d_v");
    // Every axis of the inputs at least 1: n_q, n_k, d_model and d_v bound every other size
    // (and an empty matrix has no storage to take heads from).
    for (const auto &[a, name, axes] :
         {std::tuple {&qa, "query", "n_q, d_model"}, std::tuple {&ka, "key", "n_k, d_model"},
          std::tuple {&va, "value", "n_k, d_v"}}) {
        if (a->shape[0] == 0 || a->shape[1] == 0)
            throw InvalidArgument("array " + quoted(name) + " " + describeArray(*a)
                                  + " has an empty axis: attention needs at least one query, key, "
                                    "value and feature ("
                                  + axes + " >= 1): " + dims);
    }
    const Index nQ = c.query.rows(), nK = c.key.rows(), dModel = c.query.cols();
    for (const char *p : separateArrays)
        c.separateProjections = c.separateProjections || in.has(p);
    // With separate projections key and value have their own widths (kdim, vdim).
    if (c.projectedHeads) {
        const double heads
            = scalarCount(in.require("num_heads", " (num_kv_heads was given)"), "num_heads");
        if (heads < 1 || dModel == 0 || std::fmod(double(dModel), heads) != 0)
            throw InvalidArgument("num_heads = " + num(heads)
                                  + " must be at least 1 and divide the query's h·d_k = "
                                  + num(dModel) + " columns: " + dims);
        c.heads = Index(heads);
        c.kvHeads = c.heads;
        if (const NpyArray *g = in.find("num_kv_heads")) {
            const double kv = scalarCount(*g, "num_kv_heads");
            if (kv < 1 || std::fmod(heads, kv) != 0)
                throw InvalidArgument("num_kv_heads = " + num(kv)
                                      + " must be at least 1 and divide num_heads = " + num(heads));
            c.kvHeads = Index(kv);
        }
        const Index dK = dModel / c.heads;
        if (c.key.cols() != c.kvHeads * dK)
            throw InvalidArgument("array 'key' has " + num(c.key.cols())
                                  + " columns but must have g·d_k = " + num(c.kvHeads) + "·"
                                  + num(dK) + " = " + num(c.kvHeads * dK)
                                  + " (num_kv_heads × the query's d_k): " + dims);
        if (c.value.rows() != nK)
            throw InvalidArgument("array 'value' has " + num(c.value.rows()) + " rows but key has "
                                  + num(nK) + " (both must be n_k): " + dims);
        if (c.value.cols() % c.kvHeads != 0)
            throw InvalidArgument("array 'value' has " + num(c.value.cols())
                                  + " columns, not g·d_v for num_kv_heads = " + num(c.kvHeads)
                                  + ": " + dims);
        buildMask(in, nQ, nK, convention, dims, c.mask, c.maskDescription);
        readVariants(in, c, dims);
        c.unusedArrays = in.unknownNames();
        return c;
    }
    if (!c.separateProjections && c.key.cols() != dModel)
        throw InvalidArgument("array 'key' has " + num(c.key.cols()) + " columns but query has "
                              + num(dModel) + " (both must be d_model): " + dims);
    if (c.value.rows() != nK)
        throw InvalidArgument("array 'value' has " + num(c.value.rows()) + " rows but key has "
                              + num(nK) + " (both must be n_k): " + dims);
    if (c.multihead && !c.separateProjections && c.value.cols() != dModel)
        throw InvalidArgument("array 'value' has " + num(c.value.cols())
                              + " columns but must have d_model = " + num(dModel)
                              + " for multi-head attention: " + dims);

    buildMask(in, nQ, nK, convention, dims, c.mask, c.maskDescription);

    if (c.multihead) {
        const std::string why = " (multi-head parameters were given)";
        const std::string pdims = "d_model = " + num(dModel) + " from query " + qa.shapeString();
        if (c.separateProjections) {
            // torch.nn.MultiheadAttention(kdim=…, vdim=…): q/k/v_proj_weight, no
            // in_proj_weight; kdim and vdim are the key's and the value's widths.
            if (in.has("in_proj_weight"))
                throw InvalidArgument("both 'in_proj_weight' and q/k/v_proj_weight are given: "
                                      "torch.nn.MultiheadAttention has one or the other "
                                      "(q/k/v_proj_weight when kdim or vdim differs from "
                                      "d_model)");
            const std::string swhy = " (separate projections: q_proj_weight, k_proj_weight and "
                                     "v_proj_weight go together)";
            const NpyArray &qw = in.require("q_proj_weight", swhy);
            const NpyArray &kw = in.require("k_proj_weight", swhy);
            const NpyArray &vw = in.require("v_proj_weight", swhy);
            const Index kDim = c.key.cols(), vDim = c.value.cols();
            const std::string kv = pdims + ", kdim = " + num(kDim) + " from key " + ka.shapeString()
                + ", vdim = " + num(vDim) + " from value " + va.shapeString();
            c.qProjWeight = numericMatrix<T>(qw, "q_proj_weight", "d_model \u00d7 d_model");
            checkShape(qw, "q_proj_weight", dModel, dModel, "d_model \u00d7 d_model", kv);
            c.kProjWeight = numericMatrix<T>(kw, "k_proj_weight", "d_model \u00d7 kdim");
            checkShape(kw, "k_proj_weight", dModel, kDim, "d_model \u00d7 kdim", kv);
            c.vProjWeight = numericMatrix<T>(vw, "v_proj_weight", "d_model \u00d7 vdim");
            checkShape(vw, "v_proj_weight", dModel, vDim, "d_model \u00d7 vdim", kv);
        } else {
            const NpyArray &inWa = in.require("in_proj_weight", why);
            c.inProjWeight
                = numericMatrix<T>(inWa, "in_proj_weight", "3\u00b7d_model \u00d7 d_model");
            checkShape(inWa, "in_proj_weight", 3 * dModel, dModel,
                       "3\u00b7d_model \u00d7 d_model, [W_Q; W_K; W_V]", pdims);
        }
        const NpyArray &outWa = in.require("out_proj_weight", why);
        const NpyArray &ha = in.require("num_heads", why);
        c.outProjWeight = numericMatrix<T>(outWa, "out_proj_weight", "d_model \u00d7 d_model");
        checkShape(outWa, "out_proj_weight", dModel, dModel, "d_model \u00d7 d_model", pdims);
        const bool hasInBias = in.has("in_proj_bias"), hasOutBias = in.has("out_proj_bias");
        c.inProjBias = hasInBias
            ? numericVector<T>(*in.find("in_proj_bias"), "in_proj_bias", 3 * dModel)
            : Vector<T>::Zero(3 * dModel);
        c.outProjBias = hasOutBias
            ? numericVector<T>(*in.find("out_proj_bias"), "out_proj_bias", dModel)
            : Vector<T>::Zero(dModel);
        c.bias = hasInBias || hasOutBias;

        const bool scalar = ha.ndim() == 0 || (ha.ndim() == 1 && ha.shape[0] == 1);
        if (!scalar || !isInteger(ha.type))
            throw InvalidArgument("array 'num_heads' must be a 0-d integer array "
                                  "(np.array(4)), got "
                                  + describeArray(ha));
        // An integer in [1, d_model] before any cast (the value is a double, possibly 2^63).
        const double heads = ha.values.at(0);
        const bool inRange = heads >= 1 && heads <= double(dModel) && heads == std::floor(heads);
        if (!inRange || dModel % Index(heads) != 0)
            throw InvalidArgument("num_heads = " + num(heads)
                                  + " must be at least 1 and divide d_model = " + num(dModel)
                                  + " (an integer in [1, d_model]; " + pdims + ")");
        c.heads = Index(heads);
        for (const char *v : variantArrays)
            if (in.has(v))
                throw InvalidArgument("array " + quoted(v)
                                      + " is for already-projected heads (num_heads without "
                                        "in_proj_weight, or plain attention as one head): "
                                        "torch.nn.MultiheadAttention's layout has no learned "
                                        "sinks, second query or gate");
    } else {
        readVariants(in, c, dims);
    }
    c.unusedArrays = in.unknownNames();
    return c;
}

template<typename T>
TensorCase<T> loadTensorCase(const std::string &path, MaskConvention convention)
{
    return tensorCaseFromArrays<T>(readNpz(path), path, convention);
}

const MatrixD &WeightStack::at(Index layer, Index head) const
{
    if (layer < 0 || layer >= layers || head < 0 || head >= heads)
        throw InvalidArgument("WeightStack::at: (layer " + num(layer) + ", head " + num(head)
                              + ") is out of range for " + num(layers) + " layers \u00d7 "
                              + num(heads) + " heads");
    return weights[std::size_t(layer * heads + head)];
}

WeightStack weightStackFromArray(const NpyArray &array, const std::string &what)
{
    const int nd = array.ndim();
    if (nd < 2 || nd > 4)
        throw InvalidArgument("array '" + what + "' " + describeArray(array)
                              + " is not attention weights: expected (n_q, n_k), (h, n_q, n_k) "
                                "or (layers, h, n_q, n_k)");
    if (array.type == NpyType::Bool)
        throw InvalidArgument("array '" + what + "' must hold numbers (attention weights), got "
                              + describeArray(array));
    for (std::int64_t s : array.shape) {
        if (s <= 0)
            throw InvalidArgument("array '" + what + "' " + describeArray(array)
                                  + " has an empty axis; attention weights need at least one "
                                    "layer, head, query and key");
    }
    if (array.values.size() != std::size_t(array.size()))
        throw InvalidArgument("array '" + what + "': shape " + array.shapeString()
                              + " does not match " + std::to_string(array.values.size())
                              + " values");
    WeightStack s;
    s.type = array.type;
    s.queries = array.shape[std::size_t(nd - 2)];
    s.keys = array.shape[std::size_t(nd - 1)];
    s.heads = nd >= 3 ? array.shape[std::size_t(nd - 3)] : 1;
    s.layers = nd == 4 ? array.shape[0] : 1;
    const Index cells = s.queries * s.keys;
    s.weights.reserve(std::size_t(s.layers * s.heads));
    for (Index k = 0; k < s.layers * s.heads; ++k) {
        // weights of matrix k: n_q × n_k, C order, starting at k · n_q · n_k
        MatrixD m(s.queries, s.keys);
        std::copy_n(array.values.data() + std::size_t(k * cells), std::size_t(cells), m.data());
        s.weights.push_back(std::move(m));
    }
    return s;
}

std::string defaultWeightArray(const NamedArrays &arrays)
{
    for (const char *name : weightArrayNames) {
        for (const auto &[n, a] : arrays) {
            if (n == name)
                return n;
        }
    }
    return arrays.size() == 1 ? arrays.front().first : std::string();
}

std::string RowSumCheck::text() const
{
    auto g = [](double v) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.2g", v);
        return std::string(buffer);
    };
    if (rows == 0)
        return "no rows to check";
    std::string where
        = " at layer " + num(worstLayer) + ", head " + num(worstHead) + ", row " + num(worstRow);
    if (ok())
        return "all " + num(rows) + " rows sum to 1 within " + g(tolerance)
            + " (worst |Σw − 1| = " + g(worstError) + ")";
    std::string text;
    if (badRows > 0)
        text = num(badRows) + " of " + num(rows) + " rows do not sum to 1 within " + g(tolerance)
            + " (worst |Σw − 1| = " + g(worstError) + where + ")";
    if (negativeRows > 0)
        text += (text.empty() ? "" : "; ") + num(negativeRows) + " rows hold negative weights";
    return text;
}

double rowSumTolerance(NpyType type, Index keys)
{
    double t = 1e-6;
    if (type == NpyType::Float32)
        t += 4.0 * double(keys) * std::ldexp(1.0, -24);
    return t;
}

RowSumCheck checkRowSums(const WeightStack &stack, double tolerance)
{
    RowSumCheck c;
    c.tolerance = tolerance;
    bool first = true;
    for (Index l = 0; l < stack.layers; ++l) {
        for (Index h = 0; h < stack.heads; ++h) {
            const MatrixD &w = stack.at(l, h);
            for (Index i = 0; i < w.rows(); ++i) {
                ++c.rows;
                const double error = std::abs(w.row(i).sum() - 1.0);
                if (first || error > c.worstError) {
                    c.worstError = error;
                    c.worstLayer = l, c.worstHead = h, c.worstRow = i;
                    first = false;
                }
                if (error > tolerance)
                    ++c.badRows;
                if ((w.row(i).array() < 0.0).any())
                    ++c.negativeRows;
            }
        }
    }
    return c;
}

std::pair<double, double> finiteWeightRange(const WeightStack &stack)
{
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const MatrixD &w : stack.weights) {
        for (Index k = 0; k < w.size(); ++k) {
            const double v = w.data()[k];
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    }
    return lo <= hi ? std::pair {lo, hi} : std::pair {0.0, 0.0};
}

namespace {

/// Most matrices (layers · heads) a stack may hold.
constexpr std::uint64_t kMaxStackMatrices = 4096;

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    NpyArray a;
    a.shape = shape;
    return a.shapeString();
}

} // namespace

void checkAttentionStackHeaders(const std::vector<std::pair<std::string, NpyHeader>> &headers,
                                std::uint64_t budgetBytes, const std::string &source)
{
    const NpyHeader *stack = nullptr;
    for (const auto &[name, header] : headers) {
        if (name == attentionStackArray)
            stack = &header;
        if (name == attentionTokensArray && (header.stringChars == 0 || header.shape.size() != 1))
            throw InvalidArgument(std::string("array 'tokens' must be a 1-d array of strings "
                                              "(numpy dtype '<U…'), got ")
                                  + (header.stringChars > 0 ? "strings" : npyTypeName(header.type))
                                  + " " + shapeText(header.shape));
    }
    if (!stack)
        throw InvalidArgument(source + " has no array 'attentions'");
    const std::string what = "array 'attentions' " + std::string(npyTypeName(stack->type)) + " "
        + shapeText(stack->shape);
    const std::size_t nd = stack->shape.size();
    if (stack->stringChars > 0 || stack->type == NpyType::Bool)
        throw InvalidArgument("array 'attentions' must hold numbers (attention weights)");
    if (nd != 4 && nd != 5)
        throw InvalidArgument(what
                              + " is not a stack of attention weights: expected (layers, heads, "
                                "n_q, n_k) or (layers, batch, heads, n_q, n_k)");
    for (std::int64_t d : stack->shape) {
        if (d <= 0)
            throw InvalidArgument(what + " has an empty axis");
    }
    const std::uint64_t layers = std::uint64_t(stack->shape[0]);
    const std::uint64_t heads = std::uint64_t(stack->shape[nd - 3]);
    if (layers * heads > kMaxStackMatrices)
        throw InvalidArgument(what + " holds " + std::to_string(layers * heads)
                              + " matrices (layers × heads), more than the "
                              + std::to_string(kMaxStackMatrices) + " the model view shows");
    // Read: stored bytes + 8 per value; kept: one item's matrices as float64.
    const std::uint64_t item = stack->count / (nd == 5 ? std::uint64_t(stack->shape[1]) : 1);
    const std::uint64_t need = stack->dataBytes + stack->count * 8 + item * 8;
    if (need > budgetBytes)
        throw InvalidArgument(what + " needs " + std::to_string(need >> 20)
                              + " MiB to read (as stored, as float64 and one item's matrices), "
                                "over the budget of "
                              + std::to_string(budgetBytes >> 20)
                              + " MiB; nothing was decompressed");
}

Index attentionStackBatchSize(const NamedArrays &arrays)
{
    for (const auto &[name, a] : arrays) {
        if (name == attentionStackArray && a.ndim() == 5)
            return a.shape[1];
    }
    return 0;
}

AttentionStack attentionStackFromArrays(const NamedArrays &arrays, const NpzStrings &strings,
                                        Index batch)
{
    const NpyArray *array = nullptr;
    for (const auto &[name, a] : arrays) {
        if (name == attentionStackArray)
            array = &a;
    }
    if (!array)
        throw InvalidArgument("no array 'attentions' (layers, heads, n_q, n_k)");
    const int nd = array->ndim();
    if (nd != 4 && nd != 5)
        throw InvalidArgument("array 'attentions' " + describeArray(*array)
                              + " is not a stack of attention weights: expected (layers, heads, "
                                "n_q, n_k) or (layers, batch, heads, n_q, n_k)");
    AttentionStack out;
    out.batchCount = nd == 5 ? array->shape[1] : 0;
    if (batch < 0 || batch >= std::max<Index>(out.batchCount, 1))
        throw InvalidArgument("batch item " + num(batch) + " is out of range: "
                              + (nd == 5
                                     ? "the attentions hold B = " + num(out.batchCount)
                                         + " items (0 … " + num(out.batchCount - 1) + ")"
                                     : std::string("the attentions have no batch axis (item 0)")));
    out.batch = batch;
    NpyArray item;
    if (nd == 5) {
        // (L, B, H, n_q, n_k) → (L, H, n_q, n_k) of item `batch`.
        const std::int64_t L = array->shape[0], B = array->shape[1];
        const std::int64_t block = array->shape[2] * array->shape[3] * array->shape[4];
        if (array->values.size() != std::size_t(array->size()))
            throw InvalidArgument("array 'attentions': shape does not match its values");
        item.type = array->type;
        item.shape = {L, array->shape[2], array->shape[3], array->shape[4]};
        item.values.resize(std::size_t(L * block));
        for (std::int64_t l = 0; l < L; ++l)
            std::copy_n(array->values.data() + std::size_t((l * B + batch) * block),
                        std::size_t(block), item.values.data() + std::size_t(l * block));
        array = &item;
    }
    out.weights = weightStackFromArray(*array, attentionStackArray);
    const WeightStack &s = out.weights;
    for (Index l = 0; l < s.layers; ++l) {
        for (Index h = 0; h < s.heads; ++h) {
            const MatrixD &w = s.at(l, h);
            for (Index i = 0; i < w.rows(); ++i) {
                for (Index j = 0; j < w.cols(); ++j) {
                    const double v = w(i, j);
                    if (!std::isfinite(v))
                        throw InvalidArgument("array 'attentions' holds " + num(v) + " at layer "
                                              + num(l) + ", head " + num(h) + ", query " + num(i)
                                              + ", key " + num(j)
                                              + ": attention weights must be finite");
                }
            }
        }
    }
    out.rowSums = checkRowSums(s, rowSumTolerance(s.type, s.keys));
    for (const auto &[name, t] : strings) {
        if (name != attentionTokensArray)
            continue;
        if (t.shape.size() != 1)
            throw InvalidArgument("array 'tokens' must be 1-d (one string per position), got "
                                  "shape "
                                  + shapeText(t.shape));
        const Index expected = s.queries == s.keys ? s.queries : s.queries + s.keys;
        if (Index(t.values.size()) != expected)
            throw InvalidArgument(
                "array 'tokens' holds " + num(Index(t.values.size())) + " strings but the "
                + "attentions need " + num(expected)
                + (s.queries == s.keys ? " (n = " + num(s.queries) + ", one per position)"
                                       : " (n_q = " + num(s.queries)
                           + " query tokens, then n_k = " + num(s.keys) + " key tokens)"));
        out.tokens = t.values;
    }
    for (const auto &[name, a] : arrays) {
        if (name == attentionTokensArray)
            throw InvalidArgument("array 'tokens' must hold strings (numpy dtype '<U…'), got "
                                  + describeArray(a));
    }
    return out;
}

AttentionStack loadAttentionStack(const std::string &path, Index batch, std::uint64_t budgetBytes)
{
    checkAttentionStackHeaders(readNpzHeaders(path, true), budgetBytes, path);
    NpzStrings strings;
    const NamedArrays arrays = readNpz(path, std::numeric_limits<std::uint64_t>::max(), &strings);
    return attentionStackFromArrays(arrays, strings, batch);
}

template struct TensorCase<float>;
template struct TensorCase<double>;
template TensorCase<float> tensorCaseFromArrays<float>(const NamedArrays &, const std::string &,
                                                       MaskConvention);
template TensorCase<double> tensorCaseFromArrays<double>(const NamedArrays &, const std::string &,
                                                         MaskConvention);
template TensorCase<float> loadTensorCase<float>(const std::string &, MaskConvention);
template TensorCase<double> loadTensorCase<double>(const std::string &, MaskConvention);

} // namespace attn
