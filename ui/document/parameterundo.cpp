#include "ui/document/parameterundo.h"

#include "ui/session/attentionsession.h"

#include <QCoreApplication>
#include <QStringList>

namespace attn {

SetParametersCommand::SetParametersCommand(AttentionSession *session,
                                           const SessionParameters &before,
                                           const SessionParameters &after, const QString &mergeKey,
                                           QUndoCommand *parent)
    : QUndoCommand(parent)
    , m_session(session)
    , m_before(before)
    , m_after(after)
    , m_mergeKey(mergeKey)
{
    setText(describeChange(before, after));
}

void SetParametersCommand::redo()
{
    m_session->setParameters(m_after);
    if (!(m_session->parameters() == m_after))
        setObsolete(true); // rejected: nothing to undo
}

void SetParametersCommand::undo()
{
    m_session->setParameters(m_before);
}

int SetParametersCommand::id() const
{
    return m_mergeKey.isEmpty() ? -1 : mergeId;
}

bool SetParametersCommand::mergeWith(const QUndoCommand *other)
{
    const auto *next = dynamic_cast<const SetParametersCommand *>(other);
    if (!next || next->m_mergeKey != m_mergeKey || next->m_session != m_session
        || !(next->m_before == m_after))
        return false;
    m_after = next->m_after;
    setText(describeChange(m_before, m_after));
    setObsolete(m_before == m_after); // dragged back to where it started
    return true;
}

QString SetParametersCommand::describeChange(const SessionParameters &before,
                                             const SessionParameters &after)
{
    auto tr = [](const char *text) {
        return QCoreApplication::translate("attn::SetParametersCommand", text);
    };
    auto number = [](double v) { return QString::number(v, 'g', 4); };
    QStringList parts;
    if (before.kind != after.kind)
        parts << tr("attention = %1").arg(attentionKindName(after.kind));
    if (before.n != after.n)
        parts << QStringLiteral("n = %1").arg(after.n);
    if (before.nK != after.nK)
        parts << QStringLiteral("n_k = %1").arg(after.nK);
    if (before.dModel != after.dModel)
        parts << QStringLiteral("d_model = %1").arg(after.dModel);
    if (before.heads != after.heads)
        parts << QStringLiteral("h = %1").arg(after.heads);
    if (before.seed != after.seed)
        parts << tr("seed = %1").arg(after.seed);
    if (before.mask != after.mask)
        parts << tr("mask = %1").arg(maskChoiceName(after.mask));
    if (before.paddingCount != after.paddingCount)
        parts << tr("padding = %1").arg(after.paddingCount);
    if (before.scaleExponent != after.scaleExponent)
        parts << QStringLiteral("\u03b1 = %1").arg(number(after.scaleExponent));
    if (before.temperature != after.temperature)
        parts << QStringLiteral("\u03c4 = %1").arg(number(after.temperature));
    if (before.positional != after.positional)
        parts << (after.positional ? tr("positional encoding on") : tr("positional encoding off"));
    if (before.dtype != after.dtype)
        parts << dtypeId(after.dtype);
    if (before.tokens != after.tokens)
        parts << tr("tokens");
    if (parts.isEmpty())
        return tr("parameters");
    if (parts.size() > 3)
        return tr("%1 parameters").arg(parts.size());
    return parts.join(QStringLiteral(", "));
}

} // namespace attn
