# mingw-w64.cmake: CMake toolchain file for cross-compiling calhost's Windows
# code paths (libcalstore and the plugin loader: LockFileEx, MoveFileEx,
# LoadLibrary, LOCALAPPDATA) and their test programs (tests/windows) with
# Debian's gcc-mingw-w64-x86-64.
#
#   cmake -S . -B build-mingw -DCMAKE_TOOLCHAIN_FILE=.ci/mingw-w64.cmake \
#         -DCMAKE_C_FLAGS=-Werror
#   cmake --build build-mingw --target <store and loader targets>
#   cmake --build build-mingw --target test_store_win test_loader_win
#   tests/windows/run.sh build-mingw      # the Windows tests under Wine
#
# tests/reliability/run.sh does exactly that in CI (sections "mingw-w64"
# and "wine").
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(_calhost_mingw_prefix x86_64-w64-mingw32)
# The default alternative (Debian: the posix thread model, which also offers
# winpthreads should a part use pthreads on Windows).
find_program(CMAKE_C_COMPILER NAMES ${_calhost_mingw_prefix}-gcc ${_calhost_mingw_prefix}-gcc-posix
             REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${_calhost_mingw_prefix}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${_calhost_mingw_prefix})

# Look for headers and libraries in the target environment only, programs on
# the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Never pick up the build machine's .pc files (cmocka, inih...): none of them
# describe Windows libraries.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/${_calhost_mingw_prefix}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
