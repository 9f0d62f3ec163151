// Tests of the main window's File → Export: the heatmap grid as PNG (at a device pixel ratio),
// SVG and PDF; Ctrl+E through the file dialog; unknown suffixes refused; the current view (heads,
// Steps, Compare, Tokens, a focused chart, an experiment figure, the Long and Positions tabs) named
// and written with the same pixels as the view's own export and as its renderer's image; and the
// export dialogs starting in the last export folder.

#include "mainwindowtest.h"

#include "ui/charts/scalingchart.h"
#include "ui/panels/experimentpage.h"
#include "ui/panels/experimentspanel.h"
#include "ui/render/comparerenderer.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/svgtext.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figurecanvas.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"
#include "ui/window/exportrouter.h"

#include "core/io/npy.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QLineEdit>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <functional>

using namespace attn;
using mainwindowtest::ResultPtr;

namespace {

/// Well-formed XML whose root is <svg>; `error` gets the parser's message otherwise.
bool isSvgDocument(const QByteArray &bytes, QString *error)
{
    const test::SvgTexts parsed = test::readSvgTexts(bytes);
    *error = parsed.error.isEmpty() ? QStringLiteral("root <%1>, not <svg>").arg(parsed.root)
                                    : parsed.error;
    return parsed.error.isEmpty() && parsed.root == QLatin1String("svg");
}

/// A PDF file (the %PDF header) with at least one page object.
bool isPdfWithPage(const QByteArray &bytes)
{
    return bytes.startsWith("%PDF") && bytes.contains("/Page");
}

/// An exported vector figure: a well-formed SVG document for "svg", else a PDF with a page.
/// Returns what is wrong, empty when it is fine.
QString vectorFigureError(const QString &suffix, const QByteArray &bytes)
{
    if (suffix == QLatin1String("svg")) {
        QString xmlError;
        return isSvgDocument(bytes, &xmlError) ? QString() : xmlError;
    }
    return isPdfWithPage(bytes) ? QString() : QStringLiteral("not a PDF with a page");
}

/// What answerNextFileDialog() saw: the folder the dialog started in.
struct FileDialogAnswer
{
    QString directory;
    bool seen = false;
};

/// Answers the next modal file dialog: records the folder it starts in, then chooses `chosen`
/// (accepts) or, when `chosen` is empty, cancels.
std::shared_ptr<FileDialogAnswer> answerNextFileDialog(const QString &chosen)
{
    auto answer = std::make_shared<FileDialogAnswer>();
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [answer, chosen, poll] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        if (!dialog) {
            QTimer::singleShot(20, *poll);
            return;
        }
        answer->seen = true;
        answer->directory = dialog->directory().absolutePath();
        if (chosen.isEmpty()) {
            dialog->reject();
        } else {
            dialog->selectFile(chosen);
            static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept is protected
        }
        *poll = nullptr; // break the cycle
    };
    QTimer::singleShot(20, *poll);
    return answer;
}

} // namespace

class TestMainWindowExport : public mainwindowtest::MainWindowTest
{
    Q_OBJECT

private slots:
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void exportWritesImage_data();
    void exportWritesImage();
    void exportActionWritesPng();
    void exportBadSuffixFails();
    void exportCurrentView_data();
    void exportCurrentView();
    void exportCurrentViewBadSuffixFails();
    void exportTargetsLongTab();
    void exportMatchesRendererImage_data();
    void exportMatchesRendererImage();
    void exportActionWritesFocusedChart();
    void positionsTabExports();
    void exportDialogsStartInTheLastExportFolder();
    void exportDataOnTheComparisonWritesB();
    void exportDataOnTheLongTabWritesItsWindow();
};

