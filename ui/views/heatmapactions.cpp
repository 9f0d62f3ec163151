#include "ui/views/heatmapactions.h"

#include "ui/export/dataexport.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapwidget.h"

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMessageBox>
#include <QSpinBox>

#include <cmath>

namespace attn {

// ---- ImageExportDialog ----

ImageExportDialog::ImageExportDialog(const QString &title, bool askFormat, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(title);
    auto *form = new QFormLayout(this);
    m_format = new QComboBox(this);
    m_format->setObjectName(QStringLiteral("formatCombo"));
    m_format->addItem(tr("PNG image"), QStringLiteral("png"));
    m_format->addItem(tr("SVG drawing"), QStringLiteral("svg"));
    m_format->addItem(tr("PDF document"), QStringLiteral("pdf"));
    m_format->setToolTip(tr("PNG: pixels at a print resolution; SVG and PDF: vector text and "
                            "lines (the heatmap cells are an embedded image)."));
    form->addRow(tr("&Format:"), m_format);
    m_format->setVisible(askFormat);
    form->labelForField(m_format)->setVisible(askFormat);

    m_width = new QSpinBox(this);
    m_width->setObjectName(QStringLiteral("widthSpin"));
    m_width->setRange(64, 16384);
    m_width->setToolTip(tr("Width: pixels for PNG, logical pixels for SVG, points for PDF."));
    m_height = new QSpinBox(this);
    m_height->setObjectName(QStringLiteral("heightSpin"));
    m_height->setRange(64, 16384);
    m_height->setToolTip(tr("Height: pixels for PNG, logical pixels for SVG, points for PDF."));
    form->addRow(tr("&Width:"), m_width);
    form->addRow(tr("&Height:"), m_height);

    m_dpi = new QSpinBox(this);
    m_dpi->setObjectName(QStringLiteral("dpiSpin"));
    m_dpi->setRange(24, 2400);
    m_dpi->setSuffix(tr(" dpi"));
    m_dpi->setToolTip(tr("Print resolution of the PNG, written into the file: text and lines "
                         "keep their physical size, so 300 dpi gives a sharper, not a "
                         "smaller-looking, figure. 96 dpi matches the screen."));
    form->addRow(tr("&Resolution:"), m_dpi);

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("summaryLabel"));
    m_summary->setForegroundRole(QPalette::PlaceholderText);
    form->addRow(m_summary);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);

    connect(m_format, &QComboBox::currentIndexChanged, this, &ImageExportDialog::updateSummary);
    connect(m_width, &QSpinBox::valueChanged, this, &ImageExportDialog::updateSummary);
    connect(m_height, &QSpinBox::valueChanged, this, &ImageExportDialog::updateSummary);
    connect(m_dpi, &QSpinBox::valueChanged, this, &ImageExportDialog::updateSummary);
    setImageSize(QSize(1600, 1000));
    setDpi(96);
}

void ImageExportDialog::setFormat(const QString &format)
{
    const int index = m_format->findData(format.toLower());
    if (index >= 0)
        m_format->setCurrentIndex(index);
    updateSummary();
}

QString ImageExportDialog::format() const
{
    return m_format->currentData().toString();
}

void ImageExportDialog::setImageSize(QSize size)
{
    m_width->setValue(size.width());
    m_height->setValue(size.height());
}

QSize ImageExportDialog::imageSize() const
{
    return QSize(m_width->value(), m_height->value());
}

void ImageExportDialog::setDpi(int dpi)
{
    m_dpi->setValue(dpi);
}

int ImageExportDialog::dpi() const
{
    return m_dpi->value();
}

void ImageExportDialog::updateSummary()
{
    const bool png = format() == QLatin1String("png");
    m_dpi->setEnabled(png);
    if (png) {
        const double w = m_width->value() / double(m_dpi->value());
        const double h = m_height->value() / double(m_dpi->value());
        m_summary->setText(tr("%1 × %2 pixels = %3 × %4 in (%5 × %6 cm) at %7 dpi")
                               .arg(m_width->value())
                               .arg(m_height->value())
                               .arg(w, 0, 'f', 2)
                               .arg(h, 0, 'f', 2)
                               .arg(w * 2.54, 0, 'f', 1)
                               .arg(h * 2.54, 0, 'f', 1)
                               .arg(m_dpi->value()));
    } else {
        m_summary->setText(
            format() == QLatin1String("pdf")
                ? tr("A %1 × %2 pt page (%3 × %4 cm)")
                      .arg(m_width->value())
                      .arg(m_height->value())
                      .arg(m_width->value() / 72.0 * 2.54, 0, 'f', 1)
                      .arg(m_height->value() / 72.0 * 2.54, 0, 'f', 1)
                : tr("A %1 × %2 drawing").arg(m_width->value()).arg(m_height->value()));
    }
}

// ---- HeatmapActions ----

