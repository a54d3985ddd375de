# Aggregate results.csv rows (peer,workload,n,metric,value,unit) of one run.
# POSIX awk (mawk-safe). Input: one results.csv. Variables: run (index), errmode (minmax|stddev).
# Output, tab separated, one line per (peer, workload, n, metric):
#   run peer workload n metric unit count mean min max sd lo hi
# lo/hi are the error-bar ends: min/max, or mean -/+ sample standard deviation (errmode=stddev).
# Skipped rows are counted per reason and written to the file named by skipfile.
function trim(s) { gsub(/^[ \t"]+|[ \t"]+$/, "", s); return s }
function isnum(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
BEGIN { FS = ","; OFS = "\t" }
{ sub(/\r$/, "") }
/^[ \t]*$/ { next }
/^[ \t]*#/ { next }
FNR == 1 && tolower(trim($1)) == "peer" { next }
{
  if (NF < 5) { bad["too few fields"]++; next }
  peer = trim($1); wl = trim($2); n = trim($3); metric = trim($4); v = trim($5)
  unit = (NF >= 6) ? trim($6) : ""
  if (peer == "" || wl == "" || metric == "") { bad["empty peer/workload/metric"]++; next }
  if (!isnum(v)) { bad["non-numeric value"]++; next }
  if (isnum(n)) n = sprintf("%.10g", n + 0)          # 1e5 and 100000 are the same N
  k = peer SUBSEP wl SUBSEP n SUBSEP metric
  v = v + 0
  if (!(k in cnt)) { order[++nk] = k; cnt[k] = 0; sum[k] = 0; ssq[k] = 0; mn[k] = v; mx[k] = v; un[k] = unit }
  else if (unit != un[k] && unit != "") { bad["unit differs from earlier rows of the same metric"]++; next }
  cnt[k]++; sum[k] += v; ssq[k] += v * v
  if (v < mn[k]) mn[k] = v
  if (v > mx[k]) mx[k] = v
}
END {
  for (i = 1; i <= nk; i++) {
    k = order[i]; split(k, f, SUBSEP)
    c = cnt[k]; m = sum[k] / c
    var = (c > 1) ? (ssq[k] - c * m * m) / (c - 1) : 0
    if (var < 0) var = 0
    sd = sqrt(var)
    if (errmode == "stddev") { lo = m - sd; hi = m + sd; if (lo <= 0) lo = (mn[k] > 0 ? mn[k] : m) }
    else { lo = mn[k]; hi = mx[k] }
    print run, f[1], f[2], f[3], f[4], (un[k] == "" ? "-" : un[k]), c, \
      sprintf("%.6g", m), sprintf("%.6g", mn[k]), sprintf("%.6g", mx[k]), sprintf("%.6g", sd), \
      sprintf("%.6g", lo), sprintf("%.6g", hi)
  }
  for (r in bad) printf "%d rows skipped: %s\n", bad[r], r > skipfile
}
