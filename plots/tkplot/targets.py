# SPDX-License-Identifier: MIT
"""The targets a run is held to, and whether it met them: a section of report.md and a table on
the renderer's standard output (tkbench plot, make bench).

The targets come from the run's manifest.json (`targets`; tkbench writes its table of them,
bench/targets.c, the one place they are written down). Each is a metric of one workload for one
peer (its spec), either against a bound of its own (`ref` None) or as a ratio to a reference peer
measured in the same run; at the largest n both peers ran. A target whose peer, reference or
workload is not in the run says "not run"; `bound` None shows a figure for reference, with no
verdict.
"""

from . import stats
from .report import fmt_value, md_escape, table, DASH


def _cells(run, peer, t):
    """{n: Cell} of a peer's metric, or {}."""
    ids = {p.id for p in run.man.peers if p.spec == peer or p.id == peer}
    out = {}
    for (pid, rw, n, m), cell in run.cells.items():
        if pid in ids and rw == t.workload and m == t.metric:
            out[n] = cell
    return out


def _unit(run, t):
    wl = run.man.workload(t.workload)
    m = wl.metric(t.metric) if wl else None
    return m.unit if m else None


def _n_text(n):
    from .figures import fmt_n
    return fmt_n(n)


def evaluate(run, t):
    """(value text, bound text, verdict, n) of one target in one run."""
    unit = _unit(run, t)
    bound = DASH if t.bound is None else (
        f"{t.op} {t.bound:g}x" if t.ref else f"{t.op} {fmt_value(t.bound, unit) if unit else t.bound}"
        + (f" {unit.text}" if unit else ""))
    mine = _cells(run, t.peer, t)
    refs = _cells(run, t.ref, t) if t.ref else None
    if unit is None:
        return f"not run ({t.workload})", bound, "not run", None
    missing = [p for p, c in ((t.peer, mine), (t.ref, refs)) if p is not None and not c]
    if missing:
        return f"not run ({', '.join(missing)})", bound, "not run", None
    ns = set(mine) & set(refs) if t.ref else set(mine)
    if not ns:
        return "not run (no common n)", bound, "not run", None
    n = max(ns)
    if t.ref:
        r = stats.ratio_ci(refs[n].reps(), mine[n].reps())
        if r is None:
            return "reference is 0", bound, "–", n
        value = r[0]
        text = f"{value:.2f}x ({fmt_value(mine[n].median, unit)} / " \
               f"{fmt_value(refs[n].median, unit)} {unit.text})"
        if r[1] != r[2]:
            text += f" [{r[1]:.2f}, {r[2]:.2f}]"
    else:
        value = mine[n].median
        text = f"{fmt_value(value, unit)} {unit.text}"
    if t.bound is None:
        verdict = DASH
    else:
        met = value <= t.bound if t.op == "<=" else value >= t.bound
        verdict = "met" if met else "NOT met"
    return text, bound, verdict, n


def rows(run):
    out = []
    for t in run.man.targets:
        text, bound, verdict, n = evaluate(run, t)
        where = f"{t.workload} {t.metric}" + (f", n = {_n_text(n)}" if n is not None else "")
        out.append((t, where, text, bound, verdict))
    return out


def targets_md(run):
    """The report's section (a list of lines)."""
    rs = rows(run)
    if not any(v != "not run" for *_, v in rs):
        return []
    body = [[md_escape(t.what), md_escape(where), md_escape(text), md_escape(bound), verdict,
             md_escape(t.source)] for t, where, text, bound, verdict in rs]
    return ["## Targets", "",
            "Each target's peer against its bound, or against the reference peer measured in the "
            "same run (value / reference, medians, with the 95 % bootstrap interval of the ratio "
            "when there are repetitions), at the largest n both ran; issue 18 states its targets at "
            "N = 1e6. The targets are written down once, in `bench/targets.c`, and come with the "
            "run's `manifest.json`.", "",
            table(["target", "measured at", "value", "target", "verdict", "from"], body,
                  "llrrll"), ""]


def targets_text(run):
    """The same as plain text for a terminal, or "" when the run has none of the peers."""
    rs = rows(run)
    if not any(v != "not run" for *_, v in rs):
        return ""
    lines = [(t.what, text, bound, verdict) for t, where, text, bound, verdict in rs]
    w = [max(len(x[i]) for x in lines) for i in range(3)]
    out = ["Targets (medians, at the largest n both ran; bench/targets.c):"]
    out += [f"  {a:<{w[0]}}  {b:>{w[1]}}  {c:>{w[2]}}  {d}" for a, b, c, d in lines]
    return "\n".join(out)
