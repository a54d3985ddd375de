# Parse an HdrHistogram percentile file (outputPercentileDistribution text format).
# POSIX awk. Output rows: value percentile inverse   (inverse = 1/(1-percentile), NaN at 100 %)
# Header, blank and "#[...]" footer lines are ignored; so is anything that is not three or four numbers.
function isnum(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
{ sub(/\r$/, "") }
NF >= 3 && isnum($1) && isnum($2) && isnum($3) {
  p = $2 + 0
  if (p < 0 || p > 1) next
  if (p >= 1) inv = "NaN"; else inv = sprintf("%.6g", 1 / (1 - p))
  printf "%s %.12g %s\n", $1 + 0, p, inv
  rows++
}
END { if (!rows) exit 3 }
