#include "ui/views/tokenstrip.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace attn {
namespace {

constexpr int kPadding = 3; ///< inside a box, pixels
constexpr int kGap = 2; ///< between boxes
constexpr int kMaxBoxWidth = 240; ///< longer pieces are elided

const QColor kFill[2] = {QColor(0xcf, 0xe2, 0xf3), QColor(0xfc, 0xe5, 0xcd)};
const QColor kSpecialFill(0xd9, 0xd9, 0xd9);

} // namespace

TokenStrip::TokenStrip(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("tokenStrip"));
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void TokenStrip::setPieces(const QVector<TokenPiece> &pieces)
{
    m_pieces = pieces;
    m_rects = layoutFor(width());
    updateGeometry();
    update();
}

QVector<QRect> TokenStrip::layoutFor(int width) const
{
    QVector<QRect> rects;
    rects.reserve(m_pieces.size());
    const QFontMetrics fm(font());
    const int h = fm.height() + 2 * kPadding;
    int x = 0, y = 0;
    const int available = std::max(width, 40);
    for (const TokenPiece &p : m_pieces) {
        const int w = std::min(fm.horizontalAdvance(p.label) + 2 * kPadding + 1, kMaxBoxWidth);
        if (x > 0 && x + w > available) {
            x = 0;
            y += h + kGap;
        }
        rects.push_back(QRect(x, y, std::min(w, available), h));
        x += w + kGap;
    }
    return rects;
}

int TokenStrip::heightForWidth(int width) const
{
    const QVector<QRect> rects = layoutFor(width);
    const QFontMetrics fm(font());
    return rects.isEmpty() ? fm.height() + 2 * kPadding : rects.back().bottom() + 1;
}

QSize TokenStrip::sizeHint() const
{
    return QSize(300, heightForWidth(300));
}

QSize TokenStrip::minimumSizeHint() const
{
    const QFontMetrics fm(font());
    return QSize(60, fm.height() + 2 * kPadding);
}

QRect TokenStrip::pieceRect(int index) const
{
    return index >= 0 && index < m_rects.size() ? m_rects[index] : QRect();
}

std::optional<int> TokenStrip::pieceAt(const QPoint &pos) const
{
    for (int i = 0; i < m_rects.size(); ++i)
        if (m_rects[i].contains(pos))
            return i;
    return std::nullopt;
}

QString TokenStrip::pieceToolTip(int index) const
{
    if (index < 0 || index >= m_pieces.size())
        return {};
    const TokenPiece &p = m_pieces[index];
    QStringList parts;
    parts << (p.id >= 0 ? tr("token %1: id %2").arg(index).arg(p.id)
                        : tr("word %1 (no model: the window's word splitter)").arg(index));
    parts << QStringLiteral("\u201c%1\u201d").arg(p.label);
    if (p.begin >= 0 && p.end > p.begin)
        parts << tr("bytes %1\u2013%2").arg(p.begin).arg(p.end);
    else if (p.id >= 0)
        parts << tr("no span in the text");
    if (!p.bytesHex.isEmpty())
        parts << p.bytesHex;
    if (p.special)
        parts << tr("special");
    return parts.join(QStringLiteral(" \u00b7 "));
}

void TokenStrip::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    m_rects = layoutFor(width());
}

bool TokenStrip::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        if (const auto hit = pieceAt(help->pos()))
            QToolTip::showText(help->globalPos(), pieceToolTip(*hit), this, pieceRect(*hit));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void TokenStrip::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics fm(font());
    for (int i = 0; i < m_pieces.size() && i < m_rects.size(); ++i) {
        const QRectF box = QRectF(m_rects[i]).adjusted(0.5, 0.5, -0.5, -0.5);
        const TokenPiece &piece = m_pieces[i];
        p.setPen(QPen(QColor(0x80, 0x80, 0x80), 0.6));
        p.setBrush(piece.special ? kSpecialFill : kFill[i % 2]);
        p.drawRoundedRect(box, 3, 3);
        p.setPen(Qt::black);
        const QRect text = m_rects[i].adjusted(kPadding, 0, -kPadding, 0);
        p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(piece.label, Qt::ElideRight, text.width()));
    }
}

} // namespace attn
