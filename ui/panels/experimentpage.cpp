#include "ui/panels/experimentpage.h"

#include "ui/charts/experimentfigure.h"
#include "ui/panels/tablemodel.h"
#include "ui/render/figurefile.h"
#include "ui/session/experimentrunner.h"
#include "ui/views/figureexport.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDoubleValidator>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTableView>
#include <QTime>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <cmath>

namespace attn {

/// One run: its cancellation flag outlives the page (the worker holds a reference).
namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Decimals a QDoubleSpinBox needs to show `text` exactly (at least 2, at most 10); −1 when a
/// spin box cannot show it (exponent notation or more decimals).
int decimalsFor(const QString &text)
{
    if (text.contains(QLatin1Char('e'), Qt::CaseInsensitive))
        return -1;
    const int dot = text.indexOf(QLatin1Char('.'));
    const int decimals = dot < 0 ? 0 : int(text.size()) - dot - 1;
    return decimals > 10 ? -1 : std::max(2, decimals);
}

QString tooltipFor(const ParamSpec &spec)
{
    QString tip = QStringLiteral("<b>%1</b>: %2").arg(q(spec.name), q(spec.help).toHtmlEscaped());
    const bool ranged = spec.maximum > spec.minimum;
    switch (spec.kind) {
    case ParamSpec::Kind::Int:
    case ParamSpec::Kind::Double:
        if (ranged)
            tip += QStringLiteral("<br>range %1 \u2026 %2")
                       .arg(QString::number(spec.minimum, 'g', 12),
                            QString::number(spec.maximum, 'g', 12));
        break;
    case ParamSpec::Kind::IntList:
        tip += QStringLiteral("<br>comma-separated integers");
        if (ranged)
            tip += QStringLiteral(", each %1 \u2026 %2")
                       .arg(QString::number(spec.minimum, 'g', 12),
                            QString::number(spec.maximum, 'g', 12));
        break;
    case ParamSpec::Kind::Choice:
        tip += QStringLiteral("<br>one of: %1")
                   .arg(QStringList([&] {
                            QStringList c;
                            for (const std::string &s : spec.choices)
                                c << q(s);
                            return c;
                        }())
                            .join(QStringLiteral(", "))
                            .toHtmlEscaped());
        break;
    case ParamSpec::Kind::Text:
        break;
    }
    tip += QStringLiteral("<br>default: %1 (docs/experiments.md)")
               .arg(q(spec.defaultValue).toHtmlEscaped());
    return tip;
}

// The experiment's figure, laid out as the headless export lays it out: at least at its
// design size (defaultExperimentFigureSize, e.g. 1000 × 760 for E11), so labels, titles and
// captions never overlap or clip. The page is a scrolling document, so the figure takes the
// page's width and the height that goes with it: as wide as its design or wider, it is shown as
// it is (live: hover, tooltips), design-high; narrower, it is laid out at its design size and
// painted scaled to the width — never below kMinimumScale, where text would become too small to
// read: below that width the page scrolls sideways instead.
class FigureFit : public QWidget
{
public:
    static constexpr double kMinimumScale = 0.75;

    FigureFit(QWidget *figure, QSize design, QWidget *parent)
        : QWidget(parent)
        , m_figure(figure)
        , m_design(design.expandedTo(QSize(1, 1)))
    {
        setObjectName(QStringLiteral("experimentFigureFit"));
        figure->setParent(this);
        figure->setMinimumSize(0, 0);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        setMinimumWidth(int(std::ceil(kMinimumScale * m_design.width())));
        setFixedHeight(heightFor(m_design.width()));
    }

    QSize sizeHint() const override { return m_design; }
    QSize minimumSizeHint() const override { return {minimumWidth(), heightFor(minimumWidth())}; }
    /// The factor the figure is painted with (1: shown as it is).
    double paintScale() const { return m_scaled ? m_factor : 1.0; }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        QWidget::resizeEvent(event);
        const int wanted = heightFor(width());
        if (wanted != height())
            setFixedHeight(wanted);
        relayout();
    }

