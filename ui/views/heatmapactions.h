#pragma once
// HeatmapActions: the File and View actions of the heads heatmaps (export and save),
// kept out of MainWindow, which only adds them to its menus:
//   File → Export Heatmaps at Size/DPI… (Ctrl+Shift+E) PNG (asks pixel size and DPI), SVG
//                             or PDF of the heads view as shown: view, head, colormap, scale,
//                             range, pooling, zoom window, trimmed / hidden keys; colourbar,
//                             axis labels, caption (File → Export, Ctrl+E, in MainWindow
//                             writes whichever view is current at the screen's size);
//   File → Export Each Head…  (Ctrl+Shift+B) one file per head (+ the mean) into a folder;
//   File → Export Data…       (Ctrl+Shift+D) weights, scores and per-row metric series as
//                             .npz, .npy, .json or .csv (ui/export/dataexport.h);
//   View → Zoom In / Zoom Out / Show All Cells (Ctrl++, Ctrl+−, Ctrl+0);
//   View → Stretch Maps to Fit (checkable): non-square maps fill their tiles
//                             (HeatmapOptions::stretch, saved with the view state).
// Exports are drawn on a white page with black text whatever the desktop palette, with the
// on-screen text size, so a PNG at 96 dpi of the widget's size looks like the screen.

#include "ui/render/heatmaprenderer.h"

#include <QDialog>
#include <QList>
#include <QObject>
#include <QSize>

#include <functional>
#include <memory>

class QAction;
class QComboBox;
class QLabel;
class QSpinBox;

namespace attn {

class HeatmapWidget;

/// Asks for an image's format (optional), size and resolution.
class ImageExportDialog : public QDialog
{
    Q_OBJECT
public:
    /// `askFormat`: show the PNG/SVG/PDF choice (batch export); else the format is fixed.
    ImageExportDialog(const QString &title, bool askFormat, QWidget *parent = nullptr);

    void setFormat(const QString &format); ///< "png", "svg" or "pdf"
    QString format() const;
    /// PNG: pixels; SVG: logical pixels; PDF: points.
    void setImageSize(QSize size);
    QSize imageSize() const;
    void setDpi(int dpi);
    int dpi() const;

    QComboBox *formatCombo() const { return m_format; }
    QSpinBox *widthSpin() const { return m_width; }
    QSpinBox *heightSpin() const { return m_height; }
    QSpinBox *dpiSpin() const { return m_dpi; }

private:
    void updateSummary();

    QComboBox *m_format = nullptr;
    QSpinBox *m_width = nullptr;
    QSpinBox *m_height = nullptr;
    QSpinBox *m_dpi = nullptr;
    QLabel *m_summary = nullptr;
};

class HeatmapActions : public QObject
{
    Q_OBJECT
public:
    /// `heatmap` is not owned; dialogs open over `dialogParent`.
    HeatmapActions(HeatmapWidget *heatmap, QWidget *dialogParent);

    QAction *exportViewAction() const { return m_exportView; }
    QAction *exportHeadsAction() const { return m_exportHeads; }
    QAction *exportDataAction() const { return m_exportData; }
    QAction *zoomInAction() const { return m_zoomIn; }
    QAction *zoomOutAction() const { return m_zoomOut; }
    QAction *zoomResetAction() const { return m_zoomReset; }
    QAction *stretchAction() const { return m_stretch; }
    QList<QAction *> fileActions() const { return {m_exportView, m_exportHeads, m_exportData}; }
    QList<QAction *> viewActions() const { return {m_zoomIn, m_zoomOut, m_zoomReset, m_stretch}; }

    /// The widget's options for a file: white page, black text, the on-screen text size, every
    /// tile within the page (no scrolling).
    HeatmapOptions exportOptions() const;
    /// Default export size: the heatmaps' on-screen size, the whole grid's height when it
    /// scrolls (at least 800 × 500).
    QSize screenSize() const;

    /// Writes the view as shown to `path` (PNG/SVG/PDF by suffix). PNG: `size` in pixels for
    /// `dpi` (HeatmapRenderer::savePngAtDpi); SVG/PDF: `size` in logical pixels / points.
    bool exportView(const QString &path, QSize size, double dpi, QString *error) const;
    /// One file per head (+ mean), see attn::exportEachHead; prefix "head".
    bool exportHeads(const QString &directory, const QString &format, QSize size, double dpi,
                     QStringList *written, QString *error) const;
    /// The shown result's numbers (attn::exportData). While a comparison is shown
    /// (setComparisonSource), its B as well, beside: `<name>-B.<suffix>` (attention.npz and
    /// attention-B.npz).
    bool exportData(const QString &path, QStringList *written, QString *error) const;
    /// What gives the comparison's B result while the A/B view is what the user looks at
    /// (nullptr otherwise): Export Data then writes B beside A.
    void setComparisonSource(std::function<std::shared_ptr<const SessionResult>()> resultB)
    {
        m_resultB = std::move(resultB);
    }
    /// `path` with "-B" before its suffix: where B's numbers go.
    static QString comparisonPath(const QString &path);
    /// Where Export Data goes instead when the view the user looks at has numbers of its own
    /// (the Long tab's visible window): `route(path)` takes the export and reports it itself,
    /// or returns false (the heads' numbers are written).
    void setDataExportRoute(std::function<bool(const QString &path)> route)
    {
        m_dataRoute = std::move(route);
    }
    /// Hands `path` to the route (setDataExportRoute): false when the current view has none.
    bool routeDataExport(const QString &path) const { return m_dataRoute && m_dataRoute(path); }

public slots:
    void exportViewInteractive();
    void exportHeadsInteractive();
    void exportDataInteractive();

signals:
    /// A line for the status bar ("Exported …").
    void message(const QString &text);

private:
    bool haveResult(const QString &title) const;

    HeatmapWidget *m_heatmap;
    QWidget *m_dialogParent;
    QAction *m_exportView = nullptr;
    QAction *m_exportHeads = nullptr;
    QAction *m_exportData = nullptr;
    QAction *m_zoomIn = nullptr;
    QAction *m_zoomOut = nullptr;
    QAction *m_zoomReset = nullptr;
    QAction *m_stretch = nullptr;
    std::function<std::shared_ptr<const SessionResult>()> m_resultB;
    std::function<bool(const QString &)> m_dataRoute;
};

} // namespace attn
