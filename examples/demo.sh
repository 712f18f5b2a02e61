#!/bin/bash
# The skillhost demo: discover, inspect, validate, match and run the example
# skills under the platform's sandbox. Run it from the repository root after
# `make build` (make demo does both).
set -u
bin=${BIN:-bin}
config=${SKILLHOST_CONFIG:-examples/skillhost.yaml}
status=0
# quote prints one argument so that a shell reads it back unchanged.
quote() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}
# step prints the exact command, ready to paste, then runs it.
step() {
  local cmd=("$bin/skillhost" --config "$config" "$@") line="" arg
  for arg in "${cmd[@]}"; do line+="$(quote "$arg") "; done
  if [ -t 1 ]; then printf '\n\033[1m$ %s\033[0m\n' "${line% }"; else printf '\n$ %s\n' "${line% }"; fi
  "${cmd[@]}" || { rc=$?; echo "(exit status $rc)"; return $rc; }
}
must() { step "$@" || status=1; }

must list
must plugins
must show csv-summary
must grant release-notes
must validate examples/skills
must match "which words does this article use most?"
must activate "draft release notes for 1.4.0 from the CHANGES file"
must run csv-summary summarize -- examples/data/sales.csv
must run text-stats top_words -- -n 5 examples/data/article.txt
must run json-tools keys -- examples/data/inventory.json items.0
must run release-notes draft -- examples/data/CHANGES.md 1.4.0
must run sandbox-probe probe
# A tool that fails shows the result text an agent would see.
echo
echo "# The next run fails on purpose: a CSV file is not JSON. Its error is the demo, not a problem."
step run json-tools check -- examples/data/sales.csv || true
echo "# (that failure was deliberate)"
rm -rf out
exit $status
