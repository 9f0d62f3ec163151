#pragma once
// Colormaps and colour normalisation for heatmaps, after matplotlib (matplotlib.cm, Normalize,
// LogNorm, CenteredNorm), so a figure made with matplotlib and one made here agree pixel for
// pixel: 256-entry tables, index = ⌊t·256⌋ clipped to [0, 255], 8-bit channels as
// matplotlib's Colormap(x, bytes=True).

#include <QColor>
#include <QImage>
#include <QList>
#include <QString>

#include <array>
#include <optional>

namespace attn {

enum class ColormapId {
    Viridis, ///< perceptually uniform, sequential (default for weights)
    Magma, ///< perceptually uniform, sequential
    Cividis, ///< perceptually uniform, colour-vision-deficiency friendly, sequential
    Grayscale, ///< black → white, sequential (matplotlib "gray")
    RdBu, ///< diverging blue (low) → white (middle) → red (high): matplotlib "RdBu_r"
};

class Colormap
{
public:
    static constexpr int size = 256;

    explicit Colormap(ColormapId id = ColormapId::Viridis);

    ColormapId id() const { return m_id; }
    /// matplotlib's name: "viridis", "magma", "cividis", "gray", "RdBu_r".
    QString name() const;
    /// True for the diverging map (use it with ColorNorm::symmetric).
    bool isDiverging() const { return m_id == ColormapId::RdBu; }

    /// Table entry 0 … 255 (opaque).
    QRgb entry(int index) const { return (*m_table)[std::size_t(index)]; }
    /// Colour of a normalised value t: index ⌊t·256⌋ clipped to [0, 255] (t ≤ 0 → first entry,
    /// t ≥ 1 → last). NaN gives badColor().
    QRgb map(double t) const;
    /// Colour for NaN / non-finite values: opaque magenta, which none of the maps contains.
    static QRgb badColor() { return qRgb(255, 0, 255); }

    /// A strip of the whole map: `length` × 1 (horizontal, low → high left to right) or
    /// 1 × `length` (vertical, low at the bottom).
    QImage strip(int length, Qt::Orientation orientation) const;

    /// Every map, in menu order.
    static QList<ColormapId> all();
    /// Looks up a map by name() or its lower-case form ("rdbu_r", "grey" also accepted).
    static std::optional<ColormapId> fromName(const QString &name);

private:
    ColormapId m_id;
    const std::array<QRgb, size> *m_table;
};

enum class ColorScale { Linear, Log, SymLog };

/// Maps data values to t in [0, 1] (before clipping) like matplotlib's norms:
/// linear: t = (v − vmin)/(vmax − vmin) (Normalize; 0 when vmin == vmax);
/// log: t = (log₁₀ v − log₁₀ vmin)/(log₁₀ vmax − log₁₀ vmin) for v > 0 (LogNorm); v ≤ 0 gives −inf,
/// shown as the lowest colour (matplotlib would mask it). Requires 0 < vmin < vmax for log;
/// symmetric log (SymLogNorm, base 10, linscale 1): T(v) = v·c for |v| ≤ linthresh and
/// sign(v)·linthresh·(c + log₁₀(|v|/linthresh)) beyond, c = 1/(1 − 1/10), then
/// t = (T(v) − T(vmin))/(T(vmax) − T(vmin)): signed values whose sizes span decades.
struct ColorNorm
{
    double vmin = 0.0;
    double vmax = 1.0;
    ColorScale scale = ColorScale::Linear;
    double linthresh = 0.0; ///< symmetric log only: the linear range's half-width (> 0)

    static ColorNorm linear(double vmin, double vmax) { return {vmin, vmax, ColorScale::Linear}; }
    static ColorNorm log(double vmin, double vmax) { return {vmin, vmax, ColorScale::Log}; }
    /// Symmetric about 0 for diverging maps: [−|m|, |m|] (matplotlib CenteredNorm).
    static ColorNorm symmetric(double absMax);
    /// Symmetric log about 0 over [−|m|, |m|], linear within ±|m|·10^−decades (the signed maps'
    /// counterpart of upToLargestWeight's log scale); ranges of 1 when m is not finite and > 0.
    static ColorNorm symmetricLog(double absMax, double decades = largestWeightDecades);

    /// t for value v (NaN stays NaN; not clipped).
    double operator()(double v) const;
    /// Inverse: the value at t in [0, 1] (for colourbar ticks).
    double inverse(double t) const;
    /// "linear" / "log" / "symlog".
    QString scaleName() const;
    bool operator==(const ColorNorm &) const = default;

    /// Colours up to a map's largest weight `largest` (the Long tab's scales, and the tile
    /// engine's view on the command line): linear [0, largest], or log over the
    /// largestWeightDecades decades below it, [largest · 10⁻⁵, largest]. A `largest` that is
    /// not a finite number > 0 (every cell masked) gives the ranges of 1.
    static ColorNorm upToLargestWeight(ColorScale scale, double largest);
    static constexpr double largestWeightDecades = 5;
};

} // namespace attn
