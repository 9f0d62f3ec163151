// attnlab compute: a user's tensors in (.npz), attention results out (.npz). Issue 3, §4.
//
// Input arrays (names as in torch.nn.MultiheadAttention's state_dict):
//   query n_q × d_model, key n_k × d_model, value n_k × d_v       (required)
//   in_proj_weight 3·d_model × d_model, in_proj_bias 3·d_model,
//   out_proj_weight d_model × d_model, out_proj_bias d_model, num_heads (0-d integer)
//     → multi-head attention (Vaswani et al. 2017, §3.2.2; matches
//       torch.nn.MultiheadAttention(batch_first=True)); d_v = d_model; biases optional (absent
//       means zero, like bias=False).
//   none of them → plain scaled dot-product attention (§3.2.1), one head, d_k = d_model.
//   attn_mask n_q × n_k (bool: convention below; float: added to the scaled scores)
//   key_padding_mask n_k bool (True = padding under the default convention)
// Output arrays: output (n_q × d_model or d_v), weights, scores (raw q kᵀ) (h × n_q × n_k),
// weights_mean (n_q × n_k), max_weight, entropy (nats), effective_terms, jacobian_norm
// (h × n_q, float64), fully_masked (h × n_q bool).

#include "common.h"

#include "attention.h"
#include "mask.h"
#include "metrics.h"
#include "multihead.h"
#include "npy.h"

#include <QFileInfo>
#include <QTextStream>

#include <cmath>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

const QString kCommand = QStringLiteral("compute");

/// Bad input data (missing/ill-shaped array, bad value): reported with exit status 2.
class InputError : public std::runtime_error
{
public:
    explicit InputError(const QString &message)
        : std::runtime_error(message.toStdString())
    { }
};

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

using Arrays = std::map<std::string, NpyArray>;

const char *const kKnownArrays[] = {
    "query",           "key",           "value",     "in_proj_weight", "in_proj_bias",
    "out_proj_weight", "out_proj_bias", "num_heads", "attn_mask",      "key_padding_mask",
};
const char *const kParameterArrays[]
    = {"in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias", "num_heads"};

bool isFloat(NpyType t)
{
    return t == NpyType::Float32 || t == NpyType::Float64;
}

bool isInteger(NpyType t)
{
    return t == NpyType::Int32 || t == NpyType::Int64 || t == NpyType::UInt8;
}

QString typeName(NpyType t)
{
    switch (t) {
    case NpyType::Float32:
        return QStringLiteral("float32");
    case NpyType::Float64:
        return QStringLiteral("float64");
    case NpyType::Bool:
        return QStringLiteral("bool");
    case NpyType::Int32:
        return QStringLiteral("int32");
    case NpyType::Int64:
        return QStringLiteral("int64");
    case NpyType::UInt8:
        return QStringLiteral("uint8");
    }
    return QStringLiteral("?");
}

QString describe(const NpyArray &a)
{
    return typeName(a.type) + QLatin1Char(' ') + q(a.shapeString());
}

class Inputs
{
public:
    Inputs(const QString &path, Arrays arrays)
        : m_path(path)
        , m_arrays(std::move(arrays))
    { }

    bool has(const char *name) const { return m_arrays.count(name) > 0; }
    const NpyArray *find(const char *name) const
    {
        auto it = m_arrays.find(name);
        return it == m_arrays.end() ? nullptr : &it->second;
    }
    const NpyArray &require(const char *name, const QString &why = {}) const
    {
        if (const NpyArray *a = find(name))
            return *a;
        QStringList present;
        for (const auto &[n, a] : m_arrays)
            present << QStringLiteral("%1 %2").arg(q(n), describe(a));
        throw InputError(QStringLiteral("missing array '%1'%2 in %3 (it holds: %4)")
                             .arg(QLatin1String(name), why, m_path,
                                  present.isEmpty() ? QStringLiteral("nothing")
                                                    : present.join(QStringLiteral(", "))));
    }
    QStringList unknownNames() const
    {
        QStringList unknown;
        for (const auto &[n, a] : m_arrays) {
            bool known = false;
            for (const char *k : kKnownArrays)
                known = known || n == k;
            if (!known)
                unknown << q(n);
        }
        return unknown;
    }

private:
    QString m_path;
    Arrays m_arrays;
};

