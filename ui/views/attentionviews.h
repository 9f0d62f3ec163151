#pragma once
// AttentionViews: the attention mode's centre as six tabs over one AttentionSession —
// "Heads" (the heatmap grid, HeatmapWidget), "Steps" (StepsView: scores → scaled and masked
// scores → weights of one head), "Compare A/B" (CompareView), "Tokens" (TokensView: the weights
// over the tokens, as BertViz's head view or CircuitsVis's coloured text), "Positions"
// (PositionsView: the session's sinusoidal positional encoding and its similarity PE·PEᵀ) and
// "Model" (ModelView: every layer and head of a loaded stack of weights). Results of the session
// go to the first four (Tokens gets what the Heads tab shows: trimmed padding and hidden keys
// applied), its parameters to Positions; clicking a head's tile in the grid selects that head in
// Steps and Compare; clicking a thumbnail of the Model tab asks for that layer and head
// (thumbnailRequested). "Long" (LongMapView) draws the session's attention at a sequence length
// of its own, up to SessionParameters::maxLongSequence, from tiles computed at the zoom shown.

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QTabWidget>

class QAction;
class QCheckBox;
class QComboBox;

namespace attn {

class AttentionSession;
class CompareView;
class HeatmapWidget;
class LongMapView;
class AtlasView;
class ModelView;
class PositionsView;
class StepsView;
class TokensView;

class AttentionViews : public QTabWidget
{
    Q_OBJECT
public:
    enum Tab {
        HeadsTab = 0,
        StepsTab = 1,
        CompareTab = 2,
        TokensTab = 3,
        PositionsTab = 4,
        ModelTab = 5,
        LongTab = 6,
        AtlasTab = 7
    };

    /// `heads` becomes the first tab (reparented); `session` is not owned.
    AttentionViews(HeatmapWidget *heads, AttentionSession *session, QWidget *parent = nullptr);

    /// The heatmap grid; its tab page holds it under a strip with the grid's "Heads per row"
    /// (Auto, 1, 2, 3, 4, 6, 8, 16: HeatmapOptions::headsPerRow) and "Fit all"
    /// (HeatmapOptions::fitAll) choices.
    HeatmapWidget *headsView() const { return m_heads; }
    QComboBox *headsPerRowCombo() const { return m_headsPerRow; }
    QCheckBox *fitAllCheck() const { return m_fitAll; }
    StepsView *stepsView() const { return m_steps; }
    CompareView *compareView() const { return m_compare; }
    TokensView *tokensView() const { return m_tokens; }
    PositionsView *positionsView() const { return m_positions; }
    ModelView *modelView() const { return m_model; }
    AtlasView *atlasView() const { return m_atlas; }
    LongMapView *longMapView() const { return m_long; }
    /// "Heads View", "Steps View", "Compare A/B View", "Tokens View", "Positions View", "Model
    /// View", "Long Sequence View" (Ctrl+Alt+1 … 7): switch tabs. They work while the window is
    /// active; a View menu may list them too.
    QList<QAction *> tabActions() const { return m_tabActions; }

    /// What the three views show, for session files (keys in ui/document/sessionfile.h):
    /// "heatmap" (the Heads view's options: view, head, colormap …), "transform" (trimmed
    /// padding, hidden keys), "row_strip", "compare" (B of the A/B view, once there is
    /// any) and "tokens" (the Tokens tab: sub-view, heads shown, head and query of the coloured
    /// text) and "long_map" (the Long tab: n, head, pooling, colour scale). The current tab is
    /// part of tabPath.
    QJsonObject state() const;
    /// Applies the keys present in `state` (colours and font follow the palette again);
    /// unknown keys and values are ignored.
    void setState(const QJsonObject &state);

    /// The current page of `tabs` and of each nested tab widget below it, by object name
    /// ("#2" for an unnamed page): e.g. ["attentionViews", "stepsView"].
    static QJsonArray tabPath(const QTabWidget *tabs);
    /// Selects the pages `path` names, outermost first; stops at the first unknown name.
    static void setTabPath(QTabWidget *tabs, const QJsonArray &path);

signals:
    /// A thumbnail of the Model tab was clicked: show (layer, head) in the Heads view.
    void thumbnailRequested(int layer, int head);

private:
    /// The Heads tab's page: the strip of grid choices above the heatmap widget.
    QWidget *buildHeadsPage();
    /// The strip shows the widget's options (also when a session file set them).
    void syncHeadsStrip();

    HeatmapWidget *m_heads;
    QComboBox *m_headsPerRow = nullptr;
    QCheckBox *m_fitAll = nullptr;
    StepsView *m_steps;
    CompareView *m_compare;
    TokensView *m_tokens;
    ModelView *m_model;
    AtlasView *m_atlas;
    PositionsView *m_positions;
    LongMapView *m_long;
    QList<QAction *> m_tabActions;
};

} // namespace attn
