#!/usr/bin/env python3
"""layering.py: the host's layering, checked by its includes (issue 42 item 6).

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

Usage: layering.py [--root DIR]   (DIR: the tree holding host/; default the
repository). Prints each violation as FILE:LINE: ... and exits 1 on any.
Run by ctest layering; tests/scripts/test_layering.py tests it on fake
trees."""
import argparse
import os
import re
import sys

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
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