/// A numeric (float or integer, not bool) 2-d array as a Matrix<T>, finite in T.
template<typename T>
Matrix<T> numericMatrix(const NpyArray &a, const char *name, const QString &expectedShape)
{
    if (a.type == NpyType::Bool)
        throw InputError(QStringLiteral("array '%1' must hold numbers, got %2")
                             .arg(QLatin1String(name), describe(a)));
    if (a.ndim() != 2)
        throw InputError(QStringLiteral("array '%1' must be 2-d (%2), got shape %3")
                             .arg(QLatin1String(name), expectedShape, q(a.shapeString())));
    const Matrix<T> m = a.toMatrix<T>(name);
    const NonFiniteReport bad = findNonFinite(m);
    if (bad.found)
        throw InputError(QStringLiteral("array '%1' %2 holds a non-finite value at (%3, %4): %5 "
                                        "(%6 NaN, %7 Inf in all)")
                             .arg(QLatin1String(name), q(a.shapeString()))
                             .arg(bad.row)
                             .arg(bad.col)
                             .arg(a.values[std::size_t(bad.row * a.shape[1] + bad.col)])
                             .arg(bad.nanCount)
                             .arg(bad.infCount));
    return m;
}

/// A 1-d numeric array of length n as a Vector<T>, finite in T.
template<typename T> Vector<T> numericVector(const NpyArray &a, const char *name, Index n)
{
    if (a.type == NpyType::Bool || a.ndim() != 1 || a.shape[0] != n)
        throw InputError(QStringLiteral("array '%1' must be a 1-d numeric array of length %2, "
                                        "got %3")
                             .arg(QLatin1String(name))
                             .arg(n)
                             .arg(describe(a)));
    Vector<T> v(n);
    for (Index i = 0; i < n; ++i) {
        v(i) = T(a.values[std::size_t(i)]);
        if (!std::isfinite(v(i)))
            throw InputError(QStringLiteral("array '%1' %2 holds a non-finite value at (%3): %4")
                                 .arg(QLatin1String(name), q(a.shapeString()))
                                 .arg(i)
                                 .arg(a.values[std::size_t(i)]));
    }
    return v;
}

void checkShape(const NpyArray &a, const char *name, std::int64_t rows, std::int64_t cols,
                const QString &meaning, const QString &context)
{
    if (a.shape[0] != rows || a.shape[1] != cols)
        throw InputError(QStringLiteral("array '%1' has shape %2 but must be (%3, %4) (%5); %6")
                             .arg(QLatin1String(name), q(a.shapeString()))
                             .arg(rows)
                             .arg(cols)
                             .arg(meaning, context));
}

/// Bool (or 0/1 uint8) values; `name` and `shape` for messages.
std::vector<std::uint8_t> boolValues(const NpyArray &a, const char *name)
{
    std::vector<std::uint8_t> bits;
    bits.reserve(a.values.size());
    for (double v : a.values) {
        if (v != 0 && v != 1)
            throw InputError(QStringLiteral("array '%1' %2 must hold booleans (0/1), found %3")
                                 .arg(QLatin1String(name), describe(a))
                                 .arg(v));
        bits.push_back(v != 0 ? 1 : 0);
    }
    return bits;
}

struct MaskInfo
{
    AttentionMask mask;
    QStringList description;
};

