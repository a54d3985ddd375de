#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The api_docs test: the API reference builds without a single doxygen warning
# (docs/Doxyfile.in makes an undocumented public name a warning), and every
# public header is documented itself. Doxygen lists a header's functions,
# macros and types only when the header has a @file comment: without one, an
# undocumented name in it would pass unseen.
#   check-api-docs.sh SOURCE_DIR DOXYGEN DOXYFILE
set -uo pipefail
src=${1:?source dir}
doxygen=${2:?doxygen}
doxyfile=${3:?Doxyfile}
fail=0

n=0
while IFS= read -r -d '' h; do
  n=$((n + 1))
  if ! head -n 5 "$h" | grep -q '@file'; then
    echo "api_docs: ${h#"$src"/} has no @file comment in its first 5 lines"
    fail=1
  fi
done < <(find "$src/api" -name '*.h' -print0)
[ "$n" -gt 0 ] || { echo "api_docs: no header under $src/api"; fail=1; }

out=$("$doxygen" "$doxyfile" 2>&1)
rc=$?
[ -z "$out" ] || printf '%s\n' "$out"
if [ $rc -ne 0 ] || grep -qE 'warning:|error:' <<<"$out"; then
  echo "api_docs: doxygen failed (exit $rc) or warned: document every public name"
  fail=1
fi
[ $fail -ne 0 ] || echo "api_docs: $n public headers, doxygen without a warning"
exit $fail
