#include "ui/views/attentionviews.h"

#include "ui/session/attentionsession.h"
#include "ui/views/compareview.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/stepsview.h"

#include <QAction>

namespace attn {

AttentionViews::AttentionViews(HeatmapWidget *heads, AttentionSession *session, QWidget *parent)
    : QTabWidget(parent)
    , m_heads(heads)
    , m_steps(new StepsView)
    , m_compare(new CompareView)
{
    setObjectName(QStringLiteral("attentionViews"));
    setDocumentMode(true);
    setTabPosition(QTabWidget::North);
    m_steps->setObjectName(QStringLiteral("stepsView"));
    m_compare->setObjectName(QStringLiteral("compareView"));
    addTab(m_heads, tr("Heads"));
    addTab(m_steps, tr("Steps"));
    addTab(m_compare, tr("Compare A/B"));
    setTabToolTip(HeadsTab, tr("Attention weights of every head and their mean"));
    setTabToolTip(StepsTab,
                  tr("One head's pipeline: raw scores Q Kᵀ → scaled + masked scores → "
                     "softmax weights, linked by hover"));
    setTabToolTip(CompareTab,
                  tr("Two configurations on the same seed side by side, their "
                     "difference B − A and the metric deltas"));

    const QStringList names = {tr("&Heads View"), tr("&Steps View"), tr("&Compare A/B View")};
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
    if (const auto r = session->result(); r && r->ok()) {
        m_steps->setResult(r);
        m_compare->setResultA(r);
    }
    // The weights panels of the steps and A/B views use the colormap chosen for the heatmaps
    // (Heatmap view dock → Colormap); the score panels stay diverging.
    auto followColormap = [this] {
        const ColormapId id = m_heads->options().colormap;
        m_steps->setWeightsColormap(id);
        m_compare->setWeightsColormap(id);
    };
    connect(m_heads, &HeatmapWidget::optionsChanged, this, followColormap);
    followColormap();
    // A head picked in the grid (not the mean tile) becomes the head of the steps view; the
    // A/B view follows, mean included.
    connect(m_heads, &HeatmapWidget::tileActivated, this, [this](int head) {
        const auto r = m_steps->result();
        if (r && head >= 0 && head < r->headCount())
            m_steps->setHead(head);
        m_compare->setHead(head);
    });
}

} // namespace attn
