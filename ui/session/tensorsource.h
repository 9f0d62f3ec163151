#pragma once
// File → Open tensors…: a user's .npy/.npz shown in the main view instead of the
// seeded random inputs. Two kinds of file:
//   Inputs  — query/key/value (+ PyTorch-named parameters and masks), read by the same
//             tensorCaseFromArrays as `attnlab compute` and recomputed with the session's scale
//             exponent α, temperature τ, extra mask and dtype (the defaults reproduce
//             torch.nn.MultiheadAttention(batch_first=True) exactly);
//   Weights — attention weights computed elsewhere (e.g. dumped from a real model), shaped
//             (n_q × n_k), (h × n_q × n_k) or (layers × h × n_q × n_k); one layer is shown at a
//             time, as stored: nothing is recomputed, metrics come from the weights, and rows
//             that do not sum to 1 or hold NaN/Inf are reported (WeightCheck), never hidden.
//             An .npz with `attentions` (a Hugging Face model's output_attentions stacked:
//             (layers, heads, n_q, n_k), or (layers, B, heads, n_q, n_k) with a batch item
//             chosen) and optional `tokens` (strings) is read by core's attentionStackFromArrays:
//             finite values only, token count checked, row sums reported; the Model view shows
//             all its layers at once.
//
// A TensorSource is immutable and shared: SessionParameters::tensors points at it, so loading,
// changing the layer and going back to random inputs are ordinary (undoable) parameter changes,
// and computeSession() dispatches to computeTensorSession() while one is set.

#include "ui/session/sessionparameters.h"
#include "ui/session/sessionresult.h"

#include "core/base/cancel.h"
#include "core/io/npy.h"
#include "core/io/tensorcase.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attn {

class TensorSource
{
public:
    enum class Kind {
        Inputs, ///< query/key/value (+ parameters, masks): recomputed
        Weights, ///< attention weights computed elsewhere: shown as stored
    };

    Kind kind() const;
    bool isWeights() const { return kind() == Kind::Weights; }
    /// Absolute path of the file the tensors came from (a model run: the checkpoint folder).
    QString path() const;
    /// The file's name (a model run: the model's name, modelName()).
    QString fileName() const;
    /// Weights computed by a model's forward pass (ui/session/modelrun.h), not read from a file.
    bool isModelRun() const;
    /// A model run's model: "ORG/NAME" or its folder's name, and its family ("gpt2", …); empty
    /// for tensor files.
    QString modelName() const;
    QString modelFamily() const;
    /// The first caption line of the Model tab: "loaded: file [array description]", or for a
    /// model run "model: NAME (family), description".
    QString title() const;
    /// Weights: the array shown (the .npz member, or the .npy file's stem). Inputs: empty.
    QString arrayName() const;
    /// Meaning of True in the file's boolean masks (inputs).
    MaskConvention maskConvention() const;

    /// Inputs with a leading batch axis (or a 5-d `attentions` stack): the item shown
    /// (0 … batchCount() − 1); else 0.
    int batch() const;
    /// B of the inputs' leading batch axis (or of a 5-d `attentions` stack); 0 without one.
    int batchCount() const;
    /// Weights read as a model's attention stack (`attentions`, see the top of this file).
    bool isAttentionStack() const;
    /// The `tokens` strings of a stack or of stored self-attention weights (empty when the file
    /// has none, or none of the weights' length).
    QStringList fileTokens() const;
    /// A model run's token ids (n); empty for tensor files.
    std::vector<std::int64_t> tokenIds() const;
    /// The stack's row-sum check (attention stacks only; default otherwise).
    RowSumCheck rowSumCheck() const;
    /// Layer shown (weights), 0 … layerCount() − 1; 0 for inputs.
    int layer() const { return m_layer; }
    int layerCount() const;
    int headCount() const;
    int queryCount() const;
    int keyCount() const;
    /// d_model of the inputs. A model run's hidden size when the session's parameters can hold
    /// it (at most SessionParameters::maxDModel, a multiple of h), else h. Stored weights have
    /// none: h (d_k = 1, a value the session's parameters need; modelShape() is empty for them).
    int dModel() const;

