#pragma once
// Undo of the Training tab's settings, beside the parameter undo (parameterundo.h) on the same
// QUndoStack, so a settings change marks the session modified and Edit → Undo takes it back.
// A SetTrainingSettingsCommand moves the tab from one TrainingSettings value to another through
// an apply function (the tab's setSettings). Consecutive changes of the same single setting
// (typing 0.001 into a learning-rate box, spinning a spin box) merge into one command.

#include "ui/session/trainingsettings.h"

#include <QString>
#include <QUndoCommand>

#include <functional>

namespace attn {

class SetTrainingSettingsCommand : public QUndoCommand
{
public:
    /// QUndoCommand::id() of these commands (merging needs one).
    static constexpr int mergeId = 0x54524e; // "TRN"
    /// Shows and applies settings; false when they are refused.
    using Apply = std::function<bool(const TrainingSettings &)>;

    /// `before` is what the tab showed, `after` what it shows now (already applied: the first
    /// redo() applies it again, which changes nothing).
    SetTrainingSettingsCommand(Apply apply, const TrainingSettings &before,
                               const TrainingSettings &after, QUndoCommand *parent = nullptr);

    void redo() override;
    void undo() override;
    int id() const override { return mergeId; }
    /// Merges a directly following change of the same single setting; becomes obsolete when
    /// that returns to `before`.
    bool mergeWith(const QUndoCommand *other) override;

    const TrainingSettings &before() const { return m_before; }
    const TrainingSettings &after() const { return m_after; }

    /// The names of the settings that differ, in the tab's order ("A learning rate", "h", …).
    static QStringList changedSettings(const TrainingSettings &before,
                                       const TrainingSettings &after);
    /// The text of Edit → Undo/Redo: "training: A learning rate = 0.001", "training: 3
    /// settings".
    static QString describeChange(const TrainingSettings &before, const TrainingSettings &after);

private:
    Apply m_apply;
    TrainingSettings m_before;
    TrainingSettings m_after;
};

} // namespace attn
