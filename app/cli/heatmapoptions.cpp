// The option table of attnlab heatmap and attnlab animate, with the help text of every option.

#include "common.h"
#include "heatmaprequest.h"

#include "ui/render/playframes.h"

namespace attn::cli {

/// The model and input options of heatmap and animate.
QList<QCommandLineOption> heatmapModelOptions()
{
    return {
        {QStringLiteral("n"),
         QStringLiteral("Query count n (1-65536; beyond 4096 the view comes from the tile "
                        "engine, see --compute)."),
         QStringLiteral("n"), QStringLiteral("8")},
        {QStringLiteral("d-model"), QStringLiteral("Model width d_model (1-4096)."),
         QStringLiteral("d"), QStringLiteral("16")},
        {QStringLiteral("heads"), QStringLiteral("Head count h, a divisor of d_model."),
         QStringLiteral("h"), QStringLiteral("4")},
        {QStringLiteral("seed"),
         QStringLiteral("Seed of numpy.random.default_rng (or of torch.manual_seed)."),
         QStringLiteral("seed"), QStringLiteral("0")},
        {QStringLiteral("generator"),
         QStringLiteral("Random streams of the layer and inputs: numpy (numpy.random.default_rng: "
                        "xavier init, then standard_normal) or torch (torch.manual_seed: "
                        "nn.MultiheadAttention's default init, then torch.randn(1, n, d) in "
                        "--dtype)."),
         QStringLiteral("numpy|torch"), QStringLiteral("numpy")},
        {QStringLiteral("kind"),
         QStringLiteral("encoder (self-attention), decoder (causal self-attention) or cross "
                        "(encoder-decoder attention, n_q = n queries over --n-k keys)."),
         QStringLiteral("kind"), QStringLiteral("encoder")},
        {QStringLiteral("n-k"), QStringLiteral("Key count for --kind cross (1-65536, as --n)."),
         QStringLiteral("n_k"), QStringLiteral("10")},
        {QStringLiteral("compute"),
         QStringLiteral(
             "full (every head's n_q x n_k weights and scores in float64, as the "
             "window), tiles (the tile engine: each head and the mean pooled to at "
             "most 1024 x 1024 pixels straight from the queries and keys, exact max "
             "or mean of each pixel's unmasked cells, without the n_q x n_k matrices; --view "
             "grid or head only) or auto (tiles when the full matrices would take "
             "more than 256 MiB or n > 4096)."),
         QStringLiteral("mode"), QStringLiteral("auto")},
        {QStringLiteral("mask"),
         QStringLiteral("none, causal or padding (the last --padding keys)."),
         QStringLiteral("mask"), QStringLiteral("none")},
        {QStringLiteral("padding"),
         QStringLiteral("Padding key count for --mask padding, 0 to n_k (the default is kept "
                        "within n_k)."),
         QStringLiteral("m"), QStringLiteral("2")},
        {QStringLiteral("alpha"),
         QStringLiteral("Scale exponent: scale = d_k^-alpha / temperature (0.5 = 1/sqrt(d_k), "
                        "0 = unscaled)."),
         QStringLiteral("alpha"), QStringLiteral("0.5")},
        {QStringLiteral("temperature"), QStringLiteral("Softmax temperature (> 0)."),
         QStringLiteral("tau"), QStringLiteral("1")},
        {QStringLiteral("sink-logit"),
         QStringLiteral("A learned sink in every head (gpt-oss): exp(B) joins each softmax "
                        "denominator, so rows sum to 1 - sink mass; -50 ... 50. Not with "
                        "--differential-lambda."),
         QStringLiteral("B")},
        {QStringLiteral("differential-lambda"),
         QStringLiteral("Differential attention (Ye et al. 2025): weights A1 - L*A2, A2 from a "
                        "second layer's queries and keys drawn after the inputs; -1 ... 2, one "
                        "value for every head or h values separated by commas (one per head). "
                        "The weights are signed: RdBu_r centred on 0 over [-m, m], m the "
                        "largest |w|; --scale log gives a symmetric log scale, linear within "
                        "m*1e-5 (--range fixed and --colormap do not apply)."),
         QStringLiteral("L")},
        {QStringLiteral("gate-bias"),
         QStringLiteral("A head-wise output gate (Qiu et al. 2025): head u's output row i times "
                        "sigmoid(x_i . w_u + B), w drawn after the inputs; the map shows the gated "
                        "weights (rows sum to the gate); -50 ... 50."),
         QStringLiteral("B")},
        {QStringLiteral("latent-dim"),
         QStringLiteral("Multi-head latent attention (DeepSeek-V2): keys and values from a latent "
                        "of D_C values per token and a RoPE key of --latent-rope-dim values "
                        "shared by the heads, projections drawn after the inputs; 1 ... 4096. "
                        "Self-attention; not with RoPE, ALiBi, --kv-heads or "
                        "--differential-lambda."),
         QStringLiteral("D_C")},
        {QStringLiteral("latent-rope-dim"),
         QStringLiteral("The width d_r of MLA's shared RoPE key (even, 2 ... 1024); the scale is "
                        "(d_k + d_r)^-alpha."),
         QStringLiteral("D_R"), QStringLiteral("8")},
        {QStringLiteral("latent-absorbed"),
         QStringLiteral("Compute MLA with W_UK absorbed into the query (scored against the "
                        "cache) rather than decompressing the keys: the same weights.")},
        {QStringLiteral("dtype"), QStringLiteral("float32 or float64."), QStringLiteral("dtype"),
         QStringLiteral("float64")},
        {QStringLiteral("view"),
         QStringLiteral("grid (every head and the mean), head (one), model (with --in: every "
                        "layer and head of a stack of weights as thumbnails on one colour scale), "
                        "steps (one head's raw scores, scaled and masked scores and weights side "
                        "by side), compare (the window's A/B view: A, a configuration B set by "
                        "--compare, B - A and a table of metric deltas), tokens (the Tokens tab's "
                        "head view: queries left, keys right, a line per head from query i to key "
                        "j with opacity in proportion to w_ij, the largest opaque), text (the "
                        "keys coloured by the weights of one query, --query) or positions (the "
                        "sinusoidal positional encoding PE, n x d_model, and its similarity PE "
                        "PE^T, n x n, as the Positions tab; n up to 4096). animate: grid or "
                        "head."),
         QStringLiteral("view"), QStringLiteral("grid")},
        {QStringLiteral("head"),
         QStringLiteral("Head for --view head, compare and text: 0 ... h-1, or 'mean'; for "
                        "--view steps: 0 ... h-1; for --view tokens: the one head (or 'mean') "
                        "whose lines are drawn (default there: every head)."),
         QStringLiteral("i"), QStringLiteral("0")},
        {QStringLiteral("query"),
         QStringLiteral("With --view text: the query (shown row, 0 ... n_q-1) whose weights "
                        "colour the keys. Default: the last query."),
         QStringLiteral("i")},
        {QStringLiteral("compare"),
         QStringLiteral("With --view compare: how B differs from A (the other options), as "
                        "key=value pairs separated by commas: alpha=<0-1> or scale=on|off, "
                        "tau=<t>, mask=none|causal|padding|causal+padding, dk=<d_k of B>. B "
                        "starts as the window's first B: A with the 1/sqrt(d_k) scale toggled. "
                        "Example: --compare mask=causal,dk=64."),
         QStringLiteral("changes")},
    };
}

/// The view and output options of heatmap and animate.
QList<QCommandLineOption> heatmapViewOptions()
{
    return {
        {QStringLiteral("colormap"), QStringLiteral("viridis, magma, cividis, gray or RdBu_r."),
         QStringLiteral("name"), QStringLiteral("viridis")},
        {QStringLiteral("scale"), QStringLiteral("Colour scale: linear or log."),
         QStringLiteral("scale"), QStringLiteral("linear")},
        {QStringLiteral("range"),
         QStringLiteral("Colour range: fixed ([0, 1] for weights) or auto (data min ... max)."),
         QStringLiteral("range"), QStringLiteral("fixed")},
        {QStringLiteral("width"), QStringLiteral("Image width in pixels (PDF: points)."),
         QStringLiteral("px"), QStringLiteral("1600")},
        {QStringLiteral("height"), QStringLiteral("Image height in pixels (PDF: points)."),
         QStringLiteral("px"), QStringLiteral("1000")},
        {QStringLiteral("dpr"),
         QStringLiteral("Device pixel ratio for PNG (2 doubles the pixels, same layout)."),
         QStringLiteral("ratio"), QStringLiteral("1")},
        {QStringLiteral("format"),
         QStringLiteral("png, svg or pdf. Default: from the --out suffix; when both are given "
                        "they must agree (--format names the format of an --out without a "
                        ".png/.svg/.pdf suffix); png for --batch-dir alone."),
         QStringLiteral("format")},
        {QStringLiteral("out"),
         QStringLiteral("Output file (.png, .svg or .pdf); may be left out with --batch-dir or "
                        "--data."),
         QStringLiteral("file")},
        {QStringLiteral("tokens"),
         QStringLiteral("A sentence, split into tokens at spaces and punctuation (a backslash "
                        "keeps the next character in the token: New\\ York): they label the "
                        "axes and set n. Each distinct token gets its own seeded input vector, "
                        "whatever its position (reordering words with PE off permutes the "
                        "heatmap)."),
         QStringLiteral("text")},
        {QStringLiteral("pooling"),
         QStringLiteral("When a tile has more cells than pixels: max or mean of each pixel's "
                        "unmasked cells (a pixel of masked cells only shows as masked)."),
         QStringLiteral("pooling"), QStringLiteral("max")},
        {QStringLiteral("sort-heads"),
         QStringLiteral("Order of the head tiles in --view grid: index, entropy or max-weight "
                        "(the head's mean over rows), low first unless --sort-descending. Titles "
                        "keep the head numbers; the mean tile stays last."),
         QStringLiteral("key"), QStringLiteral("index")},
        {QStringLiteral("sort-descending"),
         QStringLiteral("With --sort-heads entropy or max-weight: high first.")},
        {QStringLiteral("pin-query"),
         QStringLiteral("Outline query row I (0 ... n_q-1) in every head and name it in the "
                        "caption."),
         QStringLiteral("I")},
        {QStringLiteral("trim-padding"),
         QStringLiteral("With --mask padding: leave out the padded keys (and, for self-attention, "
                        "the padded queries).")},
        {QStringLiteral("hide-keys"),
         QStringLiteral("Keys not to show, e.g. 0 (a BOS token), 0,3 or 5-7; each row is "
                        "renormalised over the shown keys unless --raw."),
         QStringLiteral("list")},
        {QStringLiteral("raw"),
         QStringLiteral("With --hide-keys: keep the raw weights (rows then sum to less than 1).")},
        {QStringLiteral("dpi"),
         QStringLiteral("PNG print resolution (24-2400): --width x --height are then the PNG's "
                        "pixels, with text sized for this resolution (written in the file); "
                        "replaces --dpr."),
         QStringLiteral("dpi")},
        {QStringLiteral("batch-dir"),
         QStringLiteral("Write one file per head into this folder (created if missing): "
                        "head-0.<format> ... head-<h-1>.<format>, and head-mean.<format> when "
                        "h > 1; the format is --format (default png)."),
         QStringLiteral("dir")},
        {QStringLiteral("in"),
         QStringLiteral("Show the tensors of this .npz or .npy, as File > Open Tensors reads them: "
                        "query/key/value (+ PyTorch-named parameters) or attention weights, e.g. "
                        "'attentions' (layers, heads, n_q, n_k) with 'tokens' (strings) as saved "
                        "from a model's output_attentions. The file fixes n, n_k, d_model and h."),
         QStringLiteral("file")},
        {QStringLiteral("array"),
         QStringLiteral("With --in: the array of weights to draw when the file holds several "
                        "(default: 'weights', 'attn_weights', 'attention' or 'attentions', or the "
                        "only array)."),
         QStringLiteral("name")},
        {QStringLiteral("layer"),
         QStringLiteral("With weights of several layers: the layer whose heads are drawn (0 = "
                        "first); with --view model, only that layer's row."),
         QStringLiteral("l")},
        {QStringLiteral("batch"),
         QStringLiteral("With --in: the batch item (0 ... B-1) of inputs shaped (B, n, E) or of "
                        "attentions shaped (layers, B, heads, n_q, n_k)."),
         QStringLiteral("i"), QStringLiteral("0")},
        {QStringLiteral("session"),
         QStringLiteral("Take the parameters, tokens, tensors and heatmap view (head, colormap, "
                        "scale, range, pooling) from a saved session (.attnlab.json); options "
                        "given explicitly override them."),
         QStringLiteral("file")},
        {QStringLiteral("data"),
         QStringLiteral("Write the numbers shown (weights, scores, per-row metric series) to "
                        "this .npz, .npy, .json or .csv file (.npy and .csv write several files "
                        "next to it)."),
         QStringLiteral("file")},
        memoryBudgetOption(QStringLiteral("sizes whose weights and scores (every head, float64 "
                                          "for display; twice for --view compare; with the tile "
                                          "engine its inputs, queries, keys, row blocks and "
                                          "pooled images) and PNG image need")),
    };
}

/// The options animate adds: what is animated, over which range, and where the frames go.
QList<QCommandLineOption> animateOptions()
{
    return {
        {QStringLiteral("param"),
         QStringLiteral("The parameter animated: dk (d_k; d_model = d_k x h, so leave "
                        "--d-model out), alpha (the scale exponent, 0-1) or tau (the "
                        "temperature, 0.01-100)."),
         QStringLiteral("dk|alpha|tau")},
        {QStringLiteral("from"), QStringLiteral("The first frame's value."), QStringLiteral("A")},
        {QStringLiteral("to"), QStringLiteral("The last frame's value."), QStringLiteral("B")},
        {QStringLiteral("frames"),
         QStringLiteral("Frame count (1-%1) from --from to --to: alpha in equal steps, dk and "
                        "tau in equal ratios (dk rounded to integers).")
             .arg(kMaxPlayFrames),
         QStringLiteral("N"), QStringLiteral("21")},
        {QStringLiteral("out-dir"),
         QStringLiteral("Folder of the frames (created if missing): frame_000.png ... and "
                        "frames.csv (frame, file, parameter, value, d_model, heads, d_k, "
                        "alpha, tau)."),
         QStringLiteral("dir")},
    };
}

} // namespace attn::cli
