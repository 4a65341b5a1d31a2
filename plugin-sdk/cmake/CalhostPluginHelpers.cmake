# calhost_add_plugin(NAME SOURCES ... [LIBS ...] [TEST])
#
# Builds a backend plugin as a loadable module named NAME.so (no "lib"
# prefix), with hidden visibility so only the negotiation entry point is
# exported. In-tree plugins land in lib/calhost/plugins of the build tree and
# are installed to <libdir>/calhost/plugins; TEST plugins (misbehaving ones,
# for the loader's tests) land in lib/calhost/test-plugins and are never
# installed. Out-of-tree plugins use the installed calhost::plugin_sdk target
# instead (see plugin-sdk/template).
function(calhost_add_plugin name)
  cmake_parse_arguments(P "TEST" "" "SOURCES;LIBS" ${ARGN})
  add_library(${name} MODULE ${P_SOURCES})
  set_target_properties(${name} PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden)
  target_link_libraries(${name} PRIVATE calhost::plugin_sdk ${P_LIBS})
  if(P_TEST)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CALHOST_TEST_PLUGIN_OUTPUT_DIR}")
  else()
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CALHOST_PLUGIN_OUTPUT_DIR}")
    install(TARGETS ${name} LIBRARY DESTINATION "${CALHOST_PLUGIN_INSTALL_DIR}")
  endif()
endfunction()
