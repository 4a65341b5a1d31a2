#!/bin/bash
# installed_docs.sh BUILD_DIR: installed documentation stands alone (ctest
# installed_docs). Installs the build tree to a temporary prefix, then finds
# every citation of a source path (host/, plugins/, tests/, config/,
# plugin-sdk/, include/, cmake/, scripts/, also as ../host/... links) in the
# installed text files (documents, headers, configuration, scripts, the
# template and example projects) and in `calhost help COMMAND` of every
# command; each must resolve in the prefix: a file installed in its own right
# (config/X -> share/calhost/X, plugin-sdk/README.md ->
# share/doc/calhost/plugin-sdk.md, plugin-sdk/template -> share/calhost/plugin-template,
# plugin-sdk/examples/deployment -> share/calhost/examples/deployment,
# [plugin-sdk/]include/X -> include/X), or its copy under
# share/doc/calhost/source/ (cmake/CalhostCitedSources.cmake). A citation of
# ../shared (outside the repository) fails wherever it appears.
set -eu
build=$1
work=$(mktemp -d /tmp/calhost-docs-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "FAIL: cmake --install" >&2; exit 1; }
for c in $("$prefix/bin/calhost" --json help |
           python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)["commands"]))'); do
  "$prefix/bin/calhost" help "$c" >"$work/help-$c.txt"
done
python3 - "$prefix" "$work" <<'PY'
import os, re, sys
prefix, work = sys.argv[1], sys.argv[2]
top = r"(?:host|plugins|tests|config|plugin-sdk|include|cmake|scripts)"
cite = re.compile(r"(?<![\w./~$<>-])(?:\.\./)*(%s/[\w./-]*[\w/])" % top)
outside = re.compile(r"(?<![\w/~-])(?:\.\./)+shared/")
texts = (".md", ".h", ".ini", ".sh", ".sbatch", ".c", ".cpp", ".txt", ".cmake", ".pc", ".def", ".map")
files = []
for d, _, names in os.walk(prefix):
    for n in names:
        p = os.path.join(d, n)
        if n.endswith(texts) or n == "CMakeLists.txt":
            files.append(p)
files += [os.path.join(work, n) for n in os.listdir(work) if n.startswith("help-")]
mirror = os.path.join(prefix, "share/doc/calhost/source")
maps = [("config/", "share/calhost/"), ("plugin-sdk/README.md", "share/doc/calhost/plugin-sdk.md"),
        ("plugin-sdk/template", "share/calhost/plugin-template"),
        ("plugin-sdk/examples/deployment", "share/calhost/examples/deployment"),
        ("plugin-sdk/include/", "include/"), ("include/", "include/")]
def resolves(path):
    path = path.rstrip("/.")
    if os.path.exists(os.path.join(mirror, path)):
        return True
    for src, dst in maps:
        if path == src.rstrip("/") or path.startswith(src):
            if os.path.exists(os.path.join(prefix, dst + path[len(src):])):
                return True
    return False
bad = []
for p in files:
    in_mirror = p.startswith(mirror + "/")
    text = open(p, encoding="utf-8", errors="replace").read()
    where = os.path.relpath(p, prefix) if p.startswith(prefix) else "calhost " + os.path.basename(p)[5:-4].replace("-", " ", 1)
    for n, line in enumerate(text.split("\n"), 1):
        if outside.search(line):
            bad.append("%s:%d: cites ../shared, outside the repository" % (where, n))
        if in_mirror:
            continue  # the copies are the sources as they are
        for m in cite.finditer(line):
            if not resolves(m.group(1)):
                bad.append("%s:%d: cites %s, which is not installed" % (where, n, m.group(1)))
if bad:
    sys.exit("FAIL:\n" + "\n".join(bad))
print("PASS installed documentation: every cited source path resolves in the prefix (%d files)" % len(files))
PY
