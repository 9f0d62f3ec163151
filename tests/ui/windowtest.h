#pragma once
// What the window tests (sessiontest.h, opentensorstest.h, tst_modelwindow_files.cpp) share: an
// answer to the next modal message box.

#include <QApplication>
#include <QMessageBox>
#include <QTimer>

#include <functional>
#include <memory>

namespace windowtest {

/// The texts of the message box answerNextMessageBox() answered.
struct MessageBoxAnswer
{
    QString text;
    bool seen = false;
};

/// Answers the next modal message box with `button`, recording its texts.
inline std::shared_ptr<MessageBoxAnswer> answerNextMessageBox(QMessageBox::StandardButton button
                                                              = QMessageBox::Ok)
{
    auto answer = std::make_shared<MessageBoxAnswer>();
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [answer, button, poll] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        if (!box) {
            QTimer::singleShot(20, *poll);
            return;
        }
        answer->seen = true;
        answer->text = box->text() + QLatin1Char('\n') + box->informativeText();
        box->done(button);
        *poll = nullptr; // break the cycle
    };
    QTimer::singleShot(20, *poll);
    return answer;
}

} // namespace windowtest
