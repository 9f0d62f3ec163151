#pragma once
// TensorPanel: the "Tensors" dock of File → Open tensors…. Shows what was loaded
// (file, content, notes), the layer and head selectors, the meaning of True in the file's
// boolean masks, the token-label field with "From File…", the check of the shown weights (rows
// that do not sum to 1, NaN/Inf) and "Back to Random Inputs". It only displays and emits
// requests; TensorController acts on them.

#include "core/io/tensorcase.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace attn {

class TensorSource;
struct SessionParameters;
struct SessionResult;

class TensorPanel : public QWidget
{
    Q_OBJECT
public:
    explicit TensorPanel(QWidget *parent = nullptr);

    /// Shows the loaded tensors of `params` (or that none are loaded) without emitting.
    void setParameters(const SessionParameters &params);
    /// Shows the check of the result's weights and syncs the head selector's entries.
    void setResult(const std::shared_ptr<const SessionResult> &result);
    /// Selects head `head` in the head selector (−1 = all heads, h = mean) without emitting.
    void setCurrentHead(int head);
    /// A message about the token labels (wrong count …); empty hides it.
    void setTokenMessage(const QString &message);

    QLabel *fileLabel() const { return m_fileLabel; }
    QSpinBox *layerSpin() const { return m_layerSpin; }
    QComboBox *headCombo() const { return m_headCombo; }
    QComboBox *conventionCombo() const { return m_conventionCombo; }
    QLineEdit *tokensEdit() const { return m_tokensEdit; }
    QLabel *tokenMessageLabel() const { return m_tokenMessage; }
    QLabel *checkLabel() const { return m_checkLabel; }
    QPushButton *backButton() const { return m_backButton; }

signals:
    void layerRequested(int layer);
    /// −1 = all heads (grid), 0 … h−1 one head, h the mean.
    void headRequested(int head);
    void maskConventionRequested(attn::MaskConvention convention);
    /// The typed labels (split at white space), applied on Enter or when the field loses focus.
    void tokensTyped(const QString &text);
    void tokenFileRequested();
    void backRequested();

private:
    QLabel *m_fileLabel = nullptr;
    QLabel *m_notesLabel = nullptr;
    QLabel *m_layerLabel = nullptr;
    QSpinBox *m_layerSpin = nullptr;
    QComboBox *m_headCombo = nullptr;
    QLabel *m_conventionLabel = nullptr;
    QComboBox *m_conventionCombo = nullptr;
    QLineEdit *m_tokensEdit = nullptr;
    QPushButton *m_tokensButton = nullptr;
    QLabel *m_tokenMessage = nullptr;
    QLabel *m_checkLabel = nullptr;
    QPushButton *m_backButton = nullptr;
    std::shared_ptr<const TensorSource> m_source;
    int m_heads = 0;
};

} // namespace attn
