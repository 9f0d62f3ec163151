#pragma once
// Undo of parameter changes (after Tiled's MapDocument, which owns the QUndoStack and pushes one
// command per edit). A SetParametersCommand moves the AttentionSession from one SessionParameters
// value to another; the session's parametersChanged signal brings the controls and, through the
// recomputed result, the heatmaps along. Consecutive commands with the same merge key (one slider
// drag) merge into one, so a drag is undone in one step.

#include "ui/session/sessionparameters.h"

#include <QString>
#include <QUndoCommand>

namespace attn {

class AttentionSession;

class SetParametersCommand : public QUndoCommand
{
public:
    /// QUndoCommand::id() of mergeable commands (those with a merge key).
    static constexpr int mergeId = 0x41544e; // "ATN"

    /// `mergeKey` non-empty: merges with a directly preceding command of the same key (for
    /// example "alphaSlider#3": the third drag of the α slider).
    SetParametersCommand(AttentionSession *session, const SessionParameters &before,
                         const SessionParameters &after, const QString &mergeKey = {},
                         QUndoCommand *parent = nullptr);

    /// Sets `after`. When the session rejects it (invalid parameters) the command marks itself
    /// obsolete, so QUndoStack::push drops it.
    void redo() override;
    /// Sets `before`.
    void undo() override;
    int id() const override;
    /// Takes over the newer command's `after`; becomes obsolete when that returns to `before`.
    bool mergeWith(const QUndoCommand *other) override;

    const SessionParameters &before() const { return m_before; }
    const SessionParameters &after() const { return m_after; }
    QString mergeKey() const { return m_mergeKey; }

    /// "n = 32", "d_model = 128, h = 8", "mask = causal", "3 parameters" (more than three
    /// fields changed): the text of Edit → Undo/Redo.
    static QString describeChange(const SessionParameters &before, const SessionParameters &after);

private:
    AttentionSession *m_session;
    SessionParameters m_before;
    SessionParameters m_after;
    QString m_mergeKey;
};

} // namespace attn
