// attn::Table: Python-repr number formatting (against Python's own repr, fixture), CSV quoting,
// aligned text, JSON with non-finite values kept, and the errors of the accessors.

#include "core/io/table.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

using attn::Table;

class TestTable : public QObject
{
    Q_OBJECT

private slots:
    void formatNumberMatchesPythonRepr_data();
    void formatNumberMatchesPythonRepr();
    void formatNumberLayout_data();
    void formatNumberLayout();
    void formatCell();
    void addRowRejectsWrongSize();
    void columnIndexNamesTheColumn();
    void numberConvertsAndRejectsText();
    void csvQuotesOnlyWhenNeeded();
    void textIsAligned();
    void jsonIsValidAndKeepsNonFinite();
    void jsonParams_data();
    void jsonParams();
    void jsonScalars();
};

void TestTable::formatNumberMatchesPythonRepr_data()
{
    QTest::addColumn<quint64>("bits");
    QTest::addColumn<QString>("expected");
    QFile file(QStringLiteral(ATTN_FIXTURE_DIR "/experiments/float_repr.csv"));
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
    const QList<QByteArray> lines = file.readAll().split('\n');
    QCOMPARE(lines.value(0), QByteArray("bits,repr"));
    int rows = 0;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        if (lines[i].isEmpty())
            continue;
        const QList<QByteArray> parts = lines[i].split(',');
        QCOMPARE(parts.size(), 2);
        bool ok = false;
        const quint64 bits = parts[0].toULongLong(&ok, 16);
        QVERIFY(ok);
        QTest::addRow("%s", parts[1].constData()) << bits << QString::fromLatin1(parts[1]);
        ++rows;
    }
    QVERIFY2(rows > 3000, "the fixture holds every layout of repr()");
}

void TestTable::formatNumberMatchesPythonRepr()
{
    QFETCH(quint64, bits);
    QFETCH(QString, expected);
    const double v = std::bit_cast<double>(static_cast<std::uint64_t>(bits));
    QCOMPARE(QString::fromStdString(Table::formatNumber(v)), expected);
}

void TestTable::formatNumberLayout_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("expected");
    // Hand-checked against Python 3: repr(float(x)).
    QTest::newRow("integral gets .0") << 1.0 << "1.0";
    QTest::newRow("negative zero") << -0.0 << "-0.0";
    QTest::newRow("fixed down to 1e-4") << 0.0001 << "0.0001";
    QTest::newRow("scientific below 1e-4") << 0.00001 << "1e-05";
    QTest::newRow("fixed up to 16 digits") << 1234567890123456.0 << "1234567890123456.0";
    QTest::newRow("scientific from 1e16") << 1e16 << "1e+16";
    QTest::newRow("shortest round trip") << 0.1 + 0.2 << "0.30000000000000004";
    QTest::newRow("one third") << 1.0 / 3.0 << "0.3333333333333333";
    QTest::newRow("row sum below one") << 0.9999999999999999 << "0.9999999999999999";
    QTest::newRow("smallest subnormal") << 5e-324 << "5e-324";
    QTest::newRow("largest") << std::numeric_limits<double>::max() << "1.7976931348623157e+308";
    QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN() << "nan";
    QTest::newRow("inf") << std::numeric_limits<double>::infinity() << "inf";
    QTest::newRow("-inf") << -std::numeric_limits<double>::infinity() << "-inf";
}

void TestTable::formatNumberLayout()
{
    QFETCH(double, value);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(Table::formatNumber(value)), expected);
}

void TestTable::formatCell()
{
    QCOMPARE(Table::formatCell(Table::Cell(std::int64_t(-42))), std::string("-42"));
    QCOMPARE(Table::formatCell(Table::Cell(2.0)), std::string("2.0"));
    QCOMPARE(Table::formatCell(Table::Cell(std::string("loop"))), std::string("loop"));
}

void TestTable::addRowRejectsWrongSize()
{
    Table t({"a", "b"});
    t.addRow({1.0, std::int64_t(2)});
    QCOMPARE(t.rowCount(), std::size_t(1));
    try {
        t.addRow({1.0});
        QFAIL("a one-cell row was accepted by a two-column table");
    } catch (const std::invalid_argument &e) {
        QVERIFY2(QByteArray(e.what()).contains("1 cells"), e.what());
        QVERIFY2(QByteArray(e.what()).contains("a, b"), e.what());
    }
    QCOMPARE(t.rowCount(), std::size_t(1));
}

void TestTable::columnIndexNamesTheColumn()
{
    const Table t({"d_k", "score_std"});
    QCOMPARE(t.columnIndex("score_std"), std::size_t(1));
    try {
        t.columnIndex("sqrt_dk");
        QFAIL("unknown column accepted");
    } catch (const std::out_of_range &e) {
        QVERIFY2(QByteArray(e.what()).contains("'sqrt_dk'"), e.what());
        QVERIFY2(QByteArray(e.what()).contains("d_k, score_std"), e.what());
    }
}

void TestTable::numberConvertsAndRejectsText()
{
    Table t({"n", "x", "kernel"});
    t.addRow({std::int64_t(512), 0.25, std::string("streaming")});
    QCOMPARE(t.number(0, "n"), 512.0);
    QCOMPARE(t.number(0, "x"), 0.25);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, t.number(0, "kernel"));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, t.number(1, "n"));
}

