#include "ui/views/attentionviews.h"

#include "ui/document/sessionfile.h"
#include "ui/session/attentionsession.h"
#include "ui/views/atlasview.h"
#include "ui/views/compareview.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/modelview.h"
#include "ui/views/positionsview.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace attn {

AttentionViews::AttentionViews(HeatmapWidget *heads, AttentionSession *session, QWidget *parent)
    : QTabWidget(parent)
    , m_heads(heads)
    , m_steps(new StepsView)
    , m_compare(new CompareView)
    , m_tokens(new TokensView)
    , m_model(new ModelView)
    , m_atlas(new AtlasView)
    , m_positions(new PositionsView)
    , m_long(new LongMapView)
{
    setObjectName(QStringLiteral("attentionViews"));
    setDocumentMode(true);
    setTabPosition(QTabWidget::North);
    m_steps->setObjectName(QStringLiteral("stepsView"));
    m_compare->setObjectName(QStringLiteral("compareView"));
    m_tokens->setObjectName(QStringLiteral("tokensView"));
    m_positions->setObjectName(QStringLiteral("positionsView"));
    m_long->setObjectName(QStringLiteral("longMapView"));
    addTab(buildHeadsPage(), tr("Heads"));
    addTab(m_steps, tr("Steps"));
    addTab(m_compare, tr("A/B")); // "Compare A/B": short, so every tab fits at 1 280 px
    addTab(m_tokens, tr("Tokens"));
    addTab(m_positions, tr("PE")); // positional encoding: a short label keeps 8 tabs in view
    addTab(m_model, tr("Model"));
    addTab(m_long, tr("Long"));
    addTab(m_atlas, tr("Atlas"));
    setTabToolTip(HeadsTab, tr("Attention weights of every head and their mean"));
    setTabToolTip(StepsTab,
                  tr("One head's pipeline: raw scores Q Kᵀ → scaled + masked scores → "
                     "softmax weights, linked by hover"));
    setTabToolTip(CompareTab,
                  tr("Two configurations on the same seed side by side, their "
                     "difference B − A and the metric deltas"));
    setTabToolTip(TokensTab,
                  tr("The weights over the tokens: a line per head from each query to each key "
                     "(head view), or the keys coloured by one query's attention (coloured "
                     "text)"));
    setTabToolTip(ModelTab,
                  tr("Every layer and head of a loaded stack of attention weights on one colour "
                     "scale; click a map to open it in the Heads view"));
    setTabToolTip(PositionsTab,
                  tr("The sinusoidal positional encoding PE of this n and d_model and its "
                     "similarity PE·PEᵀ: nearby positions are alike, and only the offset "
                     "matters"));
    setTabToolTip(LongTab,
                  tr("This session's attention at a long sequence length (up to %1 tokens), "
                     "computed exactly in tiles at the zoom shown, without the n × n matrix")
                      .arg(SessionParameters::maxLongSequence));

    setTabToolTip(AtlasTab,
                  tr("What every head of a model run or a loaded stack does: previous-token, "
                     "induction, sink, … scores by layer and head, ranked; click a head to open "
                     "it"));

    const QStringList names
        = {tr("&Heads View"),     tr("&Steps View"), tr("&Compare A/B View"),   tr("&Tokens View"),
           tr("&Positions View"), tr("&Model View"), tr("&Long Sequence View"), tr("&Atlas View")};
    for (int tab = 0; tab < names.size(); ++tab) {
        auto *action = new QAction(names[tab], this);
        action->setObjectName(QStringLiteral("tabAction%1").arg(tab));
        action->setShortcut(QKeySequence(tr("Ctrl+Alt+%1").arg(tab + 1)));
        action->setShortcutContext(Qt::WindowShortcut);
        action->setStatusTip(tabToolTip(tab));
        connect(action, &QAction::triggered, this, [this, tab] { setCurrentIndex(tab); });
        addAction(action);
        m_tabActions.append(action);
    }

    connect(session, &AttentionSession::resultChanged, this,
            [this](std::shared_ptr<const SessionResult> result) {
                if (!result || !result->ok())
                    return;
                m_steps->setResult(result);
                m_compare->setResultA(result);
            });
    connect(session, &AttentionSession::parametersChanged, m_positions,
            &PositionsView::setParameters);
    m_positions->setParameters(session->parameters());
    connect(session, &AttentionSession::parametersChanged, m_long, &LongMapView::setParameters);
    // A window of the long map opened in Steps: its exact numbers, until the next result.
    connect(m_long, &LongMapView::windowMaterialized, this,
            [this](std::shared_ptr<const SessionResult> r, Index head) {
                m_steps->setResult(r);
                if (head >= 0 && head < r->headCount())
                    m_steps->setHead(int(head));
                setCurrentIndex(StepsTab);
            });
    // A window of the long map as A of the A/B view, B computed by the map for that window.
    connect(m_long, &LongMapView::windowForCompare, this,
            [this](std::shared_ptr<const SessionResult> r, Index head, CompareWindowSource source) {
                m_compare->setWindowResultA(r, std::move(source));
                m_compare->setHead(head >= 0 && head < r->headCount() ? int(head) : r->headCount());
                setCurrentIndex(CompareTab);
            });
    m_long->setParameters(session->parameters());
    if (const auto r = session->result(); r && r->ok()) {
        m_steps->setResult(r);
        m_compare->setResultA(r);
    }
    // The Tokens tab draws what the Heads tab shows (padding trimmed, keys hidden as chosen).
    connect(m_heads, &HeatmapWidget::shownResultChanged, m_tokens, &TokensView::setResult);
    m_tokens->setResult(m_heads->result());
    // The weights panels of the steps and A/B views use the colormap chosen for the heatmaps
    // (Heatmap view dock → Colormap); the score panels stay diverging.
    auto followColormap = [this] {
        const ColormapId id = m_heads->options().colormap;
        m_steps->setWeightsColormap(id);
        m_compare->setWeightsColormap(id);
        m_model->setColormap(id);
        m_tokens->setColormap(id);
    };
    connect(m_heads, &HeatmapWidget::optionsChanged, this, followColormap);
    followColormap();
    // A head picked in the grid (not the mean tile) becomes the head of the steps view; the
    // A/B view follows, mean included.
    // The Model tab shows the loaded stack of weights, whichever layer the Heads view shows.
    connect(session, &AttentionSession::parametersChanged, this,
            [this](const SessionParameters &p) { m_model->setSource(p.tensors); });
    m_model->setSource(session->parameters().tensors);
    connect(m_model, &ModelView::thumbnailActivated, this, &AttentionViews::thumbnailRequested);
    // The Atlas tab scores the same stack; a head clicked there opens as a thumbnail does.
    connect(session, &AttentionSession::parametersChanged, m_atlas, &AtlasView::setParameters);
    m_atlas->setParameters(session->parameters());
    connect(m_atlas, &AtlasView::headActivated, this, &AttentionViews::thumbnailRequested);
    connect(m_heads, &HeatmapWidget::tileActivated, this, [this](int head) {
        const auto r = m_steps->result();
        if (r && head >= 0 && head < r->headCount())
            m_steps->setHead(head);
        m_compare->setHead(head);
    });
}

