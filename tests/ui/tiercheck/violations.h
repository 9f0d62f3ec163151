#pragma once
// Not compiled: the input of the ui_tiercheck test, which runs cmake/CheckTierIncludes.cmake on
// this folder as if it were the QtCore-only session tier. Each include below must be reported.

#include "colormap.h"
#include "ui/render/colormap.h"
#include "ui/window/mainwindow.h"

#include <QtGui/QImage>