    /// What a model run knows of the attention that made its weights, which stored weights do
    /// not: its d_model (the hidden size), d_k (head_dim: Qwen3's may differ from d_model / h),
    /// key/value heads g, the causal mask, the sliding window of the layer shown (0: none) and
    /// the scale applied to q kᵀ (1/√d_k).
    struct ModelShape
    {
        int dModel = 0;
        int headDim = 0;
        int kvHeads = 0;
        bool causal = false;
        int window = 0;
        double scale = 0;
    };
    /// The model run's shape; nullopt for tensor files (inputs follow the parameters, stored
    /// weights have none).
    std::optional<ModelShape> modelShape() const;

    /// The inputs (nullptr for weights).
    const TensorCase<double> *tensorCase() const;
    /// The weights (nullptr for inputs). For a run on demand the sizes only (no matrices).
    const WeightStack *weightStack() const;
    /// A model run too large to keep every head: the layer shown is computed from the run's
    /// queries and keys when the session computes; weightStack() holds no matrices.
    bool weightsOnDemand() const;
    /// A model run over SessionParameters::maxSequence tokens, or whose one layer exceeds the
    /// session's memory budget: no view holds whole n × n matrices of it. The session's result
    /// is a refusal naming the sizes (lengths up to SessionParameters::maxLongSequence are
    /// valid); the Model tab shows its thumbnails and the Long tab computes tiles from the
    /// run's queries and keys. Implies weightsOnDemand().
    bool longOnly() const;
    /// The weights of (layer, head), n_q × n_k: as stored, or computed (models::headWeights) for
    /// a run on demand. Throws InvalidArgument out of range (inputs: always).
    MatrixD headWeights(int layer, int head) const;
    /// What the Model tab draws: weightStack(), or for a run on demand every head max-pooled to
    /// at most 256 × 256 (thumbnailBlock() cells a side per value).
    const WeightStack *thumbnailStack() const;
    int thumbnailBlock() const;

    /// One line about the content: "PyTorch multi-head attention, h = 4, with bias, masks:
    /// attn_mask bool (True = masked out)" or "weights float32 (12, 8, 16, 16)".
    QString description() const;
    /// Remarks made while loading (arrays not used, …).
    QStringList notes() const;

    /// The same tensors showing another layer (clamped to the layers there are).
    std::shared_ptr<const TensorSource> withLayer(int layer) const;

    /// The parameters that show this source, starting from `base`: n, n_k, d_model, h and the
    /// kind follow the file (cross-attention when n_q ≠ n_k or the keys differ from the
    /// queries; a causal model's run is decoder self-attention); α = 0.5, τ = 1, no extra mask,
    /// no positional encoding; seed and dtype kept; tokens cleared; tensors = `self` (which must
    /// point at this source).
    SessionParameters parametersFor(const SessionParameters &base,
                                    const std::shared_ptr<const TensorSource> &self) const;
    /// Empty when `p` fits this source, else a message naming the parameter fixed by the file
    /// (n, n_k, d_model, h; for weights also α, τ, masks and positional encoding; for a model
    /// run the causal mask of decoder self-attention exactly when the model is causal).
    QString checkParameters(const SessionParameters &p) const;
    /// The heatmap caption for `p`, starting "loaded: <file>".
    QString caption(const SessionParameters &p) const;

    struct Data; ///< tensorsource_p.h: for the files that build and compute sources
    explicit TensorSource(std::shared_ptr<const Data> data, int layer = 0);
    const Data &data() const { return *m_data; }

private:
    std::shared_ptr<const Data> m_data;
    int m_layer = 0;
};

/// Every array of a tensor file.
struct TensorFile
{
    QString path; ///< absolute
    bool npz = false;
    NamedArrays arrays; ///< .npz: every member in archive order; .npy: one, named by the stem
    NpzStrings strings; ///< string members of an .npz (e.g. the tokens of model --out)
};

/// Bytes an attention stack may take to read (checkAttentionStackHeaders): a quarter of
/// sessionMemoryBudget(), at most core's kDefaultStackBudgetBytes.
std::uint64_t attentionStackBudget();

/// Reads `path` (.npz by its zip signature, else .npy). An .npz with `attentions` has its
/// headers checked first (checkAttentionStackHeaders, attentionStackBudget()) and its string
/// members read into `strings`. Throws NpyError naming the file and the problem (missing,
/// truncated, object/structured dtype, a stack over the budget, …).
TensorFile readTensorFile(const QString &path);

/// True when the file is an attention problem rather than weights: it holds an array named
/// query, key or value (a missing one of the three is then reported as missing).
bool holdsInputs(const TensorFile &file);

