#include "ui/panels/controlpanel.h"

#include "ui/session/tokenizer.h"

#include "ui/panels/wheelguard.h"
#include "ui/session/tensorsource.h"
#include "ui/views/numberspinbox.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <memory>
#include <vector>

namespace attn {

namespace {

// Logarithmic sliders: position p ↔ value round(2^(p / steps)). Small values get as much travel
// as large ones, so n = 4 … 16 is as easy to reach as 256 … 1024.
constexpr int nSliderSteps = 100; // per doubling of n
constexpr int dkSliderSteps = 40; // per doubling of d_k

int logSliderValue(int position, int steps)
{
    return std::max(1, int(std::lround(std::exp2(double(position) / steps))));
}

int logSliderPosition(int value, int steps)
{
    return int(std::lround(steps * std::log2(double(std::max(1, value)))));
}

// Sets a log slider only when its current position does not already mean `value`, so a slider
// being dragged is never pulled away from under the mouse.
void setLogSlider(QSlider *slider, int value, int steps)
{
    if (logSliderValue(slider->value(), steps) != value)
        slider->setValue(logSliderPosition(value, steps));
}

QSlider *makeSlider(QWidget *parent)
{
    auto *slider = new QSlider(Qt::Horizontal, parent);
    slider->setTracking(true); // valueChanged while dragging: the view follows the drag
    return slider;
}

} // namespace

ControlPanel::ControlPanel(QWidget *parent)
    : QWidget(parent)
{
    buildUi();
    normalize(m_params);
    syncWidgets();
    // Scrolling the Controls dock must not change the control under the pointer.
    WheelGuard::install(this);
}

QList<int> ControlPanel::divisors(int n)
{
    QList<int> result;
    for (Index d : attn::divisors(n))
        result.append(int(d));
    return result;
}

QSpinBox *ControlPanel::wholeField(QWidget *parent, const QString &quantity)
{
    auto *field = new WholeSpinBox(parent);
    field->setQuantityName(quantity);
    connect(field, &WholeSpinBox::refused, this, &ControlPanel::noteShown);
    return field;
}

void ControlPanel::buildUi()
{
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);

    // ---- Sequence ----
    auto *sequenceBox = new QGroupBox(tr("Sequence"), this);
    auto *sequenceForm = new QFormLayout(sequenceBox);
    sequenceForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    m_kindCombo = new QComboBox(sequenceBox);
    m_kindCombo->setObjectName(QStringLiteral("kindCombo"));
    m_kindCombo->setPlaceholderText(tr("n/a")); // shown while no item is: stored weights
    m_kindCombo->addItem(tr("Encoder self-attention"), int(AttentionKind::EncoderSelf));
    m_kindCombo->addItem(tr("Causal self-attention"), int(AttentionKind::DecoderCausal));
    m_kindCombo->addItem(tr("Cross-attention"), int(AttentionKind::EncoderDecoder));
    m_kindCombo->setItemData(1, tr("Decoder causal self-attention"), Qt::ToolTipRole);
    m_kindCombo->setItemData(2, tr("Encoder–decoder cross-attention"), Qt::ToolTipRole);
    m_kindCombo->setToolTip(
        tr("Which of the three uses of attention (Vaswani et al. 2017, §3.2.3):\n"
           "• encoder self-attention: every query sees every key;\n"
           "• decoder self-attention: the causal mask is always on (no look-ahead);\n"
           "• encoder–decoder: n decoder queries attend to n_k encoder keys (not square)."));
    sequenceForm->addRow(tr("&Attention:"), m_kindCombo);

    m_tokensEdit = new QLineEdit(sequenceBox);
    m_tokensEdit->setObjectName(QStringLiteral("tokensEdit"));
    m_tokensEdit->setPlaceholderText(tr("Type a sentence (optional)"));
    m_tokensEdit->setClearButtonEnabled(true);
    if (auto *clear = m_tokensEdit->findChild<QAction *>(QStringLiteral("_q_qlineeditclearaction")))
        clear->setToolTip(tr("Clear the sentence (n becomes free again)"));
    m_tokensToolTip
        = tr("A sentence, split into tokens at spaces and punctuation (each punctuation mark is a "
             "token; a backslash keeps the next character in the token: New\\ York, don\\'t). "
             "The tokens label the axes and n follows their count. Each token gets a "
             "seeded random vector of its own, whatever its position: with positional encoding "
             "off, reordering the words just permutes the heatmap; with it on, the attention "
             "changes. Clear it to choose n freely.");
    m_tokensEdit->setToolTip(m_tokensToolTip);
    sequenceForm->addRow(tr("T&okens:"), m_tokensEdit);

    auto *nRow = new QWidget(sequenceBox);
    auto *nLayout = new QHBoxLayout(nRow);
    nLayout->setContentsMargins(0, 0, 0, 0);
    m_nSlider = makeSlider(nRow);
    m_nSlider->setObjectName(QStringLiteral("nSlider"));
    m_nSlider->setRange(0, logSliderPosition(maxN, nSliderSteps));
    m_nSlider->setPageStep(nSliderSteps); // one page = doubling
    m_nSlider->setToolTip(
        tr("Sequence length n (queries), logarithmic: each %1 steps double n.").arg(nSliderSteps));
    m_nSpin = wholeField(nRow, QStringLiteral("n"));
    m_nSpin->setObjectName(QStringLiteral("nSpin"));
    m_nSpin->setRange(1, maxN);
    m_nSpin->setToolTip(tr("Sequence length n: number of query positions (1 … %1). The heatmaps "
                           "are n × n (n × n_k for cross-attention). Longer sequences, up to "
                           "%2 tokens: the Long tab (Ctrl+Alt+7).")
                            .arg(maxN)
                            .arg(SessionParameters::maxLongSequence));
    nLayout->addWidget(m_nSlider, 1);
    nLayout->addWidget(m_nSpin);
    auto *nLabel = new QLabel(tr("&n:"), sequenceBox);
    nLabel->setBuddy(m_nSpin);
    sequenceForm->addRow(nLabel, nRow);

    m_nKSpin = wholeField(sequenceBox, QStringLiteral("n_k"));
    m_nKSpin->setObjectName(QStringLiteral("nKSpin"));
    m_nKSpin->setRange(1, maxN);
    m_nKSpin->setToolTip(tr("n_k: number of encoder positions (keys and values) for "
                            "encoder–decoder cross-attention (1 … %1).")
                             .arg(maxN));
    sequenceForm->addRow(tr("n_k (enc&oder):"), m_nKSpin);

    m_seedSpin = wholeField(sequenceBox, tr("The seed"));
    m_seedSpin->setObjectName(QStringLiteral("seedSpin"));
    m_seedSpin->setRange(0, std::numeric_limits<int>::max());
    m_seedSpin->setToolTip(tr("Seed of the random generator (numpy.random.default_rng(seed) or "
                              "torch.manual_seed(seed)): the same seed gives the same weights and "
                              "inputs."));
    sequenceForm->addRow(tr("See&d:"), m_seedSpin);

