# SPDX-License-Identifier: MIT
"""Figures: one gnuplot script per manifest figure, drawn as PDF, PNG and SVG.

For every entry of the manifest's `figures` the kind (lines, panels, bars, percentiles, cdf,
frontier) picks
a function below that writes DIR/figures/src/<figure>.gp and its data, DIR/figures/src/<figure>.*.dat
(plain whitespace columns, described in plots/README.md). gnuplot runs each script in figures/src/,
which loads plots/style.gp and writes ../<figure>.pdf; poppler's pdftocairo then makes the PNG and
SVG from the PDF, so the three formats are one layout (without pdftocairo, or with
TK_PLOTS_NO_PDFTOCAIRO=1, gnuplot's own pngcairo and svg terminals draw them).

A series is one (run, peer): a peer keeps its style slot (colour, dash, point, fill) everywhere;
in a comparison the run is told by dash type, open/filled points and bar pattern, and the key
names each peer once and each run once.
"""

import math
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from . import frontier as frontier_lines
from . import load

PLOTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STYLE = os.path.join(PLOTS, "style.gp")
SIZES = {"single": (3.3, 2.2), "double": (7.0, 2.5)}  # inches; as plots/style.gp
FOOT_PT = 4.5  # footer font size; as FOOTFONT in plots/style.gp


def gpq(s):
    """A gnuplot single-quoted string literal ('' escapes a quote; nothing else is special)."""
    return "'" + str(s).replace("'", "''") + "'"


def num(v):
    """A number as the .dat files and scripts write it."""
    return "%.10g" % v


def fmt_n(n):
    """An n for people: powers of ten from 1000 as 1e3, whole numbers without a point."""
    if n >= 1000 and n == int(n) and re.fullmatch(r"10*", str(int(n))):
        return "1e%d" % (len(str(int(n))) - 1)
    return num(n)


