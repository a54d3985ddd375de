# SPDX-License-Identifier: MIT
"""A timer trace's two figures, from the data `tkbench trace stats` (and a replay, into a results
folder's traces/<name>/) writes beside them (columns: docs/traces.md):

  population.dat  t_s armed_at_end armed_max   -> population.pdf, .png: armed timers over time
  delays.dat      delay_ns share               -> delay-cdf.pdf, .png: the CDF of the delays

The script, trace.gp, is written into the same folder, in the renderer's style (plots/style.gp),
so `gnuplot -e "FMT='png'" trace.gp` there redraws them.
"""

import os
import subprocess

from . import figures, load

FIGURES = ("population", "delay-cdf")
DATA = ("population.dat", "delays.dat")

SCRIPT = """\
# Armed timers over time and the CDF of start-to-deadline delays, written by plots/render.py
# with population.dat and delays.dat beside it (columns: docs/traces.md).
# Redraw: gnuplot -e "FMT='png'" trace.gp (STYLE names plots/style.gp).
if (!exists("FMT")) FMT = "pdf"
if (!exists("STYLE")) STYLE = {style}
if (!exists("TITLE")) TITLE = {title}
load STYLE
eval value("TERM_".FMT."_single")
set output 'population.'.FMT
set title TITLE
set xlabel 'time from the trace start (s)'
set ylabel 'armed timers'
set yrange [0:*]
plot 'population.dat' using 1:3 with steps lw LW lc rgb PC[2] title 'max in interval', \\
     '' using 1:2 with steps lw LW lc rgb PC[1] dt PD[1] title 'at interval end'
unset output
set output 'delay-cdf.'.FMT
set logscale x
set format x LOGFMT
set xlabel 'deadline - start time (ns)'
set ylabel 'share of starts'
set yrange [0:1]
plot 'delays.dat' using ($1 > 1 ? $1 : 1):2 with steps lw LW lc rgb PC[1] title 'all starts'
unset output
"""


def has_data(folder):
    """Does folder hold a trace's data (both .dat files)?"""
    return all(os.path.isfile(os.path.join(folder, d)) for d in DATA)


def draw(folder, title):
    """Writes folder/trace.gp and draws the two figures as PDF and PNG. Returns "" when done, else
    what went wrong (gnuplot's messages)."""
    if not has_data(folder):
        raise load.BadInput(f"{folder} has no trace data ({' and '.join(DATA)})")
    with open(os.path.join(folder, "trace.gp"), "w", encoding="utf-8") as f:
        f.write(SCRIPT.format(style=figures.gpq(figures.STYLE), title=figures.gpq(title)))
    env = dict(os.environ, LC_ALL="C.UTF-8")
    for fmt in ("pdf", "png"):
        p = subprocess.run(["gnuplot", "-e", f"FMT='{fmt}'", "trace.gp"], cwd=folder,
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            return p.stdout + p.stderr
    missing = [f"{n}.{x}" for n in FIGURES for x in ("pdf", "png")
               if not os.path.isfile(os.path.join(folder, f"{n}.{x}"))]
    return f"gnuplot wrote no {', '.join(missing)}" if missing else ""


def draw_run(folder):
    """The figures of every replayed trace of a results folder (traces/<name>/, titled by the
    name). Returns the names whose figures could not be drawn, each with why."""
    root = os.path.join(folder, "traces")
    failed = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        sub = os.path.join(root, name)
        if has_data(sub):
            why = draw(sub, name)
            if why:
                failed.append((name, why))
    return failed
