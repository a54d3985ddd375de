#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages (docs/man/) format without a single warning, and tkbench.1
# documents what tkbench has: every subcommand of bench/cli.c's dispatch (and
# of `tkbench trace`'s), and every long option the CLI sources name. The lists
# come from the sources (and from `tkbench --help` when a built tkbench is
# given), never from a second hand-written list.
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

# 2. Subcommands. Top level: the names main() in bench/cli.c dispatches on
#    (strcmp(argv[1], "NAME")) and the commands its usage text shows
#    ("  tkbench NAME"); `tkbench trace NAME`: trace-cli.c's dispatch on argv[2].
#    Options (-x, --x), the help aliases and internal entries (_w5) are not
#    subcommands.
dispatch() { grep -oE "strcmp\\(argv\\[$2\\], \"[^\"]+\"\\) == 0" "$1" | sed -E 's/.*"([^"]+)".*/\1/'; }
top=$( { dispatch "$src/bench/cli.c" 1
         grep -oE '^ *"  tkbench [a-z]+' "$src/bench/cli.c" | sed -E 's/.*tkbench //'
         if [ -n "$tkbench" ]; then "$tkbench" --help | grep -oE '^  tkbench [a-z]+' | sed -E 's/.*tkbench //'; fi
       } | grep -vE '^(-|_|help$)' | sort -u)
sub=$(dispatch "$src/bench/trace-cli.c" 2 | grep -vE '^(-|_|help$)' | sort -u)
ntop=$(wc -w <<<"$top")
# a guard against this parse going stale: tkbench has at least list, run,
# replay, advise, plot, compare, manifest and trace
[ "$ntop" -ge 8 ] || err "found only $ntop subcommands in bench/cli.c ($top): has its dispatch changed shape? update this check"
[ -n "$sub" ] || err "found no subcommand of 'tkbench trace' in bench/trace-cli.c: update this check"
for c in $top; do
  grep -qE "^\\.SS \"tkbench $c( |\")" "$page" || err "tkbench.1 has no section '.SS \"tkbench $c ...\"' for the subcommand $c"
done
for c in $sub; do
  grep -qE "^\\.SS \"tkbench trace $c\"" "$page" || err "tkbench.1 has no section '.SS \"tkbench trace $c\"'"
done

# 3. Long options: every --name the CLI sources mention (usage texts, error
#    messages, parsers), except Google Benchmark's and the hidden test-only
#    ones (--_name). The page writes hyphens \-; read it with plain ones.
opts=$( { grep -ohE -- '--[a-z][a-z_-]*' "$src"/bench/cli.c "$src"/bench/advise.c \
            "$src"/bench/trace-cli.c "$src"/bench/replay-cli.c
          if [ -n "$tkbench" ]; then "$tkbench" --help | grep -ohE -- '--[a-z][a-z_-]*'; fi
        } | grep -v '^--benchmark' | sort -u)
[ "$(wc -w <<<"$opts")" -ge 10 ] || err "found only $(wc -w <<<"$opts") options in the CLI sources: update this check"
plain=$(sed 's/\\-/-/g' "$page")
for o in $opts; do
  grep -qE -- "(^|[^a-z_-])$o([^a-z_-]|$)" <<<"$plain" || err "tkbench.1 does not document the option $o"
done

if [ $fail -eq 0 ]; then
  echo "man pages format cleanly; tkbench.1 covers $(wc -w <<<"$top") commands ($(echo $top)), trace $(echo $sub), and $(wc -w <<<"$opts") options"
fi
exit $fail