    m_generatorCombo = new QComboBox(sequenceBox);
    m_generatorCombo->setObjectName(QStringLiteral("generatorCombo"));
    m_generatorCombo->addItem(tr("NumPy (default_rng)"), int(RandomSource::NumPy));
    m_generatorCombo->addItem(tr("PyTorch (manual_seed)"), int(RandomSource::Torch));
    m_generatorCombo->setToolTip(
        tr("Whose random streams draw the weights and inputs from the seed: NumPy's "
           "(numpy.random.default_rng(seed), xavier init, then standard_normal) or PyTorch's "
           "(torch.manual_seed(seed), nn.MultiheadAttention's default init, then "
           "torch.randn(1, n, d_model)), bit for bit."));
    sequenceForm->addRow(tr("&Generator:"), m_generatorCombo);

    m_positionalCheck = new QCheckBox(tr("Sinusoidal &positional encoding"), sequenceBox);
    m_positionalCheck->setObjectName(QStringLiteral("positionalCheck"));
    m_positionalCheck->setToolTip(
        tr("Add PE[pos, 2i] = sin(pos/10000^(2i/d_model)), PE[pos, 2i+1] = cos(…) to the inputs "
           "(§3.5). Without it attention ignores the order of the positions."));
    sequenceForm->addRow(m_positionalCheck);

    // Position schemes that act inside attention (instead of the sinusoidal encoding).
    m_schemeCombo = new QComboBox(sequenceBox);
    m_schemeCombo->setObjectName(QStringLiteral("positionSchemeCombo"));
    m_schemeCombo->addItem(tr("none"), 0);
    // Short names that fit the panel's narrowest width; each item's tooltip gives the whole.
    const struct
    {
        QString name, whole;
    } schemes[] = {
        {tr("RoPE, pairs (GPT-J)"), tr("RoPE, interleaved pairs (RoFormer, GPT-J)")},
        {tr("RoPE, halves (Llama)"), tr("RoPE, rotate_half (GPT-NeoX, Llama, Qwen)")},
        {tr("ALiBi"), tr("ALiBi, a linear bias per head")},
    };
    for (int i = 0; i < 3; ++i) {
        m_schemeCombo->addItem(schemes[i].name, i + 1);
        m_schemeCombo->setItemData(i + 1, schemes[i].whole, Qt::ToolTipRole);
    }
    m_schemeCombo->setToolTip(
        tr("RoPE (Su et al. 2021) rotates each head's q and k at positions 0…n−1 by pos·θ_i, "
           "θ_i = base^(−2i/d_k): interleaved pairs (x[2i], x[2i+1]) or halves (x[i], "
           "x[i+d_k/2]) — weights trained with one convention are wrong with the other. ALiBi "
           "(Press et al. 2021) adds −m_h·(i − j) to head h's scaled scores."));
    sequenceForm->addRow(tr("In attention:"), m_schemeCombo);
    auto *ropeBaseSpin = new NumberSpinBox(sequenceBox);
    m_ropeBaseSpin = ropeBaseSpin;
    m_ropeBaseSpin->setObjectName(QStringLiteral("ropeBaseSpin"));
    m_ropeBaseSpin->setRange(1, EngineParameters::maxRopeBase);
    m_ropeBaseSpin->setSingleStep(1000);
    ropeBaseSpin->setQuantityName(tr("The RoPE base"));
    m_ropeBaseSpin->setToolTip(tr("RoPE's base θ: plane i turns by pos·θ^(−2i/d_k) (10 000 in "
                                  "the paper; larger bases turn slower)."));
    sequenceForm->addRow(tr("RoPE base:"), m_ropeBaseSpin);
    auto *ropeBaseMessage = new QLabel(sequenceBox);
    ropeBaseMessage->setObjectName(QStringLiteral("ropeBaseMessage"));
    ropeBaseSpin->setMessageLabel(ropeBaseMessage);
    connect(ropeBaseSpin, &NumberSpinBox::refused, this, &ControlPanel::noteShown);

    m_dtypeCombo = new QComboBox(sequenceBox);
    m_dtypeCombo->setObjectName(QStringLiteral("dtypeCombo"));
    m_dtypeCombo->addItem(tr("float64 (double)"), int(DType::Float64));
    m_dtypeCombo->addItem(tr("float32 (single)"), int(DType::Float32));
    m_dtypeCombo->setToolTip(tr("Arithmetic precision of the computation. Row sums are exact to "
                                "~1e-16 in float64 and ~1e-7 in float32."));
    sequenceForm->addRow(tr("Prec&ision:"), m_dtypeCombo);
    outer->addWidget(sequenceBox);

    // ---- Heads ----
    auto *headsBox = new QGroupBox(tr("Heads"), this);
    auto *headsForm = new QFormLayout(headsBox);
    headsForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    m_dModelSpin = wholeField(headsBox, QStringLiteral("d_model"));
    m_dModelSpin->setObjectName(QStringLiteral("dModelSpin"));
    m_dModelSpin->setRange(1, maxDModel);
    m_dModelSpin->setToolTip(tr("Model width d_model (1 … %1). Each head gets d_k = d_model / h "
                                "columns of the projections (§3.2.2).")
                                 .arg(maxDModel));
    headsForm->addRow(tr("d_mode&l:"), m_dModelSpin);

    m_headsCombo = new QComboBox(headsBox);
    m_headsCombo->setObjectName(QStringLiteral("headsCombo"));
    m_headsCombo->setToolTip(tr("Number of heads h. Only divisors of d_model are listed: "
                                "d_model must split evenly into h heads of d_k columns."));
    headsForm->addRow(tr("h (heads):"), m_headsCombo);
    m_kvHeadsCombo = new QComboBox(headsBox);
    m_kvHeadsCombo->setObjectName(QStringLiteral("kvHeadsCombo"));
    m_kvHeadsCombo->setPlaceholderText(tr("n/a")); // shown while no item is: stored weights
    m_kvHeadsCombo->setToolTip(
        tr("Key/value heads g (grouped-query attention, Ainslie et al. 2023): query head i reads "
           "key head ⌊i·g/h⌋; the h heads' keys are mean-pooled into g groups. g = h is "
           "multi-head, g = 1 multi-query attention."));
    headsForm->addRow(tr("g (kv heads):"), m_kvHeadsCombo);
    m_headsInfoLabel = new QLabel(headsBox);
    m_headsInfoLabel->setObjectName(QStringLiteral("headsInfoLabel"));
    m_headsInfoLabel->setWordWrap(true);
    m_headsInfoLabel->setToolTip(tr("Parameters of W_Q, W_K, W_V, W_O with biases; KV cache per "
                                    "token and layer: 2 · g · d_k · bytes per element."));
    headsForm->addRow(m_headsInfoLabel);

