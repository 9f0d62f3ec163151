#include "ui/window/tour.h"

#include "ui/session/sessionparameters.h"
#include "ui/window/mainwindow.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDockWidget>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLayout>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace attn {

namespace {

/// The outline drawn over the target: a rounded orange frame that lets clicks through.
class Highlight : public QWidget
{
public:
    using QWidget::QWidget;

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(QColor(255, 140, 0), 3));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(QRectF(rect()).adjusted(1.5, 1.5, -1.5, -1.5), 4, 4);
    }
};

constexpr int kCalloutWidth = 300; // narrower than the Controls column at 1280 × 800

} // namespace

Tour::Tour(MainWindow *window)
    : QObject(window)
    , m_window(window)
{
    setObjectName(QStringLiteral("tour"));
    m_action = new QAction(tr("Guided &Tour"), this);
    m_action->setObjectName(QStringLiteral("tourAction"));
    m_action->setStatusTip(tr("A few steps over the window: the scale, d_k, the charts, the "
                              "causal mask and positions"));
    connect(m_action, &QAction::triggered, this, &Tour::start);

    auto find = [window](const char *name) { return window->findChild<QWidget *>(name); };
    m_steps = {
        {tr("The heatmaps"),
         tr("Each tile shows one head's attention weights: row i is query i's weights over the "
            "keys j (they sum to 1). Bright cells take most of the weight; hover one for its "
            "numbers."),
         QStringLiteral("heatmapWidget"),
         {},
         {}},
        {tr("Turn the scale off"),
         tr("\u201cScale by 1/\u221ad_k\u201d divides the scores QK\u1d40 by \u221ad_k. With it "
            "off (\u03b1 = 0, as on a first start) the scores grow with d_k and the softmax "
            "saturates: most rows put nearly all their weight on one key. Tick it to compare, "
            "then untick it again."),
         QStringLiteral("sqrtCheck"), tr("Tick or untick it"),
         [find] {
             if (auto *c = qobject_cast<QCheckBox *>(find("sqrtCheck")))
                 c->setChecked(!c->isChecked());
         }},
        {tr("Turn d_k up"),
         tr("Drag d_k to the right. Without the scale every doubling of d_k makes the scores "
            "\u221a2 times wider and the rows sharper; tick the scale again and they stay as "
            "they were."),
         QStringLiteral("dkSlider"), tr("Double d_k (scale off)"),
         [find] {
             // The step shows the unscaled growth: with the scale left on by the step before,
             // doubling d_k would barely change the map, against the text.
             if (auto *c = qobject_cast<QCheckBox *>(find("sqrtCheck")))
                 c->setChecked(false);
             if (auto *s = qobject_cast<QSlider *>(find("dkSlider")))
                 s->setValue(std::min(s->maximum(), s->value() + s->pageStep()));
         }},
        {tr("Watch max weight and \u2016J\u2016"),
         tr("These charts sweep d_k: unscaled, the largest weight climbs toward 1 and the "
            "softmax Jacobian norm \u2016J\u2016 falls toward 0 (little gradient flows back); "
            "scaled by 1/\u221ad_k both stay flat. The marker is your d_k."),
         QStringLiteral("maxWeightDock"),
         {},
         {}},
        {tr("The causal mask"),
         tr("Choose \u201cCausal\u201d: query i may only look at keys j \u2264 i, as in a "
            "decoder. The future keys are hatched and get exactly zero weight."),
         QStringLiteral("maskCombo"), tr("Mask the future"),
         [find] {
             if (auto *c = qobject_cast<QComboBox *>(find("maskCombo")))
                 c->setCurrentIndex(std::max(0, c->findData(int(MaskChoice::Causal))));
         }},
        {tr("Positions"),
         tr("Attention alone does not know the order of the tokens: reordering them permutes "
            "the heatmap. Add sinusoidal positional encoding and the pattern changes with the "
            "order."),
         QStringLiteral("positionalCheck"), tr("Add positions"),
         [find] {
             if (auto *c = qobject_cast<QCheckBox *>(find("positionalCheck")))
                 c->setChecked(true);
         }},
        {tr("Pin a query, sort the heads"),
         tr("Shift+click a cell to pin its query: every head shows that row's weights beside the "
            "map, and they stay while you change d_k or the mask. The heads can be sorted by "
            "entropy or max weight here, so focused heads come first."),
         QStringLiteral("headSortCombo"),
         {},
         {}},
        {tr("Tokens"),
         tr("The same weights over the tokens: a line from each query to each key, thicker for "
            "more weight (BertViz's head view), or the text coloured by one query's attention."),
         QStringLiteral("tokensView"),
         {},
         {}},
        {tr("Play"),
         tr("Play animates one parameter \u2014 d_k, \u03b1 or \u03c4 \u2014 from one value to "
            "another, frame by frame, and exports the frames: the saturation of the softmax as a "
            "film."),
         QStringLiteral("playPanel"),
         {},
         {}},
        {tr("Real models"),
         tr("File \u2192 Open Model\u2026 opens a Hugging Face checkpoint (GPT-2, Llama, Qwen, "
            "BERT); type a text and Run. The Model tab shows every layer \u00d7 head; click one "
            "to open it here."),
         QStringLiteral("modelView"),
         {},
         {}},
        {tr("Long sequences"),
         tr("The Long tab computes attention at up to 65\u00a0536 tokens in tiles, exactly, at "
            "the zoom shown, without the n \u00d7 n matrix: wheel to zoom, drag to pan."),
         QStringLiteral("longMapView"),
         {},
         {}},
        {tr("Attention as 2025 models use it"),
         tr("Modern attention adds a learned sink (a row may give weight to nothing), a gate on "
            "each head's output, differential attention (A\u2081 \u2212 \u03bbA\u2082: "
            "negative weights, drawn blue to red around 0) and DeepSeek's latent attention. "
            "Pick one here; E18\u2013E20 measure what they do."),
         QStringLiteral("variantCombo"),
         {},
         {}},
        {tr("The atlas"),
         tr("For a model run or a loaded stack, the Atlas scores what every head does "
            "(previous-token, induction, sink, \u2026) and ranks them; click a head to open it."),
         QStringLiteral("atlasView"),
         {},
         {}},
        {tr("That is the tour"),
         tr("Every change is undoable (Ctrl+Z). Help \u2192 Guided Tour shows these steps "
            "again; F1 lists the shortcuts."),
         {},
         {},
         {}},
    };

    m_highlight = new Highlight(window);
    m_highlight->setObjectName(QStringLiteral("tourHighlight"));
    m_highlight->setAttribute(Qt::WA_TransparentForMouseEvents);
    m_highlight->hide();

    m_callout = new QFrame(window);
    m_callout->setObjectName(QStringLiteral("tourCallout"));
    m_callout->setFrameShape(QFrame::StyledPanel);
    m_callout->setAutoFillBackground(true);
    // Opaque, light and bordered in the outline's orange, whatever the style.
    m_callout->setStyleSheet(QStringLiteral(
        "QFrame#tourCallout { background: #fff8e7; border: 2px solid #ff8c00; "
        "border-radius: 6px; } QFrame#tourCallout QLabel { color: #202020; background: "
        "transparent; border: none; }"));
    m_callout->setFixedWidth(kCalloutWidth);
    auto *layout = new QVBoxLayout(m_callout);
    m_title = new QLabel(m_callout);
    m_title->setObjectName(QStringLiteral("tourTitle"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_counter = new QLabel(m_callout);
    m_counter->setObjectName(QStringLiteral("tourCounter"));
    auto *top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_counter);
    layout->addLayout(top);
    m_text = new QLabel(m_callout);
    m_text->setObjectName(QStringLiteral("tourText"));
    m_text->setWordWrap(true);
    layout->addWidget(m_text);
    m_showMe = new QPushButton(m_callout);
    m_showMe->setObjectName(QStringLiteral("tourShowMe"));
    auto *showMeRow = new QHBoxLayout;
    showMeRow->addWidget(m_showMe);
    showMeRow->addStretch(1);
    layout->addLayout(showMeRow);
    auto *buttons = new QHBoxLayout;
    m_skip = new QPushButton(tr("Skip"), m_callout);
    m_skip->setObjectName(QStringLiteral("tourSkip"));
    m_back = new QPushButton(tr("Back"), m_callout);
    m_back->setObjectName(QStringLiteral("tourBack"));
    m_next = new QPushButton(tr("Next"), m_callout);
    m_next->setObjectName(QStringLiteral("tourNext"));
    buttons->addStretch(1);
    buttons->addWidget(m_skip);
    buttons->addWidget(m_back);
    buttons->addWidget(m_next);
    layout->addLayout(buttons);
    connect(m_showMe, &QPushButton::clicked, this, &Tour::showMe);
    connect(m_skip, &QPushButton::clicked, this, &Tour::finish);
    connect(m_back, &QPushButton::clicked, this, &Tour::back);
    connect(m_next, &QPushButton::clicked, this, &Tour::next);
    m_callout->hide();

    m_follow = new QTimer(this);
    m_follow->setInterval(250);
    connect(m_follow, &QTimer::timeout, this, &Tour::place);
}

Tour::~Tour() = default;

bool Tour::shouldStartAutomatically(const QSettings &settings, bool fileGiven)
{
    return !fileGiven && !settings.value(QLatin1String(shownKey), false).toBool()
        && !qEnvironmentVariableIsSet("ATTNLAB_NO_TOUR");
}

QWidget *Tour::currentTarget() const
{
    if (m_step < 0 || m_steps[std::size_t(m_step)].target.isEmpty())
        return nullptr;
    return m_window->findChild<QWidget *>(m_steps[std::size_t(m_step)].target);
}

void Tour::start()
{
    // The steps are about the attention mode's Heads tab.
    m_window->modeTabs()->setCurrentIndex(0);
    showStep(0);
    m_follow->start();
}

void Tour::next()
{
    if (m_step + 1 >= int(m_steps.size()))
        finish();
    else
        showStep(m_step + 1);
}

void Tour::back()
{
    if (m_step > 0)
        showStep(m_step - 1);
}

void Tour::finish()
{
    if (m_step < 0)
        return;
    m_step = -1;
    m_follow->stop();
    m_callout->hide();
    m_highlight->hide();
    emit finished();
}

void Tour::showMe()
{
    if (m_step >= 0 && m_steps[std::size_t(m_step)].showMe)
        m_steps[std::size_t(m_step)].showMe();
}

void Tour::showStep(int step)
{
    m_step = std::clamp(step, 0, int(m_steps.size()) - 1);
    const Step &s = m_steps[std::size_t(m_step)];
    m_title->setText(s.title);
    m_text->setText(s.text);
    m_counter->setText(tr("%1 / %2").arg(m_step + 1).arg(m_steps.size()));
    m_showMe->setText(tr("Show me: %1").arg(s.showMeText));
    m_showMe->setVisible(bool(s.showMe));
    m_back->setEnabled(m_step > 0);
    m_next->setText(m_step + 1 == int(m_steps.size()) ? tr("Done") : tr("Next"));
    // A target in a dock behind another (the Controls behind the Heatmap view tab): raise it;
    // one scrolled out of its scroll area (a Controls panel shrunk by the Tensors panel): scroll
    // it into view, so the outline lands on it.
    if (QWidget *target = currentTarget()) {
        for (QWidget *w = target; w; w = w->parentWidget()) {
            // A page of a tab widget (the Tokens, Model, Long, Atlas tabs; the Attention mode):
            // make it the current page.
            if (QWidget *stack = w->parentWidget())
                if (auto *tabs = qobject_cast<QTabWidget *>(stack->parentWidget()))
                    if (tabs->indexOf(w) >= 0)
                        tabs->setCurrentWidget(w);
            if (auto *dock = qobject_cast<QDockWidget *>(w)) {
                dock->show();
                dock->raise();
                break;
            }
        }
        // Then, laid out in its raised dock or tab, scrolled into view.
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        for (QWidget *w = target; w; w = w->parentWidget())
            if (auto *scroll = qobject_cast<QScrollArea *>(w))
                scroll->ensureWidgetVisible(target);
    }
    m_callout->show();
    m_callout->adjustSize();
    place();
    emit stepChanged(m_step);
}

void Tour::place()
{
    if (m_step < 0)
        return;
    const QRect area = m_window->rect();
    // The wrapped text's height at the callout's width.
    QLayout *layout = m_callout->layout();
    layout->activate();
    const int height = layout->hasHeightForWidth() ? layout->totalHeightForWidth(kCalloutWidth)
                                                   : m_callout->sizeHint().height();
    const QSize size(kCalloutWidth, height);
    QWidget *target = currentTarget();
    QPoint at;
    if (target && target->isVisible()) {
        const QRect r(target->mapTo(m_window, QPoint(0, 0)), target->size());
        m_highlight->setGeometry(r.adjusted(-4, -4, 4, 4));
        m_highlight->show();
        m_highlight->raise();
        // Where the callout covers neither the target nor the attention views (the heatmaps a
        // step talks about): beside the target (right, left), then below or above it; else over
        // the bottom of a tall panel, else anywhere beside it in the window; a large target that
        // leaves no room beside it gets the callout inside, at its bottom right.
        QRect views;
        if (auto *v = m_window->findChild<QWidget *>(QStringLiteral("attentionViews"));
            v && v->isVisible())
            views = QRect(v->mapTo(m_window, QPoint(0, 0)), v->size());
        // Below and above: from the target's left edge, or ending at its right edge (a control
        // in a column narrower than the callout keeps it in the column).
        const int endAtRight = std::max(0, r.right() - size.width());
        const QPoint candidates[] = {
            QPoint(r.right() + 12, r.top()),
            QPoint(r.left() - 12 - size.width(), r.top()),
            QPoint(r.left(), r.bottom() + 12),
            QPoint(endAtRight, r.bottom() + 12),
            QPoint(r.left(), r.top() - 12 - size.height()),
            QPoint(endAtRight, r.top() - 12 - size.height()),
        };
        const auto fits = [&](const QPoint &p) { return area.contains(QRect(p, size)); };
        bool placed = false;
        for (const QPoint &p : candidates) {
            const QRect c(p, size);
            if (fits(p) && !c.intersects(r) && !c.intersects(views)) {
                at = p;
                placed = true;
                break;
            }
        }
        // A tall panel (a dock's whole column) takes the callout over its own bottom part.
        if (!placed && r.width() >= size.width() && r.height() >= 2 * size.height()) {
            at = QPoint(r.left() + (r.width() - size.width()) / 2, r.bottom() - size.height() - 8);
            placed = true;
        }
        for (const QPoint &p : candidates) {
            if (!placed && fits(p)) {
                at = p;
                placed = true;
            }
        }
        if (!placed)
            at = QPoint(r.right() - size.width() - 16, r.bottom() - size.height() - 40);
    } else {
        m_highlight->hide();
        at = area.center() - QPoint(size.width() / 2, size.height() / 2);
    }
    at.setX(std::clamp(at.x(), 0, std::max(0, area.width() - size.width())));
    at.setY(std::clamp(at.y(), 0, std::max(0, area.height() - size.height())));
    m_callout->setGeometry(QRect(at, size));
    m_callout->raise();
}

} // namespace attn
