#include "ui/session/trainingsettings.h"

#include <QJsonValue>

#include <cmath>

namespace attn {

using namespace training;

PairedRunConfig TrainingSettings::toConfig() const
{
    PairedRunConfig c;
    c.task.kind = task;
    c.task.n = n;
    c.task.dModel = dModel;
    c.task.batch = batch;
    c.task.noise = noise;
    c.task.offset = offset;
    c.task.classes = task == TaskKind::Recall ? classes : 0;
    c.heads = heads;
    c.optimizer = optimizer;
    c.loss = Loss::MeanSquaredError;
    c.float32 = float32;
    c.seed = seed;
    c.init = init;
    c.a = a;
    c.b = b;
    return c;
}

QString TrainingSettings::validate() const
{
    if (steps < 1 || steps > maxSteps)
        return QStringLiteral("the step limit must be in [1, %1], got %2").arg(maxSteps).arg(steps);
    if (!(lossThreshold > 0) || !std::isfinite(lossThreshold))
        return QStringLiteral("the loss threshold must be > 0 and finite, got %1")
            .arg(lossThreshold);
    try {
        toConfig().validate();
    } catch (const std::exception &e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

bool TrainingSettings::sameRunSetup(const TrainingSettings &other) const
{
    TrainingSettings x = other;
    x.a = a;
    x.b = b;
    x.steps = steps; // the stop criteria only say when to stop
    x.stopAtLoss = stopAtLoss;
    x.lossThreshold = lossThreshold;
    x.thresholdEither = thresholdEither;
    return x == *this;
}

QJsonObject TrainingSettings::toJson() const
{
    QJsonObject o;
    o.insert(QStringLiteral("task"), QString::fromLatin1(taskKindName(task)));
    o.insert(QStringLiteral("n"), n);
    o.insert(QStringLiteral("d_model"), dModel);
    o.insert(QStringLiteral("heads"), heads);
    o.insert(QStringLiteral("batch"), batch);
    o.insert(QStringLiteral("noise"), noise);
    o.insert(QStringLiteral("offset"), offset);
    o.insert(QStringLiteral("classes"), classes);
    o.insert(QStringLiteral("seed"), QString::number(seed));
    o.insert(QStringLiteral("steps"), steps);
    o.insert(QStringLiteral("optimizer"), QString::fromLatin1(optimizerKindName(optimizer)));
    o.insert(QStringLiteral("dtype"),
             float32 ? QStringLiteral("float32") : QStringLiteral("float64"));
    o.insert(QStringLiteral("init"), QString::fromLatin1(initializationName(init)));
    QJsonObject threshold;
    threshold.insert(QStringLiteral("on"), stopAtLoss);
    threshold.insert(QStringLiteral("value"), lossThreshold);
    threshold.insert(QStringLiteral("runs"),
                     thresholdEither ? QStringLiteral("either") : QStringLiteral("both"));
    o.insert(QStringLiteral("loss_threshold"), threshold);
    for (const auto &[key, run] : {std::pair {"a", &a}, std::pair {"b", &b}}) {
        QJsonObject r;
        r.insert(QStringLiteral("alpha"), run->scaleExponent);
        r.insert(QStringLiteral("lr"), run->learningRate);
        o.insert(QLatin1String(key), r);
    }
    return o;
}

TrainingSettings TrainingSettings::fromJson(const QJsonObject &o, const TrainingSettings &base,
                                            QString *error)
{
    TrainingSettings s = base;
    QString problem;
    const auto integer = [&](const char *key, int *out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d) || std::abs(d) > 1e9) {
            if (problem.isEmpty())
                problem = QStringLiteral("'%1' must be an integer").arg(QLatin1String(key));
            return;
        }
        *out = int(d);
    };
    const auto real = [&](const QJsonObject &from, const char *key, double *out) {
        const QJsonValue v = from.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        if (!v.isDouble() || !std::isfinite(v.toDouble())) {
            if (problem.isEmpty())
                problem = QStringLiteral("'%1' must be a finite number").arg(QLatin1String(key));
            return;
        }
        *out = v.toDouble();
    };
    const QJsonValue task = o.value(QLatin1String("task"));
    if (!task.isUndefined()) {
        try {
            s.task = taskKindFromName(task.toString().toStdString());
        } catch (const std::exception &e) {
            problem = QString::fromUtf8(e.what());
        }
    }
    integer("n", &s.n);
    integer("d_model", &s.dModel);
    integer("heads", &s.heads);
    integer("batch", &s.batch);
    real(o, "noise", &s.noise);
    integer("offset", &s.offset);
    integer("classes", &s.classes);
    integer("steps", &s.steps);
    const QJsonValue seed = o.value(QLatin1String("seed"));
    if (seed.isString()) {
        bool ok = false;
        const quint64 v = seed.toString().toULongLong(&ok);
        if (ok)
            s.seed = v;
        else if (problem.isEmpty())
            problem = QStringLiteral("'seed' must be a non-negative integer below 2^64");
    } else if (seed.isDouble() && seed.toDouble() >= 0 && seed.toDouble() < 9007199254740992.0
               && seed.toDouble() == std::floor(seed.toDouble())) {
        s.seed = quint64(seed.toDouble());
    } else if (!seed.isUndefined() && problem.isEmpty()) {
        problem = QStringLiteral("'seed' must be an integer or a decimal string");
    }
    const QJsonValue optimizer = o.value(QLatin1String("optimizer"));
    if (!optimizer.isUndefined()) {
        try {
            s.optimizer = optimizerKindFromName(optimizer.toString().toStdString());
        } catch (const std::exception &e) {
            if (problem.isEmpty())
                problem = QString::fromUtf8(e.what());
        }
    }
    const QJsonValue dtype = o.value(QLatin1String("dtype"));
    if (dtype == QJsonValue(QStringLiteral("float32")))
        s.float32 = true;
    else if (dtype == QJsonValue(QStringLiteral("float64")))
        s.float32 = false;
    else if (!dtype.isUndefined() && problem.isEmpty())
        problem = QStringLiteral("'dtype' must be float32 or float64");
    const QJsonValue init = o.value(QLatin1String("init"));
    if (!init.isUndefined()) {
        try {
            s.init = initializationFromName(init.toString().toStdString());
        } catch (const std::exception &e) {
            if (problem.isEmpty())
                problem = QString::fromUtf8(e.what());
        }
    }
    const QJsonValue threshold = o.value(QLatin1String("loss_threshold"));
    if (threshold.isObject()) {
        const QJsonObject t = threshold.toObject();
        const QJsonValue on = t.value(QLatin1String("on"));
        if (on.isBool())
            s.stopAtLoss = on.toBool();
        else if (!on.isUndefined() && problem.isEmpty())
            problem = QStringLiteral("'loss_threshold.on' must be true or false");
        real(t, "value", &s.lossThreshold);
        const QJsonValue runs = t.value(QLatin1String("runs"));
        if (runs == QJsonValue(QStringLiteral("both")))
            s.thresholdEither = false;
        else if (runs == QJsonValue(QStringLiteral("either")))
            s.thresholdEither = true;
        else if (!runs.isUndefined() && problem.isEmpty())
            problem = QStringLiteral("'loss_threshold.runs' must be both or either");
    } else if (!threshold.isUndefined() && problem.isEmpty()) {
        problem = QStringLiteral("'loss_threshold' must be an object");
    }
    for (const auto &[key, run] : {std::pair {"a", &s.a}, std::pair {"b", &s.b}}) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            continue;
        if (!v.isObject()) {
            if (problem.isEmpty())
                problem = QStringLiteral("'%1' must be an object").arg(QLatin1String(key));
            continue;
        }
        real(v.toObject(), "alpha", &run->scaleExponent);
        real(v.toObject(), "lr", &run->learningRate);
    }
    if (problem.isEmpty())
        problem = s.validate();
    if (!problem.isEmpty()) {
        if (error)
            *error = QStringLiteral("training settings: %1").arg(problem);
        return base;
    }
    if (error)
        error->clear();
    return s;
}

} // namespace attn
