#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest driver for plots/render.py: render (or compare) a copy of the fixture and check every
# output file. The statistics, tables, errors and data files are unit-tested in test_render.py.
# Usage: check_figures.sh render  PLOTS_DIR FIXTURE_DIR WORK_DIR
#        check_figures.sh compare PLOTS_DIR FIXTURE_DIR WORK_DIR
# Exit 0 pass, 1 fail, 77 skip (gnuplot not installed).
set -euo pipefail
mode=${1:?mode}; plots=${2:?plots dir}; fixture=${3:?fixture dir}; work=${4:?work dir}

if ! command -v gnuplot >/dev/null 2>&1; then
  echo "SKIP: gnuplot not installed (apt-get install gnuplot-nox)"
  exit 77
fi

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# The figures every complete fixture must give (each as .pdf, .png and .svg)
FIGS="w1_core_schedule w1_core_cancel w1_core_churn w1_core_expire w1_exec_schedule w1_exec_cancel
w1_exec_churn w1_core_overview w1_exec_overview w2_burst_rate w2_spread_lateness w3_latency_percentiles
w3_latency_cdf w4_idle_cpu w4_idle_wakeups w5_bytes_per_timer w5_rss_after_cancel w6_cancel_ratio
w6_delay_range_schedule w6_delay_range_expire w6_dist_churn w7_contention frontier_tcp frontier_cpu_tcp"

check_pdf() {
  local f=$1 head tail
  head=$(head -c 5 "$f")
  [[ "$head" == "%PDF-" ]] || { fail "$f does not start with %PDF-"; return; }
  # the trailer: %%EOF within the last bytes (optionally followed by a newline)
  tail=$(tail -c 32 "$f" | tr -d '\r\n')
  [[ "$tail" == *"%%EOF" ]] || { fail "$f does not end with %%EOF"; return; }
}
check_png() {
  local f=$1 sig size
  sig=$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')
  [[ "$sig" == "89504e470d0a1a0a" ]] || { fail "$f lacks the PNG signature ($sig)"; return; }
  size=$(wc -c <"$f")
  ((size > 5000)) || fail "$f is only $size bytes"
  # IHDR width and height (big endian at offsets 16 and 20) must be those of a real figure
  local w h
  w=$(od -An -tu1 -j16 -N4 "$f" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
  h=$(od -An -tu1 -j20 -N4 "$f" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
  ((w >= 300 && h >= 200)) || fail "$f is ${w}x${h} px"
}
check_svg() {
  local f=$1
  if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$f" 2>/dev/null || { fail "$f is not well-formed XML"; return; }
    [[ "$(xmllint --xpath 'local-name(/*)' "$f" 2>/dev/null)" == svg ]] || { fail "$f: root element is not <svg>"; return; }
  else
    grep -q '<svg' "$f" || { fail "$f has no <svg> element"; return; }
    grep -q '</svg>' "$f" || { fail "$f has no </svg>"; return; }
  fi
  grep -q '<path\|<polyline\|<line' "$f" || fail "$f draws nothing"
}
# Which path drew the SVGs: poppler's pdftocairo from the PDF when it is installed and not
# switched off, else gnuplot's svg terminal (plots/tkplot/figures.py).
check_svg_source() { # check_svg_source FIGDIR
  local f=$1/w1_core_schedule.svg want=pdftocairo
  [[ -n "${TK_PLOTS_NO_PDFTOCAIRO:-}" ]] || ! command -v pdftocairo >/dev/null 2>&1 && want=gnuplot
  if grep -q 'Produced by GNUPLOT' "$f"; then
    [[ $want == gnuplot ]] || { fail "$f was drawn by gnuplot's svg terminal, not made from the PDF"; return; }
  else
    [[ $want == pdftocairo ]] || { fail "$f was not drawn by gnuplot's svg terminal"; return; }
  fi
  ok "SVGs made by $want"
}
check_figs() { # check_figs FIGDIR
  local d=$1 n
  check_svg_source "$d"
  for n in $FIGS; do
    for ext in pdf png svg; do
      [[ -s "$d/$n.$ext" ]] || { fail "missing $d/$n.$ext"; continue; }
      case $ext in pdf) check_pdf "$d/$n.$ext" ;; png) check_png "$d/$n.$ext" ;; svg) check_svg "$d/$n.$ext" ;; esac
    done
  done
  ok "checked $(wc -w <<<"$FIGS") figures x 3 formats in $d"
}
check_md_images() { # every image link in the markdown file resolves
  local md=$1 dir rel cnt=0
  dir=$(dirname "$md")
  while IFS= read -r rel; do
    cnt=$((cnt + 1))
    [[ -s "$dir/$rel" ]] || fail "$md links a missing image $rel"
  done < <(grep -o '!\[[^]]*\]([^)]*)' "$md" | sed 's/.*](\(.*\))/\1/')
  ((cnt >= 20)) || fail "$md embeds only $cnt images"
  ok "$md embeds $cnt images, all present"
}
need() { # need FILE TEXT WHAT
  grep -qF -- "$2" "$1" || fail "$1 lacks $3 ($2)"
}

