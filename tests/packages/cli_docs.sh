#!/bin/bash
# cli_docs.sh BUILD_DIR: the generated manual page and bash completion against
# the parser (ctest cli_manpage_flags, cli_completion).
#   manpage:    every flag of every command in the parser's table
#               (`calhost --json help`) appears in that command's section of
#               calhost.1, and every flag the page lists is one the parser
#               accepts for that command (`calhost CMD FLAG --help` exits 0)
#   completion: sources the generated completion and calls _calhost with
#               COMP_WORDS: commands, flags per command, choice values,
#               backend names (calhost plugins), workload names (config),
#               subcommands, files
set -eu
build=$1
mode=$2
calhost="$build/bin/calhost"
doc="$build/host/cli/doc"
fail() { echo "FAIL: $*" >&2; exit 1; }
case $mode in
manpage)
  "$calhost" --json help >"$build/cli_docs_help.json"
  python3 - "$build/cli_docs_help.json" "$doc/calhost.1" "$calhost" <<'PY'
import json, re, subprocess, sys
d = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read().replace("\\-", "-")
calhost = sys.argv[3]
sections = dict(re.findall(r"(?ms)^\.SS (\S+)\n(.*?)(?=^\.SS |^\.SH |\Z)", page))
bad = []
for c in d["commands"]:
    sec = sections.get(c["name"])
    if sec is None:
        bad.append("no section for command %s" % c["name"]); continue
    listed = set(re.findall(r"^\\fB(--[a-z-]+)", sec, re.M))
    for f in c["flags"]:
        if f["name"] not in listed:
            bad.append("%s: parser flag %s missing from calhost.1" % (c["name"], f["name"]))
    for name in listed:
        flag = next((f for f in c["flags"] if f["name"] == name), None)
        arg = name + ("=x" if flag and flag["value"] else "")
        r = subprocess.run([calhost, c["name"], arg, "--help"], capture_output=True)
        if r.returncode != 0:
            bad.append("%s: calhost.1 lists %s, which the parser refuses" % (c["name"], name))
for f in d["global_flags"]:
    if f["name"] not in page:
        bad.append("global flag %s missing" % f["name"])
if bad:
    sys.exit("\n".join(bad))
print("PASS calhost.1 lists every parser flag of %d commands" % len(d["commands"]))
PY
  ;;
completion)
  work=$(mktemp -d /tmp/calhost-completion-XXXXXX)
  trap 'rm -rf "$work"' EXIT INT TERM
  cd "$work"
  touch run.json other.txt
  mkdir reports
  cat >cfg.ini <<'INI'
[workload alpha_one]
operator = ReduceSum
shape = 64
[workload alpha_two]
operator = ReduceSum
shape = 128
INI
  set +eu # as an interactive shell runs completions (failures: fail)
  [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
  . "$doc/calhost.bash"
  expect() { # expect "WANTED WORDS" WORD...: the completion of the last word
    local want=$1; shift
    COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMP_LINE="$*" COMP_POINT=${#COMP_LINE} COMPREPLY=()
    _calhost
    local got
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$want" ] || fail "[$*] completed to '$got', not '$want'"
  }
  expect "calibrate" "$calhost" calib
  expect "plan plugin plugins" "$calhost" pl
  expect "--record --repetitions --report" "$calhost" calibrate --re
  expect "--help --html" "$calhost" report --h
  expect "exhaustive measure quick" "$calhost" calibrate --rigor ""
  expect "exhaustive" "$calhost" verify --rigor=ex
  expect "cpu_gemm" "$calhost" calibrate --plugin cpu
  expect "example" "$calhost" --config cfg.ini lookup --plugin ex
  expect "alpha_one alpha_two" "$calhost" --config cfg.ini calibrate --workload alpha
  expect "alpha_two" "$calhost" calibrate --config=cfg.ini --workload alpha_t
  expect "check show" "$calhost" config ""
  expect "clear set" "$calhost" override ""
  expect "config" "$calhost" help con
  expect "run.json" "$calhost" report ru
  expect "reports" "$calhost" calibrate --report rep
  expect "--version" "$calhost" --vers
  # a flag added to the parser appears with no edit here (from the table)
  for f in $("$calhost" --json help | python3 -c 'import json,sys
for c in json.load(sys.stdin)["commands"]:
    if c["name"] == "calibrate":
        print(" ".join(f["name"] for f in c["flags"]))'); do
    COMP_WORDS=("$calhost" calibrate "$f") COMP_CWORD=2 COMPREPLY=()
    COMP_LINE="$calhost calibrate $f" COMP_POINT=${#COMP_LINE}
    _calhost
    printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$f" || fail "calibrate $f is not completed"
  done
  echo "PASS bash completion"
  ;;
*) fail "usage: cli_docs.sh BUILD_DIR manpage|completion" ;;
esac
