# CalhostLibrariesInstall.cmake: installs the CMake packages and pkg-config
# files of calhost's two public libraries (included by the top-level
# CMakeLists.txt after host/ and plugin-sdk/):
#   <libdir>/cmake/calstore/          find_package(calstore): calhost::calstore,
#                                     calhost::calstore_static
#   <libdir>/cmake/calhost-runtime/   find_package(calhost-runtime):
#                                     calhost::runtime, calhost::runtime_static
#   <libdir>/pkgconfig/calstore.pc, calhost-runtime.pc
#   <datadir>/calhost/examples/deployment/   the deployment example project
# The libraries' own install rules (files, headers) are in host/store and
# host/runtime; the plugin SDK's package is plugin-sdk/install.cmake. Each rule
# names its Debian package's component (cmake/CalhostPackaging.cmake).
include(CMakePackageConfigHelpers)

file(RELATIVE_PATH CALHOST_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" CALHOST_PC_TO_PREFIX "${CALHOST_PC_TO_PREFIX}")

# ---- libcalstore
get_target_property(CALSTORE_PC_VERSION calstore VERSION)
set(_calstore_dir "${CMAKE_INSTALL_LIBDIR}/cmake/calstore")
install(EXPORT calstore-targets NAMESPACE calhost:: FILE calstore-targets.cmake
        DESTINATION "${_calstore_dir}" COMPONENT calstore_dev)
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/calstore-config.cmake.in"
  "${CMAKE_BINARY_DIR}/cmake/calstore-config.cmake" INSTALL_DESTINATION "${_calstore_dir}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/cmake/calstore-config-version.cmake"
  VERSION ${CALSTORE_PC_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${CMAKE_BINARY_DIR}/cmake/calstore-config.cmake"
              "${CMAKE_BINARY_DIR}/cmake/calstore-config-version.cmake"
        DESTINATION "${_calstore_dir}" COMPONENT calstore_dev)
configure_file("${CMAKE_CURRENT_LIST_DIR}/calstore.pc.in" "${CMAKE_BINARY_DIR}/cmake/calstore.pc"
               @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/cmake/calstore.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
        COMPONENT calstore_dev)

# ---- the deployment runtime
get_target_property(CALHOST_RUNTIME_PC_VERSION calhost_runtime VERSION)
set(_runtime_dir "${CMAKE_INSTALL_LIBDIR}/cmake/calhost-runtime")
install(TARGETS calhost_runtime calhost_runtime_static EXPORT calhost-runtime-targets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT runtime_dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime_dev)
install(FILES "${CMAKE_SOURCE_DIR}/include/calhost/runtime.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/calhost" COMPONENT runtime_dev)
install(EXPORT calhost-runtime-targets NAMESPACE calhost:: FILE calhost-runtime-targets.cmake
        DESTINATION "${_runtime_dir}" COMPONENT runtime_dev)
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/calhost-runtime-config.cmake.in"
  "${CMAKE_BINARY_DIR}/cmake/calhost-runtime-config.cmake" INSTALL_DESTINATION "${_runtime_dir}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/cmake/calhost-runtime-config-version.cmake"
  VERSION ${CALHOST_RUNTIME_PC_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${CMAKE_BINARY_DIR}/cmake/calhost-runtime-config.cmake"
              "${CMAKE_BINARY_DIR}/cmake/calhost-runtime-config-version.cmake"
        DESTINATION "${_runtime_dir}" COMPONENT runtime_dev)
configure_file("${CMAKE_CURRENT_LIST_DIR}/calhost-runtime.pc.in"
               "${CMAKE_BINARY_DIR}/cmake/calhost-runtime.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/cmake/calhost-runtime.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT runtime_dev)

install(DIRECTORY "${CMAKE_SOURCE_DIR}/plugin-sdk/examples/deployment/"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/calhost/examples/deployment"
        COMPONENT runtime_dev)
