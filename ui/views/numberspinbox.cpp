#include "ui/views/numberspinbox.h"

#include <QFocusEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QMetaMethod>
#include <QRegularExpression>
#include <QToolTip>

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

// Whether `text` is written as a number (C notation) even if it does not fit a double or 64 bits:
// "1e-400" and "99999999999999999999" are numbers out of range, not "not a number".
bool writtenAsNumber(const QString &text)
{
    static const QRegularExpression number(
        QStringLiteral("^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$"));
    return number.match(text.trimmed()).hasMatch();
}

// A whole number in C notation, also written with a fraction or an exponent when its value is
// whole ("2.5e1" is 25, "1e3" 1000); nothing when `text` is not one (or does not fit 64 bits,
// or is beyond 2^53 in scientific notation).
std::optional<qlonglong> parseWhole(const QString &text)
{
    bool ok = false;
    const qlonglong value = QLocale::c().toLongLong(text.trimmed(), &ok);
    if (ok)
        return value;
    const double real = QLocale::c().toDouble(text.trimmed(), &ok);
    if (!ok || !std::isfinite(real) || real != std::floor(real) || std::abs(real) > 0x1p53)
        return std::nullopt;
    return qlonglong(real);
}

// `text` without the field's prefix and suffix ("4 frames/s" → "4").
QString withoutAffixes(const QString &text, const QString &prefix, const QString &suffix)
{
    QString core = text.trimmed();
    if (!prefix.trimmed().isEmpty() && core.startsWith(prefix.trimmed()))
        core.remove(0, prefix.trimmed().size());
    if (!suffix.trimmed().isEmpty() && core.endsWith(suffix.trimmed()))
        core.chop(suffix.trimmed().size());
    return core.trimmed();
}

// "<name> must be between <lo> and <hi> — <typed> refused; kept <kept>." (or "… is not a number").
QString refusalText(const QString &quantity, const QString &lo, const QString &hi,
                    const QString &typed, bool isNumber, const QString &kept)
{
    const QString name = quantity.isEmpty() ? QObject::tr("The value") : quantity;
    const QString range = QObject::tr("%1 must be between %2 and %3").arg(name, lo, hi);
    if (!isNumber)
        return QObject::tr("%1 — “%2” is not a number; kept %3.").arg(range, typed, kept);
    return QObject::tr("%1 — %2 refused; kept %3.").arg(range, typed, kept);
}

// Shows `message` on `label` (hidden while empty); no label: nothing.
void showOn(QLabel *label, const QString &message)
{
    if (!label)
        return;
    label->setText(message);
    label->setVisible(!message.isEmpty());
}

void prepareLabel(QLabel *label)
{
    if (label) {
        label->setWordWrap(true);
        label->setVisible(!label->text().isEmpty());
    }
}

bool confirmsEdit(const QKeyEvent *event)
{
    return event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
}

} // namespace

NumberSpinBox::NumberSpinBox(QWidget *parent)
    : QDoubleSpinBox(parent)
{
    // The most decimals QDoubleSpinBox allows: values are kept as typed, never rounded.
    setDecimals(DBL_MAX_10_EXP + DBL_DIG);
    // The value is the number confirmed (Return, leaving the field), never a prefix of it: "1"
    // of a refused "1e-9" must not become the value on the way.
    setKeyboardTracking(false);
    // A number accepted (typed, stepped or set) ends the refusal shown.
    connect(this, &QDoubleSpinBox::valueChanged, this, [this] { showMessage({}); });
}

void NumberSpinBox::setMessageLabel(QLabel *label)
{
    m_messageLabel = label;
    prepareLabel(label);
}

QString NumberSpinBox::refusal(const QString &text) const
{
    const QString typed = withoutAffixes(text, prefix(), suffix());
    const auto value = parseNumber(typed);
    if (value && *value >= minimum() && *value <= maximum())
        return {};
    return refusalText(m_quantity, textFromValue(minimum()), textFromValue(maximum()), typed,
                       value.has_value() || writtenAsNumber(typed), textFromValue(this->value()));
}

