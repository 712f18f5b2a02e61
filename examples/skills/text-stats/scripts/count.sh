#!/bin/sh
# Count lines, words and bytes of each file
[ "$#" -gt 0 ] || { echo "usage: count FILE..." >&2; exit 2; }
status=0
for f in "$@"; do
  if counts=$(wc -l -w -c < "$f"); then
    echo "$counts" | awk -v f="$f" '{printf "%s: %s lines, %s words, %s bytes\n", f, $1, $2, $3}'
  else
    status=1
  fi
done
exit $status