QWidget *AttentionViews::buildHeadsPage()
{
    auto *page = new QWidget;
    page->setObjectName(QStringLiteral("headsView"));
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    auto *strip = new QHBoxLayout;
    strip->setContentsMargins(6, 4, 6, 2);
    auto *perRowLabel = new QLabel(tr("Heads per &row:"));
    m_headsPerRow = new QComboBox;
    m_headsPerRow->setObjectName(QStringLiteral("headsPerRowCombo"));
    m_headsPerRow->setToolTip(tr("How many tiles each row of the grid holds (Auto: the number "
                                 "that gives the biggest maps)"));
    m_headsPerRow->addItem(tr("Auto"), 0);
    for (int k : {1, 2, 3, 4, 6, 8, 16})
        m_headsPerRow->addItem(QString::number(k), k);
    perRowLabel->setBuddy(m_headsPerRow);
    m_fitAll = new QCheckBox(tr("&Fit all"));
    m_fitAll->setObjectName(QStringLiteral("fitAllCheck"));
    m_fitAll->setToolTip(tr("Every head in sight at once, the maps as large as the view allows "
                            "(off: maps keep a readable minimum size and the grid scrolls)"));
    strip->addWidget(perRowLabel);
    strip->addWidget(m_headsPerRow);
    strip->addSpacing(12);
    strip->addWidget(m_fitAll);
    strip->addStretch(1);
    layout->addLayout(strip);
    layout->addWidget(m_heads, 1);

    connect(m_headsPerRow, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0)
            return;
        HeatmapOptions o = m_heads->options();
        o.headsPerRow = m_headsPerRow->itemData(index).toInt();
        m_heads->setOptions(o);
    });
    connect(m_fitAll, &QCheckBox::toggled, this, [this](bool on) {
        HeatmapOptions o = m_heads->options();
        o.fitAll = on;
        m_heads->setOptions(o);
    });
    connect(m_heads, &HeatmapWidget::optionsChanged, this, &AttentionViews::syncHeadsStrip);
    syncHeadsStrip();
    return page;
}

