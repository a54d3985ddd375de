# SPDX-License-Identifier: MIT
"""Reading one results folder: manifest.json, results.csv, metadata.txt|json and hist/*.hgrm.

docs/results-format.md is the contract. Everything the renderer knows about workloads, metrics,
units, peers and figures comes from the folder's manifest.json; nothing here lists any of them
but the designs of the peers tkbench knows, for manifests without them (peer_design).
Input the renderer cannot use raises BadInput (exit status 2) with a message that names the file,
the line and what is wrong; things that are merely absent are warnings.
"""

import csv
import fnmatch
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field

from . import stats

FORMAT = 1  # the manifest format this renderer reads
FIGURE_KINDS = ("lines", "panels", "bars", "percentiles", "cdf", "frontier")
DIRECTIONS = ("lower", "higher", "none")
SCALES = ("log", "lin", "auto")
COLUMNS = ("peer", "workload", "n", "metric", "value", "unit", "rep")
NSLOTS = 24  # plots/style.gp


class BadInput(Exception):
    """A folder, CSV or manifest the renderer cannot use (exit status 2)."""


def warn(msg):
    print(f"render.py: {msg}", file=sys.stderr)


# ---- the manifest --------------------------------------------------------------------------------


@dataclass
class Unit:
    name: str
    text: str
    si: bool = False
    si_suffix: str = ""


@dataclass
class Peer:
    id: str
    spec: str
    label: str
    kind: str
    slot: int
    file: str
    description: str = ""
    core_peer: str = None  # the spec of the peer whose core level is this one's engine core
    engine: str = None  # the timerkit engine it drives ("heap"), or None
    mode: str = None  # an engine's: "task" or "embedded"
    design: str = ""  # its timer design ("heap", "hashed wheel"...), "" unknown (peer_design)
    base: str = None  # its spec without tkbench's slack parameters (None: its spec)
    slack_ns: int = 0  # slack= (every timer's window)
    os_slack_ns: int = 0  # os_slack= (its threads' Linux timer slack); 0: the run's
    precision_ns: int = None  # its engine's precision (a ticked engine's tick), None unknown


@dataclass
class Metric:
    name: str
    unit: Unit
    better: str
    label: str
    pct: float = None
    field: int = 0  # its place among the field's headline values (field.py), from 1; 0: none


@dataclass
class Workload:
    name: str
    summary: str
    x: dict  # label, short, scale
    rows: list  # [(row workload, label)]
    metrics: list  # [Metric], declaration order
    reps: int = None
    hist: bool = False
    level: str = ""  # "machine": it measures the machine itself (compare checks it first)
    diff: "Diff" = None  # a table of differences to another workload's metrics

    def metric(self, name):
        for m in self.metrics:
            if m.name == name:
                return m
        return None


@dataclass
class DiffColumn:
    metric: str  # this workload's
    minus: str  # the other workload's
    aim: float = None  # at most; None: no aim


@dataclass
class Diff:
    """This workload's metrics minus another's, per peer at the same n (docs/results-format.md)."""
    minus: str  # the other workload
    label: str
    columns: list  # [DiffColumn]


@dataclass
class Axis:
    label: str
    scale: str
    min_top: float = None


@dataclass
class Series:
    workload: str  # a row workload
    metric: Metric
    label: str


@dataclass
class Ref:
    workload: str
    metric: Metric
    label: str
    pct: float = None


@dataclass
class Figure:
    name: str
    kind: str
    workload: Workload
    size: str
    title: str
    caption: str
    x: Axis
    y: Axis
    series: list
    refs: list
    table: list = field(default_factory=list)  # a frontier's: [Metric] of report.md's table


@dataclass
class Target:
    """A target of the run (bench/targets.c): a peer's metric of a row workload at n (None: the
    largest n it and its reference both ran), against bound, or as a ratio to the same metric of
    ref at the same n, or of the peer itself at ref_n."""
    workload: str
    metric: str
    peer: str
    ref: str  # or None
    op: str  # "<=" or ">="
    bound: float  # or None: shown for reference
    what: str
    source: str
    n: float = None
    ref_n: float = None
    min_reps: int = 1  # repetitions a verdict needs
    min_cores: int = 0  # cores the machine needs; fewer: "not run"
    plus: dict = None  # the bound adds this peer's median: {workload, metric, peer}; None


