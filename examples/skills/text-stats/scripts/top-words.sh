#!/bin/bash
# List the most frequent words of a text file
set -euo pipefail
n=10
if [ "${1:-}" = "-n" ]; then n=$2; shift 2; fi
[ "$#" -eq 1 ] || { echo "usage: top_words [-n N] FILE" >&2; exit 2; }
tr -cs '[:alpha:]' '\n' < "$1" | tr '[:upper:]' '[:lower:]' | awk 'length($0) > 3' |
  sort | uniq -c | sort -k1,1nr -k2 | head -n "$n" | awk '{printf "%5d  %s\n", $1, $2}'
