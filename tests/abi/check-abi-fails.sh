#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI check can fail: for each public struct the issue of the ABI names
# (tk_timer, tk_node, tk_executor_options), a copy of the baseline with that
# struct one word larger must make check-abi.sh report an INCOMPATIBLE change
# and exit 1 against the same library.
#   check-abi-fails.sh LIBRARY BASELINE SOURCE_DIR BUILD_DIR
set -uo pipefail
lib=$1 baseline=$2 src=$3 build=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for type in tk_timer tk_node tk_executor_options; do
  python3 - "$baseline" "$tmp/$type.abi" "$type" <<'PY'
import re, sys
src, dst, name = sys.argv[1:]
text = open(src).read()
text = re.sub(r"(<class-decl name='%s' size-in-bits=')(\d+)'" % name,
              lambda m: "%s%d'" % (m.group(1), int(m.group(2)) + 64), text)
open(dst, "w").write(text)
PY
  if cmp -s "$baseline" "$tmp/$type.abi"; then
    echo "abi-fails: $type is not in $baseline"; bad=1; continue
  fi
  out=$(bash "$here/check-abi.sh" "$lib" "$tmp/$type.abi" "$src" "$build" 2>&1)
  rc=$?
  if [ $rc -eq 1 ] && grep -q "INCOMPATIBLE" <<<"$out" && grep -q "$type" <<<"$out"; then
    echo "abi-fails: $type one word larger: caught"
  else
    echo "abi-fails: $type one word larger: NOT caught (status $rc)"; echo "$out" | tail -n 5; bad=1
  fi
done
exit $bad
