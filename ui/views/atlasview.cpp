#include "ui/views/atlasview.h"

#include "ui/render/figurefile.h"
#include "ui/session/jobrunner.h"
#include "ui/session/modelrun.h"
#include "ui/session/tensorsource.h"

#include "core/text/tokenizer.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>
#include <limits>
#include <span>
#include <string>

namespace attn {
namespace {

/// Every head of `source` scored a head at a time (one n × n matrix held at once), assembled
/// into layers × heads matrices; the context gets the fraction done.
HeadScores scoreEveryHead(const TensorSource &source, const std::vector<std::int64_t> &tokens,
                          const JobContext &context)
{
    const Index layers = source.layerCount(), heads = source.headCount(), n = source.queryCount();
    HeadScores all;
    all.layers = layers;
    all.heads = heads;
    all.n = n;
    all.haveTokens = !tokens.empty();
    const auto targets = headScoreColumns(all);
    for (const auto &[name, m] : targets)
        m->setConstant(layers, heads, std::numeric_limits<double>::quiet_NaN());
    all.sinkFlag = MatrixB::Zero(layers, heads);
    all.zeroRows.setZero(layers, heads);
    for (Index l = 0; l < layers; ++l) {
        for (Index h = 0; h < heads; ++h) {
            context.cancel.throwIfCancelled();
            const MatrixD w = source.headWeights(int(l), int(h)); // n × n, row-major
            const HeadScores one = headScores<double>(std::span<const double>(w.data(), w.size()),
                                                      {1, 1, n}, tokens);
            const auto from = headScoreColumns(one);
            for (std::size_t k = 0; k < targets.size(); ++k)
                (*targets[k].second)(l, h) = (*from[k].second)(0, 0);
            all.sinkFlag(l, h) = one.sinkFlag(0, 0);
            all.zeroRows(l, h) = one.zeroRows(0, 0);
            context.report(double(l * heads + h + 1) / double(layers * heads));
        }
    }
    return all;
}

const MatrixD *column(const HeadScores &s, const ModelHeadReport *report, const QString &name)
{
    for (const auto &[key, matrix] : headReportColumns(s, report))
        if (name == QLatin1String(key))
            return matrix;
    return nullptr;
}

/// The scores "Score the model" adds, in the order of headReportColumns.
const QStringList &modelScoreNames()
{
    static const QStringList names {
        QStringLiteral("prefix_matching"), QStringLiteral("value_norm_sink"),
        QStringLiteral("value_norm_mass"), QStringLiteral("ablation_kl")};
    return names;
}

} // namespace

/// The figure at its natural size; hover names every score of the head, a click opens it.
class AtlasView::Canvas : public QWidget
{
public:
    explicit Canvas(AtlasView *view)
        : QWidget(view)
        , m_view(view)
    {
        setMouseTracking(true);
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.fillRect(rect(), Qt::white);
        if (m_view->m_scores)
            m_view->m_figure.paint(&p, QRectF(rect()));
    }
    void mouseMoveEvent(QMouseEvent *event) override
    {
        const auto hit = cellAt(event->position());
        setCursor(hit ? Qt::PointingHandCursor : Qt::ArrowCursor);
        if (!hit) {
            QToolTip::hideText();
            return;
        }
        const auto [l, h] = *hit;
        QStringList lines {QStringLiteral("layer %1, head %2").arg(l).arg(h)};
        for (const auto &[name, matrix] : headReportColumns(*m_view->m_scores, m_view->report())) {
            const double v = (*matrix)(l, h);
            lines << QStringLiteral("%1: %2").arg(QLatin1String(name),
                                                  std::isnan(v) ? QStringLiteral("no value")
                                                                : QString::number(v, 'f', 4));
        }
        lines << QStringLiteral("click: open this head");
        QToolTip::showText(event->globalPosition().toPoint(), lines.join(QLatin1Char('\n')), this);
    }
    void mousePressEvent(QMouseEvent *event) override
    {
        if (event->button() != Qt::LeftButton)
            return;
        if (const auto hit = cellAt(event->position()))
            emit m_view->headActivated(int(hit->first), int(hit->second));
    }

private:
    std::optional<std::pair<Index, Index>> cellAt(QPointF pos) const
    {
        if (!m_view->m_scores)
            return std::nullopt;
        return m_view->m_figure.cellAt(QRectF(rect()), pos);
    }
    AtlasView *m_view;
};

AtlasView::AtlasView(QWidget *parent)
    : QWidget(parent)
    , m_scoreCombo(new QComboBox(this))
    , m_thresholdSpin(new QDoubleSpinBox(this))
    , m_exportButton(new QPushButton(tr("Export\u2026"), this))
    , m_modelButton(new QPushButton(tr("Score the Model"), this))
    , m_ablationCombo(new QComboBox(this))
    , m_message(new QLabel(this))
    , m_scroll(new QScrollArea(this))
    , m_canvas(new Canvas(this))
    , m_table(new QTableWidget(0, 3, this))
    , m_jobs(new JobRunner(this, 1))
    , m_modelJobs(new JobRunner(this, 1))
{
    setObjectName(QStringLiteral("atlasView"));
    m_scoreCombo->setObjectName(QStringLiteral("atlasScore"));
    m_scoreCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_scoreCombo->addItems(atlasScoreNames());
    m_scoreCombo->setToolTip(
        tr("The head score the grid colours and the table ranks (TransformerLens's pattern "
           "scores Σ A⊙P / Σ A; sink: mean weight on the first key; entropy in nats; effective "
           "terms 1/Σw²; distance: mean |i − j|)"));
    m_thresholdSpin->setObjectName(QStringLiteral("atlasThreshold"));
    m_thresholdSpin->setRange(0, 1e6);
    m_thresholdSpin->setDecimals(3);
    m_thresholdSpin->setSingleStep(0.05);
    m_thresholdSpin->setSpecialValueText(tr("none"));
    m_thresholdSpin->setPrefix(tr("outline \u2265 "));
    m_thresholdSpin->setToolTip(tr("Outline the heads scoring at least this much (none: 0)"));
    m_exportButton->setToolTip(tr("Save the atlas as PNG, SVG or PDF, or its table as CSV or "
                                  "JSON"));
    m_modelButton->setObjectName(QStringLiteral("atlasScoreModel"));
    m_modelButton->setToolTip(
        tr("For a model run: add prefix matching (Olsson et al. 2022: random tokens repeated "
           "twice, the weight on the token after the first copy), value-weighted norms "
           "(Kobayashi et al. 2020) and head ablation (the KL divergence of the next-token "
           "distribution when the head is ablated; one forward per head)"));
    m_ablationCombo->setObjectName(QStringLiteral("atlasAblation"));
    m_ablationCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_ablationCombo->addItem(tr("zero ablation"), QStringLiteral("zero"));
    m_ablationCombo->addItem(tr("mean ablation"), QStringLiteral("mean"));
    m_ablationCombo->setToolTip(tr("What an ablated head's output becomes: zero, or its mean "
                                   "over the positions (the head keeps its average "
                                   "contribution)"));
    m_message->setObjectName(QStringLiteral("atlasMessage"));
    m_message->setWordWrap(true);
    m_scroll->setWidget(m_canvas);
    m_scroll->setWidgetResizable(false);
    m_scroll->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_table->setObjectName(QStringLiteral("atlasTable"));
    m_table->setHorizontalHeaderLabels({tr("layer"), tr("head"), tr("score")});
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setToolTip(tr("The heads ranked by the score (click a column to sort by it; click a "
                           "row to open the head)"));

    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Score:"), this));
    controls->addWidget(m_scoreCombo);
    controls->addWidget(m_thresholdSpin);
    controls->addStretch(1);
    controls->addWidget(m_exportButton);
    // The model's controls on a line of their own (shown for a model run only): beside the
    // score and the outline they would squeeze every label at 1280 × 800.
    auto *modelControls = new QHBoxLayout;
    modelControls->addWidget(m_modelButton);
    modelControls->addWidget(m_ablationCombo);
    modelControls->addStretch(1);
    // The grid above the ranking: the centre of the window is narrow at 1280 × 800, and a
    // 12-layer grid is as tall as it is wide.
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_scroll);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({600, 250});
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(modelControls);
    layout->addWidget(m_message);
    layout->addWidget(split, 1);

