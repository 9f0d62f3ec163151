#include "ui/panels/modelpanel.h"

#include "ui/views/tokenstrip.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace attn {

ModelPanel::ModelPanel(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_tokenizer(new QLabel(this))
    , m_text(new QPlainTextEdit(this))
    , m_idsCheck(new QCheckBox(tr("Token ids"), this))
    , m_strip(new TokenStrip(this))
    , m_open(new QPushButton(tr("Open\u2026"), this))
    , m_run(new QPushButton(tr("Run"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_progress(new QProgressBar(this))
    , m_message(new QLabel(this))
    , m_nextTitle(new QLabel(tr("<b>Next token</b> (softmax of the last row of the logits)"), this))
    , m_next(new QTableWidget(0, 3, this))
{
    setObjectName(QStringLiteral("modelPanel"));
    m_title->setObjectName(QStringLiteral("modelTitle"));
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tokenizer->setWordWrap(true);
    m_tokenizer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setObjectName(QStringLiteral("modelText"));
    m_text->setPlaceholderText(tr("Text to run the model on (Ctrl+Enter runs it)"));
    m_text->setTabChangesFocus(true);
    m_text->setFixedHeight(m_text->fontMetrics().lineSpacing() * 3 + 12);
    m_text->installEventFilter(this);
    m_idsCheck->setObjectName(QStringLiteral("modelIdsCheck"));
    m_idsCheck->setToolTip(tr("Read the box as token ids separated by commas or spaces (always, "
                              "when the model folder has no tokenizer)"));
    m_open->setToolTip(tr("Open another model folder (File \u2192 Open Model\u2026)"));
    m_run->setObjectName(QStringLiteral("modelRunButton"));
    m_run->setDefault(true);
    m_run->setToolTip(tr("Run the forward pass on the tokens (Ctrl+Enter)"));
    m_cancel->setObjectName(QStringLiteral("modelCancelButton"));
    m_cancel->setToolTip(tr("Stop the forward pass; the views keep what they show"));
    m_progress->setObjectName(QStringLiteral("modelProgress"));
    m_progress->setFormat(tr("layer %v / %m"));
    m_progress->setTextVisible(true);
    m_nextTitle->setWordWrap(true);
    m_message->setObjectName(QStringLiteral("modelMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_next->setObjectName(QStringLiteral("nextTokenTable"));
    m_next->setHorizontalHeaderLabels({tr("piece"), tr("probability"), tr("id")});
    m_next->verticalHeader()->setDefaultSectionSize(m_next->fontMetrics().height() + 4);
    m_next->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_next->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_next->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    m_next->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_next->setSelectionMode(QAbstractItemView::NoSelection);
    m_next->setToolTip(tr("The most probable tokens after the last one, by rank"));
    // The corner button (select all) has nothing to do in a table without selection.
    m_next->setCornerButtonEnabled(false);
    if (auto *corner = m_next->findChild<QAbstractButton *>())
        corner->setToolTip(tr("Rank"));

    // One column, so the dock can be as narrow as the Controls beside it.
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_tokenizer);
    layout->addWidget(m_text);
    // The check box on a row of its own: beside three buttons it widens the dock past the
    // Controls' width at 1280 × 800.
    layout->addWidget(m_idsCheck);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_open);
    buttons->addStretch(1);
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    layout->addLayout(buttons);
    // The run's progress and messages (a refusal in red) above the strip, which a long text
    // makes tall.
    layout->addWidget(m_progress);
    layout->addWidget(m_message);
    layout->addWidget(m_strip);
    layout->addWidget(m_nextTitle);
    layout->addWidget(m_next);
    layout->addStretch(1);

    connect(m_open, &QPushButton::clicked, this, &ModelPanel::openRequested);
    connect(m_run, &QPushButton::clicked, this, &ModelPanel::runRequested);
    connect(m_cancel, &QPushButton::clicked, this, &ModelPanel::cancelRequested);
    connect(m_text, &QPlainTextEdit::textChanged, this, &ModelPanel::inputChanged);
    connect(m_idsCheck, &QCheckBox::toggled, this, &ModelPanel::inputChanged);
    setModel(nullptr);
    setRunning(false);
    setMessage(QString());
    clearRun();
}

void ModelPanel::setModel(const OpenedModel *model)
{
    m_hasModel = model != nullptr;
    m_hasTokenizer = model && model->tokenizer;
    if (!model) {
        m_title->setText(tr("No model open. File \u2192 Open Model\u2026 takes a folder with "
                            "config.json and .safetensors weights (GPT-2, Llama, Qwen2, Qwen3, "
                            "BERT)."));
        m_tokenizer->clear();
    } else {
        m_title->setText(QStringLiteral("<b>%1</b><br>%2")
                             .arg(model->name.toHtmlEscaped(), model->summary().toHtmlEscaped()));
        m_title->setToolTip(model->folder);
        // The tokenizer's files named without the model's folder (long paths do not wrap).
        QString description = QString::fromStdString(
            model->tokenizer ? model->tokenizer->description() : std::string());
        description.replace(model->folder + QLatin1Char('/'), QString());
        m_tokenizer->setText(
            m_hasTokenizer ? tr("Tokenizer: %1").arg(description.toHtmlEscaped())
                           : tr("<span style='color:#a33'>No tokenizer: type token ids.</span> %1")
                                 .arg(QString(model->tokenizerProblem)
                                          .replace(model->folder + QLatin1Char('/'), QString())
                                          .toHtmlEscaped()));
    }
    m_tokenizer->setVisible(model != nullptr);
    m_idsCheck->setEnabled(m_hasTokenizer);
    if (model && !m_hasTokenizer) {
        const QSignalBlocker blocker(m_idsCheck);
        m_idsCheck->setChecked(true);
    }
    m_text->setPlaceholderText(idsInput() ? tr("Token ids, e.g. 464, 3797, 3332 (Ctrl+Enter runs)")
                                          : tr("Text to run the model on (Ctrl+Enter runs it)"));
    m_run->setEnabled(model != nullptr);
}

void ModelPanel::setText(const QString &text)
{
    const QSignalBlocker blocker(m_text);
    m_text->setPlainText(text);
}

QString ModelPanel::text() const
{
    return m_text->toPlainText();
}

bool ModelPanel::idsInput() const
{
    return m_idsCheck->isChecked();
}

void ModelPanel::setIdsInput(bool ids)
{
    const QSignalBlocker blocker(m_idsCheck);
    m_idsCheck->setChecked(ids || (!m_hasTokenizer && m_idsCheck->isChecked()));
}

void ModelPanel::setRunning(bool running)
{
    m_run->setEnabled(!running && m_hasModel);
    m_cancel->setVisible(running);
    m_progress->setVisible(running);
    if (running)
        m_progress->setValue(0);
}

void ModelPanel::setProgress(int done, int total, const QString &stage)
{
    m_progress->setFormat(stage.isEmpty() ? tr("layer %v / %m")
                                          : tr("%1: layer %v / %m").arg(stage));
    m_progress->setRange(0, std::max(total, 1));
    m_progress->setValue(done);
}

void ModelPanel::setMessage(const QString &message, bool error)
{
    m_message->setText(message);
    m_message->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
    m_message->setVisible(!message.isEmpty());
}

void ModelPanel::setRun(const ModelRun &run)
{
    m_next->setRowCount(int(run.next.size()));
    for (int row = 0; row < int(run.next.size()); ++row) {
        const models::NextToken &t = run.next[std::size_t(row)];
        auto *piece = new QTableWidgetItem(run.nextLabels.value(row));
        piece->setToolTip(tr("rank %1, logit %2").arg(row + 1).arg(nextTokenNumberText(t.logit)));
        auto *p = new QTableWidgetItem(nextTokenNumberText(t.probability));
        p->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto *id = new QTableWidgetItem(QString::number(t.id));
        id->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_next->setItem(row, 0, piece);
        m_next->setItem(row, 1, p);
        m_next->setItem(row, 2, id);
    }
    m_nextTitle->setVisible(true);
    m_next->setVisible(true);
    // As tall as its rows: the readout is short, the dock's spare room goes below it.
    const int rows = std::max(1, int(run.next.size()));
    m_next->setFixedHeight(m_next->horizontalHeader()->sizeHint().height()
                           + rows * m_next->verticalHeader()->defaultSectionSize()
                           + 2 * m_next->frameWidth());
    if (run.next.empty())
        m_nextTitle->setText(tr("<b>Next token</b>: none (the checkpoint has no language-model "
                                "head)"));
    else
        m_nextTitle->setText(tr("<b>Next token</b> after \u201c%1\u201d (softmax of the last row "
                                "of the logits)")
                                 .arg(run.input.pieces.isEmpty()
                                          ? QString()
                                          : run.input.pieces.back().label.toHtmlEscaped()));
}

void ModelPanel::clearRun()
{
    m_next->setRowCount(0);
    m_nextTitle->setVisible(false);
    m_next->setVisible(false);
}

bool ModelPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_text && event->type() == QEvent::KeyPress) {
        auto *key = static_cast<QKeyEvent *>(event);
        if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter)
            && (key->modifiers() & Qt::ControlModifier)) {
            if (m_run->isEnabled())
                emit runRequested();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace attn