rm -rf -- "$work"
mkdir -p -- "$work"

case $mode in
render)
  run="$work/run with space"
  cp -R -- "$fixture" "$run"
  rm -rf -- "$run/figures" "$run/report.md"
  rc=0; "$plots/render.py" render "$run" 2>"$work/stderr.txt" || rc=$?
  ((rc == 0)) || fail "render.py render exited $rc"
  cat "$work/stderr.txt"
  check_figs "$run/figures"
  # the field (drawn by render only, from the manifest's headline workloads)
  check_pdf "$run/figures/field.pdf"; check_png "$run/figures/field.png"; check_svg "$run/figures/field.svg"
  md="$run/report.md"
  [[ -s "$md" ]] || { fail "no report.md"; exit 1; }
  need "$md" "## The field" "the field's section"
  need "$md" "| heap | **heap** | 309.2 | 389.9 | 768.3 | 8.94M |" "the field's heap row"
  need "$md" "](figures/field.png)" "the embedded field figure"
  need "$md" "| insert (ns) at N = | 1e3 | 1e4 | 1e5 | 1e6 |" "the W1 insert table"
  need "$md" "| cancel (ns) at N =" "the W1 cancel table"
  need "$md" "| p99 lateness (µs) |" "the W3 table"
  need "$md" "| bytes per timer (bytes) |" "the W5 table"
  need "$md" "| throughput (1/s) at threads = |" "the W7 table"
  need "$md" "| commit | 3f9c2ab |" "the metadata table"
  need "$md" "](figures/w1_core_schedule.png)" "the embedded W1 figure"
  # the value traced in plots/README.md: heap W1_core schedule_ns at N=1e5, rows 107.9, 105.3, 108.7
  need "$md" "| heap | 31.2 [31.0, 31.8] | 53.1 [52.5, 54.6] | 107.9 [105.3, 108.7] | 194.5 [191.6, 195.2] |" \
    "the heap insert row (medians with their intervals)"
  check_md_images "$md"
  # a folder with little in it: a figure set with gaps, reported on stderr, exit status 0
  part="$work/partial"
  mkdir -p "$part"
  cp "$fixture/manifest.json" "$part/"
  head -1 "$fixture/results.csv" >"$part/results.csv"
  grep '^heap,W1_core,' "$fixture/results.csv" >>"$part/results.csv"
  if "$plots/render.py" render "$part" 2>"$work/partial.stderr"; then
    grep -q 'skipped w7_contention' "$work/partial.stderr" || fail "render.py did not say which figure it skipped"
    [[ -s "$part/figures/w1_core_schedule.png" ]] || fail "partial folder: w1_core_schedule.png missing"
    [[ ! -e "$part/figures/w7_contention.png" ]] || fail "partial folder: w7_contention.png drawn from nothing"
    need "$part/report.md" "## Not drawn" "the list of missing figures"
    ok "partial folder: rendered what exists, reported the rest"
  else
    cat "$work/partial.stderr"; fail "render.py failed on a partial folder"
  fi
  # idempotent: a second render of the same folder gives the same report
  cp "$md" "$work/report.first"
  "$plots/render.py" render "$run" 2>/dev/null || fail "second render failed"
  cmp -s "$md" "$work/report.first" || fail "second render changed report.md"
  # bad input exits 2
  rc=0; "$plots/render.py" render "$work/does not exist" 2>/dev/null || rc=$?
  ((rc == 2)) || fail "render.py exited $rc on a missing folder, not 2"
  ;;
