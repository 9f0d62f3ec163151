#include "ui/document/trainingundo.h"

#include "core/training/initialization.h"
#include "core/training/optimizer.h"
#include "core/training/tasks.h"

#include <QStringList>

#include <utility>
#include <vector>

namespace attn {

namespace {

struct Setting
{
    QString name;
    QString (*value)(const TrainingSettings &);
};

QString number(double v)
{
    return QString::number(v, 'g', 6);
}

// Every setting of the tab, in its order, with the value as the tab shows it.
const std::vector<Setting> &settingsList()
{
    static const std::vector<Setting> list = {
        {QStringLiteral("task"),
         [](const TrainingSettings &s) {
             return QString::fromLatin1(training::taskKindName(s.task));
         }},
        {QStringLiteral("n"), [](const TrainingSettings &s) { return QString::number(s.n); }},
        {QStringLiteral("batch"),
         [](const TrainingSettings &s) { return QString::number(s.batch); }},
        {QStringLiteral("noise"), [](const TrainingSettings &s) { return number(s.noise); }},
        {QStringLiteral("offset k"),
         [](const TrainingSettings &s) { return QString::number(s.offset); }},
        {QStringLiteral("classes"),
         [](const TrainingSettings &s) { return QString::number(s.classes); }},
        {QStringLiteral("seed"), [](const TrainingSettings &s) { return QString::number(s.seed); }},
        {QStringLiteral("d_model"),
         [](const TrainingSettings &s) { return QString::number(s.dModel); }},
        {QStringLiteral("h"), [](const TrainingSettings &s) { return QString::number(s.heads); }},
        {QStringLiteral("initial weights"),
         [](const TrainingSettings &s) {
             return QString::fromLatin1(training::initializationName(s.init));
         }},
        {QStringLiteral("optimizer"),
         [](const TrainingSettings &s) {
             return QString::fromLatin1(training::optimizerKindName(s.optimizer));
         }},
        {QStringLiteral("precision"),
         [](const TrainingSettings &s) {
             return s.float32 ? QStringLiteral("float32") : QStringLiteral("float64");
         }},
        {QStringLiteral("steps"),
         [](const TrainingSettings &s) { return QString::number(s.steps); }},
        {QStringLiteral("stop at loss"),
         [](const TrainingSettings &s) {
             return s.stopAtLoss ? QStringLiteral("on") : QStringLiteral("off");
         }},
        {QStringLiteral("loss threshold"),
         [](const TrainingSettings &s) { return number(s.lossThreshold); }},
        {QStringLiteral("threshold runs"),
         [](const TrainingSettings &s) {
             return s.thresholdEither ? QStringLiteral("either") : QStringLiteral("both");
         }},
        {QStringLiteral("A \u03b1"),
         [](const TrainingSettings &s) { return number(s.a.scaleExponent); }},
        {QStringLiteral("A learning rate"),
         [](const TrainingSettings &s) { return number(s.a.learningRate); }},
        {QStringLiteral("B \u03b1"),
         [](const TrainingSettings &s) { return number(s.b.scaleExponent); }},
        {QStringLiteral("B learning rate"),
         [](const TrainingSettings &s) { return number(s.b.learningRate); }},
    };
    return list;
}

} // namespace

SetTrainingSettingsCommand::SetTrainingSettingsCommand(Apply apply, const TrainingSettings &before,
                                                       const TrainingSettings &after,
                                                       QUndoCommand *parent)
    : QUndoCommand(describeChange(before, after), parent)
    , m_apply(std::move(apply))
    , m_before(before)
    , m_after(after)
{ }

void SetTrainingSettingsCommand::redo()
{
    if (!m_apply(m_after))
        setObsolete(true);
}

void SetTrainingSettingsCommand::undo()
{
    m_apply(m_before);
}

bool SetTrainingSettingsCommand::mergeWith(const QUndoCommand *other)
{
    if (other->id() != id())
        return false;
    const auto *next = static_cast<const SetTrainingSettingsCommand *>(other);
    const QStringList mine = changedSettings(m_before, m_after);
    if (mine.size() != 1 || changedSettings(next->m_before, next->m_after) != mine
        || !(next->m_before == m_after))
        return false;
    m_after = next->m_after;
    setText(describeChange(m_before, m_after));
    setObsolete(m_before == m_after);
    return true;
}

QStringList SetTrainingSettingsCommand::changedSettings(const TrainingSettings &before,
                                                        const TrainingSettings &after)
{
    QStringList names;
    for (const Setting &s : settingsList())
        if (s.value(before) != s.value(after))
            names << s.name;
    return names;
}

QString SetTrainingSettingsCommand::describeChange(const TrainingSettings &before,
                                                   const TrainingSettings &after)
{
    QStringList changes;
    for (const Setting &s : settingsList())
        if (s.value(before) != s.value(after))
            changes << QStringLiteral("%1 = %2").arg(s.name, s.value(after));
    if (changes.isEmpty())
        return QStringLiteral("training: no change");
    if (changes.size() > 3)
        return QStringLiteral("training: %1 settings").arg(changes.size());
    return QStringLiteral("training: ") + changes.join(QStringLiteral(", "));
}

} // namespace attn
