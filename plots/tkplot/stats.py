# SPDX-License-Identifier: MIT
"""Statistics over repetitions: median, bootstrap confidence intervals, Mann-Whitney U.

Every point in a figure and every cell in a table is the median of a measurement's repetitions,
with a 95 % confidence interval of that median from a percentile bootstrap: RESAMPLES resamples
of the repetitions (with replacement), the median of each, and the 2.5th and 97.5th percentiles
of those medians (linear interpolation between order statistics). Each interval draws from its
own random.Random(SEED) over the sorted values, so it depends only on the values: a report
renders to the same bytes every time.

`compare` sets run B against run A: the ratio of medians B/A with a bootstrap interval
(independent resamples of A and B) and a two-sided Mann-Whitney U test of the repetitions. A
percentile bootstrap interval is too narrow for very few repetitions: when two runs of identical
noise were compared by simulation, the ratio's interval excluded 1 in 11 % of comparisons with 3
repetitions a run and 9.5 % with 4, and in about 5 % from 5 on. So the interval decides only when
both runs have CI_MIN_REPS repetitions; below that only the exact test can, and with 3 against 3
no 5 % test is possible at all (the smallest two-sided p is 2 / C(6, 3) = 0.1).
"""

import functools
import math
import random

SEED = 20250314
RESAMPLES = 2000
LEVEL = 0.95
CI_MIN_REPS = 5  # from this many repetitions in both runs the ratio's interval may decide
ALPHA = 0.05


def median(xs):
    """The median; the mean of the two middle values for an even count."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of nothing")
    h = n // 2
    return s[h] if n % 2 else (s[h - 1] + s[h]) / 2


def quantile(sorted_xs, q):
    """The q-quantile of sorted values, interpolating linearly between order statistics."""
    n = len(sorted_xs)
    pos = q * (n - 1)
    i = int(math.floor(pos))
    if i >= n - 1:
        return sorted_xs[-1]
    frac = pos - i
    return sorted_xs[i] + (sorted_xs[i + 1] - sorted_xs[i]) * frac


def _tails(level):
    a = (1 - level) / 2
    return a, 1 - a


def _resampled_medians(s, rng, resamples):
    """The medians of `resamples` resamples (with replacement) of the values s."""
    n, h = len(s), len(s) // 2
    out = []
    for _ in range(resamples):
        r = rng.choices(s, k=n)
        r.sort()
        out.append(r[h] if n % 2 else (r[h - 1] + r[h]) / 2)
    return out


@functools.lru_cache(maxsize=4096)
def _median_ci(s, resamples, seed, level):
    rng = random.Random(seed)
    meds = sorted(_resampled_medians(list(s), rng, resamples))
    qlo, qhi = _tails(level)
    return quantile(meds, qlo), quantile(meds, qhi)


def bootstrap_median_ci(xs, resamples=RESAMPLES, seed=SEED, level=LEVEL):
    """(lo, hi): the percentile-bootstrap interval of the median. One value: (it, it)."""
    s = tuple(sorted(xs))
    if len(s) == 1:
        return s[0], s[0]
    return _median_ci(s, resamples, seed, level)


def ratio_ci(a, b, resamples=RESAMPLES, seed=SEED, level=LEVEL):
    """(ratio, lo, hi): median(b) / median(a) and its bootstrap interval from independent
    resamples of a and b. None when median(a) is 0; lo = hi = ratio when both have one value.
    Resamples whose median of a is 0 are left out."""
    sa, sb = sorted(a), sorted(b)
    ma = median(sa)
    if ma == 0:
        return None
    r = median(sb) / ma
    if len(sa) == 1 and len(sb) == 1:
        return r, r, r
    rng = random.Random(seed)
    rs = []
    for _ in range(resamples):
        da = _resampled_medians(sa, rng, 1)[0]
        db = _resampled_medians(sb, rng, 1)[0]
        if da != 0:
            rs.append(db / da)
    if not rs:
        return r, r, r
    rs.sort()
    qlo, qhi = _tails(level)
    return r, quantile(rs, qlo), quantile(rs, qhi)


def ranks(values):
    """Ranks 1..n of values, ties given the mean of their ranks; and the tie group sizes."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    rk = [0.0] * len(values)
    groups = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mid = (i + j) / 2 + 1
        for k in range(i, j + 1):
            rk[order[k]] = mid
        groups.append(j - i + 1)
        i = j + 1
    return rk, groups