void TestMainWindowExport::exportWritesImage_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<double>("dpr");
    QTest::newRow("png 800x500") << "grid.png" << QSize(800, 500) << 1.0;
    QTest::newRow("png 1200x900") << "grid.png" << QSize(1200, 900) << 1.0;
    QTest::newRow("png 640x400 at dpr 2") << "grid.PNG" << QSize(640, 400) << 2.0;
    QTest::newRow("svg") << "grid.svg" << QSize(900, 600) << 1.0;
    QTest::newRow("pdf") << "grid.pdf" << QSize(900, 600) << 1.0;
}

void TestMainWindowExport::exportWritesImage()
{
    QFETCH(QString, file);
    QFETCH(QSize, size);
    QFETCH(double, dpr);
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(file);
    QString error;
    QVERIFY2(m_window->exportRouter()->exportHeatmapGrid(path, size, dpr, &error),
             qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    const QString suffix = file.section(QLatin1Char('.'), -1).toLower();
    if (suffix == QLatin1String("png")) {
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QVERIFY2(!image.isNull(), qPrintable(reader.errorString()));
        QCOMPARE(image.size(), (QSizeF(size) * dpr).toSize());
        // Not a blank page: more than a handful of colours.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY(colours.size() > 20);
    } else {
        const QString error = vectorFigureError(suffix, bytes);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
}

void TestMainWindowExport::exportActionWritesPng()
{
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("from-action.png"));
    QVERIFY(m_window->exportRouter()->exportAction());
    QCOMPARE(m_window->exportRouter()->exportAction()->shortcut(),
             QKeySequence(QStringLiteral("Ctrl+E")));
    // Answer the file dialog the action opens.
    bool answered = false;
    QTimer::singleShot(200, this, [&] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        dialog->setDirectory(dir.path());
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        if (!name)
            return;
        name->setText(QFileInfo(path).fileName());
        answered = true;
        QMetaObject::invokeMethod(dialog, "accept", Qt::DirectConnection);
    });
    m_window->exportRouter()->exportAction()->trigger();
    QVERIFY(answered);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList {QFileInfo(path).fileName()});
    QImage image(path);
    QVERIFY(!image.isNull());
    // The action exports at the heatmap's on-screen size, two device pixels per pixel.
    QCOMPARE(image.size(), m_window->exportRouter()->defaultExportSize() * 2);
}

void TestMainWindowExport::exportBadSuffixFails()
{
    // An unknown suffix is refused with a message, and nothing is written.
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QString error;
    QVERIFY(!m_window->exportRouter()->exportHeatmapGrid(dir.filePath(QStringLiteral("grid.bmpx")),
                                                         QSize(400, 300), 1.0, &error));
    QVERIFY(!error.isEmpty());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("grid.bmpx"))));
}

// On the Long tab File → Export names the Long map and writes its visible window, in the
// background (LongMapView::exported reports), at the export's size.
void TestMainWindowExport::exportTargetsLongTab()
{
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    LongMapView *view = views->longMapView();
    view->setLength(256);
    QSignalSpy shown(view, &LongMapView::fullViewShown);
    views->setCurrentIndex(AttentionViews::LongTab);
    QVERIFY(shown.wait(60000));
    ExportRouter *router = m_window->exportRouter();
    QCOMPARE(router->currentTarget(), ExportRouter::Target::Long);
    QCOMPARE(router->currentName(), QStringLiteral("Long Map"));
    QCOMPARE(router->exportAction()->text(), QStringLiteral("&Export Long Map…"));
    QCOMPARE(router->currentFileName(), QStringLiteral("attention-long.png"));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("long.png"));
    QSignalSpy exported(view, &LongMapView::exported);
    QString error;
    QVERIFY2(router->exportCurrentView(path, &error, QSize(600, 500), 1.0), qPrintable(error));
    QVERIFY(exported.wait(60000));
    QCOMPARE(exported.first().at(0).toString(), path);
    QVERIFY2(exported.first().at(1).toString().isEmpty(),
             qPrintable(exported.first().at(1).toString()));
    QCOMPARE(QImage(path).size(), QSize(600, 500));
    views->setCurrentIndex(AttentionViews::HeadsTab);
    QCOMPARE(router->currentTarget(), ExportRouter::Target::Heads);
}

