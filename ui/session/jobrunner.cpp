#include "ui/session/jobrunner.h"

#include "ui/session/handover.h"

#include <QCoreApplication>

#include <QEventLoop>
#include <QMetaObject>

#include <algorithm>

namespace attn {

JobRunner::JobRunner(QObject *parent, int maxThreads)
    : QObject(parent)
{
    m_pool.setMaxThreadCount(std::max(1, maxThreads));
}

JobRunner::~JobRunner()
{
    if (m_cancel)
        m_cancel->store(true);
    m_pool.waitForDone(); // before the object goes: the jobs post to it
}

void JobRunner::start(std::function<Delivery(const JobContext &)> job)
{
    if (m_cancel)
        m_cancel->store(true); // superseded
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancel;
    const quint64 generation = ++m_generation;
    setBusy(true);
    startOn(m_pool, [this, job = std::move(job), cancel, generation] {
        JobContext context;
        context.cancel = CancelToken(cancel.get());
        context.progress = [this, cancel, generation](double fraction) {
            if (cancel->load(std::memory_order_relaxed))
                return;
            postTo(this, [this, generation, fraction] {
                if (generation == m_generation)
                    emit progressChanged(fraction);
            });
        };
        Delivery delivery;
        QString error;
        bool cancelled = false;
        try {
            delivery = job(context);
        } catch (const Cancelled &) {
            cancelled = true;
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        } catch (...) {
            error = QStringLiteral("unknown error");
        }
        if (cancelled)
            delivery = nullptr;
        // The runner outlives its jobs (the destructor waits), so posting to it is safe.
        postTo(this, [this, generation, delivery = std::move(delivery), error, cancelled] {
            if (cancelled && generation == m_generation) {
                setBusy(false); // stopped by its own token: nothing to deliver
                emit this->cancelled();
            } else if (!cancelled)
                finish(generation, delivery, error);
        });
    });
}

void JobRunner::finish(quint64 generation, const Delivery &delivery, const QString &error)
{
    if (generation != m_generation)
        return; // superseded: dropped
    setBusy(false);
    if (!error.isEmpty())
        emit failed(error);
    else if (delivery)
        delivery();
}

void JobRunner::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
    ++m_generation; // whatever the running job returns is dropped
    setBusy(false);
}

void JobRunner::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

void JobRunner::waitWhileBusy(const bool *done)
{
    if (*done || !m_busy)
        return;
    QEventLoop loop;
    const QMetaObject::Connection c
        = connect(this, &JobRunner::busyChanged, &loop, [&loop](bool busy) {
              if (!busy)
                  loop.quit();
          });
    // The delivery runs right after busy turns false (finish): the loop ends, then it arrives.
    while (m_busy)
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    disconnect(c);
}

void JobRunner::waitUntilIdle()
{
    while (isBusy()) {
        waitForDone();
        QCoreApplication::processEvents();
    }
}

} // namespace attn