    auto *dkRow = new QWidget(headsBox);
    auto *dkLayout = new QHBoxLayout(dkRow);
    dkLayout->setContentsMargins(0, 0, 0, 0);
    m_dkSlider = makeSlider(dkRow);
    m_dkSlider->setObjectName(QStringLiteral("dkSlider"));
    m_dkSlider->setPageStep(dkSliderSteps);
    m_dkSlider->setToolTip(tr("Head dimension d_k, logarithmic (each %1 steps double d_k). "
                              "Moving it sets d_model = d_k · h, keeping h.")
                               .arg(dkSliderSteps));
    m_dkLabel = new QLabel(dkRow);
    m_dkLabel->setObjectName(QStringLiteral("dkLabel"));
    m_dkLabel->setMinimumWidth(m_dkLabel->fontMetrics().horizontalAdvance(QStringLiteral("0000")));
    m_dkLabel->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_dkLabel->setToolTip(tr("d_k = d_model / h: the width of each head's queries and keys."));
    dkLayout->addWidget(m_dkSlider, 1);
    dkLayout->addWidget(m_dkLabel);
    auto *dkLabel = new QLabel(tr("d_&k:"), headsBox);
    dkLabel->setBuddy(m_dkSlider);
    headsForm->addRow(dkLabel, dkRow);
    m_headsNoteLabel = new QLabel(headsBox);
    m_headsNoteLabel->setObjectName(QStringLiteral("headsNote"));
    m_headsNoteLabel->setWordWrap(true);
    m_headsNoteLabel->setForegroundRole(QPalette::PlaceholderText);
    m_headsNoteLabel->hide();
    outer->addWidget(headsBox);

    // ---- Scale ----
    auto *scaleBox = new QGroupBox(tr("Scale"), this);
    auto *scaleForm = new QFormLayout(scaleBox);
    scaleForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    m_sqrtCheck = new QCheckBox(tr("&Scale by 1/√d_k"), scaleBox);
    m_sqrtCheck->setObjectName(QStringLiteral("sqrtCheck"));
    m_sqrtCheck->setToolTip(tr("The paper's scale 1/√d_k (α = 0.5, §3.2.1). Unchecking sets α = 0: "
                               "unscaled scores, whose softmax saturates as d_k grows."));
    scaleForm->addRow(m_sqrtCheck);

    auto *alphaRow = new QWidget(scaleBox);
    auto *alphaLayout = new QHBoxLayout(alphaRow);
    alphaLayout->setContentsMargins(0, 0, 0, 0);
    m_alphaSlider = makeSlider(alphaRow);
    m_alphaSlider->setObjectName(QStringLiteral("alphaSlider"));
    m_alphaSlider->setRange(0, 100);
    m_alphaSlider->setPageStep(10);
    m_alphaSlider->setToolTip(tr("Scale exponent α: scale = d_k^(−α) / τ. 0 = unscaled, 0.5 = "
                                 "1/√d_k, 1 = 1/d_k. Moves continuously between them."));
    m_alphaLabel = new QLabel(alphaRow);
    m_alphaLabel->setMinimumWidth(
        m_alphaLabel->fontMetrics().horizontalAdvance(QStringLiteral("0.000")));
    m_alphaLabel->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_alphaLabel->setToolTip(m_alphaSlider->toolTip());
    alphaLayout->addWidget(m_alphaSlider, 1);
    alphaLayout->addWidget(m_alphaLabel);
    auto *alphaLabel = new QLabel(tr("E&xponent α:"), scaleBox);
    alphaLabel->setBuddy(m_alphaSlider);
    scaleForm->addRow(alphaLabel, alphaRow);

    auto *temperatureSpin = new NumberSpinBox(scaleBox);
    m_temperatureSpin = temperatureSpin;
    m_temperatureSpin->setObjectName(QStringLiteral("temperatureSpin"));
    m_temperatureSpin->setRange(EngineParameters::minTemperature, EngineParameters::maxTemperature);
    temperatureSpin->setQuantityName(tr("τ"));
    m_temperatureSpin->setSingleStep(0.1);
    m_temperatureSpin->setToolTip(tr("Softmax temperature τ > 0: the scores are divided by τ. "
                                     "τ < 1 sharpens the weights, τ > 1 flattens them."));
    scaleForm->addRow(tr("&Temperature τ:"), m_temperatureSpin);
    auto *temperatureMessage = new QLabel(scaleBox);
    temperatureMessage->setObjectName(QStringLiteral("temperatureMessage"));
    temperatureSpin->setMessageLabel(temperatureMessage);
    connect(temperatureSpin, &NumberSpinBox::refused, this, &ControlPanel::noteShown);

    m_scaleLabel = new QLabel(scaleBox);
    m_scaleLabel->setObjectName(QStringLiteral("scaleLabel"));
    m_scaleLabel->setToolTip(tr("The factor the scores Q Kᵀ are multiplied by."));
    m_scaleLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    scaleForm->addRow(tr("Scale:"), m_scaleLabel);
    outer->addWidget(scaleBox);

    // ---- Mask ----
    auto *maskBox = new QGroupBox(tr("Mask"), this);
    auto *maskForm = new QFormLayout(maskBox);
    maskForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_maskCombo = new QComboBox(maskBox);
    m_maskCombo->setObjectName(QStringLiteral("maskCombo"));
    m_maskCombo->setPlaceholderText(tr("n/a")); // shown while no item is: stored weights
    m_maskCombo->addItem(tr("None"), int(MaskChoice::None));
    m_maskCombo->addItem(tr("Causal (no look-ahead)"), int(MaskChoice::Causal));
    m_maskCombo->addItem(tr("Key padding (last keys)"), int(MaskChoice::KeyPadding));
    m_maskCombo->setToolTip(
        tr("Masked scores are set to −∞ before the softmax (§3.2.3), so their weight is exactly "
           "0.\n• causal: query i sees keys j ≤ i (top-left aligned like PyTorch's is_causal when "
           "n ≠ n_k);\n• key padding: the last keys are padding, hidden from every query."));
    maskForm->addRow(tr("&Mask:"), m_maskCombo);
    m_paddingSpin = wholeField(maskBox, tr("Padding"));
    m_paddingSpin->setObjectName(QStringLiteral("paddingSpin"));
    m_paddingSpin->setToolTip(tr("How many of the last keys are padding (0 … number of keys). "
                                 "Padding every key leaves fully masked rows: all-zero weights, "
                                 "flagged, never NaN."));
    maskForm->addRow(tr("Padding ke&ys:"), m_paddingSpin);
    m_windowSpin = wholeField(maskBox, tr("The window w"));
    m_windowSpin->setObjectName(QStringLiteral("windowSpin"));
    m_windowSpin->setRange(0, SessionParameters::maxSequence);
    m_windowSpin->setSpecialValueText(tr("off"));
    m_windowSpin->setToolTip(
        tr("Sliding-window causal mask of width w: query i sees the w keys i − w < j ≤ i (exactly "
           "w keys; some libraries count w + 1).\nWith more queries than keys (encoder–decoder), "
           "every query i ≥ n_k sees the last w keys."));
    maskForm->addRow(tr("Window w:"), m_windowSpin);
    m_sinksSpin = wholeField(maskBox, tr("Sinks"));
    m_sinksSpin->setObjectName(QStringLiteral("sinksSpin"));
    m_sinksSpin->setRange(0, SessionParameters::maxSequence);
    m_sinksSpin->setToolTip(tr("Attention sinks (StreamingLLM): the first s keys stay visible to "
                               "every later query whatever the window."));
    maskForm->addRow(tr("Sinks s:"), m_sinksSpin);
    m_maskNote = new QLabel(maskBox);
    m_maskNote->setWordWrap(true);
    m_maskNote->setForegroundRole(QPalette::PlaceholderText);
    outer->addWidget(maskBox);

