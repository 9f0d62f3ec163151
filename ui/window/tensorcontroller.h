#pragma once
// TensorController: File → Open Tensors…, File → Back to Random Inputs and File → Export
// Weights…, and the "Tensors" dock (TensorPanel). Loading builds a TensorSource
// and hands the session parameters that show it to the parameter editor (the window passes
// SessionController::editParameters, so a load, a layer change and going back are undoable
// edits); nothing changes when a file is refused: the error names the file and the problem
// and the current view, parameters and result stay.

#include "ui/panels/tensorpanel.h"
#include "ui/session/tensorsource.h"

#include <QLabel>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

class QAction;
class QDockWidget;
class QWidget;

namespace attn {

class AttentionSession;
class HeatmapWidget;

class TensorController : public QObject
{
    Q_OBJECT
public:
    /// `window` parents the dialogs; `heatmap` is the view the head selector drives and the
    /// export reads (its result as shown). Creates the panel (not yet in a dock).
    TensorController(AttentionSession *session, HeatmapWidget *heatmap, QWidget *window);
    ~TensorController() override;

    /// How parameter changes are applied (default: AttentionSession::setParameters).
    void setParameterEditor(std::function<void(const SessionParameters &)> edit);
    /// Asked which array holds the weights when an .npz has several and none is named weights,
    /// attn_weights or attention; returns the name, or an empty string to cancel. Default: a
    /// dialog listing the names with dtypes and shapes.
    void setArrayChooser(std::function<QString(const TensorFile &)> choose);
    /// Replaces the batch-item picker asked when inputs have a leading batch axis of B > 1
    /// items (default: an input dialog over 0 … B − 1). It returns the item, or −1 to cancel;
    /// B = 1 shows item 0 without asking.
    void setBatchChooser(std::function<int(const TensorFile &, int)> choose);
    /// The dock holding panel(): shown while tensors are loaded, hidden otherwise.
    void setDock(QDockWidget *dock);

    TensorPanel *panel() const { return m_panel; }
    /// "loaded: file.npz" for the status bar (empty while random inputs are shown).
    QLabel *statusLabel() const { return m_statusLabel; }
    QAction *openAction() const { return m_openAction; }
    QAction *backAction() const { return m_backAction; }
    QAction *exportAction() const { return m_exportAction; }

    /// The tensors shown (nullptr: seeded random inputs).
    std::shared_ptr<const TensorSource> source() const;
    /// Path of the loaded file (empty: random inputs) — for session files.
    QString loadedPath() const;

    /// Opens `path` without message boxes: .npz or .npy with query/key/value (+ parameters,
    /// masks read with `convention`) or weights (`weightsArray`, empty = automatic; the chooser
    /// is asked when ambiguous). Token labels come from the sidecar when there is one (a wrong
    /// count is reported by tokenMessage(), positions are shown). The attention is computed
    /// once (computeTensorSession, on this thread) before anything changes, so a file whose
    /// computation fails (scores that overflow to ±inf/NaN, beyond the memory budget) is refused
    /// too. Returns false with `error` naming the file and the problem; nothing changes then.
    bool openFile(const QString &path, QString *error, const QString &weightsArray = {},
                  MaskConvention convention = MaskConvention::Masked);
    /// Shows `source` (a model run's weights, ui/session/modelrun.h) as a loaded stack: through
    /// the parameter editor (undoable) when `undoable`, else straight into the session (a
    /// session being opened). Returns false with `error` when its parameters are invalid.
    bool showSource(const std::shared_ptr<const TensorSource> &source, bool undoable,
                    QString *error);
    /// The message about the token labels of the last load or edit (empty when they fit).
    QString tokenMessage() const { return m_tokenMessage; }

    /// Token labels (empty: positions). A count that does not fit gives a message (returned,
    /// also shown in the panel and the status bar) and the positions instead.
    QString setTokenLabels(const QStringList &tokens);
    /// Labels from a text file, one token per line (see readTokenFile); message as above, or
    /// the read error.
    QString loadTokenFile(const QString &path);
    /// Shows layer `layer` of loaded weights.
    void setLayer(int layer);
    /// −1 all heads (grid), 0 … h−1 one head, h the mean.
    void showHead(int head);
    /// The head the export takes by default: the enlarged head (h = mean), else allHeads.
    int currentHead() const;

    /// The parameters of the seeded random inputs from before the first load (what Back to
    /// Random Inputs restores); nullopt before any load.
    const std::optional<SessionParameters> &randomParameters() const { return m_randomParameters; }
    /// Sets them (a session file's "random_inputs"); `params` must hold no tensors.
    void setRandomParameters(const SessionParameters &params);

    /// Writes the shown weights (head: allHeads, 0 … h−1 or h = mean) to a .npy or .csv.
    bool exportWeights(const QString &path, int head, QString *error) const;

public slots:
    /// openFile with a message box naming the file and the problem on failure.
    bool open(const QString &path);
    /// Asks for a file, then open().
    void openInteractive();
    /// The seeded random inputs again, with the parameters from before the first load.
    void backToRandomInputs();
    /// Reloads the file with another meaning of True in its boolean masks.
    void setMaskConvention(attn::MaskConvention convention);
    /// Asks for a token file, then loadTokenFile().
    void loadTokenFileInteractive();
    /// Asks which heads (all or the current one) and for a file name (.npy or .csv), then
    /// exports; errors in a message box.
    void exportWeightsInteractive();

signals:
    /// A short note for the status bar.
    void statusMessage(const QString &text);
    /// open() loaded the file at `path` (File → Open Tensors…, Open Recent, a dropped file).
    void opened(const QString &path);

private:
    void apply(const SessionParameters &params);
    void onParametersChanged(const SessionParameters &params);
    void onResult();
    /// computeTensorSession(params)'s error (empty when it computes), computed on a worker
    /// thread while the GUI thread keeps painting (user input waits). Never throws.
    QString checkComputes(const SessionParameters &params) const;
    QString chooseArrayDialog(const TensorFile &file);

    AttentionSession *m_session;
    HeatmapWidget *m_heatmap;
    QWidget *m_window;
    QPointer<TensorPanel> m_panel; ///< owned by the dock once in one

    QPointer<QDockWidget> m_dock;
    QPointer<QLabel> m_statusLabel; ///< owned by the status bar once in it
    QAction *m_openAction = nullptr;
    QAction *m_backAction = nullptr;
    QAction *m_exportAction = nullptr;
    std::function<void(const SessionParameters &)> m_edit;
    std::function<QString(const TensorFile &)> m_chooseArray;
    std::function<int(const TensorFile &, int)> m_chooseBatch;
    std::optional<SessionParameters> m_randomParameters; ///< before the first load
    QString m_tokenMessage;
    QString m_lastFolder;
    bool m_showsModelRun = false; ///< the parameters show a model's run
};

} // namespace attn
