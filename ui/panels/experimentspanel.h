#pragma once
// ExperimentsPanel: the experiments of docs/experiments.md in the app — a list of
// experiments (ExperimentListModel) beside one guided page per experiment (ExperimentPage:
// parameters, Run / Cancel with progress, the result table and figure, the note, export).

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QListView;
class QStackedWidget;

namespace attn {

class ExperimentListModel;
class ExperimentPage;

class ExperimentsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ExperimentsPanel(QWidget *parent = nullptr);

    ExperimentListModel *experimentModel() const { return m_model; }
    QListView *experimentView() const { return m_list; }
    /// Ids in list order ("E1" … "E12").
    QStringList experimentIds() const;

    /// Shows an experiment's page (case-insensitive id); false when the id is unknown.
    bool setCurrentExperiment(const QString &id);
    QString currentExperiment() const;
    /// The page of an experiment (nullptr when the id is unknown).
    ExperimentPage *page(const QString &id) const;
    ExperimentPage *currentPage() const;

signals:
    void currentExperimentChanged(const QString &id);
    /// A page delivered a result (the page's result() holds it).
    void resultReady(const QString &id);

private:
    void showRow(int row);

    ExperimentListModel *m_model = nullptr;
    QListView *m_list = nullptr;
    QStackedWidget *m_stack = nullptr;
    std::vector<ExperimentPage *> m_pages;
};

} // namespace attn
