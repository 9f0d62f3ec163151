#pragma once
// Internal helpers shared by attention.cpp and the kernels (not part of the API).

#include "core/attention/mask.h"
#include "core/base/types.h"
#include "core/kernels/kernels.h"

#include <cstddef>
#include <string>

namespace attn::detail {

/// Throws InvalidArgument naming both shapes unless query (n_q × d_k), key (n_k × d_k) and
/// value (n_k × d_v) fit together and the mask fits n_q × n_k. `who` prefixes the message.
void checkAttentionShapes(Index qRows, Index qCols, Index kRows, Index kCols, Index vRows,
                          Index vCols, const AttentionMask &mask, const char *who);

/// Throws NonFiniteInput naming `name`, the row, the column and the value of the first NaN/Inf.
template<typename T>
void checkFiniteInput(const ConstMatrixRef<T> &m, const char *name, const char *who);

/// checkFiniteInput of query, key and value, in that order.
template<typename T>
void checkFiniteInputs(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                       const ConstMatrixRef<T> &value, const char *who)
{
    checkFiniteInput<T>(query, "query", who);
    checkFiniteInput<T>(key, "key", who);
    checkFiniteInput<T>(value, "value", who);
}

/// The argument check of every attention kernel: checkAttentionShapes, then checkFiniteInputs.
template<typename T>
void checkAttentionInputs(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                          const ConstMatrixRef<T> &value, const AttentionMask &mask,
                          const char *who)
{
    checkAttentionShapes(query.rows(), query.cols(), key.rows(), key.cols(), value.rows(),
                         value.cols(), mask, who);
    checkFiniteInputs<T>(query, key, value, who);
}

/// Applies `mask` to the tile of scaled scores for queries [i0, i0 + rows) and keys
/// [j0, j0 + cols) of an n_q × n_k attention: adds the additive term, then writes `fill` into
/// every masked cell. `tile` points at cell (i0, j0) and rows are `ld` elements apart.
template<typename T>
void applyMaskTile(T *tile, Index ld, Index i0, Index rows, Index j0, Index cols,
                   const AttentionMask &mask, T fill);

/// Scratch memory reused between kernel calls (see releaseKernelWorkspace()). Holds at least the
/// requested bytes, 64-byte aligned, contents unspecified; returned to the cache on destruction.
/// Thread-safe: concurrent callers get different buffers.
class ScratchBuffer
{
public:
    explicit ScratchBuffer(std::size_t bytes);
    ~ScratchBuffer();
    ScratchBuffer(const ScratchBuffer &) = delete;
    ScratchBuffer &operator=(const ScratchBuffer &) = delete;
    void *data() const { return m_data; }
    std::size_t bytes() const { return m_bytes; }

private:
    void *m_data = nullptr;
    std::size_t m_bytes = 0;
};

} // namespace attn::detail
