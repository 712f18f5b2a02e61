#!/usr/bin/env python3
# Summarize a CSV file: rows, columns, types and numeric statistics
import argparse
import csv
import re
import statistics
import sys

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def kind(values):
    cells = [v for v in values if v.strip()]
    if not cells:
        return "empty"
    try:
        [float(v) for v in cells]
        return "number"
    except ValueError:
        pass
    if all(DATE.match(v) for v in cells):
        return "date"
    return "text"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("file")
    p.add_argument("--column")
    a = p.parse_args()
    try:
        with open(a.file, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        sys.exit(f"cannot read {a.file}: {e.strerror}")
    if not rows:
        sys.exit(f"{a.file} is empty")
    header, body = rows[0], rows[1:]
    print(f"{a.file}: {len(body)} rows, {len(header)} columns")
    for i, name in enumerate(header):
        if a.column and name != a.column:
            continue
        values = [r[i] if i < len(r) else "" for r in body]
        k = kind(values)
        empty = sum(1 for v in values if not v.strip())
        line = f"  {name}: {k}"
        if k == "number":
            nums = [float(v) for v in values if v.strip()]
            line += f", min {min(nums):g}, max {max(nums):g}, mean {statistics.mean(nums):.2f}"
        elif k in ("text", "date"):
            line += f", {len(set(v for v in values if v.strip()))} distinct"
        if empty:
            line += f", {empty} empty"
        print(line)


if __name__ == "__main__":
    main()
