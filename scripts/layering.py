#!/usr/bin/env python3
"""layering.py: the host's layering, checked by its includes, by the build's
include paths and by its objects' symbols (issue 42 item 6).

Owns the parts' order and their dependencies, the same map as
host/CMakeLists.txt's comment and README.md's layout: a file of a part may
include its own headers and those of the parts it depends on (directly or
through them), all of which come earlier in the order. Anything else fails:
a part including one above it, or one it does not depend on, or a header
of another part included bare ("isolate.h" for "isolate/isolate.h": the
parts' include folders make it compile, but it hides which part it names).

An include is resolved by which part's folder holds the header:
"PART/name.h" names the part; a bare "name.h" is the including part's own
header when its folder holds one, else the part whose folder does (a bare
include across parts counts like a qualified one); <calhost/calstore.h> is
the store's, <calhost/runtime.h> the runtime's. Headers of no part (libc,
the plugin SDK, generated code) are not checked.

The build enforces the same map (--build BUILD --cc CC, ctest
layering_build): host/CMakeLists.txt's calhost_part_headers shows a part's
headers to what links it only as "PART/name.h" and its source folder (the
bare "name.h") to the part's own files only, and writes each part's real
include folders and definitions to BUILD/layering/PART.flags. This checks
that each part's include path holds only itself and the parts it depends
on (its own source folder alone bare), then compiles planted sources with
those flags: a header of every part, qualified, must compile exactly when
the map allows it, the bare name of another part's header never, and the
public calhost/calstore.h and calhost/runtime.h only where the map reaches
the store or the runtime. So the build itself refuses a bad include.

Circles between the files of one part (--circles BUILD [--nm NM], ctest
layering_circles): nm over the part's archives (BUILD/layering/PART.flags)
gives which object uses a function another defines; files that use each
other, directly or round a loop, fail, except the circles listed in
ALLOWED_CIRCLES (named with their owner; a listed circle that is gone is
reported, to be removed).

Usage: layering.py [--root DIR]   (DIR: the tree holding host/; default the
repository). Prints each violation as FILE:LINE: ... and exits 1 on any.
       layering.py --build BUILD --cc CC [--jobs N]
       layering.py --circles BUILD [--nm NM] [--no-allow]
Run by ctests layering, layering_build and layering_circles;
tests/scripts/test_layering.py (ctest layering_checker) tests all three on
fake trees, builds and archives."""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