    void paintEvent(QPaintEvent *) override
    {
        if (!m_scaled)
            return;
        const qreal dpr = devicePixelRatioF();
        if (m_cache.isNull()) {
            m_cache = QImage(size() * dpr, QImage::Format_ARGB32_Premultiplied);
            m_cache.setDevicePixelRatio(dpr);
            m_cache.fill(palette().color(QPalette::Window));
            QPainter painter(&m_cache);
            painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing
                                   | QPainter::SmoothPixmapTransform);
            painter.scale(m_factor, m_factor);
            m_figure->render(&painter, QPoint(), QRegion(),
                             QWidget::DrawWindowBackground | QWidget::DrawChildren);
        }
        QPainter painter(this);
        painter.drawImage(0, 0, m_cache);
    }

private:
    double scaleFor(int width) const
    {
        return std::clamp(double(width) / m_design.width(), kMinimumScale, 1.0);
    }
    int heightFor(int width) const { return int(std::ceil(m_design.height() * scaleFor(width))); }

    void relayout()
    {
        if (width() <= 0)
            return;
        m_factor = scaleFor(width());
        m_scaled = width() < m_design.width();
        m_cache = QImage();
        if (!m_scaled) {
            m_figure->setGeometry(rect());
            m_figure->show();
            setToolTip(QString());
        } else {
            m_figure->hide();
            m_figure->setGeometry(QRect(QPoint(0, 0), m_design));
            if (m_figure->layout())
                m_figure->layout()->activate();
            setToolTip(tr("The figure as exported, scaled to %1 % to fit: make the window wider "
                          "to see it at full size and hover it, or export it.")
                           .arg(int(std::lround(100 * m_factor))));
        }
        setProperty("paintScale", paintScale());
        update();
    }

    QWidget *m_figure;
    QSize m_design;
    bool m_scaled = false;
    qreal m_factor = 1.0;
    QImage m_cache;
};

} // namespace