/// "name dtype (shape)" for each array, in file order (for the array chooser).
QStringList describeArrays(const TensorFile &file);

/// Builds the source of `file`: inputs when holdsInputs(file) (masks read with
/// `convention`), else the weights in `weightsArray` (empty: defaultWeightArray's choice).
/// Returns nullptr with `error` set (naming the file, the array and the problem) on bad arrays,
/// an ambiguous choice (several arrays and none named weights/attn_weights/attention) or a
/// size beyond SessionParameters::maxSequence.
/// Inputs with a leading batch axis (query (B, n_q, d_model), …; core tensorBatchSize) show item
/// `batch` (0 … B − 1, core tensorBatchItem); a batch outside that range, or ≠ 0 without a
/// batch axis, is an error naming B.
std::shared_ptr<const TensorSource> makeTensorSource(const TensorFile &file,
                                                     const QString &weightsArray,
                                                     MaskConvention convention, QString *error,
                                                     int batch = 0);

/// The file of the tensors `p` shows (absolute path; empty for random inputs) — e.g. for
/// session files, which store the paths of loaded tensors.
QString loadedTensorPath(const SessionParameters &p);

/// computeSession for parameters with tensors set (see the top of this file). Never throws:
/// errors land in SessionResult::error. Inputs give exactly MultiheadAttention<T>::forward's
/// (or scaledDotProductAttention's) weights, raw and scaled scores; weights give the stored
/// layer, NaN for the (unknown) scores, all mask states 0 (nothing known to be masked).
SessionResult computeTensorSession(const SessionParameters &params, const CancelToken &cancel = {});

/// Rows of loaded weights that are not probability rows.
struct WeightCheck
{
    int rows = 0; ///< h · n_q rows checked
    int badSumRows = 0; ///< finite rows with |Σ_j w_ij − 1| > tolerance
    int nonFiniteRows = 0; ///< rows holding NaN or ±Inf
    int negativeRows = 0; ///< finite rows with a negative weight
    double worstRowSumError = 0; ///< over finite rows
    int worstHead = -1, worstRow = -1; ///< where worstRowSumError is
    int firstNonFiniteHead = -1, firstNonFiniteRow = -1, firstNonFiniteKey = -1;
    std::int64_t nanCells = 0, infCells = 0; ///< cells holding NaN, ±Inf
    double tolerance = 0;
    bool ok() const { return badSumRows == 0 && nonFiniteRows == 0 && negativeRows == 0; }
    /// "all 96 rows sum to 1 (worst |Σw − 1| = 2e-16)" or what is wrong, with positions:
    /// "1 of 4 rows do not sum to 1 (worst |Σw − 1| = 1 at head 0, row 1; tolerance 1e-06)",
    /// "3 rows hold NaN/Inf: 9 NaN and 0 Inf cells, the first at head 0, row 0, key 0".
    QString text() const;
};
/// Checks every row of `result`'s weights. Tolerance: 1e-6, plus 4·n_k·2⁻²⁴ for weights stored
/// as float32 (rounding of each weight and of the softmax's sum).
WeightCheck checkWeights(const SessionResult &result, NpyType storedType = NpyType::Float64);
/// The same check of `count` matrices n_q × n_k, one per head (heads[0] … heads[count − 1],
/// e.g. one layer of a WeightStack).
WeightCheck checkWeights(const MatrixD *heads, int count, NpyType storedType);

/// Token labels from a text file: UTF-8, one token per line (a final line break does not make
/// an extra token; "\r\n" works). Returns nullopt with `error` naming the file on read errors.
std::optional<QStringList> readTokenFile(const QString &path, QString *error);
/// The sidecar of a tensor file if it exists: <dir>/<name>.tokens.txt for the file name
/// without its last suffix (attn.npz → attn.tokens.txt), then with it (attn.npz.tokens.txt);
/// empty when there is none.
QString tokenSidecarPath(const QString &tensorPath);
/// Labels `p` takes: n_q for self-attention (the keys share them), n_q + n_k for
/// cross-attention (queries first, then keys).
int expectedTokenCount(const SessionParameters &p);
/// Empty when `count` labels fit `p`, else a message saying how many are needed and that the
/// positions 0, 1, … are shown instead.
QString checkTokenCount(const SessionParameters &p, int count);

} // namespace attn
