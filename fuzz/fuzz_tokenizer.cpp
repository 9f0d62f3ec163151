// libFuzzer target: splitTokens (ui/tokenizer.h) on arbitrary UTF-8 and UTF-16 text. Tokens are
// never empty, hold whitespace only when the text has a backslash (which escapes it), hold no
// more than the text, and joinTokens writes them back as a text that splits into them again.

#include "ui/session/tokenizer.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <cstdlib>

namespace {

void check(const QString &text)
{
    const QStringList tokens = attn::splitTokens(text);
    const bool escapes = text.contains(QLatin1Char('\\'));
    qsizetype total = 0;
    for (const QString &t : tokens) {
        if (t.isEmpty())
            std::abort();
        for (QChar c : t)
            if (c.isSpace() && !escapes)
                std::abort();
        total += t.size();
    }
    if (total > text.size())
        std::abort(); // tokens hold more than the text
    if (attn::splitTokens(attn::joinTokens(tokens)) != tokens)
        std::abort(); // the Controls' Tokens field would change them
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    check(QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size)));
    check(QString(reinterpret_cast<const QChar *>(data), qsizetype(size / 2)));
    return 0;
}
