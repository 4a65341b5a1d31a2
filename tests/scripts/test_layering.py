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
sys.exit(1 if failures else 0)
