# shellcheck shell=bash
# timerkit plots: shared machinery for render.sh (one run) and compare.sh (several runs).
# Sourced, not executed. Needs bash, POSIX awk (mawk is fine), sort -V, gnuplot >= 5.2.
#
# Flow: tk_init -> tk_add_run (per results folder) -> tk_prepare -> tk_all_figures -> report.
# Everything temporary lives in $TK_TMP (removed on exit); data wrangling is awk, drawing gnuplot.

TK_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TK_PLOTS=$(dirname "$TK_LIB")
TK_STYLE="$TK_PLOTS/style.gp"
TAB=$'\t'
export LC_ALL=C.UTF-8  # byte-order sorting, '.' decimals, and UTF-8 for gnuplot's µ

tk_warn() { printf '%s: %s\n' "$TK_PROG" "$*" >&2; }
tk_die() { printf '%s: error: %s\n' "$TK_PROG" "$*" >&2; exit 1; }
# note a figure or table that could not be made (stderr + the report's list)
tk_missing() { tk_warn "skipped $1: $2"; printf -- '- `%s`: %s\n' "$1" "$2" >>"$TK_TMP/missing.md"; }

# gnuplot single-quoted string literal ('' escapes a quote; nothing else is special)
gpq() { local s=${1//\'/\'\'}; printf "'%s'" "$s"; }
# file-name-safe form of a workload or metric name
san() { printf '%s' "${1//[^A-Za-z0-9_.-]/_}"; }

tk_init() {
  command -v gnuplot >/dev/null 2>&1 || { printf '%s: error: gnuplot not found (Debian: apt-get install gnuplot-nox)\n' "$TK_PROG" >&2; exit 3; }
  [[ -r "$TK_STYLE" ]] || tk_die "style file $TK_STYLE missing"
  TK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tkplots.XXXXXX")
  [[ -n "${TK_PLOTS_KEEP_TMP:-}" ]] && tk_warn "keeping $TK_TMP" || trap 'rm -rf -- "$TK_TMP"' EXIT
  mkdir -p "$TK_TMP/meta" "$TK_TMP/hg" "$TK_TMP/d" "$TK_TMP/gp"
  : >"$TK_TMP/agg.raw"; : >"$TK_TMP/hgrm.tsv"; : >"$TK_TMP/runs.tsv"; : >"$TK_TMP/figs.tsv"; : >"$TK_TMP/missing.md"
  TK_NRUNS=0
  TK_ERRMODE=${TK_PLOTS_ERRORBARS:-minmax}
  case "$TK_ERRMODE" in minmax | stddev) ;; *) tk_die "TK_PLOTS_ERRORBARS must be minmax or stddev" ;; esac
  TK_BARE=${TK_PLOTS_BARE:-0}
  # PNG and SVG: the PDF converted by poppler's pdftocairo when it is installed, so that the three
  # formats are one layout. Otherwise gnuplot's pngcairo and svg terminals draw them: the PNG is the
  # same figure, but the svg terminal sizes text for its layout larger than it draws it (the key
  # and margins take more room). TK_PLOTS_NO_PDFTOCAIRO=1 forces the fallback.
  TK_PDFTOCAIRO=""
  if [[ -z "${TK_PLOTS_NO_PDFTOCAIRO:-}" ]] && command -v pdftocairo >/dev/null 2>&1; then TK_PDFTOCAIRO=pdftocairo; fi
  TK_PNG_DPI=$(awk '$1 == "PNG_DPI" && $2 == "=" { print $3 + 0; exit }' "$TK_STYLE")
  [[ "$TK_PNG_DPI" =~ ^[0-9]+$ ]] || tk_die "no PNG_DPI in $TK_STYLE"
}