compare)
  a="$work/run A"; b="$work/run B"
  cp -R -- "$fixture" "$a"; cp -R -- "$fixture" "$b"
  rm -rf -- "$a/figures" "$a/report.md" "$b/figures" "$b/report.md"
  sed -i 's/^label:.*/label: before/' "$a/metadata.txt"
  sed -i 's/^label:.*/label: after/; s/^commit:.*/commit: 4a0d1e7/' "$b/metadata.txt"
  # both runs get 5 repetitions (4 and 5: 0.2 % off the first two), as compare's interval
  # needs; run B: every value of the 1 ms wheel 20 % lower (its peer id, a spec, holds commas: csv module)
  python3 -c '
import csv, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
rows += [r[:4] + [repr(float(r[4]) * (1.002 if r[6] == "0" else 0.998))] + r[5:6] +
         ["3" if r[6] == "0" else "4"] for r in rows[1:] if r[6] in ("0", "1")]
for out, wheel in ((sys.argv[2], 1.0), (sys.argv[3], 0.8)):
    with open(out, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(
            [rows[0]] + [r[:4] + [repr(float(r[4]) * wheel) if r[0] == "wheel:tick=1ms,slots=1024" else r[4]]
                         + r[5:] for r in rows[1:]])
' "$fixture/results.csv" "$a/results.csv" "$b/results.csv"
  out="$work/compare out"
  rc=0; "$plots/render.py" compare "$out" "$a" "$b" >"$work/stdout.txt" 2>"$work/stderr.txt" || rc=$?
  ((rc == 0)) || fail "render.py compare exited $rc"
  cat "$work/stderr.txt" "$work/stdout.txt"
  check_figs "$out/figures"
  md="$out/compare.md"
  [[ -s "$md" ]] || { fail "no compare.md"; exit 1; }
  need "$md" "| workload | n | metric | peer | before | after | after/before | p | change |" "the ratio table header"
  need "$md" "| W1_core | 1e5 | schedule_ns (ns) | wheel-1ms-1024 | 25.3 [25.1, 25.7] | 20.3 [20.1, 20.6] | 0.800 [0.789, 0.811] | 0.00794 | better |" "the wheel ratio row"
  need "$md" "| W1_core | 1e5 | schedule_ns (ns) | heap | 107.9 [105.1, 108.7] | 107.9 [105.1, 108.7] | 1.000 [0.972, 1.029] | 1 |  |" "the heap ratio row"
  need "$md" "| commit | 3f9c2ab | 4a0d1e7 |" "the metadata side by side"
  # every wheel row with a ratio is marked significant, no other row is
  awk -F ' [|] ' '$4 == "wheel-1ms-1024" && $7 != "–" && $9 !~ /^(better|worse|differs) [|]$/ { bad++; print "unmarked: " $0 }
                  $4 != "wheel-1ms-1024" && $9 ~ /^(better|worse|differs)/ { bad++; print "marked: " $0 }
                  END { exit bad > 0 }' "$md" || fail "compare.md marks the wrong rows"
  grep -q "^compare: 275 comparisons with before: 68 significant, 0 with too few repetitions" "$work/stdout.txt" ||
    fail "compare's stdout summary"
  check_md_images "$md"
  # the key names each peer once and each run once (the runs by their labels); this test's
  # SVGs come from gnuplot's svg terminal (ENVIRONMENT in CMakeLists.txt), which keeps text as text
  svg="$out/figures/w1_core_schedule.svg"
  for t in heap wheel-1ms-1024 before after; do
    [[ $(grep -c "<text>$t</text>" "$svg") == 1 ]] || fail "w1_core_schedule.svg: the key should name '$t' once"
  done
  ! grep -q 'before: heap' "$svg" || fail "w1_core_schedule.svg names a series 'run: peer' in a comparison"
  rc=0; "$plots/render.py" compare "$out" "$a" 2>/dev/null || rc=$?
  ((rc == 2)) || fail "render.py compare exited $rc on a single run, not 2"
  ;;
*)
  echo "unknown mode $mode"; exit 1 ;;
esac

if ((fails > 0)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
