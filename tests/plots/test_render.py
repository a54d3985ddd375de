#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Unit tests of plots/render.py: statistics, loading and its errors, figures data, reports.

Run by CTest (tests/plots/CMakeLists.txt) as `python3 test_render.py`, or by hand with
`python3 -m unittest -v test_render` in this folder. Exit status 77 (skipped) only when gnuplot
is missing and every test that does not draw passed.
"""

import csv
import io
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS = os.path.normpath(os.path.join(HERE, "..", "..", "plots"))
RENDER = os.path.join(PLOTS, "render.py")
FIXTURE = os.path.join(HERE, "fixture")
FIELD_FIXTURE = os.path.join(HERE, "fixture-field")  # synthetic rows of the peers tkbench is gaining
NOREP = os.path.join(HERE, "results-norep.csv")
sys.path.insert(0, PLOTS)

from tkplot import figures, load, stats  # noqa: E402

HAVE_GNUPLOT = shutil.which("gnuplot") is not None
needs_gnuplot = unittest.skipUnless(HAVE_GNUPLOT, "gnuplot not installed")
WORK = tempfile.mkdtemp(prefix="tkplot-test.")
WHEEL = "wheel:tick=1ms,slots=1024"


def tearDownModule():
    shutil.rmtree(WORK, ignore_errors=True)


def fresh(name, src=FIXTURE):
    """A copy of the fixture (or of src) in the work folder, under a name with a space."""
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(src, d)
    for x in ("figures", "report.md"):
        p = os.path.join(d, x)
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)
    return d


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, RENDER] + list(args), capture_output=True, text=True,
                       env=e)
    return p.returncode, p.stdout, p.stderr


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def render_edited(name, edit):
    """A copy of the fixture whose manifest.json edit(manifest) changed, rendered: (folder, exit
    status, stdout, stderr, report.md)."""
    d = fresh(name)
    path = os.path.join(d, "manifest.json")
    m = json.loads(read(path))
    edit(m)
    write(path, json.dumps(m))
    rc, out, err = run("render", d)
    report = read(os.path.join(d, "report.md")) if rc == 0 else ""
    return d, rc, out, err, report


def field_fixture(name, edit=None):
    """A copy of the fixture with the synthetic peers of fixture-field/ added (their manifest
    entries, which have a `design`, and their rows); edit(manifest) may change the manifest."""
    d = fresh(name)
    path = os.path.join(d, "manifest.json")
    m = json.loads(read(path))
    m["peers"] += json.loads(read(os.path.join(FIELD_FIXTURE, "peers.json")))["peers"]
    if edit:
        edit(m)
    write(path, json.dumps(m, indent=1))
    rows = csv_rows(os.path.join(d, "results.csv"))
    extra = [r for r in csv_rows(os.path.join(FIELD_FIXTURE, "results.csv"))
             if r and not r[0].startswith("#")]
    assert extra[0] == rows[0], "fixture-field/results.csv has the fixture's columns"
    write_csv(os.path.join(d, "results.csv"), rows + extra[1:])
    return d


def field_table(report):
    """The rows of the field's table in report.md, as lists of cells (the header first)."""
    sec = report[report.index("## The field"):]
    sec = sec[:sec.index("\n## ")]
    lines = [ln for ln in sec.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines]


def five_reps(path):
    """Gives every measurement of a results.csv (3 repetitions in the fixture) repetitions 3 and
    4, 0.2 % above its repetition 0 and 0.2 % below its repetition 1: runs that `compare` can
    test with its interval (5 repetitions a run)."""
    rows = csv_rows(path)
    extra = []
    for r in rows[1:]:
        if r[6] in ("0", "1"):
            e = list(r)
            e[4] = repr(float(r[4]) * (1.002 if r[6] == "0" else 0.998))
            e[6] = "3" if r[6] == "0" else "4"
            extra.append(e)
    write_csv(path, rows + extra)


# ---- statistics ------------------------------------------------------------------------------


class Median(unittest.TestCase):
    def test_odd_count_is_the_middle_value(self):
        self.assertEqual(stats.median([107.9, 105.3, 108.7]), 107.9)
        self.assertEqual(stats.median([5.0]), 5.0)

    def test_even_count_is_the_mean_of_the_two_middle_values(self):
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(stats.median([10, 20]), 15)

    def test_quantile_interpolates_between_order_statistics(self):
        self.assertEqual(stats.quantile([1, 2, 3, 4, 5], 0.5), 3)
        self.assertAlmostEqual(stats.quantile([0, 10], 0.25), 2.5)
        self.assertEqual(stats.quantile([0, 10], 1.0), 10)


class BootstrapMedian(unittest.TestCase):
    def test_one_repetition_has_no_interval(self):
        self.assertEqual(stats.bootstrap_median_ci([42.0]), (42.0, 42.0))

    def test_three_repetitions_span_min_to_max(self):
        # a resample's median is the smallest value with probability 7/27 > 2.5 %: the 2.5th and
        # 97.5th percentiles of the medians are the smallest and the largest value
        self.assertEqual(stats.bootstrap_median_ci([107.9, 105.3, 108.7]), (105.3, 108.7))

    def test_is_reproducible_and_independent_of_order(self):
        rng = random.Random(1)
        xs = [rng.gauss(100, 5) for _ in range(15)]
        a = stats.bootstrap_median_ci(xs)
        ys = list(xs)
        rng.shuffle(ys)
        self.assertEqual(stats.bootstrap_median_ci(ys), a)
        self.assertEqual(stats.bootstrap_median_ci(xs), a)

    def test_bounds_hold_the_median_inside_the_range(self):
        rng = random.Random(2)
        for n in (2, 4, 5, 9, 30):
            xs = [rng.expovariate(0.1) for _ in range(n)]
            lo, hi = stats.bootstrap_median_ci(xs)
            self.assertLessEqual(min(xs), lo)
            self.assertLessEqual(lo, stats.median(xs))
            self.assertLessEqual(stats.median(xs), hi)
            self.assertLessEqual(hi, max(xs))
        xs = [rng.gauss(50, 1) for _ in range(40)]
        lo, hi = stats.bootstrap_median_ci(xs)
        self.assertLess(hi - lo, (max(xs) - min(xs)) / 2)  # narrower than the data for n = 40


class MannWhitney(unittest.TestCase):
    # Exact two-sided p = 2 P(U <= min(U1, U2)) from the table of U for n1 = n2 = 3, 4, 5
    # (e.g. Siegel & Castellan, Table J): U = 0 has 1 of C(6,3) = 20, 1 of C(8,4) = 70 and 1 of
    # C(10,5) = 252 orderings; U <= 2 has 4 of 252. scipy.stats.mannwhitneyu gives the same.
    def test_exact_small_samples_without_ties(self):
        u, p, method = stats.mann_whitney([1, 2, 3], [4, 5, 6])
        self.assertEqual((u, method), (0, "exact"))
        self.assertAlmostEqual(p, 2 / 20)
        self.assertAlmostEqual(stats.mann_whitney([1, 2, 3, 4], [5, 6, 7, 8])[1], 2 / 70)
        self.assertAlmostEqual(stats.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])[1], 2 / 252)
        u, p, _ = stats.mann_whitney([1, 2, 3, 4, 7], [5, 6, 8, 9, 10])
        self.assertEqual(u, 2)
        self.assertAlmostEqual(p, 8 / 252)  # 0.0317: significant at 5 %, the table's critical U = 2
        self.assertAlmostEqual(stats.mann_whitney([1, 4, 5], [2, 3, 6])[1], 1.0)  # U1 = 4, U2 = 5
        self.assertAlmostEqual(stats.mann_whitney([3, 1, 2], [3.5, 0.5, 4])[1], 14 / 20)

    def test_exact_distribution_matches_enumeration(self):
        for n1, n2 in ((3, 4), (2, 5), (4, 4)):
            counts = [0] * (n1 * n2 + 1)
            for pos in itertools.combinations(range(n1 + n2), n1):
                # the first sample takes positions pos in the sorted order: U counts pairs above
                u = sum(p - i for i, p in enumerate(pos))
                counts[u] += 1
            self.assertEqual(stats.u_distribution(n1, n2), counts)

    def test_normal_approximation_with_ties_and_continuity_correction(self):
        # ranks of 1 2 2 | 2 3 3 3: 1, 3, 3 | 3, 6, 6, 6; U1 = 7 - 6 = 1, U2 = 11, mean 6;
        # variance 3*4/12 * (8 - ((27-3)+(27-3)) / (7*6)) = 6.857; z = (11 - 6 - 0.5) / 2.6186
        u, p, method = stats.mann_whitney([1, 2, 2], [2, 3, 3, 3])
        self.assertEqual((u, method), (1, "normal"))
        z = 4.5 / math.sqrt(8 - 48 / 42)
        self.assertAlmostEqual(p, math.erfc(z / math.sqrt(2)))
        self.assertAlmostEqual(p, 0.0857, places=4)

    def test_identical_samples_give_p_one(self):
        self.assertEqual(stats.mann_whitney([5, 5, 5], [5, 5, 5])[1], 1.0)


