# CalhostPackaging.cmake: the Debian packages, built by CPack's DEB generator
# from the install rules (included last by the top-level CMakeLists.txt).
#
#   cmake -S . -B build-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
#         -DCALHOST_TESTS=OFF -DCALHOST_BENCH=OFF
#   cmake --build build-deb -j && (cd build-deb && cpack -G DEB)
#
# Why CPack rather than debian/ and dpkg-buildpackage: the packages are cut
# from the same install rules (components) that `cmake --install` runs, so a
# file cannot be installed one way and packaged another; they build from an
# existing build folder in seconds (tests/packages builds them in CI), while
# dpkg-buildpackage rebuilds from a clean tree and needs debhelper and a second
# description of every file. What debhelper would have computed is asked for
# here: dependencies by dpkg-shlibdeps (SHLIBDEPS), a shlibs file for each
# library package, stripped files, gzipped manual pages and changelog, a
# copyright file per package.
#
# One install component per package:
#   calhost (the default component)  calhost, the plugins, the configuration,
#                                    fleet scripts, calhost(1), calhost.ini(5),
#                                    the bash completion
#   calstore      libcalstore1          libcalstore.so.1*
#   calstore_dev  libcalstore-dev       calstore.h, the .so link, the static
#                                       library, CMake/pkg-config, calstore(3)
#   runtime       libcalhost-runtime0   libcalhost_runtime.so.0*
#   runtime_dev   libcalhost-runtime-dev runtime.h, .so link, static library,
#                                       CMake/pkg-config, calhost-runtime(3),
#                                       the deployment example
#   plugin_dev    calhost-plugin-dev    plugin.h, CMake/pkg-config, the template,
#                                       the author's guide, calhost-plugin(7)
# The package names carry the sonames' major versions (Debian's shared-library
# rule), read from the library targets.
get_target_property(_calstore_soversion calstore SOVERSION)
get_target_property(_runtime_soversion calhost_runtime SOVERSION)
set(CALHOST_DEB_CALSTORE "libcalstore${_calstore_soversion}")
set(CALHOST_DEB_RUNTIME "libcalhost-runtime${_runtime_soversion}")
set(CALHOST_DEB_PACKAGES calhost ${CALHOST_DEB_CALSTORE} libcalstore-dev ${CALHOST_DEB_RUNTIME}
                         libcalhost-runtime-dev calhost-plugin-dev)
set(CALHOST_DEB_COMPONENTS calhost calstore calstore_dev runtime runtime_dev plugin_dev)

# The Debian changelog's latest entry must be this version.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/debian/changelog" _changelog_top LIMIT_COUNT 1)
if(NOT _changelog_top MATCHES "^calhost \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "cmake/debian/changelog: the first entry is '${_changelog_top}', "
                      "not calhost (${PROJECT_VERSION}): add an entry for this version")
endif()
set(_changelog_gz "${CMAKE_BINARY_DIR}/cmake/debian/changelog.gz")
add_custom_command(OUTPUT "${_changelog_gz}"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_BINARY_DIR}/cmake/debian"
  COMMAND gzip -9nc "${CMAKE_CURRENT_LIST_DIR}/debian/changelog" > "${_changelog_gz}"
  DEPENDS "${CMAKE_CURRENT_LIST_DIR}/debian/changelog" VERBATIM)
add_custom_target(calhost_deb_changelog ALL DEPENDS "${_changelog_gz}")
foreach(_pkg _comp IN ZIP_LISTS CALHOST_DEB_PACKAGES CALHOST_DEB_COMPONENTS)
  install(FILES "${CMAKE_CURRENT_LIST_DIR}/debian/copyright" "${_changelog_gz}"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/${_pkg}" COMPONENT ${_comp})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${CALHOST_DEB_COMPONENTS})
set(CPACK_PACKAGE_NAME calhost)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "calhost maintainers")
set(CPACK_PACKAGE_CONTACT "calhost maintainers <maintainers@users.noreply.a-seed-9963f7fe.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
# cpack -G DEB in a build for another prefix than /usr (a default build:
# /usr/local) is refused with the commands that make correct packages
# (the packaged paths are compiled in: see that file)
set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_CURRENT_LIST_DIR}/CalhostCPackOptions.cmake")
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}/packages")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# our own libraries resolve from the build tree; their packages' shlibs files
# name them (">=": a program built against 1.1 runs with every later 1.x)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CMAKE_BINARY_DIR}/lib")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://calhost.invalid/")
set(_v "${PROJECT_VERSION}")

