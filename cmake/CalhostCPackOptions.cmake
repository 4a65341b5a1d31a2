# CalhostCPackOptions.cmake: read by cpack for each generator
# (CPACK_PROJECT_CONFIG_FILE, set in CalhostPackaging.cmake). The Debian
# packages install under /usr: calhost compiles in the paths of its
# installation (the default configuration under DATADIR, /etc/calhost, the
# plugin folder under LIBDIR) and GNUInstallDirs gives the multiarch
# library folder and /etc only for the /usr prefix, so packages cut from a
# build for another prefix (CMake's default /usr/local: 222 lintian errors)
# would be wrong everywhere. Refused here, before anything is installed,
# saying how to configure a packaging build.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_PACKAGING_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR
    "calhost: the Debian packages need a build configured for the /usr prefix; this build's "
    "CMAKE_INSTALL_PREFIX is ${CPACK_PACKAGING_INSTALL_PREFIX} (its compiled-in paths and "
    "library folder are that prefix's). Configure a packaging build and run cpack there:\n"
    "  cmake -S SOURCE -B build-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr "
    "-DCALHOST_TESTS=OFF -DCALHOST_BENCH=OFF\n"
    "  cmake --build build-deb -j && (cd build-deb && cpack -G DEB)")
endif()
