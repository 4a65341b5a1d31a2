#!/usr/bin/env python3
"""gen_docs.py: generates calhost's manual pages and bash completion, each
from the one source it documents, so that they cannot drift from it:

  gen_docs.py cli HELP.json OUT.1 OUT.bash
      calhost(1) and the bash completion from `calhost --json help` (the
      parser's own command and flag tables, host/cli/args.c)
  gen_docs.py header HEADER NAME SECTION "SUMMARY" PKG OUT
      a library page (calstore(3), calhost-runtime(3)) from a public header:
      its opening comment and every exported function with its contract
  gen_docs.py markdown README.md NAME SECTION "SUMMARY" VERSION GO-MD2MAN OUT
      a page from a Markdown document (calhost.ini(5), calhost-plugin(7)):
      a NAME section, then the document itself, through go-md2man

Run by host/cli/doc/CMakeLists.txt at build time; tests/packages checks the
results (every parser flag on the page, completion by COMP_WORDS).
"""
import json
import re
import subprocess
import sys

MANUAL = "calhost manual"


def roff(text):
    """Escapes text for roff: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + l if l[:1] in (".", "'") else l) for l in text.split("\n"))


def flag_label(f):
    left = (f["short"] + ", " if f.get("short") else "") + f["name"]
    return left + (" " + f["value"] if f.get("value") else "")


def man_flags(out, flags):
    for f in flags:
        out.append(".TP")
        out.append("\\fB" + roff(flag_label(f)) + "\\fR")
        out.append(roff(f["help"]))


def cli_man(d):
    v = d["version"]
    out = ['.TH CALHOST 1 "" "calhost %s" "%s"' % (roff(v), MANUAL), ".SH NAME",
           "calhost \\- calibrate accelerated backends and keep their profile store",
           ".SH SYNOPSIS",
           ".B calhost",
           "[\\fB\\-\\-store\\fR \\fIPATH\\fR] [\\fB\\-\\-config\\fR \\fIFILE\\fR] "
           "[\\fB\\-\\-json\\fR] [\\fB\\-\\-quiet\\fR] [\\fB\\-\\-verbose\\fR] "
           "\\fICOMMAND\\fR [\\fIARGS\\fR...]",
           ".br",
           ".B calhost help",
           "[\\fICOMMAND\\fR] | \\fICOMMAND\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR",
           ".SH DESCRIPTION",
           "calhost calibrates every installed backend plugin for this machine's "
           "processors and models and stores the winning policies in one profile store, "
           "which deployments read through libcalstore or libcalhost_runtime. "
           "Each command below is described as \\fBcalhost help\\fR \\fICOMMAND\\fR "
           "prints it; this page is generated from the same tables.",
           ".SH GLOBAL FLAGS",
           "They may stand before or after the command; every flag takes "
           "\\fB\\-\\-flag\\fR \\fIVALUE\\fR or \\fB\\-\\-flag=\\fR\\fIVALUE\\fR, "
           "and \\fB\\-\\-\\fR ends the flags."]
    man_flags(out, d["global_flags"])
    out += [".TP", "\\fB\\-\\-version\\fR", "print the version and exit", ".SH COMMANDS"]
    for c in d["commands"]:
        out.append(".SS %s" % roff(c["name"]))
        syn = "calhost " + c["name"] + (" " + c["synopsis"] if c["synopsis"] else "")
        out += [".nf", ".B", "\\fB" + roff(syn) + "\\fR", ".fi", ".PP", roff(c["summary"])]
        if c.get("details"):
            out += [".PP", ".nf", roff(c["details"].rstrip("\n")), ".fi"]
        if c["flags"]:
            out += [".PP", "Flags:", ".RS"]
            man_flags(out, c["flags"])
            out.append(".RE")
    out += [".SH FILES",
            "The configuration, unless \\fB\\-\\-config\\fR is given, is the first of "
            "\\fI./calhost.ini\\fR, \\fI$XDG_CONFIG_HOME/calhost/calhost.ini\\fR (or "
            "\\fI~/.config/calhost/calhost.ini\\fR), the system configuration "
            "\\fI/etc/calhost/calhost.ini\\fR (for an installation in \\fI/usr\\fR), "
            "and the packaged default \\fI/usr/share/calhost/calhost.ini\\fR; "
            "\\fBcalhost config show\\fR says which was read. "
            "Plugins are found in \\fI/usr/lib/<triplet>/calhost/plugins\\fR "
            "(the installation's \\fIlib/calhost/plugins\\fR). "
            "See \\fBcalhost.ini\\fR(5).",
            ".SH EXIT STATUS",
            "0 success; 1 \\(lqno\\(rq: a check failed, nothing was selected or calibrated; "
            "2 usage or operational error; 130 or 143 when interrupted.",
            ".SH SEE ALSO",
            "\\fBcalhost.ini\\fR(5), \\fBcalhost\\-plugin\\fR(7), \\fBcalstore\\fR(3), "
            "\\fBcalhost\\-runtime\\fR(3)"]
    return "\n".join(out) + "\n"


# ---- bash completion

WORD = r"[a-z0-9_][a-z0-9_-]*"


def value_kind(f):
    """How a flag's value is completed: backend, workload, file, dir,
    choice words, or nothing."""
    name, value, help_ = f["name"], f.get("value") or "", f.get("help") or ""
    if name in ("--plugin", "--backend"):
        return "backend"
    if name == "--workload":
        return "workload"
    if value == "DIR":
        return "dir"
    if re.search(r"(FILE|PATH|OUT)", value):
        return "file"
    listed = re.sub(r"^\w+: ", "", help_)
    if re.fullmatch(r"%s(, %s)*(,? or %s)?" % (WORD, WORD, WORD), listed) and (
            "," in listed or " or " in listed):
        return "choice:" + " ".join(re.findall(WORD, listed.replace(" or ", ", ")))
    return ""


def subcommands(c):
    first_line = c["synopsis"].split("\n")[0]
    subs = []
    for branch in first_line.split(" | "):
        tok = branch.strip().split(" ")[0] if branch.strip() else ""
        if re.fullmatch(r"[a-z]+(\|[a-z]+)*", tok):
            subs += [s for s in tok.split("|") if s not in subs]
    return subs


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def cli_completion(d):
    globals_ = d["global_flags"]
    cmds = d["commands"]
    lines = [
        "# bash completion for calhost -*- shell-script -*-",
        "# Generated by host/cli/doc/gen_docs.py from `calhost --json help` (calhost %s):"
        % d["version"],
        "# do not edit. Commands, flags per command, workload names from the",
        "# configuration (`calhost config show`), backend names from `calhost plugins`,",
        "# files and folders where a command expects them.",
        "",
        "_calhost_commands=%s" % sh_quote(" ".join(c["name"] for c in cmds) + " help"),
        "_calhost_global_flags=%s" % sh_quote(
            " ".join(x for f in globals_ for x in (f["name"], f.get("short")) if x)),
        "_calhost_global_value_flags=%s" % sh_quote(
            " ".join(f["name"] for f in globals_ if f.get("value"))),
        "declare -gA _calhost_flags=() _calhost_value_flags=() _calhost_kind=()",
        "declare -gA _calhost_subcommands=() _calhost_files=()",
    ]
    for f in globals_:
        if f.get("value"):
            lines.append("_calhost_kind[%s]=%s" % (sh_quote(" " + f["name"]), sh_quote(value_kind(f))))
    for c in cmds:
        n = c["name"]
        lines.append("_calhost_flags[%s]=%s" % (n, sh_quote(" ".join(f["name"] for f in c["flags"]))))
        lines.append("_calhost_value_flags[%s]=%s" % (
            n, sh_quote(" ".join(f["name"] for f in c["flags"] if f.get("value")))))
        for f in c["flags"]:
            if f.get("value"):
                lines.append("_calhost_kind[%s]=%s" % (sh_quote(n + " " + f["name"]),
                                                       sh_quote(value_kind(f))))
        subs = subcommands(c)
        if subs:
            lines.append("_calhost_subcommands[%s]=%s" % (n, sh_quote(" ".join(subs))))
        if c["max_positional"] > (1 if subs else 0):
            lines.append("_calhost_files[%s]=1" % n)
    lines.append(COMPLETION_BODY)
    return "\n".join(lines) + "\n"


COMPLETION_BODY = r'''
# _calhost_ask PROGRAM CONFIG_ARGS... -- COMMAND...: runs calhost quietly.
_calhost_ask() {
  "$@" 2>/dev/null </dev/null
}

# _calhost_values KIND: the words a flag's value may take.
_calhost_values() {
  local kind=$1
  case $kind in
    backend)
      _calhost_ask "$_calhost_prog" "${_calhost_cfg[@]}" plugins |
        sed -n 's/^  backend \([^,]*\),.*/\1/p' ;;
    workload)
      _calhost_ask "$_calhost_prog" "${_calhost_cfg[@]}" config show |
        sed -n 's/^\[workload \(.*\)\]$/\1/p' ;;
    choice:*)
      printf '%s\n' ${kind#choice:} ;;
  esac
}

_calhost_complete_files() { # [-d]
  if declare -F _filedir >/dev/null; then
    _filedir "$@"
  elif [[ $1 == -d ]]; then
    mapfile -t COMPREPLY < <(compgen -d -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}

_calhost_complete_value() { # KIND
  case $1 in
    file) _calhost_complete_files ;;
    dir) _calhost_complete_files -d ;;
    "") COMPREPLY=() ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$(_calhost_values "$1")" -- "$cur") ;;
  esac
}

_calhost() {
  local cur prev words cword split=false
  if declare -F _init_completion >/dev/null; then
    _init_completion -s || return
  else
    words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    cur=${words[cword]} prev=${words[cword - 1]}
    if [[ $cur == --*=* ]]; then
      prev=${cur%%=*} cur=${cur#*=} split=true
    fi
  fi
  local _calhost_prog=${words[0]} _calhost_cfg=() cmd="" npos=0 i w vflags
  [[ $_calhost_prog == */* && -x $_calhost_prog ]] || _calhost_prog=calhost
  # the command word, the --config given, and the plain arguments before cur
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ $w == --config=* ]]; then
      _calhost_cfg=(--config "${w#--config=}")
    elif [[ $w == --config ]] && ((i + 1 < cword)); then
      _calhost_cfg=(--config "${words[i + 1]}")
    fi
    if [[ $w == -* ]]; then
      [[ $w == *=* ]] && continue
      vflags=$_calhost_global_value_flags
      [[ -n $cmd ]] && vflags+=" ${_calhost_value_flags[$cmd]}"
      if [[ " $vflags " == *" $w "* ]]; then
        ((i++))
      fi
      continue
    fi
    if [[ -z $cmd ]]; then
      cmd=$w
    else
      ((npos++))
    fi
  done
  # the value of a flag
  local kind_key=""
  if [[ -n $cmd && " ${_calhost_value_flags[$cmd]} " == *" $prev "* ]]; then
    kind_key="$cmd $prev"
  elif [[ " $_calhost_global_value_flags " == *" $prev "* ]]; then
    kind_key=" $prev"
  fi
  if [[ -n $kind_key ]] && { $split || [[ ${words[cword - 1]} == "$prev" ]]; }; then
    _calhost_complete_value "${_calhost_kind[$kind_key]}"
    return
  fi
  if [[ $cur == -* ]]; then
    local flags=$_calhost_global_flags
    if [[ -n $cmd ]]; then
      flags="${_calhost_flags[$cmd]} $flags"
    else
      flags="$flags --version"
    fi
    mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
    return
  fi
  if [[ -z $cmd ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$_calhost_commands" -- "$cur")
    return
  fi
  if [[ $cmd == help ]]; then
    ((npos == 0)) && mapfile -t COMPREPLY < <(compgen -W "${_calhost_commands% help}" -- "$cur")
    return
  fi
  if [[ -n ${_calhost_subcommands[$cmd]} ]] && ((npos == 0)); then
    mapfile -t COMPREPLY < <(compgen -W "${_calhost_subcommands[$cmd]}" -- "$cur")
    return
  fi
  if [[ -n ${_calhost_files[$cmd]} ]]; then
    _calhost_complete_files
  fi
} &&
  complete -F _calhost calhost'''


# ---- library pages from a public header

def header_man(path, name, section, summary, pkg):
    src = open(path, encoding="utf-8").read()
    m = re.match(r"\s*/\*(.*?)\*/", src, re.S)
    intro = clean_comment(m.group(1)) if m else ""
    intro = re.sub(r"^\S+\.h: ", "", intro)
    funcs = []
    for cm, decl in re.findall(r"/\*((?:(?!\*/).)*)\*/\s*\n((?:[A-Z_]+_API)\b[^;{]*;)", src, re.S):
        decl = " ".join(decl.split())
        decl = re.sub(r"^[A-Z_]+_API ", "", decl)
        funcs.append((decl, clean_comment(cm)))
    header = path.replace("\\", "/").split("/include/")[-1]
    out = ['.TH %s %s "" "%s" "%s"' % (name.upper(), section, roff(pkg), MANUAL),
           ".SH NAME", "%s \\- %s" % (roff(name), roff(summary)), ".SH SYNOPSIS", ".nf",
           "\\fB#include <%s>\\fR" % roff(header), "",
           "cc ... $(pkg\\-config \\-\\-cflags \\-\\-libs %s)" % roff(pkg),
           "find_package(%s) in CMake" % roff(pkg), ".fi", ".SH DESCRIPTION"]
    for para in intro.split("\n\n"):
        out += [".PP", ".nf", roff(para), ".fi"]
    out.append(".SH FUNCTIONS")
    for decl, doc in funcs:
        out += [".PP", ".nf", "\\fB" + roff(decl) + "\\fR", ".fi", ".RS", ".nf", roff(doc), ".fi",
                ".RE"]
    out += [".SH SEE ALSO", "\\fBcalhost\\fR(1), \\fBcalhost.ini\\fR(5), "
            "\\fBcalstore\\fR(3), \\fBcalhost\\-runtime\\fR(3), \\fBcalhost\\-plugin\\fR(7); "
            "the header \\fI/usr/include/%s\\fR" % roff(header)]
    if not funcs:
        raise SystemExit("%s: no exported function found" % path)
    return "\n".join(out) + "\n"


def clean_comment(body):
    lines = [re.sub(r"^\s*\* ?", "", l) for l in body.strip("\n").split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(l.rstrip() for l in lines).strip()


def markdown_page(path, name, section, summary, version):
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    # A prose line that starts with a dot or an apostrophe (roff's two
    # control characters) would read as a roff request once converted:
    # join it to the line before (a soft break is a space).
    kept, fenced = [], False
    for l in lines:
        if l.startswith("```"):
            fenced = not fenced
        if (not fenced and l.startswith((".", "'")) and kept and kept[-1].strip()
                and not kept[-1].startswith("    ")):
            kept[-1] += " " + l
        else:
            kept.append(l)
    body = "\n".join(kept)
    # Links read as their text, with the target in parentheses.
    body = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", body)
    return ('%% %s %s "" "calhost %s" "%s"\n\n# NAME\n\n%s - %s\n\n# DESCRIPTION\n%s'
            % (name, section, version, MANUAL, name, summary, body))


def main(argv):
    if len(argv) == 5 and argv[1] == "cli":
        d = json.load(open(argv[2], encoding="utf-8"))
        open(argv[3], "w", encoding="utf-8").write(cli_man(d))
        open(argv[4], "w", encoding="utf-8").write(cli_completion(d))
    elif len(argv) == 8 and argv[1] == "header":
        open(argv[7], "w", encoding="utf-8").write(header_man(*argv[2:7]))
    elif len(argv) == 9 and argv[1] == "markdown":
        md = markdown_page(*argv[2:7])
        page = subprocess.run([argv[7]], input=md, capture_output=True, text=True, check=True)
        # go-md2man leaves a code line that starts with a dot ("...") or an
        # apostrophe as it is, which roff reads as a request (go-md2man's
        # own requests all start with a dot and a letter)
        text = re.sub(r"(?m)^(?=\.(\.|\s|$)|')", r"\\&", page.stdout)
        open(argv[8], "w", encoding="utf-8").write(text)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
