#!/bin/sh
# SPDX-License-Identifier: MIT
# Records the kernel's timer activity during one scenario with perf, and
# keeps it as xz-compressed `perf script` text (see bench/traces/README.md).
#
#   bench/traces/record.sh [--all] [--keep-data] SCENARIO SECONDS OUTPUT
#
#   SCENARIO  tcp    bench/traces/tcp-load.py for SECONDS (loopback TCP load)
#             build  clean Release builds of this repository (library, tests,
#                    benchmarks, examples; a fresh clone, cmake, -j2), one
#                    after the other, stopped after SECONDS
#             idle   `sleep SECONDS`: whatever the machine does anyway
#   SECONDS   length of the recording (a positive integer)
#   OUTPUT    where the text goes, compressed with xz (e.g. tcp.perf.txt.xz);
#             a description of the recording is written beside it, with
#             .meta.txt in place of .perf.txt.xz (or added to OUTPUT)
#   --all       record every timer:* tracepoint, not only the start, cancel
#               and expire_entry events of wheel timers and hrtimers
#   --keep-data keep perf's binary perf.data beside OUTPUT (.perf.data)
#
# Environment: PERF (the perf binary, default perf), JOBS (build: parallel
# jobs, default 2), TIMERKIT_REPO (build: what to clone, default the
# repository this script is in).
#
# Needs root (system-wide tracepoints). Mounts tracefs on /sys/kernel/tracing
# if it is not there. perf stamps the events with CLOCK_MONOTONIC (-k), the
# clock of the hrtimers' expires= and now= fields.
set -eu

EVENTS=timer:timer_start,timer:timer_cancel,timer:timer_expire_entry,timer:hrtimer_start,timer:hrtimer_cancel,timer:hrtimer_expire_entry
PERF=${PERF:-perf}
JOBS=${JOBS:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
KEEP_DATA=0

usage() {
    sed -n '4,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --all) EVENTS='timer:*'; shift ;;
    --keep-data) KEEP_DATA=1; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) echo "record.sh: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -eq 3 ] || usage
SCENARIO=$1
SECONDS_=$2
OUTPUT=$3
case $SCENARIO in tcp | build | idle) ;; *) echo "record.sh: unknown scenario '$SCENARIO' (tcp, build or idle)" >&2; exit 2 ;; esac
case $SECONDS_ in '' | *[!0-9]* | 0) echo "record.sh: SECONDS must be a positive integer, not '$SECONDS_'" >&2; exit 2 ;; esac
case $OUTPUT in *.perf.txt.xz) META=${OUTPUT%.perf.txt.xz}.meta.txt ;; *) META=$OUTPUT.meta.txt ;; esac
[ -d "$(dirname "$OUTPUT")" ] || { echo "record.sh: no directory for $OUTPUT" >&2; exit 2; }

if [ "$(id -u)" -ne 0 ]; then
    echo "record.sh: needs root (perf record -a on tracepoints)" >&2
    exit 1
fi
command -v "$PERF" >/dev/null || { echo "record.sh: no '$PERF' (apt-get install linux-perf)" >&2; exit 1; }
command -v xz >/dev/null || { echo "record.sh: no xz (apt-get install xz-utils)" >&2; exit 1; }
if [ ! -d /sys/kernel/tracing/events/timer ]; then
    echo "record.sh: mounting tracefs on /sys/kernel/tracing"
    mount -t tracefs nodev /sys/kernel/tracing
fi
[ -d /sys/kernel/tracing/events/timer ] || { echo "record.sh: no timer tracepoints in /sys/kernel/tracing/events" >&2; exit 1; }

TMP=$(mktemp -d /tmp/tk-record.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# ---- the scenario's workload: prepared here, run under perf below ----------
case $SCENARIO in
tcp)
    set -- python3 "$HERE/tcp-load.py" --duration "$SECONDS_"
    ;;
idle)
    set -- sleep "$SECONDS_"
    ;;