ExperimentPage::ExperimentPage(const ExperimentInfo &info, QWidget *parent)
    : QWidget(parent)
    , m_info(info)
{
    setObjectName(QStringLiteral("experimentPage_%1").arg(q(info.id)));
    m_runner = new ExperimentRunner(this);
    connect(m_runner, &ExperimentRunner::progressChanged, this, [this](double fraction) {
        m_progress->setValue(int(std::lround(fraction * 1000)));
        emit progressChanged(fraction);
    });
    connect(m_runner, &ExperimentRunner::finished, this, &ExperimentPage::onFinished);
    connect(m_runner, &ExperimentRunner::failed, this, [this](const QString &message) {
        setRunning(false);
        setMessage(tr("Error: %1").arg(message), true);
        emit failed(message);
    });
    connect(m_runner, &ExperimentRunner::cancelled, this, [this] {
        setRunning(false);
        setMessage(cancelledMessage(m_clock.elapsed() / 1000.0), false);
        emit cancelled();
    });
    auto *layout = new QVBoxLayout(this);

    // Title and the note: what to look at and why, with the paper section.
    auto *title = new QLabel(this);
    title->setTextFormat(Qt::RichText);
    title->setText(QStringLiteral("<h3>%1 \u2014 %2</h3>")
                       .arg(q(info.id).toHtmlEscaped(), q(info.title).toHtmlEscaped()));
    // Run and Cancel sit on the title's row (filled in below), so they are at the same place
    // on every page whatever the length of the note under the title.
    auto *header = new QHBoxLayout;
    header->addWidget(title, 1);
    layout->addLayout(header);
    auto *note = new QLabel(this);
    note->setObjectName(QStringLiteral("note"));
    note->setWordWrap(true);
    note->setTextFormat(Qt::RichText);
    note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    note->setText(QStringLiteral("<b>%1</b> %2 <i>(%3)</i>")
                      .arg(tr("What to look at:"), q(info.note).toHtmlEscaped(),
                           q(info.paperSection).toHtmlEscaped()));

    // Parameters: one editor per ParamSpec, in registry order, in two columns from three
    // parameters on (the page keeps its height for the figure).
    auto *paramBox = new QGroupBox(tr("Parameters"), this);
    auto *forms = new QHBoxLayout;
    QFormLayout *columns[2] = {new QFormLayout, new QFormLayout};
    int shown = 0;
    for (const ParamSpec &spec : info.params)
        shown += spec.unused ? 0 : 1;
    const int firstColumnRows = shown >= 3 ? (shown + 1) / 2 : shown;
    int placed = 0;
    for (QFormLayout *form : columns) {
        form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
        forms->addLayout(form, 1);
    }
    for (const ParamSpec &spec : info.params) {
        QWidget *editor = createEditor(spec);
        auto *label = new QLabel(q(spec.name), paramBox);
        label->setToolTip(editor->toolTip());
        label->setBuddy(editor);
        QFormLayout *form = columns[placed < firstColumnRows ? 0 : 1];
        form->addRow(label, editor);
        m_editors[q(spec.name)] = editor;
        if (spec.unused) // e.g. E6's seed: offering it would suggest it changes something
            form->setRowVisible(editor, false);
        else
            ++placed;
    }
    auto *paramLayout = new QVBoxLayout(paramBox);
    paramLayout->addLayout(forms);
    auto *defaults = new QPushButton(tr("Defaults"), paramBox);
    defaults->setObjectName(QStringLiteral("defaultsButton"));
    defaults->setToolTip(tr("Put every parameter back to its default (docs/experiments.md)"));
    connect(defaults, &QPushButton::clicked, this, &ExperimentPage::resetParameters);
    auto *defaultsRow = new QHBoxLayout;
    defaultsRow->addStretch(1);
    defaultsRow->addWidget(defaults);
    paramLayout->addLayout(defaultsRow);
    if (info.params.empty())
        paramBox->hide();

    // Run / Cancel, progress and the message line.
    m_runButton = new QPushButton(tr("Run"), this);
    m_runButton->setObjectName(QStringLiteral("runButton"));
    m_runButton->setDefault(true);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setObjectName(QStringLiteral("cancelButton"));
    m_cancelButton->setEnabled(false);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("progressBar"));
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(true);
    m_progress->setFormat(QStringLiteral("%p%"));
    m_progress->setVisible(false);
    {
        // Hidden, the bar keeps its place: Run and Cancel never move when it shows up.
        QSizePolicy policy = m_progress->sizePolicy();
        policy.setRetainSizeWhenHidden(true);
        m_progress->setSizePolicy(policy);
    }
    m_progressDelay = new QTimer(this);
    m_progressDelay->setSingleShot(true);
    m_progressDelay->setInterval(150); // a blink: short runs never flash a progress bar
    connect(m_progressDelay, &QTimer::timeout, this, [this] {
        if (isRunning())
            m_progress->setVisible(true);
    });
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("messageLine"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(m_runButton, &QPushButton::clicked, this, &ExperimentPage::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &ExperimentPage::cancel);
    // Run and Cancel keep their size and place: fixed-width buttons at the end of the title row,
    // after the progress bar's reserved space.
    for (QPushButton *button : {m_runButton, m_cancelButton}) {
        button->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
        button->setMinimumWidth(
            std::max(m_runButton->sizeHint().width(), m_cancelButton->sizeHint().width()));
    }
    m_runButton->setToolTip(
        tr("Run the experiment with these parameters (disabled while it runs)"));
    m_cancelButton->setToolTip(tr("Stop the running experiment (its partial result is dropped)"));
    m_progress->setFixedWidth(std::max(120, m_runButton->minimumWidth() * 2));
    header->addWidget(m_progress);
    header->addWidget(m_runButton);
    header->addWidget(m_cancelButton);
    auto *controls = new QVBoxLayout;
    controls->addWidget(m_message);
    controls->addStretch(1);

    // Everything under the title row is one document that scrolls: the note, the parameters,
    // the figure at a readable size and the whole table under it.
    auto *document = new QWidget(this);
    document->setObjectName(QStringLiteral("experimentDocument"));
    auto *documentLayout = new QVBoxLayout(document);
    documentLayout->setContentsMargins(0, 0, 0, 0);
    note->setParent(document);
    documentLayout->addWidget(note);
    auto *top = new QHBoxLayout;
    top->addWidget(paramBox, 1);
    top->addLayout(controls, 1);
    documentLayout->addLayout(top);

    // Result: the figure, then the table with its notes.
    m_tableModel = new TableModel(this);
    m_tableView = new QTableView(document);
    m_tableView->setObjectName(QStringLiteral("resultTable"));
    m_tableView->setModel(m_tableModel);
    m_tableView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_tableView->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_tableView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tableView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_tableView->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_tableView->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    auto *copy = new QAction(tr("&Copy"), m_tableView);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copy, &QAction::triggered, this, &ExperimentPage::copySelection);
    m_tableView->addAction(copy);
    auto *selectAll = new QAction(tr("Select &All"), m_tableView);
    selectAll->setShortcut(QKeySequence::SelectAll);
    selectAll->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(selectAll, &QAction::triggered, m_tableView, &QTableView::selectAll);
    m_tableView->addAction(selectAll);
    m_tableView->hide();

    m_figureHolder = new QWidget(document);
    m_figureLayout = new QVBoxLayout(m_figureHolder);
    m_figureLayout->setContentsMargins(0, 0, 0, 0);
    auto *placeholder
        = new QLabel(tr("Run the experiment to see its table and figure."), m_figureHolder);
    placeholder->setAlignment(Qt::AlignCenter);
    placeholder->setMinimumHeight(120);
    m_figure = placeholder;
    m_figureLayout->addWidget(m_figure);

    m_tableView->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    // The table's notes (what the numbers mean, caveats) under it.
    m_notes = new QLabel(document);
    m_notes->setObjectName(QStringLiteral("tableNotes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->setForegroundRole(QPalette::PlaceholderText);
    m_notes->hide();
    // A figure wider than the page at its smallest readable scale scrolls sideways on its own:
    // the note, the parameters and the table keep wrapping at the page's width.
    m_figureScroll = new QScrollArea(document);
    m_figureScroll->setObjectName(QStringLiteral("experimentFigureScroll"));
    m_figureScroll->setFrameShape(QFrame::NoFrame);
    m_figureScroll->setWidgetResizable(true);
    m_figureScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_figureScroll->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_figureScroll->setWidget(m_figureHolder);
    m_figureHolder->installEventFilter(this);
    m_figureScroll->viewport()->installEventFilter(this);
    documentLayout->addWidget(m_figureScroll);
    documentLayout->addWidget(m_tableView);
    documentLayout->addWidget(m_notes);
    documentLayout->addStretch(1);

    m_scroll = new QScrollArea(this);
    m_scroll->setObjectName(QStringLiteral("experimentScroll"));
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidgetResizable(true);
    // Always there: a bar that comes and goes would re-wrap the note under it.
    m_scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    m_scroll->setWidget(document);
    layout->addWidget(m_scroll, 1);

    // Export.
    m_exportTableButton = new QPushButton(tr("Export table (CSV)\u2026"), this);
    m_exportTableButton->setObjectName(QStringLiteral("exportTableButton"));
    m_exportFigureButton = new QPushButton(tr("Export figure (PNG, SVG)\u2026"), this);
    m_exportFigureButton->setObjectName(QStringLiteral("exportFigureButton"));
    m_exportTableButton->setEnabled(false);
    m_exportFigureButton->setEnabled(false);
    connect(m_exportTableButton, &QPushButton::clicked, this,
            &ExperimentPage::exportTableInteractive);
    connect(m_exportFigureButton, &QPushButton::clicked, this,
            &ExperimentPage::exportFigureInteractive);
    auto *exportRow = new QHBoxLayout;
    exportRow->addStretch(1);
    exportRow->addWidget(m_exportTableButton);
    exportRow->addWidget(m_exportFigureButton);
    layout->addLayout(exportRow);
}

ExperimentPage::~ExperimentPage() = default; // m_runner cancels and waits for a run

bool ExperimentPage::isRunning() const
{
    return m_runner->isRunning();
}

QWidget *ExperimentPage::createEditor(const ParamSpec &spec)
{
    QWidget *editor = nullptr;
    const QString def = q(spec.defaultValue);
    const bool ranged = spec.maximum > spec.minimum;
    switch (spec.kind) {
    case ParamSpec::Kind::Int: {
        const double lo = ranged ? spec.minimum : double(INT_MIN);
        const double hi = ranged ? spec.maximum : double(INT_MAX);
        if (lo >= double(INT_MIN) && hi <= double(INT_MAX)) {
            auto *box = new QSpinBox(this);
            box->setRange(int(lo), int(hi));
            box->setValue(def.toInt());
            box->setGroupSeparatorShown(false);
            editor = box;
        } else {
            // Beyond a spin box's int (e.g. a 64-bit seed): digits in a line edit.
            auto *line = new QLineEdit(def, this);
            line->setValidator(new QRegularExpressionValidator(
                QRegularExpression(lo < 0 ? QStringLiteral("-?\\d{1,20}")
                                          : QStringLiteral("\\d{1,20}")),
                line));
            editor = line;
        }
        break;
    }
    case ParamSpec::Kind::Double: {
        const int decimals = decimalsFor(def);
        if (decimals >= 0) {
            auto *box = new QDoubleSpinBox(this);
            box->setDecimals(decimals);
            box->setRange(ranged ? spec.minimum : -1e300, ranged ? spec.maximum : 1e300);
            box->setValue(def.toDouble());
            box->setGroupSeparatorShown(false);
            editor = box;
        } else {
            auto *line = new QLineEdit(def, this);
            auto *validator = new QDoubleValidator(line);
            validator->setNotation(QDoubleValidator::ScientificNotation);
            validator->setLocale(QLocale::c());
            if (ranged)
                validator->setRange(spec.minimum, spec.maximum, 17);
            line->setValidator(validator);
            editor = line;
        }
        break;
    }
    case ParamSpec::Kind::IntList: {
        auto *line = new QLineEdit(def, this);
        line->setValidator(new QRegularExpressionValidator(
            QRegularExpression(QStringLiteral("\\s*-?\\d+(\\s*,\\s*-?\\d+)*\\s*,?\\s*")), line));
        line->setPlaceholderText(tr("comma-separated, e.g. %1").arg(def));
        editor = line;
        break;
    }
    case ParamSpec::Kind::Choice: {
        auto *combo = new QComboBox(this);
        for (const std::string &c : spec.choices)
            combo->addItem(q(c));
        combo->setCurrentIndex(std::max(0, combo->findText(def)));
        editor = combo;
        break;
    }
    case ParamSpec::Kind::Text:
        editor = new QLineEdit(def, this);
        break;
    }
    editor->setObjectName(QStringLiteral("param_%1").arg(q(spec.name)));
    editor->setToolTip(tooltipFor(spec));
    return editor;
}

QString ExperimentPage::editorText(const ParamSpec &spec) const
{
    const QWidget *editor = m_editors.at(q(spec.name));
    if (auto *box = qobject_cast<const QSpinBox *>(editor))
        return QString::number(box->value());
    if (auto *box = qobject_cast<const QDoubleSpinBox *>(editor))
        return QString::number(box->value(), 'g', 15);
    if (auto *combo = qobject_cast<const QComboBox *>(editor))
        return combo->currentText();
    if (auto *line = qobject_cast<const QLineEdit *>(editor)) {
        QString text = line->text().trimmed();
        if (spec.kind == ParamSpec::Kind::IntList) {
            text.remove(QLatin1Char(' '));
            while (text.endsWith(QLatin1Char(',')))
                text.chop(1);
        }
        return text;
    }
    return q(spec.defaultValue);
}

ExperimentParams ExperimentPage::parameters() const
{
    ExperimentParams params;
    for (const ParamSpec &spec : m_info.params)
        params[spec.name] = editorText(spec).toStdString();
    return params;
}

QWidget *ExperimentPage::editor(const QString &name) const
{
    const auto it = m_editors.find(name);
    return it == m_editors.end() ? nullptr : it->second;
}

bool ExperimentPage::setParameter(const QString &name, const QString &value)
{
    QWidget *w = editor(name);
    if (!w)
        return false;
    if (auto *box = qobject_cast<QSpinBox *>(w)) {
        bool ok = false;
        const int v = value.toInt(&ok);
        if (!ok || v < box->minimum() || v > box->maximum())
            return false;
        box->setValue(v);
        return true;
    }
    if (auto *box = qobject_cast<QDoubleSpinBox *>(w)) {
        bool ok = false;
        const double v = value.toDouble(&ok);
        if (!ok || v < box->minimum() || v > box->maximum())
            return false;
        box->setValue(v);
        return true;
    }
    if (auto *combo = qobject_cast<QComboBox *>(w)) {
        const int i = combo->findText(value);
        if (i < 0)
            return false;
        combo->setCurrentIndex(i);
        return true;
    }
    if (auto *line = qobject_cast<QLineEdit *>(w)) {
        QString text = value;
        int pos = 0;
        if (line->validator() && line->validator()->validate(text, pos) != QValidator::Acceptable)
            return false;
        line->setText(value);
        return true;
    }
    return false;
}

void ExperimentPage::resetParameters()
{
    for (const ParamSpec &spec : m_info.params)
        setParameter(q(spec.name), q(spec.defaultValue));
}

QString ExperimentPage::message() const
{
    return m_message->text();
}

void ExperimentPage::setMessage(const QString &text, bool error)
{
    m_message->setText(text);
    QPalette pal = palette();
    if (error)
        pal.setColor(QPalette::WindowText, QColor(190, 0, 0));
    m_message->setPalette(pal);
}

void ExperimentPage::setRunning(bool running)
{
    // Run while idle, Cancel while running (run() still restarts a run when called directly).
    m_runButton->setEnabled(!running);
    m_cancelButton->setEnabled(running);
    if (running) {
        m_progress->setValue(0);
        m_progressDelay->start();
    } else {
        m_progressDelay->stop();
        m_progress->setVisible(false);
    }
    emit runningChanged(running);
}

void ExperimentPage::run()
{
    const bool wasRunning = isRunning();
    const std::string id = m_info.id;
    m_clock.start();
    setMessage(tr("Running %1\u2026").arg(q(id)), false);
    m_runner->run(id, parameters()); // newest run wins: a running one is cancelled and dropped
    if (!wasRunning)
        setRunning(true);
    else
        m_progress->setValue(0);
    emit started();
}

void ExperimentPage::cancel()
{
    if (!isRunning())
        return;
    m_runner->cancel();
    m_cancelButton->setEnabled(false);
    setMessage(tr("Cancelling\u2026"), false);
}

QString ExperimentPage::cancelledMessage(double seconds) const
{
    const QString cancelled
        = tr("Cancelled after %1 s: its measurements are dropped.").arg(seconds, 0, 'f', 2);
    if (!m_result)
        return cancelled + QLatin1Char(' ') + tr("Nothing is shown until a run finishes.");
    // The parameters the shown run had where they differ from the fields now.
    QStringList differ;
    const ExperimentParams now = parameters();
    for (const auto &[name, value] : m_result->params) {
        const auto it = now.find(name);
        if (it != now.end() && it->second != value)
            differ << QStringLiteral("%1 = %2").arg(q(name), q(value));
    }
    return cancelled + QLatin1Char(' ')
        + (differ.isEmpty()
               ? tr("The table and figure are still the previous run's, finished at %1.")
                     .arg(m_resultTime)
               : tr("The table and figure are still the previous run's, finished at %1 with %2.")
                     .arg(m_resultTime, differ.join(QStringLiteral(", "))));
}

void ExperimentPage::onFinished(std::shared_ptr<const ExperimentResult> result)
{
    const double seconds = m_clock.elapsed() / 1000.0;
    setRunning(false);
    showResult(std::move(result));
    m_resultTime = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    setMessage(tr("Done in %1 s.").arg(seconds, 0, 'f', 2), false);
    emit resultReady();
}

void ExperimentPage::showResult(std::shared_ptr<const ExperimentResult> result)
{
    m_result = std::move(result);
    m_tableModel->setTable(m_result->table);
    QStringList notes;
    for (const std::string &note : m_result->table.notes)
        notes << QStringLiteral("\u2022 ") + q(note);
    m_notes->setText(notes.join(QLatin1Char('\n')));
    m_notes->setVisible(!notes.isEmpty());
    fitTableHeight();
    QWidget *figure = createExperimentFigure(*m_result, m_figureHolder);
    if (experimentHasFigure(*m_result))
        figure = new FigureFit(figure, defaultExperimentFigureSize(*m_result), m_figureHolder);
    delete m_figureLayout->replaceWidget(m_figure, figure); // the old item is ours to delete
    delete m_figure;
    m_figure = figure;
    m_exportTableButton->setEnabled(true);
    m_exportFigureButton->setEnabled(experimentHasFigure(*m_result));
}

bool ExperimentPage::eventFilter(QObject *watched, QEvent *event)
{
    if ((watched == m_figureHolder || watched == m_figureScroll->viewport())
        && (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest))
        QTimer::singleShot(0, this, &ExperimentPage::fitFigureHeight);
    return QWidget::eventFilter(watched, event);
}

void ExperimentPage::fitFigureHeight()
{
    // As tall as the figure, plus the sideways scroll bar when the figure is wider than the page.
    const int figure = m_figureHolder->minimumSizeHint().height();
    const bool sideways = m_figureHolder->minimumSizeHint().width() > m_figureScroll->width();
    const int bar = sideways ? m_figureScroll->horizontalScrollBar()->sizeHint().height() : 0;
    if (m_figureScroll->height() != figure + bar)
        m_figureScroll->setFixedHeight(figure + bar);
}

void ExperimentPage::fitTableHeight()
{
    // Every row on the page (the document scrolls), up to kTableRows; a longer table scrolls
    // inside its own frame.
    constexpr int kTableRows = 16;
    m_tableView->show();
    m_tableView->resizeColumnsToContents();
    const int rows = std::min(m_tableModel->rowCount(), kTableRows);
    int height
        = 2 * m_tableView->frameWidth() + m_tableView->horizontalHeader()->sizeHint().height();
    height += rows * m_tableView->verticalHeader()->defaultSectionSize();
    if (m_tableView->horizontalHeader()->length()
            + m_tableView->verticalHeader()->sizeHint().width()
        > m_tableView->width())
        height += m_tableView->horizontalScrollBar()->sizeHint().height();
    m_tableView->setFixedHeight(height);
}

void ExperimentPage::copySelection() const
{
    const QModelIndexList selected = m_tableView->selectionModel()->selectedIndexes();
    const QString text = m_tableModel->toTsv(selected);
    if (!text.isEmpty())
        QApplication::clipboard()->setText(text);
}

bool ExperimentPage::exportTable(const QString &path, QString *error) const
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (!m_result)
        return fail(tr("%1: no result to export yet; run %2 first").arg(path, experimentId()));
    // By the name's suffix: JSON as `attnlab experiment --format json` writes it, else CSV.
    const QString suffix = QFileInfo(path).suffix().toLower();
    std::string bytes;
    if (suffix == QLatin1String("json"))
        bytes = m_result->table.toJson(m_result->id, m_result->params, m_result->scalars);
    else if (suffix == QLatin1String("csv") || suffix.isEmpty())
        bytes = m_result->table.toCsv();
    else
        return fail(tr("%1: choose a .csv or .json name for the table").arg(path));
    QString why;
    if (!writeFileBytes(path, QByteArray(bytes.data(), qsizetype(bytes.size())), &why))
        return fail(why);
    return true;
}

