// Tests of core/npy writing: round trips through .npy and .npz, the bytes np.save writes, and
// failures that leave nothing behind. NumPy's reading of our files is checked by
// `make_npy_fixtures.py --verify DIR` after running this test with ATTN_NPY_WRITE_DIR=DIR.

#include "core/npytest.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

using namespace attn;
using namespace npytest;

class TestNpyWrite : public QObject
{
    Q_OBJECT

private:
    std::vector<Expected> m_npy, m_npz;
    QTemporaryDir m_tmp;
    QString m_writeDir; ///< ATTN_NPY_WRITE_DIR: outputs for NumPy to check
    QJsonArray m_written;

    QString tmpPath(const QString &name) const { return m_tmp.filePath(name); }

    /// Records a file written for NumPy's check (verify_written in make_npy_fixtures.py).
    void recordWritten(const QString &file, const QString &member, const NpyArray &a)
    {
        QJsonObject o;
        o.insert("file", file);
        if (!member.isEmpty())
            o.insert("member", member);
        o.insert("descr", QString::fromLatin1(descrOf(a.type)));
        QJsonArray shape, values;
        for (std::int64_t d : a.shape)
            shape.append(double(d));
        for (double v : a.values)
            values.append(hexOf(a.type == NpyType::Bool ? (v != 0 ? 1.0 : 0.0) : v));
        o.insert("shape", shape);
        o.insert("values", values);
        m_written.append(o);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        QString error;
        QVERIFY2(readManifest(&m_npy, &m_npz, &error), qPrintable(error));
        QVERIFY(m_npy.size() >= 30);
        QVERIFY(m_npz.size() >= 10);
        m_writeDir = qEnvironmentVariable("ATTN_NPY_WRITE_DIR");
        if (!m_writeDir.isEmpty())
            QVERIFY(QDir().mkpath(m_writeDir));
    }