    connect(m_scoreCombo, &QComboBox::currentTextChanged, this, [this](const QString &name) {
        const QSignalBlocker quiet(m_thresholdSpin);
        m_thresholdSpin->setValue(defaultThreshold(name));
        showScores();
    });
    connect(m_thresholdSpin, &QDoubleSpinBox::valueChanged, this, [this] { showScores(); });
    connect(m_exportButton, &QPushButton::clicked, this, &AtlasView::exportInteractive);
    connect(m_modelButton, &QPushButton::clicked, this, [this] {
        scoreModel(
            models::ablationFromName(m_ablationCombo->currentData().toString().toStdString()));
    });
    // The model's scores hold one kind of ablation: another kind drops them (the grid never shows
    // zero-ablation numbers under "mean ablation") until Score the Model runs again.
    connect(m_ablationCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_modelJobs->cancel();
        if (!m_report)
            return;
        const auto chosen
            = models::ablationFromName(m_ablationCombo->currentData().toString().toStdString());
        if (chosen == m_report->ablationKind)
            return;
        m_report.reset();
        {
            const QSignalBlocker quiet(m_scoreCombo);
            for (const QString &name : modelScoreNames())
                m_scoreCombo->removeItem(m_scoreCombo->findText(name));
        }
        m_status = tr("The model's scores were for %1 ablation: press Score the Model for %2 "
                      "ablation")
                       .arg(QLatin1String(models::ablationName(chosen == models::Ablation::Mean
                                                                   ? models::Ablation::Zero
                                                                   : models::Ablation::Mean)),
                            QLatin1String(models::ablationName(chosen)));
        updateModelControls();
        showScores();
    });
    connect(m_modelJobs, &JobRunner::failed, this, [this](const QString &message) {
        m_status = tr("The model was not scored: %1").arg(message);
        m_message->setText(m_status);
        updateModelControls();
    });
    connect(m_table, &QTableWidget::cellClicked, this, [this](int row, int) {
        const QTableWidgetItem *layer = m_table->item(row, 0), *head = m_table->item(row, 1);
        if (layer && head)
            emit headActivated(layer->data(Qt::DisplayRole).toInt(),
                               head->data(Qt::DisplayRole).toInt());
    });
    connect(m_jobs, &JobRunner::progressChanged, this, [this](double fraction) {
        m_message->setText(tr("Scoring every head: %1 %").arg(int(fraction * 100)));
    });
    connect(m_jobs, &JobRunner::failed, this, [this](const QString &message) {
        m_status = tr("The heads were not scored: %1").arg(message);
        m_message->setText(m_status);
    });
    m_thresholdSpin->setValue(defaultThreshold(score()));
    setParameters(SessionParameters());
}

