// Encode speed of core/text tokenizers: a model folder's tokenizer on a text file, each line
// encoded as one text (gpt-3-encoder, a reference, appends ids in a way that is quadratic in
// the tokens of one text), timed over several runs (the first run fills the BPE word cache and
// is reported apart).
//   attn_bench_tokenizers MODEL_DIR TEXT_FILE [--repeat N]
// Prints the tokens and MB/s of the first run and the best of the others. bench/
// compare_tokenizers.sh runs it beside the JavaScript references on the same 1 MB of text.

#include "core/text/loader.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL_DIR TEXT_FILE [--repeat N]\n", argv[0]);
        return 2;
    }
    int repeat = 5;
    if (argc >= 5 && std::string(argv[3]) == "--repeat") {
        repeat = std::max(1, std::atoi(argv[4]));
    }
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot open %s\n", argv[2]);
        return 1;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = std::move(buffer).str();
    using Clock = std::chrono::steady_clock;
    try {
        const auto t0 = Clock::now();
        const auto tok = attn::text::loadTokenizer(argv[1]);
        const double loadS = std::chrono::duration<double>(Clock::now() - t0).count();
        double first = 0, best = 1e30;
        std::size_t tokens = 0;
        for (int r = 0; r <= repeat; ++r) {
            const auto t = Clock::now();
            tokens = 0;
            std::size_t at = 0;
            while (at < text.size()) {
                std::size_t end = text.find('\n', at);
                if (end == std::string::npos) {
                    end = text.size();
                }
                tokens += tok->encodeIds(std::string_view(text).substr(at, end - at)).size();
                at = end + 1;
            }
            const double s = std::chrono::duration<double>(Clock::now() - t).count();
            if (r == 0) {
                first = s;
            } else {
                best = std::min(best, s);
            }
        }
        const double mb = double(text.size()) / 1e6;
        std::printf("%s: load %.2f s; %zu bytes -> %zu tokens; first run %.1f ms (%.1f MB/s), "
                    "best of %d %.1f ms (%.1f MB/s)\n",
                    tok->description().c_str(), loadS, text.size(), tokens, first * 1e3, mb / first,
                    repeat, best * 1e3, mb / best);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
