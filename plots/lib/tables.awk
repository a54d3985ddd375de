# Markdown tables from the aggregated results (POSIX awk, mawk-safe).
# Files: series.tsv (sid run peer slot label), then agg.tsv (run peer workload n metric unit count
# mean min max sd lo hi). Variables:
#   mode=byn      wl, metric, scale, rowhead: rows = series, columns = every n of (wl, metric)
#   mode=cols     spec = "header|workload|metric|n|scale;..." (n empty: the largest n of that series)
#   mode=other    known = space separated workloads already shown: one row per remaining measurement
#   mode=compare  nruns, labels ("A|B|..."): one row per (workload, n, metric, peer), ratio to run 1
# Prints nothing (exit 0) when no cell would be filled, so the caller can leave the table out.
function fmt(v,   a) {
  if (v == "") return "–"
  a = v < 0 ? -v : v
  if (a == 0) return "0"
  if (a >= 1000) return sprintf("%.0f", v)
  if (a >= 10) return sprintf("%.1f", v)
  if (a >= 1) return sprintf("%.2f", v)
  return sprintf("%.3g", v)
}
function fmtn(n,   e) {              # 1000 -> 1e3 (powers of ten), else as is
  if (n + 0 >= 1000 && n ~ /^10*$/) { e = length(n) - 1; return "1e" e }
  return n
}
function numsort(arr, cnt,   i, j, t) {
  for (i = 2; i <= cnt; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] + 0 > t + 0; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
}
function better(metric, unit, r) {
  if (r == "" || metric == "offset_ms" || metric == "early_count" && r == 1) return ""
  if (r > 0.95 && r < 1.0526) return "≈"
  if (unit == "per_s") return (r > 1) ? "better" : "worse"
  return (r < 1) ? "better" : "worse"
}
BEGIN { FS = "\t" }
FNR == NR { sid[$2 SUBSEP $3] = $1; lab[$1] = $5; if ($1 + 0 > nsid) nsid = $1 + 0; next }
{
  k = $1 SUBSEP $2
  if (!(k in sid)) next
  s = sid[k]
  # fields: 1 run 2 peer 3 wl 4 n 5 metric 6 unit 7 count 8 mean
  if (mode == "byn" && $3 == wl && $5 == metric) {
    if (!(($4) in seen_n)) { seen_n[$4] = 1; ns[++nn] = $4 }
    cell[s SUBSEP $4] = $8 / scale; has[s] = 1; any = 1
  } else if (mode == "cols" || mode == "compare" || mode == "other") {
    key = $3 SUBSEP $5
    val[s SUBSEP key SUBSEP $4] = $8
    if (!((s SUBSEP key) in maxn) || $4 + 0 > maxn[s SUBSEP key] + 0) maxn[s SUBSEP key] = $4
    unit[$3 SUBSEP $5] = $6
    row[++nrow] = $0
  }
}
END {
  if (mode == "byn") {
    if (!any) exit 0
    numsort(ns, nn)
    printf "| %s |", rowhead; for (i = 1; i <= nn; i++) printf " %s |", fmtn(ns[i]); printf "\n"
    printf "| --- |"; for (i = 1; i <= nn; i++) printf " ---: |"; printf "\n"
    for (s = 1; s <= nsid; s++) {
      if (!(s in has)) continue
      printf "| %s |", lab[s]
      for (i = 1; i <= nn; i++) printf " %s |", ((s SUBSEP ns[i]) in cell) ? fmt(cell[s SUBSEP ns[i]]) : "–"
      printf "\n"
    }
  } else if (mode == "cols") {
    nc = split(spec, cs, ";")
    for (c = 1; c <= nc; c++) { split(cs[c], p, "|"); H[c] = p[1]; W[c] = p[2]; M[c] = p[3]; N[c] = p[4]; S[c] = (p[5] == "" ? 1 : p[5]) }
    for (s = 1; s <= nsid; s++) for (c = 1; c <= nc; c++) {
      key = W[c] SUBSEP M[c]
      n = (N[c] == "") ? maxn[s SUBSEP key] : N[c]
      if (n != "" && ((s SUBSEP key SUBSEP n) in val)) { out[s SUBSEP c] = val[s SUBSEP key SUBSEP n] / S[c]; rowok[s] = 1; colok[c] = 1 }
    }
    for (c = 1; c <= nc; c++) if (c in colok) any = 1
    if (!any) exit 0
    printf "| peer |"; for (c = 1; c <= nc; c++) if (c in colok) printf " %s |", H[c]; printf "\n"
    printf "| --- |"; for (c = 1; c <= nc; c++) if (c in colok) printf " ---: |"; printf "\n"
    for (s = 1; s <= nsid; s++) {
      if (!(s in rowok)) continue
      printf "| %s |", lab[s]
      for (c = 1; c <= nc; c++) if (c in colok) printf " %s |", ((s SUBSEP c) in out) ? (unit[W[c] SUBSEP M[c]] == "count" && out[s SUBSEP c] == int(out[s SUBSEP c]) ? sprintf("%d", out[s SUBSEP c]) : fmt(out[s SUBSEP c])) : "–"
      printf "\n"
    }
  } else if (mode == "other") {
    nk = split(known, kw, " "); for (i = 1; i <= nk; i++) isknown[kw[i]] = 1
    for (i = 1; i <= nrow; i++) {
      split(row[i], f, "\t")
      if ((f[3] in isknown) || f[3] ~ /^W6_dist_/) continue
      if (!any) { print "| workload | n | metric | peer | mean | unit | reps |"; print "| --- | ---: | --- | --- | ---: | --- | ---: |"; any = 1 }
      printf "| %s | %s | %s | %s | %s | %s | %s |\n", f[3], fmtn(f[4]), f[5], lab[sid[f[2] SUBSEP f[1]]], fmt(f[8]), f[6], f[7]
    }
  } else if (mode == "compare") {
    nl = split(labels, L, "|")
    # one line per (workload, n, metric, peer); the runs are the columns
    for (i = 1; i <= nrow; i++) {
      split(row[i], f, "\t")
      rk = f[3] SUBSEP f[4] SUBSEP f[5] SUBSEP f[2]
      if (!(rk in rseen)) { rseen[rk] = 1; rows[++nr] = rk }
      rv[rk SUBSEP f[1]] = f[8]; ru[rk] = f[6]
    }
    if (!nr) exit 0
    printf "| workload | n | metric | peer |"
    for (r = 1; r <= nl; r++) printf " %s |", L[r]
    for (r = 2; r <= nl; r++) printf " %s/%s |", L[r], L[1]
    printf "\n| --- | ---: | --- | --- |"
    for (r = 1; r <= nl; r++) printf " ---: |"
    for (r = 2; r <= nl; r++) printf " ---: |"
    printf "\n"
    for (i = 1; i <= nr; i++) {
      split(rows[i], f, SUBSEP)
      printf "| %s | %s | %s | %s |", f[1], fmtn(f[2]), f[3] " (" ru[rows[i]] ")", f[4]
      for (r = 1; r <= nl; r++) printf " %s |", ((rows[i] SUBSEP r) in rv) ? fmt(rv[rows[i] SUBSEP r]) : "–"
      for (r = 2; r <= nl; r++) {
        a = ((rows[i] SUBSEP 1) in rv) ? rv[rows[i] SUBSEP 1] : ""
        b = ((rows[i] SUBSEP r) in rv) ? rv[rows[i] SUBSEP r] : ""
        if (a == "" || b == "" || a + 0 == 0) { printf " – |"; continue }
        q = b / a; w = better(f[3], ru[rows[i]], q)
        printf " %.3f%s |", q, (w == "" ? "" : " " w)
      }
      printf "\n"
    }
  }
}
