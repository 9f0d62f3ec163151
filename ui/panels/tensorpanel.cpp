#include "ui/panels/tensorpanel.h"

#include "ui/session/tokenizer.h"

#include "ui/export/weightsexport.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

namespace attn {

namespace {

QLabel *wrappingLabel(QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

} // namespace

TensorPanel::TensorPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);

    m_fileLabel = wrappingLabel(this);
    m_fileLabel->setObjectName(QStringLiteral("tensorFileLabel"));
    m_fileLabel->setTextFormat(Qt::RichText);
    outer->addWidget(m_fileLabel);
    m_notesLabel = wrappingLabel(this);
    m_notesLabel->setForegroundRole(QPalette::PlaceholderText);
    outer->addWidget(m_notesLabel);

    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_layerSpin = new QSpinBox(this);
    m_layerSpin->setKeyboardTracking(false); // typing "11" shows layer 11, not 1 first
    m_layerSpin->setObjectName(QStringLiteral("tensorLayerSpin"));
    m_layerSpin->setToolTip(tr("Layer of a (layers × h × n_q × n_k) array of weights (0 = first)"));
    m_layerLabel = new QLabel(tr("&Layer:"), this);
    m_layerLabel->setBuddy(m_layerSpin);
    form->addRow(m_layerLabel, m_layerSpin);

    m_headCombo = new QComboBox(this);
    m_headCombo->setObjectName(QStringLiteral("tensorHeadCombo"));
    m_headCombo->setToolTip(tr("Show every head in a grid, one head enlarged, or the mean over "
                               "heads"));
    auto *headLabel = new QLabel(tr("H&ead:"), this);
    headLabel->setBuddy(m_headCombo);
    form->addRow(headLabel, m_headCombo);

    m_conventionCombo = new QComboBox(this);
    m_conventionCombo->setObjectName(QStringLiteral("tensorConventionCombo"));
    m_conventionCombo->addItem(tr("True = masked out (nn.MultiheadAttention)"),
                               int(MaskConvention::Masked));
    m_conventionCombo->addItem(tr("True = may attend (scaled_dot_product_attention)"),
                               int(MaskConvention::Allowed));
    m_conventionCombo->setToolTip(
        tr("What True means in the file's boolean attn_mask and key_padding_mask: PyTorch's "
           "nn.MultiheadAttention masks True cells out, F.scaled_dot_product_attention lets True "
           "cells attend. The wrong choice shows the opposite mask (experiment E10)."));
    m_conventionLabel = new QLabel(tr("&Masks:"), this);
    m_conventionLabel->setBuddy(m_conventionCombo);
    form->addRow(m_conventionLabel, m_conventionCombo);

    auto *tokensRow = new QWidget(this);
    auto *tokensLayout = new QHBoxLayout(tokensRow);
    tokensLayout->setContentsMargins(0, 0, 0, 0);
    m_tokensEdit = new QLineEdit(tokensRow);
    m_tokensEdit->setObjectName(QStringLiteral("tensorTokensEdit"));
    m_tokensEdit->setPlaceholderText(tr("labels separated by spaces"));
    m_tokensEdit->setClearButtonEnabled(true);
    m_tokensEdit->setToolTip(
        tr("Axis labels for the loaded tensors, separated by spaces (a backslash keeps a space "
           "in a label: New\\ York): one per position for self-attention, n_q query labels then "
           "n_k key labels for cross-attention. Press Enter to apply; an empty field shows the "
           "positions."));
    m_tokensButton = new QPushButton(tr("From &File…"), tokensRow);
    m_tokensButton->setObjectName(QStringLiteral("tensorTokensButton"));
    m_tokensButton->setToolTip(tr("Read the labels from a text file, one token per line (a "
                                  "file <name>.tokens.txt next to the tensors is read "
                                  "automatically)"));
    tokensLayout->addWidget(m_tokensEdit, 1);
    tokensLayout->addWidget(m_tokensButton);
    auto *tokensLabel = new QLabel(tr("&Tokens:"), this);
    tokensLabel->setBuddy(m_tokensEdit);
    form->addRow(tokensLabel, tokensRow);
    outer->addLayout(form);

    m_tokenMessage = wrappingLabel(this);
    m_tokenMessage->setObjectName(QStringLiteral("tensorTokenMessage"));
    m_tokenMessage->setStyleSheet(QStringLiteral("QLabel { color: #b35900; }"));
    m_tokenMessage->hide();
    outer->addWidget(m_tokenMessage);

    m_checkLabel = wrappingLabel(this);
    m_checkLabel->setObjectName(QStringLiteral("tensorCheckLabel"));
    m_checkLabel->setTextFormat(Qt::RichText);
    outer->addWidget(m_checkLabel);

    m_backButton = new QPushButton(tr("&Back to Random Inputs"), this);
    m_backButton->setObjectName(QStringLiteral("tensorBackButton"));
    m_backButton->setToolTip(tr("Show the seeded random inputs again, with the parameters from "
                                "before the tensors were loaded"));
    outer->addWidget(m_backButton);
    outer->addStretch(1);

    connect(m_layerSpin, &QSpinBox::valueChanged, this, &TensorPanel::layerRequested);
    connect(m_headCombo, &QComboBox::activated, this,
            [this](int index) { emit headRequested(m_headCombo->itemData(index).toInt()); });
    connect(m_conventionCombo, &QComboBox::activated, this, [this](int index) {
        emit maskConventionRequested(MaskConvention(m_conventionCombo->itemData(index).toInt()));
    });
    connect(m_tokensEdit, &QLineEdit::editingFinished, this, [this] {
        if (m_tokensEdit->isModified()) {
            m_tokensEdit->setModified(false);
            emit tokensTyped(m_tokensEdit->text());
        }
    });
    connect(m_tokensButton, &QPushButton::clicked, this, &TensorPanel::tokenFileRequested);
    connect(m_backButton, &QPushButton::clicked, this, &TensorPanel::backRequested);

