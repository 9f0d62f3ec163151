#pragma once
// ExperimentListModel: the experiments of docs/experiments.md (E1–E20, from attn::experimentList())
// as a read-only list model for the Experiments panel.

#include <QAbstractListModel>

namespace attn {

struct ExperimentInfo;

class ExperimentListModel : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role {
        IdRole = Qt::UserRole + 1, ///< "E1" … "E12"
        TitleRole, ///< short title
        PaperSectionRole, ///< e.g. "Vaswani et al. 2017, §3.2.1"
        NoteRole, ///< what to look at and why
    };

    explicit ExperimentListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    /// Row of an experiment id (case-insensitive), −1 when unknown.
    int rowOf(const QString &id) const;
    /// The experiment of a row; throws std::out_of_range for a row outside [0, rowCount()).
    const ExperimentInfo &info(int row) const;
};

} // namespace attn
