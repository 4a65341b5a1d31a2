#!/usr/bin/env python3
"""long_functions.py: lists the C functions longer than a limit (issue 42
item 2: no function in host/ or plugins/ over 120 lines).

    scripts/long_functions.py [--limit N] [--fail] [--allow FILE] [PATH...]

PATH: files or folders (default: host plugins, under the source tree); every
*.c below a folder is read. A function's length is its lines from the first
line of its definition (return type included) to its closing brace. Prints
"FILE:LINE: NAME: N lines" for each function over the limit (default 120),
longest first, then a count. Exits 1 with --fail when any is listed, else 0.

--allow FILE: functions let through for now, one "PATH NAME" a line (PATH
relative to the source tree, as printed; '#' starts a comment, which should
say who shortens it). An allowed function over the limit is printed with
"(allowed)" and does not fail; an entry no longer over the limit (or gone)
is printed as stale, to be removed. The ctest long_functions runs with
--fail --allow scripts/long_functions.allow.

The reader knows C's comments, strings, character constants and
preprocessor lines, which is all a brace count needs.
"""
import argparse
import os
import re
import sys

IDENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\($")


def strip_code(text):
    """text with comments, strings, character constants and preprocessor
    lines blanked (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a preprocessor line, with continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * max(0, j - i - 1) + c)
            i = j + 1
            line_start = False
            continue
        out.append(c)
        if c == "\n":
            line_start = True
        elif not c.isspace():
            line_start = False
        i += 1
    return "".join(out)


def functions(path):
    """(name, first line, length) of each function defined in path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    found = []
    depth = 0
    head_start = None  # offset where the current top-level item began
    head = []
    start_line = None
    name = None
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        if depth == 0:
            if head_start is None and not c.isspace():
                head_start, start_line = i, line
                head = []
            if c == "{":
                text = "".join(head)
                # a function: "... NAME(PARAMS)" and no '=' (an initializer)
                m = None
                if "=" not in text and ")" in text:
                    m = IDENT.search(text[: text.index("(") + 1].rstrip() if "(" in text else "")
                name = m.group(1) if m else None
                depth = 1
                continue
            if c == ";":
                head_start = None
                continue
            if head_start is not None:
                head.append(c)
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    if name:
                        found.append((name, start_line, line - start_line + 1))
                    name = None
                    head_start = None
    return found


def read_allow(path):
    """The set of (PATH, NAME) pairs an allow-list file names."""
    allowed = set()
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            words = text.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) != 2:
                raise SystemExit(f"{path}:{number}: expected 'PATH NAME', got {text.strip()!r}")
            allowed.add((words[0], words[1]))
    return allowed


def main():
    ap = argparse.ArgumentParser(description="list C functions over a length limit")
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--fail", action="store_true", help="exit 1 when any function is listed")
    ap.add_argument("--allow", metavar="FILE", help="functions let through: 'PATH NAME' lines")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    allowed = read_allow(a.allow) if a.allow else set()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = a.paths or [os.path.join(root, "host"), os.path.join(root, "plugins")]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                files += [os.path.join(d, x) for x in names if x.endswith(".c")]
        else:
            files.append(p)
    over = []
    for path in sorted(files):
        for name, first, length in functions(path):
            if length > a.limit:
                over.append((length, os.path.relpath(path, root), first, name))
    over.sort(key=lambda x: (-x[0], x[1], x[2]))
    failing = 0
    for length, path, first, name in over:
        let = (path, name) in allowed
        failing += not let
        print(f"{path}:{first}: {name}: {length} lines{' (allowed)' if let else ''}")
    for path, name in sorted(allowed - {(p, n) for _, p, _, n in over}):
        print(f"{a.allow}: {path} {name}: stale (not over {a.limit} lines): remove it")
    print(f"{len(over)} function(s) over {a.limit} lines in {len(files)} files"
          f"{f', {len(over) - failing} allowed' if allowed else ''}")
    return 1 if (a.fail and failing) else 0


if __name__ == "__main__":
    sys.exit(main())
