#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages (docs/man/) format without a single warning, and tkbench.1
# documents what tkbench has: every subcommand (its tkb_cmd descriptors) and
# every long option of their tables. The lists come from the sources (and
# from each subcommand's --help when a built tkbench is given), never from a
# second hand-written list.
#   check-man.sh SOURCE_DIR [TKBENCH]
set -uo pipefail
src=${1:?source dir}
tkbench=${2:-}
page=$src/docs/man/tkbench.1
fail=0
err() { echo "man_pages: $*"; fail=1; }

if ! command -v groff >/dev/null; then
  echo "man_pages: groff missing (scripts/install-deps.sh docs installs groff-base)"
  exit 1
fi

# 1. Every page formats cleanly: -ww enables every groff warning, -z discards
#    the output, so anything printed is a warning or an error.
pages=("$src"/docs/man/*.[1-8])
[ ${#pages[@]} -ge 2 ] || err "expected the man pages in docs/man/, found ${#pages[@]}"
for p in "${pages[@]}"; do
  out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$p" 2>&1)
  if [ $? -ne 0 ] || [ -n "$out" ]; then err "${p#"$src"/}: groff warnings:"; echo "$out"; fi
done

# 2. Subcommands: the name of every tkb_cmd descriptor in tkbench's sources
#    (bench/cli/cmdline.h: `.name = "run"`, `.name = "trace stats"`), each with its
#    own `.SS "tkbench NAME ..."` section.
cmds=$(python3 - "$src" <<'PY'
import re, sys, pathlib
for f in sorted(pathlib.Path(sys.argv[1], "bench").rglob("*.c")):
    text = f.read_text()
    for m in re.finditer(r"\btkb_cmd\s+\w+\s*=\s*\{(.*?)\n\};", text, re.S):
        n = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
        if n:
            print(n.group(1).replace(" ", "_"))
PY
)
ncmds=$(wc -w <<<"$cmds")
# a guard against this parse going stale: tkbench has at least list, run,
# replay, advise, plot, compare, manifest, trace convert and trace stats
[ "$ncmds" -ge 9 ] || err "found only $ncmds tkb_cmd descriptors in bench/*.c ($(echo $cmds)): update this check"
for c in $cmds; do
  name=${c//_/ }
  grep -qE "^\\.SS \"tkbench $name( |\")" "$page" || err "tkbench.1 has no section '.SS \"tkbench $name ...\"' for the subcommand $name"
done

# 3. Long options: every option of the tkb_opt tables ({"name", ARG, HELP, IN};
#    HELP NULL: hidden, for tests), and with a built tkbench every option each
#    subcommand's --help lists. The page writes hyphens \-; read it with plain ones.
opts=$( { python3 - "$src" <<'PY'
import re, sys, pathlib
for f in sorted(pathlib.Path(sys.argv[1], "bench").rglob("*.c")):
    for t in re.finditer(r"\btkb_opt\s+\w+\[\]\s*=\s*\{(.*?)\n\};", f.read_text(), re.S):
        for m in re.finditer(r'\{\s*"([a-z][a-z0-9_-]*)",\s*(?:NULL|"[^"]*"),\s*(NULL|")', t.group(1)):
            if m.group(2) != "NULL":
                print("--" + m.group(1))
PY
          if [ -n "$tkbench" ]; then
            # the option lines of each help ("  --name VALUE  what it is")
            for c in $cmds; do "$tkbench" ${c//_/ } --help; done | grep -oE -- '^ +--[a-z][a-z_-]*' | tr -d ' '
          fi
        } | grep -vE '^--(help|benchmark.*)$' | sort -u)
[ "$(wc -w <<<"$opts")" -ge 10 ] || err "found only $(wc -w <<<"$opts") options in the CLI sources: update this check"
plain=$(sed 's/\\-/-/g' "$page")
for o in $opts; do
  grep -qE -- "(^|[^a-z_-])$o([^a-z_-]|$)" <<<"$plain" || err "tkbench.1 does not document the option $o"
done

if [ $fail -eq 0 ]; then
  echo "man pages format cleanly; tkbench.1 covers $ncmds commands ($(echo ${cmds//_/ })) and $(wc -w <<<"$opts") options"
fi
exit $fail
