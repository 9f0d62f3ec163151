#pragma once
// What the .npy/.npz tests (tst_npy.cpp: reading and refusals, tst_npy_write.cpp: writing) share:
// the fixtures written by tests/reference/make_npy_fixtures.py and their manifest, hand-built
// .npy images and sample arrays.

#include "core/io/npy.h"
#include "testutil.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace npytest {

using namespace attn;

inline QString fixture(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/npy/") + name;
}

inline std::vector<std::uint8_t> toBytes(const QByteArray &b)
{
    return std::vector<std::uint8_t>(b.begin(), b.end());
}

inline std::vector<std::uint8_t> fileBytes(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return toBytes(f.readAll());
}

/// The NpyError message thrown by f, or nullopt when f does not throw. Other exceptions fail
/// the test through QtTest's handler.
inline std::optional<QString> npyErrorOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const NpyError &e) {
        return QString::fromStdString(e.what());
    }
    return std::nullopt;
}

/// A dtype of the manifest: its name there (numpy.dtype.name) and the descr np.save writes.
struct DtypeNames
{
    NpyType type;
    const char *name;
    const char *descr;
};
inline constexpr DtypeNames kDtypes[] = {
    {NpyType::Float32, "float32", "<f4"}, {NpyType::Float64, "float64", "<f8"},
    {NpyType::Bool, "bool", "|b1"},       {NpyType::Int32, "int32", "<i4"},
    {NpyType::Int64, "int64", "<i8"},     {NpyType::UInt8, "uint8", "|u1"},
};

inline NpyType typeFromName(const QString &s)
{
    for (const DtypeNames &d : kDtypes)
        if (s == QLatin1String(d.name))
            return d.type;
    qFatal("unknown dtype %s in manifest", qPrintable(s));
}

inline const char *descrOf(NpyType t)
{
    for (const DtypeNames &d : kDtypes)
        if (d.type == t)
            return d.descr;
    return "?";
}

/// Bitwise equality of doubles (so -0.0 ≠ 0.0), except that any NaN equals any NaN.
inline bool sameValues(const std::vector<double> &a, const std::vector<double> &b, QString *why)
{
    if (a.size() != b.size()) {
        *why = QStringLiteral("%1 values, expected %2").arg(a.size()).arg(b.size());
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        const bool same = (std::isnan(a[i]) && std::isnan(b[i]))
            || std::bit_cast<std::uint64_t>(a[i]) == std::bit_cast<std::uint64_t>(b[i]);
        if (!same) {
            *why = QStringLiteral("value %1: got %2, expected %3")
                       .arg(i)
                       .arg(a[i], 0, 'g', 17)
                       .arg(b[i], 0, 'g', 17);
            return false;
        }
    }
    return true;
}

#define COMPARE_ARRAY(actual, expectedShape, expectedType, expectedValues)                         \
    do {                                                                                           \
        QCOMPARE((actual).shape, (expectedShape));                                                 \
        QCOMPARE(int((actual).type), int(expectedType));                                           \
        QString why_;                                                                              \
        QVERIFY2(sameValues((actual).values, (expectedValues), &why_), qPrintable(why_));          \
    } while (false)

struct Expected
{
    QString row, file, member, stored;
    NpyType type = NpyType::Float64;
    std::vector<std::int64_t> shape;
    std::vector<double> values;
    bool fortran = false;
    bool canonical = false;
};

inline Expected expectedFrom(const QJsonObject &o)
{
    Expected e;
    e.row = o.value("name").toString();
    e.file = o.value("file").toString();
    e.member = o.value("member").toString();
    e.stored = o.value("stored").toString();
    e.type = typeFromName(o.value("dtype").toString());
    for (const QJsonValue &d : o.value("shape").toArray())
        e.shape.push_back(std::int64_t(d.toDouble()));
    for (const QJsonValue &v : o.value("values").toArray())
        e.values.push_back(std::strtod(v.toString().toLatin1().constData(), nullptr));
    e.fortran = o.value("fortran").toBool();
    e.canonical = o.value("canonical").toBool();
    return e;
}

/// Reads the fixtures manifest.json lists, .npy files into `npy` and .npz members into `npz`;
/// false with `error` naming the file when it cannot be read.
inline bool readManifest(std::vector<Expected> *npy, std::vector<Expected> *npz, QString *error)
{
    QFile f(fixture("manifest.json"));
    if (!f.open(QIODevice::ReadOnly)) {
        *error = f.fileName() + QStringLiteral(": ") + f.errorString();
        return false;
    }
    const QJsonObject manifest = QJsonDocument::fromJson(f.readAll()).object();
    for (const QJsonValue &v : manifest.value("npy").toArray())
        npy->push_back(expectedFrom(v.toObject()));
    for (const QJsonValue &v : manifest.value("npz").toArray())
        npz->push_back(expectedFrom(v.toObject()));
    return true;
}

inline QString hexOf(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);
    return QString::fromLatin1(buf);
}

inline void appendLe(QByteArray &out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out.append(char((v >> (8 * i)) & 0xff));
}

/// A .npy image with the given header text, padded like NumPy (64-byte alignment).
inline QByteArray npyImage(const QByteArray &header, const QByteArray &data = {}, int major = 1)
{
    const int prefix = major == 1 ? 10 : 12;
    QByteArray h = header + '\n';
    while ((prefix + h.size()) % 64 != 0)
        h.insert(h.size() - 1, ' ');
    QByteArray out("\x93NUMPY", 6);
    out.append(char(major));
    out.append(char(0));
    appendLe(out, std::uint64_t(h.size()), major == 1 ? 2 : 4);
    return out + h + data;
}

inline QByteArray f8Header(const QByteArray &shape)
{
    return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
}

inline QByteArray doublesLe(const std::vector<double> &v)
{
    QByteArray out;
    for (double d : v)
        appendLe(out, std::bit_cast<std::uint64_t>(d), 8);
    return out;
}

/// Deterministic test input of `n` values representable in `type`.
inline std::vector<double> sampleValues(NpyType type, std::size_t n)
{
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double x = std::ldexp(double((i * 2654435761u) % 2001) - 1000.0, -6) + 1e-3 * i;
        switch (type) {
        case NpyType::Float64:
            v[i] = x;
            break;
        case NpyType::Float32:
            v[i] = double(float(x));
            break;
        case NpyType::Bool:
            v[i] = (i * 7) % 3 == 0 ? 1.0 : 0.0;
            break;
        case NpyType::Int32:
            v[i] = std::trunc(x * 1000.0);
            break;
        case NpyType::Int64:
            v[i] = std::trunc(x * 1e12);
            break;
        case NpyType::UInt8:
            v[i] = double((i * 37) % 256);
            break;
        }
    }
    return v;
}

inline NpyArray makeArray(NpyType type, std::vector<std::int64_t> shape)
{
    NpyArray a;
    a.type = type;
    a.shape = std::move(shape);
    a.values = sampleValues(type, std::size_t(a.size()));
    return a;
}

inline QStringList entriesOf(const QString &dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
}

} // namespace npytest