    void cleanupTestCase()
    {
        if (m_writeDir.isEmpty())
            return;
        QFile f(QDir(m_writeDir).filePath("written.json"));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(QJsonObject {{"written", m_written}}).toJson());
        qInfo("wrote %d arrays for NumPy to check into %s", int(m_written.size()),
              qPrintable(m_writeDir));
    }

    // ---- writing -----------------------------------------------------------------------------

    void roundTrip_data()
    {
        QTest::addColumn<int>("type");
        QTest::addColumn<QList<qint64>>("shape");
        const std::pair<NpyType, const char *> types[] = {
            {NpyType::Float64, "f8"}, {NpyType::Float32, "f4"}, {NpyType::Bool, "b1"},
            {NpyType::Int32, "i4"},   {NpyType::Int64, "i8"},   {NpyType::UInt8, "u1"},
        };
        const QList<QList<qint64>> shapes = {{}, {3}, {3, 4}, {2, 3, 4}, {2, 3, 2, 5}, {0}, {2, 0}};
        for (const auto &[type, code] : types) {
            for (const auto &shape : shapes) {
                QString s = "(";
                for (qint64 d : shape)
                    s += QString::number(d) + (shape.size() == 1 ? "," : ", ");
                s = (shape.size() > 1 ? s.chopped(2) : s) + ")";
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(code, s)))
                    << int(type) << shape;
            }
        }
    }

    void roundTrip()
    {
        QFETCH(int, type);
        QFETCH(QList<qint64>, shape);
        const NpyArray a = makeArray(NpyType(type), {shape.begin(), shape.end()});

        const std::vector<std::uint8_t> bytes = serializeNpy(a);
        QCOMPARE(bytes[6], std::uint8_t(1)); // format 1.0
        const std::size_t headerEnd = 10 + std::size_t(bytes[8] | (bytes[9] << 8));
        QCOMPARE(headerEnd % 64, std::size_t(0)); // NumPy's alignment
        QCOMPARE(bytes[headerEnd - 1], std::uint8_t('\n'));
        const NpyArray parsed = parseNpy(bytes.data(), bytes.size(), "memory");
        COMPARE_ARRAY(parsed, a.shape, a.type, a.values);

        const QString name = QString::fromLatin1(QTest::currentDataTag())
                                 .replace(QRegularExpression("[^A-Za-z0-9]+"), "_")
            + ".npy";
        const QString path = tmpPath(name);
        writeNpy(path.toStdString(), a);
        COMPARE_ARRAY(readNpy(path.toStdString()), a.shape, a.type, a.values);
        QCOMPARE(fileBytes(path), bytes);

        if (!m_writeDir.isEmpty()) {
            writeNpy(QDir(m_writeDir).filePath(name).toStdString(), a);
            recordWritten(name, {}, a);
        }
    }

    void specialValuesRoundTrip()
    {
        NpyArray a;
        a.shape = {8};
        a.values = {std::nan(""),           INFINITY, -INFINITY, -0.0, 5e-324,
                    1.7976931348623157e308, -1e-310,  1.0 / 3.0};
        for (NpyType t : {NpyType::Float64, NpyType::Float32}) {
            a.type = t;
            const auto bytes = serializeNpy(a);
            const NpyArray b = parseNpy(bytes.data(), bytes.size(), "specials");
            std::vector<double> expected = a.values;
            if (t == NpyType::Float32)
                for (double &v : expected)
                    v = double(float(v));
            COMPARE_ARRAY(b, a.shape, t, expected);
            if (!m_writeDir.isEmpty()) {
                const QString name = t == NpyType::Float32 ? "specials_f4.npy" : "specials_f8.npy";
                writeNpy(QDir(m_writeDir).filePath(name).toStdString(), b);
                recordWritten(name, {}, b);
            }
        }
    }

    /// np.save's bytes are reproduced exactly for C-order little-endian arrays.
    void bytesEqualNumpySave_data()
    {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < m_npy.size(); ++i)
            if (m_npy[i].canonical)
                QTest::newRow(qPrintable(m_npy[i].row)) << int(i);
    }

    void bytesEqualNumpySave()
    {
        QFETCH(int, index);
        const Expected &e = m_npy[std::size_t(index)];
        const std::vector<std::uint8_t> original = fileBytes(fixture(e.file));
        const NpyArray a = parseNpy(original.data(), original.size(), e.file.toStdString());
        QCOMPARE(serializeNpy(a), original);
    }

    void writeVersion2WhenHeaderIsLarge()
    {
        NpyArray a;
        a.shape.assign(30000, 1); // "1, " × 30000: header over 65535 bytes
        a.shape.back() = 2;
        a.values = {1.5, -2.5};
        const auto bytes = serializeNpy(a);
        QCOMPARE(bytes[6], std::uint8_t(2));
        const std::size_t headerLen
            = std::size_t(bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (bytes[11] << 24));
        QVERIFY(headerLen > 65535);
        QCOMPARE((12 + headerLen) % 64, std::size_t(0));
        const NpyArray b = parseNpy(bytes.data(), bytes.size(), "v2");
        COMPARE_ARRAY(b, a.shape, NpyType::Float64, a.values);
    }

    void npzRoundTrip_data()
    {
        QTest::addColumn<bool>("compress");
        QTest::newRow("stored") << false;
        QTest::newRow("deflate") << true;
    }

    void npzRoundTrip()
    {
        QFETCH(bool, compress);
        std::vector<std::pair<std::string, NpyArray>> members = {
            {"query", makeArray(NpyType::Float64, {4, 8})},
            {"weights", makeArray(NpyType::Float32, {2, 4, 5})},
            {"fully_masked", makeArray(NpyType::Bool, {2, 4})},
            {"num_heads", NpyArray::scalarInt(2)},
            {"counts", makeArray(NpyType::Int32, {3})},
            {"bytes", makeArray(NpyType::UInt8, {2, 2, 2, 2})},
            {"empty", makeArray(NpyType::Float64, {0, 3})},
            {"zeros", NpyArray {{4000}, NpyType::Float64, std::vector<double>(4000, 0.0)}},
        };
        const QString name = compress ? "written_compressed.npz" : "written_stored.npz";
        const std::string path = tmpPath(name).toStdString();
        writeNpz(path, members, compress);

        const std::vector<std::string> names = listNpz(path);
        const auto all = readNpz(path);
        QCOMPARE(names.size(), members.size());
        QCOMPARE(all.size(), members.size());
        for (std::size_t i = 0; i < members.size(); ++i) {
            QCOMPARE(names[i], members[i].first);
            QCOMPARE(all[i].first, members[i].first);
            const NpyArray &m = members[i].second;
            COMPARE_ARRAY(all[i].second, m.shape, m.type, m.values);
            COMPARE_ARRAY(attn::readNpzMember(path, members[i].first + ".npy"), m.shape, m.type,
                          m.values);
        }
        // equal inputs give equal files (fixed timestamps)
        const std::string again = tmpPath("again_" + name).toStdString();
        writeNpz(again, members, compress);
        QCOMPARE(fileBytes(QString::fromStdString(again)), fileBytes(QString::fromStdString(path)));
        // 32 kB of zeros: deflate shrinks the archive, stored keeps it
        const qint64 size = QFileInfo(QString::fromStdString(path)).size();
        if (compress)
            QVERIFY2(size < 8000, qPrintable(QString::number(size)));
        else
            QVERIFY2(size > 32000, qPrintable(QString::number(size)));

        if (!m_writeDir.isEmpty()) {
            writeNpz(QDir(m_writeDir).filePath(name).toStdString(), members, compress);
            for (const auto &[member, array] : members)
                recordWritten(name, QString::fromStdString(member), array);
        }
    }

    void writeEmptyNpz()
    {
        const std::string path = tmpPath("empty.npz").toStdString();
        writeNpz(path, {});
        QVERIFY(listNpz(path).empty());
        QVERIFY(readNpz(path).empty());
        if (!m_writeDir.isEmpty()) {
            writeNpz(QDir(m_writeDir).filePath("empty.npz").toStdString(), {});
            m_written.append(QJsonObject {{"file", "empty.npz"}, {"empty", true}});
        }
    }

    void writeFailureLeavesNothing_data()
    {
        QTest::addColumn<QString>("relativePath");
        QTest::addColumn<bool>("npz");
        QTest::addColumn<int>("type");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("problem");
        QTest::newRow("npy into missing directory")
            << "no/such/dir/x.npy" << false << int(NpyType::Float64) << 1.0 << "temporary file";
        QTest::newRow("npz into missing directory")
            << "no/such/dir/x.npz" << true << int(NpyType::Float64) << 1.0 << "temporary file";
        QTest::newRow("npy int32 from 1.5")
            << "x.npy" << false << int(NpyType::Int32) << 1.5 << "cannot write value 1.5";
        QTest::newRow("npz int32 out of range")
            << "x.npz" << true << int(NpyType::Int32) << 3e9 << "as int32";
        QTest::newRow("npy uint8 256")
            << "x.npy" << false << int(NpyType::UInt8) << 256.0 << "as uint8";
        QTest::newRow("npy int64 NaN")
            << "x.npy" << false << int(NpyType::Int64) << double(NAN) << "as int64";
        QTest::newRow("npy onto a directory")
            << "existing_dir" << false << int(NpyType::Float64) << 1.0 << "rename";
    }

    void writeFailureLeavesNothing()
    {
        QFETCH(QString, relativePath);
        QFETCH(bool, npz);
        QFETCH(int, type);
        QFETCH(double, value);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (relativePath == "existing_dir")
            QVERIFY(QDir(dir.path()).mkdir("existing_dir"));
        const QStringList before = entriesOf(dir.path());
        const QString path = dir.filePath(relativePath);
        NpyArray a;
        a.shape = {2};
        a.type = NpyType(type);
        a.values = {0.0, value};
        const auto err = npyErrorOf([&] {
            if (npz)
                writeNpz(path.toStdString(), {{"a", a}});
            else
                writeNpy(path.toStdString(), a);
        });
        QVERIFY2(err.has_value(), "no NpyError thrown");
        QVERIFY2(err->startsWith(path + ": "), qPrintable(*err));
        QVERIFY2(err->contains(problem), qPrintable(*err));
        QCOMPARE(entriesOf(dir.path()), before); // no file, no temporary left behind
        if (relativePath != "existing_dir")
            QVERIFY(!QFileInfo::exists(path));
    }

    void writeFailureKeepsExistingFile()
    {
        const std::string path = tmpPath("kept.npy").toStdString();
        const NpyArray good = makeArray(NpyType::Float64, {2, 2});
        writeNpy(path, good);
        const auto before = fileBytes(QString::fromStdString(path));
        NpyArray bad = makeArray(NpyType::Int32, {2});
        bad.values[1] = 0.5;
        QVERIFY(npyErrorOf([&] { writeNpy(path, bad); }).has_value());
        QCOMPARE(fileBytes(QString::fromStdString(path)), before);
    }

    void serializeRefusesInconsistentArrays_data()
    {
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("problem");
        QTest::newRow("too few values") << QList<qint64> {2, 3} << 5 << "has 6 elements but 5";
        QTest::newRow("0-d without value") << QList<qint64> {} << 0 << "has 1 elements but 0";
        QTest::newRow("negative dimension") << QList<qint64> {-1} << 0 << "negative dimension";
    }

    void serializeRefusesInconsistentArrays()
    {
        QFETCH(QList<qint64>, shape);
        QFETCH(int, count);
        QFETCH(QString, problem);
        NpyArray a;
        a.shape.assign(shape.begin(), shape.end());
        a.values.assign(std::size_t(count), 1.0);
        const auto err = npyErrorOf([&] { serializeNpy(a); });
        QVERIFY(err.has_value());
        QVERIFY2(err->startsWith("serializeNpy: "), qPrintable(*err));
        QVERIFY2(err->contains(problem), qPrintable(*err));
    }
};

QTEST_GUILESS_MAIN(TestNpyWrite)
#include "tst_npy_write.moc"
