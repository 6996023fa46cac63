#!/bin/sh
# The pages' browser libraries: installs web/package-lock.json's packages with `npm ci`, then
# copies the files adapters/http/vendor.txt lists into adapters/http/static/vendor/, and only
# those. `make assets` and the Docker image's build both run this, so they serve the same files.
set -eu
cd "$(dirname "$0")/.."
list=adapters/http/vendor.txt
vendor=adapters/http/static/vendor
(cd web && npm ci --no-audit --no-fund --loglevel=error)
mkdir -p "$vendor"
# Each file is written beside its place and renamed into it: a server reading the folder
# meanwhile sees the old file or the new one, never half of one.
grep -v -e '^#' -e '^[[:space:]]*$' "$list" | while read -r file; do
  name=$(basename "$file")
  cp "web/node_modules/$file" "$vendor/.$name.new"
  mv "$vendor/.$name.new" "$vendor/$name"
done
