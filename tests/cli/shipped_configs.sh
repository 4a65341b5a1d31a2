#!/usr/bin/env bash
# shipped_configs.sh: cli_shipped_configs (issue 22 item 1): the shipped
# deployment example (config/deploy-portable.ini) agrees with the
# calibration configuration (config/calhost.ini): the same workloads (each
# key's value, so the keys match) and thread counts, and no plugin that
# calhost.ini calibrates left out of the deployment's [plugins] (a lookup
# without --plugin asks every enabled plugin serving the operator).
set -euo pipefail
build=${CALHOST_BUILD_DIR:?CALHOST_BUILD_DIR}
src=${CALHOST_SOURCE_DIR:?CALHOST_SOURCE_DIR}
show() { # the effective values without their origins
  "$build/bin/calhost" --config "$src/config/$1" config show |
    sed -e 's/[[:space:]]*;.*$//' -e '/^$/d'
}
section() { # section NAME-REGEX: the lines of matching sections
  awk -v re="$1" '/^\[/ { on = ($0 ~ re) } on' 
}
cal=$(show calhost.ini)
dep=$(show deploy-portable.ini)
fail=0
if ! diff <(section '^\[workload ' <<<"$cal") <(section '^\[workload ' <<<"$dep"); then
  echo "FAIL: deploy-portable.ini's workloads differ from calhost.ini's" >&2
  fail=1
fi
if [ "$(grep '^threads = ' <<<"$cal")" != "$(grep '^threads = ' <<<"$dep")" ]; then
  echo "FAIL: the thread counts differ" >&2
  fail=1
fi
# the deployment enables every plugin (no list), or calhost.ini's list
dep_plugins=$(section '^\[plugins\]' <<<"$dep" | grep -E '^(enabled|disabled) =')
cal_plugins=$(section '^\[plugins\]' <<<"$cal" | grep -E '^(enabled|disabled) =')
if [ "$dep_plugins" != $'enabled =\ndisabled =' ] && [ "$dep_plugins" != "$cal_plugins" ]; then
  echo "FAIL: deploy-portable.ini's [plugins] leaves out plugins calhost.ini calibrates:" >&2
  echo "$dep_plugins" >&2
  fail=1
fi
[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
