#pragma once
// ModelPanel: the "Model" dock of File → Open Model…. Shows the open model (name, family,
// layers × heads, tokenizer), the text to run it on (or token ids when the folder has no
// tokenizer), the token strip of that text (ui/views/tokenstrip.h), Run and Cancel with the
// forward pass's progress (layers done / total), and the next-token readout: the k most probable
// tokens after the last one with their probabilities. It only displays and emits requests;
// ModelController acts on them.

#include "ui/session/modelrun.h"

#include <QWidget>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace attn {

class TokenStrip;

class ModelPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ModelPanel(QWidget *parent = nullptr);

    /// The open model (nullptr: none; the strip then shows the window's word split).
    void setModel(const OpenedModel *model);
    /// The input text without emitting textChanged.
    void setText(const QString &text);
    QString text() const;
    /// True when the input is read as token ids (no tokenizer, or the box ticked).
    bool idsInput() const;
    void setIdsInput(bool ids);
    /// While a forward pass runs: Run disabled, Cancel and the progress bar shown.
    void setRunning(bool running);
    /// Layers done of the total.
    /// The progress bar at `done` of `total` layers, labelled "layer done / total" with
    /// `stage` before it when not empty ("thumbnails").
    void setProgress(int done, int total, const QString &stage = QString());
    /// A one-line message (errors in red); empty hides it.
    void setMessage(const QString &message, bool error = false);
    /// Shows a finished run's next-token readout and timing.
    void setRun(const ModelRun &run);
    /// Clears the next-token readout.
    void clearRun();

    TokenStrip *tokenStrip() const { return m_strip; }
    QPlainTextEdit *textEdit() const { return m_text; }
    QCheckBox *idsCheck() const { return m_idsCheck; }
    QPushButton *runButton() const { return m_run; }
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *progressBar() const { return m_progress; }
    QLabel *titleLabel() const { return m_title; }
    QLabel *messageLabel() const { return m_message; }
    QTableWidget *nextTokenTable() const { return m_next; }

signals:
    void runRequested();
    void cancelRequested();
    void openRequested();
    /// The text or the ids mode changed (the strip follows).
    void inputChanged();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QLabel *m_title;
    QLabel *m_tokenizer;
    QPlainTextEdit *m_text;
    QCheckBox *m_idsCheck;
    TokenStrip *m_strip;
    QPushButton *m_open;
    QPushButton *m_run;
    QPushButton *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_message;
    QLabel *m_nextTitle;
    QTableWidget *m_next;
    bool m_hasModel = false;
    bool m_hasTokenizer = false;
};

} // namespace attn