    // ---- Modern attention: the position scheme inside attention, shared key/value heads and
    // the sliding window, below Scale and Mask so that those stay on the first screen ----
    auto *modernBox = new QGroupBox(tr("Modern attention"), this);
    auto *modernForm = new QFormLayout(modernBox);
    modernForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    const auto moveRow = [modernForm](QFormLayout *from, QWidget *field) {
        const QFormLayout::TakeRowResult row = from->takeRow(field);
        QWidget *label = row.labelItem ? row.labelItem->widget() : nullptr;
        QWidget *widget = row.fieldItem ? row.fieldItem->widget() : nullptr;
        delete row.labelItem;
        delete row.fieldItem;
        if (label)
            modernForm->addRow(label, widget);
        else if (widget)
            modernForm->addRow(widget);
    };
    moveRow(sequenceForm, m_schemeCombo);
    moveRow(sequenceForm, m_ropeBaseSpin);
    moveRow(headsForm, m_kvHeadsCombo);
    moveRow(headsForm, m_headsInfoLabel);
    moveRow(maskForm, m_windowSpin);
    moveRow(maskForm, m_sinksSpin);
    outer->addWidget(modernBox);

    // ---- 2025 attention: a learned sink or differential attention in every head ----
    auto *variantBox = new QGroupBox(tr("2025 attention"), this);
    auto *variantForm = new QFormLayout(variantBox);
    variantForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_variantCombo = new QComboBox(variantBox);
    m_variantCombo->setObjectName(QStringLiteral("variantCombo"));
    m_variantCombo->addItem(tr("None"), 0);
    m_variantCombo->addItem(tr("Learned sink (gpt-oss)"), 1);
    m_variantCombo->addItem(tr("Differential (A₁ − λA₂)"), 2);
    m_variantCombo->addItem(tr("Latent (MLA, DeepSeek)"), 3);
    m_variantCombo->setToolTip(tr(
        "• learned sink: every head's softmax denominator gains exp(b), so a row can give "
        "part of its weight to no key (rows sum to 1 − sink mass);\n• differential "
        "attention (Ye et al. 2025): a second softmax A₂ from a second layer's queries and keys is "
        "subtracted, A₁ − λA₂ — weights can be negative (drawn on a diverging scale) and rows "
        "sum to 1 − λ;\n• multi-head latent attention (DeepSeek-V2): keys and values from a "
        "latent of d_c numbers per token, plus a RoPE key of d_r numbers shared by the heads "
        "(it turns RoPE, ALiBi and g < h off)."));
    variantForm->addRow(tr("&Variant:"), m_variantCombo);
    m_sinkLogitSpin = new QDoubleSpinBox(variantBox);
    m_sinkLogitSpin->setObjectName(QStringLiteral("sinkLogitSpin"));
    m_sinkLogitSpin->setRange(-SessionParameters::maxVariantLogit,
                              SessionParameters::maxVariantLogit);
    m_sinkLogitSpin->setDecimals(2);
    m_sinkLogitSpin->setSingleStep(0.5);
    m_sinkLogitSpin->setToolTip(tr("The sink logit b, compared with the scaled scores: "
                                   "b well above them sends most of each row to the sink."));
    variantForm->addRow(tr("Sink logit &b:"), m_sinkLogitSpin);
    m_lambdaSpin = new QDoubleSpinBox(variantBox);
    m_lambdaSpin->setObjectName(QStringLiteral("lambdaSpin"));
    m_lambdaSpin->setRange(-1.0, 2.0);
    m_lambdaSpin->setDecimals(2);
    m_lambdaSpin->setSingleStep(0.05);
    m_lambdaSpin->setToolTip(tr("λ of differential attention: 0 is A₁ alone; the paper's "
                                "λ_init runs from 0.2 (first layer) to 0.8 (deep layers)."));
    variantForm->addRow(tr("&λ:"), m_lambdaSpin);
    m_headLambdasEdit = new QLineEdit(variantBox);
    m_headLambdasEdit->setObjectName(QStringLiteral("headLambdasEdit"));
    m_headLambdasEdit->setPlaceholderText(tr("λ above in every head"));
    m_headLambdasEdit->setToolTip(tr("One λ per head, separated by commas or spaces (h numbers "
                                     "in [−1, 2]); empty: the λ above in every head."));
    variantForm->addRow(tr("λ per &head:"), m_headLambdasEdit);
    m_latentDimSpin = wholeField(variantBox, QStringLiteral("d_c"));
    m_latentDimSpin->setObjectName(QStringLiteral("latentDimSpin"));
    m_latentDimSpin->setRange(1, int(SessionParameters::maxDModel));
    m_latentDimSpin->setToolTip(tr("d_c, the latent each token's keys and values are made from "
                                   "(DeepSeek-V3: 512)."));
    variantForm->addRow(tr("Latent d_&c:"), m_latentDimSpin);
    m_latentRopeDimSpin = wholeField(variantBox, QStringLiteral("d_r"));
    m_latentRopeDimSpin->setObjectName(QStringLiteral("latentRopeDimSpin"));
    m_latentRopeDimSpin->setRange(2, int(SessionParameters::maxLatentRopeDim));
    m_latentRopeDimSpin->setSingleStep(2);
    m_latentRopeDimSpin->setToolTip(tr("d_r, the width of the RoPE key every head shares "
                                       "(even; DeepSeek-V3: 64). The scale is 1/√(d_k + d_r)."));
    variantForm->addRow(tr("RoPE key d_&r:"), m_latentRopeDimSpin);
    m_absorbedCheck = new QCheckBox(tr("Absorbed W_UK"), variantBox);
    m_absorbedCheck->setObjectName(QStringLiteral("absorbedCheck"));
    m_absorbedCheck->setToolTip(tr("W_UK absorbed into the query: each head's query is scored "
                                   "against the cached latent itself. The same weights as "
                                   "decompressing the keys, up to rounding (E20)."));
    variantForm->addRow(QString(), m_absorbedCheck);
    m_gateCheck = new QCheckBox(tr("Output &gate σ(x·w_θ + b)"), variantBox);
    m_gateCheck->setObjectName(QStringLiteral("gateCheck"));
    m_gateCheck->setToolTip(tr("Gated attention (Qiu et al. 2025), one gate per head and token: "
                               "the head's output row i is multiplied by σ(x_i·w_θ + b), so the "
                               "map shows σ·w and each row sums to its gate. Combines with the "
                               "variants above."));
    variantForm->addRow(QString(), m_gateCheck);
    m_gateBiasSpin = new QDoubleSpinBox(variantBox);
    m_gateBiasSpin->setObjectName(QStringLiteral("gateBiasSpin"));
    m_gateBiasSpin->setRange(-SessionParameters::maxVariantLogit,
                             SessionParameters::maxVariantLogit);
    m_gateBiasSpin->setDecimals(2);
    m_gateBiasSpin->setSingleStep(0.5);
    m_gateBiasSpin->setToolTip(tr("The gate's bias b: very negative closes every head's output, "
                                  "very positive opens it (σ → 1)."));
    variantForm->addRow(tr("Gate bias:"), m_gateBiasSpin);
    m_variantNote = new QLabel(variantBox);
    m_variantNote->setObjectName(QStringLiteral("variantNote"));
    m_variantNote->setWordWrap(true);
    m_variantNote->setVisible(false);
    variantForm->addRow(m_variantNote);
    outer->addWidget(variantBox);
    // The notes a change brings (a refused number, h moved to a divisor, the mask's rules) go
    // below every field, so a note appearing while typing never moves a field (the next click
    // lands where it was aimed); new ones are also announced through noteShown().
    for (QLabel *note : {ropeBaseMessage, m_headsNoteLabel, temperatureMessage, m_maskNote}) {
        note->setWordWrap(true);
        outer->addWidget(note);
    }
    outer->addStretch(1);