class Metadata(unittest.TestCase):
    def test_a_key_holding_a_peer_spec_keeps_its_colons(self):
        d = tempfile.mkdtemp(dir=WORK)
        with open(os.path.join(d, "metadata.txt"), "w") as f:
            f.write("# run\ncores: 2\npeer_params.heap:spin=150us.label: heap-spin150us\n"
                    "peer_params.wheel:tick=1ms,slots=1024.tick: 1ms\nempty:\n")
        meta = load.read_metadata(d)
        self.assertEqual(meta["cores"], "2")
        self.assertEqual(meta["peer_params.heap:spin=150us.label"], "heap-spin150us")
        self.assertEqual(meta["peer_params.wheel:tick=1ms,slots=1024.tick"], "1ms")
        self.assertEqual(meta["empty"], "")


class RatioAndCompare(unittest.TestCase):
    A = [25.1, 25.4, 25.7]

    def test_ratio_interval(self):
        b = [x * 0.8 for x in self.A]
        r, lo, hi = stats.ratio_ci(self.A, b)
        self.assertAlmostEqual(r, 0.8)
        self.assertLess(hi, 1)
        self.assertLessEqual(lo, r)
        self.assertLessEqual(r, hi)
        # the extreme resamples: 0.8 * 25.1 / 25.7 and 0.8 * 25.7 / 25.1
        self.assertGreaterEqual(lo, 0.8 * 25.1 / 25.7 - 1e-12)
        self.assertLessEqual(hi, 0.8 * 25.7 / 25.1 + 1e-12)
        self.assertEqual(stats.ratio_ci(self.A, b), (r, lo, hi))
        self.assertIsNone(stats.ratio_ci([0, 0, 0], [1, 2, 3]))
        self.assertEqual(stats.ratio_ci([2.0], [3.0]), (1.5, 1.5, 1.5))

    A5 = [25.1, 25.3, 25.4, 25.5, 25.7]

    def test_marks_follow_the_direction(self):
        b = [x * 0.8 for x in self.A5]
        c = stats.compare(self.A5, b, "lower")
        self.assertTrue(c["significant"])
        self.assertEqual(c["mark"], "better")
        self.assertEqual(stats.compare(self.A5, b, "higher")["mark"], "worse")
        self.assertEqual(stats.compare(self.A5, b, "none")["mark"], "differs")
        same = stats.compare(self.A5, list(self.A5), "lower")
        self.assertFalse(same["significant"])
        self.assertEqual(same["mark"], "")

    def test_too_few_repetitions_for_a_5_percent_test(self):
        # 2 or 3 repetitions a run: even complete separation gives p >= 0.1, and the bootstrap
        # interval (which would exclude 1 here) is too narrow to decide below 5 repetitions
        for a, b in (([10.0, 10.1], [5.0, 5.1]), ([10.0, 10.1, 10.2], [5.0, 5.1, 5.2])):
            c = stats.compare(a, b, "lower")
            self.assertLess(c["hi"], 1)
            self.assertFalse(c["testable"])
            self.assertFalse(c["significant"])
            self.assertEqual(c["mark"], "")
        self.assertAlmostEqual(stats.min_p(3, 3), 0.1)
        self.assertAlmostEqual(stats.min_p(4, 4), 2 / 70)
        # 4 against 4, completely separated: the exact test decides (p = 2/70 = 0.029)
        c = stats.compare([10.0, 10.1, 10.2, 10.3], [5.0, 5.1, 5.2, 5.3], "lower")
        self.assertTrue(c["testable"])
        self.assertAlmostEqual(c["p"], 2 / 70)
        self.assertTrue(c["significant"])

    def test_no_fixed_percentage(self):
        # 2 % apart but far outside each other's spread: significant; 30 % apart with the
        # intervals overlapping 1: not
        tight = stats.compare([100.0, 100.01, 100.02, 100.03, 100.04],
                              [98.0, 98.01, 98.02, 98.03, 98.04], "lower")
        self.assertTrue(tight["significant"])
        loose = stats.compare([50.0, 100.0, 150.0, 90.0, 120.0],
                              [70.0, 130.0, 200.0, 60.0, 110.0], "lower")
        self.assertFalse(loose["significant"])

    def test_false_positive_rate_of_identical_runs(self):
        # runs of the same noise: the rule marks about 5 % of comparisons, not the 11 % a
        # bootstrap interval of 3 repetitions would
        rng = random.Random(7)
        for n, most in ((3, 0), (5, 0.08)):
            hits = 0
            for _ in range(300):
                a = [rng.lognormvariate(0, 0.1) for _ in range(n)]
                b = [rng.lognormvariate(0, 0.1) for _ in range(n)]
                hits += stats.compare(a, b, "lower")["significant"]
            self.assertLessEqual(hits / 300, most, n)


# ---- footers and slots -----------------------------------------------------------------------


class Footer(unittest.TestCase):
    def test_never_cuts_a_word(self):
        first = [("", "W1_core schedule_ns"), (" | ", "AMD EPYC 7763 64-Core Processor"),
                 (", ", "2 cores"), (", ", "Linux 6.18.44-fc-v782 x86_64"), (" ", "(vm)")]
        second = [(", ", "3 reps"), (", ", "commit 2850314+dirty"), (", ", "2026-11-24T22:51:55Z"),
                  (", ", "quick suite"), (", ", "GNU 12.2.0 -std=c11 -O3 -DNDEBUG -Wall -Wextra")]
        words = set(" ".join(t for _, t in first + second).replace(",", " ").split())
        for width in (120, 160, 230, 500):
            l1, l2 = figures.wrap_footer(first, second, width)
            for line in (l1, l2):
                self.assertLessEqual(figures.text_pt(line), width)
                self.assertNotIn("…", line)
                for w in line.replace(",", " ").replace("|", " ").split():
                    self.assertIn(w, words, f"'{w}' is not a whole word (width {width})")
            self.assertTrue(l1.startswith("W1_core schedule_ns"))

    def test_drops_whole_trailing_items(self):
        first = [("", "W1_core schedule_ns"), (" | ", "CPU")]
        second = [(", ", "3 reps"), (", ", "commit abc"), (", ", "x" * 200)]
        l1, l2 = figures.wrap_footer(first, second, 200)
        self.assertEqual((l1, l2), ("W1_core schedule_ns | CPU", "3 reps, commit abc"))


class KeyRows(unittest.TestCase):
    def test_rows_grow_with_the_entries_and_shrink_with_the_width(self):
        labels = ["wheel-100ms-512-embedded", "heap", "hwheel-1ms-6-6"]
        self.assertEqual(figures.key_rows([], 500), 0)
        self.assertEqual(figures.key_rows(labels[:1], 500), 1)
        one = figures.key_rows(labels * 4, 466)  # a double-width figure's key
        self.assertGreaterEqual(one, 3)  # the longest label sets every column's width
        self.assertGreater(figures.key_rows(labels * 4, 200), one)
        self.assertEqual(figures.key_rows(labels * 4, 10), 12)  # no room: one a row


class Slots(unittest.TestCase):
    def test_a_later_runs_peer_in_a_taken_slot_moves_to_10_12(self):
        def fake(peers):
            man = load.Manifest("m", False, {}, [load.Peer(i, s, lab, "engine", slot, lab)
                                                 for i, s, lab, slot in peers], [], [], [])
            return load.Run("d", "r", {}, man, {}, {})
        a = fake([("heap", "heap", "heap", 1), ("w", WHEEL, "wheel-1ms-1024", 2)])
        b = fake([("heap", "heap", "heap", 1), ("w2", "wheel:tick=100ms,slots=512", "wheel-100ms-512", 2)])
        merged = figures.merge_peers([a, b])
        self.assertEqual([(p.label, p.slot) for p in merged],
                         [("heap", 1), ("wheel-1ms-1024", 2), ("wheel-100ms-512", 10)])
        self.assertEqual(merged[0].ids, {1: "heap", 2: "heap"})


