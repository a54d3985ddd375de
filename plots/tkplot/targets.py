# SPDX-License-Identifier: MIT
"""The targets a run is held to, and whether it met them: a section of report.md and a table on
the renderer's standard output (tkbench plot, make bench).

The targets come from the run's manifest.json (`targets`; tkbench writes its table of them,
bench/targets.c, the one place they are written down, one target per peer). Every target is
judged by one path (`evaluate`): a peer's metric of a row workload at an n (`n`, else the largest
n it and its reference both ran), its median itself, or its ratio to a reference: the same metric
of another peer at that n (`ref`), or of the same peer at another n (`ref_n`: how it scales). The
value is held to `bound` with `op`; a target with `plus` adds to its bound another peer's median
(issue 28: the floor's wake-up p99), "not run" without it. A target whose peer, reference, workload or n is not in the
run, or that needs more cores than the machine has (`min_cores`), says "not run"; one with fewer
repetitions than `min_reps` gives its value without a verdict; `bound` None shows a figure for
reference, with no verdict.
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
    wl = run.man.owner.get(t.workload)
    m = wl.metric(t.metric) if wl else None
    return m.unit if m else None


def _n_text(n):
    from .figures import fmt_n
    return fmt_n(n)


def _bound_text(t, unit):
    if t.bound is None:
        return DASH
    if t.ref or t.ref_n:
        return f"{t.op} {t.bound:g}x"
    return f"{t.op} {fmt_value(t.bound, unit) if unit else f'{t.bound:g}'}" + (
        f" {unit.text}" if unit else "")


def _plus(run, t):
    """The median a target's bound adds (its `plus`: a peer's metric at its largest n), 0 when it
    has none, None when the run lacks it."""
    if not t.plus:
        return 0.0
    ids = {p.id for p in run.man.peers if p.spec == t.plus["peer"] or p.id == t.plus["peer"]}
    cells = {n: c for (pid, rw, n, m), c in run.cells.items()
             if pid in ids and rw == t.plus["workload"] and m == t.plus["metric"]}
    return cells[max(cells)].median if cells else None


def _cores(run):
    try:
        return int(run.meta.get("cores", ""))
    except ValueError:
        return None


def _at(t, mine, refs):
    """(n, reference n) the target is judged at, or a reason it is not run."""
    if t.n is not None and t.n not in mine:
        return f"not run (no n = {_n_text(t.n)})"
    ref_n = t.ref_n
    if ref_n is not None and ref_n not in refs:
        return f"not run (no n = {_n_text(ref_n)})"
    if t.n is not None:
        n = t.n
    else:
        ns = set(mine) & set(refs) if (t.ref and ref_n is None) else set(mine)
        if not ns:
            return "not run (no common n)"
        n = max(ns)
    rn = ref_n if ref_n is not None else n
    if refs is not None and rn not in refs:
        return f"not run (no n = {_n_text(rn)} of {t.ref})"
    return n, rn


def evaluate(run, t):
    """(value text, bound text, verdict, n) of one target in one run."""
    unit = _unit(run, t)
    bound = _bound_text(t, unit)
    if unit is None:
        return f"not run ({t.workload})", bound, "not run", None
    plus = _plus(run, t)
    if plus is None:
        return f"not run (no {t.plus['workload']} {t.plus['metric']})", bound, "not run", None
    if t.plus:
        bound = (f"{t.op} {fmt_value(t.bound, unit)} + {t.plus['metric']} "
                 f"{fmt_value(plus, unit)} = {fmt_value(t.bound + plus, unit)} {unit.text}")
    cores = _cores(run)
    if t.min_cores and cores is not None and cores < t.min_cores:
        return f"not run ({cores} cores < {t.min_cores})", bound, "not run", None
    mine = _cells(run, t.peer, t)
    refs = _cells(run, t.ref or t.peer, t) if (t.ref or t.ref_n) else None
    missing = [p for p, c in ((t.peer, mine), (t.ref, refs)) if p is not None and not c]
    if missing:
        return f"not run ({', '.join(missing)})", bound, "not run", None
    at = _at(t, mine, refs)
    if isinstance(at, str):
        return at, bound, "not run", None
    n, rn = at
    if refs is not None:
        r = stats.ratio_ci(refs[rn].reps(), mine[n].reps())
        if r is None:
            return "reference is 0", bound, DASH, n
        value = r[0]
        text = f"{value:.2f}x ({fmt_value(mine[n].median, unit)} / " \
               f"{fmt_value(refs[rn].median, unit)} {unit.text})"
        if r[1] != r[2]:
            text += f" [{r[1]:.2f}, {r[2]:.2f}]"
    else:
        value = mine[n].median
        text = f"{fmt_value(value, unit)} {unit.text}"
    reps = min(c.count for c in ([mine[n]] + ([refs[rn]] if refs is not None else [])))
    if t.bound is None:
        verdict = DASH
    elif reps < t.min_reps:
        verdict = f"{reps} of {t.min_reps} reps"
    else:
        b = t.bound + plus
        met = value <= b if t.op == "<=" else value >= b
        verdict = "met" if met else "NOT met"
    return text, bound, verdict, n


def rows(run):
    out = []
    for t in run.man.targets:
        text, bound, verdict, n = evaluate(run, t)
        where = f"{t.workload} {t.metric}" + (f", n = {_n_text(n)}" if n is not None else "")
        if n is not None and t.ref_n is not None:
            where += f" vs {_n_text(t.ref_n)}"
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
            "Each target's peer against its bound, or against a reference measured in the same "
            "run: another peer at the same n, or the same peer at another n (value / reference, "
            "medians, with the 95 % bootstrap interval of the ratio when there are repetitions), "
            "at the n the target names, else the largest n both ran. A target that needs more "
            "repetitions than the run has gives its value without a verdict, one that needs more "
            "cores than the machine has is not run. The targets are written down once, in "
            "`bench/targets.c`, and come with the run's `manifest.json`.", "",
            table(["target", "measured at", "value", "target", "verdict", "from"], body,
                  "llrrll"), ""]


def targets_text(run):
    """The same as plain text for a terminal, or "" when the run has none of the peers."""
    rs = rows(run)
    if not any(v != "not run" for *_, v in rs):
        return ""
    lines = [(t.what, text, bound, verdict) for t, where, text, bound, verdict in rs]
    w = [max(len(x[i]) for x in lines) for i in range(3)]
    out = ["Targets (medians; bench/targets.c):"]
    out += [f"  {a:<{w[0]}}  {b:>{w[1]}}  {c:>{w[2]}}  {d}" for a, b, c, d in lines]
    return "\n".join(out)