MaskInfo buildMask(const Inputs &in, Index nQ, Index nK, bool allowedConvention,
                   const QString &context)
{
    MaskInfo info;
    const QString boolMeaning = allowedConvention ? QStringLiteral("True = may attend")
                                                  : QStringLiteral("True = masked out");
    if (const NpyArray *a = in.find("attn_mask")) {
        if (a->ndim() != 2)
            throw InputError(QStringLiteral("array 'attn_mask' must be 2-d (n_q × n_k = %1), "
                                            "got shape %2; %3")
                                 .arg(q(shapeString(nQ, nK)), q(a->shapeString()), context));
        checkShape(*a, "attn_mask", nQ, nK, QStringLiteral("n_q × n_k"), context);
        if (a->type == NpyType::Bool || a->type == NpyType::UInt8) {
            const std::vector<std::uint8_t> bits = boolValues(*a, "attn_mask");
            MatrixB m(nQ, nK);
            std::copy(bits.begin(), bits.end(), m.data());
            info.mask
                = allowedConvention ? AttentionMask::fromAllowed(m) : AttentionMask::fromMasked(m);
            info.description << QStringLiteral("attn_mask bool (%1)").arg(boolMeaning);
        } else if (isFloat(a->type)) {
            const MatrixD add = a->toMatrix<double>("attn_mask");
            for (Index i = 0; i < nQ; ++i) {
                for (Index j = 0; j < nK; ++j) {
                    const double v = add(i, j);
                    if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
                        throw InputError(
                            QStringLiteral("array 'attn_mask' %1 holds %2 at (%3, %4); an "
                                           "additive mask may hold finite values and -inf only")
                                .arg(describe(*a))
                                .arg(v)
                                .arg(i)
                                .arg(j));
                }
            }
            info.mask = AttentionMask::additive(add);
            info.description << QStringLiteral("attn_mask additive float");
        } else {
            throw InputError(QStringLiteral("array 'attn_mask' must be bool or float, got %1")
                                 .arg(describe(*a)));
        }
    }
    if (const NpyArray *a = in.find("key_padding_mask")) {
        const bool rowShape = a->ndim() == 2 && a->shape[0] == 1;
        if (!(a->ndim() == 1 || rowShape) || a->shape.back() != nK)
            throw InputError(QStringLiteral("array 'key_padding_mask' has shape %1 but must be "
                                            "(%2,) (n_k); %3")
                                 .arg(q(a->shapeString()))
                                 .arg(nK)
                                 .arg(context));
        if (a->type != NpyType::Bool && a->type != NpyType::UInt8)
            throw InputError(
                QStringLiteral("array 'key_padding_mask' must be bool, got %1").arg(describe(*a)));
        std::vector<std::uint8_t> padding = boolValues(*a, "key_padding_mask");
        if (allowedConvention) {
            for (std::uint8_t &p : padding)
                p = p ? 0 : 1;
        }
        const AttentionMask pad = AttentionMask::keyPadding(nQ, padding);
        info.mask = info.mask.empty() ? pad : (info.mask | pad);
        info.description << QStringLiteral("key_padding_mask (%1)")
                                .arg(allowedConvention ? QStringLiteral("True = key kept")
                                                       : QStringLiteral("True = padding"));
    }
    return info;
}

/// Everything written to the output file, per head.
template<typename T> struct Computed
{
    Matrix<T> output;
    std::vector<Matrix<T>> weights;
    Matrix<T> weightsMean;
    std::vector<Matrix<T>> scores;
    std::vector<std::vector<std::uint8_t>> fullyMasked;
    Index heads = 1;
    Index dK = 0;
    double scale = 1;
    QString mode;
};

NpyArray perHeadRows(const std::vector<VectorD> &rows)
{
    NpyArray a;
    const Index nQ = rows.empty() ? 0 : rows.front().size();
    a.shape = {std::int64_t(rows.size()), std::int64_t(nQ)};
    a.type = NpyType::Float64;
    for (const VectorD &r : rows)
        a.values.insert(a.values.end(), r.data(), r.data() + r.size());
    return a;
}