# ---- bad input --------------------------------------------------------------------------------


class BadInput(unittest.TestCase):
    def bad(self, folder, *want):
        rc, out, err = run("render", folder)
        self.assertEqual(rc, 2, err)
        for w in want:
            self.assertIn(w, err)
        self.assertFalse(os.path.exists(os.path.join(folder, "report.md")))
        return err

    def edit_csv(self, name, fn):
        d = fresh(name)
        rows = csv_rows(os.path.join(d, "results.csv"))
        write_csv(os.path.join(d, "results.csv"), fn(rows))
        return d

    def edit_manifest(self, name, fn):
        d = fresh(name)
        p = os.path.join(d, "manifest.json")
        with open(p, encoding="utf-8") as f:
            m = json.load(f)
        fn(m)
        write(p, json.dumps(m, indent=1))
        return d

    def test_usage(self):
        self.assertEqual(run()[0], 2)
        self.assertEqual(run("render")[0], 2)
        self.assertEqual(run("draw", FIXTURE)[0], 2)
        rc, _, err = run("compare", os.path.join(WORK, "out"), FIXTURE)
        self.assertEqual(rc, 2)
        self.assertIn("two results folders", err)
        rc, out, _ = run("--help")
        self.assertEqual(rc, 0)
        self.assertIn("compare OUT DIR_A DIR_B", out)

    def test_not_a_results_folder(self):
        self.bad(os.path.join(WORK, "no such folder"), "does not exist")
        f = os.path.join(WORK, "a file")
        write(f, "x")
        self.bad(f, "is not a folder")
        e = os.path.join(WORK, "empty folder")
        os.makedirs(e, exist_ok=True)
        self.bad(e, "is empty")
        d = fresh("no csv")
        os.remove(os.path.join(d, "results.csv"))
        self.bad(d, "has no results.csv")

    def test_no_manifest(self):
        d = fresh("no manifest")
        os.remove(os.path.join(d, "manifest.json"))
        err = self.bad(d)
        self.assertIn(f"{d} has no manifest.json (it was written by an older tkbench). Run "
                      f"`tkbench manifest {d}` to write one from tkbench's workload descriptors, "
                      f"then render again.", err)

    def test_empty_csv_and_header_only(self):
        d = fresh("empty csv")
        write(os.path.join(d, "results.csv"), "")
        self.bad(d, "results.csv is empty")
        d = self.edit_csv("header only", lambda rows: rows[:1])
        self.bad(d, "results.csv has a header line but no rows")

    def test_missing_column(self):
        d = self.edit_csv("no unit", lambda rows: [r[:5] + r[6:] for r in rows])
        self.bad(d, "results.csv line 1: missing column unit",
                 "expected peer,workload,n,metric,value,unit,rep")

    def test_undeclared_metric(self):
        def f(rows):
            rows[56][3] = "foo_ns"  # line 57
            return rows
        d = self.edit_csv("foo metric", f)
        self.bad(d, "results.csv line 57: metric 'foo_ns' of workload W1_exec is not in "
                    "manifest.json; W1_exec declares: schedule_ns, cancel_ns, churn_ns")

    def test_unknown_peer_and_workload(self):
        def f(rows):
            rows[5][0] = "wheel-1ms-1024"  # the short name is a label, not an id
            return rows
        self.bad(self.edit_csv("bad peer", f), "results.csv line 6: peer 'wheel-1ms-1024' is not "
                 "in manifest.json; its peers: heap, wheel:tick=1ms,slots=1024, libuv")

        def g(rows):
            rows[3][1] = "W9_nope"
            return rows
        self.bad(self.edit_csv("bad workload", g), "results.csv line 4: workload 'W9_nope' is not "
                 "in manifest.json")

    def test_non_numeric_fields(self):
        def v(rows):
            rows[9][4] = "fast"
            return rows
        self.bad(self.edit_csv("bad value", v), "results.csv line 10: value 'fast' is not a number")

        def n(rows):
            rows[2][2] = "1k"
            return rows
        self.bad(self.edit_csv("bad n", n), "results.csv line 3: n '1k' is not a number")

        def r(rows):
            rows[2][6] = "first"
            return rows
        self.bad(self.edit_csv("bad rep", r), "results.csv line 3: rep 'first' is not a repetition")

        def nan(rows):
            rows[2][4] = "nan"
            return rows
        self.bad(self.edit_csv("nan value", nan), "results.csv line 3: value 'nan' is not a number")

    def test_inconsistent_rows(self):
        def dup(rows):
            rows[2][6] = "0"
            return rows
        self.bad(self.edit_csv("dup rep", dup), "results.csv line 3: rep 0 of heap W1_core n=1000 "
                 "schedule_ns again (line 2 has it)")

        def unit(rows):
            rows[2][5] = "us"
            return rows
        self.bad(self.edit_csv("bad unit", unit), "results.csv line 3: unit 'us' of "
                 "W1_core/schedule_ns, but manifest.json declares schedule_ns in 'ns'")

        def short(rows):
            rows[4] = rows[4][:4]
            return rows
        self.bad(self.edit_csv("short row", short), "results.csv line 5: 4 fields, the header has 7")

    def test_malformed_json(self):
        d = fresh("bad json")
        p = os.path.join(d, "manifest.json")
        write(p, read(p).replace('"format": 1,', '"format": 1', 1))
        self.bad(d, "manifest.json line 3 column 3: malformed JSON: Expecting ',' delimiter")

    def test_manifest_lacks_keys(self):
        d = self.edit_manifest("no figures", lambda m: m.pop("figures"))
        self.bad(d, "manifest.json: the top level lacks the key 'figures'")
        d = self.edit_manifest("no metric unit",
                               lambda m: m["workloads"][1]["metrics"][0].pop("unit"))
        self.bad(d, "manifest.json: workload W1_exec, metric schedule_ns, lacks the key 'unit'")
        d = self.edit_manifest("no peer id", lambda m: m["peers"][2].pop("id"))
        self.bad(d, "manifest.json: peers[2] lacks the key 'id'")

    def test_manifest_names_unknown_things(self):
        def metric(m):
            m["figures"][1]["series"][0]["metric"] = "cancel_us"
        self.bad(self.edit_manifest("series metric", metric),
                 "figure w1_core_cancel series 1 names metric 'cancel_us' of W1_core, which "
                 "W1_core does not declare")

        def unit(m):
            m["workloads"][0]["metrics"][0]["unit"] = "nsec"
        self.bad(self.edit_manifest("unknown unit", unit),
                 "workload W1_core, metric schedule_ns, has unit 'nsec', which is not in units "
                 "(ns, us, ms, per_s, bytes, count, pct)")

        def kind(m):
            m["figures"][0]["kind"] = "pie"
        self.bad(self.edit_manifest("unknown kind", kind), "figure w1_core_schedule has kind "
                 "'pie'; expected one of lines, panels, bars, percentiles, cdf, frontier")

        def slot(m):
            m["peers"][0]["slot"] = 25
        self.bad(self.edit_manifest("bad slot", slot), "peers[0] (heap) has slot 25; plots/style.gp has slots 1-24")


