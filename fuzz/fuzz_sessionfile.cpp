// libFuzzer target: the session reader (ui/sessionfile.h) on arbitrary bytes: SessionFile::
// fromJson, then the view-state readers (heatmap, transform, compare, training) on what it
// accepts. An accepted document written back
// with toJson must read back with the same parameters.

#include "ui/document/sessionfile.h"
#include "ui/render/comparerenderer.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/resultview.h"
#include "ui/session/trainingsettings.h"

#include <QByteArray>
#include <QJsonObject>

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    QString error;
    const auto document = attn::SessionFile::fromJson(bytes, &error);
    if (!document) {
        if (error.isEmpty())
            std::abort(); // refused without saying why
        return 0;
    }
    const QJsonObject view = document->view;
    attn::heatmapViewFromJson(view.value(QLatin1String("heatmap")).toObject(), {});
    attn::viewTransformFromJson(view.value(QLatin1String("transform")).toObject(), {});
    int head = 0;
    attn::compareViewFromJson(view.value(QLatin1String("compare")).toObject(), {}, &head);
    // The Training tab's settings: accepted ones validate and survive a save.
    const attn::TrainingSettings base;
    QString trainingError;
    const attn::TrainingSettings training = attn::TrainingSettings::fromJson(
        view.value(QLatin1String("training")).toObject(), base, &trainingError);
    if (!training.validate().isEmpty()
        || attn::TrainingSettings::fromJson(training.toJson(), base) != training)
        std::abort();

    const auto again = attn::SessionFile::fromJson(attn::SessionFile::toJson(*document), &error);
    if (!again || again->parameters.toJson() != document->parameters.toJson())
        std::abort(); // what was read does not survive a save
    return 0;
}