def u_distribution(n1, n2):
    """counts[u]: in how many of the C(n1+n2, n1) orderings without ties U equals u."""
    # f[i][j] as a list over u: the U distribution of sizes i and j; f(i, j) = f(i-1, j) shifted
    # by j (the largest value is in the first sample) + f(i, j-1)
    prev = [[1] for _ in range(n2 + 1)]  # i = 0: U = 0 for any j
    for i in range(1, n1 + 1):
        cur = [[1]]  # j = 0
        for j in range(1, n2 + 1):
            a = [0] * j + prev[j]  # f(i-1, j) shifted by j
            b = cur[j - 1]
            size = max(len(a), len(b))
            cur.append([(a[u] if u < len(a) else 0) + (b[u] if u < len(b) else 0)
                        for u in range(size)])
        prev = cur
    return prev[n2]


def mann_whitney(a, b):
    """(U of a, two-sided p, method): the Mann-Whitney U test of samples a and b.
    method "exact" (the exact distribution of U) when there are no ties and either sample has
    at most 8 values; else "normal" (normal approximation with the tie correction of the variance
    and a continuity correction). These are scipy.stats.mannwhitneyu's defaults."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("Mann-Whitney U of an empty sample")
    rk, groups = ranks(list(a) + list(b))
    r1 = sum(rk[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    u2 = n1 * n2 - u1
    big = max(u1, u2)
    ties = any(g > 1 for g in groups)
    if not ties and (n1 <= 8 or n2 <= 8):
        counts = u_distribution(n1, n2)
        total = sum(counts)
        k = int(round(big))
        p = 2 * sum(counts[k:]) / total
        return u1, min(1.0, p), "exact"
    n = n1 + n2
    tie_term = sum(g ** 3 - g for g in groups)
    var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return u1, 1.0, "normal"
    z = (big - n1 * n2 / 2 - 0.5) / math.sqrt(var)
    p = math.erfc(z / math.sqrt(2))  # 2 * (1 - Phi(z))
    return u1, min(1.0, max(0.0, p)), "normal"


def min_p(n1, n2):
    """The smallest two-sided p the exact Mann-Whitney test can give for samples of n1 and n2."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def compare(a, b, better):
    """The comparison of run B's repetitions b with run A's a, as a dict:
    ratio, lo, hi (None when median(a) is 0), p, testable, significant, mark.
    Testable when some 5 % decision is possible: both runs have CI_MIN_REPS repetitions or more,
    or the exact test can reach p < ALPHA with these sizes. Significant when p < ALPHA, or when
    both runs have CI_MIN_REPS repetitions and the ratio's interval excludes 1; never by a fixed
    percentage. mark is "better"/"worse" by the metric's direction `better` (lower/higher),
    "differs" for none, "" when not significant."""
    rc = ratio_ci(a, b)
    _, p, _ = mann_whitney(a, b)
    use_ci = min(len(a), len(b)) >= CI_MIN_REPS
    testable = use_ci or min_p(len(a), len(b)) < ALPHA
    excl = use_ci and rc is not None and (rc[1] > 1 or rc[2] < 1)
    sig = testable and (excl or p < ALPHA)
    mark = ""
    if sig:
        ma, mb = median(a), median(b)
        if better == "none" or ma == mb:
            mark = "differs"
        elif (mb < ma) == (better == "lower"):
            mark = "better"
        else:
            mark = "worse"
    return {"ratio": None if rc is None else rc[0], "lo": None if rc is None else rc[1],
            "hi": None if rc is None else rc[2], "p": p, "testable": testable,
            "significant": sig, "mark": mark}
