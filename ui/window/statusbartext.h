#pragma once
// StatusBarText: the permanent labels of the main window's status bar and their text for a
// result: "d_k = 16", "scale 1/√d_k = 0.25" (scaleFormula), "worst |Σw − 1| = 2.2e-16" (or
// "row sums: 1 row NaN" first when rows hold NaN),
// "computed in 310 µs", "computing…" while the worker runs, and a red NaN/Inf warning.
// Also the banner text over the heatmaps when newer parameters were refused.

#include <QObject>
#include <QString>

class QLabel;
class QStatusBar;

namespace attn {

struct SessionParameters;
struct SessionResult;

class StatusBarText : public QObject
{
    Q_OBJECT
public:
    /// Adds `tensorsLabel` ("loaded: file.npz", not owned) and the labels (object names
    /// nonFiniteStatus, busyStatus, dkStatus, scaleStatus, rowSumStatus, timeStatus) to `bar`.
    StatusBarText(QStatusBar *bar, QLabel *tensorsLabel);

    /// The labels' text for `result` (a successful one); loaded weights show "stored weights"
    /// and "not recomputed".
    void showResult(const SessionResult &result);
    /// The row-sum label's text: "worst |Σw − 1| = 2.2e-16"; with rows holding NaN or Inf
    /// (their sum error NaN or Inf, fully masked rows left out) those are counted instead:
    /// "row sums: 1 row NaN · the other 3 rows: worst |Σw − 1| = 0", or "row sums: 3 rows NaN"
    /// when no row is finite.
    static QString rowSumText(const SessionResult &result);
    /// "computing…" while the worker computes a newer result, empty otherwise.
    void setBusy(bool busy);

    /// 0.00031 → "310 µs", 0.0123 → "12.3 ms", 2.5 → "2.50 s" (seconds in).
    static QString secondsText(double seconds);
    /// The banner over the heatmaps when `wanted` was refused while the heatmaps show the
    /// result of `shown`: the sizes that differ ("h = 4, d_k = 288" against "h = 16, d_k =
    /// 72"), then `full` (the whole message) on a second line.
    static QString notComputedNotice(const SessionParameters &wanted,
                                     const SessionParameters &shown, const QString &full);

private:
    QLabel *m_dk = nullptr;
    QLabel *m_scale = nullptr;
    QLabel *m_rowSum = nullptr;
    QLabel *m_time = nullptr;
    QLabel *m_busy = nullptr;
    QLabel *m_nonFinite = nullptr;
};

} // namespace attn