template<typename T>
int computeAs(const Inputs &in, const QString &inPath, const QString &outPath,
              bool allowedConvention, const QString &dtypeName)
{
    constexpr NpyType outType = std::is_same_v<T, float> ? NpyType::Float32 : NpyType::Float64;

    bool multihead = false;
    for (const char *p : kParameterArrays)
        multihead = multihead || in.has(p);

    const NpyArray &qa = in.require("query");
    const NpyArray &ka = in.require("key");
    const NpyArray &va = in.require("value");
    const QString dims = QStringLiteral("query %1, key %2, value %3")
                             .arg(q(qa.shapeString()), q(ka.shapeString()), q(va.shapeString()));
    const Matrix<T> query = numericMatrix<T>(qa, "query", QStringLiteral("n_q × d_model"));
    const Matrix<T> key = numericMatrix<T>(ka, "key", QStringLiteral("n_k × d_model"));
    const Matrix<T> value = numericMatrix<T>(va, "value", QStringLiteral("n_k × d_v"));
    const Index nQ = query.rows(), nK = key.rows(), dModel = query.cols();
    if (key.cols() != dModel)
        throw InputError(QStringLiteral("array 'key' has %1 columns but query has %2 (both must "
                                        "be d_model): %3")
                             .arg(key.cols())
                             .arg(dModel)
                             .arg(dims));
    if (value.rows() != nK)
        throw InputError(QStringLiteral("array 'value' has %1 rows but key has %2 (both must be "
                                        "n_k): %3")
                             .arg(value.rows())
                             .arg(nK)
                             .arg(dims));
    if (multihead && value.cols() != dModel)
        throw InputError(QStringLiteral("array 'value' has %1 columns but must have d_model = %2 "
                                        "for multi-head attention: %3")
                             .arg(value.cols())
                             .arg(dModel)
                             .arg(dims));

    const MaskInfo maskInfo = buildMask(in, nQ, nK, allowedConvention, dims);

    Computed<T> c;
    if (multihead) {
        const QString why = QStringLiteral(" (multi-head parameters were given)");
        const NpyArray &inWa = in.require("in_proj_weight", why);
        const NpyArray &outWa = in.require("out_proj_weight", why);
        const NpyArray &ha = in.require("num_heads", why);
        const QString pdims
            = QStringLiteral("d_model = %1 from query %2").arg(dModel).arg(q(qa.shapeString()));
        const Matrix<T> inW
            = numericMatrix<T>(inWa, "in_proj_weight", QStringLiteral("3·d_model × d_model"));
        checkShape(inWa, "in_proj_weight", 3 * dModel, dModel,
                   QStringLiteral("3·d_model × d_model, [W_Q; W_K; W_V]"), pdims);
        const Matrix<T> outW
            = numericMatrix<T>(outWa, "out_proj_weight", QStringLiteral("d_model × d_model"));
        checkShape(outWa, "out_proj_weight", dModel, dModel, QStringLiteral("d_model × d_model"),
                   pdims);
        const bool hasInBias = in.has("in_proj_bias"), hasOutBias = in.has("out_proj_bias");
        const Vector<T> inB = hasInBias
            ? numericVector<T>(*in.find("in_proj_bias"), "in_proj_bias", 3 * dModel)
            : Vector<T>::Zero(3 * dModel);
        const Vector<T> outB = hasOutBias
            ? numericVector<T>(*in.find("out_proj_bias"), "out_proj_bias", dModel)
            : Vector<T>::Zero(dModel);

        const bool scalar = ha.ndim() == 0 || (ha.ndim() == 1 && ha.shape[0] == 1);
        if (!scalar || !isInteger(ha.type))
            throw InputError(QStringLiteral("array 'num_heads' must be a 0-d integer array "
                                            "(np.array(4)), got %1")
                                 .arg(describe(ha)));
        const double heads = ha.values.at(0);
        if (heads < 1 || std::fmod(double(dModel), heads) != 0)
            throw InputError(QStringLiteral("num_heads = %1 must be at least 1 and divide "
                                            "d_model = %2 (%3)")
                                 .arg(heads)
                                 .arg(dModel)
                                 .arg(pdims));

        MultiheadAttention<T> layer(dModel, Index(heads), hasInBias || hasOutBias);
        layer.setParameters(inW, inB, outW, outB);
        MultiheadResult<T> r = layer.forward(query, key, value, maskInfo.mask);
        c.output = std::move(r.output);
        c.weights = std::move(r.weights);
        c.weightsMean = std::move(r.weightsMean);
        c.scores = std::move(r.scores);
        c.fullyMasked = std::move(r.fullyMasked);
        c.heads = layer.heads();
        c.dK = layer.headDim();
        c.scale = r.scale;
        c.mode
            = QStringLiteral("multi-head attention (PyTorch layout, %1)")
                  .arg(layer.hasBias() ? QStringLiteral("with bias") : QStringLiteral("no bias"));
    } else {
        AttentionResult<T> r = scaledDotProductAttention<T>(query, key, value, maskInfo.mask);
        c.output = std::move(r.output);
        c.weightsMean = r.weights;
        c.weights.push_back(std::move(r.weights));
        c.scores.push_back(std::move(r.scores));
        c.fullyMasked.push_back(std::move(r.fullyMasked));
        c.heads = 1;
        c.dK = dModel;
        c.scale = r.scale;
        c.mode = QStringLiteral("plain scaled dot-product attention");
    }

    // Per-row metrics (h × n_q).
    std::vector<VectorD> maxW, entropy, effective, jacobian;
    NpyArray fully;
    fully.shape = {std::int64_t(c.heads), std::int64_t(nQ)};
    fully.type = NpyType::Bool;
    double worstRowSum = 0;
    QStringList maskedRows;
    for (Index h = 0; h < c.heads; ++h) {
        const RowMetrics m
            = rowMetrics<T>(c.weights[std::size_t(h)], c.fullyMasked[std::size_t(h)]);
        maxW.push_back(m.maxWeight);
        entropy.push_back(m.entropy);
        effective.push_back(m.effectiveTerms);
        jacobian.push_back(m.jacobianNorm);
        worstRowSum = std::max(worstRowSum, summarize(m).worstRowSumError);
        for (Index i = 0; i < nQ; ++i) {
            const bool f = c.fullyMasked[std::size_t(h)].at(std::size_t(i)) != 0;
            fully.values.push_back(f ? 1.0 : 0.0);
            if (f)
                maskedRows << (c.heads > 1 ? QStringLiteral("head %1 row %2").arg(h).arg(i)
                                           : QStringLiteral("row %1").arg(i));
        }
    }

    auto typed = [](NpyArray a) {
        a.type = outType;
        return a;
    };
    const std::vector<std::pair<std::string, NpyArray>> members = {
        {"output", typed(NpyArray::fromMatrix<T>(c.output))},
        {"weights", typed(NpyArray::fromMatrices<T>(c.weights))},
        {"weights_mean", typed(NpyArray::fromMatrix<T>(c.weightsMean))},
        {"scores", typed(NpyArray::fromMatrices<T>(c.scores))},
        {"max_weight", perHeadRows(maxW)},
        {"entropy", perHeadRows(entropy)},
        {"effective_terms", perHeadRows(effective)},
        {"jacobian_norm", perHeadRows(jacobian)},
        {"fully_masked", fully},
    };
    try {
        writeNpz(outPath.toStdString(), members);
    } catch (const NpyError &e) {
        return failure(kCommand, QString::fromUtf8(e.what()));
    }

    QTextStream out(stdout);
    out << QStringLiteral("%1 → %2: %3 on query %4, key %5, value %6; h = %7, d_k = %8, "
                          "scale %9, %10; masks: %11. Output %12; worst row-sum error %13; "
                          "fully masked rows: %14.\n")
               .arg(QFileInfo(inPath).fileName(), QFileInfo(outPath).fileName(), c.mode,
                    q(shapeString(nQ, dModel)), q(shapeString(nK, key.cols())),
                    q(shapeString(nK, value.cols())))
               .arg(c.heads)
               .arg(c.dK)
               .arg(c.scale, 0, 'g', 6)
               .arg(dtypeName,
                    maskInfo.description.isEmpty()
                        ? QStringLiteral("none")
                        : maskInfo.description.join(QStringLiteral(", ")),
                    q(shapeString(c.output.rows(), c.output.cols())))
               .arg(worstRowSum, 0, 'g', 3)
               .arg(maskedRows.isEmpty()
                        ? QStringLiteral("none")
                        : QStringLiteral("%1 (weights 0, output row = out_proj_bias)")
                              .arg(maskedRows.join(QStringLiteral(", "))));
    return ExitOk;
}

