#include "ui/panels/experimentlistmodel.h"

#include "core/experiments/experiments.h"

#include <stdexcept>
#include <string>

namespace attn {

ExperimentListModel::ExperimentListModel(QObject *parent)
    : QAbstractListModel(parent)
{ }

int ExperimentListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(experimentList().size());
}

const ExperimentInfo &ExperimentListModel::info(int row) const
{
    const auto &list = experimentList();
    if (row < 0 || std::size_t(row) >= list.size())
        throw std::out_of_range("ExperimentListModel: row " + std::to_string(row) + " outside [0, "
                                + std::to_string(list.size()) + ")");
    return list[std::size_t(row)];
}

QVariant ExperimentListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ExperimentInfo &e = info(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return QStringLiteral("%1  %2").arg(QString::fromStdString(e.id),
                                            QString::fromStdString(e.title));
    case Qt::ToolTipRole:
        return QStringLiteral("%1: %2 (%3)")
            .arg(QString::fromStdString(e.id), QString::fromStdString(e.title),
                 QString::fromStdString(e.paperSection));
    case IdRole:
        return QString::fromStdString(e.id);
    case TitleRole:
        return QString::fromStdString(e.title);
    case PaperSectionRole:
        return QString::fromStdString(e.paperSection);
    case NoteRole:
        return QString::fromStdString(e.note);
    default:
        return {};
    }
}

QHash<int, QByteArray> ExperimentListModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names[IdRole] = "experimentId";
    names[TitleRole] = "title";
    names[PaperSectionRole] = "paperSection";
    names[NoteRole] = "note";
    return names;
}

int ExperimentListModel::rowOf(const QString &id) const
{
    const auto &list = experimentList();
    for (std::size_t i = 0; i < list.size(); ++i)
        if (QString::fromStdString(list[i].id).compare(id, Qt::CaseInsensitive) == 0)
            return int(i);
    return -1;
}

} // namespace attn
