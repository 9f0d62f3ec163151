#pragma once
// AttentionViews: the attention mode's centre as four tabs over one AttentionSession —
// "Heads" (the heatmap grid, HeatmapWidget), "Steps" (StepsView: scores → scaled and masked
// scores → weights of one head), "Compare A/B" (CompareView) and "Tokens" (TokensView: the
// weights over the tokens, as BertViz's head view or CircuitsVis's coloured text). Results of
// the session go to all four (Tokens gets what the Heads tab shows: trimmed padding and hidden
// keys applied); clicking a head's tile in the grid selects that head in Steps and Compare.

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QTabWidget>

class QAction;

namespace attn {

class AttentionSession;
class CompareView;
class HeatmapWidget;
class StepsView;
class TokensView;

class AttentionViews : public QTabWidget
{
    Q_OBJECT
public:
    enum Tab { HeadsTab = 0, StepsTab = 1, CompareTab = 2, TokensTab = 3 };

    /// `heads` becomes the first tab (reparented); `session` is not owned.
    AttentionViews(HeatmapWidget *heads, AttentionSession *session, QWidget *parent = nullptr);

    HeatmapWidget *headsView() const { return m_heads; }
    StepsView *stepsView() const { return m_steps; }
    CompareView *compareView() const { return m_compare; }
    TokensView *tokensView() const { return m_tokens; }
    /// "Heads View", "Steps View", "Compare A/B View", "Tokens View" (Ctrl+Alt+1 … 4): switch
    /// tabs. They work
    /// while the window is active; a View menu may list them too.
    QList<QAction *> tabActions() const { return m_tabActions; }

    /// What the three views show, for session files (keys in ui/document/sessionfile.h):
    /// "heatmap" (the Heads view's options: view, head, colormap …), "transform" (trimmed
    /// padding, hidden keys), "row_strip", "compare" (B of the A/B view, once there is
    /// any) and "tokens" (the Tokens tab: sub-view, heads shown, head and query of the coloured
    /// text). The current tab is part of tabPath.
    QJsonObject state() const;
    /// Applies the keys present in `state` (colours and font follow the palette again);
    /// unknown keys and values are ignored.
    void setState(const QJsonObject &state);

    /// The current page of `tabs` and of each nested tab widget below it, by object name
    /// ("#2" for an unnamed page): e.g. ["attentionViews", "stepsView"].
    static QJsonArray tabPath(const QTabWidget *tabs);
    /// Selects the pages `path` names, outermost first; stops at the first unknown name.
    static void setTabPath(QTabWidget *tabs, const QJsonArray &path);

private:
    HeatmapWidget *m_heads;
    StepsView *m_steps;
    CompareView *m_compare;
    TokensView *m_tokens;
    QList<QAction *> m_tabActions;
};

} // namespace attn
