#!/bin/bash
# packages.sh SOURCE_DIR WORK_BUILD_DIR: the Debian packages' test (ctest
# packages_deb). Configures a dedicated Release build with the packaging
# layout (prefix /usr, dpkg-buildflags' hardening), builds it (tests off),
# cuts the six packages with `cpack -G DEB`, and then:
#   - runs lintian on every package: no error, no warning but the explained
#     ones (maintscript-calls-ldconfig: cmake/CalhostPackaging.cmake);
#   - checks each package's files against Debian's shared-library rules
#     (soname in the name, headers and the unversioned .so only in -dev,
#     multiarch libdir, shlibs, copyright and changelog) and that every
#     dependency is satisfiable on this system (ours, or installed here
#     with a version that satisfies it);
#   - unpacks them into a throw-away root (dpkg -x) and runs from it:
#     calhost --version, calhost plugins (the packaged plugins found),
#     config show (the packaged default, then /etc/calhost/calhost.ini of the
#     root replacing it), calhost calibrate with the packaged configuration,
#     man -l on the pages, an out-of-tree plugin built against
#     calhost-plugin-dev (find_package and pkg-config) and checked by the
#     packaged calhost, and the deployment example built against the runtime
#     packages selecting the calibrated profile.
set -eu # (no pipefail: grep -q may close a listing early)
src=$1
build=$2
work=$(mktemp -d /tmp/calhost-packages-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
start=$(date +%s)

step "configure and build $build (Release, prefix /usr)"
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" \
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DCALHOST_TESTS=OFF -DCALHOST_BENCH=OFF -DCALHOST_FUZZ=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configure"; }
cmake --build "$build" -j "$(nproc)" >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; fail "build"; }
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB) >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack"; }
pkgs="$build/packages"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
calstore_so=$(cd "$build/lib" && ls libcalstore.so.? | head -n 1)
runtime_so=$(cd "$build/lib" && ls libcalhost_runtime.so.? | head -n 1)
libcalstore=libcalstore${calstore_so##*.so.}
libruntime=libcalhost-runtime${runtime_so##*.so.}
names="calhost $libcalstore libcalstore-dev $libruntime libcalhost-runtime-dev calhost-plugin-dev"
version=$(dpkg-deb -f "$pkgs"/calhost_*.deb Version)
for n in $names; do
  test -f "$pkgs/${n}_${version}_${arch}.deb" || fail "no package $n"
done
[ "$(ls "$pkgs"/*.deb | wc -l)" -eq 6 ] || fail "not exactly six packages: $(ls "$pkgs")"
echo "packages built in $(($(date +%s) - start)) s: $names"

step "lintian"
lintian --tag-display-limit 0 "$pkgs"/*.deb >"$work/lintian.log" 2>&1 || true
cat "$work/lintian.log"
if grep -E '^[EW]: ' "$work/lintian.log" | grep -v ': maintscript-calls-ldconfig ' | grep -q .; then
  fail "lintian reports an error or an unexplained warning"
fi

step "files and dependencies of each package"
files() { dpkg-deb -c "$pkgs/${1}_${version}_${arch}.deb" | awk '{print $6}' | sed 's|^\./|/|'; }
for n in $names; do
  f=$(files "$n")
  echo "$f" | grep -qx "/usr/share/doc/$n/copyright" || fail "$n has no copyright file"
  echo "$f" | grep -qx "/usr/share/doc/$n/changelog.gz" || fail "$n has no changelog.gz"
  if echo "$f" | grep -E '^/usr/lib/[^/]+\.so' | grep -q .; then
    fail "$n puts a library outside the multiarch libdir"
  fi
  case $n in
    *-dev) ;;
    *) dev='^/usr/include/.|^/usr/lib/[^/]+/lib[^/]*\.so$|^/usr/lib/.*\.a$|/pkgconfig/[^/]*\.pc$'
       ! echo "$f" | grep -E "$dev" | grep -q . ||
         fail "$n ships development files: $(echo "$f" | grep -E "$dev")" ;;
  esac
  # every dependency: one of ours at this version, or installed here and satisfying
  dpkg-deb -f "$pkgs/${n}_${version}_${arch}.deb" Depends | tr ',' '\n' | sed 's/^ *//' |
    while read -r group; do
      [ -n "$group" ] || continue
      ok=0
      IFS='|' read -ra alts <<<"$group"
      for alt in "${alts[@]}"; do
        alt=$(echo "$alt" | sed 's/^ *//; s/ *$//')
        dep=${alt%% *}
        rel=$(echo "$alt" | sed -n 's/.*(\([<>=]*\) *\([^)]*\)).*/\1 \2/p')
        if [[ " $names " == *" $dep "* ]]; then
          have=$version
        else
          have=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$dep" 2>/dev/null |
                 awk '$1 == "ii" {print $2; exit}')
        fi
        [ -n "$have" ] || continue
        if [ -n "$rel" ]; then
          op=${rel%% *} want=${rel#* }
          case $op in '>=') op=ge ;; '<=') op=le ;; '=') op=eq ;; '>>') op=gt ;; '<<') op=lt ;; esac
          dpkg --compare-versions "$have" "$op" "$want" || continue
        fi
        ok=1
        break
      done
      [ $ok = 1 ] || fail "$n: dependency '$group' is not satisfiable here"
    done