# ---- targets (manifest.json `targets`, tkplot/targets.py) ----------------------------------------
@unittest.skipUnless(HAVE_GNUPLOT, "gnuplot is not installed")
class Targets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        def t(workload, metric, peer, ref, op, bound, what):
            return {"workload": workload, "metric": metric, "peer": peer, "ref": ref, "op": op,
                    "bound": bound, "what": what, "source": "a test"}
        def scaled(peer, n, bound, what, **kw):  # the same peer at n against n = 1
            return dict(t("W7_contention", "ops_per_s", peer, None, ">=", bound, what), n=n,
                        ref_n=1, **kw)
        targets = [
            t("W1_core", "schedule_ns", WHEEL, "heap", "<=", 0.5, "wheel insert vs heap"),
            t("W5_memory", "bytes_per_timer", "heap", None, "<=", 96, "heap bytes"),
            t("W5_memory", "bytes_per_timer", WHEEL, None, "<=", 96, "wheel bytes"),
            t("W5_memory", "bytes_per_timer", "heap", "libuv", "<=", None, "heap vs libuv bytes"),
            t("W1_exec", "schedule_ns", "heap", "jdk-stpe", "<=", 0.8, "heap vs a JVM peer"),
            t("W9_none", "x_ns", "heap", None, ">=", 1, "a workload not in the run"),
            scaled("heap", 2, 1.0, "heap 2 producers vs 1"),
            scaled(WHEEL, 2, 1.0, "wheel 2 producers vs 1"),
            scaled("heap", 16, 4.0, "heap 16 producers vs 1"),
            scaled("heap", 2, 1.0, "heap on a big machine", min_cores=16),
            dict(t("W1_core", "schedule_ns", WHEEL, "heap", "<=", 0.5, "wheel insert vs heap at 1e3"),
                 n=1000),
            dict(t("W1_core", "schedule_ns", WHEEL, "heap", "<=", 0.5, "wants 5 reps"), min_reps=5),
            t("W6_dist_uniform", "churn_ns", "heap", None, "<=", 1e9, "a row of a variant"),
        ]
        cls.dir, cls.rc, cls.out, cls.err, cls.report = render_edited(
            "targets", lambda m: m.update(targets=targets))

    def test_report_gives_each_target_its_value_and_verdict(self):
        self.assertEqual(self.rc, 0, self.err)
        r = self.report.splitlines()
        # medians at n = 1e6: wheel 41.6 / heap 194.5; heap 97.2 and wheel 87.7 bytes
        ratio = [x for x in r if x.startswith("| wheel insert vs heap |")]
        self.assertEqual(len(ratio), 1)
        self.assertRegex(ratio[0], r"^\| wheel insert vs heap \| W1_core schedule_ns, n = 1e6 \| "
                         r"0\.21x \(41\.6 / 194\.5 ns\) \[0\.2\d, 0\.2\d\] \| <= 0\.5x \| met \| a test \|$")
        self.assertIn("| heap bytes | W5_memory bytes_per_timer, n = 1e6 | 97.2 bytes | <= 96.0 bytes "
                      "| NOT met | a test |", r)
        self.assertIn("| wheel bytes | W5_memory bytes_per_timer, n = 1e6 | 87.7 bytes | <= 96.0 bytes "
                      "| met | a test |", r)
        line = next(x for x in r if x.startswith("| heap vs libuv bytes |"))
        self.assertTrue(line.endswith("| – | – | a test |"), line)
        self.assertIn("| heap vs a JVM peer | W1_exec schedule_ns | not run (jdk-stpe) | <= 0.8x "
                      "| not run | a test |", r)
        self.assertIn("| a workload not in the run | W9_none x_ns | not run (W9_none) | >= 1 | not run "
                      "| a test |", r)
        self.assertLess(self.report.index("## Targets"), self.report.index("## W1_core"))

    def median_of(self, peer, workload, n, metric):
        rows = csv_rows(os.path.join(FIXTURE, "results.csv"))
        return stats.median([float(r[4]) for r in rows[1:] if r[0] == peer and r[1] == workload
                             and float(r[2]) == n and r[3] == metric])

    def line(self, what):
        return next(x for x in self.report.splitlines() if x.startswith(f"| {what} |"))

    def test_the_same_peer_at_two_n(self):
        for peer, what in (("heap", "heap 2 producers vs 1"), (WHEEL, "wheel 2 producers vs 1")):
            ratio = (self.median_of(peer, "W7_contention", 2, "ops_per_s")
                     / self.median_of(peer, "W7_contention", 1, "ops_per_s"))
            line = self.line(what)
            self.assertIn(f"| W7_contention ops_per_s, n = 2 vs 1 | {ratio:.2f}x (", line)
            self.assertIn("| >= 1x | met |" if ratio >= 1 else "| >= 1x | NOT met |", line)

    def test_an_n_that_was_not_run_and_a_machine_too_small(self):
        self.assertIn("| not run (no n = 16) | >= 4x | not run |", self.line("heap 16 producers vs 1"))
        cores = re.search(r"^cores: (\d+)$", read(os.path.join(FIXTURE, "metadata.txt")), re.M)
        self.assertIn(f"| not run ({cores.group(1)} cores < 16) | >= 1x | not run |",
                      self.line("heap on a big machine"))

    def test_an_n_of_its_own(self):
        ratio = (self.median_of(WHEEL, "W1_core", 1000, "schedule_ns")
                 / self.median_of("heap", "W1_core", 1000, "schedule_ns"))
        line = self.line("wheel insert vs heap at 1e3")
        self.assertIn(f"| W1_core schedule_ns, n = 1e3 | {ratio:.2f}x (", line)

    def test_too_few_repetitions_give_no_verdict(self):
        self.assertIn("| <= 0.5x | 3 of 5 reps |", self.line("wants 5 reps"))

    def test_a_row_of_a_workload_with_variants(self):
        v = self.median_of("heap", "W6_dist_uniform", 100000, "churn_ns")
        line = self.line("a row of a variant")
        self.assertIn("| W6_dist_uniform churn_ns, n = 1e5 |", line)
        self.assertIn(f"| {v:.1f} ns |" if v >= 10 else "ns |", line)
        self.assertIn("| met |", line)

    def test_stdout_has_them_too(self):
        self.assertIn("Targets (medians", self.out)
        self.assertRegex(self.out, r"heap bytes +97\.2 bytes +<= 96\.0 bytes +NOT met")

    def test_a_folder_without_targets_has_no_section(self):
        rc, out, err = run("render", fresh("no targets"))
        self.assertEqual(rc, 0, err)
        self.assertNotIn("## Targets", read(os.path.join(WORK, "no targets", "report.md")))
        self.assertNotIn("Targets (", out)


# ---- the slack frontier (a `frontier` figure, its report table, issue 28's targets) ----------------
FRONTIER_ROW = "slack_frontier:tcp"