# The parts in dependency order, each with the parts it uses directly.
ORDER = [
    ("base", []),
    ("store", []),
    ("processor", ["base"]),
    ("isolate", ["base"]),
    ("loader", ["isolate", "base"]),
    ("search", ["base"]),
    ("sweep", ["base", "isolate", "loader", "search"]),
    ("config", ["processor", "base"]),
    ("model", ["config", "base"]),
    ("runtime", ["config", "model", "loader", "processor", "base", "store"]),
    ("check", ["loader", "isolate", "sweep", "runtime", "store"]),
    ("calibrate", ["sweep", "runtime", "config", "store"]),
    ("report", ["base", "search"]),
    ("cli", ["base", "store", "processor", "isolate", "loader", "search", "sweep", "config",
             "model", "runtime", "check", "calibrate", "report"]),
]
PUBLIC = {"calhost/calstore.h": "store", "calhost/runtime.h": "runtime"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def allowed_parts():
    """Each part's own name and every part it reaches through its
    dependencies; refuses a map whose dependency is not earlier."""
    rank = {name: i for i, (name, _) in enumerate(ORDER)}
    allowed = {}
    for name, deps in ORDER:
        reach = {name}
        for d in deps:
            if rank[d] >= rank[name]:
                raise SystemExit(f"layering.py: map error: {name} depends on {d}, not below it")
            reach |= allowed[d]
        allowed[name] = reach
    return allowed


def headers_by_part(host):
    """name.h -> the parts whose folder holds it."""
    owners = {}
    for name, _ in ORDER:
        folder = os.path.join(host, name)
        if not os.path.isdir(folder):
            continue
        for f in os.listdir(folder):
            if f.endswith(".h"):
                owners.setdefault(f, set()).add(name)
    return owners


def resolve(part, delim, target, owners, host):
    """The part an include names, or None for a header of no part."""
    if delim == "<":
        return PUBLIC.get(target)
    if target in PUBLIC:
        return PUBLIC[target]
    head, _, rest = target.partition("/")
    if rest and head in dict(ORDER) and os.path.isfile(os.path.join(host, head, rest)):
        return head
    if "/" in target:
        return None
    if os.path.isfile(os.path.join(host, part, target)):
        return part
    holders = owners.get(target, set())
    if len(holders) == 1:
        return next(iter(holders))
    if holders:
        return ",".join(sorted(holders))  # ambiguous: reported as such
    return None


def check(root):
    host = os.path.join(root, "host")
    allowed = allowed_parts()
    owners = headers_by_part(host)
    rank = {name: i for i, (name, _) in enumerate(ORDER)}
    problems = []
    for part, _ in ORDER:
        folder = os.path.join(host, part)
        if not os.path.isdir(folder):
            continue
        for dirpath, _, files in os.walk(folder):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(2)
                        other = resolve(part, m.group(1), target, owners, host)
                        if other is None or other == part:
                            continue
                        bare = m.group(1) == '"' and "/" not in target and other in rank
                        if other in allowed[part] and not bare:
                            continue
                        rel = os.path.relpath(path, root)
                        if other in allowed[part]:
                            why = f"a bare include of another part's header; write \"{other}/{target}\""
                        elif other not in rank:
                            why = f"held by several parts ({other}); qualify it as PART/{target}"
                        elif rank[other] > rank[part]:
                            why = f"part {other} is above {part}"
                        else:
                            why = f"{part} does not depend on {other}"
                        problems.append(f"{rel}:{n}: includes \"{target}\" of {other}: {why}")
    return problems


# ---- the build: each part's real include path (--build) ------------------


def read_flags(build):
    """PART -> its BUILD/layering/PART.flags (host/CMakeLists.txt writes
    them): target, std, archives, include folders (I), definitions (D)."""
    folder = os.path.join(build, "layering")
    if not os.path.isdir(folder):
        raise SystemExit(f"layering.py: no {folder} (configure the build with CMake first)")
    parts = {}
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".flags"):
            continue
        entry = {"archive": [], "I": [], "D": [], "std": None, "target": None}
        with open(os.path.join(folder, f), encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.rstrip("\n").partition(" ")
                if not value:
                    continue
                if key in ("archive", "I", "D"):
                    entry[key].append(value)
                elif key in ("std", "target", "part"):
                    entry[key] = value
        parts[entry.get("part") or f[:-len(".flags")]] = entry
    return parts


SYSTEM_INCLUDE = ["/usr/include", "/usr/local/include"]


def include_path_problems(root, build, flags, allowed):
    """An include folder of a part's real compile line that shows it more
    than itself and the parts it depends on."""
    host = os.path.realpath(os.path.join(root, "host"))
    shown = os.path.realpath(os.path.join(build, "host-include"))
    public = os.path.realpath(os.path.join(root, "include"))
    rank = {name: i for i, (name, _) in enumerate(ORDER)}
    problems = []
    for part, f in flags.items():
        for d in f["I"]:
            real = os.path.realpath(d)
            if os.path.dirname(real) == shown:
                other, what = os.path.basename(real), "the headers of"
            elif real == host:
                problems.append(f"{part} ({f['target']}): include folder {d} is host/ itself")
                continue
            elif real.startswith(host + os.sep):
                other = os.path.relpath(real, host).split(os.sep)[0]
                if other == part:
                    continue
                problems.append(f"{part} ({f['target']}): include folder {d} shows {other}'s "
                                "headers bare (a part's source folder is for its own files)")
                continue
            elif real == public:
                other, what = "store", "the public headers (calhost/calstore.h) of"
            else:
                continue  # libc, the plugin SDK, generated or system headers
            if other in allowed.get(part, {part}):
                continue
            why = "above it" if rank.get(other, -1) > rank.get(part, -1) else "not a dependency"
            problems.append(f"{part} ({f['target']}): include folder {d} holds {what} {other} "
                            f"({why})")
    return problems


def chosen_header(host, part, owners):
    """A header of part whose name no other part's folder holds, nor the
    system's (glibc has a search.h): so a planted bare include of it can
    only find the part's own. PART.h when it is such a header."""
    folder = os.path.join(host, part)
    names = sorted(f for f in os.listdir(folder) if f.endswith(".h")) if os.path.isdir(folder) else []
    unique = [n for n in names if owners.get(n) == {part} and
              not any(os.path.exists(os.path.join(d, n)) for d in SYSTEM_INCLUDE)]
    if f"{part}.h" in unique:
        return f"{part}.h"
    return unique[0] if unique else None


def planted_cases(root, flags, allowed):
    """(part, include text, expected to compile, why) for each part with
    flags: a header of every part, qualified; the bare name of its own and
    of each part it reaches; the two public headers."""
    host = os.path.join(root, "host")
    owners = headers_by_part(host)
    cases = []
    for part in flags:
        reach = allowed.get(part, {part})
        for other, _ in ORDER:
            h = chosen_header(host, other, owners)
            if h is None:
                continue
            if other == "store":  # libcalstore: calhost/calstore.h only (below)
                cases.append((part, f'"store/{h}"', False, "libcalstore's own header"))
                continue
            if other == part:
                why = "its own header"
            elif other in reach:
                why = "a part it depends on"
            else:
                rank = {name: i for i, (name, _) in enumerate(ORDER)}
                why = f"{other} is above {part}" if rank[other] > rank[part] else \
                    f"{part} does not depend on {other}"
            cases.append((part, f'"{other}/{h}"', other in reach, why))
            if other in reach:
                cases.append((part, f'"{h}"', other == part,
                              "its own header, bare" if other == part else
                              f"{other}'s header bare (write \"{other}/{h}\")"))
        for header, owner in sorted(PUBLIC.items()):
            cases.append((part, f"<{header}>", owner in reach,
                          f"the public header of {owner}" + ("" if owner in reach else
                                                             ", not a dependency")))
    return cases


def compile_planted(cc, f, include, scratch, n):
    """Compiles a planted source that includes `include` with the part's
    real flags (syntax only); (returncode, first error line)."""
    src = os.path.join(scratch, f"planted{n}.c")
    with open(src, "w") as fh:
        fh.write(f"#include {include}\nint layering_planted_{n};\n")
    cmd = [cc] + ([f["std"]] if f["std"] else []) + ["-fsyntax-only"]
    cmd += ["-I" + d for d in f["I"]] + ["-D" + d for d in f["D"]] + [src]
    p = subprocess.run(cmd, capture_output=True, text=True)
    err = next((l for l in p.stderr.splitlines() if "error" in l), p.stderr.strip()[:200])
    return p.returncode, err


def build_check(root, build, cc, jobs):
    """Each part's include path, then the planted sources compiled with it:
    what the build lets a part include, checked against the map."""
    allowed = allowed_parts()
    flags = read_flags(build)
    problems = include_path_problems(root, build, flags, allowed)
    cases = planted_cases(root, flags, allowed)
    with tempfile.TemporaryDirectory(prefix="layering.") as scratch:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            runs = list(pool.map(lambda a: compile_planted(cc, flags[a[1][0]], a[1][1], scratch,
                                                           a[0]), enumerate(cases)))
    for (part, include, ok, why), (rc, err) in zip(cases, runs):
        if ok and rc != 0:
            problems.append(f"{part}: a planted source including {include} ({why}) does not "
                            f"compile with {part}'s flags: {err}")
        elif not ok and rc == 0:
            problems.append(f"{part}: a planted source including {include} compiles with "
                            f"{part}'s flags, but {why}: the build must refuse it")
    return problems, len(cases), len(flags)


# ---- the objects: circles between a part's files (--circles) -------------

# Circles between files of one part still to be removed, each the set of
# files of one circle (strongly connected component), with its owner.
ALLOWED_CIRCLES = {}  # none: every part's files call downwards only
NM_LINE = re.compile(r"^(.*)\[(.+?)\]: (\S+) (\S)")


def file_edges(nm, archives):
    """member -> {member it uses -> [symbols]} over the archives' objects
    (a use is an undefined symbol another member of them defines)."""
    defined, uses = {}, {}
    for a in archives:
        out = subprocess.run([nm, "-A", "-P", a], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = NM_LINE.match(line)
            if not m:
                continue
            member, sym, kind = m.group(2), m.group(3), m.group(4)
            member = member[:-2] if member.endswith(".o") else member
            uses.setdefault(member, set())
            if kind == "U":
                uses[member].add(sym)
            elif kind.isupper():
                defined[sym] = member
    edges = {}
    for member, syms in uses.items():
        edges[member] = {}
        for sym in sorted(syms):
            other = defined.get(sym)
            if other and other != member:
                edges[member].setdefault(other, []).append(sym)
    return edges


def components(edges):
    """The strongly connected components of more than one member (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def circles_check(build, nm, allowed_circles):
    """Circles between the files of each part, by symbols; (problems,
    notes)."""
    problems, notes = [], []
    for part, f in read_flags(build).items():
        edges = file_edges(nm, f["archive"])
        found = components(edges)
        for comp in found:
            inner = "; ".join(f"{a} uses {', '.join(edges[a][b][:3])} of {b}"
                              for a in sorted(comp) for b in sorted(edges[a]) if b in comp)
            text = f"host/{part}: a circle between {', '.join(sorted(comp))}: {inner}"
            if comp in allowed_circles.get(part, []):
                notes.append(text + " (allowed: ALLOWED_CIRCLES)")
            else:
                problems.append(text)
        for comp in allowed_circles.get(part, []):
            if comp not in found:
                notes.append(f"host/{part}: the allowed circle {', '.join(sorted(comp))} is gone; "
                             "remove it from ALLOWED_CIRCLES")
    return problems, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--build", help="check the build tree BUILD's include paths (with --cc)")
    ap.add_argument("--cc", default="cc", help="the C compiler of the build (with --build)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--circles", metavar="BUILD", help="check BUILD's objects for file circles")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--no-allow", action="store_true", help="--circles without ALLOWED_CIRCLES")
    args = ap.parse_args()
    if args.circles:
        problems, notes = circles_check(args.circles, args.nm,
                                        {} if args.no_allow else ALLOWED_CIRCLES)
        for n in notes + problems:
            print(n)
        if problems:
            print(f"layering: {len(problems)} circle(s) between the files of a part",
                  file=sys.stderr)
            return 1
        print("layering: no circle between the files of a part but those allowed")
        return 0
    if args.build:
        problems, cases, parts = build_check(args.root, args.build, args.cc, args.jobs)
        for p in problems:
            print(p)
        if problems:
            print(f"layering: the build lets {len(problems)} include(s) through or refuses them "
                  "against the parts' order", file=sys.stderr)
            return 1
        print(f"layering: the build's include paths of {parts} parts hold what the map allows; "
              f"{cases} planted sources compiled or were refused as it says")
        return 0
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} include(s) against the parts' order", file=sys.stderr)
        return 1
    print("layering: every include of host/ respects the parts' order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
