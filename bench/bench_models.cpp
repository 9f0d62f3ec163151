// Times the float32 forward pass of a Hugging Face checkpoint (core/models/forward.h): loads the
// model once, runs one untimed warm-up forward, then --repeat timed forwards of the same token
// ids keeping every layer's and head's attention weights (as Hugging Face's
// output_attentions=True; --keep-weights none keeps none). Prints one JSON object: load time,
// median and minimum seconds per forward, the threads and BLAS kernels used, the bytes of the
// weights and the process's peak resident set (VmHWM of /proc/self/status: this program's own
// address space since its exec; the mapped weights count as they are touched).
// bench/bench_models.py runs it beside the same forward in PyTorch. Threads follow
// OMP_NUM_THREADS. As bench_training does, it runs OpenBLAS's better kernels where OpenBLAS fell
// back to SSE3 (core/base/blas.h betterBlasCore; --keep-blas-core measures OpenBLAS's choice).
//
//   attn_bench_models --model DIR (--ids 1,2,3 | --n 128 [--seed 0]) [--repeat 5]
//                     [--keep-weights all|none] [--last-logits] [--long-view]
//                     [--logits-out FILE.npy] [--keep-blas-core]
//
// --last-logits computes only the last position's logits (ForwardOptions::lastLogitsOnly), as
// the window's next-token readout does. --long-view then draws two heads (layer 0 head 0, the
// last layer's last head) as the Long tab does: a tile engine on the head's kept queries and
// keys with the layer's mask, the whole n × n map max-pooled into 1024 × 1024 pixels; it adds
// the seconds per map and the bytes of the kept queries and keys to the JSON.
//
// --logits-out writes the last forward's logits (n × vocab, float32 '<f4', C order) as a .npy
// file, for comparing the numbers with another implementation.

#include "bench/benchblas.h"
#include "core/base/blas.h"
#include "core/base/threads.h"
#include "core/models/forward.h"
#include "core/models/model.h"
#include "core/tiles/tileengine.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

using namespace attn;
using namespace attn::models;

namespace {

std::string argText(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], name))
            return argv[i + 1];
    return fallback;
}

long argValue(int argc, char **argv, const char *name, long fallback)
{
    const std::string text = argText(argc, argv, name, "");
    return text.empty() ? fallback : std::strtol(text.c_str(), nullptr, 10);
}

std::vector<std::int64_t> parseIds(const std::string &text)
{
    std::vector<std::int64_t> ids;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        ids.push_back(std::strtoll(item.c_str(), nullptr, 10));
    return ids;
}

// Writes a float32 row-major matrix as a version 1.0 .npy file.
void writeNpy(const std::string &path, const MatrixF &m)
{
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': ("
        + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "), }";
    // magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64
    const std::size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header.push_back('\n');
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const std::uint16_t length = std::uint16_t(header.size());
    const char le[2] = {char(length & 0xff), char(length >> 8)};
    out.write(le, 2);
    out.write(header.data(), std::streamsize(header.size()));
    out.write(reinterpret_cast<const char *>(m.data()), std::streamsize(m.size() * 4));
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

// Peak resident set of this process's address space in bytes: VmHWM of /proc/self/status.
// getrusage's ru_maxrss is not used: across execve it keeps the high-water mark of the forked
// parent's address space (a Python benchmark driver holding a model), so it overstates.
long long peakResidentBytes()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::atoll(line.c_str() + 6) * 1024;
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<long long>(usage.ru_maxrss) * 1024;
}

double median(std::vector<double> t)
{
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
}

} // namespace

