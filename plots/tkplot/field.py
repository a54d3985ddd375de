# SPDX-License-Identifier: MIT
"""The field: every peer's headline values side by side, grouped by timer design.

report.md's section "The field" holds a table of them (report.py, field_md) and the figure `field`
drawn here: small multiples, a panel per headline value, a dot per peer.

The headline values are the metrics whose descriptor gives them a place in the field (the
manifest's `field`, from 1, in that order), with their rows, units, labels and directions; an old
manifest without it has no field. A workload with variants (the idle one: empty, hour) gives a
column per variant. Each value is the median of the repetitions at the peer's largest n, as
the workload tables have it. Peers are grouped by their `design` (load.peer_design); the floor is
left out, and so is a peer without any of the values.
"""

from dataclasses import dataclass

from . import load
from .figures import KEY_PT, SIZES, fmt_n, gpq, num, sentences, text_pt

NAME = "field"
TITLE = "The field: headline values by timer design"
# Groups in this order; any other design after them, then "list", then peers of no known design
DESIGN_ORDER = ("heap", "hashed wheel", "hierarchical wheel")
DESIGN_LAST = ("list", "")
BETTER_TEXT = {"lower": "lower is better", "higher": "higher is better"}


@dataclass
class Column:
    wl: load.Workload
    rw: str  # its row workload
    variant: str  # the row's label ("" for a workload without variants)
    m: load.Metric

    def name(self):
        """A head without its unit: the workload and the metric's label, then the variant."""
        return f"{self.wl.name} {self.m.label}" + (f", {self.variant}" if self.variant else "")

    def head(self):
        return f"{self.name()} ({self.m.unit.text})"


@dataclass
class Row:
    peer: load.Peer
    values: dict  # column index -> (n, Cell)
    ns: dict  # workload name -> the largest n of its columns this peer has


@dataclass
class Group:
    design: str
    rows: list

    @property
    def label(self):
        return self.design or "other"


class Field:
    """The field of one run: its columns, and its peers' values grouped by design."""

    def __init__(self, run):
        self.run = run
        man = run.man
        by = {}  # (row workload, metric) -> {peer id: {n: cell}}
        for (pid, rw, n, m), cell in run.cells.items():
            by.setdefault((rw, m), {}).setdefault(pid, {})[n] = cell
        field = sorted((m.field, k, wl, m) for k, wl in enumerate(man.workloads)
                       for m in wl.metrics if m.field > 0)
        declared = []
        for _, _, wl, m in field:
            declared += [Column(wl, rw, lab, m) for rw, lab in wl.rows]
        self.declared = declared
        self.columns = [c for c in declared if by.get((c.rw, c.m.name))]
        rows = []
        for p in man.peers:
            if p.kind == "floor":
                continue
            values = {}
            for i, c in enumerate(self.columns):
                cs = by[(c.rw, c.m.name)].get(p.id)
                if cs:
                    values[i] = (max(cs), cs[max(cs)])
            if values:
                ns = {}
                for i, (n, _) in values.items():
                    w = self.columns[i].wl.name
                    ns[w] = max(ns.get(w, n), n)
                rows.append(Row(p, values, ns))
        designs = list(DESIGN_ORDER)
        designs += [r.peer.design for r in rows if r.peer.design not in designs + list(DESIGN_LAST)]
        designs += list(DESIGN_LAST)
        self.groups = []
        for d in dict.fromkeys(designs):
            members = [r for r in rows if r.peer.design == d]
            if members:
                self.groups.append(Group(d, members))
        self.rows = [r for g in self.groups for r in g.rows]

    def workloads(self):
        """The workloads of the columns, in column order."""
        return list(dict.fromkeys(c.wl.name for c in self.columns))

    def wl_ns(self, wname):
        """The largest n of workload wname's columns, over the peers that have any: a set."""
        return {r.ns[wname] for r in self.rows if wname in r.ns}

    def at_text(self):
        """Which n each workload's values are at: "<workload> at N = 1e6, ..."; a workload whose
        peers ran different largest n is "at each peer's largest N"."""
        parts = []
        for w in self.workloads():
            wl = self.run.man.workload(w)
            xs = wl.x.get("short") or "n"
            ns = self.wl_ns(w)
            parts.append(f"{w} at {xs} = {fmt_n(min(ns))}" if len(ns) == 1 else
                         f"{w} at each peer's largest {xs}")
        return ", ".join(parts)

    def directions(self):
        """"Lower is better in every column except ... (higher is better)" or the like."""
        higher = [c.name() for c in self.columns if c.m.better == "higher"]
        none = [c.name() for c in self.columns if c.m.better not in ("lower", "higher")]
        text = "Lower is better in every column" + (
            f" but {', '.join(higher)}, where higher is better" if higher else "")
        if none:
            text += f"; {', '.join(none)} has no direction"
        return text


