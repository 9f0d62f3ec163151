# Precompiled headers: the standard library, Eigen and Qt headers that most sources include.
# Parsing them is most of a ui/ source's compile time (about 5 s of 7 with GCC 12).
#
# attncore precompiles ATTN_PCH_STD for itself. Every ui/ tier, the executable and every test
# reuse one Qt set, attn_qt_pch (ui/CMakeLists.txt): ATTN_PCH_STD and the QtCore, QtGui and
# QtWidgets lists below, built once with only the definitions all of them share (QT_CORE_LIB,
# not QT_GUI_LIB or QT_WIDGETS_LIB: GCC refuses a precompiled header built with a definition
# its user lacks) and without QtTest's headers, which read those definitions. The lists are
# seen by every source of their users, so a source that forgets one of them still compiles;
# the tier check (cmake/CheckTierIncludes.cmake) reads the sources' own includes, and a tier
# without QtGui has no QtGui include path to fall back on.

option(ATTN_PCH "Precompiled headers for attncore, the ui/ tiers, the executable and the tests" ON)

set(ATTN_PCH_STD
    <algorithm> <cmath> <cstddef> <cstdint> <functional> <limits> <memory> <optional> <string>
    <string_view> <utility> <vector> <Eigen/Core>)
set(ATTN_PCH_QTCORE
    <QObject> <QString> <QStringList> <QList> <QFile> <QFileInfo> <QDir> <QJsonArray>
    <QJsonDocument> <QJsonObject> <QTimer>)
set(ATTN_PCH_QT
    ${ATTN_PCH_QTCORE}
    <QColor> <QFontMetricsF> <QImage> <QPainter>
    <QAction> <QBoxLayout> <QCheckBox> <QComboBox> <QLabel> <QPushButton> <QSpinBox> <QWidget>)

# attn_precompile(<target>): precompiles ATTN_PCH_STD for the sources of <target>.
function(attn_precompile target)
    if(ATTN_PCH)
        target_precompile_headers(${target} PRIVATE ${ATTN_PCH_STD})
    endif()
endfunction()

# The include directories of QtGui and QtWidgets, as system directories: attn_qt_pch and the
# users that fall back on parsing its headers need them.
set(ATTN_PCH_QT_INCLUDES
    $<TARGET_PROPERTY:Qt6::Gui,INTERFACE_INCLUDE_DIRECTORIES>
    $<TARGET_PROPERTY:Qt6::Widgets,INTERFACE_INCLUDE_DIRECTORIES>)

# attn_qt_pch_target(): creates attn_qt_pch (after attncore).
function(attn_qt_pch_target)
    if(NOT ATTN_PCH)
        return()
    endif()
    add_library(attn_qt_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
    target_link_libraries(attn_qt_pch PRIVATE attncore Qt6::Core)
    target_include_directories(attn_qt_pch SYSTEM PRIVATE ${ATTN_PCH_QT_INCLUDES})
    attn_setup_target(attn_qt_pch)
    target_precompile_headers(attn_qt_pch PRIVATE ${ATTN_PCH_STD} ${ATTN_PCH_QT})
endfunction()

# attn_reuse_qt_pch(<target>): <target> (linking Qt6::Core and attncore) reuses attn_qt_pch.
# A target built with libFuzzer's coverage (cmake/AttnWarnings.cmake) cannot: clang refuses a
# precompiled header built without it. It precompiles ATTN_PCH_STD and ATTN_PCH_QTCORE itself.
function(attn_reuse_qt_pch target)
    if(NOT ATTN_PCH)
        return()
    endif()
    if(ATTN_FUZZ AND target MATCHES "${ATTN_FUZZ_COVERED}")
        target_precompile_headers(${target} PRIVATE ${ATTN_PCH_STD} ${ATTN_PCH_QTCORE})
    else()
        target_precompile_headers(${target} REUSE_FROM attn_qt_pch)
    endif()
endfunction()
