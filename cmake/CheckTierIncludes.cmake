# cmake -DTIER=<folder> -DDIR=<ui/folder> -DALLOWED=<folders> -DQT_ALLOWED=<modules>
#       -DSTAMP=<file> -P CheckTierIncludes.cmake
#
# Fails when a source of one ui/ tier includes a header of a tier it does not link
# (#include "ui/<folder>/…" with <folder> not in ALLOWED, or a ui header named without its
# folder) or names a Qt module it does not link (#include <QtWidgets/…> with Widgets not in
# QT_ALLOWED). The tier targets link only the tiers below them, so such an include would build
# by accident; this check makes it an error. ALLOWED and QT_ALLOWED are comma-separated.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "," ";" allowed "${ALLOWED}")
string(REPLACE "," ";" qt_allowed "${QT_ALLOWED}")
file(GLOB sources "${DIR}/*.h" "${DIR}/*.cpp")
set(errors "")
foreach(file IN LISTS sources)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS includes)
        if(line MATCHES "#[ \t]*include[ \t]*[<\"]ui/([A-Za-z0-9_]+)/")
            if(NOT CMAKE_MATCH_1 IN_LIST allowed)
                string(APPEND errors "\n  ${file}: ${line} (tier ${TIER} does not link ui/${CMAKE_MATCH_1})")
            endif()
        elseif(line MATCHES "#[ \t]*include[ \t]*[<\"]Qt([A-Za-z]+)/")
            if(NOT CMAKE_MATCH_1 IN_LIST qt_allowed)
                string(APPEND errors "\n  ${file}: ${line} (tier ${TIER} does not link Qt6::${CMAKE_MATCH_1})")
            endif()
        elseif(line MATCHES "#[ \t]*include[ \t]*\"([a-z0-9_]+\\.h)\"")
            string(APPEND errors "\n  ${file}: ${line} (name the header's folder: \"ui/<tier>/${CMAKE_MATCH_1}\")")
        endif()
    endforeach()
endforeach()
if(errors)
    message(FATAL_ERROR "ui/${TIER}: includes across the tiers' link order:${errors}")
endif()
file(TOUCH "${STAMP}")