    setParameters(SessionParameters {});
}

void TensorPanel::setParameters(const SessionParameters &params)
{
    m_source = params.tensors;
    const TensorSource *s = m_source.get();
    if (!s) {
        m_fileLabel->setText(tr("No tensors loaded: the view shows seeded random inputs. "
                                "File → Open Tensors… shows your own query/key/value or "
                                "attention weights."));
        m_notesLabel->clear();
    } else if (s->isModelRun()) {
        m_fileLabel->setText(tr("<b>%1</b><br>%2")
                                 .arg(s->title().toHtmlEscaped(),
                                      tr("attention weights of the forward pass (File → Open "
                                         "Model…; the Model dock runs it)")));
        m_fileLabel->setToolTip(s->path());
        const QStringList notes
            = QStringList {QString::fromStdString(s->rowSumCheck().text())} + s->notes();
        m_notesLabel->setText(notes.join(QLatin1Char('\n')));
    } else {
        m_fileLabel->setText(tr("<b>loaded: %1</b><br>%2")
                                 .arg(s->fileName().toHtmlEscaped(),
                                      (s->isWeights() ? tr("weights %1, shown as stored (not "
                                                           "recomputed)")
                                                            .arg(s->arrayName() + QLatin1Char(' ')
                                                                 + s->description())
                                                      : s->description())
                                          .toHtmlEscaped()));
        m_fileLabel->setToolTip(s->path());
        m_notesLabel->setText(s->notes().join(QLatin1Char('\n')));
    }
    m_notesLabel->setVisible(!m_notesLabel->text().isEmpty());

    const bool layers = s && s->layerCount() > 1;
    {
        const QSignalBlocker blocker(m_layerSpin);
        m_layerSpin->setRange(0, s ? s->layerCount() - 1 : 0);
        m_layerSpin->setValue(s ? s->layer() : 0);
        m_layerSpin->setSuffix(s ? tr(" of %1").arg(s->layerCount()) : QString());
    }
    m_layerSpin->setVisible(layers);
    m_layerLabel->setVisible(layers);

    const bool inputs = s && !s->isWeights();
    {
        const QSignalBlocker blocker(m_conventionCombo);
        m_conventionCombo->setCurrentIndex(
            m_conventionCombo->findData(int(s ? s->maskConvention() : MaskConvention::Masked)));
    }
    m_conventionCombo->setVisible(inputs);
    m_conventionLabel->setVisible(inputs);

    const QString typed = joinLabels(params.tokenList());
    if (!m_tokensEdit->hasFocus() || !m_tokensEdit->isModified())
        m_tokensEdit->setText(typed);
    m_tokensEdit->setEnabled(s != nullptr);
    m_tokensButton->setEnabled(s != nullptr);
    m_backButton->setEnabled(s != nullptr);
    if (!s)
        m_checkLabel->clear();
}

void TensorPanel::setResult(const std::shared_ptr<const SessionResult> &result)
{
    if (!result || !result->ok())
        return;
    const int h = result->headCount();
    if (h != m_heads || m_headCombo->count() == 0) {
        const QSignalBlocker blocker(m_headCombo);
        const int current
            = m_headCombo->currentData().isValid() ? m_headCombo->currentData().toInt() : allHeads;
        m_headCombo->clear();
        m_headCombo->addItem(tr("All heads (grid)"), allHeads);
        for (int k = 0; k < h; ++k)
            m_headCombo->addItem(tr("Head %1").arg(k), k);
        if (h > 1)
            m_headCombo->addItem(tr("Mean over heads"), h);
        m_heads = h;
        const int index = m_headCombo->findData(std::min(current, h));
        m_headCombo->setCurrentIndex(index < 0 ? 0 : index);
    }
    if (!m_source) {
        m_checkLabel->clear();
        return;
    }
    if (m_source->isWeights()) {
        const WeightStack *stack = m_source->weightStack();
        const WeightCheck check = checkWeights(*result, stack->type);
        m_checkLabel->setText(check.ok()
                                  ? tr("Rows: %1").arg(check.text().toHtmlEscaped())
                                  : tr("<b>⚠ Rows:</b> %1").arg(check.text().toHtmlEscaped()));
    } else {
        int fully = 0;
        for (const auto &flags : result->fullyMasked)
            for (std::uint8_t f : flags)
                fully += f != 0;
        // With learned sinks each row and its sink mass sum to 1; with differential attention
        // A₁'s rows do (those of A₁ − λA₂ sum to 1 − λ).
        const QString sums = !result->learnedSinkMass.empty() ? tr("worst |Σw + sink − 1|")
            : !result->lambda.empty()                         ? tr("worst |ΣA₁ − 1|")
                                                              : tr("worst |Σw − 1|");
        m_checkLabel->setText(tr("Recomputed: %1 = %2; %3 fully masked rows (weights 0)")
                                  .arg(sums)
                                  .arg(result->worstRowSumError, 0, 'g', 2)
                                  .arg(fully));
    }
}

void TensorPanel::setCurrentHead(int head)
{
    const QSignalBlocker blocker(m_headCombo);
    const int index = m_headCombo->findData(head);
    if (index >= 0)
        m_headCombo->setCurrentIndex(index);
}

void TensorPanel::setTokenMessage(const QString &message)
{
    m_tokenMessage->setText(message);
    m_tokenMessage->setVisible(!message.isEmpty());
}

} // namespace attn
