#pragma once
// Tour: the guided first-run tour over the real window. Each step is a small non-modal callout
// (a frame inside the main window, never a dialog) beside the widget it talks about, which a
// coloured outline marks; Back, Next and Skip move through the steps, and "Show me" makes the
// step's change itself (through the widget, so it is an ordinary, undoable edit) for a user who
// would rather watch. The steps: the heatmaps, the scale switched off, d_k up, the max-weight and
// Jacobian-norm charts, the causal mask, positional encoding, and where the tour lives
// (Help → Guided Tour). The app starts it once, on a first start without a file on the command
// line (shouldStartAutomatically); windows made elsewhere (tests, benchmarks) never start it.

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <vector>

class QAction;
class QFrame;
class QLabel;
class QPushButton;
class QSettings;
class QTimer;
class QWidget;

namespace attn {

class MainWindow;

class Tour : public QObject
{
    Q_OBJECT
public:
    /// The QSettings key set once the tour has been shown (started automatically or not).
    static constexpr const char *shownKey = "tour/shown";

    struct Step
    {
        QString title;
        QString text;
        QString target; ///< object name of the widget pointed at (empty: the window's centre)
        QString showMeText; ///< what "Show me" does (empty: no button)
        std::function<void()> showMe;
    };

    explicit Tour(MainWindow *window);
    ~Tour() override;

    /// Help → Guided Tour: start() from the first step.
    QAction *action() const { return m_action; }
    const std::vector<Step> &steps() const { return m_steps; }
    int currentStep() const { return m_step; } ///< −1 while not running
    bool isActive() const { return m_step >= 0; }
    /// The widget the current step points at (nullptr: none, or not running).
    QWidget *currentTarget() const;
    /// The callout (its title label is "tourTitle", its buttons "tourBack", "tourNext",
    /// "tourSkip", "tourShowMe").
    QFrame *callout() const { return m_callout; }
    /// The outline over the target.
    QWidget *highlight() const { return m_highlight; }

    /// True when the app should start the tour: not shown before (shownKey), no session or
    /// tensor file given on the command line, and ATTNLAB_NO_TOUR not set.
    static bool shouldStartAutomatically(const QSettings &settings, bool fileGiven);

public slots:
    void start();
    void next();
    void back();
    /// Ends the tour (Skip, or Next on the last step).
    void finish();
    /// The current step's "Show me".
    void showMe();

signals:
    void stepChanged(int step);
    void finished();

private:
    void showStep(int step);
    void place();

    MainWindow *m_window;
    std::vector<Step> m_steps;
    int m_step = -1;
    QAction *m_action;
    QFrame *m_callout;
    QWidget *m_highlight;
    QLabel *m_title;
    QLabel *m_text;
    QLabel *m_counter;
    QPushButton *m_back;
    QPushButton *m_next;
    QPushButton *m_skip;
    QPushButton *m_showMe;
    QTimer *m_follow; ///< keeps the callout beside its target while docks move
};

} // namespace attn
