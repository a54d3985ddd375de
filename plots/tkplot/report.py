# SPDX-License-Identifier: MIT
"""report.md (one run) and compare.md (several runs), from the manifest and the statistics.

Every value is the median of its repetitions with the 95 % bootstrap confidence interval of the
median in brackets: `107.9 [105.3, 108.7]`; `107.9` for a single repetition; `–` when absent.
Sections, tables and captions come from manifest.json: a workload's section holds its tables and
its figures, in the manifest's order.
"""

import os
import math

from . import field, stats
from .figures import fmt_n

DASH = "–"
SI = "kMGTPE"
FEW_REPS = 5  # fewer repetitions than this: the report says the intervals are rough


def fmt(v):
    """A value for a table: 4 significant digits or so, whole numbers from 1000."""
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_value(v, unit):
    """A value in its unit: SI prefixes from 1e4 for an si unit (21.6M), as its axes have them;
    whole counts without a point."""
    if unit.si and abs(v) >= 1e4:
        e = min(int(math.log10(abs(v)) // 3), len(SI))
        return fmt(v / 1000 ** e) + SI[e - 1]
    if unit.name == "count" and v == int(v):
        return "%d" % v
    return fmt(v)


def cell_text(cell, unit):
    if cell is None:
        return DASH
    med, lo, hi, count = cell.summary()[:4]
    if count < 2:
        return fmt_value(med, unit)
    return f"{fmt_value(med, unit)} [{fmt_value(lo, unit)}, {fmt_value(hi, unit)}]"


def md_escape(s):
    return str(s).replace("|", "\\|")


def table(header, rows, align=None):
    """A Markdown table; align: "l" or "r" per column (default: the first left, the rest right)."""
    align = align or "l" + "r" * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |",
           "|" + "".join(" --- |" if a == "l" else " ---: |" for a in align)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def unit_head(m):
    return f"{m.label} ({m.unit.text})"


def range_text(counts):
    lo, hi = min(counts), max(counts)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


STATS_NOTE = (
    "Values are medians of the repetitions with a 95 % confidence interval of the median in "
    "brackets (percentile bootstrap over the repetitions, 2,000 resamples): `107.9 [105.3, 108.7]`; "
    "a value measured once has no interval. The figures draw the same: points and bars are "
    "medians, error bars the 95 % intervals.")


class RunView:
    """One run's cells arranged by workload, for the tables."""

    def __init__(self, run):
        self.run = run
        self.by = {}  # (row workload, metric) -> {peer id: {n: cell}}
        for (pid, rw, n, m), cell in run.cells.items():
            self.by.setdefault((rw, m), {}).setdefault(pid, {})[n] = cell

    def peers_of(self, rws, metrics):
        have = set()
        for rw in rws:
            for m in metrics:
                have |= set(self.by.get((rw, m), {}))
        return [p for p in self.run.man.peers if p.id in have]

    def counts(self, wl):
        rows = {rw for rw, _ in wl.rows}
        return [c.count for (pid, rw, n, m), c in self.run.cells.items() if rw in rows]


def workload_tables(view, wl):
    """The Markdown tables of one workload (a list of blocks)."""
    blocks = []
    xs = wl.x.get("short") or "n"
    rws = [rw for rw, _ in wl.rows]
    metrics = [m for m in wl.metrics if any((rw, m.name) in view.by for rw in rws)]
    if not metrics:
        return blocks
    if len(wl.rows) > 1:
        # variants: a peer x variant table per metric, at each peer's largest n
        ns = set()
        for m in metrics:
            head = [unit_head(m)] + [md_escape(lab or rw) for rw, lab in wl.rows]
            rows = []
            for p in view.peers_of(rws, [m.name]):
                r = [md_escape(p.label)]
                for rw, _ in wl.rows:
                    cs = view.by.get((rw, m.name), {}).get(p.id)
                    if cs:
                        ns.add(max(cs))
                        r.append(cell_text(cs[max(cs)], m.unit))
                    else:
                        r.append(DASH)
                rows.append(r)
            blocks.append(table(head, rows))
        where = f"At {xs} = {fmt_n(min(ns))}." if len(ns) == 1 else f"At each peer's largest {xs}."
        return [where] + blocks
    rw = rws[0]
    multi = [m for m in metrics if len({n for cs in view.by[(rw, m.name)].values() for n in cs}) > 1]
    single = [m for m in metrics if m not in multi]
    for m in multi:
        per = view.by[(rw, m.name)]
        ns = sorted({n for cs in per.values() for n in cs})
        head = [f"{unit_head(m)} at {xs} ="] + [fmt_n(n) for n in ns]
        rows = []
        for p in view.peers_of([rw], [m.name]):
            cs = per[p.id]
            rows.append([md_escape(p.label)] + [cell_text(cs.get(n), m.unit) for n in ns])
        blocks.append(table(head, rows))
    if single:
        ns = sorted({n for m in single for cs in view.by[(rw, m.name)].values() for n in cs})
        peers = view.peers_of([rw], [m.name for m in single])

        def one(p, m):
            cs = view.by[(rw, m.name)].get(p.id)
            return cell_text(cs[max(cs)], m.unit) if cs else DASH

        def head_of(m):
            h = unit_head(m)
            if len(ns) > 1:
                n1 = {n for cs in view.by[(rw, m.name)].values() for n in cs}
                h += f" at {xs} = {fmt_n(min(n1))}"
            return h

        if len(ns) == 1 and wl.x.get("short"):
            blocks.append(f"At {xs} = {fmt_n(ns[0])}.")
        if len(peers) == 1 and not multi:
            p = peers[0]
            blocks.append(table(["measure", md_escape(p.label)],
                                [[md_escape(head_of(m)), one(p, m)] for m in single]))
        else:
            blocks.append(table(["peer"] + [md_escape(head_of(m)) for m in single],
                                [[md_escape(p.label)] + [one(p, m) for m in single] for p in peers]))
    return blocks


def _diff_row(view, wl, other, p, cp):
    """One peer's differences, {column index: (n, value)}, at the largest n both workloads have of
    each column's metrics (this peer's, and its core peer's of the other workload)."""
    rw, orw = wl.rows[0][0], other.rows[0][0]
    out = {}
    for k, c in enumerate(wl.diff.columns):
        mine = view.by.get((rw, c.metric), {}).get(p.id, {})
        core = view.by.get((orw, c.minus), {}).get(cp.id, {})
        ns = set(mine) & set(core)
        if ns:
            n = max(ns)
            out[k] = (n, mine[n].median - core[n].median)
    return out


def diff_md(view, wl):
    """A workload's table of differences to another workload (its manifest `diff`: what the
    executor adds to the engine's core, docs/results-format.md): per peer with a core peer, this
    workload's median minus its core peer's median of the other workload, at the largest n both
    have; each column's aim beside it. A list of blocks."""
    d, man = wl.diff, view.run.man
    other = man.workload(d.minus) if d is not None else None
    if other is None or any(wl.metric(c.metric) is None for c in d.columns):
        return []
    rows, ns = [], set()
    for p in man.peers:
        cp = next((q for q in man.peers if p.core_peer and q.spec == p.core_peer), None)
        got = _diff_row(view, wl, other, p, cp) if cp else {}
        if not got:
            continue
        ns |= {n for n, _ in got.values()}
        rows.append([md_escape(p.label)] + [
            fmt_value(got[k][1], wl.metric(c.metric).unit) if k in got else DASH
            for k, c in enumerate(d.columns)])
    if not rows:
        return []
    head = [f"{d.label} ({wl.name} − {d.minus})"] + [
        unit_head(wl.metric(c.metric)) for c in d.columns]
    aims = ["aim"] + [f"≤ {c.aim:g}" if c.aim is not None else DASH for c in d.columns]
    xs = wl.x.get("short") or "n"
    at = f"at {xs} = {fmt_n(min(ns))}" if len(ns) == 1 else f"at each peer's largest {xs}"
    intro = (f"The {d.label}: each peer's median in {wl.name} minus the median of its own core "
             f"(the same engine and parameters) in {d.minus}, {at}; a difference of medians, "
             f"without an interval. The last row is the aim.")
    return [intro, table(head, rows + [aims])]


def field_md(run, drawn):
    """The section "The field" (field.py): a row per peer with any of the headline values, grouped
    by design, timerkit's engines in bold, a column per value at the peer's largest n (and that n
    where the peers' differ); then the figure `field`. Nothing when the manifest declares none of
    the values."""
    f = field.Field(run)
    if not f.declared:
        return []
    out = ["## The field", ""]
    if not f.rows:
        return out + ["No rows of the field's workloads in results.csv.", ""]
    at = f.at_text()
    out += [f"Every peer's headline values side by side, grouped by timer design (heap, hashed "
            f"wheel, hierarchical wheel, then the others); timerkit's engines are in **bold**. Each "
            f"value is the median of the peer's repetitions at its largest n ({at}); the intervals "
            f"are in each workload's section. {DASH}: the peer has no value there (it cannot "
            f"express the workload, or did not run it). {f.directions()}. The floor is left out, "
            f"and so is a peer with none of these values.", ""]
    head, cols = ["design", "peer"], []  # cols: ("n", workload) or ("v", column index)
    for w in f.workloads():
        xs = run.man.workload(w).x.get("short") or "n"
        if len(f.wl_ns(w)) > 1:
            head.append(md_escape(f"{w} {xs}"))
            cols.append(("n", w))
        for i, c in enumerate(f.columns):
            if c.wl.name == w:
                head.append(md_escape(c.head()))
                cols.append(("v", i))
    rows = []
    for g in f.groups:
        for r in g.rows:
            lab = md_escape(r.peer.label)
            row = [md_escape(g.label), f"**{lab}**" if r.peer.kind == "engine" else lab]
            for what, x in cols:
                if what == "n":
                    row.append(fmt_n(r.ns[x]) if x in r.ns else DASH)
                    continue
                if x not in r.values:
                    row.append(DASH)
                    continue
                c = f.columns[x]
                n, cell = r.values[x]
                text = fmt_value(cell.median, c.m.unit)
                if n != r.ns[c.wl.name]:
                    text += f" ({c.wl.x.get('short') or 'n'} = {fmt_n(n)})"
                row.append(text)
            rows.append(row)
    out += [table(head, rows, "ll" + "r" * (len(head) - 2)), ""]
    if field.NAME in drawn:
        out += [figure_md(drawn[field.NAME]), ""]
    return out


def frontier_md(view, fig):
    """report.md's table of a frontier figure with a `table`: per line (frontier.py) and slack,
    the table's metrics, the x metric against the line's slack-0 point, the window the y metric
    (a lateness in us) is held to (the point's slack and OS slack, its engine's precision and the
    median a target of the row adds to its bound: the floor's wake-up p99), and the verdicts of
    the targets (bench/targets.c) of that peer and row."""
    from . import frontier
    from .targets import evaluate, _plus
    run = view.run
    sx, sy = fig.series
    rw = sx.workload

    def cell(p, m):
        cs = view.by.get((rw, m.name), {}).get(p.id)
        return cs[max(cs)] if cs else None

    peers = [p for p in run.man.peers if cell(p, sx.metric) and cell(p, sy.metric)]
    lines = frontier.lines(peers)
    if not fig.table or not lines:
        return []
    row_targets = [t for t in run.man.targets if t.workload == rw]
    plus_t = next((t for t in row_targets if t.plus), None)
    plus = _plus(run, plus_t) if plus_t is not None else None
    window = sy.metric.unit.name == "us" and plus is not None
    head = ["line", "slack"] + [unit_head(m) for m in fig.table] + [f"{sx.metric.label} / slack 0"]
    if window:
        head += [f"{sy.metric.label} window ({sy.metric.unit.text})"]
    head += ["targets"]
    rows = []
    for ln in lines:
        zero = next((p for slack, p in ln.points if slack == 0), None)
        for slack, p in ln.points:
            r = [md_escape(ln.label), frontier.slack_text(slack)]
            r += [cell_text(cell(p, m), m.unit) for m in fig.table]
            x, x0 = cell(p, sx.metric), cell(p, sx.metric) if zero is None else cell(zero, sx.metric)
            r.append(f"{x.median / x0.median:.2f}" if zero is not None and x0 and x0.median else DASH)
            if window:
                if p.precision_ns is None:
                    r.append(DASH)
                else:
                    w = (p.slack_ns + p.os_slack_ns + p.precision_ns) / 1000 + plus
                    y = cell(p, sy.metric).median
                    r.append(f"{fmt(w)} ({'within' if y <= w else 'OVER'})")
            verdicts = [f"{t.metric}: {evaluate(run, t)[2]}" for t in row_targets
                        if t.peer == p.spec]
            r.append(md_escape("; ".join(verdicts)) if verdicts else DASH)
            rows.append(r)
    note = (f"Each line's points by slack (`slack=`; on an OS-timer-slack line, `os_slack=`: "
            f"the Linux timer slack of the engine's threads). {md_escape(sx.metric.label)} / "
            f"slack 0 is the point's {md_escape(sx.metric.label)} over its line's at slack 0")
    if window:
        note += (f"; the window is slack + the engine's precision + {plus_t.plus['peer']}'s "
                 f"{plus_t.plus['metric']} ({fmt(plus)} us), the bound of the targets' p99")
    return [note + ". Targets: `bench/targets.c`, judged in the Targets section.",
            table(head, rows, "ll" + "r" * (len(head) - 3) + "l")]


def few_reps_note(counts):
    if not counts or min(counts) >= FEW_REPS:
        return None
    few = "fewer than 5" if max(counts) < FEW_REPS else "fewer than 5 in places"
    rng = range_text(counts)
    return (f"{rng} repetition{'s' if max(counts) > 1 else ''}: {few}, so these intervals are "
            f"rough; rerun with `--reps 5` or more for figures that go into a paper.")


def figure_md(job):
    n = job.fig.name
    return (f"![{job.fig.title}](figures/{n}.png)\n\n*{job.caption}* "
            f"([PDF](figures/{n}.pdf), [SVG](figures/{n}.svg))")


def not_drawn(figs):
    lines = [f"- `{name}`: {why}" for name, why in figs.skipped]
    lines += [f"- `{j.fig.name}`: drawing failed (see the renderer's stderr)" for j in figs.jobs
              if not j.ok]
    return lines


def meta_table(runs, folders=False):
    keys = []
    for r in runs:
        for k in r.meta:
            if k not in keys:
                keys.append(k)
    head = ["key"] + [md_escape(r.label) for r in runs] if len(runs) > 1 else ["key", "value"]
    rows = []
    if folders:
        rows.append(["folder"] + [f"`{r.folder}`" for r in runs])
    for k in keys:
        rows.append([md_escape(k)] + [md_escape(r.meta.get(k, "")) for r in runs])
    return "\n".join(["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
                     + ["| " + " | ".join(r) + " |" for r in rows])


def render_report(run, figs):
    """report.md of one run."""
    man = run.man
    view = RunView(run)
    out = [f"# timerkit benchmark report: {run.label}", ""]
    srcs = "`results.csv`, `manifest.json`" + (", `hist/*.hgrm`" if run.hists else "")
    out += [f"Rendered by `plots/render.py` from {srcs}. {STATS_NOTE} Every figure is also in "
            f"`figures/` as PDF and SVG; its gnuplot script and data are in `figures/src/`.", ""]
    out += ["## Run", ""]
    out += [meta_table([run]) if run.meta else "No metadata.txt or metadata.json in this folder.", ""]
    from .targets import targets_md  # targets.py reads this module's formatting
    out += targets_md(run)
    drawn = {j.fig.name: j for j in figs.jobs if j.ok}
    out += field_md(run, drawn)
    for wl in man.workloads:
        out += [f"## {wl.name}: {wl.summary}" if wl.summary else f"## {wl.name}", ""]
        counts = view.counts(wl)
        if not counts:
            out += ["No rows of this workload in results.csv.", ""]
        note = few_reps_note(counts)
        if note:
            out += [note, ""]
        for b in workload_tables(view, wl) + diff_md(view, wl):
            out += [b, ""]
        for fig in man.figures:
            if fig.workload is wl and fig.kind == "frontier":
                out += [b + "\n" for b in frontier_md(view, fig)]
        for fig in man.figures:
            if fig.workload is wl and fig.name in drawn:
                out += [figure_md(drawn[fig.name]), ""]
    out += traces_md(run.folder)
    nd = not_drawn(figs)
    if nd:
        out += ["## Not drawn", "", "These figures were left out:", ""] + nd + [""]
    return "\n".join(out)


def traces_md(folder):
    """The replayed traces' shapes, which tkbench writes into traces/<name>/ (summary.txt,
    population and delay-cdf figures)."""
    root = os.path.join(folder, "traces")
    names = sorted(n for n in os.listdir(root)
                   if os.path.isfile(os.path.join(root, n, "summary.txt"))) if os.path.isdir(root) else []
    out = []
    for n in names:
        with open(os.path.join(root, n, "summary.txt"), encoding="utf-8", errors="replace") as f:
            summary = f.read().rstrip()
        out += [f"## Trace {n}", "", "```", summary, "```", ""]
        for fig, what in (("population", "Timers armed over the trace"),
                          ("delay-cdf", "Delays (deadline - start) of its starts")):
            if os.path.isfile(os.path.join(root, n, fig + ".png")):
                out += [f"![{what}](traces/{n}/{fig}.png)", "", f"*{what}.*", ""]
    return out


# ---- compare ------------------------------------------------------------------------------------


def compare_rows(runs, figs, wl_name):
    """Every (row workload, n, metric, peer) of one workload, in the first run's order of row
    workloads and metrics, then n, then peer display order: (row workload, n, metric, peer,
    [cell or None per run])."""
    rows = []
    wls = [r.man.workload(wl_name) for r in runs]
    rws, metrics = [], []
    for w in wls:
        if w is None:
            continue
        for rw, _ in w.rows:
            if rw not in rws:
                rws.append(rw)
        for m in w.metrics:
            if m.name not in [x.name for x in metrics]:
                metrics.append(m)
    for rw in rws:
        for m in metrics:
            ns = set()
            for ri, r in enumerate(runs, 1):
                for mp in figs.peers:
                    ns |= set(figs.index.get((ri, mp.ids.get(ri), rw, m.name), {}))
            for n in sorted(ns):
                for mp in figs.peers:
                    cells = []
                    for ri in range(1, len(runs) + 1):
                        pid = mp.ids.get(ri)
                        cells.append(figs.index.get((ri, pid, rw, m.name), {}).get(n))
                    if any(c is not None for c in cells):
                        rows.append((rw, n, m, mp, cells))
    return rows


def render_compare(runs, figs, summary):
    """compare.md; appends a line per significant difference to `summary` and returns the
    counts (comparisons, significant, too few repetitions to test)."""
    labels = [r.label for r in runs]
    first = labels[0]
    out = [f"# timerkit comparison: {' vs '.join(labels)}", ""]
    out += [f"Rendered by `plots/render.py compare`. {STATS_NOTE} Each ratio divides a run's "
            f"median by the first run's ({first}), with a 95 % bootstrap confidence interval "
            f"(independent resamples of both runs), and p is the two-sided Mann-Whitney U test of "
            f"their repetitions. A difference is marked (\"better\", \"worse\", or \"differs\" for a "
            f"metric without a direction) only when p < {stats.ALPHA}, or when both runs have at "
            f"least {stats.CI_MIN_REPS} repetitions and the ratio's interval excludes 1 (with fewer, "
            f"a bootstrap interval is too narrow to decide); \"too few repetitions\" means that no "
            f"5 % test is possible with so few (3 against 3: the smallest p is 0.1): rerun both "
            f"with `--reps {stats.CI_MIN_REPS}` or more. A significant difference is one larger "
            f"than the spread within each run: two runs of the same code on one machine may still "
            f"differ (its state, the memory layout), so compare runs made in the same conditions. "
            f"In the figures colour and point shape name the peer; dash type, "
            f"filled or open points and bar patterns name the run.", ""]
    out += ["## Runs", "", meta_table(runs, folders=True), ""]
    runs_at = len(out)
    machine_sig, machine_seen = [], False
    total = sig = untestable = 0
    drawn = {j.fig.name: j for j in figs.jobs if j.ok}
    seen_wl, wl_order = set(), []
    for r in runs:
        for w in r.man.workloads:
            if w.name not in seen_wl:
                seen_wl.add(w.name)
                wl_order.append(w)
    for wl in wl_order:
        rows = compare_rows(runs, figs, wl.name)
        out += [f"## {wl.name}: {wl.summary}" if wl.summary else f"## {wl.name}", ""]
        counts = [c.count for *_, cells in rows for c in cells if c is not None]
        note = few_reps_note(counts)
        if note:
            out += [note, ""]
        if rows:
            head = ["workload", "n", "metric", "peer"] + [md_escape(l) for l in labels]
            for l in labels[1:]:
                head += [md_escape(f"{l}/{first}"), "p", "change"]
            body = []
            for rw, n, m, mp, cells in rows:
                r = [rw, fmt_n(n), md_escape(f"{m.name} ({m.unit.text})"), md_escape(mp.label)]
                r += [cell_text(c, m.unit) for c in cells]
                for ri in range(1, len(runs)):
                    a, b = cells[0], cells[ri]
                    if a is None or b is None:
                        r += [DASH, DASH, ""]
                        continue
                    c = stats.compare(a.reps(), b.reps(), m.better)
                    total += 1
                    if not c["testable"]:
                        untestable += 1
                    if c["significant"]:
                        sig += 1
                    ratio = DASH if c["ratio"] is None else (
                        "%.3f" % c["ratio"] if c["lo"] == c["hi"] else
                        "%.3f [%.3f, %.3f]" % (c["ratio"], c["lo"], c["hi"]))
                    mark = c["mark"] if c["testable"] else "too few repetitions"
                    r += [ratio, "%.3g" % c["p"], mark]
                    if wl.level == "machine":
                        machine_seen = True
                        if c["significant"]:
                            machine_sig.append(f"{m.name} {ratio.split(' ')[0]}x")
                    if c["significant"]:
                        summary.append(f"{c['mark']}: {rw} {fmt_n(n)} {m.name} {mp.label}: "
                                       f"{labels[ri]}/{first} {ratio}, p = {'%.3g' % c['p']}")
                body.append(r)
            out += [table(head, body, "llll" + "r" * len(runs) + "rrl" * (len(runs) - 1)), ""]
        else:
            out += ["No rows of this workload in any run.", ""]
        for fig in base_figures(runs):
            if fig.workload.name == wl.name and fig.name in drawn:
                out += [figure_md(drawn[fig.name]), ""]
    nd = not_drawn(figs)
    if nd:
        out += ["## Not drawn", "", "These figures were left out:", ""] + nd + [""]
    machine = machine_note(runs, machine_sig, machine_seen)
    if machine:
        out[runs_at:runs_at] = ["**The machine.** " + machine, ""]
        summary.append("note: " + machine)
    return "\n".join(out), (total, sig, untestable)


def machine_note(runs, differences, seen):
    """What compare says of the machine-level workloads (the floor: the machine measuring
    itself), or "": their significant differences mean the machine was not in the same state, so
    the peers' differences may be the machine's; without them in every run nobody can tell."""
    machine = [w.name for w in runs[0].man.workloads if w.level == "machine"]
    if differences:
        return (f"The machine itself measured differently in these runs ({', '.join(differences)}): "
                f"it was not in the same state, so differences of the peers may be the machine's "
                f"rather than the code's. Compare runs made back to back on a quiet machine, or "
                f"put the configurations to compare side by side as peers of one run.")
    if not seen:
        names = ", ".join(machine) or "no machine-level workload"
        return (f"Not every run measured the machine ({names}): compare cannot tell a change of "
                f"the machine from a change of the code.")
    return ""


def base_figures(runs):
    """The figures of all runs by name, the first run's entry winning."""
    seen, figs = set(), []
    for r in runs:
        for f in r.man.figures:
            if f.name not in seen:
                seen.add(f.name)
                figs.append(f)
    return figs
