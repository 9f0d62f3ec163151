#pragma once
// Files dropped on the window: a session file opens as File → Open Session does (asking to save
// unsaved changes first), a tensor file as File → Open Tensors does.

#include <QObject>
#include <QString>

#include <functional>

class QMimeData;
class QWidget;

namespace attn {

/// What a dropped file is opened as, by its name: Session for ".attnlab.json" and ".json",
/// Tensors for ".npz" and ".npy" (case-insensitive), None otherwise.
enum class DroppedFileKind { None, Session, Tensors };
DroppedFileKind droppedFileKind(const QString &path);

/// Event filter on a top-level window (which it sets to accept drops): a drag of local files is
/// accepted when one of them has a known kind, and the drop opens the first such file with
/// `openSession` or `openTensors` (each shows its own error message and returns whether the file
/// was opened). Other drags (text, URLs that are not local files) are left to the widgets.
class FileDrop : public QObject
{
    Q_OBJECT

public:
    FileDrop(QWidget *window, std::function<bool(const QString &)> openSession,
             std::function<bool(const QString &)> openTensors);

    /// The first local file of the drag's URLs with a known kind, or an empty string.
    static QString openableFile(const QMimeData *mime);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    std::function<bool(const QString &)> m_openSession;
    std::function<bool(const QString &)> m_openTensors;
};

} // namespace attn