void AttentionViews::syncHeadsStrip()
{
    const HeatmapOptions o = m_heads->options();
    const QSignalBlocker b1(m_headsPerRow), b2(m_fitAll);
    int index = m_headsPerRow->findData(o.headsPerRow);
    if (index < 0) { // a count from a session file that the list does not offer
        m_headsPerRow->addItem(QString::number(o.headsPerRow), o.headsPerRow);
        index = m_headsPerRow->count() - 1;
    }
    m_headsPerRow->setCurrentIndex(index);
    m_fitAll->setChecked(o.fitAll);
}

QJsonObject AttentionViews::state() const
{
    QJsonObject state;
    state.insert(QStringLiteral("heatmap"), heatmapViewToJson(m_heads->options()));
    state.insert(QStringLiteral("transform"), viewTransformToJson(m_heads->viewTransform()));
    state.insert(QStringLiteral("row_strip"), m_heads->isRowStripVisible());
    const QJsonObject compare = m_compare->state();
    if (!compare.isEmpty()) // B's settings once there are any
        state.insert(QStringLiteral("compare"), compare);
    state.insert(QStringLiteral("tokens"), m_tokens->state());
    state.insert(QStringLiteral("long_map"), m_long->state());
    state.insert(QStringLiteral("steps"), m_steps->state());
    return state;
}

void AttentionViews::setState(const QJsonObject &state)
{
    const QJsonValue heatmap = state.value(QLatin1String("heatmap"));
    if (heatmap.isObject()) {
        HeatmapOptions options = m_heads->options();
        const HeatmapOptions defaults; // colours and font follow the palette again
        options.background = defaults.background;
        options.foreground = defaults.foreground;
        options.fontPixelSize = defaults.fontPixelSize;
        m_heads->setOptions(heatmapViewFromJson(heatmap.toObject(), options));
    }
    const QJsonValue transform = state.value(QLatin1String("transform"));
    if (transform.isObject())
        m_heads->setViewTransform(
            viewTransformFromJson(transform.toObject(), m_heads->viewTransform()));
    const QJsonValue rowStrip = state.value(QLatin1String("row_strip"));
    if (rowStrip.isBool())
        m_heads->setRowStripVisible(rowStrip.toBool());
    m_compare->setState(state.value(QLatin1String("compare")).toObject());
    const QJsonValue tokens = state.value(QLatin1String("tokens"));
    if (tokens.isObject())
        m_tokens->setState(tokens.toObject());
    const QJsonValue longMap = state.value(QLatin1String("long_map"));
    if (longMap.isObject())
        m_long->setState(longMap.toObject());
    const QJsonValue steps = state.value(QLatin1String("steps"));
    if (steps.isObject())
        m_steps->setState(steps.toObject());
}

QJsonArray AttentionViews::tabPath(const QTabWidget *tabs)
{
    QJsonArray path;
    for (const QTabWidget *t = tabs; t;) {
        const QWidget *page = t->currentWidget();
        if (!page)
            break;
        path.append(page->objectName().isEmpty() ? QStringLiteral("#%1").arg(t->currentIndex())
                                                 : page->objectName());
        t = qobject_cast<const QTabWidget *>(page);
    }
    return path;
}

void AttentionViews::setTabPath(QTabWidget *tabs, const QJsonArray &path)
{
    QTabWidget *t = tabs;
    for (const QJsonValue &tab : path) {
        if (!t)
            break;
        const QString name = tab.toString();
        int index = -1;
        for (int i = 0; i < t->count() && index < 0; ++i) {
            // A page may also be named by the widget it holds (the Heads page by its
            // "heatmapWidget", as files written before the page had its strip name it).
            if (t->widget(i)->objectName() == name || QStringLiteral("#%1").arg(i) == name
                || t->widget(i)->findChild<QWidget *>(name, Qt::FindDirectChildrenOnly))
                index = i;
        }
        if (index < 0)
            break;
        t->setCurrentIndex(index);
        t = qobject_cast<QTabWidget *>(t->widget(index));
    }
}

} // namespace attn
