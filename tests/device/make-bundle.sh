#!/bin/sh
# make-bundle.sh [BUILD_DIR] [BUNDLE_DIR]: the prebuilt bundle that
# tests/device/cuda-check.sh runs on a GPU machine (issue 39), made here
# from a build with the CUDA plugins (default: build/ and build-bundle/ at
# the repository's root; build-bundle/ is ignored by git: send it with the
# device call's `carry`). It holds, stripped:
#   bin/calhost, bin/cuda-bench
#   lib/calhost/plugins/cuda_gemm.so, cublaslt.so
#   lib/*.so*   the shared libraries they need that a CUDA image may lack
#               (inih, protobuf-c, hwloc, jansson, ...): every one ldd
#               resolves except the C runtime's and NVIDIA's own
#   MANIFEST    the commit, the build and the files with their sizes
# A few MB. NVIDIA's libraries (libcuda, NVRTC, cuBLASLt) are not in it:
# the plugins find the GPU machine's (see cuda-check.sh). Exit 0, or 1 with
# the reason when the build lacks a part.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
bundle=${2:-"$root/build-bundle"}
for f in bin/calhost bin/cuda-bench lib/calhost/plugins/cuda_gemm.so lib/calhost/plugins/cublaslt.so; do
  if [ ! -f "$build/$f" ]; then
    echo "make-bundle: $build/$f missing (build with the CUDA toolkit's headers and -DCALHOST_BENCH=ON)" >&2
    exit 1
  fi
done
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib/calhost/plugins"
copy() { # copy SRC DEST: a stripped copy
  cp "$1" "$2"
  strip --strip-unneeded "$2" 2>/dev/null || true
}
copy "$build/bin/calhost" "$bundle/bin/calhost"
copy "$build/bin/cuda-bench" "$bundle/bin/cuda-bench"
copy "$build/lib/calhost/plugins/cuda_gemm.so" "$bundle/lib/calhost/plugins/cuda_gemm.so"
copy "$build/lib/calhost/plugins/cublaslt.so" "$bundle/lib/calhost/plugins/cublaslt.so"
# the libraries they need, less the C runtime (every Linux has it, and a
# copy of it would not match the machine's loader) and NVIDIA's own
ldd "$bundle/bin/calhost" "$bundle/bin/cuda-bench" "$bundle/lib/calhost/plugins/"*.so |
  awk '/=> \// { print $3 }' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libgcc_s|libstdc\+\+|libcuda|libnvrtc|libcublas[^/]*)\.so' |
  while read -r lib; do
    copy "$lib" "$bundle/lib/$(basename "$lib")"
  done
{
  echo "calhost CUDA bundle"
  echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (modified)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version 2>/dev/null | head -1)"
  (cd "$bundle" && find . -type f ! -name MANIFEST | sort | while read -r f; do
    echo "$(wc -c <"$f") $f"
  done)
} >"$bundle/MANIFEST"
echo "make-bundle: $bundle ($(du -sk "$bundle" | cut -f1) KiB, $(find "$bundle" -type f | wc -l) files)"
