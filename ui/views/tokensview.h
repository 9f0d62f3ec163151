#pragma once
// TokensView: the attention weights drawn over the tokens (ui/render/tokenfigure.h), as two
// sub-views: the head view (BertViz: queries left, keys right, one line per head from query i
// to key j with opacity w_ij; a row of head checkboxes in the heads' colours and "mean";
// hovering a token keeps only its lines) and coloured text (CircuitsVis: click a query token
// and every key is coloured by the weight it gets from it, for one head or the mean, with a
// colour bar; masked keys are hatched). An Export button (and File → Export) writes the view as
// PNG, SVG or PDF.

#include "ui/render/tokenfigure.h"

#include <QJsonObject>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QPushButton;

namespace attn {

class TokensView : public QWidget
{
    Q_OBJECT
public:
    explicit TokensView(QWidget *parent = nullptr);

    /// Shows `result` (the heads view's shown result: trimmed padding and hidden keys applied).
    void setResult(std::shared_ptr<const SessionResult> result);
    std::shared_ptr<const SessionResult> result() const { return m_result; }

    void setView(TokenView view);
    TokenView view() const { return m_options.view; }
    /// Head view: head k draws its lines (true) or not; the mean likewise.
    void setHeadShown(int head, bool shown);
    bool isHeadShown(int head) const { return !m_options.hiddenHeads.contains(head); }
    void setMeanShown(bool shown);
    /// Head view hover: query row (≥ 0), else key column (≥ 0), −1 for none.
    void setHover(int query, int key);
    /// Text view: head 0 … h−1, or h for the mean.
    void setTextHead(int head);
    /// Text view: the query shown (−1: the last one).
    void setQuery(int query);
    /// Text view: colours over [0, row max] (true) or [0, 1].
    void setRowRange(bool rowRange);
    /// The weights' colormap (the Heads tab's choice; the diverging RdBu_r becomes viridis).
    void setColormap(ColormapId id);

    /// The options the canvas paints with (palette colours, the hover).
    TokenViewOptions options() const;
    /// The same for a file: dark on white, no hover.
    TokenViewOptions exportOptions() const;

    /// The session's "tokens" object (tokenViewToJson, ui/document/sessionfile.h): "view",
    /// "hidden_heads", "mean", "head", "query", "range".
    QJsonObject state() const;
    /// Applies the keys present (tokenViewFromJson: invalid values are ignored).
    void setState(const QJsonObject &state);

    /// Writes the current sub-view to `path` (PNG/SVG/PDF by suffix); `size` in logical pixels
    /// (PDF: points), PNG at `dpr`. False with `error` naming the problem.
    bool exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// The canvas's size, at least 900 × 560.
    QSize defaultExportSize() const;
    /// "Token Head View" / "Coloured Tokens", for File → Export's text.
    QString exportName() const;
    /// "attention-tokens.png" / "attention-text.png".
    QString exportFileName() const;

    QWidget *canvas() const { return m_canvas; }
    QComboBox *viewSelector() const { return m_viewCombo; }
    QComboBox *textHeadSelector() const { return m_textHeadCombo; }
    /// Head k's checkbox (k = h: "mean"); nullptr when out of range.
    QCheckBox *headCheckBox(int head) const;

public slots:
    void exportInteractive();

signals:
    /// The view, the heads shown, the head or query of the text view changed.
    void stateChanged();

private:
    class Canvas;
    void syncControls();
    void changed();

    std::shared_ptr<const SessionResult> m_result;
    TokenViewOptions m_options;
    QWidget *m_canvas = nullptr; // a Canvas
    QComboBox *m_viewCombo = nullptr;
    QWidget *m_headsRow = nullptr;
    QGridLayout *m_headsLayout = nullptr;
    QList<QCheckBox *> m_headBoxes;
    QWidget *m_textRow = nullptr;
    QComboBox *m_textHeadCombo = nullptr;
    QComboBox *m_rangeCombo = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_exportButton = nullptr;
};

} // namespace attn