int inputError(const QString &message)
{
    QTextStream(stderr) << "attnlab " << kCommand << ": error: " << message << "\n";
    return ExitUsage;
}

} // namespace

int runCompute(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Attention on your tensors. Reads query, key, value (and optionally PyTorch-named "
        "in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, num_heads for "
        "multi-head attention; attn_mask n_q×n_k bool or additive float; key_padding_mask n_k "
        "bool) from an .npz and writes output, weights, weights_mean, scores, max_weight, "
        "entropy, effective_terms, jacobian_norm and fully_masked to another .npz. "
        "Bad input exits with status 2 and writes nothing."));
    const QCommandLineOption inOption(QStringLiteral("in"), QStringLiteral("Input .npz file."),
                                      QStringLiteral("file"));
    const QCommandLineOption outOption(QStringLiteral("out"),
                                       QStringLiteral("Output .npz file (written atomically)."),
                                       QStringLiteral("file"));
    const QCommandLineOption conventionOption(
        QStringLiteral("mask-convention"),
        QStringLiteral("Meaning of True in boolean attn_mask and key_padding_mask: 'masked' "
                       "(default, nn.MultiheadAttention) or 'allowed' "
                       "(F.scaled_dot_product_attention)."),
        QStringLiteral("masked|allowed"), QStringLiteral("masked"));
    const QCommandLineOption dtypeOption(
        QStringLiteral("dtype"),
        QStringLiteral("Compute type: float64 (default) or float32. Metrics are float64."),
        QStringLiteral("float32|float64"), QStringLiteral("float64"));
    parser.addOptions({inOption, outOption, conventionOption, dtypeOption});
    if (const auto done = parseArguments(parser, kCommand, arguments))
        return *done;
    if (!parser.positionalArguments().isEmpty())
        return usageError(
            kCommand,
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));
    if (!parser.isSet(inOption))
        return usageError(kCommand, QStringLiteral("--in <file> is required"));
    if (!parser.isSet(outOption))
        return usageError(kCommand, QStringLiteral("--out <file> is required"));
    const QString convention = parser.value(conventionOption);
    if (convention != QLatin1String("masked") && convention != QLatin1String("allowed"))
        return usageError(kCommand,
                          QStringLiteral("--mask-convention must be 'masked' or "
                                         "'allowed', got '%1'")
                              .arg(convention));
    const QString dtype = parser.value(dtypeOption);
    if (dtype != QLatin1String("float32") && dtype != QLatin1String("float64"))
        return usageError(
            kCommand,
            QStringLiteral("--dtype must be 'float32' or 'float64', got '%1'").arg(dtype));
    const QString inPath = parser.value(inOption);
    const QString outPath = parser.value(outOption);
    const bool allowed = convention == QLatin1String("allowed");

    try {
        if (!QFileInfo(inPath).isFile())
            throw InputError(QStringLiteral("input file '%1' does not exist").arg(inPath));
        Arrays arrays;
        for (auto &[name, array] : readNpz(inPath.toStdString()))
            arrays.emplace(name, std::move(array));
        const Inputs inputs(inPath, std::move(arrays));
        const QStringList unknown = inputs.unknownNames();
        if (!unknown.isEmpty())
            QTextStream(stderr) << "attnlab compute: note: ignoring arrays not used by compute: "
                                << unknown.join(QStringLiteral(", ")) << "\n";
        return dtype == QLatin1String("float32")
            ? computeAs<float>(inputs, inPath, outPath, allowed, dtype)
            : computeAs<double>(inputs, inPath, outPath, allowed, dtype);
    } catch (const InputError &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const NpyError &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const InvalidArgument &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const NonFiniteInput &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const std::exception &e) {
        return failure(kCommand, QString::fromUtf8(e.what()));
    }
}

} // namespace attn::cli
