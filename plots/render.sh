#!/usr/bin/env bash
# Render a timerkit results folder: DIR/figures/*.{pdf,png,svg} and DIR/report.md.
# Usage: plots/render.sh DIR
# Idempotent: re-running replaces the figures and the report; works on old folders too.
# Environment: TK_PLOTS_ERRORBARS=minmax|stddev (default minmax)
#              TK_PLOTS_BARE=1 drops titles and machine footers (camera-ready figures)
# Exit: 0 (missing workloads are reported on stderr, not errors), 1 unreadable folder or bad
# usage, 3 gnuplot missing, 4 drawing a figure failed (gnuplot or pdftocairo).
set -euo pipefail
TK_PROG=render.sh
# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  printf 'usage: %s RESULTS_DIR\n' "$0" >&2
  exit 1
fi
DIR=$1
[[ -d "$DIR" ]] || tk_die "'$DIR' is not a folder"
[[ -r "$DIR/results.csv" || -d "$DIR/hist" ]] || tk_die "'$DIR' has neither results.csv nor hist/: not a results folder"
[[ -w "$DIR" ]] || tk_die "cannot write into '$DIR'"

T0=$(date +%s)
tk_init
tk_add_run "$DIR"
tk_prepare
tk_all_figures "$DIR/figures"

