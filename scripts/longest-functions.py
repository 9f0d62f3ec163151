#!/usr/bin/env python3
"""Lists the C++ function bodies longer than N lines in the given folders.

Usage: scripts/longest-functions.py [--over N] FOLDER_OR_FILE...

A function body is a top-level brace block (outside namespaces, classes and structs) whose
opening line, or the lines just above it, look like a function head ("name(...)"). Braces in
comments, strings and character literals are skipped. Simple on purpose: good enough for this
project's code, not a C++ parser. Exit status 1 when some function is over the limit.
"""
import argparse
import pathlib
import re
import sys

HEAD = re.compile(r"([~\w:]+)\s*\([^;{}]*\)[^;{}]*$", re.S)
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;(){}]*$")


def strip(text):
    """The text with comments, strings and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, line count) of every function body in the file."""
    text = strip(path.read_text(encoding="utf-8", errors="replace"))
    found = []
    stack = []  # per open brace: (kind, start offset)
    last = 0  # where the text before the next brace starts (after the last ; { or })
    for i, c in enumerate(text):
        if c == ";":
            if not any(k == "function" for k, _ in stack):
                last = i + 1
        elif c == "{":
            if any(k in ("function", "other") for k, _ in stack):
                stack.append(("inner", i))
                continue
            before = text[last:i]
            if SCOPE.search(before):
                kind = "scope"
            elif HEAD.search(before.strip()):
                kind = "function"
            else:
                kind = "other"
            stack.append((kind, i))
            last = i + 1
        elif c == "}":
            if not stack:
                continue
            kind, start = stack.pop()
            if kind == "function":
                m = HEAD.search(text[max(0, start - 3000):start].rstrip())
                name = m.group(1) if m else "?"
                first = text.count("\n", 0, start) + 1
                lines = text.count("\n", start, i) + 1
                found.append((name, first, lines))
            if not any(k in ("function", "other") for k, _ in stack):
                last = i + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--over", type=int, default=150, help="line limit (default 150)")
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args()
    rows = []
    for folder in args.folders:
        root = pathlib.Path(folder)
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.suffix in (".cpp", ".h", ".hpp", ".cc") and path.is_file():
                for name, first, lines in functions(path):
                    if lines > args.over:
                        rows.append((lines, f"{path}:{first}", name))
    for lines, where, name in sorted(rows, reverse=True):
        print(f"{lines:6d}  {where}  {name}")
    return 1 if rows else 0


if __name__ == "__main__":
    sys.exit(main())
