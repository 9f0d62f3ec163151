#pragma once
// A number field that takes what the command line takes: decimal or scientific notation
// ("0.001", "1e-9", "2.5E3"), the value kept exactly as typed (no rounding to a few decimals).
// A number outside the field's range is refused, never clamped: the field goes back to its
// value and the message label (when one is set) names the quantity and its range until a
// number is accepted.

#include <QDoubleSpinBox>

class QLabel;

namespace attn {

class NumberSpinBox : public QDoubleSpinBox
{
    Q_OBJECT

public:
    explicit NumberSpinBox(QWidget *parent = nullptr);

    /// The quantity's name in the refusal message, e.g. "τ".
    void setQuantityName(const QString &name) { m_quantity = name; }
    /// The label that shows the refusal (hidden while there is none); not owned.
    void setMessageLabel(QLabel *label);
    /// The message shown for `text` refused (empty when `text` is an accepted number).
    QString refusal(const QString &text) const;

    QValidator::State validate(QString &input, int &pos) const override;
    double valueFromText(const QString &text) const override;
    QString textFromValue(double value) const override;
    void fixup(QString &input) const override;

signals:
    /// A typed number was refused (out of range or not a number); `message` names the range.
    void refused(const QString &message);

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void focusOutEvent(QFocusEvent *event) override;

private:
    void checkTyped();
    void showMessage(const QString &message);

    QString m_quantity;
    QLabel *m_messageLabel = nullptr;
};

} // namespace attn
