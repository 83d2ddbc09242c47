# The web UI (clients/web-gateway/ui/: plain JavaScript modules, CSS and
# HTML, no build step) compiled into the gateway as byte arrays, so that
# inspectord --http and inspector-gateway serve it with no file or network
# access at run time. ui_assets.cc is generated in the build directory
# whenever a file of the UI changes.
set(INSPECTOR_UI_DIR ${PROJECT_SOURCE_DIR}/clients/web-gateway/ui)
file(GLOB INSPECTOR_UI_FILES CONFIGURE_DEPENDS
    ${INSPECTOR_UI_DIR}/*.html ${INSPECTOR_UI_DIR}/*.js
    ${INSPECTOR_UI_DIR}/*.css ${INSPECTOR_UI_DIR}/*.svg)
set(INSPECTOR_UI_ASSETS_CC ${CMAKE_CURRENT_BINARY_DIR}/ui_assets.cc)
add_custom_command(
    OUTPUT ${INSPECTOR_UI_ASSETS_CC}
    COMMAND ${CMAKE_COMMAND} -DUI_DIR=${INSPECTOR_UI_DIR}
            -DOUTPUT=${INSPECTOR_UI_ASSETS_CC}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/embed_ui.cmake
    DEPENDS ${INSPECTOR_UI_FILES} ${CMAKE_CURRENT_SOURCE_DIR}/embed_ui.cmake
    COMMENT "Embedding the web UI"
    VERBATIM)
add_library(inspector_ui_assets STATIC ${INSPECTOR_UI_ASSETS_CC})
inspector_target_defaults(inspector_ui_assets)
target_include_directories(inspector_ui_assets PRIVATE ${PROJECT_SOURCE_DIR})
