#pragma once
// The number fields of the Training tab's pages: a range, a tooltip, and no keyboard tracking
// (a value applies when the field is left or Enter is pressed, not at every keystroke). An
// integer typed outside the range is refused (WholeSpinBox::refused), not cut to fewer digits.

#include "ui/views/numberspinbox.h"

#include <QDoubleSpinBox>
#include <QString>

namespace attn {

/// An integer field on [lo, hi].
inline WholeSpinBox *intBox(int lo, int hi, const QString &tip)
{
    auto *b = new WholeSpinBox;
    b->setRange(lo, hi);
    b->setToolTip(tip);
    b->setKeyboardTracking(false);
    return b;
}

/// A real field on [lo, hi] with arrow steps of `step` and `decimals` decimals.
inline QDoubleSpinBox *realBox(double lo, double hi, double step, int decimals, const QString &tip)
{
    auto *b = new QDoubleSpinBox;
    b->setRange(lo, hi);
    b->setSingleStep(step);
    b->setDecimals(decimals);
    b->setToolTip(tip);
    b->setKeyboardTracking(false);
    return b;
}

} // namespace attn
