// Tests of core/npy reading: .npy/.npz files written by NumPy (fixtures made by
// tests/reference/make_npy_fixtures.py, expected values taken from np.load), refusal of malformed
// and unsupported files, and the NpyArray helpers. Writing is tested in tst_npy_write.cpp.

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

class TestNpy : public QObject
{
    Q_OBJECT

private:
    std::vector<Expected> m_npy, m_npz;
    QTemporaryDir m_tmp;

    QString tmpPath(const QString &name) const { return m_tmp.filePath(name); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        QString error;
        QVERIFY2(readManifest(&m_npy, &m_npz, &error), qPrintable(error));
        QVERIFY(m_npy.size() >= 30);
        QVERIFY(m_npz.size() >= 10);
    }

    // ---- reading what NumPy wrote ----------------------------------------------------------

    void readFixture_data()
    {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < m_npy.size(); ++i)
            QTest::newRow(qPrintable(m_npy[i].row)) << int(i);
    }

    void readFixture()
    {
        QFETCH(int, index);
        const Expected &e = m_npy[std::size_t(index)];
        const NpyArray fromFile = readNpy(fixture(e.file).toStdString());
        COMPARE_ARRAY(fromFile, e.shape, e.type, e.values);
        const std::vector<std::uint8_t> bytes = fileBytes(fixture(e.file));
        QVERIFY(!bytes.empty());
        const NpyArray fromMemory = parseNpy(bytes.data(), bytes.size(), e.file.toStdString());
        COMPARE_ARRAY(fromMemory, e.shape, e.type, e.values);
        QCOMPARE(fromFile.size(), std::int64_t(e.values.size()));
    }

    /// Fortran-order data built by hand: element (i, j[, k]) is known from its indices, so a
    /// silent transpose or a wrong stride would show.
    void fortranOrderIsReordered_data()
    {
        QTest::addColumn<QList<qint64>>("shape");
        QTest::newRow("(2, 3)") << QList<qint64> {2, 3};
        QTest::newRow("(3, 2)") << QList<qint64> {3, 2};
        QTest::newRow("(2, 3, 4)") << QList<qint64> {2, 3, 4};
        QTest::newRow("(2, 1, 3, 2)") << QList<qint64> {2, 1, 3, 2};
        QTest::newRow("(1, 5)") << QList<qint64> {1, 5};
    }

    void fortranOrderIsReordered()
    {
        QFETCH(QList<qint64>, shape);
        const int nd = int(shape.size());
        std::int64_t n = 1;
        for (qint64 d : shape)
            n *= d;
        // value(index) = Σ index_k · 10^(nd-1-k): C order enumerates them increasingly
        auto valueAt = [&](const std::vector<std::int64_t> &idx) {
            double v = 0;
            for (int k = 0; k < nd; ++k)
                v = v * 10 + double(idx[std::size_t(k)]);
            return v;
        };
        std::vector<double> fortranData, cExpected;
        std::vector<std::int64_t> idx(std::size_t(nd), 0);
        for (std::int64_t p = 0; p < n; ++p) { // Fortran walk: first index fastest
            fortranData.push_back(valueAt(idx));
            for (int k = 0; k < nd; ++k) {
                if (++idx[std::size_t(k)] < shape[k])
                    break;
                idx[std::size_t(k)] = 0;
            }
        }
        for (std::int64_t p = 0; p < n; ++p) { // C walk: last index fastest
            cExpected.push_back(valueAt(idx));
            for (int k = nd - 1; k >= 0; --k) {
                if (++idx[std::size_t(k)] < shape[k])
                    break;
                idx[std::size_t(k)] = 0;
            }
        }
        QByteArray shapeText = "(";
        for (int k = 0; k < nd; ++k)
            shapeText += QByteArray::number(shape[k]) + ", ";
        shapeText += ")";
        const auto bytes = toBytes(
            npyImage("{'descr': '<f8', 'fortran_order': True, 'shape': " + shapeText + ", }",
                     doublesLe(fortranData)));
        const NpyArray a = parseNpy(bytes.data(), bytes.size(), "fortran.npy");
        COMPARE_ARRAY(a, std::vector<std::int64_t>(shape.begin(), shape.end()), NpyType::Float64,
                      cExpected);
    }

    void readNpzMember_data()
    {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < m_npz.size(); ++i)
            QTest::newRow(qPrintable(m_npz[i].row)) << int(i);
    }

    void readNpzMember()
    {
        QFETCH(int, index);
        const Expected &e = m_npz[std::size_t(index)];
        const std::string path = fixture(e.file).toStdString();
        // by the name np.load gives, by the stored member name, and with ".npy" appended
        for (const QString &name : {e.member, e.stored, e.member + ".npy"}) {
            if (name == e.member + ".npy" && e.stored != name)
                continue; // a member stored without ".npy" is not found as "name.npy.npy"
            const NpyArray a = attn::readNpzMember(path, name.toStdString());
            COMPARE_ARRAY(a, e.shape, e.type, e.values);
        }
    }

    void readNpzAll_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("np.savez (stored)") << "savez.npz";
        QTest::newRow("np.savez_compressed (deflate)") << "savez_compressed.npz";
        QTest::newRow("zip64, mixed, names without .npy") << "zip64.npz";
    }

    void readNpzAll()
    {
        QFETCH(QString, file);
        std::vector<const Expected *> expected;
        for (const Expected &e : m_npz)
            if (e.file == file)
                expected.push_back(&e);
        QVERIFY(!expected.empty());
        const std::string path = fixture(file).toStdString();
        const std::vector<std::string> names = listNpz(path);
        const auto all = readNpz(path);
        QCOMPARE(names.size(), expected.size());
        QCOMPARE(all.size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(QString::fromStdString(names[i]), expected[i]->member);
            QCOMPARE(QString::fromStdString(all[i].first), expected[i]->member);
            COMPARE_ARRAY(all[i].second, expected[i]->shape, expected[i]->type,
                          expected[i]->values);
        }
    }

    void npzMissingMemberListsNames()
    {
        const std::string path = fixture("savez.npz").toStdString();
        const auto err = npyErrorOf([&] { attn::readNpzMember(path, "qeury"); });
        QVERIFY(err.has_value());
        QVERIFY2(err->startsWith(QString::fromStdString(path) + ": "), qPrintable(*err));
        QVERIFY2(err->contains("'qeury'"), qPrintable(*err));
        QVERIFY2(err->contains("query, key, value, num_heads, key_padding_mask, weights, fortran"),
                 qPrintable(*err));
    }

    // ---- refusing ----------------------------------------------------------------------------

    void refuseFixture_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("member"); // empty: a .npy, "*": readNpz of everything
        QTest::addColumn<QString>("prefix"); // what the message starts with after the path
        QTest::addColumn<QString>("problem");
        QTest::newRow("object array (pickle)") << "bad_object.npy"
                                               << ""
                                               << ""
                                               << "object arrays";
        QTest::newRow("structured dtype") << "bad_structured.npy"
                                          << ""
                                          << ""
                                          << "structured dtypes";
        QTest::newRow("unicode string dtype") << "bad_unicode.npy"
                                              << ""
                                              << ""
                                              << "string dtype";
        QTest::newRow("bytes string dtype") << "bad_bytes.npy"
                                            << ""
                                            << ""
                                            << "string dtype '|S3'";
        QTest::newRow("complex") << "bad_complex.npy"
                                 << ""
                                 << ""
                                 << "unsupported dtype '<c16'";
        QTest::newRow("float16") << "bad_f2.npy"
                                 << ""
                                 << ""
                                 << "unsupported dtype '<f2'";
        QTest::newRow("int16") << "bad_i2.npy"
                               << ""
                               << ""
                               << "unsupported dtype '<i2'";
        QTest::newRow("truncated data") << "bad_truncated.npy"
                                        << ""
                                        << ""
                                        << "truncated data";
        QTest::newRow("header only") << "bad_header_only.npy"
                                     << ""
                                     << ""
                                     << "truncated data";
        QTest::newRow("npz object member") << "bad_member.npz"
                                           << "obj"
                                           << "member 'obj.npy': "
                                           << "object arrays";
        QTest::newRow("npz object member via readNpz") << "bad_member.npz"
                                                       << "*"
                                                       << "member 'obj.npy': "
                                                       << "object arrays";
        QTest::newRow("npz corrupted CRC") << "bad_crc.npz"
                                           << "query"
                                           << "member 'query.npy': "
                                           << "CRC error";
        QTest::newRow("npz zip bomb") << "bad_bomb.npz"
                                      << "x"
                                      << "member 'x.npy': "
                                      << "far more than its .npy header describes";
        QTest::newRow("npz claims 1 TiB") << "bad_claims_1tib.npz"
                                          << "x"
                                          << "member 'x.npy': "
                                          << "member claims 1099511627776 bytes";
        QTest::newRow("npz with two query.npy members") << "bad_duplicate.npz"
                                                        << "*"
                                                        << ""
                                                        << "two members hold array 'query'";
        QTest::newRow("npz duplicate, one member read") << "bad_duplicate.npz"
                                                        << "query"
                                                        << ""
                                                        << "numpy.load would take the last";
        QTest::newRow("not a zip") << "bad_notzip.npz"
                                   << "*"
                                   << ""
                                   << "cannot open as .npz";
        QTest::newRow("truncated zip") << "bad_truncated.npz"
                                       << "*"
                                       << ""
                                       << "cannot open as .npz";
        QTest::newRow("missing npz") << "no_such_file.npz"
                                     << "*"
                                     << ""
                                     << "cannot open as .npz";
        QTest::newRow("missing npy") << "no_such_file.npy"
                                     << ""
                                     << ""
                                     << "cannot open";
    }

    void refuseFixture()
    {
        QFETCH(QString, file);
        QFETCH(QString, member);
        QFETCH(QString, prefix);
        QFETCH(QString, problem);
        const std::string path = fixture(file).toStdString();
        std::optional<QString> err;
        if (member.isEmpty())
            err = npyErrorOf([&] { readNpy(path); });
        else if (member == "*")
            err = npyErrorOf([&] { readNpz(path); });
        else
            err = npyErrorOf([&] { attn::readNpzMember(path, member.toStdString()); });
        QVERIFY2(err.has_value(), "no NpyError thrown");
        QVERIFY2(err->startsWith(QString::fromStdString(path) + ": " + prefix), qPrintable(*err));
        QVERIFY2(err->contains(problem), qPrintable(*err));
    }

    void refuseBytes_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("problem");
        const QByteArray f8x2 = doublesLe({1.0, 2.0});
        auto raw = [](const char *s, int n) { return QByteArray(s, n); };

        QTest::newRow("empty file") << QByteArray() << "not a .npy file";
        QTest::newRow("five bytes") << raw("\x93NUMP", 5) << "not a .npy file";
        QTest::newRow("magic only") << raw("\x93NUMPY", 6) << "truncated .npy file";
        QTest::newRow("bad magic") << raw("\x93NUMPZ\x01\x00\x10\x00{}", 12) << "bad magic";
        QTest::newRow("png file") << raw("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << "bad magic";
        QByteArray v = npyImage(f8Header("(2,)"), f8x2);
        v[6] = 4;
        QTest::newRow("version 4.0") << v << "unsupported .npy format version 4.0";
        v[6] = 1, v[7] = 1;
        QTest::newRow("version 1.1") << v << "unsupported .npy format version 1.1";
        v[6] = 0, v[7] = 0;
        QTest::newRow("version 0.0") << v << "unsupported .npy format version 0.0";
        v = npyImage(f8Header("(2,)"), f8x2);
        v[8] = char(0xff), v[9] = char(0xff);
        QTest::newRow("v1 header length past end") << v << "header length 65535 runs past the end";
        v = npyImage(f8Header("(2,)"), f8x2, 2);
        v[8] = v[9] = v[10] = v[11] = char(0xff);
        QTest::newRow("v2 header length 4 GiB")
            << v << "header length 4294967295 runs past the end";
        QTest::newRow("v2 preamble cut")
            << raw("\x93NUMPY\x02\x00\x10\x00", 10) << "truncated .npy file";
        QTest::newRow("truncated data") << npyImage(f8Header("(3,)"), f8x2) << "truncated data";
        QTest::newRow("claims 2 GiB, holds 16 bytes")
            << npyImage(f8Header("(268435456,)"), f8x2) << "truncated data";
        QTest::newRow("v3 truncated data")
            << npyImage(f8Header("(2, 2)"), f8x2, 3) << "needs 32 bytes, the file holds 16";

        QTest::newRow("element count overflows int64")
            << npyImage(f8Header("(4294967296, 4294967296)")) << "more elements than fit in int64";
        QTest::newRow("element count 2^63") << npyImage(f8Header("(2097152, 2097152, 2097152)"))
                                            << "more elements than fit in int64";
        QTest::newRow("over the memory limit") << npyImage(f8Header("(536870913,)"))
                                               << "held as float64 that is 4294967304 bytes, over "
                                                  "the 4294967296 bytes an array may take";
        QTest::newRow("over the memory limit, uint8")
            << npyImage("{'descr': '|u1', 'fortran_order': False, 'shape': (65536, 65536), }")
            << "held as float64 that is 34359738368 bytes, over the 4294967296";
        QTest::newRow("dimension beyond 64 bits")
            << npyImage(f8Header("(99999999999999999999,)")) << "does not fit in 64 bits";
        QTest::newRow("negative dimension")
            << npyImage(f8Header("(-1, 3)")) << "negative dimension -1";
        QTest::newRow("negative dimension after zero")
            << npyImage(f8Header("(0, -2)")) << "negative dimension -2";

        QTest::newRow("__import__ call")
            << npyImage("{'descr': __import__('os').system('true'), 'fortran_order': False, "
                        "'shape': (1,), }")
            << "non-literal token '__import__'";
        QTest::newRow("eval in shape")
            << npyImage(f8Header("(eval('1'),)")) << "non-literal token 'eval'";
        QTest::newRow("lambda") << npyImage("{'descr': lambda: 0, 'fortran_order': False, "
                                            "'shape': (1,), }")
                                << "non-literal token 'lambda'";
        QTest::newRow("method call on string")
            << npyImage("{'descr': '<f8'.upper(), 'fortran_order': False, 'shape': (1,), }")
            << "expected ',' or '}' in the dictionary, found '.'";
        QTest::newRow("arithmetic in shape")
            << npyImage(f8Header("(2*1,)")) << "expected ',' or ')' in a tuple, found '*'";
        QTest::newRow("float dimension") << npyImage(f8Header("(2.0,)")) << "malformed number";
        QTest::newRow("L suffix in v3.0")
            << npyImage(f8Header("(2L,)"), f8x2, 3) << "malformed number";
        QTest::newRow("NUL byte in header")
            << npyImage(QByteArray("{'descr': '<f8',\0", 17)) << "unexpected character '\\x00'";

        auto withDescr = [](const QByteArray &descr) {
            return npyImage("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }",
                            QByteArray(16, '\0'));
        };
        QTest::newRow("object |O") << withDescr("'|O'") << "object arrays (dtype '|O')";
        QTest::newRow("structured list")
            << withDescr("[('x', '<f8'), ('y', '<i4')]") << "structured dtypes";
        QTest::newRow("unicode <U5") << withDescr("'<U5'") << "string dtype '<U5'";
        QTest::newRow("bytes |S3") << withDescr("'|S3'") << "string dtype '|S3'";
        QTest::newRow("void |V8") << withDescr("'|V8'") << "structured/void dtype '|V8'";
        QTest::newRow("complex <c16") << withDescr("'<c16'") << "unsupported dtype '<c16'";
        QTest::newRow("datetime <M8[s]") << withDescr("'<M8[s]'") << "unsupported dtype";
        QTest::newRow("|f8 without order") << withDescr("'|f8'") << "has no byte order";
        QTest::newRow("empty descr") << withDescr("''") << "empty dtype descriptor";
        QTest::newRow("descr not a string") << withDescr("8") << "'descr' is not a dtype string";

        QTest::newRow("missing shape")
            << npyImage("{'descr': '<f8', 'fortran_order': False}") << "missing key 'shape'";
        QTest::newRow("extra key")
            << npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}")
            << "unexpected key 'extra'";
        QTest::newRow("duplicate key")
            << npyImage("{'descr': '<f8', 'shape': (1,), 'fortran_order': False, 'shape': (2,)}")
            << "duplicate key 'shape'";
        QTest::newRow("key not a string") << npyImage("{1: 2}") << "a key is not a string";
        QTest::newRow("shape an integer") << npyImage(f8Header("3")) << "'shape' is not a tuple";
        QTest::newRow("shape (3) is not a tuple")
            << npyImage(f8Header("(3)")) << "'shape' is not a tuple";
        QTest::newRow("shape a list") << npyImage(f8Header("[3]")) << "'shape' is not a tuple";
        QTest::newRow("shape holds a string")
            << npyImage(f8Header("('3',)")) << "'shape' holds a non-integer";
        QTest::newRow("fortran_order 0")
            << npyImage("{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }")
            << "'fortran_order' is not True or False";
        QTest::newRow("header a list") << npyImage("[1, 2]") << "not a dictionary";
        QTest::newRow("empty header") << npyImage("") << "header ends inside a value";
        QTest::newRow("line break in string")
            << npyImage("{'descr': '<f8") << "line break inside a string";
        QTest::newRow("unterminated string, unpadded")
            << raw("\x93NUMPY\x01\x00\x0e\x00{'descr': '<f8", 24) << "ends inside a string";
        QTest::newRow("unterminated dict")
            << npyImage("{'descr': '<f8', ") << "ends inside the dictionary";
        QTest::newRow("nested too deep")
            << npyImage(f8Header(QByteArray(40, '(') + QByteArray(40, ')')))
            << "nesting deeper than";
        QTest::newRow("garbage after the dict")
            << npyImage(f8Header("(2,)") + " junk", f8x2) << "after the header dictionary";
    }

    void refuseBytes()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, problem);
        // exact-size heap buffer, so a sanitizer build catches any read past the end
        const std::vector<std::uint8_t> buf = toBytes(bytes);
        const auto inMemory = npyErrorOf([&] { parseNpy(buf.data(), buf.size(), "case.npy"); });
        QVERIFY2(inMemory.has_value(), "parseNpy: no NpyError thrown");
        QVERIFY2(inMemory->startsWith("case.npy: "), qPrintable(*inMemory));
        QVERIFY2(inMemory->contains(problem), qPrintable(*inMemory));

        const QString path = tmpPath("refused.npy");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(f.write(bytes), bytes.size());
        f.close();
        const auto fromDisk = npyErrorOf([&] { readNpy(path.toStdString()); });
        QVERIFY2(fromDisk.has_value(), "readNpy: no NpyError thrown");
        QVERIFY2(fromDisk->startsWith(path + ": "), qPrintable(*fromDisk));
        QVERIFY2(fromDisk->contains(problem), qPrintable(*fromDisk));
    }

    /// Every strict prefix of a valid file is refused (and never read past its end).
    void truncatedPrefixesAreRefused_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *f : {"f8_2d.npy", "f8_v2.npy", "f8_v3.npy", "i8_0d.npy", "b1_2d.npy",
                              "f8_empty.npy", "header_unpadded.npy"})
            QTest::newRow(f) << f;
    }

    void truncatedPrefixesAreRefused()
    {
        QFETCH(QString, file);
        const std::vector<std::uint8_t> full = fileBytes(fixture(file));
        QVERIFY(!full.empty());
        for (std::size_t n = 0; n < full.size(); ++n) {
            const std::vector<std::uint8_t> prefix(full.begin(), full.begin() + std::ptrdiff_t(n));
            const auto err = npyErrorOf([&] { parseNpy(prefix.data(), prefix.size(), "cut.npy"); });
            QVERIFY2(err.has_value(),
                     qPrintable(QStringLiteral("prefix of %1 bytes accepted").arg(n)));
        }
    }

    /// Single-byte corruptions of a header either parse to a consistent array or throw
    /// NpyError — never anything else (run under ASan/UBSan to catch out-of-bounds reads).
    void corruptedBytesNeverCrash()
    {
        const std::vector<std::uint8_t> good = fileBytes(fixture("f8_fortran_2d.npy"));
        QVERIFY(good.size() > 128);
        int refused = 0, accepted = 0;
        const std::uint8_t replacements[] = {0x00, ' ', '\'', '(',  ')',  ',',  '{', '}',
                                             '-',  '9', 'L',  0xff, 0x80, '\n', 'O', 0x01};
        for (std::size_t pos = 0; pos < 128; ++pos) {
            for (std::uint8_t r : replacements) {
                std::vector<std::uint8_t> bad = good;
                bad[pos] = r;
                try {
                    const NpyArray a = parseNpy(bad.data(), bad.size(), "fuzz.npy");
                    QCOMPARE(std::int64_t(a.values.size()), a.size());
                    ++accepted;
                } catch (const NpyError &) {
                    ++refused;
                }
            }
        }
        QVERIFY(refused > 0);
        QVERIFY(accepted > 0);
    }

    // ---- NpyArray helpers --------------------------------------------------------------------

    void shapeString_data()
    {
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<QString>("expected"); // repr(ndarray.shape)
        QTest::newRow("0-d") << QList<qint64> {} << "()";
        QTest::newRow("1-d") << QList<qint64> {3} << "(3,)";
        QTest::newRow("2-d") << QList<qint64> {3, 4} << "(3, 4)";
        QTest::newRow("zero-length") << QList<qint64> {2, 0} << "(2, 0)";
        QTest::newRow("4-d") << QList<qint64> {1, 2, 3, 4} << "(1, 2, 3, 4)";
    }

    void shapeString()
    {
        QFETCH(QList<qint64>, shape);
        QFETCH(QString, expected);
        NpyArray a;
        a.shape.assign(shape.begin(), shape.end());
        QCOMPARE(QString::fromStdString(a.shapeString()), expected);
        std::int64_t n = 1;
        for (qint64 d : shape)
            n *= d;
        QCOMPARE(a.size(), n);
        QCOMPARE(a.ndim(), int(shape.size()));
    }

    void matrixHelpers()
    {
        // a (2, 3, 4) array from NumPy: slices and the 2-d view against the manifest values
        const NpyArray a3 = readNpy(fixture("f8_3d.npy").toStdString());
        const NpyArray a2 = readNpy(fixture("f8_2d.npy").toStdString());
        for (std::int64_t k = 0; k < 2; ++k) {
            const MatrixD s = a3.slice<double>(k, "f8_3d");
            QCOMPARE(s.rows(), Index(3));
            QCOMPARE(s.cols(), Index(4));
            for (Index i = 0; i < 3; ++i)
                for (Index j = 0; j < 4; ++j)
                    QCOMPARE(s(i, j), a3.values[std::size_t(k * 12 + i * 4 + j)]);
            const MatrixF sf = a3.slice<float>(k, "f8_3d");
            ATTN_COMPARE_CLOSE(sf.cast<double>(), s, 1e-6, 1e-6);
        }
        const MatrixD m = a2.toMatrix<double>("f8_2d");
        QCOMPARE(m.rows(), Index(3));
        QCOMPARE(m.cols(), Index(4));
        QCOMPARE(m(2, 1), a2.values[9]);
        QCOMPARE(m(1, 3), a2.values[7]);

        // fromMatrix → npy → toMatrix, float and double
        const NpyArray backD = NpyArray::fromMatrix<double>(m);
        QCOMPARE(int(backD.type), int(NpyType::Float64));
        QCOMPARE(backD.shape, (std::vector<std::int64_t> {3, 4}));
        const auto bytesD = serializeNpy(backD);
        ATTN_COMPARE_CLOSE(parseNpy(bytesD.data(), bytesD.size(), "d").toMatrix<double>("d"), m,
                           0.0, 0.0);
        const MatrixF mf = m.cast<float>();
        const NpyArray backF = NpyArray::fromMatrix<float>(mf);
        QCOMPARE(int(backF.type), int(NpyType::Float32));
        const auto bytesF = serializeNpy(backF);
        ATTN_COMPARE_CLOSE(parseNpy(bytesF.data(), bytesF.size(), "f").toMatrix<float>("f"), mf,
                           0.0, 0.0);

        // fromMatrices stacks into (count, rows, cols); slice recovers each
        const std::vector<MatrixD> ms = {a3.slice<double>(0, "a"), a3.slice<double>(1, "a")};
        const NpyArray stacked = NpyArray::fromMatrices<double>(ms);
        QCOMPARE(stacked.shape, a3.shape);
        QString why;
        QVERIFY2(sameValues(stacked.values, a3.values, &why), qPrintable(why));
        const std::vector<MatrixF> fs = {mf, mf * 2.0f};
        const NpyArray stackedF = NpyArray::fromMatrices<float>(fs);
        QCOMPARE(int(stackedF.type), int(NpyType::Float32));
        ATTN_COMPARE_CLOSE(stackedF.slice<float>(1, "f"), (mf * 2.0f).eval(), 0.0, 0.0);
        QCOMPARE(NpyArray::fromMatrices<double>({}).shape, (std::vector<std::int64_t> {0, 0, 0}));

        // vectors and integers
        const NpyArray v = readNpy(fixture("f8_1d.npy").toStdString());
        const VectorD vd = v.toVector<double>("v");
        QCOMPARE(vd.size(), Index(3));
        QCOMPARE(vd[2], v.values[2]);
        QCOMPARE(readNpy(fixture("i8_0d.npy").toStdString()).toScalarInt("num_heads"),
                 std::int64_t(8));
        const NpyArray s = NpyArray::scalarInt(-42);
        QCOMPARE(s.ndim(), 0);
        QCOMPARE(int(s.type), int(NpyType::Int64));
        const auto bytesS = serializeNpy(s);
        QCOMPARE(parseNpy(bytesS.data(), bytesS.size(), "s").toScalarInt("s"), std::int64_t(-42));
    }

    void helpersRefuseWrongShapes_data()
    {
        QTest::addColumn<QString>("call");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        QTest::newRow("toMatrix of 1-d") << "toMatrix"
                                         << "f8_1d.npy"
                                         << "query: expected a 2-d array, got shape (3,)";
        QTest::newRow("toMatrix of 0-d") << "toMatrix"
                                         << "f8_0d.npy"
                                         << "query: expected a 2-d array, got shape ()";
        QTest::newRow("toMatrix of 3-d") << "toMatrix"
                                         << "f8_3d.npy"
                                         << "got shape (2, 3, 4)";
        QTest::newRow("slice of 2-d") << "slice"
                                      << "f8_2d.npy"
                                      << "query: expected a 3-d array, got shape (3, 4)";
        QTest::newRow("slice out of range") << "slice5"
                                            << "f8_3d.npy"
                                            << "index 5 is out of range for shape (2, 3, 4)";
        QTest::newRow("toVector of 2-d") << "toVector"
                                         << "f8_2d.npy"
                                         << "expected a 1-d array, got shape (3, 4)";
        QTest::newRow("toScalarInt of 1-d") << "toScalarInt"
                                            << "f8_1d.npy"
                                            << "expected a single integer";
        QTest::newRow("toScalarInt of 3.25") << "toScalarInt"
                                             << "f8_0d.npy"
                                             << "expected an integer";
    }

    void helpersRefuseWrongShapes()
    {
        QFETCH(QString, call);
        QFETCH(QString, file);
        QFETCH(QString, problem);
        const NpyArray a = readNpy(fixture(file).toStdString());
        const auto err = npyErrorOf([&] {
            if (call == "toMatrix")
                a.toMatrix<double>("query");
            else if (call == "slice")
                a.slice<float>(0, "query");
            else if (call == "slice5")
                a.slice<double>(5, "query");
            else if (call == "toVector")
                a.toVector<double>("query");
            else
                a.toScalarInt("query");
        });
        QVERIFY(err.has_value());
        QVERIFY2(err->startsWith("query: "), qPrintable(*err));
        QVERIFY2(err->contains(problem), qPrintable(*err));
    }

    void fromMatricesRefusesMixedShapes()
    {
        const std::vector<MatrixD> ms = {MatrixD::Zero(2, 3), MatrixD::Zero(3, 2)};
        const auto err = npyErrorOf([&] { NpyArray::fromMatrices<double>(ms); });
        QVERIFY(err.has_value());
        QVERIFY2(err->contains("matrix 1 is 3\u00d72, matrix 0 is 2\u00d73"), qPrintable(*err));
    }
};

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
