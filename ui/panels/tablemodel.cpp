#include "ui/panels/tablemodel.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace attn {

TableModel::TableModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void TableModel::setTable(const Table &table)
{
    beginResetModel();
    m_table = table;
    endResetModel();
}

int TableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_table.rowCount());
}

int TableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_table.columnCount());
}

QString TableModel::displayText(const Table::Cell &cell)
{
    if (const double *d = std::get_if<double>(&cell)) {
        if (std::isnan(*d))
            return QStringLiteral("NaN");
        if (std::isinf(*d))
            return *d > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
        return QString::number(*d, 'g', 6);
    }
    if (const std::int64_t *i = std::get_if<std::int64_t>(&cell))
        return QString::number(qint64(*i));
    return QString::fromStdString(std::get<std::string>(cell));
}

QString TableModel::fullText(const Table::Cell &cell)
{
    if (const double *d = std::get_if<double>(&cell); d && std::isnan(*d))
        return QStringLiteral("NaN");
    return QString::fromStdString(Table::formatCell(cell));
}

bool TableModel::isNonFinite(const Table::Cell &cell)
{
    const double *d = std::get_if<double>(&cell);
    return d && !std::isfinite(*d);
}

QVariant TableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Table::Cell &cell = m_table.cell(std::size_t(index.row()), std::size_t(index.column()));
    switch (role) {
    case Qt::DisplayRole:
        return displayText(cell);
    case Qt::EditRole:
    case Qt::ToolTipRole:
        return fullText(cell);
    case Qt::ForegroundRole:
        if (isNonFinite(cell))
            return QBrush(QColor(200, 0, 0));
        return {};
    case Qt::TextAlignmentRole:
        if (std::holds_alternative<std::string>(cell))
            return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case RawValueRole:
        if (const double *d = std::get_if<double>(&cell))
            return *d;
        if (const std::int64_t *i = std::get_if<std::int64_t>(&cell))
            return qint64(*i);
        return QString::fromStdString(std::get<std::string>(cell));
    default:
        return {};
    }
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal) {
        if (section < 0 || section >= columnCount())
            return {};
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole)
            return QString::fromStdString(m_table.columns()[std::size_t(section)]);
        return {};
    }
    if (section < 0 || section >= rowCount())
        return {};
    if (role == Qt::DisplayRole)
        return section + 1;
    return {};
}

QString TableModel::toTsv(const QModelIndexList &indexes, bool withHeader) const
{
    int top = std::numeric_limits<int>::max(), left = top, bottom = -1, right = -1;
    std::map<std::pair<int, int>, QString> cells;
    for (const QModelIndex &index : indexes) {
        if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
            continue;
        top = std::min(top, index.row());
        bottom = std::max(bottom, index.row());
        left = std::min(left, index.column());
        right = std::max(right, index.column());
        cells[{index.row(), index.column()}] = data(index, Qt::EditRole).toString();
    }
    if (cells.empty())
        return {};
    QString text;
    if (withHeader) {
        for (int c = left; c <= right; ++c) {
            if (c > left)
                text += QLatin1Char('\t');
            text += headerData(c, Qt::Horizontal).toString();
        }
        text += QLatin1Char('\n');
    }
    for (int r = top; r <= bottom; ++r) {
        for (int c = left; c <= right; ++c) {
            if (c > left)
                text += QLatin1Char('\t');
            const auto it = cells.find({r, c});
            if (it != cells.end())
                text += it->second;
        }
        text += QLatin1Char('\n');
    }
    return text;
}

} // namespace attn
