#!/usr/bin/env python3
"""Print each line of stdin with whether PATTERN matches it."""
import re, sys
pattern = re.compile(sys.argv[1])
for line in sys.stdin:
    line = line.rstrip("\n")
    print(("MATCH " if pattern.search(line) else "----- ") + line)
