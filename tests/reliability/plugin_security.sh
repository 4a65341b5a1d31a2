#!/usr/bin/env bash
# plugin_security.sh: end-to-end checks, through bin/calhost, that plugins
# are never loaded from a place another user could have written (issue 6,
# Security). Registered as the ctest reliability_plugin_security; needs
# CALHOST_BUILD_DIR (bin/calhost and lib/calhost/test-plugins/test_good.so).
#
# Each case copies the well-behaved test plugin into a fresh tree, makes one
# thing unsafe (a group/other-writable file, directory or ancestor, an owner
# other than root or the caller, a symlink into an unsafe directory), lists
# the plugins with `calhost plugins --json` and checks the plugin is
# rejected with the reason; control cases check the same tree, made safe, is
# loaded. Then CALHOST_PLUGIN_PATH under elevated privileges: a setuid-root
# copy of calhost run by user nobody must ignore it (secure_getenv), while
# the same copy without the setuid bit honours it. Cases needing root
# (chown) or a suid-capable file system are skipped with a message.
set -uo pipefail
build=${CALHOST_BUILD_DIR:?set CALHOST_BUILD_DIR to the build tree}
calhost="$build/bin/calhost"
plugin="$build/lib/calhost/test-plugins/test_good.so"
for f in "$calhost" "$plugin"; do
  [ -e "$f" ] || { echo "plugin_security: $f is not built"; exit 1; }
done

top=$(mktemp -d "${TMPDIR:-/tmp}/calhost-plugsec-XXXXXX")
chmod 0755 "$top"
trap 'chmod -R u+w "$top" 2>/dev/null; rm -rf "$top"' EXIT
cases=0 refused=0 controls=0 failures=0 skipped=0

# status_of PATH-IN-JSON JSON: "loaded", "rejected: STATE: REASON" or "absent".
status_of() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
path, text = sys.argv[1], sys.argv[2]
try:
    doc = json.loads(text)
except Exception as e:
    print("unparsable: %s" % e); sys.exit(0)
for p in doc.get("plugins", []):
    if p.get("path") == path:
        print("loaded" if p.get("status") == "loaded" else
              "rejected: %s: %s" % (p.get("state"), p.get("reason")))
        break
else:
    print("absent")
EOF
}

# list_as [USER] DIR: calhost plugins --json with CALHOST_PLUGIN_PATH=DIR.
list_as() {
  local user=$1 dir=$2 exe=${3:-$calhost}
  if [ -z "$user" ]; then
    CALHOST_PLUGIN_PATH="$dir" "$exe" plugins --json 2>/dev/null
  else
    setpriv --reuid="$user" --regid="$user" --clear-groups \
      env CALHOST_PLUGIN_PATH="$dir" HOME=/nonexistent "$exe" plugins --json 2>/dev/null
  fi
}

# expect NAME DIR FILE WANT [PATTERN]: WANT is loaded|rejected|absent; a
# rejection's reason must match PATTERN (grep -E).
expect() {
  local name=$1 dir=$2 file=$3 want=$4 pattern=${5:-} user=${6:-} exe=${7:-$calhost}
  local real got
  real=$(realpath "$file")
  got=$(status_of "$real" "$(list_as "$user" "$dir" "$exe")")
  [ "$got" = absent ] && got=$(status_of "$file" "$(list_as "$user" "$dir" "$exe")")
  cases=$((cases + 1))
  case "$want:$got" in
    loaded:loaded) controls=$((controls + 1)); echo "   ok   $name: loaded" ;;
    absent:absent) refused=$((refused + 1)); echo "   ok   $name: not loaded (not even listed)" ;;
    rejected:rejected:*)
      if [ -n "$pattern" ] && ! grep -qE "$pattern" <<<"$got"; then
        failures=$((failures + 1)); echo "FAIL   $name: $got (reason should match /$pattern/)"
      else
        refused=$((refused + 1)); echo "   ok   $name: ${got}"
      fi ;;
    *) failures=$((failures + 1)); echo "FAIL   $name: expected $want, got: $got" ;;
  esac
}

