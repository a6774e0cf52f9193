#!/usr/bin/env python3
"""Quote part of one generated block in another document (issue 78).

The README shows one results table. Its numbers live in a block of
docs/results.md; this prints the part the README quotes, so that
`scripts/figures.sh --check` fails when the quote and its source differ.

Usage:
  scripts/quote-block.py FILE BLOCK N COLUMN...

Prints the block's `Measured on` line (as a source line naming FILE and
BLOCK), its `Seeds` line, then the block's N-th table (from 1) with the
line above it, keeping only the columns named (in that order).
"""
import re
import sys


def block(text, name):
    """The body of generated block NAME in TEXT."""
    m = re.search(r"^[ \t]*<!-- generated: " + re.escape(name) + r" -->\n", text, re.M)
    if not m:
        sys.exit(f"quote-block: no block {name}")
    e = re.compile(r"^[ \t]*<!-- end generated -->", re.M).search(text, m.end())
    return text[m.end():e.start()]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    path, name, n, columns = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    lines = block(open(path).read(), name).splitlines()
    measured = next((l for l in lines if l.startswith("Measured on ")), None)
    seeds = next((l for l in lines if l.startswith("Seeds ")), None)
    # The first line of each table.
    starts = [i for i, l in enumerate(lines)
              if l.startswith("|") and (i == 0 or not lines[i - 1].startswith("|"))]
    if measured is None or not 1 <= n <= len(starts):
        sys.exit(f"quote-block: block {name} has no 'Measured on' line or no table {n}")
    at = starts[n - 1]
    heading = next(l for l in reversed(lines[:at]) if l.strip())
    table = []
    for l in lines[at:]:
        if not l.startswith("|"):
            break
        table.append(l)
    header = cells(table[0])
    try:
        keep = [header.index(c) for c in columns]
    except ValueError as e:
        sys.exit(f"quote-block: {e}; the table's columns are {header}")
    align = cells(table[1])
    when = measured[len("Measured on "):].split(": `")[0]
    print(f"Quoted from the `{name}` block of [{path}]({path}), measured on {when}.")
    if seeds:
        print(seeds)
    print()
    print(heading)
    print()
    for i, l in enumerate(table):
        if i == 1:
            print("|" + "|".join(align[k] for k in keep) + "|")
        else:
            c = cells(l)
            print("| " + " | ".join(c[k] for k in keep) + " |")


main()