def png_dpi():
    with open(STYLE, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*PNG_DPI\s*=\s*([0-9.]+)", line)
            if m:
                return int(float(m.group(1)))
    raise load.BadInput(f"{STYLE} has no PNG_DPI")


# ---- footer text widths ---------------------------------------------------------------------------
# Advance widths of DejaVu Sans (what fontconfig gives for gnuplot's "Helvetica" on Debian), in
# 1/2048 em: enough to wrap the footer at word boundaries without measuring the rendered text.
_ADV = {" ": 651, "!": 821, '"': 942, "#": 1716, "$": 1303, "%": 1946, "&": 1597, "'": 563,
        "(": 799, ")": 799, "*": 1024, "+": 1716, ",": 651, "-": 739, ".": 651, "/": 690,
        ":": 690, ";": 690, "<": 1716, "=": 1716, ">": 1716, "?": 1087, "@": 2048, "[": 799,
        "\\": 690, "]": 799, "^": 1716, "_": 1024, "`": 1024, "{": 1303, "|": 690, "}": 1303,
        "~": 1716, "A": 1401, "B": 1405, "C": 1430, "D": 1577, "E": 1294, "F": 1178, "G": 1587,
        "H": 1540, "I": 604, "J": 604, "K": 1343, "L": 1141, "M": 1767, "N": 1532, "O": 1612,
        "P": 1235, "Q": 1612, "R": 1423, "S": 1300, "T": 1251, "U": 1499, "V": 1401, "W": 2025,
        "X": 1403, "Y": 1251, "Z": 1403, "a": 1255, "b": 1300, "c": 1126, "d": 1300, "e": 1260,
        "f": 721, "g": 1300, "h": 1298, "i": 569, "j": 569, "k": 1186, "l": 569, "m": 1995,
        "n": 1298, "o": 1253, "p": 1300, "q": 1300, "r": 842, "s": 1067, "t": 803, "u": 1298,
        "v": 1212, "w": 1675, "x": 1212, "y": 1212, "z": 1075}


def text_pt(s, size=FOOT_PT):
    """Estimated width of s in points at font size `size`."""
    return sum(_ADV.get(c, 1303 if c.isdigit() else 1400) for c in s) / 2048 * size


KEY_PT = 6  # key font size; as KEYFONT in plots/style.gp
KEY_ROW_PT = 6.3  # height of one key row at KEY_PT, spacing 0.9, as rendered
KEY_ROWS_IN_SIZE = 2  # key rows a lateness figure holds at its size's height; more grow it


def key_rows(labels, width_pt, sample_pt=30):
    """Rows a horizontal key of these labels takes in width_pt: gnuplot gives every column the
    width of the longest entry (its sample and gaps, about sample_pt, and its text)."""
    if not labels:
        return 0
    col = max(text_pt(s, KEY_PT) for s in labels) + sample_pt
    cols = max(1, int(width_pt // col))
    return -(-len(labels) // cols)


def _join(items):
    out = ""
    for i, (sep, text) in enumerate(items):
        out += (sep if i else "") + text
    return out


def wrap_footer(first, second, width_pt):
    """Two footer lines from two lists of (separator, item): each line ends at an item boundary
    (trailing items that do not fit are dropped whole) or, when the first list alone is wider
    than a line, the items flow over both lines at word boundaries. Never cuts a word."""
    def fit(items):
        kept = []
        for it in items:
            if text_pt(_join(kept + [it])) > width_pt:
                break
            kept.append(it)
        return _join(kept)

    if text_pt(_join(first)) <= width_pt:
        return _join(first), fit(second)
    # too long for one line: break between items if that fills most of the first line
    items = first + second
    for i in range(len(items), 0, -1):
        if text_pt(_join(items[:i])) <= width_pt:
            break
    else:
        i = 0
    if i and text_pt(_join(items[:i])) >= 0.8 * width_pt:
        rest = items[i:]
        if rest:
            rest = [("", rest[0][1])] + rest[1:]
        return _join(items[:i]).rstrip(), fit(rest)
    # flow: words, each knowing its item; a line breaks between words
    words = []  # (item index, text with its leading separator)
    for i, (sep, text) in enumerate(first + second):
        for j, w in enumerate(text.split(" ")):
            lead = (sep if i else "") if j == 0 else " "
            words.append((i, lead, w))
    lines, cur, dropped_from = [[], []], 0, None
    for i, lead, w in words:
        line = lines[cur]
        cand = "".join(l + x for _, l, x in line) + (lead if line else lead.lstrip()) + w
        if text_pt(cand) <= width_pt:
            line.append((i, lead if line else "", w))
            continue
        if cur == 0:
            cur = 1
            lines[1].append((i, "", w))
            continue
        dropped_from = i
        break
    if dropped_from is not None:  # drop the item that did not fit from line 2, and all after it
        lines[1] = [t for t in lines[1] if t[0] < dropped_from]
    out = []
    for line in lines:
        s = "".join(l + x for _, l, x in line).strip()
        out.append(s.rstrip(",;|").rstrip())
    return out[0], out[1]


# ---- series: (run, peer) --------------------------------------------------------------------------


@dataclass
class MPeer:
    """A peer across the runs: the same spec is the same peer."""
    spec: str
    label: str
    kind: str
    slot: int
    file: str
    ids: dict  # run index (1-based) -> that run's peer id


@dataclass
class S:
    k: int  # 1-based, display order
    run: int  # 1-based
    peer: MPeer
    pid: str
    slot: int
    label: str  # key label: peer, or "run: peer" in a comparison
    tag: str  # file-name part of its data files


def merge_peers(runs):
    """The peers of all runs in display order (the first run's, then those only later runs have).
    A peer's slot comes from the first run that has it; a later run's peer whose slot an earlier
    run's peer of another spec holds moves to a free slot among 10-12."""
    merged, by_spec, taken = [], {}, {}
    for ri, run in enumerate(runs, 1):
        for p in run.man.peers:
            mp = by_spec.get(p.spec)
            if mp is None:
                slot = p.slot
                holder = taken.get(slot)
                if holder is not None and holder[1] != ri:
                    free = [s for s in (10, 11, 12) if s not in taken]
                    slot = free[0] if free else 10 + len(merged) % 3
                mp = MPeer(p.spec, p.label, p.kind, slot, load._safe(p.file), {})
                taken.setdefault(slot, (p.spec, ri))
                merged.append(mp)
                by_spec[p.spec] = mp
            mp.ids[ri] = p.id
    return merged


class Job:
    """One figure to draw: its script, and what the report says of it."""

    def __init__(self, fig, caption):
        self.fig, self.caption = fig, caption
        self.ok = None
        self.log = ""


class Figures:
    def __init__(self, runs, figdir, env=None):
        env = os.environ if env is None else env
        self.runs = runs
        self.nruns = len(runs)
        self.compare = self.nruns > 1
        self.figdir = figdir
        self.src = os.path.join(figdir, "src")
        self.bare = env.get("TK_PLOTS_BARE", "0") == "1"
        self.titles = env.get("TK_PLOTS_TITLES", "0") == "1"
        self.pdftocairo = None
        if not env.get("TK_PLOTS_NO_PDFTOCAIRO"):
            self.pdftocairo = shutil.which("pdftocairo")
        self.peers = merge_peers(runs)
        self.series = []
        used_tags = set()
        for mp in self.peers:
            for ri in range(1, self.nruns + 1):
                if ri not in mp.ids:
                    continue
                lab = f"{runs[ri - 1].label}: {mp.label}" if self.compare else mp.label
                tag = mp.file + (f".run{ri}" if self.compare else "")
                while tag in used_tags:
                    tag += "_"
                used_tags.add(tag)
                self.series.append(S(len(self.series) + 1, ri, mp, mp.ids[ri], mp.slot, lab, tag))
        # (run, peer id, row workload, metric) -> {n: Cell}
        self.index = {}
        for ri, run in enumerate(runs, 1):
            for (pid, rw, n, m), cell in run.cells.items():
                self.index.setdefault((ri, pid, rw, m), {})[n] = cell
        self.skipped = []  # (figure name, why)
        self.jobs = []

    # ---- data ------------------------------------------------------------------------------------
    def cells(self, s, rw, metric):
        return self.index.get((s.run, s.pid, rw, metric), {})

    def series_for(self, rw, metric):
        return [s for s in self.series if self.cells(s, rw, metric)]

    def points(self, s, rw, metric):
        """[(n, median, lo, hi, reps, min, max)] by n."""
        cs = self.cells(s, rw, metric)
        return [(n,) + cs[n].summary() for n in sorted(cs)]

    def largest(self, s, rw, metric):
        cs = self.cells(s, rw, metric)
        return (max(cs), cs[max(cs)]) if cs else (None, None)

    def reps_text(self, ri, wl):
        """"3 reps" or "1-3 reps": the repetitions of workload wl's cells in run ri."""
        rows = {rw for rw, _ in wl.rows}
        counts = [c.count for (pid, rw, n, m), c in self.runs[ri - 1].cells.items() if rw in rows]
        if not counts:
            return ""
        lo, hi = min(counts), max(counts)
        return f"{lo} rep{'s' if lo != 1 else ''}" if lo == hi else f"{lo}-{hi} reps"

    def rep_counts(self, fig):
        """The repetition counts of every cell of the figure's workload, in every run."""
        rows = {rw for rw, _ in fig.workload.rows}
        return [c.count for run in self.runs for (pid, rw, n, m), c in run.cells.items()
                if rw in rows]

    def write_dat(self, name, header, rows):
        with open(os.path.join(self.src, name), "w", encoding="utf-8") as f:
            f.write(f"# {header}\n")
            for r in rows:
                f.write(" ".join(x if isinstance(x, str) else num(x) for x in r) + "\n")
        return name

    # ---- styles ------------------------------------------------------------------------------------
    @staticmethod
    def ls(s):
        return f"lc rgb PC[{s.slot}] dt s_dash({s.slot},{s.run}) pt s_point({s.slot},{s.run}) lw LW ps PS"

    @staticmethod
    def lsl(s):
        return f"lc rgb PC[{s.slot}] dt s_dash({s.slot},{s.run}) lw LW"

    @staticmethod
    def fs(s):
        return f"fs pattern s_fill({s.slot},{s.run}) border lc rgb PC[{s.slot}] lc rgb PC[{s.slot}]"

    def ktitle(self, s):
        return "notitle" if self.compare else f"title {gpq(s.label)}"

    def compare_key(self, with_, part, sids=()):
        """The key of a comparison: one entry per peer (its colour, and point unless lines) and
        one per run (its dash and point fill in grey; for boxes a peer's solid colour and a run's
        fill pattern), each after ", ". Nothing for one run."""
        if not self.compare:
            return ""
        out = ""
        if part != "runs":
            seen = set()
            for s in sids:
                if s.peer.label in seen:
                    continue
                seen.add(s.peer.label)
                c = s.slot
                if with_ == "boxes":
                    out += (f", NaN with boxes fs solid 1.0 border lc rgb PC[{c}] lc rgb PC[{c}] "
                            f"title {gpq(s.peer.label)}")
                    continue
                pt = "" if with_ == "lines" else f" pt PT[{c}] ps PS"
                out += f", NaN with {with_} lc rgb PC[{c}] dt 1{pt} lw LW title {gpq(s.peer.label)}"
        if part == "peers":
            return out
        for r, run in enumerate(self.runs, 1):
            if with_ == "boxes":
                out += (f", NaN with boxes fs pattern s_fill(1,{r}) border lc rgb '#444444' "
                        f"lc rgb '#444444' title {gpq(run.label)}")
                continue
            pt = "" if with_ == "lines" else f" pt ({r} % 2 == 0 ? 6 : 7) ps PS"
            out += f", NaN with {with_} lc rgb '#444444' dt RD[run_i({r})]{pt} lw LW title {gpq(run.label)}"
        return out

    # ---- the footer ----------------------------------------------------------------------------------
    def footer(self, fig, data):
        if self.bare:
            return None
        w_in = SIZES[fig.size][0]
        width = w_in * 72 * (1 - 0.008) - 8
        first, second = [(" | ", data)] if data else [], []
        if not self.compare:
            meta = self.runs[0].meta
            mach = [(", ", meta.get("cpu_model", ""))]
            if meta.get("cores"):
                mach.append((", ", f"{meta['cores']} cores"))
            mach.append((", ", meta.get("kernel", "")))
            if meta.get("hostname"):
                mach.append((" ", f"({meta['hostname']})"))
            mach = [m for m in mach if m[1]]
            if mach:
                mach[0] = (" | ", mach[0][1])
            first += mach
            run = [self.reps_text(1, fig.workload), _commit(meta), meta.get("date", "")]
            if meta.get("suite"):
                run.append(f"{meta['suite']} suite")
            if meta.get("compiler"):
                run.append(f"{meta['compiler']} {meta.get('cflags', '')}".strip())
            if meta.get("timer_slack_ns"):
                run.append(f"timer slack {meta['timer_slack_ns']} ns")
            second = [(", ", x) for x in run if x]
        else:
            machines = [", ".join(x for x in (r.meta.get("cpu_model", ""), r.meta.get("kernel", ""))
                                  if x) for r in self.runs]
            if len(set(machines)) == 1 and machines[0]:
                m = self.runs[0].meta
                items = [x for x in (m.get("cpu_model", ""), m.get("kernel", "")) if x]
                first += [(" | " if i == 0 else ", ", x) for i, x in enumerate(items)]
                first.append((" ", "(every run)"))
            else:
                for ri, (r, mach) in enumerate(zip(self.runs, machines), 1):
                    first.append(("; " if ri > 1 else " | ", f"{r.label}: {mach}" if mach else r.label))
            for ri, r in enumerate(self.runs, 1):
                m = r.meta
                items = [x for x in (_commit(m), self.reps_text(ri, fig.workload), m.get("date", "")) if x]
                for j, x in enumerate(items):
                    second.append(("; " if j == 0 else ", ", f"{r.label}: {x}" if j == 0 else x))
        if not first:
            return None
        return wrap_footer(first, second, width)

    # ---- the script ----------------------------------------------------------------------------------
    def begin(self, fig, data, multi=False, height_in=None):
        """A figure's script, its footer set; height_in: a height of its own (inches), not its
        size's (the footer stays as far above the bottom as in the others)."""
        g = Script(fig)
        g.foot = self.footer(fig, data)
        if height_in is not None:
            g.term = f"term_cmd(FMT, {'DOUBLE_W' if fig.size == 'double' else 'SINGLE_W'}, {num(height_in)})"
        if g.foot:
            l1, l2 = g.foot
            y1, y2 = ("0.048", "0.015") if height_in is None else \
                ("%.4f" % (8.4 / (height_in * 72)), "%.4f" % (2.6 / (height_in * 72)))
            g(f"set label 101 {gpq(l1)} at screen 0.008, screen {y1} left font ',4.5' textcolor rgb '#555555' noenhanced")
            g(f"set label 102 {gpq(l2)} at screen 0.008, screen {y2} left font ',4.5' textcolor rgb '#555555' noenhanced")
            if not multi:
                g("set bmargin 5.1")
        return g

    def title(self, g, fig):
        if self.titles:
            g(f"set title {gpq(fig.title)}")

    def finish(self, g, caption):
        fig = g.fig
        with open(os.path.join(self.src, fig.name + ".gp"), "w", encoding="utf-8") as f:
            f.write(g.text(self.compare))
        self.jobs.append(Job(fig, caption))

    def skip(self, fig, why):
        load.warn(f"skipped {fig.name}: {why}")
        self.skipped.append((fig.name, why))

    def bar_statement(self, fig, what="Points"):
        counts = self.rep_counts(fig)
        if counts and max(counts) == 1:
            return f"{what} are single measurements (1 repetition): no error bars."
        rng = _range_text(counts)
        return (f"{what} are medians of {rng} repetitions; error bars are 95 % bootstrap "
                f"confidence intervals of the median.")

    # ---- axes helpers -----------------------------------------------------------------------------
    @staticmethod
    def auto_log(rows):
        """log when every value (and interval end) is positive and they span 30x or more."""
        if not rows:
            return "lin"
        if any(r[1] <= 0 or r[2] <= 0 for r in rows):
            return "lin"
        mn, mx = min(r[1] for r in rows), max(r[1] for r in rows)
        return "log" if mn > 0 and mx / mn >= 30 else "lin"

    @staticmethod
    def auto_log_x(xs):
        xs = list(xs)
        if not xs or any(x <= 0 for x in xs):
            return "lin"
        return "log" if max(xs) / min(xs) >= 30 else "lin"

    @staticmethod
    def range_of(rows):
        pos = [r[1] for r in rows if r[1] > 0]
        return (min(pos) if pos else 0), (max(r[1] for r in rows) if rows else 0)

    def engfmt(self, g, ys, unit, rows):
        """SI prefixes (5.0M, 10 MB) on an axis of an si unit that reaches 1e4."""
        if not unit.si:
            return
        _, hi = self.range_of(rows)
        if hi < 10000:
            return
        fmt = ("%.0s %c" if ys == "log" else "%.1s %c") + unit.si_suffix
        g(f"set format y {gpq(fmt)}")

    @staticmethod
    def xrange_around(g, x, scale):
        if scale == "log":
            g(f"set xrange [{num(x)}/3.0:{num(x)}*3.0]")
        else:
            g(f"set xrange [{num(x)}-1:{num(x)}+1]")

    def data_text(self, fig, pairs):
        """The footer's data item: each workload's metrics, "<workload> <metric> <metric>"."""
        groups = {}
        for rw, metric in pairs:
            owner = self.runs[0].man.owner.get(rw)
            name = owner.name if owner is not None else rw
            groups.setdefault(name, [])
            if metric not in groups[name]:
                groups[name].append(metric)
        return "; ".join(f"{w} {' '.join(ms)}" for w, ms in groups.items())

    def ref_value(self, ri, ref):
        """(series, value) of reference ref in run ri: the median at the largest n of the first
        peer (floor peers first) with rows of it."""
        cands = [s for s in self.series if s.run == ri]
        cands.sort(key=lambda s: (s.peer.kind != "floor", s.k))
        for s in cands:
            n, cell = self.largest(s, ref.workload, ref.metric.name)
            if cell is not None:
                return s, cell.median
        return None, None

    # ---- kinds ---------------------------------------------------------------------------------------
    def lines(self, fig):
        ser = fig.series[0]
        if len(fig.series) > 1:
            load.warn(f"{fig.name}: a lines figure draws one series; drawing {ser.workload}/"
                      f"{ser.metric.name} only")
        rw, m = ser.workload, ser.metric
        sids = self.series_for(rw, m.name)
        if not sids:
            return self.skip(fig, f"no {rw}/{m.name} rows")
        data = {s.k: self.points(s, rw, m.name) for s in sids}
        allrows = [r for s in sids for r in data[s.k]]
        xs, ys = fig.x.scale, fig.y.scale
        if ys == "auto":
            ys = self.auto_log(allrows)
        if xs == "auto":
            xs = self.auto_log_x(r[0] for r in allrows)
        files = {}
        for s in sids:
            files[s.k] = self.write_dat(f"{fig.name}.{s.tag}.dat",
                                        f"{fig.name}, {s.label}, {rw}/{m.name}: n median ci_lo ci_hi reps min max",
                                        data[s.k])
        g = self.begin(fig, self.data_text(fig, [(rw, m.name)]))
        self.title(g, fig)
        g(f"set xlabel {gpq(fig.x.label)}")
        g(f"set ylabel {gpq(ylab(fig.y.label, m.unit))}")
        if xs == "log":
            g("set logscale x 10; set format x LOGFMT")
        xvals = sorted({r[0] for r in allrows})
        if len(xvals) == 1:
            self.xrange_around(g, xvals[0], xs)
        else:
            g("set autoscale xfix; set offsets graph 0.05, graph 0.05, 0, 0")
        if ys == "log":
            g("set logscale y 10; set format y LOGFMT")
        else:
            g(f"set yrange [0:{self.top(fig, allrows)}]; set format y '%g'")
        self.engfmt(g, ys, m.unit, allrows)
        # a linear x of a few whole numbers (W7's producer threads): a tick at each, none between
        if xs != "log" and all(x == int(x) for x in xvals) and len(xvals) <= 8:
            g(f"set xtics ({','.join(num(x) for x in xvals)}); unset mxtics")
        parts = [f"{gpq(files[s.k])} using 1:2:3:4 with yerrorlines {self.ls(s)} {self.ktitle(s)}"
                 for s in sids]
        cmd = "plot " + ", \\\n    ".join(parts) + self.compare_key("linespoints", "all", sids)
        for ref in fig.refs:
            for ri in range(1, self.nruns + 1):
                s, v = self.ref_value(ri, ref)
                if s is None:
                    continue
                cmd += (f", \\\n    {num(v)} with lines lc rgb PC[{s.slot}] dt s_dash({s.slot},{ri}) "
                        f"lw LW title {gpq(s.label + ': ' + ref.label)}")
        g(cmd)
        self.finish(g, sentences(fig.caption, self.bar_statement(fig)))

    def top(self, fig, rows):
        """The top of a linear value axis: * (autoscale), or min_top when the data stay below it."""
        _, hi = self.range_of(rows)
        if fig.y.min_top is not None and hi < fig.y.min_top:
            return num(fig.y.min_top)
        return "*"

    def panels(self, fig):
        used = []
        for ser in fig.series:
            sids = self.series_for(ser.workload, ser.metric.name)
            if sids:
                used.append((ser, sids))
        if len(used) < 2:
            have = ", ".join(f"{s.workload}/{s.metric.name}" for s, _ in used) or "none"
            return self.skip(fig, f"fewer than two of its series have rows (have: {have})")
        allk = sorted({s.k for _, sids in used for s in sids})
        alls = [self.series[k - 1] for k in allk]
        np_ = len(used)
        g = self.begin(fig, self.data_text(fig, [(s.workload, s.metric.name) for s, _ in used]), multi=True)
        bot, l, r, gap = 0.15, 0.065, 0.99, 0.055
        if g.foot:
            bot = 0.22
        # the shared key above the panels, as many rows as its entries need, then room for the
        # panels' titles
        w_in, h_in = SIZES[fig.size]
        labels = [s.label for s in alls] if not self.compare else \
            [s.label for s in alls] + [f"run {i + 1}" for i in range(self.nruns)]
        rows = max(1, key_rows(labels, (r - l) * w_in * 72))
        key_pt = rows * KEY_ROW_PT + 6
        top = 1 - (key_pt + 12 + (18 if self.titles else 0)) / (h_in * 72)
        pw = float("%.4f" % ((r - l - (np_ - 1) * gap) / np_))
        g("set multiplot")
        if self.titles:
            g(f"set label 103 {gpq(fig.title)} at screen 0.5, screen 0.975 center font ',7' noenhanced")
        # the shared key, drawn by an empty full-width plot
        g(f"set lmargin at screen {l}; set rmargin at screen {r}; set tmargin at screen 0.999; set bmargin at screen {top}")
        g("unset border; unset xtics; unset ytics; unset mxtics; unset mytics; unset grid; set xrange [0:1]; set yrange [0:1]")
        key_mid = 1 - (key_pt / 2 + (18 if self.titles else 0)) / (h_in * 72)
        g(f"set key at screen 0.5, screen {'%.3f' % key_mid} center center horizontal width 1")
        if self.compare:
            g("plot NaN notitle" + self.compare_key("linespoints", "all", alls))
        else:
            g("plot " + ", \\\n    ".join(f"NaN with linespoints {self.ls(s)} title {gpq(s.label)}" for s in alls))
        g("unset label 101; unset label 102; unset label 103; unset key")
        g("set border 3; set xtics nomirror out scale 0.6; set ytics nomirror out scale 0.6; set mxtics default; set mytics default; set grid xtics ytics; set autoscale")
        data = {(i, s.k): self.points(s, ser.workload, ser.metric.name)
                for i, (ser, sids) in enumerate(used) for s in sids}
        allrows = [r_ for rows in data.values() for r_ in rows]
        xs = fig.x.scale if fig.x.scale != "auto" else self.auto_log_x(r_[0] for r_ in allrows)
        yscales = []
        for i, (ser, sids) in enumerate(used):
            ys = fig.y.scale
            if ys == "auto":
                ys = self.auto_log([r_ for s in sids for r_ in data[(i, s.k)]])
            yscales.append(ys)
        same_log = xs == "log" and all(y == "log" for y in yscales)
        if same_log:
            g("set logscale xy 10; set format x LOGFMT; set format y LOGFMT")
        elif xs == "log":
            g("set logscale x 10; set format x LOGFMT")
        xvals = sorted({r_[0] for r_ in allrows})
        if len(xvals) == 1:
            self.xrange_around(g, xvals[0], xs)
        else:
            g("set autoscale xfix; set offsets graph 0.06, graph 0.06, 0, 0")
        g(f"set xlabel {gpq(fig.x.label)}")
        for i, (ser, sids) in enumerate(used):
            x0 = float("%.4f" % (l + i * (pw + gap)))
            g(f"set lmargin at screen {'%.4f' % x0}; set rmargin at screen {'%.4f' % (x0 + pw)}; set tmargin at screen {top}; set bmargin at screen {bot}")
            g(f"set title {gpq(ser.label)} offset 0,-0.6")
            if i == 0:
                g(f"set ylabel {gpq(ylab(fig.y.label, ser.metric.unit))} offset 1,0")
            else:
                g("unset ylabel")
            if not same_log:
                if yscales[i] == "log":
                    g("set logscale y 10; set format y LOGFMT; set yrange [*:*]")
                else:
                    rows = [r_ for s in sids for r_ in data[(i, s.k)]]
                    g(f"unset logscale y; set format y '%g'; set yrange [0:{self.top(fig, rows)}]")
                    self.engfmt(g, "lin", ser.metric.unit, rows)
            parts = []
            for s in sids:
                f = self.write_dat(f"{fig.name}.{ser.metric.name}.{s.tag}.dat",
                                   f"{fig.name}, {s.label}, {ser.workload}/{ser.metric.name}: n median ci_lo ci_hi reps min max",
                                   data[(i, s.k)])
                parts.append(f"{gpq(f)} using 1:2:3:4 with yerrorlines {self.ls(s)} notitle")
            g("plot " + ", \\\n    ".join(parts))
        g("unset multiplot")
        self.finish(g, sentences(fig.caption, self.bar_statement(fig)))

    def frontier(self, fig):
        """One metric against another (the series: x, then y), a line per frontier line
        (frontier.py) through its points' medians, each point labelled with its slack."""
        sx, sy = fig.series
        rw = sx.workload
        by_key = {(s.run, s.pid): s for s in self.series}
        lines, allx, ally = [], [], []
        for ri, run in enumerate(self.runs, 1):
            peers = [p for p in run.man.peers
                     if (ri, p.id) in by_key and self.cells(by_key[(ri, p.id)], rw, sx.metric.name)
                     and self.cells(by_key[(ri, p.id)], rw, sy.metric.name)]
            for ln in frontier_lines.lines(peers):
                rows = []
                for slack, p in ln.points:
                    s = by_key[(ri, p.id)]
                    x = self.largest(s, rw, sx.metric.name)[1].median
                    y = self.largest(s, rw, sy.metric.name)[1].median
                    rows.append((x, y, frontier_lines.slack_text(slack)))
                    allx.append(x)
                    ally.append(y)
                # the line's style: its first peer with the line's kind of slack
                own = [p for slack, p in ln.points if (p.os_slack_ns > 0) == ln.os]
                s = by_key[(ri, (own or [ln.points[0][1]])[0].id)]
                label = f"{self.runs[ri - 1].label}: {ln.label}" if self.compare else ln.label
                lines.append((s, label, rows))
        if not lines:
            return self.skip(fig, f"no {rw}/{sx.metric.name} and {sy.metric.name} rows")
        g = self.begin(fig, self.data_text(fig, [(rw, sx.metric.name), (rw, sy.metric.name)]))
        self.title(g, fig)
        g(f"set xlabel {gpq(ylab(fig.x.label, sx.metric.unit))}")
        g(f"set ylabel {gpq(ylab(fig.y.label, sy.metric.unit))}")
        for axis, vals, scale in (("x", allx, fig.x.scale), ("y", ally, fig.y.scale)):
            log = scale == "log" or (scale == "auto" and self.auto_log_x(vals) == "log")
            if log and all(v > 0 for v in vals):
                g(f"set logscale {axis} 10; set format {axis} LOGFMT")
            else:
                g(f"set {axis}range [0:*]")
        g("set autoscale xfix; set autoscale yfix; set offsets graph 0.05, graph 0.15, graph 0.15, graph 0.05")
        parts = []
        for i, (s, label, rows) in enumerate(lines):
            f = self.write_dat(f"{fig.name}.{i + 1}.{s.tag}.dat",
                               f"{fig.name}, {label}: {sx.metric.name} {sy.metric.name} slack "
                               f"(medians)", rows)
            parts.append(f"{gpq(f)} using 1:2 with linespoints {self.ls(s)} title {gpq(label)}")
            parts.append(f"{gpq(f)} using 1:2:3 with labels offset char 0.4,0.5 left font ',5' "
                         f"textcolor rgb PC[{s.slot}] notitle")
        g("plot " + ", \\\n    ".join(parts))
        counts = self.rep_counts(fig)
        what = "single measurements (1 repetition)" if counts and max(counts) == 1 else \
            f"medians of {_range_text(counts)} repetitions"
        self.finish(g, sentences(fig.caption, f"Points are {what}, each labelled with its "
                                 f"slack; no error bars."))

    def bars(self, fig):
        cats, bars = [], {}  # bars[k] = [(category, median, lo, hi, n, reps)]
        present = []
        for ser in fig.series:
            sids = self.series_for(ser.workload, ser.metric.name)
            if not sids:
                continue
            cats.append(ser.label)
            present.append(ser)
            c = len(cats)
            for s in sids:
                n, cell = self.largest(s, ser.workload, ser.metric.name)
                med, lo, hi, cnt, _, _ = cell.summary()
                bars.setdefault(s.k, []).append((c, med, lo, hi, n, cnt))
        if not cats:
            rows = " ".join(f"{s.workload}/{s.metric.name}" for s in fig.series)
            return self.skip(fig, f"no {rows} rows")
        alls = [self.series[k - 1] for k in sorted(bars)]
        unit = present[0].metric.unit
        c = len(cats)
        allrows = [r for k in bars for r in bars[k]]
        ys = fig.y.scale
        if ys == "auto":
            ys = self.auto_log(allrows)
        m = len(alls)
        w = float("%.4f" % (0.8 / m))
        ns = sorted({r[4] for r in allrows})
        g = self.begin(fig, self.data_text(fig, [(s.workload, s.metric.name) for s in present]))
        self.title(g, fig)
        g(f"set ylabel {gpq(ylab(fig.y.label, unit))}")
        g(f"set boxwidth {'%.4f' % w} absolute")
        g(f"set xrange [0.5:{c}.5]")
        g("unset mxtics; set grid noxtics ytics")
        bar_title = True
        head = ""
        if c == 1:
            # one name per bar; in a comparison one per peer, under the middle of its runs' bars
            names = []
            for j, s in enumerate(alls):
                names.append((s.peer.label if self.compare else s.label, 1 + (j - (m - 1) / 2) * w))
            ticks, i = [], 0
            while i < len(names):
                j = i
                while j + 1 < len(names) and names[j + 1][0] == names[i][0]:
                    j += 1
                pos = sum(float("%.4f" % p) for _, p in names[i:j + 1]) / (j - i + 1)
                ticks.append(f"{gpq(names[i][0])} {'%.4f' % pos}")
                i = j + 1
            ang, per, fsz = 30, 0.2, 6
            if len({s.peer.spec for s in alls}) > 6:
                ang, per, fsz = 40, 0.26, 5
            g(f"set xtics ({', '.join(ticks)}) rotate by {ang} right scale 0 font ',{fsz}' noenhanced")
            if self.compare:
                bar_title = False
                head = "plot NaN notitle" + self.compare_key("boxes", "runs")
            else:
                g("unset key")
            longest = max(len(s.peer.label if self.compare else s.label) for s in alls)
            f = 2.4 if g.foot else 0.8
            g(f"set bmargin {'%.1f' % (f + 0.9 + longest * per)}")
        else:
            g(f"set xtics ({', '.join(f'{gpq(cat)} {j}' for j, cat in enumerate(cats, 1))}) scale 0 noenhanced")
            if self.compare:
                bar_title = False
                head = "plot NaN notitle" + self.compare_key("boxes", "all", alls)
            if g.foot:
                g("set bmargin 4.2")
        if ys == "log":
            g("set logscale y 10; set format y LOGFMT")
            # bars start at the bottom of a log axis: the axis starts at a power of ten at least
            # half a decade under the smallest bar, so that no bar is a sliver (10.1 above 10)
            lo, _ = self.range_of(allrows)
            e = math.floor(math.log10(lo) - 0.5) if lo > 0 else 0
            g(f"set yrange [{num(10.0 ** e)}:*]")
        else:
            g(f"set yrange [0:{self.top(fig, allrows)}]")
        self.engfmt(g, ys, unit, allrows)
        parts = []
        for j, s in enumerate(alls):
            off = "%.4f" % ((j - (m - 1) / 2) * w)
            dat = self.write_dat(f"{fig.name}.{s.tag}.dat",
                                 f"{fig.name}, {s.label}: category median ci_lo ci_hi n reps "
                                 f"(categories: {', '.join(cats)})", bars[s.k])
            t = f"title {gpq(s.label)}" if bar_title else "notitle"
            parts.append(f"{gpq(dat)} using ($1+{off}):2 with boxes {self.fs(s)} {t}")
            # error bars as capped vectors (yerrorbars leave a gap for an invisible point)
            parts.append(f"{gpq(dat)} using ($1+{off}):3:(0):($4 > $3 ? $4-$3 : NaN) with vectors "
                         f"heads size screen 0.006,90 lc rgb PC[{s.slot}] lw 0.8 notitle")
        if bar_title:
            cmd = "plot " + ", \\\n    ".join(parts)
        else:
            cmd = head + ", \\\n    " + ", \\\n    ".join(parts)
        g(cmd)
        at = f"At {fig.workload.x.get('short') or 'n'} = {fmt_n(ns[0])}." if len(ns) == 1 else \
            f"Each peer at its largest {fig.workload.x.get('short') or 'n'}."
        self.finish(g, sentences(fig.caption, at, self.bar_statement(fig, "Bars")))

    def lateness(self, fig):
        cdf = fig.kind == "cdf"
        wl = fig.workload.name
        parts, hsids, fromcsv, ncsv, n = [], [], [], 0, 0
        key_labels = []  # the key's entries, for its layout
        allvals = []
        # a histogram is filed under its row: the workload's name, or <name>:<instance> for a
        # workload whose rows are the run's instances (a replayed trace)
        hrows = list(dict.fromkeys([ser.workload for ser in fig.series] + [wl]))
        for s in self.series:
            h = next((hh for hh in (self.runs[s.run - 1].hists.get((r, s.pid)) for r in hrows) if hh),
                     None)
            if h:
                rows = [(v, "%.12g" % p, "NaN" if p >= 1 else "%.6g" % (1 / (1 - p))) for v, p in h]
                f = self.write_dat(f"{fig.name}.{s.tag}.hgrm.dat",
                                   f"{fig.name}, {s.label}, hist/: value percentile 1/(1-percentile)", rows)
                allvals += [(v, v, v) for v, _ in h]
                if cdf:
                    parts.append(f"{gpq(f)} using 1:($2*100) with steps {self.lsl(s)} {self.ktitle(s)}")
                else:
                    parts.append(f"{gpq(f)} using 3:1 with lines {self.lsl(s)} {self.ktitle(s)}")
                hsids.append(s)
                key_labels.append(s.label)
            else:
                if s.peer.kind == "floor":
                    continue
                pts = []
                for ser in fig.series:
                    nn, cell = self.largest(s, ser.workload, ser.metric.name)
                    if cell is None:
                        continue
                    med, lo, hi = cell.summary()[:3]
                    p = ser.metric.pct / 100
                    pts.append((med, "%.12g" % p, "%.6g" % (1 / (1 - p)), lo, hi))
                    allvals.append((med, lo, hi))
                if not pts:
                    continue
                f = self.write_dat(f"{fig.name}.{s.tag}.pct.dat",
                                   f"{fig.name}, {s.label}, results.csv: median percentile 1/(1-percentile) ci_lo ci_hi", pts)
                title = gpq(f"{s.label} (results.csv)")
                key_labels.append(f"{s.label} (results.csv)")
                if cdf:
                    parts.append(f"{gpq(f)} using 1:($2*100) with linespoints {self.ls(s)} title {title}")
                else:
                    parts.append(f"{gpq(f)} using 3:1:4:5 with yerrorlines {self.ls(s)} title {title}")
                fromcsv.append(s.label)
                ncsv += 1
            n += 1
        if n == 0:
            rows = ", ".join(f"{s.workload}/{s.metric.name}" for s in fig.series)
            return self.skip(fig, f"no hist/{wl}.*.hgrm" + (f" and no {rows} rows" if rows else ""))
        # references (the floor's clock_nanosleep lateness), a series of points per label and run
        groups = []
        for ref in fig.refs:
            if ref.pct is None:
                continue
            if ref.label not in [g_[0] for g_ in groups]:
                groups.append((ref.label, []))
            next(g_ for g_ in groups if g_[0] == ref.label)[1].append(ref)
        refparts, nref, ref_groups_drawn = [], 0, set()
        for label, refs in groups:
            titled = False
            for ri in range(1, self.nruns + 1):
                pts, who = [], None
                for ref in refs:
                    s, v = self.ref_value(ri, ref)
                    if s is None:
                        continue
                    who = who or s
                    p = ref.pct / 100
                    pts.append((v, "%.12g" % p, "%.6g" % (1 / (1 - p))))
                if not pts:
                    continue
                f = self.write_dat(f"{fig.name}.ref{groups.index((label, refs)) + 1}.{who.tag}.dat",
                                   f"{fig.name}, {who.label}: {label}: value percentile 1/(1-percentile)", pts)
                if self.compare:
                    ft = "notitle" if titled else f"title {gpq(who.peer.label + ': ' + label)}"
                    titled = True
                else:
                    ft = f"title {gpq(who.label + ': ' + label)}"
                key_labels.append(who.label + ": " + label)
                with_ = "points" if cdf else "linespoints"
                using = "1:($2*100)" if cdf else "3:1"
                refparts.append(f"{gpq(f)} using {using} with {with_} {self.ls(who)} {ft}")
                nref += 1
                ref_groups_drawn.add(label)
        cmd = "plot " + ", \\\n    ".join(parts)
        cmd += self.compare_key("lines", "peers", hsids)
        if refparts:
            cmd += ", \\\n    " + ", \\\n    ".join(refparts)
        cmd += self.compare_key("lines", "runs")
        if self.compare:
            entries = len({s.peer.spec for s in hsids}) + ncsv + len(ref_groups_drawn) + self.nruns
        else:
            entries = n + nref
        # the key above the plot: as many columns as its widest entry lets fit, as many rows as
        # that needs; past KEY_ROWS_IN_SIZE rows the figure grows, so that the plot keeps the
        # height it has in a figure of its size however many peers the run has
        w_in, h_in = SIZES[fig.size]
        col_pt = max((text_pt(t, KEY_PT) for t in key_labels), default=0) + 22
        rows = -(-entries // max(1, int((w_in * 72 - 8) // col_pt)))
        height_in = None
        if rows > KEY_ROWS_IN_SIZE:
            height_in = h_in + (rows - KEY_ROWS_IN_SIZE) * KEY_ROW_PT / 72
            h_in = height_in
        key = (f"set key at screen 0.01, screen 0.995 left top vertical maxrows {rows} Left reverse "
               f"font ',{KEY_PT}' spacing 0.9 samplen 1.5 width -1; set tmargin at screen "
               f"{'%.3f' % (1 - (rows * KEY_ROW_PT + 16) / (h_in * 72))}")
        unit = fig.series[0].metric.unit if fig.series else \
            self.runs[0].man.units.get("us", load.Unit("us", "µs"))
        g = self.begin(fig, f"{wl} hist/*.hgrm", height_in=height_in)
        self.title(g, fig)
        ys = fig.y.scale
        if not cdf:
            if ys == "auto":
                ys = self.auto_log(allvals)
            if ys == "log":
                g("set logscale x 10; set logscale y 10; set format y LOGFMT")
            else:
                g("set logscale x 10; set yrange [0:*]")
            g("set xrange [1:*]; unset mxtics")
            # short labels, so that neighbouring decades never run into each other: 99.999 (between
            # 99.99 and 99.9999, which a million samples reach) is a tick without a label
            g("set xtics ('50' 2, '90' 10, '99' 100, '99.9' 1000, '99.99' 10000, '' 100000, '99.9999' 1000000) font ',6'")
            g(f"set xlabel {gpq(fig.x.label or 'percentile (%)')}")
            g(f"set ylabel {gpq(ylab(fig.y.label or 'lateness', unit))}")
        else:
            xs = fig.x.scale
            if xs == "auto":
                xs = self.auto_log(allvals)
            if xs == "log":
                g("set logscale x 10; set format x LOGFMT")
            g("set yrange [0:100]; set ytics 0, 20")
            g(f"set xlabel {gpq(ylab(fig.x.label or 'lateness', unit))}")
            g(f"set ylabel {gpq(fig.y.label or 'timers fired (%)')}")
        g(key)
        g(cmd)
        counts = self.rep_counts(fig)
        reps = "its repetitions" if not counts else "its 1 repetition" if max(counts) == 1 else \
            f"all {_range_text(counts)} repetitions"
        stmt = f"Curves are the histograms in hist/, every timer of {reps} together: no error bars."
        if fromcsv:
            stmt += (f" No histogram for {', '.join(fromcsv)}: its percentiles come from results.csv, "
                     + ("medians with error bars of 95 % bootstrap confidence intervals of the median."
                        if not cdf else "medians of the repetitions."))
        self.finish(g, sentences(fig.caption, stmt))

    # ---- all figures ------------------------------------------------------------------------------
    def prepare(self, figures):
        """Write every figure's script and data into figures/src/ (stale files removed)."""
        os.makedirs(self.src, exist_ok=True)
        for d, exts in ((self.figdir, (".pdf", ".png", ".svg")), (self.src, (".gp", ".dat", ".log"))):
            for f in os.listdir(d):
                if f.endswith(exts):
                    os.remove(os.path.join(d, f))
        kinds = {"lines": self.lines, "panels": self.panels, "bars": self.bars,
                 "percentiles": self.lateness, "cdf": self.lateness, "frontier": self.frontier}
        for fig in figures:
            kinds[fig.kind](fig)

    def draw(self, jobs=None):
        """Run gnuplot (and pdftocairo) for every prepared figure, several at a time."""
        jobs = self.jobs if jobs is None else jobs
        dpi = png_dpi()
        workers = max(1, min(len(jobs), os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as ex:
            list(ex.map(lambda j: self._draw_one(j, dpi), jobs))
        for j in jobs:
            if not j.ok:
                print(f"render.py: drawing {j.fig.name} failed (gnuplot"
                      f"{' or pdftocairo' if self.pdftocairo else ''}):", file=sys.stderr)
                for line in j.log.splitlines():
                    print(f"    {line}", file=sys.stderr)
            elif j.log.strip():
                for line in j.log.splitlines():
                    print(f"render.py: {j.fig.name}: gnuplot: {line}", file=sys.stderr)
        return all(j.ok for j in jobs)

    def _draw_one(self, job, dpi):
        name = job.fig.name
        out = os.path.join(self.figdir, name)
        env = dict(os.environ, LC_ALL="C.UTF-8")
        log, ok = [], True
        for fmt in (["pdf"] if self.pdftocairo else ["pdf", "png", "svg"]):
            p = subprocess.run(["gnuplot", "-e", f"FMT='{fmt}'", name + ".gp"], cwd=self.src,
                               capture_output=True, text=True, env=env)
            log.append(p.stdout + p.stderr)
            if p.returncode != 0:
                ok = False
                break
        if ok and self.pdftocairo:
            for args in (["-png", "-r", str(dpi), "-singlefile", out + ".pdf", out],
                         ["-svg", out + ".pdf", out + ".svg"]):
                p = subprocess.run([self.pdftocairo] + args, capture_output=True, text=True, env=env)
                log.append(p.stdout + p.stderr)
                if p.returncode != 0:
                    ok = False
                    break
        for ext in (".pdf", ".png", ".svg"):
            if not (os.path.isfile(out + ext) and os.path.getsize(out + ext) > 0):
                ok = False
        if not ok:
            for ext in (".pdf", ".png", ".svg"):
                if os.path.exists(out + ext):
                    os.remove(out + ext)
        job.ok, job.log = ok, "".join(log)


class Script:
    """The lines of one figure's gnuplot script, and the preamble that makes it stand alone."""

    def __init__(self, fig):
        self.fig = fig
        self.lines = []
        self.foot = None
        self.term = None  # the terminal command (a gnuplot string expression); None: its size's

    def __call__(self, line):
        self.lines.append(line)

    def text(self, compare):
        fig = self.fig
        head = [
            f"# {fig.name}: {fig.title}",
            "# Written by plots/render.py with its data, the .dat files beside it (columns: plots/README.md).",
            f"# Redraw from this folder: gnuplot {fig.name}.gp (writes ../{fig.name}.pdf); then",
            f"#   pdftocairo -png -r 200 -singlefile ../{fig.name}.pdf ../{fig.name}; pdftocairo -svg ../{fig.name}.pdf ../{fig.name}.svg",
            f"# or gnuplot -e \"FMT='png'\" {fig.name}.gp (png, svg: gnuplot's own terminals).",
            "# STYLE names plots/style.gp: gnuplot -e \"STYLE='/path/to/style.gp'\" to use another copy.",
            'if (!exists("FMT")) FMT = "pdf"',
            f'if (!exists("STYLE")) STYLE = {gpq(STYLE)}',
            "reset",
            "load STYLE",
            f"COMPARE = {1 if compare else 0}",
            f"eval {self.term}" if self.term else f'eval value("TERM_".FMT."_{fig.size}")',
            "# comparisons have twice the series and long labels: a smaller, denser key",
            'if (COMPARE) { set key font ",5" spacing 1 width -1 samplen 1.8 }',
            f"set output {gpq('../' + fig.name + '.')}.FMT",
        ]
        return "\n".join(head + self.lines + ["unset output", ""])


def ylab(label, unit):
    """An axis label with its unit: "what (unit)"; a label that names its unit in parentheses
    already is kept."""
    if re.search(r"\(.*\)", label):
        return label
    return f"{label} ({unit.text})" if label else unit.text


def sentences(*parts):
    """Parts joined as sentences: a full stop after each that has none."""
    out = []
    for p in parts:
        p = p.strip()
        if p:
            out.append(p if p.endswith((".", "!", "?")) else p + ".")
    return " ".join(out)


def _commit(meta):
    c = meta.get("commit", "")
    if not c:
        return ""
    short = c[:7] if re.fullmatch(r"[0-9a-fA-F]{8,}", c) else c
    if str(meta.get("commit_dirty", "")).lower() in ("yes", "true", "1"):
        short += "+dirty"
    return f"commit {short}"


def _range_text(counts):
    if not counts:
        return ""
    lo, hi = min(counts), max(counts)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"