void TestMainWindowExport::exportCurrentView_data()
{
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("suffix");
    QTest::addColumn<int>("target");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("fileName");
    using T = ExportRouter::Target;
    for (const char *suffix : {"png", "svg", "pdf"}) {
        const QString sx = QLatin1String(suffix);
        QTest::addRow("heads grid %s", suffix) << "grid" << sx << int(T::Heads) << "Heatmap Grid"
                                               << "attention-heads.png";
        QTest::addRow("single head %s", suffix) << "head" << sx << int(T::Heads) << "Head 1"
                                                << "attention-head1.png";
        QTest::addRow("steps %s", suffix) << "steps" << sx << int(T::Steps) << "Attention Steps"
                                          << "attention-steps-head0.png";
        QTest::addRow("compare %s", suffix)
            << "compare" << sx << int(T::Compare) << "A/B Comparison"
            << "attention-compare.png";
        QTest::addRow("token head view %s", suffix)
            << "tokens" << sx << int(T::Tokens) << "Token Head View"
            << "attention-tokens.png";
        QTest::addRow("coloured tokens %s", suffix)
            << "text" << sx << int(T::Tokens) << "Coloured Tokens"
            << "attention-text.png";
        QTest::addRow("focused chart %s", suffix)
            << "chart" << sx << int(T::Chart) << "Max weight vs d_k"
            << "chart-max-weight-vs-d-k.png";
    }
    // Experiment figures come as PNG or SVG (exportExperimentFigure).
    QTest::addRow("experiment png") << "experiment"
                                    << "png" << int(T::Experiment) << "E1 Figure"
                                    << "e1.png";
    QTest::addRow("experiment svg") << "experiment"
                                    << "svg" << int(T::Experiment) << "E1 Figure"
                                    << "e1.png";
}

