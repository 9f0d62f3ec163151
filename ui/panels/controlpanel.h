#pragma once
// ControlPanel: the main view's controls, turned into SessionParameters. Every edit (including
// each step of a slider drag: tracking is on) emits parametersEdited exactly once, and only
// when the parameters actually changed. The panel holds no state beyond the parameters it
// shows; AttentionSession owns them and pushes them back with setParameters().

#include "ui/session/sessionparameters.h"

#include <QList>
#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSlider;
class QSpinBox;

namespace attn {

class ControlPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ControlPanel(QWidget *parent = nullptr);

    /// The parameters the controls show.
    SessionParameters parameters() const { return m_params; }
    /// Shows `params` in the controls without emitting parametersEdited.
    void setParameters(const SessionParameters &params);

    /// Divisors of n in increasing order (the h choices for d_model = n); empty for n < 1
    /// (attn::divisors, as a list for the combo boxes).
    static QList<int> divisors(int n);

    /// Ranges of the controls: the parameters' own limits (core/engine/engineparameters.h).
    static constexpr int maxN = int(EngineParameters::maxSequence); ///< n and n_k: 1 … 4096
    static constexpr int maxDModel = int(EngineParameters::maxDModel); ///< d_model: 1 … 4096

public slots:
    /// Toggles the "1/√d_k" checkbox (α = 0.5 ⇔ checked; unchecking gives α = 0, unscaled).
    void toggleScaled();
    /// none → causal → key padding → none.
    void cycleMask();
    /// d_k ← d_k · factor (rounded, at least 1), keeping h: d_model = d_k · h.
    void multiplyDk(double factor);
    /// seed ← seed + 1.
    void nextSeed();

signals:
    void parametersEdited(const attn::SessionParameters &params);
    /// A new note under the controls (a refused number, h moved to a divisor of d_model, a rule
    /// of the mask), for the status bar: the notes sit below every field, perhaps out of view.
    void noteShown(const QString &text);

private:
    /// Applies `change` to a copy of the parameters, fixes dependent values (h must divide
    /// d_model, padding ≤ n_k), updates the widgets and emits once if anything changed.
    void edit(const std::function<void(SessionParameters &)> &change);
    void normalize(SessionParameters &p) const;
    void syncWidgets();
    void buildUi();
    /// A whole-number field of `parent` whose refusals (a number out of its range) name
    /// `quantity` in noteShown.
    QSpinBox *wholeField(QWidget *parent, const QString &quantity);

    SessionParameters m_params;

    QSpinBox *m_nSpin = nullptr;
    QSlider *m_nSlider = nullptr;
    QComboBox *m_kindCombo = nullptr;
    QSpinBox *m_nKSpin = nullptr;
    QSpinBox *m_seedSpin = nullptr;
    QComboBox *m_generatorCombo = nullptr;
    QCheckBox *m_positionalCheck = nullptr;
    QComboBox *m_schemeCombo = nullptr; ///< none / RoPE interleaved / RoPE half / ALiBi
    QDoubleSpinBox *m_ropeBaseSpin = nullptr;
    QLineEdit *m_tokensEdit = nullptr; ///< typed sentence: tokens label the axes, n follows
    QComboBox *m_dtypeCombo = nullptr;

    QSpinBox *m_dModelSpin = nullptr;
    QComboBox *m_headsCombo = nullptr;
    QLabel *m_dkLabel = nullptr;
    QSlider *m_dkSlider = nullptr;
    QLabel *m_headsNoteLabel = nullptr;
    QString m_headsNote; ///< why h changed in the last edit (empty: it did not)
    QComboBox *m_kvHeadsCombo = nullptr; ///< g, divisors of h
    QLabel *m_headsInfoLabel = nullptr; ///< parameter count and KV cache per token

    QSlider *m_alphaSlider = nullptr;
    QLabel *m_alphaLabel = nullptr;
    QCheckBox *m_sqrtCheck = nullptr;
    QDoubleSpinBox *m_temperatureSpin = nullptr;
    QLabel *m_scaleLabel = nullptr;

    QComboBox *m_maskCombo = nullptr;
    QSpinBox *m_paddingSpin = nullptr;
    QSpinBox *m_windowSpin = nullptr; ///< sliding window w, 0 = off
    QSpinBox *m_sinksSpin = nullptr;
    QComboBox *m_variantCombo = nullptr; ///< none, learned sink, differential attention, MLA
    QDoubleSpinBox *m_sinkLogitSpin = nullptr; ///< b of the learned sink
    QDoubleSpinBox *m_lambdaSpin = nullptr; ///< λ of differential attention
    QLineEdit *m_headLambdasEdit = nullptr; ///< λ per head ("0.2, 0.5, …"; empty: λ above)
    QLabel *m_variantNote = nullptr; ///< why a per-head λ list was refused
    QCheckBox *m_gateCheck = nullptr; ///< the head-wise output gate
    QDoubleSpinBox *m_gateBiasSpin = nullptr; ///< the gate's bias b
    QSpinBox *m_latentDimSpin = nullptr; ///< MLA's d_c
    QSpinBox *m_latentRopeDimSpin = nullptr; ///< MLA's d_r
    QCheckBox *m_absorbedCheck = nullptr; ///< MLA computed against the cache (W_UK absorbed)
    QLabel *m_maskNote = nullptr;
    QString m_tokensToolTip; ///< the tokens field's tooltip while no tensors are loaded
    /// The padding count the user chose (−1: none yet). The parameters carry it clamped to the
    /// number of keys; shrinking n does not destroy it.
    int m_paddingWanted = -1;
};

} // namespace attn
