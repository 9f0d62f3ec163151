#pragma once
// ExperimentPage: one experiment of docs/experiments.md as a guided page of the Experiments panel —
// parameter editors generated from its ParamSpecs (defaults and tooltips from the registry),
// Run / Cancel with a progress bar, the figure and the result table (copyable) under it, the note
// on what to look at (with the paper section) and export of the table (CSV) and figure (PNG, SVG).
//
// Runs happen off the GUI thread (ExperimentRunner, ui/session/experimentrunner.h); progress
// arrives by signal, Cancel stops the run at its next cancellation check, and the newest run
// wins: starting a run cancels the running one, whose result is never delivered. Errors appear
// in the message line.

#include "core/experiments/experiments.h"

#include <QElapsedTimer>
#include <QSize>
#include <QWidget>

#include <map>
#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QTableView;
class QTimer;
class QVBoxLayout;

namespace attn {

class ExperimentRunner;

class TableModel;

class ExperimentPage : public QWidget
{
    Q_OBJECT
public:
    explicit ExperimentPage(const ExperimentInfo &info, QWidget *parent = nullptr);
    ~ExperimentPage() override; ///< cancels a running experiment (the worker stops by itself)

    const ExperimentInfo &info() const { return m_info; }
    QString experimentId() const { return QString::fromStdString(m_info.id); }

    /// Current editor values by parameter name, as text (what runExperiment parses).
    ExperimentParams parameters() const;
    /// Sets one editor from text; false when the name is unknown or the editor rejects the text
    /// (out of range, not a number, not one of the choices).
    bool setParameter(const QString &name, const QString &value);
    /// Puts every editor back to its default (docs/experiments.md).
    void resetParameters();
    /// The editor of a parameter (nullptr when unknown); its objectName is "param_<name>".
    QWidget *editor(const QString &name) const;

    /// Latest delivered result (nullptr before the first).
    std::shared_ptr<const ExperimentResult> result() const { return m_result; }
    TableModel *tableModel() const { return m_tableModel; }
    QTableView *tableView() const { return m_tableView; }
    bool isRunning() const;
    /// Text of the message line (status or error).
    QString message() const;

    /// Writes the result table as JSON for a .json name (as `attnlab experiment --format json`),
    /// else as CSV (.csv or no suffix); false with `error` naming the path when it fails or the
    /// suffix is another.
    bool exportTable(const QString &path, QString *error) const;
    /// Writes the figure (.png / .svg); an empty size takes the default size.
    bool exportFigure(const QString &path, QSize size, QString *error) const;
    /// Copies the selected table cells to the clipboard as TSV (full precision).
    void copySelection() const;

public slots:
    /// Starts a run with the current parameters (cancelling a running one).
    void run();
    /// Cancels the running experiment; `cancelled` follows when the worker has stopped.
    void cancel();

signals:
    void started();
    void resultReady();
    void failed(const QString &message);
    void cancelled();
    void runningChanged(bool running);
    void progressChanged(double fraction);

private:
    QWidget *createEditor(const ParamSpec &spec);
    QString editorText(const ParamSpec &spec) const;
    void onFinished(std::shared_ptr<const ExperimentResult> result);
    void showResult(std::shared_ptr<const ExperimentResult> result);
    void setMessage(const QString &text, bool error);
    /// The message after a cancelled run of `seconds`: its measurements are dropped, and what the
    /// table and figure show instead (the previous run: when it finished and the parameters in
    /// which it differs from the fields now; or nothing).
    QString cancelledMessage(double seconds) const;
    void fitTableHeight();
    void fitFigureHeight();
    bool eventFilter(QObject *watched, QEvent *event) override;
    void setRunning(bool running);
    void exportTableInteractive();
    void exportFigureInteractive();

    ExperimentInfo m_info;
    std::map<QString, QWidget *> m_editors;
    std::shared_ptr<const ExperimentResult> m_result;
    ExperimentRunner *m_runner = nullptr; ///< runs the experiment off the GUI thread
    QElapsedTimer m_clock;
    QString m_resultTime; ///< when the shown result's run finished ("14:02:31")

    QPushButton *m_runButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QPushButton *m_exportTableButton = nullptr;
    QPushButton *m_exportFigureButton = nullptr;
    QProgressBar *m_progress = nullptr;
    QTimer *m_progressDelay = nullptr;
    QLabel *m_message = nullptr;
    QLabel *m_notes = nullptr;
    QTableView *m_tableView = nullptr;
    TableModel *m_tableModel = nullptr;
    QScrollArea *m_scroll = nullptr;
    QScrollArea *m_figureScroll = nullptr; ///< the figure, scrolling sideways when wider
    QWidget *m_figureHolder = nullptr;
    QVBoxLayout *m_figureLayout = nullptr;
    QWidget *m_figure = nullptr;
};

} // namespace attn
