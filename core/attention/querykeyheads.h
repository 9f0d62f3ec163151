#pragma once
// The queries and keys a multi-head layer scores, before the scores: what the session engine's
// stage 1 (core/engine/sessionengine.cpp) and the tile engine's input
// (ui/session/pooledsession.cpp) both take from a layer. Header-only: two callers.

#include "core/attention/groupedattention.h"
#include "core/attention/multihead.h"
#include "core/base/blas.h"
#include "core/base/types.h"

#include <string>

namespace attn {

/// q n_q × d_model and k n_k × g·d_k; head i of q is columns i·d_k … (i+1)·d_k − 1, and query
/// head i reads key head ⌊i·g/h⌋.
template<typename T> struct QueryKeyHeads
{
    Matrix<T> query;
    Matrix<T> key;
};

/// q = query · W_Qᵀ + b_Q and k = key · W_Kᵀ + b_K of `layer`'s in_proj_weight
/// (torch.nn.MultiheadAttention's in_projection_packed), then, for g = kvHeads < h, each group
/// of h/g key heads replaced by its mean (meanPoolHeads: grouped-query attention, Ainslie et
/// al. 2023, §2.2, checkpoint conversion by mean pooling). RoPE, where wanted, is the caller's
/// next step (applyRopeHeads on q with h heads and on k with g). query n_q × d_model, key
/// n_k × d_model. Throws InvalidArgument when a width is not d_model, or what meanPoolHeads
/// throws for a g that does not divide h.
template<typename T>
QueryKeyHeads<T> groupedQueryKey(const MultiheadAttention<T> &layer, const ConstMatrixRef<T> &query,
                                 const ConstMatrixRef<T> &key, Index kvHeads)
{
    const Index d = layer.dModel(), h = layer.heads();
    if (query.cols() != d || key.cols() != d)
        throw InvalidArgument("groupedQueryKey: query " + shapeString(query.rows(), query.cols())
                              + " and key " + shapeString(key.rows(), key.cols())
                              + " must have d_model = " + std::to_string(d) + " columns");
    const Matrix<T> &w = layer.inProjWeight();
    const Vector<T> &b = layer.inProjBias();
    QueryKeyHeads<T> out {Matrix<T>(query.rows(), d), Matrix<T>(key.rows(), d)};
    gemmTransposed<T>(query, w.topRows(d), out.query); // core/base/blas.h
    gemmTransposed<T>(key, w.middleRows(d, d), out.key);
    out.query.rowwise() += b.segment(0, d).transpose();
    out.key.rowwise() += b.segment(d, d).transpose();
    const Index g = kvHeads > 0 ? kvHeads : h;
    if (g != h)
        out.key = meanPoolHeads<T>(out.key, h, g); // n_k × g·d_k
    return out;
}

} // namespace attn
