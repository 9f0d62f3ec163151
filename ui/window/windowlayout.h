#pragma once
// WindowLayout: the main window's geometry and docks. A first start takes sizeHint() (1500 ×
// 950 logical pixels, at most 90 % of the screen's available geometry) centred on the screen;
// the docks then get their default sizes for that size (controls | centre | charts =
// 330 | … | 520 pixels on a large screen, narrower on a small one). A restored geometry is
// clamped to the screen it is on; View → Reset Layout goes back to the first start; while the
// experiments fill the window the attention mode's dock layout is kept aside.

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QSize>
#include <Qt>

class QDockWidget;
class QMainWindow;
class QResizeEvent;
class QScrollArea;
class QSettings;
class QString;
class QWidget;

namespace attn {

class WindowLayout : public QObject
{
    Q_OBJECT
public:
    /// Lays out `window`'s docks (not owned; the layout is its child).
    explicit WindowLayout(QMainWindow *window);

    /// A closable, movable, floatable dock of `widget` in `area`; the first dock added is the
    /// left column whose width defaultControlsWidth gives.
    QDockWidget *addDock(QWidget *widget, const QString &title, const QString &objectName,
                         Qt::DockWidgetArea area);
    /// `content` in a frameless scroll area that resizes it: the dock can be made narrower or
    /// shorter than the content's minimum (scroll bars appear) instead of widening the window.
    static QScrollArea *scrollable(QWidget *content);
    /// Every dock, in the order added (View menu order).
    QList<QDockWidget *> docks() const { return m_docks; }
    /// The left column's widest content (its minimumSizeHint widths decide the default width).
    void setLeftContents(const QList<QWidget *> &contents) { m_leftContents = contents; }
    /// The right column: `max` and `jacobian` stacked above `row`, `timing` a tab behind
    /// `row`; on a short screen (sizeHint height < 900) `max` and `jacobian` share a place as
    /// tabs, so each chart keeps a readable height.
    void stackRightColumn(QDockWidget *max, QDockWidget *jacobian, QDockWidget *row,
                          QDockWidget *timing);
    /// Records the current dock state as the first-start layout (View → Reset Layout).
    void captureDefaultLayout();

    /// 1500 × 950, or less: at most 90 % of the screen's available geometry.
    QSize sizeHint() const;
    /// sizeHint() centred in the available geometry of the window's screen (the primary one
    /// before the window is shown).
    void fitToScreen();
    /// Makes the window's geometry fit the screen it is on (size and position).
    void clampToScreen();
    /// The Controls dock's width on a first start for a window `windowWidth` pixels wide.
    int defaultControlsWidth(int windowWidth) const;
    /// The default dock sizes for the window's current size (QMainWindow::resizeDocks).
    void applyDefaultDockSizes();
    /// Narrows a side column wider than its share of the window: the left one to
    /// max(defaultControlsWidth, 30 %) of the width, the right one to max(its default, 33 %),
    /// so the centre keeps at least 37 %. Docks saved in a wider window, restored in a smaller
    /// one, would otherwise keep their pixel widths and squeeze the centre.
    void clampDockWidths();

    /// From the window's showEvent: clamps a restored geometry and restored dock widths, sizes
    /// the docks on the first show (they only stick once the window has its real size).
    void windowShown();
    /// From the window's resizeEvent: a large enlargement (a quarter wider or more) gives the
    /// side docks squeezed by a small window at least their default width back.
    void windowResized(const QResizeEvent *event);
    /// Every dock back where a first start puts it (shown, docked, sized), the window back to
    /// its first-start size (out of maximized). Full screen and the mode are the caller's.
    void reset();

    /// Why the docks are hidden; they show again once no reason is left.
    enum class DocksHiddenFor {
        Mode = 1, ///< the experiments or the training fill the window
        Presentation = 2, ///< presentation mode (PresentationMode)
    };
    /// Hides the docks for `reason`: the first reason saves the docks' state and hides them;
    /// a further one only counts.
    void hideDocks(DocksHiddenFor reason = DocksHiddenFor::Mode);
    /// `reason` is over; when it was the last one, the docks come back as the first
    /// hideDocks found them. Nothing when `reason` did not hide them.
    void restoreDocks(DocksHiddenFor reason = DocksHiddenFor::Mode);
    /// Some reason hides the docks.
    bool docksHidden() const { return m_hiddenFor != 0; }

    /// Group "window": "geometry" and "state" (the attention mode's dock layout).
    void restoreSettings(QSettings &settings);
    void saveSettings(QSettings &settings) const;

private:
    QMainWindow *m_window;
    QList<QDockWidget *> m_docks;
    QList<QWidget *> m_leftContents;
    QDockWidget *m_maxDock = nullptr;
    QDockWidget *m_jacobianDock = nullptr;
    QDockWidget *m_rowDock = nullptr;
    bool m_shortScreen = false; ///< the two sweep charts share a place as tabs
    bool m_initialSizes = true; ///< apply the default dock sizes when first shown
    bool m_clampOnShow = false; ///< restored geometry: fit the screen again when shown
    bool m_clampDocksOnShow = false; ///< restored dock state: clampDockWidths when shown
    QByteArray m_defaultLayout; ///< saveState() of a first start, before settings are restored
    QByteArray m_attentionLayout; ///< dock state saved while the docks are hidden
    int m_hiddenFor = 0; ///< the DocksHiddenFor reasons in effect, or-ed
};

} // namespace attn