HeatmapActions::HeatmapActions(HeatmapWidget *heatmap, QWidget *dialogParent)
    : QObject(dialogParent)
    , m_heatmap(heatmap)
    , m_dialogParent(dialogParent)
{
    m_exportView = new QAction(tr("Export Heatmaps at Si&ze/DPI…"), this);
    m_exportView->setObjectName(QStringLiteral("exportViewAction"));
    m_exportView->setShortcut(QKeySequence(tr("Ctrl+Shift+E")));
    m_exportView->setStatusTip(tr("Save the heatmaps as shown (colormap, zoom, hidden keys) with "
                                  "colourbar, axis labels and caption as PNG (choose pixels and "
                                  "DPI), SVG or PDF"));
    connect(m_exportView, &QAction::triggered, this, &HeatmapActions::exportViewInteractive);

    m_exportHeads = new QAction(tr("Export Each &Head…"), this);
    m_exportHeads->setObjectName(QStringLiteral("exportHeadsAction"));
    m_exportHeads->setShortcut(QKeySequence(tr("Ctrl+Shift+B")));
    m_exportHeads->setStatusTip(tr("Save one file per head (and the mean over heads) into a "
                                   "folder: head-0.png, head-1.png, …, head-mean.png"));
    connect(m_exportHeads, &QAction::triggered, this, &HeatmapActions::exportHeadsInteractive);

    m_exportData = new QAction(tr("Export &Data…"), this);
    m_exportData->setObjectName(QStringLiteral("exportDataAction"));
    m_exportData->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
    m_exportData->setStatusTip(tr("Save the weights, scores and per-row metric series as NumPy "
                                  ".npz/.npy, JSON or CSV (on the A/B tab, B's beside A's: "
                                  "name-B.npz; on the Long tab, its visible window)"));
    connect(m_exportData, &QAction::triggered, this, &HeatmapActions::exportDataInteractive);

    m_zoomIn = new QAction(tr("Zoom &In"), this);
    m_zoomIn->setObjectName(QStringLiteral("zoomInAction"));
    m_zoomIn->setShortcut(QKeySequence(tr("Ctrl++")));
    m_zoomIn->setStatusTip(tr("Magnify the heatmaps (also the mouse wheel, Ctrl+wheel when the "
                              "grid scrolls, or + over them)"));
    connect(m_zoomIn, &QAction::triggered, m_heatmap, &HeatmapWidget::zoomIn);

    m_zoomOut = new QAction(tr("Zoom &Out"), this);
    m_zoomOut->setObjectName(QStringLiteral("zoomOutAction"));
    m_zoomOut->setShortcut(QKeySequence(tr("Ctrl+-")));
    m_zoomOut->setStatusTip(tr("Show more cells (also the mouse wheel, Ctrl+wheel when the grid "
                               "scrolls, or − over the heatmaps)"));
    connect(m_zoomOut, &QAction::triggered, m_heatmap, &HeatmapWidget::zoomOut);

    m_zoomReset = new QAction(tr("Show &All Cells"), this);
    m_zoomReset->setObjectName(QStringLiteral("zoomResetAction"));
    m_zoomReset->setShortcut(QKeySequence(tr("Ctrl+0")));
    m_zoomReset->setStatusTip(tr("Undo the zoom: every query and key again (also 0 or Home over "
                                 "the heatmaps)"));
    connect(m_zoomReset, &QAction::triggered, m_heatmap, &HeatmapWidget::resetZoom);

    m_stretch = new QAction(tr("&Stretch Maps to Fit"), this);
    m_stretch->setObjectName(QStringLiteral("stretchAction"));
    m_stretch->setCheckable(true);
    m_stretch->setChecked(m_heatmap->options().stretch);
    m_stretch->setStatusTip(tr("Let each map fill its tile (cells as wide and as tall as that "
                               "gives) instead of keeping square cells: for non-square maps "
                               "such as cross attention with few keys"));
    connect(m_stretch, &QAction::toggled, m_heatmap, &HeatmapWidget::setStretch);
    connect(m_heatmap, &HeatmapWidget::optionsChanged, m_stretch,
            [this] { m_stretch->setChecked(m_heatmap->isStretched()); });
}

HeatmapOptions HeatmapActions::exportOptions() const
{
    HeatmapOptions o = m_heatmap->options();
    const HeatmapOptions defaults;
    o.background = defaults.background;
    o.foreground = defaults.foreground;
    o.showCaption = true;
    o.scrollable = false;
    return o;
}

QSize HeatmapActions::screenSize() const
{
    const QSize s(int(m_heatmap->heatmapBounds().width()),
                  int(std::ceil(m_heatmap->contentHeight())));
    return QSize(std::max(800, s.width()), std::max(500, s.height()));
}

bool HeatmapActions::exportView(const QString &path, QSize size, double dpi, QString *error) const
{
    const auto result = m_heatmap->result();
    if (!result || !result->ok()) {
        if (error)
            *error = tr("There is no computed heatmap to export yet.");
        return false;
    }
    HeatmapRenderer renderer;
    renderer.setResult(result);
    renderer.setOptions(exportOptions());
    if (QFileInfo(path).suffix().toLower() == QLatin1String("png"))
        return renderer.savePngAtDpi(path, size, dpi, error);
    return renderer.save(path, size, 1.0, error);
}