@dataclass
class Manifest:
    path: str
    synthesized: bool
    units: dict
    peers: list  # display order
    workloads: list  # report order
    figures: list
    hist: list  # [(workload, peer id, path relative to the folder)]
    targets: list = field(default_factory=list)  # [Target]
    peer_by_id: dict = field(default_factory=dict)
    owner: dict = field(default_factory=dict)  # row workload -> Workload

    def workload(self, name):
        for w in self.workloads:
            if w.name == name:
                return w
        return None


class _Json:
    """Typed access to one JSON object, naming where it sits in errors."""

    def __init__(self, path, where, obj):
        if not isinstance(obj, dict):
            raise BadInput(f"{path}: {where} is not a JSON object")
        self.path, self.where, self.obj = path, where, obj

    def _fail(self, what):
        raise BadInput(f"{self.path}: {self.where} {what}")

    def get(self, key, types, default=KeyError):
        if key not in self.obj:
            if default is KeyError:
                self._fail(f"lacks the key '{key}'")
            return default
        v = self.obj[key]
        if v is None and default is not KeyError:
            return default
        if types is float:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        elif types is int:
            ok = isinstance(v, int) and not isinstance(v, bool)
        else:
            ok = isinstance(v, types)
        if not ok:
            want = {str: "a string", list: "a list", dict: "an object", bool: "true or false",
                    float: "a number", int: "an integer"}.get(types, str(types))
            self._fail(f"key '{key}' is {json.dumps(v)}, expected {want}")
        return v

    def sub(self, key, where, default=KeyError):
        v = self.get(key, dict, default)
        return None if v is None or v is default else _Json(self.path, where, v)

    def items(self, key, what, default=KeyError):
        v = self.get(key, list, default)
        return [] if v is default or v is None else [(i, x) for i, x in enumerate(v)]