    // A narrow dock (1280 × 800 screens): the combo boxes shrink (eliding their text) and a
    // form whose fields do not fit beside their labels puts each field under its label, instead
    // of a horizontal scroll bar.
    for (QComboBox *combo : findChildren<QComboBox *>()) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(8);
    }
    for (QFormLayout *form : findChildren<QFormLayout *>())
        form->setRowWrapPolicy(QFormLayout::WrapLongRows);

    // Typing into a spin box recomputes once, when the number is complete (Enter, focus out
    // or the arrows), not on every keystroke: typing "1024" must not compute n = 1, 10, 102.
    for (QAbstractSpinBox *spin : std::initializer_list<QAbstractSpinBox *> {
             m_nSpin, m_nKSpin, m_seedSpin, m_dModelSpin, m_temperatureSpin, m_paddingSpin,
             m_ropeBaseSpin, m_windowSpin, m_sinksSpin, m_sinkLogitSpin, m_lambdaSpin,
             m_latentDimSpin, m_latentRopeDimSpin, m_gateBiasSpin})
        spin->setKeyboardTracking(false);

    // ---- Wiring: each control edits one field ----
    connect(m_kindCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto kind = AttentionKind(m_kindCombo->itemData(index).toInt());
        edit([kind](SessionParameters &p) { p.kind = kind; });
    });
    connect(m_nSlider, &QSlider::valueChanged, this, [this](int position) {
        const int n = std::min(maxN, logSliderValue(position, nSliderSteps));
        edit([n](SessionParameters &p) { p.n = n; });
    });
    connect(m_nSpin, &QSpinBox::valueChanged, this,
            [this](int n) { edit([n](SessionParameters &p) { p.n = n; }); });
    connect(m_tokensEdit, &QLineEdit::textChanged, this, [this](const QString &text) {
        const QStringList tokens = splitTokens(text);
        edit([tokens](SessionParameters &p) { p.setTokens(tokens); });
    });
    connect(m_nKSpin, &QSpinBox::valueChanged, this,
            [this](int nK) { edit([nK](SessionParameters &p) { p.nK = nK; }); });
    connect(m_seedSpin, &QSpinBox::valueChanged, this,
            [this](int seed) { edit([seed](SessionParameters &p) { p.seed = quint64(seed); }); });
    connect(m_generatorCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto source = RandomSource(m_generatorCombo->itemData(index).toInt());
        edit([source](SessionParameters &p) { p.generator = source; });
    });
    connect(m_positionalCheck, &QCheckBox::toggled, this, [this](bool on) {
        edit([on](SessionParameters &p) {
            p.positional = on;
            if (on)
                p.rope = p.alibi = false; // one position scheme at a time
        });
    });
    connect(m_schemeCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const int scheme = m_schemeCombo->itemData(index).toInt();
        edit([scheme](SessionParameters &p) {
            p.rope = scheme == 1 || scheme == 2;
            p.alibi = scheme == 3;
            if (p.rope)
                p.ropeConvention = scheme == 1 ? RopeConvention::Interleaved : RopeConvention::Half;
            if (scheme != 0)
                p.positional = false; // one position scheme at a time
        });
    });
    connect(m_ropeBaseSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double base) { edit([base](SessionParameters &p) { p.ropeBase = base; }); });
    connect(m_kvHeadsCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const int g = m_kvHeadsCombo->itemData(index).toInt();
        edit([g](SessionParameters &p) { p.kvHeads = g == p.heads ? 0 : g; });
    });
    connect(m_windowSpin, &QSpinBox::valueChanged, this, [this](int w) {
        edit([w](SessionParameters &p) {
            p.window = w;
            if (w == 0)
                p.sinks = 0;
        });
    });
    connect(m_sinksSpin, &QSpinBox::valueChanged, this,
            [this](int s) { edit([s](SessionParameters &p) { p.sinks = s; }); });
    connect(m_variantCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const int variant = m_variantCombo->itemData(index).toInt();
        edit([variant](SessionParameters &p) {
            p.learnedSink = variant == 1;
            p.differential = variant == 2;
            p.latent = variant == 3;
            if (p.latent) { // MLA brings its own RoPE key and one latent for every head
                p.rope = false;
                p.alibi = false;
                p.kvHeads = 0;
                if (p.kind == AttentionKind::EncoderDecoder)
                    p.kind = AttentionKind::EncoderSelf;
            }
        });
    });
    connect(m_sinkLogitSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double b) { edit([b](SessionParameters &p) { p.sinkLogit = b; }); });
    connect(m_lambdaSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double l) { edit([l](SessionParameters &p) { p.lambda = l; }); });
    connect(m_headLambdasEdit, &QLineEdit::editingFinished, this, [this] {
        QString error;
        const auto lambdas = parseHeadLambdas(m_headLambdasEdit->text(), m_params.heads, &error);
        m_variantNote->setText(error);
        m_variantNote->setVisible(!error.isEmpty());
        if (!lambdas) {
            emit noteShown(error);
            return;
        }
        edit([l = *lambdas](SessionParameters &p) { p.headLambdas = l; });
    });
    connect(m_gateCheck, &QCheckBox::toggled, this,
            [this](bool on) { edit([on](SessionParameters &p) { p.outputGate = on; }); });
    connect(m_gateBiasSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double b) { edit([b](SessionParameters &p) { p.gateBias = b; }); });
    connect(m_latentDimSpin, &QSpinBox::valueChanged, this,
            [this](int d) { edit([d](SessionParameters &p) { p.latentDim = d; }); });
    connect(m_latentRopeDimSpin, &QSpinBox::valueChanged, this, [this](int d) {
        // RoPE rotates pairs: an odd d_r becomes the next even one, and the field says so.
        edit([d](SessionParameters &p) { p.latentRopeDim = d + d % 2; });
        if (m_latentRopeDimSpin->value() != int(m_params.latentRopeDim)) {
            const QSignalBlocker blocker(m_latentRopeDimSpin);
            m_latentRopeDimSpin->setValue(int(m_params.latentRopeDim));
            emit noteShown(
                tr("d_r = %1 is odd: RoPE rotates pairs of dimensions, d_r = %2 is used.")
                    .arg(d)
                    .arg(m_params.latentRopeDim));
        }
    });
    connect(m_absorbedCheck, &QCheckBox::toggled, this,
            [this](bool on) { edit([on](SessionParameters &p) { p.latentAbsorbed = on; }); });
    connect(m_dtypeCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto dtype = DType(m_dtypeCombo->itemData(index).toInt());
        edit([dtype](SessionParameters &p) { p.dtype = dtype; });
    });
    connect(m_dModelSpin, &QSpinBox::valueChanged, this,
            [this](int dModel) { edit([dModel](SessionParameters &p) { p.dModel = dModel; }); });
    connect(m_headsCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0)
            return;
        const int heads = m_headsCombo->itemData(index).toInt();
        edit([heads](SessionParameters &p) { p.heads = heads; });
    });
    connect(m_dkSlider, &QSlider::valueChanged, this, [this](int position) {
        const int dK = logSliderValue(position, dkSliderSteps);
        edit([dK](SessionParameters &p) { p.dModel = std::min<Index>(maxDModel, dK * p.heads); });
    });
    connect(m_alphaSlider, &QSlider::valueChanged, this, [this](int value) {
        edit([value](SessionParameters &p) { p.scaleExponent = value / 100.0; });
    });
    connect(m_sqrtCheck, &QCheckBox::toggled, this, [this](bool on) {
        edit([on](SessionParameters &p) { p.scaleExponent = on ? 0.5 : 0.0; });
    });
    connect(m_temperatureSpin, &QDoubleSpinBox::valueChanged, this,
            [this](double t) { edit([t](SessionParameters &p) { p.temperature = t; }); });
    connect(m_maskCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto mask = MaskChoice(m_maskCombo->itemData(index).toInt());
        edit([mask](SessionParameters &p) { p.mask = mask; });
    });
    connect(m_paddingSpin, &QSpinBox::valueChanged, this, [this](int count) {
        m_paddingWanted = count; // the user's choice, kept while n shrinks below it
        edit([count](SessionParameters &p) { p.paddingCount = count; });
    });
}