bool HeatmapActions::exportHeads(const QString &directory, const QString &format, QSize size,
                                 double dpi, QStringList *written, QString *error) const
{
    HeatmapRenderer renderer;
    renderer.setResult(m_heatmap->result());
    renderer.setOptions(exportOptions());
    return exportEachHead(renderer, directory, QStringLiteral("head"), format, size, dpi, written,
                          error);
}

bool HeatmapActions::exportData(const QString &path, QStringList *written, QString *error) const
{
    const auto result = m_heatmap->result();
    if (!result) {
        if (error)
            *error = tr("There is no computed result to export yet.");
        return false;
    }
    const std::shared_ptr<const SessionResult> b = m_resultB ? m_resultB() : nullptr;
    if (!attn::exportData(*result, path, written, error))
        return false;
    if (!b || !b->ok())
        return true;
    return attn::exportData(*b, comparisonPath(path), written, error);
}

QString HeatmapActions::comparisonPath(const QString &path)
{
    const QFileInfo info(path);
    const QString suffix = info.suffix();
    const QString stem = suffix.isEmpty() ? path : path.left(path.size() - suffix.size() - 1);
    return stem + QStringLiteral("-B") + (suffix.isEmpty() ? QString() : QLatin1Char('.') + suffix);
}

bool HeatmapActions::haveResult(const QString &title) const
{
    const auto result = m_heatmap->result();
    if (result && result->ok())
        return true;
    QMessageBox::information(
        m_dialogParent, title,
        result ? tr("The current parameters give no heatmap: %1").arg(result->error)
               : tr("There is no computed heatmap to export yet."));
    return false;
}

void HeatmapActions::exportViewInteractive()
{
    const QString title = tr("Export Heatmaps");
    if (!haveResult(title))
        return;
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        m_dialogParent, title, exportStartPath(QStringLiteral("attention.png")),
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &selectedFilter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += selectedFilter.contains(QLatin1String("svg")) ? QStringLiteral(".svg")
            : selectedFilter.contains(QLatin1String("pdf"))   ? QStringLiteral(".pdf")
                                                              : QStringLiteral(".png");
    const QString format = QFileInfo(path).suffix().toLower();
    ImageExportDialog dialog(title, false, m_dialogParent);
    dialog.setFormat(format);
    // PNG: twice the screen's pixels at 192 dpi looks like the screen, only sharper.
    dialog.setImageSize(format == QLatin1String("png") ? screenSize() * 2 : screenSize());
    dialog.setDpi(192);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    if (!exportView(path, dialog.imageSize(), dialog.dpi(), &error)) {
        QMessageBox::warning(m_dialogParent, title, error);
        return;
    }
    rememberExportFolder(path);
    emit message(tr("Exported %1").arg(QDir::toNativeSeparators(path)));
}

void HeatmapActions::exportHeadsInteractive()
{
    const QString title = tr("Export Each Head");
    if (!haveResult(title))
        return;
    ImageExportDialog dialog(title, true, m_dialogParent);
    dialog.setFormat(QStringLiteral("png"));
    dialog.setImageSize(QSize(1200, 1100));
    dialog.setDpi(144);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QString dir = QFileDialog::getExistingDirectory(
        m_dialogParent, tr("Folder for the head files"), exportFolder());
    if (dir.isEmpty())
        return;
    QStringList written;
    QString error;
    if (!exportHeads(dir, dialog.format(), dialog.imageSize(), dialog.dpi(), &written, &error)) {
        QMessageBox::warning(m_dialogParent, title, error);
        return;
    }
    rememberExportFolder(dir);
    emit message(
        tr("Exported %1 files to %2").arg(written.size()).arg(QDir::toNativeSeparators(dir)));
}

void HeatmapActions::exportDataInteractive()
{
    const QString title = tr("Export Data");
    if (!haveResult(title))
        return;
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        m_dialogParent, title, exportStartPath(QStringLiteral("attention.npz")),
        tr("NumPy archive, every array (*.npz);;NumPy arrays, one file each (*.npy);;JSON "
           "(*.json);;CSV, cells and metrics (*.csv)"),
        &selectedFilter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty()) {
        for (const char *suffix : {"npz", "npy", "json", "csv"}) {
            if (selectedFilter.contains(QLatin1String("*.") + QLatin1String(suffix))) {
                path += QLatin1Char('.') + QLatin1String(suffix);
                break;
            }
        }
    }
    if (routeDataExport(path)) {
        rememberExportFolder(path);
        return;
    }
    QStringList written;
    QString error;
    if (!exportData(path, &written, &error)) {
        QMessageBox::warning(m_dialogParent, title, error);
        return;
    }
    rememberExportFolder(path);
    emit message(written.size() == 1
                     ? tr("Exported %1").arg(QDir::toNativeSeparators(written.first()))
                     : tr("Exported %1 files: %2")
                           .arg(written.size())
                           .arg(QFileInfo(written.first()).fileName() + QStringLiteral(", …")));
}

} // namespace attn
