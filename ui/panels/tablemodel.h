#pragma once
// TableModel: a read-only QAbstractTableModel over an attn::Table (an experiment's result), for a
// QTableView. Numbers show with 6 significant digits; the full round-trip text (what the CLI
// prints and what CSV export writes) is in the tooltip, in Qt::EditRole and in copies. NaN and
// ±Inf are shown as "NaN", "inf", "-inf" in red, never hidden.

#include "core/io/table.h"

#include <QAbstractTableModel>
#include <QModelIndexList>
#include <QString>

namespace attn {

class TableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    /// Raw cell value for sorting and scripting: double / qint64 / QString.
    static constexpr int RawValueRole = Qt::UserRole + 1;

    explicit TableModel(QObject *parent = nullptr);

    /// Replaces the table (a model reset).
    void setTable(const Table &table);
    const Table &table() const { return m_table; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// Tab-separated text of the given cells (full precision), laid out over their bounding
    /// rectangle in row order, one line per row; cells not in the list stay empty. When
    /// `withHeader`, the first line holds the column names of the spanned columns.
    QString toTsv(const QModelIndexList &indexes, bool withHeader = false) const;

    /// Compact display text of a cell: 6 significant digits, "NaN" / "inf" / "-inf".
    static QString displayText(const Table::Cell &cell);
    /// Full text of a cell (shortest round-trip decimal, as Table::formatCell).
    static QString fullText(const Table::Cell &cell);
    /// True when the cell is a non-finite number (NaN or ±Inf).
    static bool isNonFinite(const Table::Cell &cell);

private:
    Table m_table;
};

} // namespace attn