bool ExperimentPage::exportFigure(const QString &path, QSize size, QString *error) const
{
    if (!m_result) {
        if (error)
            *error = tr("%1: no result to export yet; run %2 first").arg(path, experimentId());
        return false;
    }
    return exportExperimentFigure(*m_result, path, size, error);
}

void ExperimentPage::exportTableInteractive()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export %1 table").arg(experimentId()),
        exportStartPath(QStringLiteral("%1.csv").arg(experimentId().toLower())),
        tr("CSV files (*.csv);;JSON files (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (exportTable(path, &error)) {
        rememberExportFolder(path);
        setMessage(tr("Table written to %1.").arg(path), false);
    } else {
        setMessage(tr("Error: %1").arg(error), true);
    }
}

void ExperimentPage::exportFigureInteractive()
{
    const QString png = tr("PNG image (*.png)"), svg = tr("SVG image (*.svg)");
    QString filter = png;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export %1 figure").arg(experimentId()),
        exportStartPath(QStringLiteral("%1.png").arg(experimentId().toLower())),
        png + QStringLiteral(";;") + svg, &filter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += filter == svg ? QStringLiteral(".svg") : QStringLiteral(".png");
    QString error;
    if (exportFigure(path, QSize(), &error)) {
        rememberExportFolder(path);
        setMessage(tr("Figure written to %1.").arg(path), false);
    } else {
        setMessage(tr("Error: %1").arg(error), true);
    }
}

} // namespace attn
