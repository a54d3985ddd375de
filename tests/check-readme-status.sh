#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails if README.md's status table does not list every code of status.h
# with the same value and text.
set -euo pipefail
src=$1
fail=0
while IFS= read -r row; do
  if ! grep -qF -- "$row" "$src/README.md"; then echo "README.md lacks: $row"; fail=1; fi
done < <(grep -E '^\s+X\(' "$src/api/timerkit/status.h" | sed -E 's/^\s+X\(([A-Z]+), (-?[0-9]+), "(.*)"\).*/| `TK_\1` | \2 | \3 |/')
[ $fail -eq 0 ] && echo "README status table matches status.h"
exit $fail
