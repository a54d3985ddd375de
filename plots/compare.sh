#!/usr/bin/env bash
# Put two or more timerkit results folders into one set of figures and a comparison table.
# Usage: plots/compare.sh OUTDIR DIR_A DIR_B [DIR_C ...]
# Writes OUTDIR/figures/*.{pdf,png,svg} (every series labelled "<run>: <peer>") and OUTDIR/compare.md
# (metadata side by side; every measurement of every run with its ratio to the first run, B/A).
# A run's label is its metadata `label`, else its folder name; clashes get "#2", "#3" appended.
# Environment: as render.sh (TK_PLOTS_ERRORBARS, TK_PLOTS_BARE, TK_PLOTS_TITLES).
# Exit: 0; 1 unreadable folder or bad usage; 3 gnuplot missing; 4 drawing a figure failed.
set -euo pipefail
TK_PROG=compare.sh
# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

if [[ $# -lt 3 || "$1" == -h || "$1" == --help ]]; then
  printf 'usage: %s OUTDIR DIR_A DIR_B [DIR_C ...]\n' "$0" >&2
  exit 1
fi
OUT=$1; shift
for d in "$@"; do
  [[ -d "$d" ]] || tk_die "'$d' is not a folder"
  [[ -r "$d/results.csv" || -d "$d/hist" ]] || tk_die "'$d' has neither results.csv nor hist/: not a results folder"
done
mkdir -p -- "$OUT" || tk_die "cannot create '$OUT'"
[[ -w "$OUT" ]] || tk_die "cannot write into '$OUT'"

T0=$(date +%s)
tk_init
declare -A used_label=()
for d in "$@"; do
  # label: metadata label, else folder name; made unique
  lbl=""
  if [[ -r "$d/metadata.txt" ]]; then
    lbl=$(awk '{ sub(/\r$/, "") } { i = index($0, ":"); if (!i) next; k = substr($0, 1, i - 1); gsub(/^[ \t]+|[ \t]+$/, "", k)
               if (k == "label") { v = substr($0, i + 1); gsub(/^[ \t]+|[ \t]+$/, "", v); print v; exit } }' "$d/metadata.txt")
  fi
  [[ -n "$lbl" ]] || lbl=$(basename -- "$(cd -- "$d" && pwd)")
  base=$lbl; i=1
  while [[ -n "${used_label[$lbl]:-}" ]]; do i=$((i + 1)); lbl="$base#$i"; done
  used_label[$lbl]=1
  tk_add_run "$d" "$lbl"
done
tk_prepare
tk_all_figures "$OUT/figures"

labels=""
for ((r = 1; r <= TK_NRUNS; r++)); do labels+="${labels:+|}$(tk_label "$r")"; done
{
  printf '# timerkit comparison: %s\n\n' "${labels//|/ vs }"
  printf 'Rendered by `plots/compare.sh`. Values are means of each run'"'"'s repetitions. The ratio columns divide each run by the first (%s); "better"/"worse" marks a difference of more than 5 %% (lower is better, except rates per second, where higher is better; `offset_ms` is not judged). In the figures colour and point shape name the peer and the dash type (and filled/open points) the run.\n\n' "$(tk_label 1)"
  printf '## Runs\n\n| key |'
  for ((r = 1; r <= TK_NRUNS; r++)); do printf ' %s |' "$(tk_label "$r")"; done
  printf '\n| --- |'
  for ((r = 1; r <= TK_NRUNS; r++)); do printf ' --- |'; done
  printf '\n| folder |'
  for ((r = 1; r <= TK_NRUNS; r++)); do printf ' `%s` |' "$(awk -F '\t' -v r="$r" '$1 == r { print $3 }' "$TK_TMP/runs.tsv")"; done
  printf '\n'
  for ((r = 1; r <= TK_NRUNS; r++)); do cat "$TK_TMP/meta/$r.tsv"; done | cut -f1 | awk '!s[$0]++' |
    while IFS= read -r key; do
      printf '| %s |' "$key"
      for ((r = 1; r <= TK_NRUNS; r++)); do v=$(tk_meta "$r" "$key"); printf ' %s |' "${v//|/\\|}"; done
      printf '\n'
    done
  printf '\n'
  t=$(tbl -v mode=compare -v labels="$labels")
  md_section "## Every measurement, with ratios to $(tk_label 1)" <<<"$t"
  printf '## Figures\n\n'
  md_figures figures '*'
  if [[ -s "$TK_TMP/missing.md" ]]; then
    printf '## Not drawn\n\n'
    cat "$TK_TMP/missing.md"; printf '\n'
  fi
} | cat -s >"$OUT/compare.md.tmp"
mv -f -- "$OUT/compare.md.tmp" "$OUT/compare.md"

tk_warn "wrote $(wc -l <"$TK_TMP/figs.tsv") figures (x3 formats) to $OUT/figures and $OUT/compare.md in $(($(date +%s) - T0)) s"
[[ "${TK_GNUPLOT_FAILED:-0}" == 1 ]] && exit 4
exit 0