set(CPACK_DEBIAN_CALHOST_PACKAGE_NAME calhost)
set(CPACK_DEBIAN_CALHOST_PACKAGE_SECTION utils)
# What dpkg-shlibdeps cannot see: the openblas plugin dlopen()s
# libopenblas.so.0 in create() (its constructor would start threads in every
# process that loads the plugin), and the OpenCL plugins find devices only
# through an installed ICD.
set(CPACK_DEBIAN_CALHOST_PACKAGE_RECOMMENDS "libopenblas0")
set(CPACK_DEBIAN_CALHOST_PACKAGE_SUGGESTS "pocl-opencl-icd | opencl-icd")
set(CPACK_COMPONENT_CALHOST_DESCRIPTION "calibration host for accelerated backends
calhost calibrates every installed backend plugin (a blocked CPU GEMM,
OpenBLAS, OpenCL GEMM, CLBlast, an example ReduceSum) for this machine's
processors and models, and keeps the winning policies in one profile store
that deployments read. Ships the plugins, the default configuration
(/usr/share/calhost/calhost.ini; /etc/calhost/calhost.ini replaces it when
created), the fleet scripts for Slurm, manual pages and bash completion.")

# The library packages activate the ldconfig trigger (lintian's
# lacks-ldconfig-trigger). CPack also writes postinst/postrm scripts that call
# ldconfig for any library in /usr/lib (lintian warns maintscript-calls-ldconfig):
# redundant with the trigger, harmless, and CPack offers no switch to drop them.
set(_triggers "${CMAKE_CURRENT_LIST_DIR}/debian/triggers")
set(CPACK_DEBIAN_CALSTORE_PACKAGE_CONTROL_EXTRA "${_triggers}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA "${_triggers}")
# Explained lintian overrides (each file says why), installed where lintian reads them.
install(FILES "${CMAKE_CURRENT_LIST_DIR}/debian/lintian/calhost-plugin-dev"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/lintian/overrides" COMPONENT plugin_dev)

set(CPACK_DEBIAN_CALSTORE_PACKAGE_NAME ${CALHOST_DEB_CALSTORE})
set(CPACK_DEBIAN_CALSTORE_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_CALSTORE_DESCRIPTION "calhost calibration profile store library
libcalstore reads, merges and atomically rewrites calhost's profile store
and answers lookups with the four-level precedence (exact override,
portable override, exact calibrated, portable calibrated).")

set(CPACK_DEBIAN_CALSTORE_DEV_PACKAGE_NAME libcalstore-dev)
set(CPACK_DEBIAN_CALSTORE_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_CALSTORE_DEV_PACKAGE_DEPENDS "${CALHOST_DEB_CALSTORE} (= ${_v})")
set(CPACK_COMPONENT_CALSTORE_DEV_DESCRIPTION "calhost calibration profile store library (development files)
The header calhost/calstore.h, the static library, the CMake package
calstore, calstore.pc and the calstore(3) manual page.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${CALHOST_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# libcalhost_runtime.so.0 links libcalstore.so.1, which dpkg-shlibdeps finds in
# the build tree without a package to name (CPack passes --ignore-missing-info):
# the one dependency stated by hand, with libcalstore1's shlibs rule (>=).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${CALHOST_DEB_CALSTORE} (>= ${_v})")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "calhost deployment runtime library
libcalhost_runtime lets an inference runtime select, on a production
machine, the policies calhost calibrated: it loads the one backend plugin
it needs, builds the workload's keys and looks them up in the store.")

set(CPACK_DEBIAN_RUNTIME_DEV_PACKAGE_NAME libcalhost-runtime-dev)
set(CPACK_DEBIAN_RUNTIME_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_RUNTIME_DEV_PACKAGE_DEPENDS
    "${CALHOST_DEB_RUNTIME} (= ${_v}), libcalstore-dev (= ${_v}), calhost-plugin-dev (= ${_v})")
set(CPACK_COMPONENT_RUNTIME_DEV_DESCRIPTION "calhost deployment runtime library (development files)
The header calhost/runtime.h, the static library, the CMake package
calhost-runtime, calhost-runtime.pc, the calhost-runtime(3) manual page and
the deployment example project.")

set(CPACK_DEBIAN_PLUGIN_DEV_PACKAGE_NAME calhost-plugin-dev)
set(CPACK_DEBIAN_PLUGIN_DEV_PACKAGE_SECTION libdevel)
# plugin authors run `calhost plugin check`; the guide's citations of host/
# sources are in calhost's share/doc/calhost/source
set(CPACK_DEBIAN_PLUGIN_DEV_PACKAGE_RECOMMENDS "calhost (= ${_v})")
set(CPACK_COMPONENT_PLUGIN_DEV_DESCRIPTION "calhost plugin SDK for backend authors
The plugin ABI header calhost/plugin.h, the CMake package calhost-plugin
(calhost_plugin_add), calhost-plugin.pc, the template project, the author's
guide and the calhost-plugin(7) manual page.")

include(CPack)