fresh() { # fresh NAME: a safe tree top/NAME/plugins/test_good.so
  local d="$top/$1/plugins"
  mkdir -p "$d"
  chmod 0755 "$top/$1" "$d"
  install -m 0644 "$plugin" "$d/test_good.so"
  echo "$d"
}

echo "== plugin security: refusals through \`calhost plugins --json\` ($calhost)"
d=$(fresh control); expect "safe tree (control)" "$d" "$d/test_good.so" loaded
d=$(fresh dir777); chmod 0777 "$d"
expect "directory 0777" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable by group and others"
d=$(fresh dir775); chmod 0775 "$d"
expect "directory 0775" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable by group"
d=$(fresh dir757); chmod 0757 "$d"
expect "directory 0757" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable by others"
d=$(fresh file666); chmod 0666 "$d/test_good.so"
expect "file 0666" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable by group and others"
d=$(fresh file664); chmod 0664 "$d/test_good.so"
expect "file 0664" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable by group"
d=$(fresh ancestor); chmod 0775 "$top/ancestor"
expect "ancestor directory 0775" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable by group"
d=$(fresh sticky); chmod 1777 "$top/sticky"
expect "sticky ancestor 1777 (like /tmp; allowed)" "$d" "$d/test_good.so" loaded
d=$(fresh ownsticky); chmod 1777 "$d"
expect "plugin's own directory 1777 (sticky not enough)" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable"
# A symlink from a safe directory into an unsafe one is judged by its target.
d=$(fresh link); u=$(fresh linktarget); chmod 0777 "$u"; rm "$d/test_good.so"
ln -s "$u/test_good.so" "$d/test_good.so"
expect "symlink into a 0777 directory" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*writable"

if [ "$(id -u)" -eq 0 ]; then
  d=$(fresh fileowner); chown 65534 "$d/test_good.so"
  expect "file owned by uid 65534" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*owned by uid 65534"
  d=$(fresh dirowner); chown 65534 "$d"
  expect "directory owned by uid 65534" "$d" "$d/test_good.so" rejected "^rejected: unsafe: .*owned by uid 65534"
else
  echo "   skip ownership cases: chown needs root"; skipped=$((skipped + 2))
fi

echo "== CALHOST_PLUGIN_PATH under elevated privileges (setuid-root calhost run by nobody)"
suid_ok=1
if [ "$(id -u)" -ne 0 ]; then
  echo "   skip: making a setuid-root copy needs root"; suid_ok=0
elif ! command -v setpriv >/dev/null; then
  echo "   skip: setpriv (util-linux) is not installed"; suid_ok=0
elif findmnt -no OPTIONS -T "$top" 2>/dev/null | grep -qw nosuid; then
  echo "   skip: $top is on a nosuid file system"; suid_ok=0
fi
if [ $suid_ok -eq 1 ]; then
  bin="$top/bin"; mkdir -p "$bin"; chmod 0755 "$bin"
  install -m 0755 "$calhost" "$bin/calhost"
  d=$(fresh envdir)
  expect "non-setuid copy run by nobody honours CALHOST_PLUGIN_PATH (control)" \
    "$d" "$d/test_good.so" loaded "" 65534 "$bin/calhost"
  chmod 4755 "$bin/calhost"
  expect "setuid-root copy run by nobody ignores CALHOST_PLUGIN_PATH" \
    "$d" "$d/test_good.so" absent "" 65534 "$bin/calhost"
  # The same copy run by root (no privilege change, AT_SECURE unset) uses it.
  expect "setuid-root copy run by root (no elevation) uses it (control)" \
    "$d" "$d/test_good.so" loaded "" "" "$bin/calhost"
else
  skipped=$((skipped + 3))
fi

echo "plugins: cases=$cases refused=$refused loaded_controls=$controls skipped=$skipped failures=$failures"
if [ $failures -ne 0 ]; then
  echo "plugins: FAILED"
  exit 1
fi
echo "plugins: PASSED"
