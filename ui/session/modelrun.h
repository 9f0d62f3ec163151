#pragma once
// A Hugging Face checkpoint in the window: a model folder opened (core/models/model.h, and its
// tokenizer from core/text/loader.h when the folder has one), the input typed for it (text
// tokenized by that tokenizer, or token ids), and one forward pass (core/models/forward.h) run on
// a worker. The run's attention becomes a TensorSource of weights (an attention stack: layers ×
// heads × n × n, token labels = the tokenizer's pieces with visible white space), so the Model,
// Heads, Steps and Tokens views show it as they show a loaded stack; its logits give the
// next-token readout (core/models/nexttoken.h).

#include "ui/session/tensorsource.h"

#include "core/base/cancel.h"
#include "core/models/forward.h"
#include "core/models/model.h"
#include "core/models/nexttoken.h"
#include "core/text/tokenizer.h"

#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attn {

/// An opened model folder.
struct OpenedModel
{
    QString folder; ///< absolute path of the checkpoint folder
    QString name; ///< models::modelDisplayName: "ORG/NAME" in a hub cache, else the folder name
    QString family; ///< "gpt2", "llama", "qwen2", "qwen3", "bert"
    std::shared_ptr<const models::Model> model;
    /// The folder's tokenizer; nullptr when it has none (then the input is token ids).
    std::shared_ptr<const text::Tokenizer> tokenizer;
    /// Why there is no tokenizer (loadTokenizer's message); empty when there is one.
    QString tokenizerProblem;

    /// "gpt2, 4 layers × 4 heads (d_k 8), vocab 50257, F32, 6.9 MiB of weights".
    QString summary() const;
};

/// Opens `folder` (Model::open, then loadTokenizer). Returns nullptr with `error` set to core's
/// message (naming the file and field: no config.json, an unsupported family or dtype, GGUF or
/// pickle weights, a missing tensor, …) when the model cannot be used; a tokenizer that cannot
/// be read only sets tokenizerProblem. Reads headers and maps the weights: cheap, but may take a
/// second for a large tokenizer.json, so the window calls it on a worker.
std::shared_ptr<const OpenedModel> openModelFolder(const QString &folder, QString *error);

/// One token of the input, as the token strip shows it.
struct TokenPiece
{
    QString label; ///< text::pieceLabel: white space visible, split bytes as ‹NN›
    std::int64_t id = -1; ///< token id; −1 for a word of the window's own splitter
    std::int64_t begin = -1, end = -1; ///< byte span [begin, end) in the text (UTF-8); −1: none
    QString bytesHex; ///< the token's bytes in hex ("20 63 61 74")
    bool special = false; ///< added by the post-processor or a special added token
};

/// What the model is run on.
struct ModelInput
{
    QString text; ///< the typed text (for ids: the ids as typed)
    bool fromIds = false; ///< the text is token ids (no tokenizer, or asked for)
    std::vector<std::int64_t> ids; ///< n ≥ 1 token ids
    QVector<TokenPiece> pieces; ///< one per id
};

/// The pieces of `text`: the model's tokenizer when `model` has one, else the window's word
/// splitter (ui/session/tokenizer.h; ids −1, no spans).
QVector<TokenPiece> tokenPieces(const OpenedModel *model, const QString &text);

/// The input for `text`: tokenized with the model's tokenizer, or, when `asIds` or the model
/// has none, parsed as token ids separated by commas or white space. Returns nullopt with
/// `error` for empty input, an id that is not a number or outside [0, vocab), more tokens than
/// the model's positions (GPT-2, BERT) or SessionParameters::maxLongSequence.
std::optional<ModelInput> prepareModelInput(const OpenedModel &model, const QString &text,
                                            bool asIds, QString *error);

/// "512 KiB", "6.3 MiB", "1.2 GiB".
QString byteSizeText(double bytes);

/// Bytes of the attention stack of a run: layers · heads · n² float64 weights.
double modelStackBytes(const models::ModelConfig &config, std::int64_t tokens);

/// One forward pass and what the window shows of it.
struct ModelRun
{
    std::shared_ptr<const OpenedModel> model;
    ModelInput input;
    /// Queries and keys of every layer kept (models::headWeights recomputes any head); the
    /// weights and logits are dropped once the source and the readout have them.
    std::shared_ptr<const models::ForwardResult> forward;
    /// The stack exceeded the budget: the source computes each layer when shown
    /// (TensorSource::weightsOnDemand) and the Model tab shows max-pooled thumbnails.
    bool onDemand = false;
    /// On demand and too long for any view holding a whole layer (over
    /// SessionParameters::maxSequence tokens, or one layer over the session's memory budget):
    /// the source is TensorSource::longOnly, shown by the Model and Long tabs.
    bool longOnly = false;
    std::vector<models::NextToken> next; ///< top-k after the last token (empty without logits)
    QStringList nextLabels; ///< their pieces (pieceLabel of the decoded id, or "#id")
    /// The attention stack as weights (layers × heads × n × n), labels = the pieces.
    std::shared_ptr<const TensorSource> source;
    double seconds = 0; ///< wall time of the forward pass
};

/// A next-token probability or logit as text: six significant digits ("0.123457", "1.5e-05"),
/// the one format of the window's next-token readout and `attnlab model --top-k`.
QString nextTokenNumberText(double value);

/// Runs the model on `input` (on the calling thread: a worker) and builds the source:
/// `progress(done, total)` after each layer of the forward and, on demand, of the thumbnails;
/// `cancel` polled before every layer (throws Cancelled). A stack (modelStackBytes) within
/// `budgetBytes` is kept whole; a larger one is shown on demand (ModelRun::onDemand), a longer
/// one by the Model and Long tabs only (ModelRun::longOnly). Throws models::ModelError (bad ids,
/// weights, NaN), InvalidArgument when the queries and keys of every layer would exceed the
/// session's memory budget (the message gives the arithmetic and what to do).
ModelRun runModel(const std::shared_ptr<const OpenedModel> &model, const ModelInput &input,
                  std::uint64_t budgetBytes, int topK,
                  const std::function<void(int done, int total)> &progress,
                  const CancelToken &cancel = {});

} // namespace attn