void TestTable::csvQuotesOnlyWhenNeeded()
{
    Table t({"part", "value"});
    t.addRow({std::string("plain"), 1.5});
    t.addRow({std::string("a,b"), std::int64_t(3)});
    t.addRow({std::string("say \"hi\""), std::numeric_limits<double>::quiet_NaN()});
    t.notes.emplace_back("notes are not part of the CSV");
    QCOMPARE(t.toCsv(),
             std::string("part,value\n"
                         "plain,1.5\n"
                         "\"a,b\",3\n"
                         "\"say \"\"hi\"\"\",nan\n"));
}

void TestTable::textIsAligned()
{
    Table t({"method", "seconds"});
    t.addRow({std::string("loop"), 0.5});
    t.addRow({std::string("matrix"), 0.0625});
    t.notes.push_back("time in seconds");
    QCOMPARE(t.toText(),
             std::string("method  seconds\n"
                         "------  -------\n"
                         "loop        0.5\n"
                         "matrix   0.0625\n"
                         "\n"
                         "# time in seconds\n"));
}

void TestTable::jsonIsValidAndKeepsNonFinite()
{
    Table t({"fill", "weight", "count"});
    t.addRow({std::string("-inf"), std::numeric_limits<double>::quiet_NaN(), std::int64_t(2)});
    t.addRow({std::string("0 \"bug\""), 0.125, std::int64_t(0)});
    t.addRow({std::string("x"), -std::numeric_limits<double>::infinity(), std::int64_t(1)});
    t.notes.push_back("a note");
    const std::string json = t.toJson("E11", {{"seed", "0"}, {"dtype", "float32"}});
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json), &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    const QJsonObject o = doc.object();
    QCOMPARE(o.value("id").toString(), QStringLiteral("E11"));
    QCOMPARE(o.value("params").toObject().value("seed").toInt(-1), 0);
    QCOMPARE(o.value("params").toObject().value("dtype").toString(), QStringLiteral("float32"));
    QCOMPARE(o.value("columns").toArray().size(), 3);
    const QJsonArray rows = o.value("rows").toArray();
    QCOMPARE(rows.size(), 3);
    QVERIFY(rows[0].toObject().value("weight").isNull());
    QCOMPARE(rows[0].toObject().value("count").toInt(), 2);
    QCOMPARE(rows[1].toObject().value("weight").toDouble(), 0.125);
    QCOMPARE(rows[1].toObject().value("fill").toString(), QStringLiteral("0 \"bug\""));
    const QJsonArray nonFinite = o.value("non_finite").toArray();
    QCOMPARE(nonFinite.size(), 2);
    QCOMPARE(nonFinite[0].toObject().value("row").toInt(), 0);
    QCOMPARE(nonFinite[0].toObject().value("column").toString(), QStringLiteral("weight"));
    QCOMPARE(nonFinite[0].toObject().value("value").toString(), QStringLiteral("nan"));
    QCOMPARE(nonFinite[1].toObject().value("value").toString(), QStringLiteral("-inf"));
    QCOMPARE(o.value("notes").toArray().at(0).toString(), QStringLiteral("a note"));
}

void TestTable::jsonParams_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("expectedJson");
    QTest::newRow("integer") << "4000"
                             << "4000";
    QTest::newRow("float") << "1e-05"
                           << "1e-05";
    QTest::newRow("list") << "4,16,64"
                          << "[4,16,64]";
    QTest::newRow("choice") << "float32"
                            << "\"float32\"";
    QTest::newRow("not a number") << "1."
                                  << "\"1.\"";
    QTest::newRow("mixed list") << "4,x"
                                << "\"4,x\"";
}

void TestTable::jsonParams()
{
    QFETCH(QString, value);
    QFETCH(QString, expectedJson);
    const Table t({"a"});
    const std::string json = t.toJson("E0", {{"p", value.toStdString()}});
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json));
    QVERIFY(doc.isObject());
    const QJsonValue got = doc.object().value("params").toObject().value("p");
    const QJsonValue expected
        = QJsonDocument::fromJson("{\"p\": " + expectedJson.toUtf8() + "}").object().value("p");
    QCOMPARE(got, expected);
}

void TestTable::jsonScalars()
{
    Table t({"a"});
    t.addRow({1.0});
    const std::string json = t.toJson("E8", {}, {{"fitted_exponent", 1.96}, {"gap", std::nan("")}});
    const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
    const QJsonObject scalars = o.value("scalars").toObject();
    QCOMPARE(scalars.value("fitted_exponent").toDouble(), 1.96);
    QVERIFY(scalars.value("gap").isNull());
    const QJsonArray nonFinite = o.value("non_finite").toArray();
    QCOMPARE(nonFinite.size(), 1);
    QCOMPARE(nonFinite[0].toObject().value("scalar").toString(), QStringLiteral("gap"));
    QCOMPARE(nonFinite[0].toObject().value("value").toString(), QStringLiteral("nan"));
    // Without scalars the key is absent.
    QVERIFY(!QJsonDocument::fromJson(QByteArray::fromStdString(t.toJson("E8", {})))
                 .object()
                 .contains("scalars"));
}

QTEST_APPLESS_MAIN(TestTable)
#include "tst_table.moc"