# tk_add_run DIR [LABEL]: read one results folder (results.csv, metadata.txt|json, hist/*.hgrm)
tk_add_run() {
  local dir=$1 label=${2:-} r f base wl peer n=0
  [[ -d "$dir" && -r "$dir" && -x "$dir" ]] || tk_die "cannot read results folder '$dir'"
  TK_NRUNS=$((TK_NRUNS + 1)); r=$TK_NRUNS
  # metadata: key: value lines; metadata.json (flat) as a fallback
  if [[ -r "$dir/metadata.txt" ]]; then
    awk '{ sub(/\r$/, "") } /^[ \t]*#/ { next } {
           i = index($0, ":"); if (!i) next
           k = substr($0, 1, i - 1); v = substr($0, i + 1)
           gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v); gsub(/\t/, " ", v)
           if (k != "" && !(k in seen)) { seen[k] = 1; print k "\t" v } }' "$dir/metadata.txt" >"$TK_TMP/meta/$r.tsv"
  elif [[ -r "$dir/metadata.json" ]]; then
    awk '{ line = $0; while (match(line, /"[^"]+"[ \t]*:[ \t]*("([^"\\]|\\.)*"|[-+0-9.eE]+|true|false|null)/)) {
             kv = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
             i = index(kv, ":"); k = substr(kv, 2, i - 3); v = substr(kv, i + 1)
             sub(/"[ \t]*$/, "", k); gsub(/^[ \t"]+|[ \t"]+$/, "", v); print k "\t" v } }' "$dir/metadata.json" >"$TK_TMP/meta/$r.tsv"
    tk_warn "$dir: no metadata.txt, read metadata.json"
  else
    : >"$TK_TMP/meta/$r.tsv"
    tk_warn "$dir: no metadata.txt or metadata.json: figures will have no machine footer"
  fi
  if [[ -z "$label" ]]; then
    label=$(tk_meta "$r" label)
    [[ -n "$label" ]] || label=$(basename -- "$(cd -- "$dir" && pwd)")
  fi
  printf '%s\t%s\t%s\n' "$r" "$label" "$dir" >>"$TK_TMP/runs.tsv"
  if [[ -r "$dir/results.csv" ]]; then
    awk -v run="$r" -v errmode="$TK_ERRMODE" -v skipfile="$TK_TMP/skip.txt" -f "$TK_LIB/load.awk" \
      "$dir/results.csv" >>"$TK_TMP/agg.raw"
    if [[ -s "$TK_TMP/skip.txt" ]]; then
      while IFS= read -r f; do tk_warn "$dir/results.csv: $f"; done <"$TK_TMP/skip.txt"
      : >"$TK_TMP/skip.txt"
    fi
  elif [[ -e "$dir/results.csv" ]]; then
    tk_die "cannot read '$dir/results.csv'"
  else
    tk_warn "$dir: no results.csv (only histograms, if any, will be drawn)"
  fi
  if [[ -d "$dir/hist" ]]; then
    for f in "$dir"/hist/*.hgrm; do
      [[ -e "$f" ]] || continue
      base=$(basename -- "$f" .hgrm)
      [[ "$base" == *.* ]] || { tk_warn "$f: name is not <workload>.<peer>.hgrm, ignored"; continue; }
      wl=${base%%.*}; peer=${base#*.}
      n=$((n + 1))
      if awk -f "$TK_LIB/hgrm.awk" "$f" >"$TK_TMP/hg/$r.$n.dat"; then
        printf '%s\t%s\t%s\t%s\n' "$r" "$wl" "$peer" "$TK_TMP/hg/$r.$n.dat" >>"$TK_TMP/hgrm.tsv"
      else
        tk_warn "$f: no percentile rows, ignored"
      fi
    done
  fi
}

tk_meta() { # tk_meta RUN KEY -> value or empty
  awk -F '\t' -v k="$2" '$1 == k { print $2; exit }' "$TK_TMP/meta/$1.tsv"
}
tk_label() { awk -F '\t' -v r="$1" '$1 == r { print $2; exit }' "$TK_TMP/runs.tsv"; }

# After all runs: fixed peer slots, series table, per-series data files, sorted aggregate.
tk_prepare() {
  local p slot=0 eslot=0 w k=0 lbl
  # peers of every run, in the fixed order heap, wheel-* (version sort), libuv, libevent,
  # naive-heap, sorted-list, floor, then the rest alphabetically (slots 10.. cycling over 10-12).
  # An embedded-timer variant (<heap|wheel-*>-embedded) follows its base, in slot base + 12
  # (13 heap-embedded, 14-16 the wheels'); wheels are ranked by base name, so a variant keeps its
  # slot whether or not its base is in the folder. A spinning variant (<peer>-spin<N>us) is one of
  # the rest, so it does not move the wheels after it.
  { cut -f2 "$TK_TMP/agg.raw"; cut -f3 "$TK_TMP/hgrm.tsv"; } | awk 'NF' | sort -u >"$TK_TMP/peers.all"
  : >"$TK_TMP/slots.tsv"
  grep -qx 'heap' "$TK_TMP/peers.all" && printf 'heap\t1\n' >>"$TK_TMP/slots.tsv"
  grep -qx 'heap-embedded' "$TK_TMP/peers.all" && printf 'heap-embedded\t13\n' >>"$TK_TMP/slots.tsv"
  k=1
  while IFS= read -r w; do
    k=$((k + 1))
    if ((k <= 4)); then slot=$k; eslot=$((k + 12)); else slot=$((10 + (k - 5) % 3)); eslot=$((10 + (k - 4) % 3)); fi
    grep -qx -- "$w" "$TK_TMP/peers.all" && printf '%s\t%s\n' "$w" "$slot" >>"$TK_TMP/slots.tsv"
    grep -qx -- "$w-embedded" "$TK_TMP/peers.all" && printf '%s\t%s\n' "$w-embedded" "$eslot" >>"$TK_TMP/slots.tsv"
  done < <(awk '/^wheel-/ && !/-spin[0-9]+us$/ { sub(/-embedded$/, ""); print }' "$TK_TMP/peers.all" | sort -u -V)
  for p in libuv:5 libevent:6 naive-heap:7 sorted-list:8 floor:9; do
    grep -qx "${p%:*}" "$TK_TMP/peers.all" && printf '%s\t%s\n' "${p%:*}" "${p#*:}" >>"$TK_TMP/slots.tsv"
  done
  k=0
  while IFS= read -r w; do
    printf '%s\t%s\n' "$w" $((10 + k % 3)) >>"$TK_TMP/slots.tsv"; k=$((k + 1))
  done < <(awk -F '\t' 'NR == FNR { s[$1] = 1; next } !($1 in s)' "$TK_TMP/slots.tsv" "$TK_TMP/peers.all")
  # series = (run, peer), ordered as the slot table lists the peers (an -embedded variant right
  # after its base), then by run; label "peer" or "runlabel: peer"
  { cut -f1,2 "$TK_TMP/agg.raw"; cut -f1,3 "$TK_TMP/hgrm.tsv"; } | awk 'NF' | sort -u |
    awk -F '\t' -v OFS='\t' 'NR == FNR { s[$1] = $2; o[$1] = FNR; next } { print s[$2], o[$2], $1, $2 }' "$TK_TMP/slots.tsv" - |
    sort -t "$TAB" -k2,2n -k3,3n | awk -F '\t' -v OFS='\t' '{ print NR, $3, $4, $1 }' >"$TK_TMP/series.raw"
  : >"$TK_TMP/series.tsv"
  while IFS="$TAB" read -r k r p slot; do
    if ((TK_NRUNS > 1)); then lbl="$(tk_label "$r"): $p"; else lbl=$p; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$k" "$r" "$p" "$slot" "$lbl" >>"$TK_TMP/series.tsv"
  done <"$TK_TMP/series.raw"
  declare -gA S_RUN S_PEER S_SLOT S_LABEL
  TK_NSERIES=0
  while IFS="$TAB" read -r k r p slot lbl; do
    S_RUN[$k]=$r; S_PEER[$k]=$p; S_SLOT[$k]=$slot; S_LABEL[$k]=$lbl; TK_NSERIES=$k
  done <"$TK_TMP/series.tsv"
  # aggregate sorted for tables: workload order, metric order, n, series
  awk -F '\t' -v OFS='\t' '
    function wrank(w) { if (w == "W1_core") return 1; if (w == "W1_exec") return 2; if (w == "W2_spread") return 3
      if (w == "W2_burst") return 4; if (w == "W3_latency") return 5; if (w == "W4_idle") return 6; if (w == "W5_memory") return 7
      if (w == "W6_cancel_ratio") return 8; if (w == "W6_delay_range") return 9; if (w ~ /^W6_dist_/) return 10
      if (w == "W7_contention") return 11; if (w == "floor") return 12; return 13 }
    function mrank(m,   i) { for (i = 1; i <= nm; i++) if (M[i] == m) return i; return 99 }
    BEGIN { nm = split("schedule_ns cancel_ns churn_ns expire_ns expire_wall_ms late_p50_us late_p90_us late_p99_us late_p999_us late_max_us early_count process_cpu_pct offset_ms burst_fire_rate_per_s idle_cpu_ms idle_wakeups bytes_per_timer rss_after_cancel_bytes ns_per_timer ops_per_s clock_ns array_append_ns nanosleep_late_p50_us nanosleep_late_p99_us condvar_handoff_p50_us condvar_handoff_p99_us", M, " ") }
    NR == FNR { sid[$2 SUBSEP $3] = $1; next }
    { print wrank($3), $3, mrank($5), $5, $4, sid[$1 SUBSEP $2], $0 }' "$TK_TMP/series.tsv" "$TK_TMP/agg.raw" |
    sort -t "$TAB" -k1,1n -k2,2 -k3,3n -k4,4 -k5,5g -k6,6n | cut -f7- >"$TK_TMP/agg.tsv"
  # per-series data files d/<workload>/<metric>/<sid>.dat: n mean lo hi sd count (sorted by n)
  if [[ -s "$TK_TMP/agg.tsv" ]]; then
    awk -F '\t' 'function san(s) { gsub(/[^A-Za-z0-9_.-]/, "_", s); return s } { print san($3) "/" san($5) }' "$TK_TMP/agg.tsv" |
      sort -u | while IFS= read -r w; do mkdir -p "$TK_TMP/d/$w"; done
    find "$TK_TMP/d" -name '*.dat' -exec rm -f {} +
    awk -F '\t' -v d="$TK_TMP/d" '
      function san(s) { gsub(/[^A-Za-z0-9_.-]/, "_", s); return s }
      NR == FNR { sid[$2 SUBSEP $3] = $1; next }
      { f = d "/" san($3) "/" san($5) "/" sid[$1 SUBSEP $2] ".dat"
        if (f != last) { if (last != "") close(last); last = f }
        print $4, $8, $12, $13, $11, $7 >> f }' "$TK_TMP/series.tsv" "$TK_TMP/agg.tsv"
  fi
  tk_series_styles
  TK_BUILD_FOOTER
}

# ---- footers and captions from metadata ----------------------------------------------------------------
cut_to() { local s=$1 n=$2; if ((${#s} > n)); then printf '%s…' "${s:0:n-1}"; else printf '%s' "$s"; fi; }
TK_BUILD_FOOTER() {
  local r m1 m2 v
  if ((TK_NRUNS == 1)); then
    m1="$(tk_meta 1 cpu_model)"
    v=$(tk_meta 1 cores); [[ -n "$v" ]] && m1="$m1, $v cores"
    v=$(tk_meta 1 kernel); [[ -n "$v" ]] && m1="$m1, $v"
    v=$(tk_meta 1 hostname); [[ -n "$v" ]] && m1="$m1 ($v)"
    m2="$(tk_meta 1 repetitions) reps, commit $(tk_meta 1 commit), $(tk_meta 1 date)"
    [[ "$m2" == " reps, commit , " ]] && m2=""
    v=$(tk_meta 1 suite); [[ -n "$v" ]] && m2="$m2, $v suite"
    v=$(tk_meta 1 compiler); [[ -n "$v" ]] && m2="$m2, $v $(tk_meta 1 cflags)"
    v=$(tk_meta 1 timer_slack_ns); [[ -n "$v" ]] && m2="$m2, timer slack $v ns"
    TK_FOOT1=${m1#, }; TK_FOOT2=${m2#, }
  else
    m1=""; m2=""
    for ((r = 1; r <= TK_NRUNS; r++)); do
      m1="$m1; $(tk_label "$r"): $(tk_meta "$r" cpu_model), $(tk_meta "$r" kernel)"
      m2="$m2; $(tk_label "$r"): commit $(tk_meta "$r" commit), $(tk_meta "$r" repetitions) reps, $(tk_meta "$r" date)"
    done
    TK_FOOT1=${m1#; }; TK_FOOT2=${m2#; }
  fi
  [[ "$TK_BARE" == 1 ]] && { TK_FOOT1=""; TK_FOOT2=""; }
  return 0
}

# ---- figure plumbing -------------------------------------------------------------------------------------
# fig_begin NAME SIZE(single|double); then gp lines; then fig_render TITLE CAPTION
fig_begin() { FIG_NAME=$1; FIG_SIZE=$2; FIG_MULTI=${3:-}; FIG_BODY="$TK_TMP/gp/$1.gp"; : >"$FIG_BODY"; }
gp() { printf '%s\n' "$*" >>"$FIG_BODY"; }
gp_title() { [[ "${TK_PLOTS_TITLES:-0}" == 1 ]] && gp "set title $(gpq "$1")"; return 0; }
gp_footer() { # gp_footer [SOURCE]: two small grey lines at the bottom (machine; run), and room for them
  local w=72 l1 l2
  [[ "$FIG_SIZE" == double ]] && w=170
  [[ -n "$TK_FOOT1$TK_FOOT2" ]] || return 0
  l1=$TK_FOOT1; [[ -n "${1:-}" ]] && l1="$1 | $l1"
  l1=$(cut_to "$l1" "$w"); l2=$(cut_to "$TK_FOOT2" "$w")
  gp "set label 101 $(gpq "$l1") at screen 0.008, screen 0.048 left font ',4.5' textcolor rgb '#555555' noenhanced"
  gp "set label 102 $(gpq "$l2") at screen 0.008, screen 0.015 left font ',4.5' textcolor rgb '#555555' noenhanced"
  [[ -n "${FIG_MULTI:-}" ]] || gp "set bmargin 5.1"
}
fig_render() {
  local title=$1 caption=$2 fmt ok=1 log="$TK_TMP/gp/$FIG_NAME.log" out="$TK_FIGDIR/$FIG_NAME"
  {
    printf 'OUT = %s\n' "$(gpq "$out")"
    printf 'do for [FMT in "%s"] {\n' "$([[ -n "$TK_PDFTOCAIRO" ]] && echo pdf || echo pdf png svg)"
    # every format starts from the same state: the shared style, then the figure
    printf '  reset\n  load %s\n' "$(gpq "$TK_STYLE")"
    printf '  COMPARE = %d\n' "$((TK_NRUNS > 1 ? 1 : 0))"
    printf '  eval value("TERM_".FMT."_%s")\n' "$FIG_SIZE"
    # comparisons have twice the series and long labels: a smaller, denser key
    printf '  if (COMPARE) { set key font ",5" spacing 1 width -1 samplen 1.8 }\n'
    printf '  set output OUT.".".FMT\n'
    printf '  load %s\n' "$(gpq "$FIG_BODY")"
    printf '  unset output\n}\n'
  } >"$TK_TMP/gp/$FIG_NAME.driver.gp"
  if ! gnuplot "$TK_TMP/gp/$FIG_NAME.driver.gp" >"$log" 2>&1; then ok=0; fi
  if ((ok)) && [[ -n "$TK_PDFTOCAIRO" ]]; then
    "$TK_PDFTOCAIRO" -png -r "$TK_PNG_DPI" -singlefile "$out.pdf" "$out" >>"$log" 2>&1 &&
      "$TK_PDFTOCAIRO" -svg "$out.pdf" "$out.svg" >>"$log" 2>&1 || ok=0
  fi
  for fmt in pdf png svg; do [[ -s "$TK_FIGDIR/$FIG_NAME.$fmt" ]] || ok=0; done
  if ((ok == 0)); then
    tk_warn "drawing $FIG_NAME failed (gnuplot${TK_PDFTOCAIRO:+ or pdftocairo}):"; sed 's/^/    /' "$log" >&2
    rm -f -- "$TK_FIGDIR/$FIG_NAME".{pdf,png,svg}
    printf -- '- `%s`: drawing failed (see stderr of the renderer)\n' "$FIG_NAME" >>"$TK_TMP/missing.md"
    TK_GNUPLOT_FAILED=1
    return 0
  fi
  # gnuplot warnings (not errors) are worth seeing
  if [[ -s "$log" ]]; then sed "s/^/$TK_PROG: $FIG_NAME: gnuplot: /" "$log" >&2; fi
  printf '%s\t%s\t%s\t%s\n' "$FIG_NAME" "$FIG_SIZE" "$title" "$caption" >>"$TK_TMP/figs.tsv"
}

# series (sids) that have data for WORKLOAD METRIC
series_for() {
  local d="$TK_TMP/d/${1//[^A-Za-z0-9_.-]/_}/${2//[^A-Za-z0-9_.-]/_}" k
  for ((k = 1; k <= TK_NSERIES; k++)); do [[ -s "$d/$k.dat" ]] && printf '%s ' "$k"; done
  return 0
}
datf() { printf '%s' "$TK_TMP/d/${1//[^A-Za-z0-9_.-]/_}/${2//[^A-Za-z0-9_.-]/_}/$3.dat"; }
unit_of() { awk -F '\t' -v w="$1" -v m="$2" '$3 == w && $5 == m { print $6; exit }' "$TK_TMP/agg.tsv"; }
unit_txt() {
  case "$1" in
  us) printf 'µs' ;; per_s) printf '1/s' ;; pct) printf '%%' ;; count | -) printf 'count' ;; *) printf '%s' "$1" ;;
  esac
}
# axis label: "what (unit)"; a label that already names its unit in parentheses is kept
ylab() { if [[ "$1" == *"("*")"* ]]; then printf '%s' "$1"; else printf '%s (%s)' "$1" "$(unit_txt "$2")"; fi; }
# engfmt YSCALE UNIT FILES...: SI prefixes (5.0M, 10 MB) on axes of rates and bytes that reach 1e4
engfmt() {
  local ys=$1 unit=$2 hi; shift 2
  [[ "$unit" == per_s || "$unit" == bytes ]] || return 0
  read -r _ hi < <(range_of "$@")
  awk -v h="$hi" 'BEGIN { exit !(h >= 10000) }' || return 0
  local suf=""; [[ "$unit" == bytes ]] && suf="B"
  if [[ "$ys" == log ]]; then gp "set format y '%.0s %c$suf'"; else gp "set format y '%.1s %c$suf'"; fi
}
# QD: the opening of a gnuplot string naming a data file of WL METRIC (append "<sid>.dat'")
qdir() { local t="$TK_TMP/d/${1//[^A-Za-z0-9_.-]/_}/${2//[^A-Za-z0-9_.-]/_}/"; QD="'${t//\'/\'\'}"; }
# per-series style strings, computed once (tk_prepare): S_LS lines+points, S_LSL lines, S_FS bars, S_QL label
tk_series_styles() {
  local k s r
  declare -gA S_LS S_LSL S_FS S_QL
  for ((k = 1; k <= TK_NSERIES; k++)); do
    s=${S_SLOT[$k]}; r=${S_RUN[$k]}
    S_LS[$k]="lc rgb PC[$s] dt s_dash($s,$r) pt s_point($s,$r) lw LW ps PS"
    S_LSL[$k]="lc rgb PC[$s] dt s_dash($s,$r) lw LW"
    S_FS[$k]="fs pattern s_fill($s,$r) border lc rgb PC[$s] lc rgb PC[$s]"
    S_QL[$k]="'${S_LABEL[$k]//\'/\'\'}'"
  done
}
# line style of series k (lines+points)
lstyle() { local s=${S_SLOT[$1]} r=${S_RUN[$1]}; printf 'lc rgb PC[%s] dt s_dash(%s,%s) pt s_point(%s,%s) lw LW ps PS' "$s" "$s" "$r" "$s" "$r"; }
# line only (for "with lines" and "with steps", which take no point type)
lstyle_l() { local s=${S_SLOT[$1]} r=${S_RUN[$1]}; printf 'lc rgb PC[%s] dt s_dash(%s,%s) lw LW' "$s" "$s" "$r"; }
fstyle() { local s=${S_SLOT[$1]} r=${S_RUN[$1]}; printf 'fs pattern s_fill(%s,%s) border lc rgb PC[%s] lc rgb PC[%s]' "$s" "$r" "$s" "$s"; }
# In a comparison the series are drawn without titles and the key has one entry per peer (its
# colour, and point unless WITH is lines) and one per run (its dash and point fill, in grey; for
# WITH boxes, a peer's solid colour and a run's fill pattern): twice the peers' entries, each
# "run: peer", left no room for the plot.
# ktitle K: the title clause of series K; compare_key WITH PART SIDS...: the key's plot clauses,
# each after ", " (nothing for one run), for PART peers, runs or both.
ktitle() { if ((TK_NRUNS > 1)); then printf 'notitle'; else printf 'title %s' "${S_QL[$1]}"; fi; }
compare_key() {
  local with=$1 part=$2 k r s seen=" " pt=""; shift 2
  ((TK_NRUNS > 1)) || return 0
  if [[ "$part" != runs ]]; then
    for k in "$@"; do
      [[ "$seen" == *" ${S_PEER[$k]} "* ]] && continue
      seen+="${S_PEER[$k]} "; s=${S_SLOT[$k]}
      if [[ "$with" == boxes ]]; then
        printf ', NaN with boxes fs solid 1.0 border lc rgb PC[%s] lc rgb PC[%s] title %s' "$s" "$s" "$(gpq "${S_PEER[$k]}")"
        continue
      fi
      [[ "$with" == lines ]] || pt=" pt PT[$s] ps PS"
      printf ', NaN with %s lc rgb PC[%s] dt 1%s lw LW title %s' "$with" "$s" "$pt" "$(gpq "${S_PEER[$k]}")"
    done
  fi
  [[ "$part" == peers ]] && return 0
  for ((r = 1; r <= TK_NRUNS; r++)); do
    if [[ "$with" == boxes ]]; then
      printf ", NaN with boxes fs pattern s_fill(1,%s) border lc rgb '#444444' lc rgb '#444444' title %s" "$r" "$(gpq "$(tk_label "$r")")"
      continue
    fi
    [[ "$with" == lines ]] || pt=" pt ($r % 2 == 0 ? 6 : 7) ps PS"
    printf ", NaN with %s lc rgb '#444444' dt RD[run_i(%s)]%s lw LW title %s" "$with" "$r" "$pt" "$(gpq "$(tk_label "$r")")"
  done
}
# min and max of column 2 over files; prints "min max" (min over positive values, 0 if none)
range_of() { awk 'BEGIN { mn = ""; mx = "" } $2 + 0 > 0 && (mn == "" || $2 + 0 < mn) { mn = $2 + 0 } mx == "" || $2 + 0 > mx { mx = $2 + 0 } END { print (mn == "" ? 0 : mn), (mx == "" ? 0 : mx) }' "$@"; }
# single_x FILES...: the x value (column 1) if the files hold just one, else nothing (a run of one
# N, the smoke suite's: gnuplot would warn of an empty x range and widen it by itself)
single_x() { awk '{ v[$1 + 0] = 1 } END { n = 0; for (x in v) { n++; last = x } if (n == 1) print last }' "$@"; }
# xrange_around X LOG: an x range with X in the middle
xrange_around() { if [[ "$2" == log ]]; then gp "set xrange [$1/3.0:$1*3.0]"; else gp "set xrange [$1-1:$1+1]"; fi; }
# decide log or linear for y: log when all values are positive and span >= 30x
auto_log() { awk 'BEGIN { mn = ""; ok = 1 } { if ($3 + 0 <= 0 || $2 + 0 <= 0) ok = 0; if (mn == "" || $2 + 0 < mn) mn = $2 + 0; if ($2 + 0 > mx) mx = $2 + 0 } END { print (ok && mn > 0 && mx / mn >= 30) ? "log" : "lin" }' "$@"; }
# floor reference value of a run: floor_val RUN METRIC
floor_val() { awk -F '\t' -v r="$1" -v m="$2" '$1 == r && $3 == "floor" && $5 == m { print $8; exit }' "$TK_TMP/agg.tsv"; }

# fig_lines NAME WL METRIC TITLE XLABEL YWHAT XSCALE YSCALE CAPTION
#   cost (etc.) vs n, one line per series, error bars lo..hi. XSCALE/YSCALE: log|lin|auto
#   Extra plot clauses (reference lines) may be passed in the array FIG_EXTRA.
fig_lines() {
  local name=$1 wl=$2 metric=$3 title=$4 xlabel=$5 ywhat=$6 xs=$7 ys=$8 caption=$9 k sep="" unit files=()
  local sids; sids=$(series_for "$wl" "$metric")
  if [[ -z "$sids" ]]; then tk_missing "$name" "no $wl/$metric rows in results.csv"; FIG_EXTRA=(); return 0; fi
  for k in $sids; do files+=("$TK_TMP/d/${wl//[^A-Za-z0-9_.-]/_}/${metric//[^A-Za-z0-9_.-]/_}/$k.dat"); done
  unit=$(unit_of "$wl" "$metric")
  qdir "$wl" "$metric"
  [[ "$ys" == auto ]] && ys=$(auto_log "${files[@]}")
  fig_begin "$name" single
  gp_title "$title"; gp_footer "$wl $metric"
  gp "set xlabel $(gpq "$xlabel")"
  gp "set ylabel $(gpq "$(ylab "$ywhat" "$unit")")"
  if [[ "$xs" == log ]]; then gp "set logscale x 10; set format x LOGFMT"; fi
  local x1; x1=$(single_x "${files[@]}")
  if [[ -n "$x1" ]]; then xrange_around "$x1" "$xs"; else gp "set autoscale xfix; set offsets graph 0.05, graph 0.05, 0, 0"; fi
  if [[ "$ys" == log && "$xs" == log ]]; then gp "set logscale y 10; set format y LOGFMT"
  elif [[ "$ys" == log ]]; then gp "set logscale y 10; set format y LOGFMT"
  else gp "set yrange [0:*]; set format y '%g'"; fi
  engfmt "$ys" "$unit" "${files[@]}"
  # a linear x of a few whole numbers (W7's producer threads): a tick at each, none between
  if [[ "$xs" != log ]]; then
    local xt; xt=$(awk '{ v[$1 + 0] = 1; if ($1 != int($1)) frac = 1 } END { n = 0; for (x in v) n++; if (frac || n > 8) exit; s = ""; for (x in v) s = s (s == "" ? "" : ",") x; print s }' "${files[@]}")
    [[ -n "$xt" ]] && gp "set xtics ($(tr ',' '\n' <<<"$xt" | sort -n | paste -sd, -)); unset mxtics"
  fi
  local cmd="plot"
  for k in $sids; do
    cmd+="$sep ${QD}$k.dat' using 1:2:3:4 with yerrorlines ${S_LS[$k]} $(ktitle "$k")"
    sep=", \\"$'\n'"    "
  done
  cmd+=$(compare_key linespoints all $sids)
  for k in "${FIG_EXTRA[@]}"; do cmd+="$sep $k"; done
  FIG_EXTRA=()
  gp "$cmd"
  fig_render "$title" "$caption"
}

# fig_panels NAME WL TITLE CAPTION XLABEL "metric|what" ...: double-column row of panels, shared key
fig_panels() {
  local name=$1 wl=$2 title=$3 caption=$4 xlabel=$5; shift 5
  local spec metric what k sids all="" used=() np=0 i=0 cmd sep unit
  for spec in "$@"; do
    metric=${spec%%|*}; sids=$(series_for "$wl" "$metric")
    [[ -n "$sids" ]] && { used+=("$spec"); all+=" $sids"; }
  done
  np=${#used[@]}
  if ((np < 2)); then tk_missing "$name" "fewer than two $wl metrics present"; return 0; fi
  all=$(printf '%s\n' $all | sort -nu | tr '\n' ' ')
  fig_begin "$name" double multi
  # explicit panel geometry (screen fractions): key strip on top, footer strip at the bottom
  # (the key may wrap to two rows: leave it room above the panel titles)
  local top=0.82 bot=0.15 l=0.065 r=0.99 gap=0.055 pw x0
  [[ -n "$TK_FOOT1$TK_FOOT2" ]] && bot=0.22
  [[ "${TK_PLOTS_TITLES:-0}" == 1 ]] && top=0.72
  pw=$(awk -v n="$np" -v l="$l" -v r="$r" -v g="$gap" 'BEGIN { printf "%.4f", (r - l - (n - 1) * g) / n }')
  gp "set multiplot"
  [[ "${TK_PLOTS_TITLES:-0}" == 1 ]] && gp "set label 103 $(gpq "$title") at screen 0.5, screen 0.975 center font ',7' noenhanced"
  gp_footer "$wl"
  # the shared key, drawn by an empty full-width plot
  gp "set lmargin at screen $l; set rmargin at screen $r; set tmargin at screen 0.999; set bmargin at screen $top"
  gp "unset border; unset xtics; unset ytics; unset mxtics; unset mytics; unset grid; set xrange [0:1]; set yrange [0:1]"
  gp "set key at screen 0.5, screen $(awk -v t="$top" 'BEGIN { printf "%.3f", (1 + t) / 2 + 0.01 }') center center horizontal width 1"
  cmd="plot"; sep=""
  if ((TK_NRUNS > 1)); then
    cmd+=" NaN notitle$(compare_key linespoints all $all)"
  else
    for k in $all; do cmd+="$sep NaN with linespoints ${S_LS[$k]} title ${S_QL[$k]}"; sep=", \\"$'\n'"    "; done
  fi
  gp "$cmd"
  gp "unset label 101; unset label 102; unset label 103; unset key"
  gp "set border 3; set xtics nomirror out scale 0.6; set ytics nomirror out scale 0.6; set mxtics default; set mytics default; set grid xtics ytics; set autoscale"
  gp "set logscale xy 10; set format x LOGFMT; set format y LOGFMT"
  local x1; x1=$(single_x "$TK_TMP/d/$(san "$wl")"/*/*.dat)
  if [[ -n "$x1" ]]; then xrange_around "$x1" log; else gp "set autoscale xfix; set offsets graph 0.06, graph 0.06, 0, 0"; fi
  gp "set xlabel $(gpq "$xlabel")"
  for spec in "${used[@]}"; do
    i=$((i + 1)); metric=${spec%%|*}; what=${spec#*|}
    unit=$(unit_of "$wl" "$metric")
    x0=$(awk -v i="$i" -v l="$l" -v w="$pw" -v g="$gap" 'BEGIN { printf "%.4f", l + (i - 1) * (w + g) }')
    gp "set lmargin at screen $x0; set rmargin at screen $(awk -v a="$x0" -v w="$pw" 'BEGIN { printf "%.4f", a + w }'); set tmargin at screen $top; set bmargin at screen $bot"
    gp "set title $(gpq "$what") offset 0,-0.6"
    if ((i == 1)); then gp "set ylabel $(gpq "time per operation ($(unit_txt "$unit"))") offset 1,0"; else gp "unset ylabel"; fi
    cmd="plot"; sep=""; qdir "$wl" "$metric"
    for k in $(series_for "$wl" "$metric"); do
      cmd+="$sep ${QD}$k.dat' using 1:2:3:4 with yerrorlines ${S_LS[$k]} notitle"
      sep=", \\"$'\n'"    "
    done
    gp "$cmd"
  done
  gp "unset multiplot"
  fig_render "$title" "$caption"
}