int main(int argc, char **argv)
{
    bench::rerunWithBetterBlasCore(argc, argv);

    const std::string dir = argText(argc, argv, "--model", "");
    const std::string keep = argText(argc, argv, "--keep-weights", "all");
    const std::string logitsOut = argText(argc, argv, "--logits-out", "");
    const int repeat = int(argValue(argc, argv, "--repeat", 5));
    if (dir.empty() || repeat < 1 || (keep != "all" && keep != "none")) {
        std::fprintf(stderr,
                     "attn_bench_models: --model DIR (--ids 1,2,3 | --n N [--seed S]) "
                     "[--repeat R >= 1] [--keep-weights all|none] [--logits-out F.npy]\n");
        return 2;
    }
    try {
        const auto loadStart = std::chrono::steady_clock::now();
        const Model model = Model::open(dir);
        const double loadSeconds
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - loadStart).count();
        const ModelConfig &c = model.config();

        std::vector<std::int64_t> ids = parseIds(argText(argc, argv, "--ids", ""));
        if (ids.empty()) {
            const long n = argValue(argc, argv, "--n", 0);
            if (n < 1) {
                std::fprintf(stderr, "attn_bench_models: give --ids or --n >= 1\n");
                return 2;
            }
            std::mt19937_64 rng(std::uint64_t(argValue(argc, argv, "--seed", 0)));
            std::uniform_int_distribution<std::int64_t> pick(0, c.vocabSize - 1);
            for (long i = 0; i < n; ++i)
                ids.push_back(pick(rng));
        }

        bool lastLogits = false, longView = false;
        for (int i = 1; i < argc; ++i) {
            lastLogits = lastLogits || !std::strcmp(argv[i], "--last-logits");
            longView = longView || !std::strcmp(argv[i], "--long-view");
        }
        ForwardOptions options;
        options.lastLogitsOnly = lastLogits;
        if (keep == "all")
            options.keepWeights = [](Index, Index) { return true; };
        std::vector<double> seconds;
        ForwardResult result;
        for (int r = 0; r <= repeat; ++r) {
            result = ForwardResult(); // free the previous result before the next forward
            const auto start = std::chrono::steady_clock::now();
            result = forward(model, ids, options);
            const double s
                = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (r > 0) // the first forward faults the mapped weights in and warms the threads
                seconds.push_back(s);
        }
        if (!logitsOut.empty())
            writeNpy(logitsOut, result.logits);

        // The Long tab's first map of two heads, from the kept queries and keys.
        double viewSeconds = 0;
        std::size_t keptBytes = 0;
        for (const LayerAttention &l : result.layers)
            for (const auto *group : {&l.queries, &l.keys})
                for (const MatrixF &m : *group)
                    keptBytes += std::size_t(m.size()) * sizeof(float);
        if (longView) {
            const Index n = Index(ids.size());
            const std::pair<Index, Index> heads[] = {{0, 0}, {c.layers - 1, c.heads - 1}};
            for (const auto &[layer, head] : heads) {
                const LayerAttention &l = result.layers[std::size_t(layer)];
                const auto start = std::chrono::steady_clock::now();
                TileEngine<float> engine(l.queries[std::size_t(head)],
                                         l.keys[std::size_t(result.kvHeadOf(head, c.heads))], 1,
                                         layerMask(c, layer, n));
                const PooledTile<float> map
                    = engine.render(0, engine.fullWindow(), 1024, 1024, TilePooling::Max);
                viewSeconds
                    += std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                           .count()
                    / 2;
                if (map.values.size() == 0)
                    throw std::runtime_error("the long view drew an empty map");
            }
        }
        std::printf("{\"view_seconds\": %.6g, \"kept_qk_bytes\": %zu, ", viewSeconds, keptBytes);
        std::printf("\"n\": %zu, \"layers\": %ld, \"heads\": %ld, \"keep_weights\": \"%s\", "
                    "\"threads\": %ld, \"blas\": \"%s\", \"blas_core\": \"%s\", "
                    "\"weight_bytes\": %llu, \"load_seconds\": %.6g, \"seconds_median\": %.9g, "
                    "\"seconds_min\": %.9g, \"repeat\": %d, \"peak_rss_bytes\": %lld}\n",
                    ids.size(), long(c.layers), long(c.heads), keep.c_str(), long(kernelThreads()),
                    std::string(blasName()).c_str(), blasCoreName().c_str(),
                    static_cast<unsigned long long>(model.weightBytes()), loadSeconds,
                    median(seconds), *std::min_element(seconds.begin(), seconds.end()), repeat,
                    peakResidentBytes());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "attn_bench_models: %s\n", e.what());
        return 1;
    }
    return 0;
}