def read_manifest(folder):
    path = os.path.join(folder, "manifest.json")
    if not os.path.isfile(path):
        raise BadInput(f"{folder} has no manifest.json (it was written by an older tkbench). "
                       f"Run `tkbench manifest {folder}` to write one from tkbench's workload "
                       f"descriptors, then render again.")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read: {e}")
    try:
        top = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{path} line {e.lineno} column {e.colno}: malformed JSON: {e.msg}")
    root = _Json(path, "the top level", top)
    fmt = root.get("format", int)
    if fmt > FORMAT:
        raise BadInput(f"{path}: format {fmt} is newer than this renderer reads ({FORMAT}); "
                       f"update plots/")

    units = {}
    for i, u in root.items("units", "units"):
        j = _Json(path, f"units[{i}]", u)
        name = j.get("name", str)
        j.where = f"units[{i}] ({name})"
        units[name] = Unit(name, j.get("text", str), bool(j.get("si", bool, False)),
                           j.get("si_suffix", str, ""))

    peers, by_id, slots_seen = [], {}, {}
    for i, p in root.items("peers", "peers"):
        j = _Json(path, f"peers[{i}]", p)
        pid = j.get("id", str)
        j.where = f"peers[{i}] ({pid})"
        if pid in by_id:
            j._fail("repeats an id an earlier peer has")
        slot = j.get("slot", int)
        if not 1 <= slot <= NSLOTS:
            j._fail(f"has slot {slot}; plots/style.gp has slots 1-{NSLOTS}")
        peer = Peer(pid, j.get("spec", str, pid), j.get("label", str, pid), j.get("kind", str, ""),
                    slot, j.get("file", str, _safe(pid)), j.get("description", str, ""),
                    j.get("core_peer", str, None), j.get("engine", str, None),
                    j.get("mode", str, None))
        peer.design = peer_design(peer, j.get("design", str, None))
        peer.base = j.get("base", str, peer.spec)
        peer.slack_ns = j.get("slack_ns", int, 0)
        peer.os_slack_ns = j.get("os_slack_ns", int, 0)
        peer.precision_ns = j.get("precision_ns", int, None)
        peers.append(peer)
        by_id[pid] = peer

    workloads, owner = [], {}
    for i, w in root.items("workloads", "workloads"):
        j = _Json(path, f"workloads[{i}]", w)
        name = j.get("name", str)
        j.where = f"workloads[{i}] ({name})"
        if any(o.name == name for o in workloads):
            j._fail("repeats a name an earlier workload has")
        xj = j.sub("x", f"workloads[{i}] ({name}).x")
        x = {"label": xj.get("label", str), "short": xj.get("short", str, ""),
             "scale": xj.get("scale", str, "lin")}
        if x["scale"] not in SCALES:
            xj._fail(f"has scale '{x['scale']}'; expected one of {', '.join(SCALES)}")
        metrics = []
        for k, m in j.items("metrics", "metrics"):
            mj = _Json(path, f"workloads[{i}] ({name}).metrics[{k}]", m)
            mname = mj.get("name", str)
            mj.where = f"workload {name}, metric {mname},"
            uname = mj.get("unit", str)
            if uname not in units:
                mj._fail(f"has unit '{uname}', which is not in units "
                         f"({', '.join(units) or 'none declared'})")
            better = mj.get("better", str)
            if better not in DIRECTIONS:
                mj._fail(f"has better '{better}'; expected one of {', '.join(DIRECTIONS)}")
            metrics.append(Metric(mname, units[uname], better, mj.get("label", str, mname),
                                  mj.get("pct", float, None), mj.get("field", int, 0)))
        rows = []
        for k, r in j.items("rows", "rows", None):
            rj = _Json(path, f"workloads[{i}] ({name}).rows[{k}]", r)
            rows.append((rj.get("workload", str), rj.get("label", str, "")))
        if not rows:
            rows = [(name, "")]
        wl = Workload(name, j.get("summary", str, ""), x, rows, metrics,
                      j.get("reps", int, None), bool(j.get("hist", bool, False)),
                      j.get("level", str, ""), _diff(path, j, name))
        for rw, _ in rows:
            if rw in owner:
                j._fail(f"has rows of workload '{rw}', which {owner[rw].name} has too")
            owner[rw] = wl
        workloads.append(wl)

    def metric_of(fj, what, rw, mname):
        wl = owner.get(rw)
        if wl is None:
            fj._fail(f"{what} names workload '{rw}', which no workload of manifest.json has in "
                     f"its rows")
        m = wl.metric(mname)
        if m is None:
            fj._fail(f"{what} names metric '{mname}' of {rw}, which {wl.name} does not declare; "
                     f"{wl.name} declares: {', '.join(x.name for x in wl.metrics)}")
        return m

    figures = []
    for i, f in root.items("figures", "figures"):
        fj = _Json(path, f"figures[{i}]", f)
        fname = fj.get("name", str)
        fj.where = f"figure {fname}"
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", fname):
            fj._fail("has a name that is not a plain file name (letters, digits, _ . -)")
        if any(o.name == fname for o in figures):
            fj._fail("repeats the name of an earlier figure")
        kind = fj.get("kind", str)
        if kind not in FIGURE_KINDS:
            fj._fail(f"has kind '{kind}'; expected one of {', '.join(FIGURE_KINDS)}")
        wname = fj.get("workload", str)
        wl = next((w for w in workloads if w.name == wname), None)
        if wl is None:
            fj._fail(f"belongs to workload '{wname}', which manifest.json does not declare")
        size = fj.get("size", str, "single")
        if size not in ("single", "double"):
            fj._fail(f"has size '{size}'; expected single or double")
        axes = {}
        for a in ("x", "y"):
            aj = fj.sub(a, f"figure {fname}, axis {a},", None)
            if aj is None:
                aj = _Json(path, f"figure {fname}, axis {a},", {})
            default_scale = wl.x["scale"] if (a == "x" and kind in ("lines", "panels")) else "auto"
            label = aj.get("label", str, wl.x["label"] if (a == "x" and kind in ("lines", "panels")) else "")
            scale = aj.get("scale", str, default_scale)
            if scale not in SCALES:
                aj._fail(f"has scale '{scale}'; expected one of {', '.join(SCALES)}")
            axes[a] = Axis(label, scale, aj.get("min_top", float, None))
        series = []
        for k, s in fj.items("series", "series"):
            sj = _Json(path, f"figure {fname}, series {k + 1},", s)
            rw, mname = sj.get("workload", str), sj.get("metric", str)
            m = metric_of(fj, f"series {k + 1}", rw, mname)
            if kind in ("percentiles", "cdf") and m.pct is None:
                fj._fail(f"series {k + 1} names {rw}/{mname}, which has no pct: a {kind} figure "
                         f"draws its series at their percentiles")
            series.append(Series(rw, m, sj.get("label", str, m.label)))
        if kind in ("lines", "panels", "bars") and not series:
            fj._fail(f"has no series: a {kind} figure draws its series")
        if kind == "frontier" and (len(series) != 2 or series[0].workload != series[1].workload):
            fj._fail("needs two series of one row workload: x, then y")
        refs = []
        for k, r in fj.items("refs", "refs", None):
            rj = _Json(path, f"figure {fname}, refs[{k}],", r)
            rw, mname = rj.get("workload", str), rj.get("metric", str)
            if rw not in owner:
                continue  # a reference of a workload that did not run: drawn without it
            m = metric_of(fj, f"refs[{k}]", rw, mname)
            refs.append(Ref(rw, m, rj.get("label", str, m.label), rj.get("pct", float, None)))
        table = []
        for k, mname in fj.items("table", "table", None):
            if not isinstance(mname, str):
                fj._fail(f"table[{k}] is not a metric's name")
            table.append(metric_of(fj, f"table[{k}]", series[0].workload if series else wname,
                                   mname))
        figures.append(Figure(fname, kind, wl, size, fj.get("title", str, fname),
                              fj.get("caption", str, ""), axes["x"], axes["y"], series, refs,
                              table))

    hist = []
    for i, h in root.items("hist", "hist", None):
        hj = _Json(path, f"hist[{i}]", h)
        pid = hj.get("peer", str)
        if pid not in by_id:
            hj._fail(f"names peer '{pid}', which is not in peers")
        hist.append((hj.get("workload", str), pid, hj.get("path", str)))

    targets = []
    for i, t in root.items("targets", "targets", []):
        tj = _Json(path, f"targets[{i}]", t)
        op = tj.get("op", str)
        if op not in ("<=", ">="):
            tj._fail(f"has op '{op}'; expected <= or >=")
        pj = tj.sub("plus", f"targets[{i}].plus", None)
        plus = None if pj is None else {k: pj.get(k, str) for k in ("workload", "metric", "peer")}
        targets.append(Target(tj.get("workload", str), tj.get("metric", str), tj.get("peer", str),
                              tj.get("ref", str, None), op, tj.get("bound", float, None),
                              tj.get("what", str), tj.get("source", str, ""),
                              tj.get("n", float, None), tj.get("ref_n", float, None),
                              tj.get("min_reps", int, 1), tj.get("min_cores", int, 0), plus))

    man = Manifest(path, bool(root.get("synthesized", bool, False)), units, peers, workloads,
                   figures, hist, targets)
    man.peer_by_id, man.owner = by_id, owner
    return man


