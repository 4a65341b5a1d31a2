#!/usr/bin/env python3
"""test_layering.py: the layering checker (scripts/layering.py) itself, on
fake trees written here: a clean tree passes; a part including a part above
it fails, qualified ("sweep/measure.h") or bare ("isolate.h" from search,
which does not depend on isolate); a part including one below it that it
does not depend on fails; an include reached through a dependency's
dependency passes; a bare header held by the including part is its own.
Run by ctest layering_checker."""
import os
import subprocess
import sys
import tempfile

CC = sys.argv[1] if len(sys.argv) > 1 else "cc"

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "layering.py")
failures = 0


def tree(files):
    """A fake repository holding host/PART/FILE for each entry of files."""
    root = tempfile.mkdtemp(prefix="layering.")
    for path, text in files.items():
        full = os.path.join(root, "host", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


BASE = {
    "base/str.h": "int base_str(void);\n",
    "isolate/isolate.h": '#include "base/str.h"\n',
    "search/search.h": "int search(void);\n",
    "search/internal.h": '#include "search.h"\n',
    "sweep/measure.h": '#include "isolate/isolate.h"\n#include "search/search.h"\n',
    "calibrate/internal.h": "int cal(void);\n",
    "calibrate/run.c": '#include "sweep/measure.h"\n#include "base/str.h"\n'
                       '#include "internal.h"\n#include <stdio.h>\n#include <calhost/calstore.h>\n',
}


def expect(name, extra, status, needle=None):
    global failures
    files = dict(BASE)
    files.update(extra)
    root = tree(files)
    p = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
    out = p.stdout + p.stderr
    ok = p.returncode == status and (needle is None or needle in out)
    if not ok:
        failures += 1
        print(f"FAIL {name}: status {p.returncode} (want {status})\n{out}")
    else:
        print(f"ok   {name}")


expect("clean tree passes", {}, 0)
expect("a part including a part above it (qualified) fails",
       {"isolate/run.c": '#include "sweep/measure.h"\n'}, 1,
       'host/isolate/run.c:1: includes "sweep/measure.h" of sweep: part sweep is above isolate')
expect("a bare include across parts counts",
       {"search/space.c": '#include <stdlib.h>\n#include "isolate.h"\n'}, 1,
       'host/search/space.c:2: includes "isolate.h" of isolate: search does not depend on isolate')
expect("a bare include of a part above fails",
       {"base/words.c": '#include "measure.h"\n'}, 1, "part sweep is above base")
expect("a part below that is no dependency fails",
       {"search/x.c": '#include "isolate/isolate.h"\n'}, 1, "search does not depend on isolate")
expect("a dependency's dependency passes",
       {"calibrate/y.c": '#include "isolate/isolate.h"\n#include "search/search.h"\n'}, 0)
expect("a bare include of a dependency's header fails",
       {"sweep/m.c": '#include "isolate.h"\n'}, 1,
       'host/sweep/m.c:1: includes "isolate.h" of isolate: a bare include of another part\'s header; '
       'write "isolate/isolate.h"')
expect("the public store header from base fails",
       {"base/z.c": "#include <calhost/calstore.h>\n"}, 1, "part store is above base")
expect("the including part's own bare header wins",
       {"sweep/internal.h": "int s(void);\n", "sweep/m.c": '#include "internal.h"\n'}, 0)


# ---- --build: the build's include paths -----------------------------------

def fake_build(flags_of):
    """A fake tree (BASE's headers) and build: host-include/PART/PART linked
    to host/PART, build/layering/PART.flags with the include folders
    flags_of(root, build) gives per part."""
    root = tree(BASE)
    build = os.path.join(root, "build")
    for part in ("base", "isolate", "sweep", "search", "calibrate"):
        shown = os.path.join(build, "host-include", part)
        os.makedirs(shown)
        os.symlink(os.path.join(root, "host", part), os.path.join(shown, part))
    os.makedirs(os.path.join(build, "layering"))
    for part, folders in flags_of(root, build).items():
        with open(os.path.join(build, "layering", part + ".flags"), "w") as f:
            f.write(f"part {part}\ntarget calhost_{part}\nstd -std=gnu11\n")
            f.write("".join(f"I {d}\n" for d in folders))
    return root, build


def clean_flags(root, build, extra=None, drop=None):
    inc = lambda p: os.path.join(build, "host-include", p)
    src = lambda p: os.path.join(root, "host", p)
    flags = {"base": [inc("base"), src("base")],
             "isolate": [inc("isolate"), src("isolate"), inc("base")],
             "sweep": [inc("sweep"), src("sweep"), inc("base"), inc("isolate"), inc("search")]}
    for part, d in (extra or []):
        flags[part].append(d(root, build))
    for part, d in (drop or []):
        flags[part].remove(d(root, build))
    return flags


def expect_build(name, flags_of, status, needles=()):
    global failures
    root, build = fake_build(flags_of)
    p = subprocess.run([sys.executable, SCRIPT, "--root", root, "--build", build, "--cc", CC],
                       capture_output=True, text=True)
    out = p.stdout + p.stderr
    missing = [n for n in needles if n not in out]
    if p.returncode != status or missing:
        failures += 1
        print(f"FAIL {name}: status {p.returncode} (want {status}), missing {missing}\n{out}")
    else:
        print(f"ok   {name}")


expect_build("--build: a clean build passes", clean_flags, 0, ["planted sources"])
expect_build("--build: another part's source folder on the path (bare headers) fails",
             lambda r, b: clean_flags(r, b, extra=[("sweep", lambda r, b: os.path.join(
                 r, "host", "isolate"))]), 1,
             ["shows isolate's headers bare",
              'including "isolate.h" compiles with sweep\'s flags, but isolate\'s header bare'])
expect_build("--build: a part above on the path fails",
             lambda r, b: clean_flags(r, b, extra=[
                 ("isolate", lambda r, b: os.path.join(b, "host-include", "sweep")),
                 ("isolate", lambda r, b: os.path.join(b, "host-include", "search"))]), 1,
             ["holds the headers of sweep (above it)",
              "holds the headers of search (above it)",
              'including "sweep/measure.h" compiles with isolate\'s flags, but sweep is above '
              "isolate: the build must refuse it"])
expect_build("--build: a dependency missing from the path fails",
             lambda r, b: clean_flags(r, b, drop=[("sweep", lambda r, b: os.path.join(
                 b, "host-include", "isolate"))]), 1,
             ['including "isolate/isolate.h" (a part it depends on) does not compile'])


# ---- --circles: symbol circles between a part's files ---------------------

def archive(folder, part, sources):
    """lib{part}.a of sources {name.c: text} compiled here, members name.c.o."""
    objs = []
    for name, text in sources.items():
        src = os.path.join(folder, name)
        with open(src, "w") as f:
            f.write(text)
        obj = src + ".o"
        subprocess.run([CC, "-c", src, "-o", obj], check=True)
        objs.append(obj)
    lib = os.path.join(folder, f"lib{part}.a")
    subprocess.run(["ar", "rcs", lib] + objs, check=True)
    return lib


def expect_circles(name, parts, status, needles=()):
    global failures
    build = tempfile.mkdtemp(prefix="layering-circles.")
    os.makedirs(os.path.join(build, "layering"))
    for part, sources in parts.items():
        folder = os.path.join(build, part)
        os.makedirs(folder)
        lib = archive(folder, part, sources)
        with open(os.path.join(build, "layering", part + ".flags"), "w") as f:
            f.write(f"part {part}\ntarget calhost_{part}\narchive {lib}\n")
    p = subprocess.run([sys.executable, SCRIPT, "--circles", build], capture_output=True, text=True)
    out = p.stdout + p.stderr
    missing = [n for n in needles if n not in out]
    if p.returncode != status or missing:
        failures += 1
        print(f"FAIL {name}: status {p.returncode} (want {status}), missing {missing}\n{out}")
    else:
        print(f"ok   {name}")


A_USES_B = {"a.c": "int fb(void);\nint fa(void) { return fb(); }\n",
            "b.c": "int fb(void) { return 1; }\n"}
expect_circles("--circles: a one-way use passes", {"calibrate": A_USES_B}, 0)
expect_circles("--circles: two files using each other fail",
               {"calibrate": dict(A_USES_B, **{"b.c": "int fa(void);\nint fb(void) { return 2; }\n"
                                                      "int fc(void) { return fa(); }\n"})}, 1,
               ["host/calibrate: a circle between a.c, b.c: a.c uses fb of b.c; b.c uses fa of a.c"])
CIRCLE = {"engine.c": "int s1(void);\nint e1(void) { return 1; }\nint e2(void) { return s1(); }\n",
          "strategies.c": "int e1(void);\nint m1(void);\nint s1(void) { return e1() + m1(); }\n",
          "surrogate.c": "int e1(void);\nint m1(void) { return 3; }\nint m2(void) { return e1(); }\n"}
expect_circles("--circles: a circle through three files fails (none is allowed)", {"search": CIRCLE}, 1,
               ["host/search: a circle between engine.c, strategies.c, surrogate.c"])
sys.exit(1 if failures else 0)
