#!/usr/bin/env python3
"""top_level.py: the repository's top level holds only the project's parts.

The map of the house (README.md, "Layout"): CMakeLists.txt, README.md and
the folders host/, plugin-sdk/, plugins/, include/, config/, tests/, plus
what tooling needs (.ci/, scripts/, cmake/, .clang-format, .gitignore).
Anything else committed at the top level (a benchmark's output, a scratch
file) is refused, by name, so that the map stays true.

Usage: top_level.py [SOURCE_DIR]   (default: the checkout holding this file)
       top_level.py --self-test    (the check refuses a stray file in a
                                    scratch repository and accepts the parts)
Exit status: 0 when the top level is the map's, 1 when not (each stray
entry named on stderr), 77 (ctest's skip) when SOURCE_DIR is not a git
checkout and git cannot list what is tracked (a source tarball: its
listing is what was packed, checked by tests/packages).
"""
import os
import subprocess
import sys
import tempfile

ALLOWED = {
    "CMakeLists.txt", "README.md", "host", "plugin-sdk", "plugins", "include",
    "config", "tests", ".ci", "scripts", "cmake", ".clang-format", ".gitignore",
}


def tracked_top_level(src):
    """The first path component of every tracked file, or None without git."""
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {p.split("/", 1)[0] for p in out.decode().split("\0") if p}


def check(src):
    """0 when every tracked top-level entry of src is one of the map's, 1
    when not (named on stderr), 77 when src is not a git checkout."""
    top = tracked_top_level(src)
    if top is None:
        print(f"top_level: {src}: not a git checkout, nothing to check", file=sys.stderr)
        return 77
    stray = sorted(top - ALLOWED)
    for name in stray:
        print(f"top_level: {os.path.join(src, name)}: not one of the project's parts "
              f"(allowed: {', '.join(sorted(ALLOWED))}); move it under tests/ or "
              f"remove it", file=sys.stderr)
    return 1 if stray else 0


def self_test():
    """The check fails on a stray committed file and passes without it."""
    with tempfile.TemporaryDirectory() as d:
        def git(*args):
            subprocess.run(["git", "-C", d, *args], check=True, capture_output=True)
        git("init", "-q")
        for name in ("CMakeLists.txt", "README.md", "host/x.c", "real_sweep.txt"):
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write("x\n")
        git("add", "-A")
        if check(d) != 1:
            print("top_level: self-test: a stray real_sweep.txt was not refused", file=sys.stderr)
            return 1
        git("rm", "-q", "-f", "real_sweep.txt")
        if check(d) != 0:
            print("top_level: self-test: the project's parts alone were refused", file=sys.stderr)
            return 1
    print("top_level: self-test: ok")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(here))))