# The timer design of the peers tkbench knows, for manifests written before peers had a "design"
# (the one place that knows it): a timerkit engine by its engine, any other peer by its name (the
# spec up to its parameters and mode; fnmatch patterns). The floor and unknown peers have none.
ENGINE_DESIGNS = {"heap": "heap", "wheel": "hashed wheel", "hwheel": "hierarchical wheel"}
PEER_DESIGNS = (("libuv", "heap"), ("libevent", "heap"), ("libev", "heap"), ("asio", "heap"),
                ("go-timers", "heap"), ("jdk-stpe*", "heap"), ("naive-heap", "heap"),
                ("netty-*", "hashed wheel"), ("tokio", "hierarchical wheel"), ("sorted-list", "list"))


def peer_design(peer, given=None):
    """A peer's timer design: its manifest `design` when the entry has one (even ""), else derived
    from its engine or name; "" when unknown, and always for the floor."""
    if peer.kind == "floor":
        return ""
    if given is not None:
        return given.strip()
    name = re.split(r"[:@]", peer.spec or peer.id, maxsplit=1)[0]
    if peer.kind == "engine":
        return ENGINE_DESIGNS.get(peer.engine or name, "")
    return next((d for pat, d in PEER_DESIGNS if fnmatch.fnmatchcase(name, pat)), "")