void TestMainWindowExport::exportCurrentView()
{
    QFETCH(QString, view);
    QFETCH(QString, suffix);
    QFETCH(int, target);
    QFETCH(QString, name);
    QFETCH(QString, fileName);
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("current.") + suffix);
    const QString reference = dir.filePath(QStringLiteral("reference.") + suffix);

    // Switch to the view the way a user would, then write it as File → Export would.
    std::function<bool(QSize, QString *)> viewsOwnExport; // the view's own export path
    if (view == QLatin1String("grid") || view == QLatin1String("head")) {
        if (view == QLatin1String("head"))
            m_window->heatmapWidget()->showSingleHead(1);
        viewsOwnExport = [&](QSize size, QString *error) {
            return suffix == QLatin1String("png")
                ? m_window->heatmapActions()->exportView(reference, size * 2, 192.0, error)
                : m_window->heatmapActions()->exportView(reference, size, 96.0, error);
        };
    } else if (view == QLatin1String("steps")) {
        views->setCurrentIndex(AttentionViews::StepsTab);
        viewsOwnExport = [&](QSize size, QString *error) {
            return views->stepsView()->exportFigure(reference, size, 2.0, error);
        };
    } else if (view == QLatin1String("compare")) {
        views->setCurrentIndex(AttentionViews::CompareTab);
        QTRY_VERIFY_WITH_TIMEOUT(views->compareView()->isUpToDate(), attn::test::kWorkTimeoutMs);
        viewsOwnExport = [&](QSize size, QString *error) {
            return views->compareView()->exportFigure(reference, size, 2.0, error);
        };
    } else if (view == QLatin1String("tokens") || view == QLatin1String("text")) {
        views->setCurrentIndex(AttentionViews::TokensTab);
        views->tokensView()->setView(view == QLatin1String("text") ? TokenView::Text
                                                                   : TokenView::Heads);
        viewsOwnExport = [&](QSize size, QString *error) {
            return views->tokensView()->exportFigure(reference, size, 2.0, error);
        };
    } else if (view == QLatin1String("chart")) {
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        m_window->findChild<MaxWeightChart *>()->setFocus(Qt::MouseFocusReason); // as a click does
        QTRY_COMPARE(QApplication::focusWidget(),
                     static_cast<QWidget *>(m_window->findChild<MaxWeightChart *>()));
        viewsOwnExport = [&](QSize size, QString *error) {
            return exportWidget(m_window->findChild<MaxWeightChart *>(), reference, size, 2.0,
                                error);
        };
    } else {
        m_window->modeTabs()->setCurrentIndex(1);
        ExperimentsPanel *panel = m_window->experimentsPanel();
        QVERIFY(panel->setCurrentExperiment(QStringLiteral("E1")));
        QSignalSpy done(panel->currentPage(), &ExperimentPage::resultReady);
        panel->currentPage()->run();
        QVERIFY(done.wait(attn::test::kWorkTimeoutMs));
        viewsOwnExport = [&, panel](QSize size, QString *error) {
            return panel->currentPage()->exportFigure(reference, size, error);
        };
    }
    QCOMPARE(int(m_window->exportRouter()->currentTarget()), target);
    QVERIFY2(m_window->exportRouter()->currentName().contains(name),
             qPrintable(m_window->exportRouter()->currentName()));
    QCOMPARE(m_window->exportRouter()->currentFileName(), fileName);
    // File → Export names what it exports.
    QVERIFY2(m_window->exportRouter()->exportAction()->text().contains(name),
             qPrintable(m_window->exportRouter()->exportAction()->text()));

    const QSize size = m_window->exportRouter()->currentSize();
    QVERIFY(!size.isEmpty());
    QString error;
    QVERIFY2(m_window->exportRouter()->exportCurrentView(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    if (suffix == QLatin1String("png")) {
        const QImage image(path);
        QVERIFY(!image.isNull());
        // Two device pixels per pixel, except experiment figures (their size in pixels).
        QCOMPARE(image.size(), view == QLatin1String("experiment") ? size : size * 2);
        // The same picture as the view's own Export writes: one rendering path.
        QVERIFY2(viewsOwnExport(size, &error), qPrintable(error));
        const QImage own(reference);
        QCOMPARE(own.size(), image.size());
        QVERIFY(own.convertToFormat(QImage::Format_ARGB32)
                == image.convertToFormat(QImage::Format_ARGB32));
    } else {
        const QString error = vectorFigureError(suffix, bytes);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
}

void TestMainWindowExport::exportMatchesRendererImage_data()
{
    QTest::addColumn<QString>("view");
    QTest::newRow("heads grid") << "grid";
    QTest::newRow("head 1") << "head";
    QTest::newRow("mean over heads") << "mean";
    QTest::newRow("steps head 1") << "steps";
    QTest::newRow("compare A/B") << "compare";
}

// File → Export's PNG against the renderer's own image of the same result at the same size,
// made here from the renderer classes (not through the window's or a view's export code):
// every pixel equal, so a wrong result, head, colormap, size or style is caught.
void TestMainWindowExport::exportMatchesRendererImage()
{
    QFETCH(QString, view);
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    // A colormap other than the default, so a renderer that ignores the options shows.
    HeatmapOptions shown = heatmap->options();
    shown.colormap = ColormapId::Magma;
    heatmap->setOptions(shown);
    const auto result = m_window->session()->result();
    QVERIFY(result && result->ok());
    const int heads = result->params.heads;
    QVERIFY(heads > 1);

    const QSize size(720, 480); // logical pixels; the PNG has 2 device pixels per pixel
    QImage expected;
    auto figureStyle = [](const QWidget *canvas) {
        FigureStyle style;
        const QFontInfo info(canvas->font());
        style.fontPixelSize = info.pixelSize() > 0 ? info.pixelSize() : 12;
        style.background = Qt::white;
        style.foreground = Qt::black;
        return style;
    };
    if (view == QLatin1String("grid") || view == QLatin1String("head")
        || view == QLatin1String("mean")) {
        if (view == QLatin1String("head"))
            heatmap->showSingleHead(1);
        else if (view == QLatin1String("mean"))
            heatmap->showSingleHead(heads);
        HeatmapOptions options = heatmap->options();
        QCOMPARE(options.colormap, ColormapId::Magma);
        QCOMPARE(options.view,
                 view == QLatin1String("grid") ? HeatmapView::Grid : HeatmapView::SingleHead);
        const HeatmapOptions defaults; // an export is drawn on white, with its caption
        options.background = defaults.background;
        options.foreground = defaults.foreground;
        options.showCaption = true;
        HeatmapRenderer renderer;
        renderer.setOptions(options);
        renderer.setResult(result);
        expected = renderer.render(size, 2.0);
    } else if (view == QLatin1String("steps")) {
        views->setCurrentIndex(AttentionViews::StepsTab);
        views->stepsView()->setHead(1);
        StepsRenderer renderer;
        renderer.setResult(result);
        renderer.setHead(1);
        renderer.setWeightsColormap(ColormapId::Magma);
        renderer.setSharedScoreRange(views->stepsView()->renderer().sharedScoreRange());
        renderer.setStyle(
            figureStyle(views->stepsView()->findChild<QWidget *>(QStringLiteral("stepsCanvas"))));
        expected = renderer.render(size, 2.0);
    } else {
        views->setCurrentIndex(AttentionViews::CompareTab);
        CompareView *compare = views->compareView();
        QTRY_VERIFY_WITH_TIMEOUT(compare->isUpToDate(), attn::test::kWorkTimeoutMs);
        const auto b = compare->renderer().resultB();
        QVERIFY(b && b->ok());
        QCOMPARE(compare->renderer().resultA(), result);
        // B is A with the other scale (the A/B view's default).
        QCOMPARE(b->params.scaleExponent, result->params.scaleExponent == 0.5 ? 0.0 : 0.5);
        CompareRenderer renderer;
        renderer.setResults(result, b);
        renderer.setHead(compare->renderer().head());
        renderer.setWeightsColormap(ColormapId::Magma);
        renderer.setStyle(
            figureStyle(compare->findChild<QWidget *>(QStringLiteral("compareCanvas"))));
        expected = renderer.render(size, 2.0);
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("export.png"));
    QString error;
    QVERIFY2(m_window->exportRouter()->exportCurrentView(path, &error, size, 2.0),
             qPrintable(error));
    const QImage written = QImage(path).convertToFormat(QImage::Format_ARGB32);
    expected = expected.convertToFormat(QImage::Format_ARGB32);
    QCOMPARE(written.size(), size * 2);
    QCOMPARE(expected.size(), written.size());
    qsizetype differing = 0;
    QPoint first(-1, -1);
    for (int y = 0; y < written.height(); ++y) {
        const auto *a = reinterpret_cast<const QRgb *>(written.constScanLine(y));
        const auto *e = reinterpret_cast<const QRgb *>(expected.constScanLine(y));
        for (int x = 0; x < written.width(); ++x) {
            if (a[x] != e[x]) {
                if (differing++ == 0)
                    first = QPoint(x, y);
            }
        }
    }
    QVERIFY2(differing == 0,
             qPrintable(QStringLiteral("%1 pixels differ, first at (%2, %3)")
                            .arg(differing)
                            .arg(first.x())
                            .arg(first.y())));
}

void TestMainWindowExport::exportCurrentViewBadSuffixFails()
{
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    AttentionViews *views = m_window->attentionViews();
    for (int tab : {int(AttentionViews::HeadsTab), int(AttentionViews::StepsTab)}) {
        views->setCurrentIndex(tab);
        const QString path = dir.filePath(QStringLiteral("view.bmpx"));
        QString error;
        QVERIFY(!m_window->exportRouter()->exportCurrentView(path, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY(!QFile::exists(path));
    }
}

void TestMainWindowExport::exportActionWritesFocusedChart()
{
    // Regression: the file dialog took the focus from the chart, so Ctrl+E on a clicked chart
    // wrote the heatmap grid instead.
    QVERIFY(waitForFirstResult());
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QWidget *chart = m_window->findChild<JacobianNormChart *>();
    chart->setFocus(Qt::MouseFocusReason);
    QTRY_COMPARE(QApplication::focusWidget(), chart);
    QCOMPARE(m_window->exportRouter()->currentTarget(), ExportRouter::Target::Chart);
    QVERIFY(m_window->exportRouter()->exportAction()->text().contains(
        QLatin1String("Jacobian norm vs d_k")));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("chart.png"));
    bool answered = false;
    QString title;
    QTimer::singleShot(200, this, [&] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        title = dialog->windowTitle();
        dialog->setDirectory(dir.path());
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        if (!name)
            return;
        name->setText(QFileInfo(path).fileName());
        answered = true;
        QMetaObject::invokeMethod(dialog, "accept", Qt::DirectConnection);
    });
    m_window->exportRouter()->exportAction()->trigger();
    QVERIFY(answered);
    QVERIFY2(title.contains(QLatin1String("Jacobian norm vs d_k")), qPrintable(title));
    const QImage image(path);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), chart->size() * 2); // the chart as shown, two pixels per pixel
}

