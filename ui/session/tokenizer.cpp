#include "ui/session/tokenizer.h"

#include <QChar>

namespace attn {

namespace {

bool isWordCodePoint(char32_t c)
{
    switch (QChar::category(c)) {
    case QChar::Letter_Uppercase:
    case QChar::Letter_Lowercase:
    case QChar::Letter_Titlecase:
    case QChar::Letter_Modifier:
    case QChar::Letter_Other:
    case QChar::Number_DecimalDigit:
    case QChar::Number_Letter:
    case QChar::Number_Other:
    case QChar::Mark_NonSpacing:
    case QChar::Mark_SpacingCombining:
    case QChar::Mark_Enclosing:
        return true;
    default:
        return false;
    }
}

constexpr qsizetype maxSpecialLength = 24; // code points between the brackets

// Inside <…> / […] of a special token: letters, digits, and / _ | -
bool isSpecialInner(char32_t c)
{
    return isWordCodePoint(c) || c == U'/' || c == U'_' || c == U'|' || c == U'-';
}

} // namespace

QStringList splitTokens(const QString &text)
{
    QStringList tokens;
    QString word;
    auto flush = [&] {
        if (!word.isEmpty()) {
            tokens.append(word);
            word.clear();
        }
    };
    const QList<uint> points = text.toUcs4();
    for (qsizetype k = 0; k < points.size(); ++k) {
        const char32_t c = points[k];
        // An escaped character belongs to the word, whatever it is.
        if (c == U'\\' && k + 1 < points.size()) {
            const char32_t escaped = points[++k];
            word.append(QString::fromUcs4(&escaped, 1));
            continue;
        }
        // Special tokens: <s>, </s>, <|endoftext|>, [CLS], [SEP] stay whole.
        if (c == U'<' || c == U'[') {
            const char32_t close = c == U'<' ? U'>' : U']';
            qsizetype end = k + 1;
            while (end < points.size() && end - k <= maxSpecialLength
                   && isSpecialInner(char32_t(points[end])))
                ++end;
            if (end < points.size() && end > k + 1 && points[end] == close) {
                flush();
                tokens.append(
                    QString::fromUcs4(reinterpret_cast<const char32_t *>(&points[k]), end - k + 1));
                k = end;
                continue;
            }
        }
        const QChar::Category category = QChar::category(c);
        if (QChar::isSpace(c) || category == QChar::Other_Control
            || category == QChar::Other_Format) {
            flush(); // separators; invisible format characters (U+200B, U+200D, U+FEFF) too
        } else if (isWordCodePoint(c)) {
            word.append(QString::fromUcs4(&c, 1));
        } else {
            flush();
            tokens.append(QString::fromUcs4(&c, 1));
        }
    }
    flush();
    return tokens;
}

QString joinTokens(const QStringList &tokens)
{
    QStringList parts;
    parts.reserve(tokens.size());
    for (const QString &token : tokens) {
        if (token.isEmpty())
            continue;
        // A backslash always needs its escape: left bare at a token's end it would escape the
        // space that follows.
        if (!token.contains(QLatin1Char('\\')) && splitTokens(token) == QStringList {token}) {
            parts.append(token);
            continue;
        }
        QString escaped;
        for (const char32_t c : token.toUcs4()) {
            if (!isWordCodePoint(c))
                escaped.append(QLatin1Char('\\'));
            escaped.append(QString::fromUcs4(&c, 1));
        }
        parts.append(escaped);
    }
    return parts.join(QLatin1Char(' '));
}

QStringList splitLabels(const QString &text)
{
    QStringList labels;
    QString label;
    for (qsizetype k = 0; k < text.size(); ++k) {
        const QChar c = text.at(k);
        if (c == QLatin1Char('\\') && k + 1 < text.size()) {
            label.append(text.at(++k));
        } else if (c.isSpace()) {
            if (!label.isEmpty())
                labels.append(label);
            label.clear();
        } else {
            label.append(c);
        }
    }
    if (!label.isEmpty())
        labels.append(label);
    return labels;
}

QString joinLabels(const QStringList &labels)
{
    QStringList parts;
    for (const QString &label : labels) {
        QString escaped;
        for (const QChar c : label) {
            if (c.isSpace() || c == QLatin1Char('\\'))
                escaped.append(QLatin1Char('\\'));
            escaped.append(c);
        }
        if (!escaped.isEmpty())
            parts.append(escaped);
    }
    return parts.join(QLatin1Char(' '));
}

} // namespace attn
