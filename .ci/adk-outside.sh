#!/usr/bin/env bash
# Builds a module outside this repository that depends on carryon's ADK adapter the way
# docs/ADK.md says (a checkout and two replace directives), from contrib/adk/examples/trips, and
# runs it twice over one data directory: the second process continues the first one's session.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cp "$root/contrib/adk/examples/trips/main.go" .
cat > go.mod <<MOD
module example.com/trips

go 1.26

require github.com/carryon-hub/carryon/contrib/adk v0.0.0

replace (
	github.com/carryon-hub/carryon => $root
	github.com/carryon-hub/carryon/contrib/adk => $root/contrib/adk
)
MOD
go mod tidy
go build -o trips .
./trips plan "$dir/data"
out="$(./trips continue "$dir/data")"
echo "$out"
case "$out" in
  *'continuing "plan a trip to Lisbon": book flights'*) ;;
  *) echo "the second process did not continue the first one's session"; exit 1 ;;
esac