# ---- the figure -----------------------------------------------------------------------------------

PANEL_COLS = 3
ROW_PT = 6.6  # height of one peer's row
LABEL_PT = 5.5  # peer names
TITLE_PT = 16  # a panel's two-line title
XTICS_PT = 10  # a panel's x tick labels
GAP_PT = 7  # between rows of panels
BAND = "#e3ebf6"  # behind timerkit's engines


def figure_of(field):
    """The load.Figure the field is drawn as: a workload of its own, whose rows are the
    columns' rows (for the footer's repetitions)."""
    rows = list(dict.fromkeys(c.rw for c in field.declared))
    wl = load.Workload(NAME, "the field", {"label": "", "short": "", "scale": "lin"},
                       [(rw, "") for rw in rows], [])
    return load.Figure(NAME, "field", wl, "double", TITLE, "", load.Axis("", "auto"),
                       load.Axis("", "auto"), [], [])


def _x_axis(vals, unit):
    """The value axis of a panel, as gnuplot commands; vals: (median, ci_lo, ci_hi). Log when every
    value is positive and they span 30x or more (as auto_log), with room around the outermost
    dots; else linear from 0 (a little left of it, so that a dot at 0 clears the axis)."""
    mn, mx = min(v[0] for v in vals), max(v[0] for v in vals)
    lo_all, hi_all = min(v[1] for v in vals), max(v[2] for v in vals)
    big = unit.si and hi_all >= 1e4
    if mn > 0 and lo_all > 0 and mx / mn >= 30:
        fmt = gpq("%.0s %c" + unit.si_suffix) if big else "LOGFMT"
        return (f"set logscale x 10; set xrange [{num(lo_all / 1.5)}:{num(hi_all * 1.5)}]; "
                f"set xtics autofreq; set mxtics default; set format x {fmt}")
    if hi_all == 0 and lo_all == 0:  # nothing but zeros (idle peers' wake-ups): 0 and 1 shown
        return "unset logscale x; set xrange [-0.06:1]; set xtics 0, 1; unset mxtics; set format x '%g'"
    left, right = min(lo_all, 0.0), max(hi_all, 0.0)
    pad = 0.05 * (right - left)
    fmt = gpq("%.1s %c" + unit.si_suffix) if big else "'%g'"
    return (f"unset logscale x; set xrange [{num(left - pad)}:{num(right + pad)}]; "
            f"set xtics autofreq; unset mxtics; set format x {fmt}")


def prepare(figs, run):
    """Write the field's script and data into figs' figures/src/ (after Figures.prepare, which
    clears that folder); nothing when the manifest declares none of its metrics."""
    field = Field(run)
    if not field.declared:
        return None
    fig = figure_of(field)
    if not field.rows:
        rows = ", ".join(dict.fromkeys(f"{c.rw}/{c.m.name}" for c in field.declared))
        figs.skip(fig, f"no {rows} rows")
        return field
    draw(figs, fig, field)
    return field