void ControlPanel::normalize(SessionParameters &p) const
{
    // The parameters' own rules; the padding count is the user's, clamped to the keys there
    // are now (a smaller n does not destroy it; when n grows back the count is restored).
    static_cast<EngineParameters &>(p) = p.normalized(m_paddingWanted);
}

void ControlPanel::edit(const std::function<void(SessionParameters &)> &change)
{
    SessionParameters p = m_params;
    change(p);
    const int wantedHeads = p.heads;
    normalize(p);
    if (p == m_params)
        return;
    // h must divide d_model: say so when the edit moved h to the nearest divisor.
    m_headsNote = p.heads == wantedHeads
        ? QString()
        : tr("h = %1 does not divide d_model = %2: h is now %3, the nearest divisor.")
              .arg(wantedHeads)
              .arg(p.dModel)
              .arg(p.heads);
    m_params = p;
    syncWidgets();
    emit parametersEdited(m_params);
}

void ControlPanel::setParameters(const SessionParameters &params)
{
    // The panel's own edit coming back (parametersEdited → session → parametersChanged): the
    // widgets show it already.
    if (params == m_params)
        return;
    m_headsNote.clear(); // an outside change (a session, undo): not the panel's adjustment
    // An outside change (a session, undo) sets the padding count, unless it is our own clamped
    // value coming back.
    if (m_paddingWanted < 0
        || params.paddingCount != std::clamp<Index>(m_paddingWanted, 0, params.keyCount()))
        m_paddingWanted = params.paddingCount;
    m_params = params;
    syncWidgets();
}

