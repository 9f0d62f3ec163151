#include "ui/views/numberspinbox.h"

#include <QFocusEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QRegularExpression>

#include <cfloat>
#include <cmath>
#include <optional>

namespace attn {

namespace {

// A number in C notation or the user's locale; nothing when `text` is not a finite number.
std::optional<double> parseNumber(const QString &text)
{
    const QString trimmed = text.trimmed();
    bool ok = false;
    double value = QLocale::c().toDouble(trimmed, &ok);
    if (!ok)
        value = QLocale().toDouble(trimmed, &ok);
    if (!ok || !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace

NumberSpinBox::NumberSpinBox(QWidget *parent)
    : QDoubleSpinBox(parent)
{
    // The most decimals QDoubleSpinBox allows: values are kept as typed, never rounded.
    setDecimals(DBL_MAX_10_EXP + DBL_DIG);
    // A number accepted (typed, stepped or set) ends the refusal shown.
    connect(this, &QDoubleSpinBox::valueChanged, this, [this] { showMessage({}); });
}

void NumberSpinBox::setMessageLabel(QLabel *label)
{
    m_messageLabel = label;
    if (m_messageLabel) {
        m_messageLabel->setWordWrap(true);
        m_messageLabel->setVisible(!m_messageLabel->text().isEmpty());
    }
}

QString NumberSpinBox::refusal(const QString &text) const
{
    const QString typed = text.trimmed();
    const auto value = parseNumber(typed);
    if (value && *value >= minimum() && *value <= maximum())
        return {};
    const QString name = m_quantity.isEmpty() ? tr("The value") : m_quantity;
    const QString range = tr("%1 must be between %2 and %3")
                              .arg(name, textFromValue(minimum()), textFromValue(maximum()));
    if (!value)
        return tr("%1 — “%2” is not a number; kept %3.")
            .arg(range, typed, textFromValue(this->value()));
    return tr("%1 — %2 refused; kept %3.").arg(range, typed, textFromValue(this->value()));
}

QValidator::State NumberSpinBox::validate(QString &input, int &pos) const
{
    Q_UNUSED(pos);
    // Anything that can still become a number while typing: a sign, digits, one decimal
    // point (C or the locale's), an exponent with its sign.
    static const QRegularExpression partial(
        QStringLiteral("^\\s*[+-]?[0-9]*([.,][0-9]*)?([eE][+-]?[0-9]*)?\\s*$"));
    if (!partial.match(input).hasMatch())
        return QValidator::Invalid;
    const auto value = parseNumber(input);
    if (!value)
        return QValidator::Intermediate;
    return *value >= minimum() && *value <= maximum() ? QValidator::Acceptable
                                                      : QValidator::Intermediate;
}

double NumberSpinBox::valueFromText(const QString &text) const
{
    return parseNumber(text).value_or(value());
}

QString NumberSpinBox::textFromValue(double value) const
{
    return QLocale::c().toString(value, 'g', QLocale::FloatingPointShortest);
}

void NumberSpinBox::fixup(QString &input) const
{
    // Nothing is adjusted: a number out of range is refused, not clamped.
    Q_UNUSED(input);
}

void NumberSpinBox::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter)
        checkTyped();
    QDoubleSpinBox::keyPressEvent(event);
}

void NumberSpinBox::focusOutEvent(QFocusEvent *event)
{
    checkTyped();
    QDoubleSpinBox::focusOutEvent(event);
}

void NumberSpinBox::checkTyped()
{
    const QString message = refusal(text());
    showMessage(message);
    if (!message.isEmpty())
        emit refused(message);
}

void NumberSpinBox::showMessage(const QString &message)
{
    if (!m_messageLabel)
        return;
    m_messageLabel->setText(message);
    m_messageLabel->setVisible(!message.isEmpty());
}

} // namespace attn