build)
    REPO=${TIMERKIT_REPO:-$(git -C "$HERE" rev-parse --show-toplevel)}
    echo "record.sh: cloning $REPO and configuring a Release build"
    git clone --quiet "$REPO" "$TMP/src"
    cmake -S "$TMP/src" -B "$TMP/build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
        -DTIMERKIT_BUILD_TESTS=ON >"$TMP/configure.log" 2>&1 ||
        { cat "$TMP/configure.log" >&2; exit 1; }
    # one clean build after the other until timeout stops it; make -k so that
    # one failing target does not end the load early
    cat >"$TMP/build-loop.sh" <<EOF
n=0
while :; do
    cmake --build "$TMP/build" --target clean >/dev/null 2>&1
    n=\$((n + 1)); echo "build \$n starts at \$(date -u +%T)"
    cmake --build "$TMP/build" -j $JOBS -- -k >>"$TMP/build.log" 2>&1 || echo "build \$n had errors (see the compiler's messages)"
    echo "build \$n ends at \$(date -u +%T)"
done
EOF
    set -- timeout "$SECONDS_" sh "$TMP/build-loop.sh"
    ;;
esac

START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "record.sh: $SCENARIO for ${SECONDS_} s, events $EVENTS"
# perf's exit status is the workload's (timeout ends the build with 124)
"$PERF" record -k CLOCK_MONOTONIC -e "$EVENTS" -a -o "$TMP/perf.data" -- "$@" \
    >"$TMP/workload.log" 2>"$TMP/perf-record.log" || true
cat "$TMP/workload.log"
[ -s "$TMP/perf.data" ] || { cat "$TMP/perf-record.log" >&2; echo "record.sh: perf wrote nothing" >&2; exit 1; }

"$PERF" script -i "$TMP/perf.data" --ns -F trace:comm,tid,cpu,time,event,trace \
    >"$TMP/perf.txt" 2>"$TMP/perf-script.log"
xz -T1 -6 -c "$TMP/perf.txt" >"$OUTPUT"
if [ "$KEEP_DATA" -eq 1 ]; then
    cp "$TMP/perf.data" "${OUTPUT%.txt.xz}.data"
fi

EVENTS_N=$(wc -l <"$TMP/perf.txt")
TEXT_BYTES=$(wc -c <"$TMP/perf.txt")
XZ_BYTES=$(wc -c <"$OUTPUT")
HZ=$( (zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null) | sed -n 's/^CONFIG_HZ=//p')
{
    echo "scenario:     $SCENARIO, $SECONDS_ s"
    echo "recorded:     $START"
    echo "kernel:       $(uname -r) ($(uname -m)), HZ=${HZ:-unknown}"
    echo "cpus:         $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "perf:         $("$PERF" --version)"
    echo "record:       perf record -k CLOCK_MONOTONIC -e $EVENTS -a -o perf.data -- $*"
    echo "script:       perf script -i perf.data --ns -F trace:comm,tid,cpu,time,event,trace | xz -T1 -6"
    echo "events:       $EVENTS_N"
    echo "text bytes:   $TEXT_BYTES"
    echo "xz bytes:     $XZ_BYTES"
    echo "per event:"
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^timer:/) { sub(/:$/, "", $i); n[$i]++; break } }
         END { for (e in n) printf "  %9d  %s\n", n[e], e }' "$TMP/perf.txt" | sort -rn
    echo "perf record says:"
    sed 's/^/  /' "$TMP/perf-record.log"
    if [ -s "$TMP/perf-script.log" ]; then
        echo "perf script says:"
        sed 's/^/  /' "$TMP/perf-script.log"
    fi
    echo "workload says:"
    sed 's/^/  /' "$TMP/workload.log"
    if [ -s "$TMP/build.log" ]; then
        echo "compiler errors (distinct):"
        grep 'error:' "$TMP/build.log" | sort -u | sed 's/^/  /'
    fi
} >"$META"

echo "record.sh: $EVENTS_N events; text $TEXT_BYTES bytes, xz $XZ_BYTES bytes -> $OUTPUT"
echo "record.sh: description -> $META"
if grep -qi lost "$TMP/perf-record.log" "$TMP/perf-script.log"; then
    echo "record.sh: WARNING: perf lost events (see $META)" >&2
fi
