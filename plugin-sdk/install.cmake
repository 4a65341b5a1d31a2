# install.cmake: installs the plugin SDK for out-of-tree plugins (included by
# plugin-sdk/CMakeLists.txt):
#   <prefix>/include/calhost/plugin.h                  the ABI header
#   <libdir>/pkgconfig/calhost-plugin.pc               pkg-config (relocatable;
#                                                      Version: the ABI)
#   <libdir>/cmake/calhost-plugin/                     CMake package:
#       find_package(calhost-plugin) gives the imported target
#       calhost::plugin_sdk and calhost_plugin_add(NAME SOURCES ...)
#   <datadir>/calhost/plugin-template/                 the template project
#   <datadir>/calhost/examples/device_backend/         an ABI 2 device backend example
#   <datadir>/doc/calhost/plugin-sdk.md                the author's guide
# (install component plugin_dev: the package calhost-plugin-dev)
include(CMakePackageConfigHelpers)

set(CALHOST_SDK_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/calhost-plugin")

set_target_properties(calhost_plugin_sdk PROPERTIES EXPORT_NAME plugin_sdk)
install(TARGETS calhost_plugin_sdk EXPORT calhost-plugin-targets COMPONENT plugin_dev)
install(FILES "${CMAKE_CURRENT_SOURCE_DIR}/include/calhost/plugin.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/calhost" COMPONENT plugin_dev)
install(EXPORT calhost-plugin-targets NAMESPACE calhost::
        FILE calhost-plugin-targets.cmake DESTINATION "${CALHOST_SDK_CMAKE_DIR}"
        COMPONENT plugin_dev)

# The ABI range, read from the header so the package states what it offers.
file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/include/calhost/plugin.h" _abi_line
     REGEX "^#define CALHOST_ABI_VERSION [0-9]+u?")
string(REGEX MATCH "[0-9]+" CALHOST_SDK_ABI_VERSION "${_abi_line}")
file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/include/calhost/plugin.h" _abi_min_line
     REGEX "^#define CALHOST_ABI_VERSION_MIN [0-9]+u?")
string(REGEX MATCH "[0-9]+" CALHOST_SDK_ABI_VERSION_MIN "${_abi_min_line}")
if(NOT CALHOST_SDK_ABI_VERSION OR NOT CALHOST_SDK_ABI_VERSION_MIN)
  message(FATAL_ERROR "cannot read the ABI range from plugin.h")
endif()

configure_package_config_file(
  "${CMAKE_CURRENT_SOURCE_DIR}/cmake/calhost-plugin-config.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/calhost-plugin-config.cmake"
  INSTALL_DESTINATION "${CALHOST_SDK_CMAKE_DIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR CALHOST_PLUGIN_INSTALL_DIR)
# The package's version is the ABI, not calhost's release: a plugin asks for
# the ABI it was written against (find_package(calhost-plugin 1)) and keeps
# building with every release whose loader still accepts that ABI.
configure_file("${CMAKE_CURRENT_SOURCE_DIR}/cmake/calhost-plugin-config-version.cmake.in"
               "${CMAKE_CURRENT_BINARY_DIR}/calhost-plugin-config-version.cmake" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/calhost-plugin-config.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/calhost-plugin-config-version.cmake"
        DESTINATION "${CALHOST_SDK_CMAKE_DIR}" COMPONENT plugin_dev)

# pkg-config's ${pcfiledir} makes the file relocatable: the way up from
# <libdir>/pkgconfig to the prefix. Its Version is the ABI too
# (CALHOST_SDK_ABI_VERSION), so both packages state the same version.
file(RELATIVE_PATH CALHOST_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" CALHOST_PC_TO_PREFIX "${CALHOST_PC_TO_PREFIX}")
configure_file("${CMAKE_CURRENT_SOURCE_DIR}/cmake/calhost-plugin.pc.in"
               "${CMAKE_CURRENT_BINARY_DIR}/calhost-plugin.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/calhost-plugin.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT plugin_dev)

install(DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/template/"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/calhost/plugin-template" COMPONENT plugin_dev)
install(DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/examples/device_backend/"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/calhost/examples/device_backend" COMPONENT plugin_dev)
install(FILES "${CMAKE_CURRENT_SOURCE_DIR}/README.md"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/calhost" RENAME plugin-sdk.md COMPONENT plugin_dev)
