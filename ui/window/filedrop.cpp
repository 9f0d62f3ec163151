#include "ui/window/filedrop.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QTimer>
#include <QUrl>
#include <QWidget>

namespace attn {

DroppedFileKind droppedFileKind(const QString &path)
{
    const QString lower = path.toLower();
    if (lower.endsWith(QLatin1String(".json")))
        return DroppedFileKind::Session; // .attnlab.json included
    if (lower.endsWith(QLatin1String(".npz")) || lower.endsWith(QLatin1String(".npy")))
        return DroppedFileKind::Tensors;
    return DroppedFileKind::None;
}

FileDrop::FileDrop(QWidget *window, std::function<bool(const QString &)> openSession,
                   std::function<bool(const QString &)> openTensors)
    : QObject(window)
    , m_openSession(std::move(openSession))
    , m_openTensors(std::move(openTensors))
{
    window->setAcceptDrops(true);
    window->installEventFilter(this);
}

QString FileDrop::openableFile(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl &url : mime->urls())
        if (url.isLocalFile() && droppedFileKind(url.toLocalFile()) != DroppedFileKind::None)
            return url.toLocalFile();
    return {};
}

bool FileDrop::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
        auto *drag = static_cast<QDragMoveEvent *>(event);
        if (!openableFile(drag->mimeData()).isEmpty()) {
            drag->acceptProposedAction();
            return true;
        }
    } else if (event->type() == QEvent::Drop) {
        auto *drop = static_cast<QDropEvent *>(event);
        const QString path = openableFile(drop->mimeData());
        if (!path.isEmpty()) {
            drop->acceptProposedAction();
            // Opened after the drop returns: the save question and error boxes are modal, and
            // the drag source (a file manager) must not wait for them.
            QTimer::singleShot(0, this, [this, path] {
                if (droppedFileKind(path) == DroppedFileKind::Session)
                    m_openSession(path);
                else
                    m_openTensors(path);
            });
            return true;
        }
    }
    return QObject::eventFilter(watched, event);
}

} // namespace attn
