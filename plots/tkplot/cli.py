# SPDX-License-Identifier: MIT
"""The command line: `render DIR`, `compare OUT DIR_A DIR_B [DIR...]` and `trace DIR`."""

import argparse
import os
import shutil
import sys
import time

from . import field, figures, load, report, stats, targets, traces

EXIT_OK, EXIT_BAD_INPUT, EXIT_NO_GNUPLOT, EXIT_DRAWING = 0, 2, 3, 4

DESCRIPTION = """\
Turn timerkit results folders (docs/results-format.md) into figures and a report.

  render DIR                       DIR/figures/*.{pdf,png,svg}, their gnuplot scripts and data in
                                   DIR/figures/src/, and DIR/report.md (tkbench plot DIR), with
                                   the field: every peer's headline values by timer design
  compare OUT DIR_A DIR_B [DIR...] every run in one set of figures, OUT/figures/*, and
                                   OUT/compare.md: each run's medians, their ratios to the first
                                   run with confidence intervals and Mann-Whitney p, and which
                                   differences are significant (tkbench compare)
  trace DIR [--title TEXT]         a timer trace's figures from its data in DIR (population.dat,
                                   delays.dat): DIR/population.{pdf,png}, DIR/delay-cdf.{pdf,png}
                                   and their script DIR/trace.gp (tkbench trace stats); render
                                   draws those of every traces/<name>/ of a results folder

Everything about workloads, metrics, units, peers and figures comes from each folder's
manifest.json (but the field's list of headline metrics, and the designs of peers in manifests
that lack them). Values are medians of the repetitions with 95 % bootstrap confidence intervals.

environment:
  TK_PLOTS_BARE=1           no footers (camera-ready figures: the caption goes in the paper)
  TK_PLOTS_TITLES=1         a title inside each figure
  TK_PLOTS_NO_PDFTOCAIRO=1  draw PNG and SVG with gnuplot's own terminals, not from the PDF

exit status: 0 done; 2 bad input (usage, not a results folder, malformed or inconsistent
results.csv or manifest.json); 3 gnuplot missing; 4 drawing some figure failed (the others
are still drawn)."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"render.py: error: {message}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def parse(argv):
    p = Parser(prog="render.py", description=DESCRIPTION,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    r = sub.add_parser("render", help="render one results folder",
                       description="Render DIR: DIR/figures/ and DIR/report.md.")
    r.add_argument("dir", metavar="DIR")
    c = sub.add_parser("compare", help="compare two or more results folders",
                       description="Compare runs: OUT/figures/ and OUT/compare.md.")
    c.add_argument("out", metavar="OUT")
    c.add_argument("dirs", metavar="DIR", nargs="+")
    t = sub.add_parser("trace", help="draw a timer trace's figures",
                       description="Draw DIR/population.* and DIR/delay-cdf.* from DIR's data.")
    t.add_argument("dir", metavar="DIR")
    t.add_argument("--title", default=None, help="the figures' title (default: DIR's name)")
    a = p.parse_args(argv)
    if a.command is None:
        p.error("a command is needed: render DIR, compare OUT DIR_A DIR_B [DIR...], or trace DIR")
    if a.command == "compare" and len(a.dirs) < 2:
        p.error("compare needs two results folders or more: compare OUT DIR_A DIR_B [DIR...]")
    return a


def need_gnuplot():
    if shutil.which("gnuplot") is None:
        print("render.py: error: gnuplot not found (Debian: apt-get install gnuplot-nox)",
              file=sys.stderr)
        sys.exit(EXIT_NO_GNUPLOT)


def writable_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise load.BadInput(f"cannot create {path}: {e}")
    if not os.access(path, os.W_OK):
        raise load.BadInput(f"cannot write into {path}")


def write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def cmd_render(a):
    t0 = time.monotonic()
    run = load.read_run(a.dir)
    need_gnuplot()
    figdir = os.path.join(a.dir, "figures")
    writable_dir(a.dir)
    writable_dir(figdir)
    figs = figures.Figures([run], figdir)
    figs.prepare(run.man.figures)
    field.prepare(figs, run)
    ok = figs.draw()
    for name, why in traces.draw_run(a.dir):
        print(f"render.py: drawing the figures of trace {name} failed:", file=sys.stderr)
        for line in why.splitlines():
            print(f"    {line}", file=sys.stderr)
        ok = False
    path = os.path.join(a.dir, "report.md")
    write_text(path, report.render_report(run, figs))
    text = targets.targets_text(run)
    if text:
        print(text)
    n = sum(1 for j in figs.jobs if j.ok)
    load.warn(f"wrote {n} figures (x3 formats) to {figdir} and {path} in "
              f"{time.monotonic() - t0:.0f} s")
    return EXIT_OK if ok else EXIT_DRAWING


def cmd_compare(a):
    t0 = time.monotonic()
    runs = [load.read_run(d) for d in a.dirs]
    load.unique_labels(runs)
    need_gnuplot()
    figdir = os.path.join(a.out, "figures")
    writable_dir(a.out)
    writable_dir(figdir)
    figs = figures.Figures(runs, figdir)
    figs.prepare(report.base_figures(runs))
    ok = figs.draw()
    summary = []
    text, (total, sig, untestable) = report.render_compare(runs, figs, summary)
    path = os.path.join(a.out, "compare.md")
    write_text(path, text)
    first = runs[0].label
    for line in summary:
        print(line)
    hint = f" (rerun with --reps {stats.CI_MIN_REPS})" if untestable else ""
    print(f"compare: {total} comparisons with {first}: {sig} significant, {untestable} with too "
          f"few repetitions for a 5 % test{hint}; the table is in {path}")
    n = sum(1 for j in figs.jobs if j.ok)
    load.warn(f"wrote {n} figures (x3 formats) to {figdir} and {path} in "
              f"{time.monotonic() - t0:.0f} s")
    return EXIT_OK if ok else EXIT_DRAWING


def cmd_trace(a):
    need_gnuplot()
    why = traces.draw(a.dir, a.title or os.path.basename(os.path.normpath(a.dir)))
    if why:
        print(f"render.py: drawing the figures in {a.dir} failed:", file=sys.stderr)
        for line in why.splitlines():
            print(f"    {line}", file=sys.stderr)
        return EXIT_DRAWING
    return EXIT_OK


def main(argv):
    a = parse(argv)
    commands = {"render": cmd_render, "compare": cmd_compare, "trace": cmd_trace}
    try:
        return commands[a.command](a)
    except load.BadInput as e:
        print(f"render.py: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