# ---- report.md ----------------------------------------------------------------------------------
REPORT="$DIR/report.md"
{
  label=$(tk_label 1)
  printf '# timerkit benchmark report: %s\n\n' "$label"
  printf 'Rendered by `plots/render.sh` from `results.csv`%s. Values are means of the repetitions; the figures draw min-max (or standard deviation) error bars. Lower is better except for rates (per second). Every figure is also in `figures/` as PDF and SVG.\n\n' \
    "$([[ -s "$TK_TMP/hgrm.tsv" ]] && echo ', `hist/*.hgrm`' || true)"
  if [[ -s "$TK_TMP/meta/1.tsv" ]]; then
    printf '## Run\n\n| key | value |\n| --- | --- |\n'
    awk -F '\t' '{ gsub(/\|/, "\\|", $2); printf "| %s | %s |\n", $1, $2 }' "$TK_TMP/meta/1.tsv"
    printf '\n'
  else
    printf '## Run\n\nNo metadata.txt or metadata.json in this folder.\n\n'
  fi

  for lv in core exec; do
    body=""
    for m in schedule_ns:insert cancel_ns:cancel churn_ns:churn expire_ns:expire; do
      t=$(tbl -v mode=byn -v wl="W1_$lv" -v metric="${m%%:*}" -v scale=1 -v rowhead="${m#*:} (ns) at N =")
      [[ -n "$t" ]] && body+="$t"$'\n\n'
    done
    # the wheel's embedded-timer peers re-arm spare timers in the churn (bench/README.md, W1_exec)
    for m in "churn_spare_timers:churn spare timers taken" "churn_spare_wait_ms:churn wait for a spare (ms)"; do
      [[ $lv == exec ]] || break
      t=$(tbl -v mode=byn -v wl="W1_$lv" -v metric="${m%%:*}" -v scale=1 -v rowhead="${m#*:} at N =")
      [[ -n "$t" ]] && body+="$t"$'\n\n'
    done
    md_section "## W1 $lv: cost per operation (ns) by population N" <<<"$body"
    md_figures figures "w1_${lv}_overview" "w1_${lv}_schedule" "w1_${lv}_cancel" "w1_${lv}_churn" "w1_${lv}_expire"
  done

  t=$(tbl -v mode=cols -v spec="W2 burst (M callbacks/s)|W2_burst|burst_fire_rate_per_s||1e6;W2 spread wall (ms)|W2_spread|expire_wall_ms||1;W2 spread p50 (µs)|W2_spread|late_p50_us||1;W2 spread p99 (µs)|W2_spread|late_p99_us||1;W2 spread max (µs)|W2_spread|late_max_us||1;W3 p50 (µs)|W3_latency|late_p50_us||1;W3 p90 (µs)|W3_latency|late_p90_us||1;W3 p99 (µs)|W3_latency|late_p99_us||1;W3 p99.9 (µs)|W3_latency|late_p999_us||1;W3 max (µs)|W3_latency|late_max_us||1;W3 early (count)|W3_latency|early_count||1;W3 CPU (% of a core)|W3_latency|process_cpu_pct||1")
  t2=$(tbl -v mode=cols -v spec="W4 idle CPU (ms)|W4_idle|idle_cpu_ms||1;W4 wake-ups (count)|W4_idle|idle_wakeups||1;W5 bytes per timer|W5_memory|bytes_per_timer||1;W5 RSS after cancel (MiB)|W5_memory|rss_after_cancel_bytes||1048576")
  [[ -n "$t2" ]] && t="${t:+$t$'\n\n'}$t2"
  md_section "## W2-W5 headline metrics" <<<"$t"
  md_figures figures w2_burst_rate w2_spread_lateness 'w3_latency_*' w4_idle_cpu w4_idle_wakeups w5_bytes_per_timer w5_rss_after_cancel
  # percentile/CDF figures of workloads other than W3 (histograms of W2_spread, say)
  md_figures figures '*_percentiles' '*_cdf' | awk 'BEGIN { RS = ""; ORS = "\n\n" } !/w3_latency_/'

  body=""
  t=$(tbl -v mode=byn -v wl=W6_cancel_ratio -v metric=ns_per_timer -v scale=1 -v rowhead='ns per timer at % cancelled ='); [[ -n "$t" ]] && body+="$t"$'\n\n'
  t=$(tbl -v mode=byn -v wl=W6_delay_range -v metric=schedule_ns -v scale=1 -v rowhead='insert (ns) at delay/span ='); [[ -n "$t" ]] && body+="$t"$'\n\n'
  t=$(tbl -v mode=byn -v wl=W6_delay_range -v metric=expire_ns -v scale=1 -v rowhead='expiry (ns) at delay/span ='); [[ -n "$t" ]] && body+="$t"$'\n\n'
  spec=""
  for d in uniform exponential bimodal constant monotonic $(awk -F '\t' '$3 ~ /^W6_dist_/ { print substr($3, 9) }' "$TK_TMP/agg.tsv" | sort -u | grep -vxE 'uniform|exponential|bimodal|constant|monotonic' || true); do
    spec+="${spec:+;}$d churn (ns)|W6_dist_$d|churn_ns||1"
  done
  t=$(tbl -v mode=cols -v spec="$spec"); [[ -n "$t" ]] && body+="Increment distributions (largest N measured):"$'\n\n'"$t"$'\n\n'
  md_section "## W6 sweeps" <<<"$body"
  md_figures figures 'w6_*'
  t=$(tbl -v mode=byn -v wl=W7_contention -v metric=ops_per_s -v scale=1e6 -v rowhead='M ops/s at threads =')
  md_section "## W7 contention: total throughput (M ops/s) by producer threads" <<<"$t"
  md_figures figures w7_contention
  t=$(tbl -v mode=cols -v spec="clock read (ns)|floor|clock_ns||1;array append (ns)|floor|array_append_ns||1;nanosleep late p50 (µs)|floor|nanosleep_late_p50_us||1;nanosleep late p99 (µs)|floor|nanosleep_late_p99_us||1;condvar hand-off p50 (µs)|floor|condvar_handoff_p50_us||1;condvar hand-off p99 (µs)|floor|condvar_handoff_p99_us||1;locked RMW (ns)|floor|locked_rmw_ns||1;cold miss (ns)|floor|cold_miss_ns||1;spin stalls per s|floor|spin_stalls_per_s||1;spin time lost (%)|floor|spin_lost_pct||1;spin stall p50 (µs)|floor|spin_stall_p50_us||1;spin stall p99 (µs)|floor|spin_stall_p99_us||1")
  md_section "## Floor: the machine's limits" <<<"$t"
  t=$(tbl -v mode=other -v known="W1_core W1_exec W2_spread W2_burst W3_latency W4_idle W5_memory W6_cancel_ratio W6_delay_range W7_contention floor")
  md_section "## Other measurements" <<<"$t"
  if [[ -s "$TK_TMP/missing.md" ]]; then
    printf '## Not drawn\n\nThese figures were left out because the folder lacks their data:\n\n'
    cat "$TK_TMP/missing.md"; printf '\n'
  fi
} | cat -s >"$REPORT.tmp"
mv -f -- "$REPORT.tmp" "$REPORT"

nfig=$(wc -l <"$TK_TMP/figs.tsv")
tk_warn "wrote $nfig figures (x3 formats) to $DIR/figures and $REPORT in $(($(date +%s) - T0)) s"
[[ "${TK_GNUPLOT_FAILED:-0}" == 1 ]] && exit 4
exit 0
