#!/usr/bin/env bash
# Writes docs/audit.png, the README's picture of 'cdcetl audit --html':
# the sample archive (testdata/samples/audit-demo, written by
# 'go run ./internal/cdcgen/archive') audited, its page rendered by
# headless Chromium (Debian's chromium package).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
page=$tmp/audit.html
go build -o "$tmp/cdcetl" ./cmd/cdcetl
"$tmp/cdcetl" audit --html "$page" testdata/samples/audit-demo >/dev/null 2>&1 || [ $? -eq 4 ] # 4: gaps found, as this archive has
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1250 \
  --screenshot="$PWD/docs/audit.png" "file://$page" 2>/dev/null
echo "wrote docs/audit.png"