QValidator::State NumberSpinBox::validate(QString &input, int &pos) const
{
    Q_UNUSED(pos);
    // Anything that can still become a number while typing: a sign, digits, one decimal
    // point (C or the locale's), an exponent with its sign.
    static const QRegularExpression partial(
        QStringLiteral("^\\s*[+-]?[0-9]*([.,][0-9]*)?([eE][+-]?[0-9]*)?\\s*$"));
    const QString core = withoutAffixes(input, prefix(), suffix());
    if (!partial.match(core).hasMatch())
        return QValidator::Invalid;
    const auto value = parseNumber(core);
    if (!value)
        return QValidator::Intermediate;
    return *value >= minimum() && *value <= maximum() ? QValidator::Acceptable
                                                      : QValidator::Intermediate;
}

double NumberSpinBox::valueFromText(const QString &text) const
{
    return parseNumber(withoutAffixes(text, prefix(), suffix())).value_or(value());
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
    if (confirmsEdit(event))
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
    showOn(m_messageLabel, message);
}

WholeSpinBox::WholeSpinBox(QWidget *parent)
    : QSpinBox(parent)
{
    setKeyboardTracking(false); // "9" of a refused 99999 never becomes the value
    connect(this, &QSpinBox::valueChanged, this, [this] { showMessage({}); });
}

void WholeSpinBox::setMessageLabel(QLabel *label)
{
    m_messageLabel = label;
    prepareLabel(label);
}

QString WholeSpinBox::withoutAffixes(const QString &text) const
{
    return attn::withoutAffixes(text, prefix(), suffix());
}

bool WholeSpinBox::isSpecialText(const QString &text) const
{
    return !specialValueText().isEmpty() && text.trimmed() == specialValueText().trimmed();
}

QString WholeSpinBox::refusal(const QString &text) const
{
    if (isSpecialText(text))
        return {};
    const QString typed = withoutAffixes(text);
    const auto value = parseWhole(typed);
    if (value && *value >= minimum() && *value <= maximum())
        return {};
    return refusalText(m_quantity, QString::number(minimum()), QString::number(maximum()), typed,
                       value.has_value() || writtenAsNumber(typed), QString::number(this->value()));
}

QValidator::State WholeSpinBox::validate(QString &input, int &pos) const
{
    Q_UNUSED(pos);
    if (isSpecialText(input))
        return QValidator::Acceptable;
    // Anything that can still become a number while typing (between the prefix and the
    // suffix): a sign, digits, a decimal point, an exponent with its sign. A number that is not
    // whole is refused when confirmed, never cut to its digits ("2.5e1" is 25, not 251).
    const QString core = withoutAffixes(input);
    static const QRegularExpression partial(
        QStringLiteral("^[+-]?[0-9]*(\\.[0-9]*)?([eE][+-]?[0-9]*)?$"));
    if (!partial.match(core).hasMatch())
        return QValidator::Invalid;
    const auto value = parseWhole(core);
    if (!value)
        return QValidator::Intermediate;
    return *value >= minimum() && *value <= maximum() ? QValidator::Acceptable
                                                      : QValidator::Intermediate;
}

int WholeSpinBox::valueFromText(const QString &text) const
{
    if (isSpecialText(text))
        return minimum();
    const auto value = parseWhole(withoutAffixes(text));
    return value && *value >= minimum() && *value <= maximum() ? int(*value) : this->value();
}

void WholeSpinBox::fixup(QString &input) const
{
    // Nothing is adjusted: a number out of range is refused, not clamped.
    Q_UNUSED(input);
}

void WholeSpinBox::keyPressEvent(QKeyEvent *event)
{
    if (confirmsEdit(event))
        checkTyped();
    QSpinBox::keyPressEvent(event);
}

void WholeSpinBox::focusOutEvent(QFocusEvent *event)
{
    checkTyped();
    QSpinBox::focusOutEvent(event);
}

void WholeSpinBox::checkTyped()
{
    const QString message = refusal(text());
    showMessage(message);
    if (!message.isEmpty())
        emit refused(message);
}

void WholeSpinBox::showMessage(const QString &message)
{
    showOn(m_messageLabel, message);
    // Neither a label nor a listener: the refusal is shown beside the field.
    if (!m_messageLabel && !message.isEmpty()
        && !isSignalConnected(QMetaMethod::fromSignal(&WholeSpinBox::refused)))
        QToolTip::showText(mapToGlobal(QPoint(0, height())), message, this);
}

} // namespace attn
