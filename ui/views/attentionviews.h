#pragma once
// AttentionViews: the attention mode's centre as three tabs over one AttentionSession —
// "Heads" (the heatmap grid, HeatmapWidget), "Steps" (StepsView: scores → scaled and masked
// scores → weights of one head) and "Compare A/B" (CompareView). Results of the session go to
// all three; clicking a head's tile in the grid selects that head in the other two.

#include <QTabWidget>

namespace attn {

class AttentionSession;
class CompareView;
class HeatmapWidget;
class StepsView;

class AttentionViews : public QTabWidget
{
    Q_OBJECT
public:
    enum Tab { HeadsTab = 0, StepsTab = 1, CompareTab = 2 };

    /// `heads` becomes the first tab (reparented); `session` is not owned.
    AttentionViews(HeatmapWidget *heads, AttentionSession *session, QWidget *parent = nullptr);

    HeatmapWidget *headsView() const { return m_heads; }
    StepsView *stepsView() const { return m_steps; }
    CompareView *compareView() const { return m_compare; }

private:
    HeatmapWidget *m_heads;
    StepsView *m_steps;
    CompareView *m_compare;
};

} // namespace attn
