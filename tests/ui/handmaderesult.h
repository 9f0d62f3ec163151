#pragma once
// Hand-made SessionResults for renderer and widget tests: known weights, no computation.

#include "core/analysis/metrics.h"
#include "ui/session/sessioncompute.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace attn::test {

// A hand-made result: h heads of nQ × nK weights value(head, i, j), scores = 10·w, scaled scores
// 5·w (−inf where masked), the given mask states; rows with every key masked are flagged.
template<typename F>
inline std::shared_ptr<SessionResult> makeResult(int h, int nQ, int nK, F value,
                                                 const MatrixB &state = MatrixB())
{
    auto r = std::make_shared<SessionResult>();
    r->params.kind = nQ == nK ? AttentionKind::EncoderSelf : AttentionKind::EncoderDecoder;
    r->params.n = nQ;
    r->params.nK = nK;
    r->params.heads = h;
    r->params.dModel = 4 * h;
    r->maskState = state.size() ? state : MatrixB::Zero(nQ, nK);
    std::vector<std::uint8_t> flags(std::size_t(nQ), 0);
    for (int i = 0; i < nQ; ++i)
        flags[std::size_t(i)] = (r->maskState.row(i).array() != 0).all() ? 1 : 0;
    r->weightsMean = MatrixD::Zero(nQ, nK);
    for (int head = 0; head < h; ++head) {
        MatrixD w(nQ, nK);
        for (int i = 0; i < nQ; ++i)
            for (int j = 0; j < nK; ++j)
                w(i, j) = value(head, i, j);
        r->weights.push_back(w);
        r->scores.push_back(10.0 * w);
        MatrixD scaled = 5.0 * w;
        for (int i = 0; i < nQ; ++i)
            for (int j = 0; j < nK; ++j)
                if (r->maskState(i, j))
                    scaled(i, j) = -std::numeric_limits<double>::infinity();
        r->scaledScores.push_back(scaled);
        r->weightsMean += w / h;
        r->fullyMasked.push_back(flags);
        r->metrics.push_back(rowMetrics(w, flags));
    }
    return r;
}

} // namespace attn::test
