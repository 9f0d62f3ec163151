#include "tokenizer.h"

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
    for (char32_t c : text.toUcs4()) {
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

} // namespace attn