AtlasView::~AtlasView() = default;

double AtlasView::defaultThreshold(const QString &name) const
{
    if (name == QLatin1String("sink"))
        return 0.3; // Gu et al. 2025's ε
    if (name == QLatin1String("previous_token") || name == QLatin1String("duplicate_token")
        || name == QLatin1String("induction"))
        return 0.4; // 40 % of the head's weight on its pattern
    return 0;
}

void AtlasView::setParameters(const SessionParameters &p)
{
    const std::shared_ptr<const TensorSource> &s = p.tensors;
    const bool stack = s && s->isWeights() && (s->isAttentionStack() || s->isModelRun());
    if (stack && m_source && &m_source->data() == &s->data())
        return; // another layer of the same stack: the atlas covers every layer already
    m_jobs->cancel();
    m_modelJobs->cancel();
    m_scores.reset();
    m_report.reset();
    {
        const QSignalBlocker quiet(m_scoreCombo);
        const QString shown = m_scoreCombo->currentText();
        m_scoreCombo->clear();
        m_scoreCombo->addItems(atlasScoreNames());
        setScore(atlasScoreNames().contains(shown) ? shown : atlasScoreNames().first());
    }
    m_source = stack ? s : nullptr;
    if (!stack) {
        m_status = tr("The atlas scores every layer \u00d7 head of an attention stack: open a "
                      "model (File \u2192 Open Model\u2026) and run it, or open an .npz with an "
                      "'attentions' stack (File \u2192 Open Tensors\u2026).");
    } else if (s->longOnly()) {
        m_source = nullptr;
        m_status = tr("%1 tokens: the atlas needs every head's whole n \u00d7 n weights, at most "
                      "%2 tokens; the Model tab and the Long tab show this run.")
                       .arg(s->queryCount())
                       .arg(SessionParameters::maxSequence);
    } else {
        m_status.clear();
        compute();
    }
    updateModelControls();
    showScores();
}

void AtlasView::setModelRun(std::shared_ptr<const ModelRun> run)
{
    m_modelRun = std::move(run);
    updateModelControls();
}

bool AtlasView::showsModelRun() const
{
    return m_modelRun && m_modelRun->source && m_source
        && &m_source->data() == &m_modelRun->source->data();
}

void AtlasView::updateModelControls()
{
    const bool can = showsModelRun() && m_modelRun->model && m_modelRun->model->model;
    m_modelButton->setVisible(can);
    m_ablationCombo->setVisible(can);
    m_modelButton->setEnabled(can && !m_modelJobs->isBusy());
}