@unittest.skipUnless(HAVE_GNUPLOT, "gnuplot is not installed")
class Frontier(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        def t(peer, metric, ref, bound, what, plus=None):
            d = {"workload": FRONTIER_ROW, "metric": metric, "peer": peer, "ref": ref,
                 "op": "<=", "bound": bound, "what": what, "source": "a test"}
            if plus:
                d["plus"] = plus
            return d
        floor = {"workload": "floor", "metric": "nanosleep_late_p99_us", "peer": "floor"}
        targets = [
            t("heap:slack=1ms", "wakeups_per_s", "heap", 0.5, "heap wake-ups"),
            t("heap:slack=1ms", "late_p99_us", None, 1000.0, "heap p99", floor),
            t("heap:slack=1ms", "early_count", None, 0, "heap early"),
            t(WHEEL + ",slack=100us", "wakeups_per_s", WHEEL, 0.5, "wheel 100us wake-ups"),
            t(WHEEL + ",slack=1ms", "late_p99_us", None, 1000.0, "wheel p99 too tight", floor),
            t(WHEEL + ",slack=1ms", "late_p99_us", None, 2000.0, "no such floor",
              {"workload": "floor", "metric": "nanosleep_late_p99_us", "peer": "nobody"}),
        ]
        cls.dir, cls.rc, cls.out, cls.err, cls.report = render_edited(
            "frontier", lambda m: m.update(targets=targets))
        cls.src = os.path.join(cls.dir, "figures", "src")
        rows = csv_rows(os.path.join(FIXTURE, "results.csv"))[1:]
        cls.floor_p99 = stats.median([float(r[4]) for r in rows
                                      if r[:2] == ["floor", "floor"] and r[3] == "nanosleep_late_p99_us"])

    def line(self, what):
        return next(x for x in self.report.splitlines() if x.startswith(f"| {what} |"))

    def test_both_figures_are_drawn_and_shown(self):
        self.assertEqual(self.rc, 0, self.err)
        for name in ("frontier_tcp", "frontier_cpu_tcp"):
            for ext in ("pdf", "png", "svg"):
                self.assertGreater(os.path.getsize(os.path.join(self.dir, "figures", f"{name}.{ext}")), 0)
            self.assertIn(f"](figures/{name}.png)", self.report)

    def test_a_line_per_base_and_kind_of_slack_through_its_slacks(self):
        gp = read(os.path.join(self.src, "frontier_tcp.gp"))
        titles = re.findall(r"with linespoints .*? title '([^']*)'", gp)
        self.assertEqual(titles, ["heap", "heap, OS timer slack", "wheel-1ms-1024"])
        self.assertIn("set logscale x 10", gp)
        self.assertIn("set logscale y 10", gp)
        dats = sorted(f for f in os.listdir(self.src) if f.startswith("frontier_tcp.") and f.endswith(".dat"))
        self.assertEqual(len(dats), 3, dats)
        heap = [l.split() for l in read(os.path.join(self.src, dats[0])).splitlines()[1:]]
        # x = wake-ups, y = p99, the slack as its label, by slack; the OS line starts at the heap's 0
        self.assertEqual(heap, [["900", "100", "0"], ["700", "180", "100us"], ["300", "900", "1ms"],
                                ["80", "9000", "10ms"]])
        os_line = [l.split() for l in read(os.path.join(self.src, dats[1])).splitlines()[1:]]
        self.assertEqual([r[2] for r in os_line], ["0", "100us", "1ms", "10ms"])
        self.assertEqual(os_line[0], heap[0])
        cpu = read(os.path.join(self.src, "frontier_cpu_tcp.1.heap.dat")).splitlines()[1:]
        self.assertEqual(cpu[0].split(), ["4", "100", "0"])

    def test_the_table_per_line_and_slack(self):
        r = self.report.splitlines()
        head = next(x for x in r if x.startswith("| line | slack |"))
        for col in ("service thread wake-ups (1/s)", "CPU (of a core) (%)", "p50 (µs)", "p99 (µs)",
                    "max (µs)", "early (count)", "/ slack 0", "p99 window (µs)", "targets"):
            self.assertIn(col, head)
        w = 1000 + self.floor_p99  # 1 ms of slack, the heap's precision 0, the floor's p99
        heap1 = next(x for x in r if x.startswith("| heap | 1ms |"))
        self.assertRegex(heap1, r"\| 300\.0 \[[^]]*\] \| 2\.90 \[[^]]*\] \| 450\.0 \[[^]]*\] \| "
                         r"900\.0 \[[^]]*\] \| 1300 \[[^]]*\] \| 0 \[0, 0\] \| 0\.33 \|")
        self.assertIn(f"| {report_fmt(w)} (within) |", heap1)
        self.assertIn("wakeups_per_s: met; late_p99_us: met; early_count: met", heap1)
        os1 = next(x for x in r if x.startswith("| heap, OS timer slack | 1ms |"))
        self.assertIn("| 0.72 |", os1)
        self.assertIn("(OVER)", os1)  # 1100 us of p99 over 1 ms + the floor's p99
        wheel0 = next(x for x in r if x.startswith("| wheel-1ms-1024 | 0 |"))
        self.assertIn(f"| {report_fmt(1000 + self.floor_p99)} (within) |", wheel0)  # its 1 ms tick
        self.assertEqual(sum(1 for x in r if x.startswith("| line | slack |")), 1)

    def test_targets_with_a_reference_without_slack_and_a_bound_plus_the_floor(self):
        self.assertRegex(self.line("heap wake-ups"),
                         r"\| 0\.33x \(300\.0 / 900\.0 1/s\) \[0\.3\d, 0\.3\d\] \| <= 0\.5x \| met \|")
        p99 = self.line("heap p99")
        self.assertIn(f"| <= 1000 + nanosleep_late_p99_us {report_fmt(self.floor_p99)} = "
                      f"{report_fmt(1000 + self.floor_p99)} µs | met |", p99)
        self.assertIn("| 0 count | <= 0 count | met |", self.line("heap early"))
        self.assertRegex(self.line("wheel 100us wake-ups"),
                         r"\| 1\.00x \(1000 / 1000 1/s\) \[[^]]*\] \| <= 0\.5x \| NOT met \|")
        self.assertIn("| NOT met |", self.line("wheel p99 too tight"))
        self.assertIn("| not run (no floor nanosleep_late_p99_us) |", self.line("no such floor"))

    def test_lines_group_peers_by_base_and_kind(self):
        from tkplot import frontier
        P = lambda spec, base, slack=0, os_slack=0: load.Peer(spec, spec, spec, "engine", 1, spec,
                                                              base=base, slack_ns=slack,
                                                              os_slack_ns=os_slack)
        peers = [P("b:slack=1ms", "b", 10 ** 6), P("a", "a"), P("a:os_slack=1ms", "a", 0, 10 ** 6),
                 P("a:slack=10ms", "a", 10 ** 7), P("b", "b")]
        got = [(ln.label, [(s, p.spec) for s, p in ln.points]) for ln in frontier.lines(peers)]
        self.assertEqual(got, [
            ("b", [(0, "b"), (10 ** 6, "b:slack=1ms")]),
            ("a", [(0, "a"), (10 ** 7, "a:slack=10ms")]),
            ("a, OS timer slack", [(0, "a"), (10 ** 6, "a:os_slack=1ms")]),
        ])
        self.assertEqual([frontier.slack_text(x) for x in (0, 100000, 1500000, 10 ** 9, 7)],
                         ["0", "100us", "1.5ms", "1s", "7ns"])


# ---- a workload's table of differences (manifest.json `diff`, W1_exec - W1_core) ----------------
@unittest.skipUnless(HAVE_GNUPLOT, "gnuplot is not installed")
class ExecutorOverhead(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        def edit(m):
            w1x = next(w for w in m["workloads"] if w["name"] == "W1_exec")
            w1x["diff"] = {"minus": "W1_core", "label": "executor overhead", "columns": [
                {"metric": "schedule_ns", "minus": "schedule_ns", "aim": 40},
                {"metric": "cancel_ns", "minus": "cancel_ns", "aim": 40},
                {"metric": "churn_ns", "minus": "churn_ns", "aim": None}]}
            for p in m["peers"]:
                p["core_peer"] = p["spec"] if p["id"] in ("heap", WHEEL) else None
        cls.dir, cls.rc, cls.out, cls.err, cls.report = render_edited("overhead", edit)

    def test_each_engine_its_executor_minus_its_core(self):
        self.assertEqual(self.rc, 0, self.err)
        rows = csv_rows(os.path.join(FIXTURE, "results.csv"))

        def med(peer, wl, metric):
            vals = [float(r[4]) for r in rows[1:] if r[0] == peer and r[1] == wl and r[3] == metric
                    and float(r[2]) == 1e6]
            return stats.median(vals)
        lines = self.report.splitlines()
        head = next(i for i, x in enumerate(lines) if x.startswith("| executor overhead (W1_exec"))
        body = lines[head + 2:head + 5]
        for peer, label in (("heap", "heap"), (WHEEL, "wheel-1ms-1024")):
            want = [report_fmt(med(peer, "W1_exec", m) - med(peer, "W1_core", m))
                    for m in ("schedule_ns", "cancel_ns", "churn_ns")]
            self.assertIn(f"| {label} | " + " | ".join(want) + " |", body)
        self.assertIn("| aim | ≤ 40 | ≤ 40 | – |", body)
        self.assertNotIn("libuv", "".join(body))  # no core peer: no row
        self.assertIn("at N = 1e6", lines[head - 2])
        # in W1_exec's section, beside its tables, before its figures
        at = self.report.index("| executor overhead (W1_exec")
        self.assertLess(self.report.index("## W1_exec"), at)
        self.assertLess(at, self.report.index("](figures/w1_exec_"))

    def test_without_a_diff_there_is_no_table(self):
        rc, out, err = run("render", fresh("no overhead"))
        self.assertEqual(rc, 0, err)
        self.assertNotIn("executor overhead", read(os.path.join(WORK, "no overhead", "report.md")))


def report_fmt(v):
    from tkplot import report
    return report.fmt(v)


# ---- rendering the fixture ----------------------------------------------------------------------


@needs_gnuplot
class Render(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = fresh("run one")
        cls.rc, cls.out, cls.err = run("render", cls.dir)
        cls.report = read(os.path.join(cls.dir, "report.md"))
        cls.src = os.path.join(cls.dir, "figures", "src")

    def test_renders_every_figure(self):
        self.assertEqual(self.rc, 0, self.err)
        with open(os.path.join(FIXTURE, "manifest.json"), encoding="utf-8") as f:
            names = [x["name"] for x in json.load(f)["figures"]]
        for n in names:
            for ext in ("pdf", "png", "svg"):
                self.assertTrue(os.path.getsize(os.path.join(self.dir, "figures", f"{n}.{ext}")) > 0)
            self.assertTrue(os.path.isfile(os.path.join(self.src, f"{n}.gp")))
        self.assertNotIn("## Not drawn", self.report)

    def test_log_bars_start_half_a_decade_under_the_smallest(self):
        # a bar of 10.1 on an axis from 10 would be a sliver: the axis starts at 1
        d = fresh("sliver")
        rows = csv_rows(os.path.join(d, "results.csv"))
        for r in rows[1:]:
            if r[1] == "W2_spread" and r[3] == "late_p50_us" and r[0] == WHEEL:
                r[4] = "10.111"
        write_csv(os.path.join(d, "results.csv"), rows)
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        gp = read(os.path.join(d, "figures", "src", "w2_spread_lateness.gp"))
        self.assertIn("set logscale y 10", gp)
        self.assertIn("set yrange [1:*]", gp)

    def test_dat_holds_medians_and_intervals_by_n(self):
        # heap W1_core schedule_ns: rows 31.2 31.0 31.8 | 52.5 53.1 54.6 | 107.9 105.3 108.7 | ...
        self.assertEqual(read(os.path.join(self.src, "w1_core_schedule.heap.dat")),
                         "# w1_core_schedule, heap, W1_core/schedule_ns: n median ci_lo ci_hi reps min max\n"
                         "1000 31.2 31 31.8 3 31 31.8\n"
                         "10000 53.1 52.5 54.6 3 52.5 54.6\n"
                         "100000 107.9 105.3 108.7 3 105.3 108.7\n"
                         "1000000 194.5 191.6 195.2 3 191.6 195.2\n")
        self.assertTrue(read(os.path.join(self.src, "w1_core_schedule.wheel-1ms-1024.dat"))
                        .splitlines()[3].startswith("100000 25.4 "))
        bars = read(os.path.join(self.src, "w6_dist_churn.heap.dat")).splitlines()
        self.assertEqual(len(bars), 6)
        self.assertEqual(bars[1].split()[0], "1")
        self.assertEqual(bars[5].split()[4], "100000")

    def test_report_tables(self):
        r = self.report.splitlines()
        for line in (
                "| insert (ns) at N = | 1e3 | 1e4 | 1e5 | 1e6 |",
                "| --- | ---: | ---: | ---: | ---: |",
                "| heap | 31.2 [31.0, 31.8] | 53.1 [52.5, 54.6] | 107.9 [105.3, 108.7] | 194.5 [191.6, 195.2] |",
                "| naive-heap | 612.1 [609.1, 621.2] | 5902 [5777, 5974] | 60436 [60342, 62383] | – |",
                "| peer | wall (ms) | p50 lateness (µs) | p99 lateness (µs) | max lateness (µs) | start offset (ms) |",
                "| churn (ns) | uniform | exponential | bimodal | constant | monotonic |",
                "| throughput (1/s) at threads = | 1 | 2 | 4 |",
                "| measure | floor |",
                "| array append (ns) | 1.38 [1.35, 1.41] |",
                "| commit | 3f9c2ab |",
                "## W1_core: insert / cancel / churn / expire at population N (delays 10-20 s)",
                "3 repetitions: fewer than 5, so these intervals are rough; rerun with `--reps 5` or "
                "more for figures that go into a paper."):
            self.assertIn(line, r)
        self.assertIn("| heap | 5.26M [5.17M, 5.32M] |", self.report)
        # sections in manifest order, each figure in its workload's section
        heads = [x for x in r if x.startswith("## ")]
        self.assertEqual([h.split(":")[0] for h in heads[1:]],
                         ["## The field", "## W1_core", "## W1_exec", "## W2_burst", "## W2_spread", "## W3_latency",
                          "## W4_idle", "## W5_memory", "## W6_cancel_ratio", "## W6_delay_range",
                          "## W6_dist", "## W7_contention", "## slack_frontier", "## floor"])
        w7 = self.report.index("## W7_contention")
        self.assertLess(w7, self.report.index("(figures/w7_contention.png)"))

    def test_every_caption_says_what_the_bars_are(self):
        caps = re.findall(r"^\*(.*)\* \(\[PDF\]", self.report, re.M)
        self.assertEqual(len(caps), 25)  # the manifest's 24 figures and the field
        for c in caps:
            self.assertTrue("95 % bootstrap confidence intervals of the median" in c
                            or "no error bars" in c, c)

    def test_footers_are_whole_words_with_reps_and_commit(self):
        gp = read(os.path.join(self.src, "w1_core_schedule.gp"))
        labels = re.findall(r"set label 10[12] '((?:[^']|'')*)'", gp)
        self.assertEqual(len(labels), 2)
        text = " ".join(labels)
        self.assertNotIn("…", text)
        for want in ("W1_core schedule_ns", "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", "3 reps",
                     "commit 3f9c2ab", "2025-03-14T10:21:07Z", "quick suite"):
            self.assertIn(want, text)

    def test_scripts_redraw_by_hand(self):
        gp = read(os.path.join(self.src, "w7_contention.gp"))
        self.assertIn("load STYLE", gp)
        self.assertIn("set output '../w7_contention.'.FMT", gp)
        p = subprocess.run(["gnuplot", "-e", "FMT='svg'", "w7_contention.gp"], cwd=self.src,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("<svg", read(os.path.join(self.dir, "figures", "w7_contention.svg")))

    def test_second_render_is_identical(self):
        d = fresh("run twice")
        self.assertEqual(run("render", d)[0], 0)
        first = read(os.path.join(d, "report.md"))
        dats = {f: read(os.path.join(d, "figures", "src", f))
                for f in os.listdir(os.path.join(d, "figures", "src"))}
        self.assertEqual(run("render", d)[0], 0)
        self.assertEqual(read(os.path.join(d, "report.md")), first)
        self.assertEqual(first, self.report)
        for f, text in dats.items():
            self.assertEqual(read(os.path.join(d, "figures", "src", f)), text, f)

    def test_old_csv_without_rep_gives_the_same_report(self):
        d = fresh("old csv")
        shutil.copy(NOREP, os.path.join(d, "results.csv"))
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        self.assertEqual(read(os.path.join(d, "report.md")), self.report)

    def test_partial_folder(self):
        d = os.path.join(WORK, "partial")
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(FIXTURE, "manifest.json"), d)
        rows = csv_rows(os.path.join(FIXTURE, "results.csv"))
        write_csv(os.path.join(d, "results.csv"),
                  [rows[0]] + [r for r in rows[1:] if r[0] == "heap" and r[1] == "W1_core"])
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        self.assertIn("skipped w7_contention: no W7_contention/ops_per_s rows", err)
        self.assertIn("no metadata.txt or metadata.json", err)
        rep = read(os.path.join(d, "report.md"))
        self.assertIn("## Not drawn", rep)
        self.assertIn("- `w7_contention`: no W7_contention/ops_per_s rows", rep)
        self.assertNotIn("- `w1_core_overview`", rep)  # panels of one peer are still drawn
        self.assertIn("- `field`: no W1_exec/schedule_ns, W1_exec/cancel_ns", rep)
        self.assertIn("No rows of the field's workloads in results.csv.", rep)
        self.assertTrue(os.path.isfile(os.path.join(d, "figures", "w1_core_schedule.png")))
        self.assertFalse(os.path.exists(os.path.join(d, "figures", "w7_contention.png")))

    def test_one_repetition_has_no_interval(self):
        d = fresh("one rep")
        rows = csv_rows(os.path.join(d, "results.csv"))
        write_csv(os.path.join(d, "results.csv"), [rows[0]] + [r for r in rows[1:] if r[6] == "0"])
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        rep = read(os.path.join(d, "report.md"))
        heap = next(x for x in rep.splitlines() if x.startswith("| heap | 31.2 |"))
        self.assertNotIn("[", heap)
        self.assertIn("1 repetition: fewer than 5", rep)
        self.assertIn("Points are single measurements (1 repetition): no error bars.", rep)


class PeerDesign(unittest.TestCase):
    """A peer's design: its manifest entry's, else derived from its engine or name."""

    def design(self, spec, kind="baseline", engine=None, given=None):
        return load.peer_design(load.Peer(spec, spec, spec, kind, 1, spec, engine=engine), given)

    def test_derived_for_manifests_without_design(self):
        for spec, kind, engine, want in (
                ("heap", "engine", "heap", "heap"),
                ("heap@embedded", "engine", "heap", "heap"),
                ("wheel:tick=1ms,slots=1024", "engine", "wheel", "hashed wheel"),
                ("hwheel:tick=1us", "engine", None, "hierarchical wheel"),
                ("libuv", "baseline", None, "heap"), ("libevent", "baseline", None, "heap"),
                ("libev", "baseline", None, "heap"), ("asio", "baseline", None, "heap"),
                ("go-timers", "baseline", None, "heap"), ("jdk-stpe-roc", "baseline", None, "heap"),
                ("netty-100ms", "baseline", None, "hashed wheel"),
                ("tokio", "baseline", None, "hierarchical wheel"),
                ("naive-heap", "strawman", None, "heap"), ("sorted-list", "strawman", None, "list"),
                ("floor", "floor", None, ""), ("frobtimer", "baseline", None, ""),
                ("calendar", "engine", "calendar", "")):
            self.assertEqual(self.design(spec, kind, engine), want, spec)

    def test_the_manifest_wins_even_when_empty(self):
        self.assertEqual(self.design("libuv", given="calendar queue"), "calendar queue")
        self.assertEqual(self.design("libuv", given=""), "")
        self.assertEqual(self.design("floor", "floor", given="heap"), "")


@needs_gnuplot
class Field(unittest.TestCase):
    """The field (issue 27): the fixture with four synthetic peers (fixture-field/)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = field_fixture("field")
        cls.rc, cls.out, cls.err = run("render", cls.dir)
        cls.report = read(os.path.join(cls.dir, "report.md"))
        cls.table = field_table(cls.report)

    def test_rendered(self):
        self.assertEqual(self.rc, 0, self.err)
        self.assertNotIn("## Not drawn", self.report)

    def test_rows_grouped_by_design_engines_bold_floor_left_out(self):
        head, body = self.table[0], self.table[2:]
        self.assertEqual(head[:3], ["design", "peer", "W1_exec N"])
        self.assertEqual([(r[0], r[1]) for r in body], [
            ("heap", "**heap**"), ("heap", "libuv"), ("heap", "naive-heap"), ("heap", "go-timers"),
            ("heap", "libev"), ("heap", "asio"), ("hashed wheel", "**wheel-1ms-1024**"),
            ("hierarchical wheel", "tokio")])

    def test_missing_values_are_dashes(self):
        head, body = self.table[0], {r[1].strip("*"): r for r in self.table[2:]}

        def cell(peer, col):
            return body[peer][head.index(col)]

        self.assertEqual(cell("go-timers", "W5_memory bytes per timer (bytes)"), "–")
        self.assertEqual(cell("tokio", "W4_idle wake-ups (count)"), "–")
        self.assertEqual(cell("asio", "W2_burst burst rate (1/s)"), "–")
        self.assertEqual(cell("naive-heap", "W1_exec insert (ns)"), "–")
        self.assertEqual(cell("naive-heap", "W1_exec N"), "–")
        # values: medians at the largest n, formatted as the workload tables do
        self.assertEqual(cell("go-timers", "W1_exec N"), "1e5")
        self.assertEqual(cell("go-timers", "W1_exec insert (ns)"), "180.0")
        self.assertEqual(cell("heap", "W1_exec N"), "1e6")
        heap = sorted(float(r[4]) for r in csv_rows(os.path.join(FIXTURE, "results.csv"))[1:]
                      if r[:4] == ["heap", "W1_exec", "1000000", "schedule_ns"])
        self.assertEqual(cell("heap", "W1_exec insert (ns)"), report_fmt(heap[1]))
        self.assertEqual(cell("libev", "W2_burst burst rate (1/s)"), "6.90M")
        self.assertEqual(cell("wheel-1ms-1024", "W4_idle wake-ups (count)"), "5005")
        self.assertIn("W1_exec at each peer's largest N, W2_burst at N = 1e6", self.report)

    def test_figure_produced_and_in_the_report(self):
        for ext in ("pdf", "png", "svg"):
            self.assertGreater(os.path.getsize(os.path.join(self.dir, "figures", f"field.{ext}")),
                               5000)
        self.assertIn("![The field: headline values by timer design](figures/field.png)",
                      self.report)
        src = os.path.join(self.dir, "figures", "src")
        gp = read(os.path.join(src, "field.gp"))
        self.assertIn("eval term_cmd(FMT, DOUBLE_W,", gp)
        self.assertIn("lower is better", gp)
        self.assertIn("higher is better", gp)
        self.assertIn("PC[21]", gp)  # go-timers in its own slot
        mem = read(os.path.join(src, "field.W5_memory.bytes_per_timer.dat"))
        self.assertNotIn("go-timers", mem)
        self.assertIn(" asio\n", mem)

    def test_old_manifest_without_design_gives_the_same_field(self):
        def strip(m):
            for p in m["peers"]:
                p.pop("design", None)
        d = field_fixture("field old manifest", strip)
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        self.assertEqual(field_table(read(os.path.join(d, "report.md"))), self.table)

    def test_peers_of_no_known_design_come_last(self):
        def unknown(m):
            next(p for p in m["peers"] if p["id"] == "libuv")["design"] = ""
        d = field_fixture("field unknown design", unknown)
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        body = field_table(read(os.path.join(d, "report.md")))[2:]
        self.assertEqual((body[-1][0], body[-1][1]), ("other", "libuv"))

    def test_none_without_the_workloads(self):
        # the fixture without the field's workloads: no section, no figure, nothing skipped
        d = fresh("no field")
        m = json.loads(read(os.path.join(d, "manifest.json")))
        drop = {"W1_exec", "W2_burst", "W3_latency", "W4_idle", "W5_memory"}
        m["workloads"] = [w for w in m["workloads"] if w["name"] not in drop]
        m["figures"] = [f for f in m["figures"] if f["workload"] not in drop]
        write(os.path.join(d, "manifest.json"), json.dumps(m))
        rows = csv_rows(os.path.join(d, "results.csv"))
        write_csv(os.path.join(d, "results.csv"), [r for r in rows if r[1] not in drop])
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        rep = read(os.path.join(d, "report.md"))
        self.assertNotIn("The field", rep)
        self.assertNotIn("skipped field", err)
        self.assertFalse(os.path.exists(os.path.join(d, "figures", "field.png")))


class Drawing(unittest.TestCase):
    """Exit status 3 without gnuplot, 4 when one figure fails (the others are still drawn)."""

    def fake_bin(self, name, script):
        d = os.path.join(WORK, name)
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, "gnuplot")
        write(p, script)
        os.chmod(p, 0o755)
        return d

    def test_no_gnuplot(self):
        d = fresh("no gnuplot")
        empty = self.fake_bin("empty bin", "")
        os.remove(os.path.join(empty, "gnuplot"))
        rc, _, err = run("render", d, env={"PATH": empty})
        self.assertEqual(rc, 3, err)
        self.assertIn("gnuplot not found", err)

    @needs_gnuplot
    def test_a_failing_figure_exits_4_and_is_listed(self):
        real = shutil.which("gnuplot")
        fake = self.fake_bin("failing bin", "#!/bin/sh\n"
                             "case \"$*\" in *w7_contention*) echo 'broken' >&2; exit 1 ;; esac\n"
                             f"exec '{real}' \"$@\"\n")
        d = fresh("one fails")
        rc, _, err = run("render", d, env={"PATH": fake + os.pathsep + os.environ["PATH"],
                                           "TK_PLOTS_NO_PDFTOCAIRO": "1"})
        self.assertEqual(rc, 4, err)
        self.assertIn("drawing w7_contention failed", err)
        self.assertIn("    broken", err)
        rep = read(os.path.join(d, "report.md"))
        self.assertIn("- `w7_contention`: drawing failed", rep)
        self.assertTrue(os.path.isfile(os.path.join(d, "figures", "w6_cancel_ratio.png")))
        self.assertFalse(os.path.exists(os.path.join(d, "figures", "w7_contention.pdf")))


@needs_gnuplot
class NewWorkload(unittest.TestCase):
    """A workload the renderer has never heard of is drawn from its manifest entries alone."""

    def test_w9_demo(self):
        d = os.path.join(WORK, "w9 demo")
        os.makedirs(d, exist_ok=True)
        man = {
            "format": 1, "generator": "test", "synthesized": False,
            "units": [{"name": "ns", "text": "ns", "si": False, "si_suffix": ""}],
            "peers": [{"id": "heap", "spec": "heap", "label": "heap", "kind": "engine",
                       "slot": 1, "file": "heap"},
                      {"id": WHEEL, "spec": WHEEL, "label": "wheel-1ms-1024", "kind": "engine",
                       "slot": 2, "file": "wheel-1ms-1024"}],
            "workloads": [{"name": "W9_demo", "group": "W9", "level": "core",
                           "summary": "a demonstration", "reps": 3,
                           "x": {"label": "widgets, W", "short": "W", "scale": "lin"},
                           "rows": [{"workload": "W9_demo", "label": ""}], "hist": False,
                           "metrics": [{"name": "frob_ns", "unit": "ns", "better": "lower",
                                        "label": "frobnicate", "pct": None, "headline": None}]}],
            "figures": [{"name": "w9_demo_frob", "kind": "lines", "workload": "W9_demo",
                         "size": "single", "title": "W9: frobnication", "caption": "Frobnication cost.",
                         "x": {"label": "widgets, W", "scale": "lin", "min_top": None},
                         "y": {"label": "time per frob", "scale": "lin", "min_top": None},
                         "series": [{"workload": "W9_demo", "metric": "frob_ns", "label": "frob"}],
                         "refs": []}],
            "hist": [], "some_future_key": {"ignored": True},
        }
        write(os.path.join(d, "manifest.json"), json.dumps(man))
        rows = [list(load.COLUMNS)]
        for peer, base in (("heap", 10.0), (WHEEL, 5.0)):
            for w in (1, 2, 4):
                for rep in range(3):
                    rows.append([peer, "W9_demo", str(w), "frob_ns", str(base * w + rep), "ns", str(rep)])
        write_csv(os.path.join(d, "results.csv"), rows)
        rc, _, err = run("render", d)
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.getsize(os.path.join(d, "figures", "w9_demo_frob.png")) > 5000)
        rep = read(os.path.join(d, "report.md"))
        self.assertIn("## W9_demo: a demonstration", rep)
        self.assertIn("| frobnicate (ns) at W = | 1 | 2 | 4 |", rep)
        self.assertIn("| wheel-1ms-1024 | 6.00 [5.00, 7.00] | 11.0 [10.0, 12.0] | 21.0 [20.0, 22.0] |", rep)
        self.assertIn("![W9: frobnication](figures/w9_demo_frob.png)", rep)
        self.assertIn("set xtics (1,2,4)", read(os.path.join(d, "figures", "src", "w9_demo_frob.gp")))


@needs_gnuplot
class Compare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = fresh("run A"), fresh("run B")
        for d, lab in ((cls.a, "before"), (cls.b, "after")):
            p = os.path.join(d, "metadata.txt")
            write(p, re.sub(r"^label:.*$", f"label: {lab}", read(p), flags=re.M))
            five_reps(os.path.join(d, "results.csv"))
        rows = csv_rows(os.path.join(cls.b, "results.csv"))
        for r in rows[1:]:
            if r[0] == WHEEL:
                r[4] = repr(float(r[4]) * 0.8)
        write_csv(os.path.join(cls.b, "results.csv"), rows)
        cls.out = os.path.join(WORK, "compare out")
        cls.rc, cls.stdout, cls.err = run("compare", cls.out, cls.a, cls.b)
        cls.md = read(os.path.join(cls.out, "compare.md"))

    def rows(self):
        out = []
        for line in self.md.splitlines():
            f = [x.strip() for x in line.strip("|").split("|")]
            if len(f) == 9 and f[0] != "workload" and not f[0].startswith("-"):
                out.append(dict(zip(("wl", "n", "metric", "peer", "a", "b", "ratio", "p", "mark"), f)))
        return out

    def test_wheel_rows_significant_heap_rows_not(self):
        self.assertEqual(self.rc, 0, self.err)
        rows = self.rows()
        self.assertEqual(len(rows), 275)
        wheel = [r for r in rows if r["peer"] == "wheel-1ms-1024"]
        for r in wheel:
            if r["ratio"] == "–":  # early_count: 0 in both runs
                self.assertEqual(r["mark"], "")
                continue
            self.assertTrue(r["ratio"].startswith("0.800 ["), r)
            # 20 % lower: better for costs (wake-ups too), worse for rates, a change of
            # direction-less offsets
            want = "differs" if "offset_ms" in r["metric"] else \
                "worse" if "per_s" in r["metric"] and "wakeups" not in r["metric"] else "better"
            self.assertEqual(r["mark"], want, r)
        for r in rows:
            if r["peer"] != "wheel-1ms-1024":
                self.assertEqual(r["mark"], "", r)
        self.assertIn("| W1_core | 1e5 | schedule_ns (ns) | heap | 107.9 [105.1, 108.7] | "
                      "107.9 [105.1, 108.7] | 1.000 [0.972, 1.029] | 1 |  |", self.md)

    def test_summary_on_stdout(self):
        self.assertIn("better: W1_core 1e5 schedule_ns wheel-1ms-1024: after/before 0.800", self.stdout)
        self.assertIn("compare: 275 comparisons with before: 68 significant, 0 with too few "
                      "repetitions for a 5 % test", self.stdout)
        self.assertNotIn(": heap:", self.stdout)

    def test_runs_side_by_side(self):
        self.assertIn("| label | before | after |", self.md)
        self.assertIn("| workload | n | metric | peer | before | after | after/before | p | change |",
                      self.md)

    def test_three_repetitions_decide_nothing(self):
        # the fixture as it is: 3 repetitions a run, where no 5 % test is possible; the wheel
        # rows, 20 % apart, are shown with their ratio but not marked
        a, b = fresh("three A"), fresh("three B")
        rows = csv_rows(os.path.join(b, "results.csv"))
        for r in rows[1:]:
            if r[0] == WHEEL:
                r[4] = repr(float(r[4]) * 0.8)
        write_csv(os.path.join(b, "results.csv"), rows)
        out = os.path.join(WORK, "compare three")
        rc, stdout, err = run("compare", out, a, b)
        self.assertEqual(rc, 0, err)
        md = read(os.path.join(out, "compare.md"))
        self.assertIn("| W1_core | 1e5 | schedule_ns (ns) | wheel-1ms-1024 | 25.4 [25.1, 25.7] | "
                      "20.3 [20.1, 20.6] | 0.800 [0.781, 0.819] | 0.1 | too few repetitions |", md)
        self.assertIn("compare: 275 comparisons with fixture: 0 significant, 275 with too few "
                      "repetitions for a 5 % test", stdout)
        self.assertNotIn("better:", stdout)

    def test_the_machine_is_checked_first(self):
        # the fixture's two runs have the same floor: no note on the machine
        self.assertNotIn("The machine", self.md)
        # a run whose floor measured 30 % faster: the machine was not in the same state
        a, b = fresh("machine A"), fresh("machine B")
        for d, floor in ((a, 1.0), (b, 0.7)):
            p = os.path.join(d, "results.csv")
            five_reps(p)
            rows = csv_rows(p)
            for r in rows[1:]:
                if r[1] == "floor" and r[3] == "clock_ns":
                    r[4] = repr(float(r[4]) * floor)
            write_csv(p, rows)
        out = os.path.join(WORK, "compare machine")
        rc, stdout, err = run("compare", out, a, b)
        self.assertEqual(rc, 0, err)
        self.assertIn("note: The machine itself measured differently in these runs "
                      "(clock_ns 0.700x)", stdout)
        self.assertIn("**The machine.** The machine itself measured differently",
                      read(os.path.join(out, "compare.md")))
        # a run without the floor: compare says it cannot tell
        rows = csv_rows(os.path.join(b, "results.csv"))
        write_csv(os.path.join(b, "results.csv"), [r for r in rows if r[1] != "floor"])
        rc, stdout, err = run("compare", out, a, b)
        self.assertEqual(rc, 0, err)
        self.assertIn("note: Not every run measured the machine (floor)", stdout)

    def test_same_labels_are_made_unique(self):
        out = os.path.join(WORK, "compare same")
        rc, stdout, err = run("compare", out, self.a, self.a)
        self.assertEqual(rc, 0, err)
        self.assertIn("| key | before | before#2 |", read(os.path.join(out, "compare.md")))
        self.assertIn("0 significant", stdout)


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    if not r.wasSuccessful():
        sys.exit(1)
    if not HAVE_GNUPLOT:
        print("SKIP: gnuplot not installed (apt-get install gnuplot-nox): the drawing tests did not run")
        sys.exit(77)
    sys.exit(0)
