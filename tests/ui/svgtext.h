#pragma once
// Reads an exported SVG as XML: its root element and the text of every <text> element, for
// tests that check what a figure says (titles, axis labels, legends) without rendering it.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QXmlStreamReader>

namespace attn::test {

struct SvgTexts
{
    QString error; ///< empty when the file parsed as XML
    QString root; ///< name of the first element ("svg" for an SVG document)
    QStringList texts; ///< every <text> element's text, trimmed, in document order
};

inline SvgTexts readSvgTexts(const QByteArray &bytes)
{
    SvgTexts r;
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement)
            continue;
        if (r.root.isEmpty())
            r.root = xml.name().toString();
        if (xml.name() == QLatin1String("text"))
            r.texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    if (xml.hasError())
        r.error = xml.errorString();
    return r;
}

inline SvgTexts readSvgTextsFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {QStringLiteral("cannot open %1").arg(path), {}, {}};
    return readSvgTexts(file.readAll());
}

} // namespace attn::test