void AtlasView::scoreModel(models::Ablation how)
{
    if (!showsModelRun())
        return;
    const std::shared_ptr<const ModelRun> run = m_modelRun;
    std::optional<std::int64_t> bos;
    if (run->model->tokenizer && !run->input.fromIds) {
        const auto leading = run->model->tokenizer->encodeIds("");
        if (!leading.empty())
            bos = std::int64_t(leading.front());
    }
    const models::ModelConfig &c = run->model->model->config();
    // 25 tokens repeated twice (TransformerLens's default), fewer when the learned positions
    // (GPT-2, BERT) end before 50.
    Index tokens = 25;
    if (c.learnedPositions)
        tokens = std::min<Index>(tokens, (c.maxPositions - (bos ? 1 : 0)) / 2);
    if (tokens < 2) {
        m_status = tr("The model was not scored: its %1 learned positions leave no room for "
                      "prefix matching's random tokens repeated twice")
                       .arg(c.maxPositions);
        m_message->setText(m_status);
        return;
    }
    m_status = tr("Scoring the model: prefix matching, value-weighted norms and %1 ablation "
                  "(%2 forward passes)…")
                   .arg(QLatin1String(models::ablationName(how)))
                   .arg(2 + 4 + c.layers * c.heads);
    m_message->setText(m_status);
    m_modelJobs->run(
        [run, how, bos, tokens](const JobContext &context) {
            models::ForwardOptions forward = modelHeadForwardOptions(true);
            forward.cancel = context.cancel;
            const models::ForwardResult r
                = models::forward(*run->model->model, run->input.ids, forward);
            ModelHeadOptions options;
            options.bos = bos;
            options.prefixTokens = tokens;
            options.contributions = true;
            options.ablation = how;
            return reportModelHeads(*run->model->model, r, options, context.cancel);
        },
        [this, run, how, bos, tokens](ModelHeadReport report) {
            m_report = std::move(report);
            {
                const QSignalBlocker quiet(m_scoreCombo);
                for (const QString &name : modelScoreNames())
                    if (m_scoreCombo->findText(name) < 0)
                        m_scoreCombo->addItem(name);
            }
            m_status = tr("The model's scores are in the Score list: prefix_matching (%4 random "
                          "tokens repeated twice, 4 draws%1), value_norm_sink, value_norm_mass, "
                          "ablation_kl (%2 ablation; the next token before: %3)")
                           .arg(bos ? tr(" after id %1").arg(*bos) : QString())
                           .arg(QLatin1String(models::ablationName(how)))
                           .arg(run->nextLabels.isEmpty()
                                    ? QStringLiteral("#%1").arg(m_report->ablation.top1)
                                    : QStringLiteral("\u201c%1\u201d").arg(run->nextLabels.front()))
                           .arg(tokens);
            setScore(QStringLiteral("ablation_kl"));
            updateModelControls();
            showScores();
        });
    updateModelControls();
}

void AtlasView::waitForModelScores()
{
    m_modelJobs->waitUntilIdle();
}

void AtlasView::compute()
{
    const std::shared_ptr<const TensorSource> source = m_source;
    std::vector<std::int64_t> tokens = source->tokenIds();
    if (tokens.empty()) {
        const QStringList labels = source->fileTokens();
        if (labels.size() == source->queryCount()) {
            std::vector<std::string> strings;
            for (const QString &t : labels)
                strings.push_back(t.toStdString());
            tokens = tokenIds(strings);
        }
    }
    m_message->setText(tr("Scoring every head\u2026"));
    m_jobs->run(
        [source, tokens](const JobContext &context) {
            return scoreEveryHead(*source, tokens, context);
        },
        [this](HeadScores scores) {
            m_scores = std::move(scores);
            m_status = m_scores->haveTokens
                ? tr("%1 layers \u00d7 %2 heads, n = %3; hover a cell for every score, click "
                     "one to open the head")
                      .arg(m_scores->layers)
                      .arg(m_scores->heads)
                      .arg(m_scores->n)
                : tr("%1 layers \u00d7 %2 heads, n = %3; no tokens, so no duplicate-token or "
                     "induction scores")
                      .arg(m_scores->layers)
                      .arg(m_scores->heads)
                      .arg(m_scores->n);
            showScores();
        });
}

void AtlasView::setScore(const QString &name)
{
    const int index = m_scoreCombo->findText(name);
    if (index >= 0)
        m_scoreCombo->setCurrentIndex(index);
}

QString AtlasView::score() const
{
    return m_scoreCombo->currentText();
}

void AtlasView::setThreshold(double threshold)
{
    m_thresholdSpin->setValue(std::max(0.0, threshold));
}

QString AtlasView::message() const
{
    return m_message->text();
}