done
files "$libcalstore" | grep -qx "/usr/lib/$multiarch/$calstore_so" || fail "$libcalstore lacks $calstore_so"
files "$libruntime" | grep -qx "/usr/lib/$multiarch/$runtime_so" || fail "$libruntime lacks $runtime_so"
files libcalstore-dev | grep -qx "/usr/lib/$multiarch/libcalstore.so" || fail "libcalstore-dev lacks the .so link"
files libcalstore-dev | grep -qx "/usr/include/calhost/calstore.h" || fail "libcalstore-dev lacks calstore.h"
files libcalhost-runtime-dev | grep -qx "/usr/include/calhost/runtime.h" || fail "runtime.h"
files calhost-plugin-dev | grep -qx "/usr/include/calhost/plugin.h" || fail "plugin.h"
for lib in "$libcalstore" "$libruntime"; do
  dpkg-deb -I "$pkgs/${lib}_${version}_${arch}.deb" shlibs | grep -q " $lib (>= $version)" ||
    fail "$lib: no shlibs entry"
done
dpkg-deb -f "$pkgs/${libruntime}_${version}_${arch}.deb" Depends | grep -q "$libcalstore" ||
  fail "$libruntime does not depend on $libcalstore"
for p in man1/calhost.1.gz man5/calhost.ini.5.gz; do
  files calhost | grep -qx "/usr/share/man/$p" || fail "calhost lacks $p"
done
files calhost | grep -qx /usr/share/bash-completion/completions/calhost || fail "no completion"
listing=$(dpkg-deb -c "$pkgs/calhost_${version}_${arch}.deb")
for s in submit.sh calibrate-shard.sbatch merge.sbatch; do
  echo "$listing" | grep -q "^-rwxr-xr-x .*/usr/share/calhost/fleet/$s$" ||
    fail "fleet script $s not packaged executable"
done

step "unpack into a throw-away root"
root="$work/root"
for n in $names; do dpkg -x "$pkgs/${n}_${version}_${arch}.deb" "$root"; done
calhost="$root/usr/bin/calhost"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config"
mkdir -p "$HOME" "$work/run"
cd "$work/run"
"$calhost" --version | grep -q "^calhost $version " || fail "calhost --version"
"$calhost" plugins >"$work/plugins.txt" 2>&1 || { cat "$work/plugins.txt"; fail "calhost plugins"; }
for p in cpu_gemm example; do
  grep -q "^$root/usr/lib/$multiarch/calhost/plugins/$p.so" "$work/plugins.txt" ||
    { cat "$work/plugins.txt"; fail "the packaged plugin $p was not found"; }
done
"$calhost" config show >"$work/show.txt"
head -n 1 "$work/show.txt" | grep -q "from $root/usr/share/calhost/calhost.ini: the packaged default" ||
  { head -n 1 "$work/show.txt"; fail "config show does not name the packaged default"; }