def _diff(path, wj, name):
    """A workload's `diff`, or None."""
    dj = wj.sub("diff", f"workload {name}, diff,", None)
    if dj is None:
        return None
    cols = []
    for k, c in dj.items("columns", "columns"):
        cj = _Json(path, f"workload {name}, diff, columns[{k}]", c)
        cols.append(DiffColumn(cj.get("metric", str), cj.get("minus", str),
                               cj.get("aim", float, None)))
    return Diff(dj.get("minus", str), dj.get("label", str, ""), cols)


def _safe(s):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", s)


# ---- results.csv ---------------------------------------------------------------------------------


def parse_number(text):
    """A finite float from a CSV field, or None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


class Cell:
    """The repetitions of one (peer, row workload, n, metric) of one run, and their statistics."""

    __slots__ = ("values", "_s")

    def __init__(self):
        self.values = {}  # rep -> value
        self._s = None

    def add(self, rep, value):
        self.values[rep] = value

    def reps(self):
        return [self.values[r] for r in sorted(self.values)]

    @property
    def count(self):
        return len(self.values)

    def summary(self):
        """(median, ci_lo, ci_hi, count, min, max) over the repetitions."""
        if self._s is None:
            xs = self.reps()
            lo, hi = stats.bootstrap_median_ci(xs)
            self._s = (stats.median(xs), lo, hi, len(xs), min(xs), max(xs))
        return self._s

    @property
    def median(self):
        return self.summary()[0]


def read_results(folder, man):
    """{(peer id, row workload, n, metric): Cell} from results.csv, checked against the manifest."""
    path = os.path.join(folder, "results.csv")
    try:
        f = open(path, encoding="utf-8-sig", newline="")  # a byte-order mark is not a column
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e}")
    cells = {}
    with f:
        try:
            rows = list(_csv_rows(f))
        except (csv.Error, UnicodeDecodeError) as e:
            raise BadInput(f"{path}: not readable as CSV: {e}")
    if not rows:
        raise BadInput(f"{path} is empty: it has no header line and no rows")
    line, header = rows[0]
    names = [h.strip().lower() for h in header]
    missing = [c for c in COLUMNS if c not in names and c != "rep"]
    if missing:
        raise BadInput(f"{path} line {line}: missing column{'s' if len(missing) > 1 else ''} "
                       f"{', '.join(missing)}; the header has {','.join(header) or 'nothing'}, "
                       f"expected {','.join(COLUMNS)} (rep may be absent in older folders)")
    col = {c: names.index(c) for c in COLUMNS if c in names}
    has_rep = "rep" in col
    if len(rows) == 1:
        raise BadInput(f"{path} has a header line but no rows")
    first_line = {}
    for line, r in rows[1:]:
        if len(r) != len(header):
            raise BadInput(f"{path} line {line}: {len(r)} fields, the header has {len(header)} "
                           f"({','.join(header)})")
        peer, rw, n_txt, mname, v_txt, unit = (r[col[c]].strip() for c in COLUMNS[:6])
        if peer not in man.peer_by_id:
            raise BadInput(f"{path} line {line}: peer '{peer}' is not in manifest.json; its "
                           f"peers: {', '.join(p.id for p in man.peers)}")
        wl = man.owner.get(rw)
        if wl is None:
            known = ", ".join(r for w in man.workloads for r, _ in w.rows)
            raise BadInput(f"{path} line {line}: workload '{rw}' is not in manifest.json; its "
                           f"workloads' rows: {known}")
        m = wl.metric(mname)
        if m is None:
            raise BadInput(f"{path} line {line}: metric '{mname}' of workload {rw} is not in "
                           f"manifest.json; {wl.name} declares: "
                           f"{', '.join(x.name for x in wl.metrics)}")
        if unit != m.unit.name:
            raise BadInput(f"{path} line {line}: unit '{unit}' of {rw}/{mname}, but manifest.json "
                           f"declares {mname} in '{m.unit.name}'")
        n = parse_number(n_txt)
        if n is None:
            raise BadInput(f"{path} line {line}: n '{n_txt}' is not a number")
        v = parse_number(v_txt)
        if v is None:
            raise BadInput(f"{path} line {line}: value '{v_txt}' is not a number")
        key = (peer, rw, n, mname)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell()
        if has_rep:
            rep_txt = r[col["rep"]].strip()
            if not re.fullmatch(r"[0-9]+", rep_txt):
                raise BadInput(f"{path} line {line}: rep '{rep_txt}' is not a repetition number "
                               f"(0, 1, 2, ...)")
            rep = int(rep_txt)
            if rep in cell.values:
                raise BadInput(f"{path} line {line}: rep {rep} of {peer} {rw} n={n_txt} {mname} "
                               f"again (line {first_line[key + (rep,)]} has it)")
        else:
            rep = cell.count  # older folders: repetitions in file order
        first_line[key + (rep,)] = line
        cell.add(rep, v)
    return cells


def _csv_rows(f):
    """(line number, fields) of every record that is not blank or a # comment."""
    reader = csv.reader(f)
    start = 1
    for r in reader:
        line, start = start, reader.line_num + 1
        if not r or all(not x.strip() for x in r) or r[0].lstrip().startswith("#"):
            continue
        yield line, r


