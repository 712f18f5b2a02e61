#!/usr/bin/env python3
# List the keys or indexes of a JSON document at a dotted path
import json
import sys

if len(sys.argv) not in (2, 3):
    sys.exit("usage: keys FILE [PATH]")
with open(sys.argv[1]) as f:
    node = json.load(f)
for part in (sys.argv[2].split(".") if len(sys.argv) == 3 and sys.argv[2] else []):
    node = node[int(part)] if isinstance(node, list) else node[part]
if isinstance(node, dict):
    for k, v in node.items():
        print(f"{k}\t{type(v).__name__}")
elif isinstance(node, list):
    print(f"list of {len(node)}")
else:
    print(json.dumps(node))
