#!/usr/bin/env bash
# Lays out a large multi-repository tree for the search-latency benchmark (≥100k chunks) under
# bench/.work/big, from local git mirrors (fetched, never committed): MIRRORS=/path/to/mirrors.
set -euo pipefail
cd "$(dirname "$0")/../.."
MIRRORS=${MIRRORS:-../.mirror}
BIG=bench/.work/big
mkdir -p "$BIG"
for name in sympy+sympy astropy+astropy sphinx-doc+sphinx pydata+xarray pytest-dev+pytest pallets+flask networkx+networkx pylint-dev+pylint; do
  src="$MIRRORS/$name/repo"
  dest="$BIG/$name"
  [ -d "$src" ] || { echo "missing mirror $src (skipped)" >&2; continue; }
  [ -d "$dest/.git" ] && continue
  git clone -q --shared --no-checkout "$src" "$dest"
  # a few mirrors lack large data blobs: check out what exists, leave out the rest
  git -C "$dest" checkout -q -f HEAD 2>/dev/null || git -C "$dest" checkout -q -f HEAD -- . 2>/dev/null || true
done
du -sh "$BIG"
