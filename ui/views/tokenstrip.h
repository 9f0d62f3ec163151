#pragma once
// TokenStrip: the pieces of the typed text in a row that wraps, each a rounded box in one of two
// alternating colours (so where one token ends and the next begins is visible), white space shown
// (␣, ↵) and split bytes marked (‹E2›). Hovering a piece shows its id, piece, byte span and bytes
// in hex. With a model's tokenizer the pieces are its tokens; without a model, the words of the
// window's own splitter (ui/session/tokenizer.h).

#include "ui/session/modelrun.h"

#include <QVector>
#include <QWidget>

#include <optional>

namespace attn {

class TokenStrip : public QWidget
{
    Q_OBJECT
public:
    explicit TokenStrip(QWidget *parent = nullptr);

    void setPieces(const QVector<TokenPiece> &pieces);
    const QVector<TokenPiece> &pieces() const { return m_pieces; }
    /// The box of piece `index` in widget coordinates (empty when out of range).
    QRect pieceRect(int index) const;
    /// The piece under `pos`, if any.
    std::optional<int> pieceAt(const QPoint &pos) const;
    /// The tooltip of piece `index`: "id 3797 · “␣cat” · bytes 3–7 · 20 63 61 74".
    QString pieceToolTip(int index) const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    bool event(QEvent *event) override;

private:
    /// The boxes for a row width of `width`; their bottom gives the height.
    QVector<QRect> layoutFor(int width) const;

    QVector<TokenPiece> m_pieces;
    QVector<QRect> m_rects;
};

} // namespace attn