void ControlPanel::syncWidgets()
{
    const SessionParameters &p = m_params;
    // Widgets are updated with their signals blocked: one edit, one parametersEdited.
    const QList<QWidget *> all
        = {m_kindCombo,         m_nSlider,         m_nSpin,         m_nKSpin,
           m_seedSpin,          m_positionalCheck, m_dtypeCombo,    m_dModelSpin,
           m_headsCombo,        m_dkSlider,        m_alphaSlider,   m_sqrtCheck,
           m_temperatureSpin,   m_maskCombo,       m_paddingSpin,   m_tokensEdit,
           m_schemeCombo,       m_ropeBaseSpin,    m_kvHeadsCombo,  m_windowSpin,
           m_sinksSpin,         m_variantCombo,    m_sinkLogitSpin, m_lambdaSpin,
           m_headLambdasEdit,   m_gateCheck,       m_gateBiasSpin,  m_latentDimSpin,
           m_latentRopeDimSpin, m_absorbedCheck};
    std::vector<std::unique_ptr<QSignalBlocker>> blockers;
    for (QWidget *w : all)
        blockers.push_back(std::make_unique<QSignalBlocker>(w));
    const QSignalBlocker generatorBlocker(m_generatorCombo);

    // A model run knows the attention that made its weights (d_model, d_k, g, the causal mask,
    // the window and the scale: the parameters hold what they can of it); stored weights know
    // none of it, and the fields say n/a instead of the parameters' placeholders (d_model = h,
    // d_k = 1, encoder self-attention without a mask). Empty combo boxes show their "n/a"
    // placeholder text, a spin box its special-value text at its minimum.
    const auto modelShape = p.tensors ? p.tensors->modelShape() : std::nullopt;
    const bool fromModel = modelShape.has_value();
    const TensorSource::ModelShape shape = modelShape.value_or(TensorSource::ModelShape {});
    const bool storedWeights = p.tensors && p.tensors->isWeights() && !fromModel;
    const bool kindUnknown = storedWeights && p.kind != AttentionKind::EncoderDecoder;
    m_kindCombo->setCurrentIndex(kindUnknown ? -1 : m_kindCombo->findData(int(p.kind)));
    setLogSlider(m_nSlider, p.n, nSliderSteps);
    m_nSpin->setMaximum(int(std::max<Index>(maxN, p.n)));
    m_nSpin->setValue(p.n);
    // The typed text stays as typed while it still gives these tokens (an outside change, e.g.
    // an opened session, shows the text that splits back into exactly its tokens: those with
    // spaces or punctuation in them escaped, so editing the field keeps them whole).
    if (splitTokens(m_tokensEdit->text()) != p.tokenList()) {
        m_tokensEdit->setText(joinTokens(p.tokenList()));
        m_tokensEdit->setCursorPosition(0); // the sentence's start, not its end, in view
    }
    m_nSlider->setEnabled(true); // typed tokens disable them below
    m_nSpin->setEnabled(true);
    // Self-attention's keys are the queries: the disabled field shows n_k = n, not the
    // encoder length kept for cross-attention.
    m_nKSpin->setMaximum(int(std::max<Index>(maxN, std::max(p.nK, p.n))));
    m_nKSpin->setValue(int(p.keyCount()));
    m_nKSpin->setEnabled(p.kind == AttentionKind::EncoderDecoder);
    m_seedSpin->setValue(int(std::min<quint64>(p.seed, quint64(m_seedSpin->maximum()))));
    m_generatorCombo->setCurrentIndex(m_generatorCombo->findData(int(p.generator)));
    m_positionalCheck->setChecked(p.positional);
    const int scheme = p.rope ? (p.ropeConvention == RopeConvention::Interleaved ? 1 : 2)
        : p.alibi             ? 3
                              : 0;
    m_schemeCombo->setCurrentIndex(m_schemeCombo->findData(scheme));
    m_ropeBaseSpin->setValue(p.ropeBase);
    m_ropeBaseSpin->setEnabled(p.rope);
    m_dtypeCombo->setCurrentIndex(m_dtypeCombo->findData(int(p.dtype)));

    const bool dModelText = storedWeights || (fromModel && shape.dModel != p.dModel);
    m_dModelSpin->setSpecialValueText(!dModelText     ? QString()
                                          : fromModel ? QString::number(shape.dModel)
                                                      : tr("n/a"));
    m_dModelSpin->setValue(dModelText ? m_dModelSpin->minimum() : int(p.dModel));
    const QList<int> ds = divisors(p.dModel);
    bool sameHeads = m_headsCombo->count() == ds.size();
    for (int i = 0; sameHeads && i < ds.size(); ++i)
        sameHeads = m_headsCombo->itemData(i).toInt() == ds[i];
    if (!sameHeads) {
        m_headsCombo->clear();
        for (int d : ds)
            m_headsCombo->addItem(QString::number(d), d);
    }
    m_headsCombo->setCurrentIndex(m_headsCombo->findData(int(p.heads)));
    const QList<int> gs = p.heads > 0 ? divisors(p.heads) : QList<int>();
    m_kvHeadsCombo->clear();
    for (int g : gs)
        m_kvHeadsCombo->addItem(g == p.heads ? tr("%1 (multi-head)").arg(g)
                                    : g == 1 ? tr("1 (multi-query)")
                                             : QString::number(g),
                                g);
    m_kvHeadsCombo->setCurrentIndex(
        storedWeights
            ? -1
            : m_kvHeadsCombo->findData(fromModel ? shape.kvHeads : int(p.keyValueHeads())));
    // Weights come without the Controls' layer: its parameter count and KV cache do not apply.
    if (p.tensors && p.tensors->isWeights()) {
        m_headsInfoLabel->setText(fromModel ? tr("parameters and KV cache: n/a (a model's weights)")
                                            : tr("parameters and KV cache: n/a (stored weights)"));
    } else if (p.validate().isEmpty()) {
        // The counts are the parameters' own (EngineParameters::parameterCount and
        // cacheBytesPerToken: MLA, differential attention's second W_Q, W_K and K₂, the gate).
        const int bytes = p.dtype == DType::Float32 ? 4 : 8;
        const QString cached = p.latent
            ? tr("(d_c + d_r)·%1 B").arg(bytes)
            : tr("%1·g·d_k·%2 B").arg(p.differential ? 3 : 2).arg(bytes);
        m_headsInfoLabel->setText(tr("%1%2 parameters · KV cache %3 B/token (%4)")
                                      .arg(p.latent ? tr("MLA: ") : QString())
                                      .arg(QLocale().toString(qlonglong(p.parameterCount())))
                                      .arg(p.cacheBytesPerToken(bytes))
                                      .arg(cached));
    }

    const int dK = fromModel ? shape.headDim : int(p.dK());
    m_dkSlider->setRange(
        0,
        logSliderPosition(int(std::max<Index>(1, maxDModel / std::max<Index>(1, p.heads))),
                          dkSliderSteps));
    setLogSlider(m_dkSlider, dK, dkSliderSteps);
    m_dkLabel->setText(storedWeights ? tr("n/a") : QString::number(dK));
    if (m_headsNoteLabel->text() != m_headsNote && !m_headsNote.isEmpty())
        emit noteShown(m_headsNote);
    m_headsNoteLabel->setText(m_headsNote);
    m_headsNoteLabel->setVisible(!m_headsNote.isEmpty());

    const int alphaPercent = int(std::lround(p.scaleExponent * 100));
    if (m_alphaSlider->value() != alphaPercent)
        m_alphaSlider->setValue(alphaPercent);
    m_alphaLabel->setText(QString::number(p.scaleExponent, 'f', 2));
    m_sqrtCheck->setChecked(p.scaleExponent == 0.5);
    m_temperatureSpin->setValue(p.temperature);
    if (storedWeights)
        m_scaleLabel->setText(tr("n/a (stored weights)"));
    else if (fromModel)
        m_scaleLabel->setText(
            QStringLiteral("%1 = %2").arg(scaleFormula(0.5, 1.0, dK)).arg(shape.scale, 0, 'g', 4));
    else
        m_scaleLabel->setText(
            QStringLiteral("%1 = %2")
                .arg(scaleFormula(p.scaleExponent, p.temperature,
                                  std::max<Index>(1, p.latent ? p.scoreDim() : dK)))
                .arg(p.scale(), 0, 'g', 4));

    // The items name the mask that is applied: under decoder self-attention or a sliding window
    // the causal mask is on whatever the choice, so "None" would misstate it.
    const int window = fromModel ? shape.window : int(p.window);
    const bool alwaysCausal = p.kind == AttentionKind::DecoderCausal || window > 0;
    const QString causalBy = window > 0 ? tr("sliding window") : tr("decoder");
    m_maskCombo->setItemText(0, alwaysCausal ? tr("Causal (%1)").arg(causalBy) : tr("None"));
    m_maskCombo->setItemText(
        1, alwaysCausal ? tr("Causal (%1)").arg(causalBy) : tr("Causal (no look-ahead)"));
    m_maskCombo->setItemText(2,
                             alwaysCausal ? tr("Causal (%1) + key padding").arg(causalBy)
                                          : tr("Key padding (last keys)"));
    m_maskCombo->setCurrentIndex(storedWeights ? -1 : m_maskCombo->findData(int(p.mask)));
    m_paddingSpin->setRange(0, p.keyCount());
    m_paddingSpin->setValue(p.paddingCount);
    m_paddingSpin->setEnabled(p.mask == MaskChoice::KeyPadding);
    m_windowSpin->setValue(window);
    m_sinksSpin->setValue(p.sinks);
    m_sinksSpin->setEnabled(p.window > 0);
    m_variantCombo->setCurrentIndex(p.learnedSink ? 1 : p.differential ? 2 : p.latent ? 3 : 0);
    m_sinkLogitSpin->setValue(p.sinkLogit);
    m_lambdaSpin->setValue(p.lambda);
    if (!m_headLambdasEdit->hasFocus() || p.headLambdas.empty()) {
        m_headLambdasEdit->setText(headLambdasText(p.headLambdas));
        // The field shows the λ in use again: a note on a list it refused no longer applies.
        if (!m_headLambdasEdit->hasFocus())
            m_variantNote->setVisible(false);
    }
    m_gateCheck->setChecked(p.outputGate);
    m_gateBiasSpin->setValue(p.gateBias);
    m_latentDimSpin->setValue(int(p.latentDim));
    m_latentRopeDimSpin->setValue(int(p.latentRopeDim));
    m_absorbedCheck->setChecked(p.latentAbsorbed);
    QStringList notes;
    if (p.mask == MaskChoice::KeyPadding && m_paddingWanted > p.paddingCount)
        notes << tr("Padding %1 keys asked, only %2 keys: %2 used until there are more keys.")
                     .arg(m_paddingWanted)
                     .arg(p.keyCount());
    if (p.kind == AttentionKind::DecoderCausal)
        notes << tr("Decoder self-attention: the causal mask is always on.");
    else if (p.window > 0)
        notes << tr("The sliding window is causal: query i sees keys i − w < j ≤ i.");
    else if (p.kind == AttentionKind::EncoderDecoder && p.mask == MaskChoice::Causal)
        notes << tr("n ≠ n_k: causal is aligned top-left (query i sees keys j ≤ i).");
    const QString maskNote = notes.join(QLatin1Char('\n'));
    if (m_maskNote->text() != maskNote && !maskNote.isEmpty())
        emit noteShown(maskNote);
    m_maskNote->setText(maskNote);
    m_maskNote->setVisible(!maskNote.isEmpty());

    // Loaded tensors (File → Open tensors…) fix the shapes; loaded weights are shown as stored,
    // so nothing else applies to them either.
    const bool loaded = p.tensors != nullptr;
    const bool weightsOnly = loaded && p.tensors->isWeights();
    const QList<QWidget *> shapeControls
        = {m_kindCombo,  m_nSlider,         m_nSpin,    m_seedSpin,    m_dModelSpin,
           m_headsCombo, m_positionalCheck, m_dkSlider, m_schemeCombo, m_kvHeadsCombo};
    for (QWidget *w : shapeControls)
        w->setEnabled(!loaded);
    // A tensor file brings its own variant arrays (sink_logits, query2/key2/lambda).
    m_variantCombo->setEnabled(!loaded);
    m_sinkLogitSpin->setEnabled(!loaded && p.learnedSink);
    m_lambdaSpin->setEnabled(!loaded && p.differential && p.headLambdas.empty());
    m_headLambdasEdit->setEnabled(!loaded && p.differential);
    m_gateCheck->setEnabled(!loaded);
    m_gateBiasSpin->setEnabled(!loaded && p.outputGate);
    for (QWidget *w :
         {static_cast<QWidget *>(m_latentDimSpin), static_cast<QWidget *>(m_latentRopeDimSpin),
          static_cast<QWidget *>(m_absorbedCheck)})
        w->setEnabled(!loaded && p.latent);
    m_generatorCombo->setEnabled(!loaded);
    m_nKSpin->setEnabled(!loaded && p.kind == AttentionKind::EncoderDecoder);
    const QList<QWidget *> computeControls
        = {m_dtypeCombo, m_alphaSlider, m_sqrtCheck, m_temperatureSpin, m_maskCombo, m_windowSpin};
    for (QWidget *w : computeControls)
        w->setEnabled(!weightsOnly);
    m_sinksSpin->setEnabled(!weightsOnly && p.window > 0);
    m_paddingSpin->setEnabled(!weightsOnly && p.mask == MaskChoice::KeyPadding);
    // Loaded tensors carry their own inputs: typed tokens would change nothing here (their
    // labels are set in the Tensors dock).
    m_tokensEdit->setEnabled(!loaded);
    m_tokensEdit->setToolTip(
        loaded ? tr("Disabled while tensors are loaded: the loaded query/key tensors (or stored "
                    "weights) are the inputs, so a sentence here would change nothing. Set the "
                    "token labels in the Tensors dock.")
               : m_tokensToolTip);

    // Typed tokens fix n: their count.
    if (!p.tokens.empty()) {
        m_nSlider->setEnabled(false);
        m_nSpin->setEnabled(false);
    }
}

void ControlPanel::toggleScaled()
{
    m_sqrtCheck->toggle();
}

void ControlPanel::cycleMask()
{
    m_maskCombo->setCurrentIndex((m_maskCombo->currentIndex() + 1) % m_maskCombo->count());
}

void ControlPanel::multiplyDk(double factor)
{
    edit([factor](SessionParameters &p) {
        const Index dK = std::max<Index>(1, std::lround(double(p.dK()) * factor));
        const Index maxDk = std::max<Index>(1, maxDModel / p.heads);
        p.dModel = std::min(dK, maxDk) * p.heads;
    });
}

void ControlPanel::nextSeed()
{
    edit([](SessionParameters &p) {
        if (p.seed < quint64(std::numeric_limits<int>::max()))
            ++p.seed;
    });
}

} // namespace attn
