#pragma once
// The recipes of the experiment figures (experimentfigure.h): one function per experiment that
// adds its panels to a FigureFrame from the result, drawn with the figure kit (figurekit.h).
// Each throws FigureUnavailable when the result lacks what its figure needs. By family, as
// docs/experiments.md tells them: figurerecipes_scale.cpp (E1 one head, E2 the scaling sweep, E3
// softmax collapse, E13 the scale in learning), figurerecipes_heads.cpp (E4 heads split the
// dimension, E15 what each head sees, E16 shared keys, E17 an induction head forms),
// figurerecipes_order.cpp (E5 permutation, E6 a shift is a rotation, E7 the causal mask, E14
// RoPE offsets), figurerecipes_cost.cpp (E8 what n² costs, E9 loop versus matrix) and
// figurerecipes_masks.cpp (E10 the mask convention, E11 the fill value, E12 softmax pitfalls) and
// figurerecipes_variants.cpp (E18 learned sinks, E19 differential attention, E20 latent
// attention).

#include "ui/charts/figurekit.h"

namespace attn::expfig {

void buildE1(const ExperimentResult &r, FigureFrame &f);
void buildE2(const ExperimentResult &r, FigureFrame &f);
void buildE3(const ExperimentResult &r, FigureFrame &f);
void buildE4(const ExperimentResult &r, FigureFrame &f);
void buildE5(const ExperimentResult &r, FigureFrame &f);
void buildE6(const ExperimentResult &r, FigureFrame &f);
void buildE7(const ExperimentResult &r, FigureFrame &f);
void buildE8(const ExperimentResult &r, FigureFrame &f);
void buildE9(const ExperimentResult &r, FigureFrame &f);
void buildE10(const ExperimentResult &r, FigureFrame &f);
void buildE11(const ExperimentResult &r, FigureFrame &f);
void buildE12(const ExperimentResult &r, FigureFrame &f);
void buildE13(const ExperimentResult &r, FigureFrame &f);
void buildE14(const ExperimentResult &r, FigureFrame &f);
void buildE15(const ExperimentResult &r, FigureFrame &f);
void buildE16(const ExperimentResult &r, FigureFrame &f);
void buildE17(const ExperimentResult &r, FigureFrame &f);
void buildE18(const ExperimentResult &r, FigureFrame &f);
void buildE19(const ExperimentResult &r, FigureFrame &f);
void buildE20(const ExperimentResult &r, FigureFrame &f);

} // namespace attn::expfig
