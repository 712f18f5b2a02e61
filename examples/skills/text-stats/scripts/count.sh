#!/bin/sh
# Count lines, words and bytes of each file
set -eu
[ "$#" -gt 0 ] || { echo "usage: count FILE..." >&2; exit 2; }
for f in "$@"; do
  set -- $(wc -l -w -c < "$f")
  printf '%s: %s lines, %s words, %s bytes\n' "$f" "$1" "$2" "$3"
done
