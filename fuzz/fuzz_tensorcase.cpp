// libFuzzer target: the tensor case (core/io/tensorcase.h) behind `attnlab compute` and Open
// Tensors, on named arrays decoded from the input, then the attention it describes.
//
// Input: records of [name index (1 byte)][length (2 bytes, little-endian)][.npy image], the
// name taken from the arrays a tensor file may hold. Each image goes through parseNpy; the
// arrays read become the case (PyTorch's layout, plain attention or already-projected heads
// with num_heads and num_kv_heads), after taking the last item of a leading batch axis. Every input
// must end in a result or in InvalidArgument, NpyError or NonFiniteInput.

#include "core/attention/attention.h"
#include "core/attention/groupedattention.h"
#include "core/attention/multihead.h"
#include "core/io/npy.h"
#include "core/io/tensorcase.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

const char *const kNames[] = {
    "query",           "key",           "value",         "in_proj_weight", "in_proj_bias",
    "out_proj_weight", "out_proj_bias", "num_heads",     "attn_mask",      "key_padding_mask",
    "weights",         "q_proj_weight", "k_proj_weight", "v_proj_weight",  "num_kv_heads",
};
constexpr std::size_t kNameCount = sizeof kNames / sizeof kNames[0];

template<typename T> void run(const attn::NamedArrays &arrays, attn::MaskConvention convention)
{
    const attn::TensorCase<T> c = attn::tensorCaseFromArrays<T>(arrays, "input", convention);
    // Keep each input fast: the sizes are bounded by the reader, not by a fuzzing budget.
    const double cells = double(c.queryCount()) * double(c.keyCount()) * double(c.heads);
    const double rows = double(c.queryCount() + c.keyCount()) * double(c.dModel());
    if (cells > 1e5 || rows > 1e5)
        return;
    if (c.multihead) {
        const attn::MultiheadResult<T> r = c.layer().forward(c.query, c.key, c.value, c.mask);
        if (r.output.rows() != c.queryCount() || r.weights.size() != std::size_t(c.heads))
            std::abort();
    } else if (c.projectedHeads) { // query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v
        const attn::GroupedAttentionResult<T> r
            = attn::groupedQueryAttention<T>(c.query, c.key, c.value, c.heads, c.kvHeads, c.mask);
        if (r.weights.size() != std::size_t(c.heads))
            std::abort();
    } else {
        const attn::AttentionResult<T> r
            = attn::scaledDotProductAttention<T>(c.query, c.key, c.value, c.mask);
        if (r.output.rows() != c.queryCount() || r.weights.cols() != c.keyCount())
            std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    attn::NamedArrays arrays;
    std::size_t pos = 0;
    bool allowed = false;
    while (pos + 3 <= size) {
        const std::size_t name = data[pos] % (kNameCount + 1);
        const std::size_t length = std::size_t(data[pos + 1]) | (std::size_t(data[pos + 2]) << 8);
        pos += 3;
        const std::size_t n = std::min(length, size - pos);
        if (name == kNameCount) { // a switch, not an array: the mask convention
            allowed = !allowed;
        } else {
            try {
                arrays.emplace_back(kNames[name], attn::parseNpy(data + pos, n, kNames[name]));
            } catch (const attn::NpyError &) { }
        }
        pos += n;
    }
    const auto convention = allowed ? attn::MaskConvention::Allowed : attn::MaskConvention::Masked;
    // A leading batch axis (B, n, E): the last item is the case; item B must be refused.
    try {
        const attn::Index batch = attn::tensorBatchSize(arrays);
        if (batch > 0) {
            bool refused = false;
            try {
                attn::tensorBatchItem(arrays, batch);
            } catch (const attn::InvalidArgument &) {
                refused = true;
            }
            if (!refused)
                std::abort(); // an item past the end was sliced
            arrays = attn::tensorBatchItem(arrays, batch - 1);
        }
    } catch (const attn::InvalidArgument &) {
        return 0;
    }
    for (const auto &[name, array] : arrays) {
        try {
            attn::weightStackFromArray(array, name);
        } catch (const attn::InvalidArgument &) { }
    }
    attn::defaultWeightArray(arrays);
    attn::hasTensorCase(arrays);
    try {
        run<double>(arrays, convention);
    } catch (const attn::InvalidArgument &) {
    } catch (const attn::NonFiniteInput &) {
    } catch (const attn::NpyError &) { }
    try {
        run<float>(arrays, convention);
    } catch (const attn::InvalidArgument &) {
    } catch (const attn::NonFiniteInput &) {
    } catch (const attn::NpyError &) { }
    return 0;
}