bool AtlasView::isComputing() const
{
    return m_jobs->isBusy();
}

void AtlasView::waitForScores()
{
    m_jobs->waitUntilIdle();
}

QWidget *AtlasView::canvas() const
{
    return m_canvas;
}

QRect AtlasView::cellRect(int layer, int head) const
{
    if (!m_scores)
        return {};
    const QRectF grid = m_figure.grid(QRectF(m_canvas->rect()));
    const qreal c = grid.width() / qreal(m_scores->heads);
    return QRectF(grid.left() + head * c, grid.top() + layer * c, c, c).toRect();
}

void AtlasView::showScores()
{
    m_exportButton->setEnabled(m_scores.has_value());
    if (!m_scores) {
        m_figure = HeadAtlasFigure();
        m_table->setRowCount(0);
        m_canvas->resize(0, 0);
        if (!isComputing())
            m_message->setText(m_status);
        m_canvas->update();
        return;
    }
    m_message->setText(m_status);
    m_figure.name = score();
    const MatrixD *values = column(*m_scores, report(), score());
    if (!values) // a model score of a report that is gone: back to the first score
        values = column(*m_scores, report(), atlasScoreNames().first());
    m_figure.values = *values;
    m_figure.caption = {m_source ? m_source->title() : QString()};
    if (m_report && score() == QLatin1String("ablation_kl"))
        m_figure.caption << (m_report->ablationKind == models::Ablation::Mean
                                 ? tr("next-token KL(p \u2016 q) in nats; q: the head's output "
                                      "\u2192 its mean")
                                 : tr("next-token KL(p \u2016 q) in nats; q: the head's output "
                                      "\u2192 0"));
    else if (m_report && score() == QLatin1String("prefix_matching"))
        m_figure.caption << tr("weight on the token after its first copy (tokens repeated)");
    const double t = m_thresholdSpin->value();
    m_figure.threshold = t > 0 ? std::optional<double>(t) : std::nullopt;
    m_canvas->resize(m_figure.naturalSize());
    m_canvas->update();
    fillTable();
}

void AtlasView::fillTable()
{
    m_table->setSortingEnabled(false);
    const Index layers = m_scores->layers, heads = m_scores->heads;
    m_table->setRowCount(int(layers * heads));
    m_table->horizontalHeaderItem(2)->setText(score());
    int row = 0;
    for (Index l = 0; l < layers; ++l) {
        for (Index h = 0; h < heads; ++h, ++row) {
            const double v = m_figure.values(l, h);
            auto *layer = new QTableWidgetItem;
            layer->setData(Qt::DisplayRole, int(l));
            auto *head = new QTableWidgetItem;
            head->setData(Qt::DisplayRole, int(h));
            // A number sorts as a number; no value sorts below every score.
            auto *value = new QTableWidgetItem;
            value->setData(Qt::DisplayRole,
                           std::isnan(v) ? -std::numeric_limits<double>::infinity()
                                         : std::round(v * 1e4) / 1e4);
            if (std::isnan(v))
                value->setText(tr("no value"));
            m_table->setItem(row, 0, layer);
            m_table->setItem(row, 1, head);
            m_table->setItem(row, 2, value);
        }
    }
    m_table->setSortingEnabled(true);
    m_table->sortItems(2, Qt::DescendingOrder);
}

bool AtlasView::exportTo(const QString &path, QString *error) const
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (!m_scores)
        return fail(tr("no atlas to export: %1").arg(m_status));
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png") || suffix == QLatin1String("svg")
        || suffix == QLatin1String("pdf"))
        return m_figure.write(path, error);
    QByteArray bytes;
    if (suffix == QLatin1String("csv")) {
        bytes = QByteArray::fromStdString(headReportTable(*m_scores, report(), false).toCsv());
    } else if (suffix == QLatin1String("json")) {
        bytes = QByteArray::fromStdString(headReportJson(*m_scores, report()));
    } else {
        return fail(tr("%1: choose .png, .svg or .pdf for the figure, .csv or .json for the "
                       "table")
                        .arg(path));
    }
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.flush())
        return fail(tr("%1: cannot be written (%2)").arg(path, f.errorString()));
    return true;
}

void AtlasView::exportInteractive()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Atlas"),
        QDir(m_lastFolder).filePath(QStringLiteral("atlas-%1.png").arg(score())),
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV table "
           "(*.csv);;JSON table (*.json)"));
    if (path.isEmpty())
        return;
    m_lastFolder = QFileInfo(path).absolutePath();
    QString error;
    m_message->setText(exportTo(path, &error) ? tr("Saved %1").arg(path) : error);
}

} // namespace attn