def draw(figs, fig, field):
    cols = field.columns
    # rows from the top: each group's name, then its peers
    ys, heads, y = {}, [], 0
    for g in field.groups:
        heads.append((y, g.label))
        y += 1
        for r in g.rows:
            ys[r.peer.id] = y
            y += 1
    nrows = y
    npanels = len(cols)
    pcols = min(PANEL_COLS, npanels)
    prows = -(-npanels // pcols)
    w_in = SIZES[fig.size][0]
    top_pt = 14 + (14 if figs.titles else 0)
    bottom_pt = 6 if figs.bare else 18
    plot_pt = nrows * ROW_PT
    h_pt = top_pt + prows * (TITLE_PT + plot_pt + XTICS_PT + GAP_PT) + bottom_pt
    h_in = float("%.2f" % (h_pt / 72))
    h_pt = h_in * 72
    g = figs.begin(fig, figs.data_text(fig, [(c.rw, c.m.name) for c in cols]), multi=True,
                   height_in=h_in)
    label_pt = max([text_pt(r.peer.label, LABEL_PT) * (1.1 if r.peer.kind == "engine" else 1.0)
                    for r in field.rows] + [text_pt(lab, 6) * 1.15 for _, lab in heads]) + 8
    left = (label_pt + 4) / (w_in * 72)
    right, gap = 0.985, 22 / (w_in * 72)
    pw = (right - left - (pcols - 1) * gap) / pcols

    def sy(pt):  # a height in points from the top, as a screen coordinate
        return "%.4f" % (1 - pt / h_pt)

    g("set multiplot")
    if figs.titles:
        g(f"set label 103 {gpq(fig.title)} at screen 0.5, screen {sy(9)} center font ',7' noenhanced")
    engines = [r for r in field.rows if r.peer.kind == "engine"]
    note = "Each dot a median at the peer's largest n; –: no value."
    if engines:
        note = "Shaded rows, bold names: timerkit's engines. " + note
    g(f"set label 104 {gpq(note)} at screen 0.008, screen {sy(top_pt - 5)} left "
      f"font ',{KEY_PT}' noenhanced")
    g("unset key; set border 1 lw 0.8; set xtics nomirror out scale 0.5 font ',5.5'")
    g("set ytics scale 0 (" + ", ".join(f"'' {ys[r.peer.id]}" for r in field.rows) + ")")
    g("set grid xtics ytics lw 0.4 lc rgb '#dddddd' dt 1")
    g(f"set yrange [{num(nrows - 0.5)}:-0.5]")
    # timerkit's engines on a shaded band; a rule above each group but the first
    k = 0
    run_start = None
    flat = [r for gr in field.groups for r in gr.rows]
    for i, r in enumerate(flat + [None]):
        eng = r is not None and r.peer.kind == "engine"
        if eng and run_start is None:
            run_start = ys[r.peer.id]
        if not eng and run_start is not None:
            end = ys[flat[i - 1].peer.id]
            k += 1
            g(f"set object {k} rect from graph 0, first {num(run_start - 0.5)} to graph 1, "
              f"first {num(end + 0.5)} behind fc rgb '{BAND}' fs solid 1.0 noborder")
            run_start = None
    for j, (hy, _) in enumerate(heads[1:], 1):
        g(f"set arrow {j} from graph 0, first {num(hy - 0.5)} to graph 1, first {num(hy - 0.5)} "
          f"nohead lc rgb '#888888' lw 0.6 back")
    # the names, in the first panel of each row of panels
    names = []
    for hy, lab in heads:
        names.append(f"set label {200 + len(names)} {gpq(lab)} at graph 0, first {num(hy)} right "
                     f"offset character -0.5, 0 font FONT.':Bold Italic,6' textcolor rgb '#333333' "
                     f"noenhanced")
    for r in flat:
        bold = ":Bold" if r.peer.kind == "engine" else ""
        names.append(f"set label {200 + len(names)} {gpq(r.peer.label)} at graph 0, first "
                     f"{num(ys[r.peer.id])} right offset character -0.5, 0 "
                     f"font FONT.'{bold},{LABEL_PT}' noenhanced")
    unnames = f"do for [i=200:{200 + len(names) - 1}] {{ unset label i }}"
    for i, c in enumerate(cols):
        pr, pc = divmod(i, pcols)
        x0 = left + pc * (pw + gap)
        t0 = top_pt + pr * (TITLE_PT + plot_pt + XTICS_PT + GAP_PT) + TITLE_PT
        g(f"set lmargin at screen {'%.4f' % x0}; set rmargin at screen {'%.4f' % (x0 + pw)}; "
          f"set tmargin at screen {sy(t0)}; set bmargin at screen {sy(t0 + plot_pt)}")
        better = BETTER_TEXT.get(c.m.better, "")
        title = gpq(c.head()) + (f'."\\n".{gpq(better)}' if better else "")
        g(f"set title {title} offset 0,-0.9 font ',6' noenhanced")
        if pc == 0:
            g("\n".join(names))
        rows = [(ys[r.peer.id], r) + r.values[i] for r in flat if i in r.values]
        vals = [cell.summary()[:3] for *_, cell in rows]
        g(_x_axis(vals, c.m.unit))
        data = []
        for yy, r, n, cell in rows:
            med, clo, chi, cnt = cell.summary()[:4]
            data.append((yy, med, clo, chi, n, cnt, r.peer.file))
        dat = figs.write_dat(f"{NAME}.{load._safe(c.rw)}.{load._safe(c.m.name)}.dat",
                             f"{NAME}, {c.rw}/{c.m.name}: row median ci_lo ci_hi n reps peer", data)
        # '–' where a peer has no value; the n of a value at a smaller n than the panel's others
        missing = [ys[r.peer.id] for r in flat if i not in r.values]
        marks = [f"at graph 0.015, first {num(yy)} left font ',7' textcolor rgb '#555555'"
                 for yy in missing]
        top_n = max(n for _, _, n, _ in rows)
        xs = c.wl.x.get("short") or "n"
        marks += [f"at graph 0.995, first {num(yy)} right font ',5' textcolor rgb '#555555'"
                  for yy, _, n, _ in rows if n < top_n]
        texts = ["'–'"] * len(missing) + [gpq(f"{xs} = {fmt_n(n)}") for _, _, n, _ in rows
                                          if n < top_n]
        for j, (t, at) in enumerate(zip(texts, marks)):
            g(f"set label {400 + j} {t} {at} noenhanced")
        parts = []
        for j, (yy, r, n, cell) in enumerate(rows):
            s = r.peer.slot
            parts.append(f"{gpq(dat)} every ::{j}::{j} using 2:1:3:4 with xerrorbars "
                         f"lc rgb PC[{s}] pt PT[{s}] ps PS*1.3 lw 0.8 notitle")
        g("plot " + ", \\\n    ".join(parts))
        if marks:
            g(f"do for [i=400:{400 + len(marks) - 1}] {{ unset label i }}")
        if pc == 0:
            g(unnames)
        if i == 0:
            g("unset label 101; unset label 102; unset label 103; unset label 104")
    g("unset multiplot")
    at = field.at_text()
    figs.finish(g, sentences(
        "Every peer's headline values side by side: a panel per value, a dot per peer, the peers "
        "grouped by timer design (heap, hashed wheel, hierarchical wheel, then the others), "
        "timerkit's engines on shaded rows with bold names, – where a peer has no value (it "
        "cannot express the workload, or did not run it). Each panel's title says whether lower or "
        "higher is better; a panel whose values span 30x or more has a log axis",
        f"Values are at each peer's largest n: {at}" if at else "",
        figs.bar_statement(fig, "Dots")))