// The Positions tab follows the session's n and d_model, and File → Export writes it.
void TestMainWindowExport::positionsTabExports()
{
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    views->setCurrentIndex(AttentionViews::PositionsTab);
    ExportRouter *router = m_window->exportRouter();
    QCOMPARE(router->currentTarget(), ExportRouter::Target::Positions);
    QCOMPARE(router->currentName(), QStringLiteral("Positional Encoding"));
    QCOMPARE(router->currentFileName(), QStringLiteral("positional-encoding.png"));
    const SessionParameters p = m_window->session()->parameters();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString svg = dir.filePath(QStringLiteral("positions.svg"));
    QString error;
    QVERIFY2(router->exportCurrentView(svg, &error, QSize(1000, 600)), qPrintable(error));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY2(text.contains(
                 QStringLiteral("n = %1 positions \u00d7 d_model = %2").arg(p.n).arg(p.dModel)),
             qPrintable(text.left(2000)));
    const QString png = dir.filePath(QStringLiteral("positions.png"));
    QVERIFY2(router->exportCurrentView(png, &error, QSize(800, 500), 1.0), qPrintable(error));
    QCOMPARE(QImage(png).size(), QSize(800, 500));
}

void TestMainWindowExport::exportDialogsStartInTheLastExportFolder()
{
    // Every export dialog starts in the folder of the last export, also after a restart.
    QVERIFY(waitForFirstResult());
    QSettings().remove(QStringLiteral("exportFolder"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString folder = QDir(dir.path()).absoluteFilePath(QStringLiteral("exports"));
    QVERIFY(QDir().mkpath(folder));
    struct Forget
    {
        ~Forget() { QSettings().remove(QStringLiteral("exportFolder")); }
    } forget;

    const QString data = QDir(folder).filePath(QStringLiteral("attention.npz"));
    auto first = answerNextFileDialog(data);
    m_window->heatmapActions()->exportDataInteractive();
    QVERIFY(first->seen);
    QVERIFY(QFileInfo::exists(data));

    auto figure = answerNextFileDialog(QString());
    m_window->heatmapActions()->exportViewInteractive();
    QVERIFY(figure->seen);
    QCOMPARE(figure->directory, folder);

    // A new window (the next start) remembers it.
    m_window.reset();
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(waitForFirstResult());
    auto again = answerNextFileDialog(QString());
    m_window->heatmapActions()->exportDataInteractive();
    QVERIFY(again->seen);
    QCOMPARE(again->directory, folder);
}

// Export Data on the A/B tab writes B's numbers beside A's (it wrote A's only); on the Heads tab
// only A's.
void TestMainWindowExport::exportDataOnTheComparisonWritesB()
{
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    views->setCurrentIndex(AttentionViews::CompareTab);
    CompareView *compare = views->compareView();
    QTRY_VERIFY_WITH_TIMEOUT(compare->isUpToDate() && compare->resultB(),
                             attn::test::kWorkTimeoutMs);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("attention.npz"));
    QStringList written;
    QString error;
    QVERIFY2(m_window->heatmapActions()->exportData(path, &written, &error), qPrintable(error));
    const QString pathB = dir.filePath(QStringLiteral("attention-B.npz"));
    QCOMPARE(written, QStringList({path, pathB}));
    const auto weightsOf = [](const QString &file) {
        for (const auto &[name, array] : attn::readNpz(file.toStdString()))
            if (name == "weights")
                return array;
        return attn::NpyArray {};
    };
    const auto equal = [](const attn::NpyArray &a, const std::vector<attn::MatrixD> &w) {
        std::size_t k = 0;
        for (const attn::MatrixD &m : w)
            for (attn::Index i = 0; i < m.rows(); ++i)
                for (attn::Index j = 0; j < m.cols(); ++j)
                    if (k >= a.values.size() || a.values[k++] != m(i, j))
                        return false;
        return k == a.values.size();
    };
    QVERIFY(equal(weightsOf(path), compare->resultA()->weights));
    QVERIFY(equal(weightsOf(pathB), compare->resultB()->weights));
    // A and B differ: B is A with the scale toggled.
    QVERIFY(!equal(weightsOf(pathB), compare->resultA()->weights));

    views->setCurrentIndex(AttentionViews::HeadsTab);
    const QString heads = dir.filePath(QStringLiteral("heads.npz"));
    written.clear();
    QVERIFY2(m_window->heatmapActions()->exportData(heads, &written, &error), qPrintable(error));
    QCOMPARE(written, QStringList({heads}));
}

// Export Data on the Long tab writes the tab's visible window, every head (it wrote the Heads
// tab's n × n numbers); on the Heads tab the route does not take it.
void TestMainWindowExport::exportDataOnTheLongTabWritesItsWindow()
{
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    LongMapView *view = views->longMapView();
    view->setLength(300);
    QSignalSpy shown(view, &LongMapView::fullViewShown);
    views->setCurrentIndex(AttentionViews::LongTab);
    QVERIFY(shown.wait(60000));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("long.npz"));
    QSignalSpy exported(view, &LongMapView::exported);
    QVERIFY(m_window->heatmapActions()->routeDataExport(path));
    QVERIFY(exported.wait(60000));
    QCOMPARE(exported.first().at(0).toString(), path);
    QVERIFY2(exported.first().at(1).toString().isEmpty(),
             qPrintable(exported.first().at(1).toString()));
    std::vector<attn::Index> shape;
    for (const auto &[name, array] : attn::readNpz(path.toStdString()))
        if (name == "weights")
            shape = array.shape;
    const attn::Index heads = m_window->session()->parameters().heads;
    QCOMPARE(shape.size(), std::size_t(3));
    QCOMPARE(shape[1], attn::Index(300)); // the whole map is the visible window after Fit
    QCOMPARE(shape[2], attn::Index(300));
    QVERIFY(shape[0] == heads || shape[0] == heads + 1);
    QVERIFY(m_window->session()->parameters().n != 300);

    views->setCurrentIndex(AttentionViews::HeadsTab);
    QVERIFY(!m_window->heatmapActions()->routeDataExport(dir.filePath(QStringLiteral("h.npz"))));
}

QTEST_MAIN(TestMainWindowExport)
#include "tst_mainwindow_export.moc"