# fig_bars NAME SIZE TITLE CAPTION YWHAT YSCALE "catlabel|wl|metric|n" ...
#   Grouped bars: one group per category, one bar per series (colour/pattern by peer), error bars.
#   n empty: each series' largest n. With a single category the bars are labelled by peer.
fig_bars() {
  local name=$1 size=$2 title=$3 caption=$4 ywhat=$5 ys=$6; shift 6
  local spec lab wl metric n c=0 k sids all="" srcs="" cats=() dat unit="" files=() m j=0 w off cmd sep xt="" ns
  for spec in "$@"; do
    IFS='|' read -r lab wl metric n <<<"$spec"
    sids=$(series_for "$wl" "$metric")
    [[ -z "$sids" ]] && continue
    c=$((c + 1)); cats+=("$lab"); all+=" $sids"
    case "$wl" in W6_dist_*) w=W6_dist_* ;; *) w=$wl ;; esac
    case " $srcs " in *" $w "*) ;; *) srcs+="${srcs:+ }$w" ;; esac
    [[ -z "$unit" ]] && unit=$(unit_of "$wl" "$metric")
    for k in $sids; do
      dat="$TK_TMP/gp/$name.$k.bars"
      awk -v c="$c" -v n="$n" '
        n != "" { if ($1 + 0 == n + 0) { line = $0; found = 1 } next }
        { if (!found || $1 + 0 > best) { best = $1 + 0; line = $0; found = 1 } }
        END { if (found) { split(line, f, " "); print c, f[2], f[3], f[4], f[1] } }' "$TK_TMP/d/${wl//[^A-Za-z0-9_.-]/_}/${metric//[^A-Za-z0-9_.-]/_}/$k.dat" >>"$dat"
    done
  done
  if ((c == 0)); then FIG_YTOP=""; tk_missing "$name" "no rows for $(for spec in "$@"; do IFS='|' read -r lab wl metric n <<<"$spec"; printf '%s/%s ' "$wl" "$metric"; done)"; return 0; fi
  all=$(printf '%s\n' $all | sort -nu | tr '\n' ' ')
  for k in $all; do files+=("$TK_TMP/gp/$name.$k.bars"); done
  [[ "$ys" == auto ]] && ys=$(auto_log "${files[@]}")
  m=$(wc -w <<<"$all")
  w=$(awk -v m="$m" 'BEGIN { printf "%.4f", 0.8 / m }')
  ns=$(cat "${files[@]}" | awk '{ print $5 }' | sort -gu | tr '\n' ' ')
  fig_begin "$name" "$size"
  gp_title "$title"; gp_footer "$srcs"
  gp "set ylabel $(gpq "$(ylab "$ywhat" "$unit")")"
  gp "set boxwidth $w absolute"
  gp "set xrange [0.5:$c.5]"
  gp "unset mxtics; set grid noxtics ytics"
  local bar_title=1
  if ((c == 1)); then
    # one name per bar; in a comparison one per peer, under the middle of its runs' bars, the runs
    # told apart by the fill pattern in the key (a "run: peer" name per bar left no room to draw)
    j=0; xt=$(for k in $all; do
      awk -v j="$j" -v m="$m" -v w="$w" -v p="${S_PEER[$k]}" -v l="${S_LABEL[$k]}" -v runs="$TK_NRUNS" \
        'BEGIN { printf "%s\t%.4f\n", (runs > 1 ? p : l), 1 + (j - (m - 1) / 2) * w }'; j=$((j + 1))
    done | awk -F '\t' -v sq="'" 'function q(t) { gsub(sq, sq sq, t); return sq t sq }
      function put() { out = out (out == "" ? "" : ", ") q(last) " " sprintf("%.4f", s / n) }
      NR > 1 && $1 != last { put(); s = 0; n = 0 }
      { last = $1; s += $2; n++ } END { if (NR) put(); print out }')
    # slanted names, each ending at its bar (so the last cannot run off the figure's right edge);
    # with more than six bars (the embedded variants make up to ten) steeper and a point smaller,
    # so that neighbouring names (up to 24 characters) do not run into each other and the plot
    # keeps some height
    local ang=30 per=0.2 fs=6 npeer
    npeer=$(for k in $all; do printf '%s\n' "${S_PEER[$k]}"; done | sort -u | wc -l)
    ((npeer > 6)) && { ang=40; per=0.26; fs=5; }
    gp "set xtics ($xt) rotate by $ang right scale 0 font ',$fs' noenhanced"
    if ((TK_NRUNS > 1)); then
      bar_title=0
      cmd="plot NaN notitle$(compare_key boxes runs)"; sep=", "
    else
      gp "unset key"
    fi
    # room under the axis for the slanted peer names
    local longest=0 lab_k
    for k in $all; do
      lab_k=${S_LABEL[$k]}; ((TK_NRUNS > 1)) && lab_k=${S_PEER[$k]}
      ((${#lab_k} > longest)) && longest=${#lab_k}
    done
    gp "set bmargin $(awk -v l="$longest" -v p="$per" -v f="$([[ -n "$TK_FOOT1$TK_FOOT2" ]] && echo 2.4 || echo 0.8)" 'BEGIN { printf "%.1f", f + 0.9 + l * p }')"
  else
    for ((j = 1; j <= c; j++)); do xt+="${xt:+, }$(gpq "${cats[j - 1]}") $j"; done
    gp "set xtics ($xt) scale 0 noenhanced"
    if ((TK_NRUNS > 1)); then
      # a key entry per peer (its colour) and per run (its fill pattern), not one per bar
      bar_title=0
      cmd="plot NaN notitle$(compare_key boxes all $all)"; sep=", "
    fi
    [[ -n "$TK_FOOT1$TK_FOOT2" ]] && gp "set bmargin 4.2"
  fi
  if [[ "$ys" == log ]]; then
    gp "set logscale y 10; set format y LOGFMT"
    # bars start at the bottom of a log axis: leave a decade of room under the smallest bar
    read -r lo hi < <(range_of "${files[@]}")
    gp "set yrange [$(awk -v v="$lo" 'BEGIN { e = int(log(v) / log(10) + 100) - 100; if (10 ^ e > v) e--; print 10 ^ e }'):*]"
  else
    # FIG_YTOP: the axis reaches at least this far, so that bars near zero read as near zero
    local top="*" hi
    if [[ -n "$FIG_YTOP" ]]; then
      read -r _ hi < <(range_of "${files[@]}")
      awk -v h="$hi" -v t="$FIG_YTOP" 'BEGIN { exit !(h < t) }' && top=$FIG_YTOP
    fi
    gp "set yrange [0:$top]"
  fi
  FIG_YTOP=""
  engfmt "$ys" "$unit" "${files[@]}"
  [[ "$bar_title" == 1 ]] && { cmd="plot"; sep=""; }
  j=0
  for k in $all; do
    off=$(awk -v j="$j" -v m="$m" -v w="$w" 'BEGIN { printf "%.4f", (j - (m - 1) / 2) * w }')
    dat="$TK_TMP/gp/$name.$k.bars"
    cmd+="$sep $(gpq "$dat") using (\$1+$off):2 with boxes ${S_FS[$k]} $([[ "$bar_title" == 1 ]] && echo "title ${S_QL[$k]}" || echo notitle)"
    # error bars as capped vectors (yerrorbars leave a gap for an invisible point)
    cmd+=", \\"$'\n'"    $(gpq "$dat") using (\$1+$off):3:(0):(\$4 > \$3 ? \$4-\$3 : NaN) with vectors heads size screen 0.006,90 lc rgb PC[${S_SLOT[$k]}] lw 0.8 notitle"
    sep=", \\"$'\n'"    "; j=$((j + 1))
  done
  gp "$cmd"
  [[ "$(wc -w <<<"$ns")" -eq 1 ]] && caption="$caption (n = ${ns% })"
  fig_render "$title" "$caption"
}

# Lateness percentile plot and CDF for one workload: histograms first; series without a histogram
# fall back to the late_pXX_us rows of results.csv (points at 50/90/99/99.9 %).
fig_lateness() {
  local wl=$1 lname; lname=$(printf '%s' "$wl" | tr 'A-Z' 'a-z')
  local k r p f cmdp cmdc sep="" n=0 fromcsv="" csvf v inv hsids="" ft ncsv=0 fcp="" fcc=""
  cmdp="plot"; cmdc="plot"
  for ((k = 1; k <= TK_NSERIES; k++)); do
    r=${S_RUN[$k]}; p=${S_PEER[$k]}
    f=$(awk -F '\t' -v r="$r" -v w="$wl" -v p="$p" '$1 == r && $2 == w && $3 == p { print $4; exit }' "$TK_TMP/hgrm.tsv")
    if [[ -n "$f" ]]; then
      cmdp+="$sep $(gpq "$f") using 3:1 with lines ${S_LSL[$k]} $(ktitle "$k")"
      cmdc+="$sep $(gpq "$f") using 1:(\$2*100) with steps ${S_LSL[$k]} $(ktitle "$k")"
      hsids+=" $k"
    else
      csvf="$TK_TMP/gp/$lname.$k.pct"
      for v in 50:2:p50 90:10:p90 99:100:p99 99.9:1000:p999; do
        [[ -s "$(datf "$wl" "late_${v##*:}_us" "$k")" ]] || continue
        inv=${v#*:}; inv=${inv%%:*}
        awk -v pc="${v%%:*}" -v inv="$inv" 'NR == 1 { print $2, pc / 100, inv, $3, $4 }' "$(datf "$wl" "late_${v##*:}_us" "$k")"
      done >"$csvf"
      [[ -s "$csvf" ]] || continue
      [[ "$p" == floor ]] && continue
      cmdp+="$sep $(gpq "$csvf") using 3:1:4:5 with yerrorlines ${S_LS[$k]} title $(gpq "${S_LABEL[$k]} (results.csv)")"
      cmdc+="$sep $(gpq "$csvf") using 1:(\$2*100) with linespoints ${S_LS[$k]} title $(gpq "${S_LABEL[$k]} (results.csv)")"
      fromcsv+="${fromcsv:+, }${S_LABEL[$k]}"
      ncsv=$((ncsv + 1))
    fi
    n=$((n + 1)); sep=", \\"$'\n'"    "
  done
  if ((n == 0)); then tk_missing "${lname}_percentiles, ${lname}_cdf" "no hist/$wl.*.hgrm and no $wl/late_p*_us rows"; return 0; fi
  # the floor: clock_nanosleep lateness p50 and p99 of each run, drawn at those percentiles
  for ((r = 1; r <= TK_NRUNS; r++)); do
    local a b; a=$(floor_val "$r" nanosleep_late_p50_us); b=$(floor_val "$r" nanosleep_late_p99_us)
    [[ -n "$a" && -n "$b" ]] || continue
    printf '%s 0.5 2\n%s 0.99 100\n' "$a" "$b" >"$TK_TMP/gp/floor.$r.pct"
    k=$(awk -F '\t' -v r="$r" '$2 == r && $3 == "floor" { print $1; exit }' "$TK_TMP/series.tsv")
    [[ -n "$k" ]] || continue
    # in a comparison the floor is one key entry (its runs' points differ as every series' do)
    ft="title $(gpq "${S_LABEL[$k]}: clock_nanosleep")"
    ((TK_NRUNS > 1)) && { ((r == 1)) && ft="title 'floor: clock_nanosleep'" || ft=notitle; }
    fcp+="$sep $(gpq "$TK_TMP/gp/floor.$r.pct") using 3:1 with linespoints ${S_LS[$k]} $ft"
    fcc+="$sep $(gpq "$TK_TMP/gp/floor.$r.pct") using 1:(\$2*100) with points ${S_LS[$k]} $ft"
  done
  # key order: the peers, the floor, the runs
  local ckp ckr; ckp=$(compare_key lines peers $hsids); ckr=$(compare_key lines runs)
  cmdp+="$ckp$fcp$ckr"; cmdc+="$ckp$fcc$ckr"
  local note="Lateness = callback start minus deadline."
  [[ -n "$fromcsv" ]] && note="$note No histogram for $fromcsv: its percentiles come from results.csv (mean, min-max bars)."
  # The key goes above the plot in two columns from the figure's left edge (inside, it covered
  # the curves once ten peers and the floor were listed), and the plot starts below its rows.
  # Entries: one per series and floor run; in a comparison one per peer, the floor and each run.
  local entries rows LATENESS_KEY PCT_KEY nfloor
  nfloor=$(find "$TK_TMP/gp" -name 'floor.*.pct' | wc -l)
  if ((TK_NRUNS > 1)); then
    entries=$(($(for k in $hsids; do printf '%s\n' "${S_PEER[$k]}"; done | sort -u | wc -l) + ncsv + (nfloor > 0) + TK_NRUNS))
  else
    entries=$((n + nfloor))
  fi
  rows=$(((entries + 1) / 2))
  LATENESS_KEY="set key at screen 0.01, screen 0.995 left top vertical maxrows $rows Left reverse font ',6' spacing 0.9 samplen 1.5 width -1; set tmargin at screen $(awk -v r="$rows" 'BEGIN { printf "%.3f", 1 - (r * 5.2 + 10) / (2.2 * 72) }')"
  PCT_KEY=$LATENESS_KEY
  fig_begin "${lname}_percentiles" single
  gp_title "$wl lateness by percentile"; gp_footer "$wl hist/*.hgrm"
  gp "set logscale x 10; set logscale y 10; set format y LOGFMT"
  gp "set xrange [1:*]; unset mxtics"
  # short labels, so that neighbouring decades never run into each other: 99.999 (between
  # 99.99 and 99.9999, which a million samples reach) is a tick without a label
  gp "set xtics ('50' 2, '90' 10, '99' 100, '99.9' 1000, '99.99' 10000, '' 100000, '99.9999' 1000000) font ',6'"
  gp "set xlabel 'percentile (%)'"; gp "set ylabel 'lateness (µs)'"
  gp "$PCT_KEY"
  gp "$cmdp"
  fig_render "$wl lateness by percentile" "HdrHistogram-style percentile plot: x is 1/(1-p) on a log scale. $note"
  fig_begin "${lname}_cdf" single
  gp_title "$wl lateness CDF"; gp_footer "$wl hist/*.hgrm"
  gp "set logscale x 10; set format x LOGFMT"
  gp "set yrange [0:100]; set ytics 0, 20"
  gp "set xlabel 'lateness (µs)'"; gp "set ylabel 'timers fired (%)'"
  gp "$LATENESS_KEY"
  gp "$cmdc"
  fig_render "$wl lateness CDF" "Cumulative distribution of lateness. $note"
}

# ---- the figure set ----------------------------------------------------------------------------------------
tk_all_figures() {
  TK_FIGDIR=$1
  mkdir -p -- "$TK_FIGDIR" || tk_die "cannot create '$TK_FIGDIR'"
  [[ -w "$TK_FIGDIR" ]] || tk_die "cannot write into '$TK_FIGDIR'"
  # leave no stale figure from an earlier render behind
  rm -f -- "$TK_FIGDIR"/*.pdf "$TK_FIGDIR"/*.png "$TK_FIGDIR"/*.svg
  FIG_EXTRA=(); FIG_YTOP=""
  local lv LV m what r v k xl="timers outstanding, N"
  for lv in core exec; do
    LV=W1_$lv
    for m in "schedule_ns|time per insert|insert (schedule)" "cancel_ns|time per cancel|cancel" \
      "churn_ns|time per cancel+insert pair|churn (cancel one, insert one)" "expire_ns|time per expiry|expire"; do
      IFS='|' read -r metric what opname <<<"$m"
      if [[ "$lv" == exec && "$metric" == expire_ns && -z "$(series_for W1_exec expire_ns)" ]]; then continue; fi
      if [[ "$lv" == core && "$metric" == schedule_ns ]]; then
        # the floor: the cheapest possible insert, appending to an array
        for ((r = 1; r <= TK_NRUNS; r++)); do
          v=$(floor_val "$r" array_append_ns)
          k=$(awk -F '\t' -v r="$r" '$2 == r && $3 == "floor" { print $1; exit }' "$TK_TMP/series.tsv")
          [[ -n "$v" && -n "$k" ]] && FIG_EXTRA+=("$v with lines lc rgb PC[9] dt s_dash(9,$r) lw LW title $(gpq "${S_LABEL[$k]}: array append")")
        done
      fi
      fig_lines "w1_${lv}_${metric%_ns}" "$LV" "$metric" "$LV: $opname" "$xl" "$what" log log \
        "W1 $([[ $lv == core ]] && echo 'core level (pure data structure, one thread)' || echo 'executor level (user thread into a running executor)'): $opname cost per operation against the population N; mean of the repetitions, bars min-max$([[ $TK_ERRMODE == stddev ]] && echo ' (± standard deviation)')."
    done
  done
  fig_panels w1_core_overview W1_core "W1 core: cost per operation" \
    "W1 core level, all four operations side by side (double column)." "N" \
    "schedule_ns|insert" "cancel_ns|cancel" "churn_ns|churn (cancel+insert)" "expire_ns|expiry"
  fig_panels w1_exec_overview W1_exec "W1 executor: cost per operation" \
    "W1 executor level, all operations side by side (double column)." "N" \
    "schedule_ns|insert" "cancel_ns|cancel" "churn_ns|churn (cancel+insert)" "expire_ns|expiry"
  # W2
  fig_bars w2_burst_rate single "W2 burst: firing throughput" \
    "W2 burst: all timers due at the same instant; callbacks per second from the deadline to the last callback (higher is better)" \
    "firing rate (callbacks/s)" lin "burst|W2_burst|burst_fire_rate_per_s|"
  fig_bars w2_spread_lateness single "W2 spread: lateness" \
    "W2 spread: deadlines uniform over 1 s, pre-scheduled; lateness percentiles per peer" \
    "lateness" auto "p50|W2_spread|late_p50_us|" "p99|W2_spread|late_p99_us|" "max|W2_spread|late_max_us|"
  # W3 (and any other workload with histograms)
  fig_lateness W3_latency
  local w
  for w in $(cut -f2 "$TK_TMP/hgrm.tsv" | sort -u); do [[ "$w" == W3_latency ]] || fig_lateness "$w"; done
  # W4, W5
  FIG_YTOP=1
  fig_bars w4_idle_cpu single "W4 idle: CPU while waiting" \
    "W4 idle: process CPU (user+sys) during 5 s with one timer an hour ahead (lower is better; the axis spans at least 1 ms)" \
    "CPU time" auto "idle|W4_idle|idle_cpu_ms|"
  FIG_YTOP=10
  fig_bars w4_idle_wakeups single "W4 idle: wake-ups while waiting" \
    "W4 idle: timer-thread wake-ups during the idle period (lower is better; the axis spans at least 10)" \
    "wake-ups" auto "idle|W4_idle|idle_wakeups|"
  fig_bars w5_bytes_per_timer single "W5 memory per timer" \
    "W5: resident memory growth per outstanding timer at N = 1e6, all user allocations included" \
    "memory per timer" lin "bytes|W5_memory|bytes_per_timer|"
  fig_bars w5_rss_after_cancel single "W5 memory left after cancelling all" \
    "W5: resident memory still held after every timer was cancelled" \
    "resident memory" auto "rss|W5_memory|rss_after_cancel_bytes|"
  # W6 sweeps
  fig_lines w6_cancel_ratio W6_cancel_ratio ns_per_timer "W6: cost vs cancel ratio" \
    "timers cancelled before firing (%)" "time per timer" lin auto \
    "W6 cancel ratio: end-to-end cost per timer when a share of the timers is cancelled before it fires."
  fig_lines w6_delay_range_schedule W6_delay_range schedule_ns "W6: insert cost vs delay range" \
    "delay range / wheel span" "time per insert" log auto \
    "W6 delay range: insert cost as delays grow from 0.1x to 100x one wheel revolution."
  fig_lines w6_delay_range_expire W6_delay_range expire_ns "W6: expiry cost vs delay range" \
    "delay range / wheel span" "time per expiry" log auto \
    "W6 delay range: expiry cost as delays grow past one wheel revolution (the single-level wheel's bad case)."
  local dists=() d
  for d in uniform exponential bimodal constant monotonic; do dists+=("$d|W6_dist_$d|churn_ns|"); done
  for d in $(awk -F '\t' '$3 ~ /^W6_dist_/ { print substr($3, 9) }' "$TK_TMP/agg.tsv" | sort -u); do
    case " uniform exponential bimodal constant monotonic " in *" $d "*) ;; *) dists+=("$d|W6_dist_$d|churn_ns|") ;; esac
  done
  fig_bars w6_dist_churn double "W6: hold-model churn by increment distribution" \
    "W6 increment distributions: churn cost (cancel one, insert one) per distribution, at the largest population measured" \
    "time per churn pair" auto "${dists[@]}"
  fig_lines w7_contention W7_contention ops_per_s "W7: throughput vs producer threads" \
    "producer threads" "total throughput (ops/s)" lin lin \
    "W7: producers scheduling and cancelling into one executor; total operations per second (higher is better)."
  return 0
}

# ---- report helpers -----------------------------------------------------------------------------------------------
tbl() { awk -f "$TK_LIB/tables.awk" "$@" "$TK_TMP/series.tsv" "$TK_TMP/agg.tsv"; }
# md_figure NAME: the embedded PNG with its caption, path relative to the report
md_figures() { # md_figures RELDIR PATTERN...: every rendered figure whose name matches one pattern
  local rel=$1 name size title caption pat; shift
  while IFS="$TAB" read -r name size title caption; do
    for pat in "$@"; do
      # shellcheck disable=SC2053
      if [[ "$name" == $pat ]]; then
        printf '![%s](%s/%s.png)\n\n*%s* ([PDF](%s/%s.pdf), [SVG](%s/%s.svg))\n\n' "$title" "$rel" "$name" "$caption" "$rel" "$name" "$rel" "$name"
        break
      fi
    done
  done <"$TK_TMP/figs.tsv"
}
md_section() { # md_section HEADING TABLE...: print heading only if some table is non-empty
  local h=$1 body; shift
  body=$(cat)
  [[ -n "$body" ]] && printf '%s\n\n%s\n\n' "$h" "$body"
  return 0
}
