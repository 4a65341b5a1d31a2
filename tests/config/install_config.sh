#!/bin/sh
# install_config.sh BUILD_DIR INSTALLED_CONFIG: the installed calhost finds
# its own configuration (ctest config_installed). Installs the build tree to
# a temporary prefix (not the compiled-in one), runs the installed calhost
# from a directory without calhost.ini and with empty HOME and XDG folders,
# and expects PREFIX/share/calhost/calhost.ini to be read, by `config show`
# and by a real (short) `calibrate`. Then removes that file and expects
# `calibrate` to say that no configuration file was found and where it
# looked. INSTALLED_CONFIG is the compiled-in ${datadir}/calhost/calhost.ini:
# when this machine has one, the last step is skipped (it would be found).
set -eu
build=$1
installed_config=$2
work=$(mktemp -d /tmp/calhost-install-config-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
work=$(cd "$work" && pwd -P)
prefix="$work/prefix"

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
config=$(find "$prefix" -path '*/calhost/calhost.ini' | head -n 1)
test -n "$config" || fail "calhost.ini not installed"
test -x "$prefix/bin/calhost" || fail "calhost not installed"

mkdir -p "$work/cwd" "$work/home" "$work/xdg" "$work/cache"
calhost() {
  (cd "$work/cwd" && HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" XDG_CACHE_HOME="$work/cache" \
    "$prefix/bin/calhost" "$@")
}

step "config show reads $config"
calhost config show >"$work/show.txt" 2>&1 || { cat "$work/show.txt"; fail "config show"; }
head -n 1 "$work/show.txt"
grep -qF "; effective configuration from $config" "$work/show.txt" ||
  fail "the installed calhost did not read its installed configuration"
grep -q '^\[workload matmul_small_64\]' "$work/show.txt" || fail "no workloads shown"

step "calibrate runs the installed configuration's workload"
calhost calibrate --plugin cpu_gemm --workload matmul_small_64 --rigor quick --threads 1 \
  --time-budget 3 >"$work/calibrate.txt" 2>&1 || { cat "$work/calibrate.txt"; fail "calibrate"; }
cat "$work/calibrate.txt"
grep -q 'matmul_small_64' "$work/calibrate.txt" || fail "calibrate did not run the workload"

if [ -e "$installed_config" ]; then
  echo "SKIP the no-configuration step: $installed_config exists on this machine"
else
  step "without its configuration, calibrate says so and where it looked"
  rm -f "$config"
  if calhost calibrate >"$work/none.txt" 2>&1; then
    cat "$work/none.txt"
    fail "calibrate succeeded without a configuration"
  fi
  cat "$work/none.txt"
  grep -q "no configuration file found" "$work/none.txt" || fail "no 'no configuration file found'"
  grep -qF "$config" "$work/none.txt" || fail "the message does not name $config"
  grep -qF "./calhost.ini" "$work/none.txt" || fail "the message does not name ./calhost.ini"
fi
echo "PASS the installed calhost finds its configuration"
