#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source file of the project (C, C++, shell, Python) says its license in
# an SPDX line near its top: the project is MIT (LICENSE).
#   check-spdx.sh SOURCE_DIR
set -uo pipefail
src=${1:?source dir}
missing=0
while IFS= read -r -d '' f; do
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
    echo "no SPDX line: ${f#"$src"/}"
    missing=$((missing + 1))
  fi
done < <(find "$src" \( -path "$src/build" -o -path "$src/results" -o -path "$src/.git" \) -prune \
  -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.h.in' -o -name '*.sh' \
  -o -name '*.py' \) -print0)
if [ "$missing" -gt 0 ]; then
  echo "$missing source files lack 'SPDX-License-Identifier: MIT' in their first 3 lines"
  exit 1
fi
echo "every source file carries its SPDX line"
