#!/usr/bin/env python3
# Validate JSON files and report the first syntax error of each
import json
import sys

status = 0
for path in sys.argv[1:] or ["-"]:
    try:
        with (open(path) if path != "-" else sys.stdin) as f:
            json.load(f)
        print(f"{path}: valid JSON")
    except json.JSONDecodeError as e:
        print(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}")
        status = 1
    except OSError as e:
        print(f"{path}: {e.strerror}")
        status = 1
sys.exit(status)