man -l "$root/usr/share/man/man1/calhost.1.gz" >"$work/man.txt" 2>/dev/null || fail "man calhost"
grep -q "calibrate" "$work/man.txt" || fail "man calhost has no calibrate"
for p in man5/calhost.ini.5 man3/calstore.3 man3/calhost-runtime.3 man7/calhost-plugin.7; do
  man -l "$root/usr/share/man/$p.gz" >/dev/null 2>&1 || fail "man -l $p"
done

step "calhost calibrate with the packaged configuration"
"$calhost" --store "$work/store.txt" calibrate --plugin cpu_gemm --workload matmul_small_64 \
  --threads 1 --rigor quick --time-budget 5 >"$work/cal.log" 2>&1 || { cat "$work/cal.log"; fail "calibrate"; }
grep -q "stored" "$work/cal.log" || { cat "$work/cal.log"; fail "calibrate stored nothing"; }
"$calhost" --store "$work/store.txt" lookup --workload matmul_small_64 --plugin cpu_gemm --threads 1 \
  >"$work/lookup.txt" 2>&1 || { cat "$work/lookup.txt"; fail "lookup"; }

step "the system configuration replaces the packaged default"
mkdir -p "$root/etc/calhost"
cp "$root/usr/share/calhost/calhost.ini" "$root/etc/calhost/calhost.ini"
"$calhost" config show >"$work/show.txt"
head -n 1 "$work/show.txt" | grep -q "from $root/etc/calhost/calhost.ini: the system configuration" ||
  { head -n 1 "$work/show.txt"; fail "config show does not name the system configuration"; }
rm -rf "$root/etc/calhost"

step "an out-of-tree plugin against calhost-plugin-dev"
template="$root/usr/share/calhost/plugin-template"
cmake -S "$template" -B "$work/plugin" -DCMAKE_PREFIX_PATH="$root/usr" >"$work/plugin.log" 2>&1 &&
  cmake --build "$work/plugin" >>"$work/plugin.log" 2>&1 || { cat "$work/plugin.log"; fail "template (CMake)"; }
so=$(find "$work/plugin" -maxdepth 2 -name '*.so' | head -n 1)
test -n "$so" || fail "the template built no plugin"
"$calhost" plugin check "$so" >"$work/check.log" 2>&1 || { cat "$work/check.log"; fail "plugin check (CMake build)"; }
export PKG_CONFIG_PATH="$root/usr/lib/$multiarch/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -shared -fPIC $(pkg-config --cflags calhost-plugin) "$template"/*.c -o "$work/pc-plugin.so" ||
  fail "template (pkg-config)"
"$calhost" plugin check "$work/pc-plugin.so" >"$work/check.log" 2>&1 ||
  { cat "$work/check.log"; fail "plugin check (pkg-config build)"; }

step "the deployment example against the runtime packages"
example="$root/usr/share/calhost/examples/deployment"
cmake -S "$example" -B "$work/deploy" -DCMAKE_PREFIX_PATH="$root/usr" >"$work/deploy.log" 2>&1 &&
  cmake --build "$work/deploy" >>"$work/deploy.log" 2>&1 || { cat "$work/deploy.log"; fail "deployment example"; }
# shellcheck disable=SC2046
cc -std=c11 "$example/deploy_example.c" $(pkg-config --cflags --libs calhost-runtime) -o "$work/pc-deploy" ||
  fail "deployment example (pkg-config)"
printf '[store]\npath = %s\n[plugins]\ndirectories = %s\n[workload matmul_small_64]\n' \
  "$work/store.txt" "$root/usr/lib/$multiarch/calhost/plugins" >"$work/deploy.ini"
sed -n '/^\[workload matmul_small_64\]/,/^\[/p' "$root/usr/share/calhost/calhost.ini" |
  sed '1d;/^\[/d' >>"$work/deploy.ini"
for bin in "$work/deploy/calhost-deploy-example" "$work/pc-deploy"; do
  LD_LIBRARY_PATH="$root/usr/lib/$multiarch" "$bin" "$work/deploy.ini" matmul_small_64 cpu_gemm \
    >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "$bin"; }
  grep -q "calibrated profile" "$work/out.txt" || { cat "$work/out.txt"; fail "$bin selected no calibrated profile"; }
done
echo "PASS packages: built, lintian clean, installed layout works ($(($(date +%s) - start)) s)"
