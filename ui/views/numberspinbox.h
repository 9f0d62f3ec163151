#pragma once
// Number fields that refuse, never clamp. NumberSpinBox takes what the command line takes:
// decimal or scientific notation ("0.001", "1e-9", "2.5E3"), the value kept exactly as typed (no
// rounding to a few decimals). WholeSpinBox takes whole numbers and lets every digit be typed
// (QSpinBox drops a keystroke that would leave its range: 5000 typed into [1, 4096] became 500),
// also in scientific notation when the value is whole ("2.5e1" is 25; "2.5" is refused). Both
// read the number between the field's prefix and suffix (a unit in the field is not part of it).
// A number outside the field's range is refused: the field goes back to its value and the
// message label (when one is set) names the quantity and its range until a number is accepted;
// `refused` carries the same message. The value changes only when a number is confirmed (Return,
// leaving the field): no keyboard tracking, so a prefix of what is typed never becomes the value.

#include <QDoubleSpinBox>
#include <QSpinBox>

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

class WholeSpinBox : public QSpinBox
{
    Q_OBJECT

public:
    explicit WholeSpinBox(QWidget *parent = nullptr);

    /// The quantity's name in the refusal message, e.g. "d_model".
    void setQuantityName(const QString &name) { m_quantity = name; }
    /// The label that shows the refusal (hidden while there is none); not owned. Without one,
    /// and with nothing connected to `refused`, the refusal shows as a tooltip at the field.
    void setMessageLabel(QLabel *label);
    /// The message shown for `text` refused (empty when `text` is an accepted number).
    QString refusal(const QString &text) const;

    QValidator::State validate(QString &input, int &pos) const override;
    int valueFromText(const QString &text) const override;
    void fixup(QString &input) const override;

signals:
    /// A typed number was refused (out of range or not a whole number); `message` names the
    /// range.
    void refused(const QString &message);

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void focusOutEvent(QFocusEvent *event) override;

private:
    void checkTyped();
    void showMessage(const QString &message);
    QString withoutAffixes(const QString &text) const;
    bool isSpecialText(const QString &text) const;

    QString m_quantity;
    QLabel *m_messageLabel = nullptr;
};

} // namespace attn
