# cmake -DCHECK=<CheckTierIncludes.cmake> -DDIR=<this folder> -DSTAMP=<file> -P run.cmake
#
# Runs the ui/ tier include check on violations.h as if it were the QtCore-only session tier
# and fails unless the check fails and names each bad include: a tier the target does not link
# (render, window), a ui header without its folder, and a Qt module it does not link (QtGui).
cmake_minimum_required(VERSION 3.25)
execute_process(
    COMMAND ${CMAKE_COMMAND} -DTIER=session -DDIR=${DIR} -DALLOWED=session -DQT_ALLOWED=Core
            -DSTAMP=${STAMP} -P ${CHECK}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
    message(FATAL_ERROR "the tier check accepted violations.h:\n${out}${err}")
endif()
foreach(expected
        "#include \"ui/render/colormap.h\" \\(tier session does not link ui/render\\)"
        "#include \"ui/window/mainwindow.h\" \\(tier session does not link ui/window\\)"
        "#include \"colormap.h\" \\(name the header's folder"
        "#include <QtGui/QImage> \\(tier session does not link Qt6::Gui\\)")
    if(NOT err MATCHES "${expected}")
        message(FATAL_ERROR "the tier check did not report ${expected}:\n${err}")
    endif()
endforeach()
if(EXISTS "${STAMP}")
    message(FATAL_ERROR "the tier check wrote its stamp although it failed")
endif()
