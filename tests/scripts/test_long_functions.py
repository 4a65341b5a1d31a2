#!/usr/bin/env python3
"""test_long_functions.py: the 120-line checker (scripts/long_functions.py)
itself, on functions written here: the limit's edge (120 lines pass, 121
fail with --fail), braces in comments and strings not counted, the
allow-list (an allowed function passes, a stale entry is named, a bad line
is refused with its file and line). Run by ctest long_functions_checker."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "long_functions.py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(SCRIPT)))
failures = 0


def function(name, lines):
    """A C function of exactly `lines` lines, with a brace in a comment and
    in a string on its body lines (neither may end it early)."""
    body = [f'  x += 1; /* {{ */ s = "}}";' for _ in range(lines - 3)]
    return "\n".join([f"static int {name}(void) {{", "  int x = 0; const char *s;"] + body +
                     ["}"]) + "\n"


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(what, cond, out):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}\n{out}")


with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "a.c")
    with open(src, "w") as f:
        f.write(function("at_limit", 120) + function("over_limit", 121))
    rel = os.path.relpath(src, ROOT)
    rc, out = run(src)
    expect("reports without --fail", rc == 0 and "over_limit: 121 lines" in out, out)
    expect("120 lines is within the limit", "at_limit" not in out, out)
    rc, out = run("--fail", src)
    expect("--fail fails on a 121-line function", rc == 1, out)
    allow = os.path.join(d, "allow")
    with open(allow, "w") as f:
        f.write(f"# a comment\n{rel} over_limit  # who shortens it\n")
    rc, out = run("--fail", "--allow", allow, src)
    expect("an allowed function passes", rc == 0 and "(allowed)" in out, out)
    with open(allow, "a") as f:
        f.write(f"{rel} at_limit\n")
    rc, out = run("--fail", "--allow", allow, src)
    expect("a stale entry is named and does not fail",
           rc == 0 and f"{rel} at_limit: stale" in out, out)
    with open(allow, "w") as f:
        f.write(f"{rel}\n")
    rc, out = run("--fail", "--allow", allow, src)
    expect("a bad allow line is refused with its line", rc != 0 and f"{allow}:1:" in out, out)
    with open(allow, "w") as f:
        f.write(f"{rel} another_function\n")
    rc, out = run("--fail", "--allow", allow, src)
    expect("an entry for another function lets nothing through", rc == 1, out)

print("ok" if not failures else f"{failures} failure(s)")
sys.exit(1 if failures else 0)