# ---- metadata and histograms ---------------------------------------------------------------------


def read_metadata(folder):
    """{key: value} in file order, from metadata.txt, else metadata.json, else empty."""
    meta = {}
    txt = os.path.join(folder, "metadata.txt")
    js = os.path.join(folder, "metadata.json")
    if os.path.isfile(txt):
        with open(txt, encoding="utf-8", errors="replace") as f:
            for raw in f:
                line = raw.rstrip("\r\n")
                if line.lstrip().startswith("#") or ":" not in line:
                    continue
                # "key: value"; a key may hold a peer spec with colons of its own
                # ("peer_params.heap:spin=150us.label"), never ": "
                k, v = line.split(": ", 1) if ": " in line else line.split(":", 1)
                k, v = k.strip(), v.strip().replace("\t", " ")
                if k and k not in meta:
                    meta[k] = v
    elif os.path.isfile(js):
        try:
            with open(js, encoding="utf-8") as f:
                obj = json.load(f)
        except (OSError, ValueError) as e:
            warn(f"{js}: not readable ({e}): figures will have no machine footer")
            return meta
        if isinstance(obj, dict):
            for k, v in obj.items():
                meta[str(k)] = v if isinstance(v, str) else json.dumps(v)
    else:
        warn(f"{folder}: no metadata.txt or metadata.json: figures will have no machine footer")
    return meta


def read_hgrm(path):
    """[(value, percentile 0..1)] of an HdrHistogram percentile file; [] if it has no rows."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fs = line.split()
            if len(fs) < 3:
                continue
            v, p, c = (parse_number(x) for x in fs[:3])
            if v is None or p is None or c is None or not 0 <= p <= 1:
                continue
            out.append((v, p))
    return out


# ---- a run ---------------------------------------------------------------------------------------


@dataclass
class Run:
    folder: str
    label: str
    meta: dict
    man: Manifest
    cells: dict
    hists: dict  # (workload, peer id) -> [(value, percentile)]


def check_folder(folder):
    if not os.path.exists(folder):
        raise BadInput(f"{folder} does not exist")
    if not os.path.isdir(folder):
        raise BadInput(f"{folder} is not a folder")
    try:
        entries = os.listdir(folder)
    except OSError as e:
        raise BadInput(f"{folder}: cannot read: {e}")
    if not entries:
        raise BadInput(f"{folder} is empty: not a results folder (tkbench run writes one)")
    if not os.path.isfile(os.path.join(folder, "results.csv")):
        raise BadInput(f"{folder} has no results.csv: not a results folder (tkbench run writes "
                       f"one)")


def read_run(folder):
    check_folder(folder)
    man = read_manifest(folder)
    cells = read_results(folder, man)
    meta = read_metadata(folder)
    hists = {}
    for wl, pid, rel in man.hist:
        p = os.path.join(folder, rel)
        if not os.path.isfile(p):
            warn(f"{p}: listed in manifest.json but missing; {pid} is drawn from results.csv")
            continue
        rows = read_hgrm(p)
        if not rows:
            warn(f"{p}: no percentile rows, ignored")
            continue
        hists[(wl, pid)] = rows
    label = meta.get("label") or os.path.basename(os.path.abspath(folder))
    return Run(folder, label, meta, man, cells, hists)


def unique_labels(runs):
    """Make the runs' labels unique: a repeated label gets "#2", "#3"."""
    used = set()
    for r in runs:
        base, lab, i = r.label, r.label, 1
        while lab in used:
            i += 1
            lab = f"{base}#{i}"
        used.add(lab)
        r.label = lab
