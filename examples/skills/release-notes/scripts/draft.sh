#!/bin/bash
# Draft release notes from a CHANGES file into out/RELEASE_NOTES.md
set -euo pipefail
[ "$#" -eq 2 ] || { echo "usage: draft CHANGES_FILE VERSION" >&2; exit 2; }
changes=$1 version=$2
here=$(cd "$(dirname "$0")/.." && pwd)
section() { grep -E "^- $1" "$changes" | sed -E "s/^- $1 */- /" || echo "- none"; }
mkdir -p out
features=$(section 'feat:')
fixes=$(section 'fix:')
other=$(grep -E '^- ' "$changes" | grep -vE '^- (feat|fix):' || echo "- none")
awk -v v="$version" -v f="$features" -v x="$fixes" -v o="$other" '
  { gsub(/\{\{VERSION\}\}/, v); gsub(/\{\{FEATURES\}\}/, f); gsub(/\{\{FIXES\}\}/, x); gsub(/\{\{OTHER\}\}/, o); print }
' "$here/assets/template.md" > out/RELEASE_NOTES.md
cat out/RELEASE_NOTES.md
