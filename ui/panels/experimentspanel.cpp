#include "ui/panels/experimentspanel.h"

#include "ui/panels/experimentlistmodel.h"
#include "ui/panels/experimentpage.h"

#include "core/experiments/experiments.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QListView>
#include <QSplitter>
#include <QStackedWidget>

#include <algorithm>

namespace attn {

ExperimentsPanel::ExperimentsPanel(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("experimentsPanel"));
    m_model = new ExperimentListModel(this);
    m_list = new QListView(this);
    m_list->setObjectName(QStringLiteral("experimentList"));
    m_list->setModel(m_model);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Long names wrap onto a second line: the list stays narrow and the page keeps its width.
    m_list->setWordWrap(true);
    m_list->setTextElideMode(Qt::ElideNone);
    m_list->setResizeMode(QListView::Adjust);

    m_stack = new QStackedWidget(this);
    for (int row = 0; row < m_model->rowCount(); ++row) {
        auto *page = new ExperimentPage(m_model->info(row), m_stack);
        m_pages.push_back(page);
        m_stack->addWidget(page);
        const QString id = page->experimentId();
        connect(page, &ExperimentPage::resultReady, this, [this, id] { emit resultReady(id); });
    }

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_list);
    splitter->addWidget(m_stack);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    // Wide enough for every "E<k>  title" line, at most kListWidth (longer names wrap).
    int listWidth = 0;
    for (int row = 0; row < m_model->rowCount(); ++row)
        listWidth = std::max(
            listWidth,
            m_list->fontMetrics().horizontalAdvance(m_model->data(m_model->index(row)).toString()));
    constexpr int kListWidth = 250;
    listWidth = std::min(listWidth + 2 * m_list->frameWidth() + 24, kListWidth);
    splitter->setSizes({listWidth, 1000});
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter);

    connect(m_list->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid())
                    showRow(current.row());
            });
    if (m_model->rowCount() > 0)
        m_list->setCurrentIndex(m_model->index(0));
}

QStringList ExperimentsPanel::experimentIds() const
{
    QStringList ids;
    for (const ExperimentPage *p : m_pages)
        ids << p->experimentId();
    return ids;
}

void ExperimentsPanel::showRow(int row)
{
    if (row < 0 || row >= int(m_pages.size()) || m_stack->currentIndex() == row)
        return;
    m_stack->setCurrentIndex(row);
    emit currentExperimentChanged(m_pages[std::size_t(row)]->experimentId());
}

bool ExperimentsPanel::setCurrentExperiment(const QString &id)
{
    const int row = m_model->rowOf(id);
    if (row < 0)
        return false;
    m_list->setCurrentIndex(m_model->index(row));
    showRow(row);
    return true;
}

QString ExperimentsPanel::currentExperiment() const
{
    const ExperimentPage *p = currentPage();
    return p ? p->experimentId() : QString();
}

ExperimentPage *ExperimentsPanel::page(const QString &id) const
{
    const int row = m_model->rowOf(id);
    return row < 0 ? nullptr : m_pages[std::size_t(row)];
}

ExperimentPage *ExperimentsPanel::currentPage() const
{
    return qobject_cast<ExperimentPage *>(m_stack->currentWidget());
}

} // namespace attn
