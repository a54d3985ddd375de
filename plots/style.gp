# timerkit shared figure style (gnuplot 5.4). Loaded by every figure plots/render.py draws.
#
# Peers are drawn by a "slot", so a peer keeps its colour, dash and point in every figure of a run
# and, as far as the runs' peers allow, across runs (each peer's `slot` in the results folder's
# manifest.json; tkbench assigns them, bench/peers/peers.c, tkb_peer_arrange):
#   1-4   engine k of the registry (engines/CMakeLists.txt order) owns slot k+1 for its first
#         parameter set (1 heap, 2 wheel, 3 the next engine...); an engine's further parameter sets
#         take the free ones of 1-4, then 10-12
#   5 libuv   6 libevent   7 naive-heap   8 sorted-list   9 floor
#   10-12 further parameter sets, spinning variants, any other peer
#   13-16 the embedded-timer variant of the peer in slot 1-4
#   17 jdk-stpe   18 jdk-stpe-roc   19 netty-1ms   20 netty-100ms  (the JVM peers: hollow-looking
#         points, the JDK's two in reds, Netty's two in blues)
#   21 go-timers  22 tokio  23 libev  24 asio  (the other runtimes' timers: Go's and Tokio's
#         with open points of their own, libev and asio with libuv's and libevent's filled shapes
#         in colours of their own)
# The embedded-timer variants (executor level only) have colours of their own, the point shape of
# their base peer (so a pair reads as one engine) and dash types of their own.
# Colours: gnuplot's "podo" sequence (Okabe-Ito, colour-blind safe) without its yellow #f0e442,
# which vanishes on white; then greys. Every slot also has its own dash type, point shape and bar
# fill pattern, so the figures survive grayscale printing.
# In comparisons (render.py compare) colour and point shape still name the peer; the run is told
# by the dash type (run 1 solid, 2 dashed, 3 dotted, 4 dash-dot), by filled vs open points
# (odd runs filled, even runs open) and, for bars, by the fill pattern.

set encoding utf8

# ---- sizes (inches) and raster/vector scales --------------------------------------------------------
SINGLE_W = 3.3 ; SINGLE_H = 2.2      # one column of a two-column paper
DOUBLE_W = 7.0 ; DOUBLE_H = 2.5      # full text width
PNG_DPI  = 200.0                     # PNG for READMEs: 660 x 440 px for a single-column figure
SVG_DPI  = 72.0                      # gnuplot's svg takes pixels and no font scale: 1 px = 1 pt
FONT     = "Helvetica"
FONTSIZE = 7                         # points, at print size
KEYFONT  = 6                         # (literal in "set key" below)
FOOTFONT = 4.5
# The cairo terminals lay text out at 96 dpi, gnuplot everything else at 72 (and pdfcairo's own
# default fontscale is 0.5): a fontscale of 72/96 makes a FONTSIZE-point font FONTSIZE points tall
# at print size in the PDF, and as large against the canvas in the PNG as in the PDF and the SVG.
CAIRO_PT = 0.75

# One terminal per (format, size); eval'd by the figure driver, e.g. eval TERM_pdf_single
term_cmd(fmt, w, h) = \
  fmt eq "pdf" ? sprintf("set terminal pdfcairo enhanced color rounded font '%s,%g' size %gin,%gin fontscale %g linewidth 1 background '#ffffff'", FONT, FONTSIZE, w, h, CAIRO_PT) : \
  fmt eq "png" ? sprintf("set terminal pngcairo enhanced color rounded font '%s,%g' size %d,%d fontscale %g linewidth %g pointscale %g", FONT, FONTSIZE, int(w*PNG_DPI+0.5), int(h*PNG_DPI+0.5), PNG_DPI/72.0*CAIRO_PT, PNG_DPI/72.0, PNG_DPI/72.0) : \
  sprintf("set terminal svg enhanced rounded font '%s,%g' size %d,%d background '#ffffff'", FONT, FONTSIZE, int(w*SVG_DPI+0.5), int(h*SVG_DPI+0.5))
TERM_pdf_single = term_cmd("pdf", SINGLE_W, SINGLE_H)
TERM_png_single = term_cmd("png", SINGLE_W, SINGLE_H)
TERM_svg_single = term_cmd("svg", SINGLE_W, SINGLE_H)
TERM_pdf_double = term_cmd("pdf", DOUBLE_W, DOUBLE_H)
TERM_png_double = term_cmd("png", DOUBLE_W, DOUBLE_H)
TERM_svg_double = term_cmd("svg", DOUBLE_W, DOUBLE_H)

# ---- per-slot style tables -------------------------------------------------------------------------------
NSLOTS = 24
array PC[NSLOTS]   # line / fill colour
array PD[NSLOTS]   # dash type (single run)
array PT[NSLOTS]   # point type, filled
array PTO[NSLOTS]  # point type, open
array PF[NSLOTS]   # bar fill pattern (single run)
PC[1]  = "#000000"; PD[1]  = 1;  PT[1]  = 7;  PTO[1]  = 6;  PF[1]  = 2   # engine 1 (heap): black, solid, circle
PC[2]  = "#e69f00"; PD[2]  = 2;  PT[2]  = 5;  PTO[2]  = 4;  PF[2]  = 5   # engine 2 (wheel): orange, dashed, square
PC[3]  = "#56b4e9"; PD[3]  = 4;  PT[3]  = 9;  PTO[3]  = 8;  PF[3]  = 4   # engine 3: sky blue, dash-dot, triangle
PC[4]  = "#009e73"; PD[4]  = 6;  PT[4]  = 11; PTO[4]  = 10; PF[4]  = 1   # engine 4: green, long dash-dot-dot, inverted triangle
PC[5]  = "#0072b2"; PD[5]  = 3;  PT[5]  = 13; PTO[5]  = 12; PF[5]  = 7   # libuv: blue, dotted, diamond
PC[6]  = "#d55e00"; PD[6]  = 5;  PT[6]  = 15; PTO[6]  = 14; PF[6]  = 6   # libevent: vermillion, dash-dot-dot, pentagon
PC[7]  = "#cc79a7"; PD[7]  = 7;  PT[7]  = 2;  PTO[7]  = 2;  PF[7]  = 0   # naive-heap: reddish purple, long dash, cross
PC[8]  = "#5f5f5f"; PD[8]  = 8;  PT[8]  = 3;  PTO[8]  = 3;  PF[8]  = 3   # sorted-list: dark grey, short dash, star
PC[9]  = "#9a9a9a"; PD[9]  = 9;  PT[9]  = 1;  PTO[9]  = 1;  PF[9]  = 3   # floor: light grey, dense dots, plus
PC[10] = "#882255"; PD[10] = 10; PT[10] = 5;  PTO[10] = 4;  PF[10] = 6   # others: Tol's wine, teal, olive,
PC[11] = "#44aa99"; PD[11] = 11; PT[11] = 13; PTO[11] = 12; PF[11] = 1   # each with a dash of its own
PC[12] = "#999933"; PD[12] = 12; PT[12] = 9;  PTO[12] = 8;  PF[12] = 5
PC[13] = "#332288"; PD[13] = 13; PT[13] = 7;  PTO[13] = 6;  PF[13] = 3   # slot 1 embedded: Tol's indigo, circle
PC[14] = "#aa4499"; PD[14] = 14; PT[14] = 5;  PTO[14] = 4;  PF[14] = 7   # slot 2 embedded: Tol's purple, square
PC[15] = "#117733"; PD[15] = 15; PT[15] = 9;  PTO[15] = 8;  PF[15] = 6   # slot 3 embedded: Tol's green, triangle
PC[16] = "#ddaa33"; PD[16] = 16; PT[16] = 11; PTO[16] = 10; PF[16] = 0   # slot 4 embedded: Tol's yellow, inv. triangle
PC[17] = "#a50026"; PD[17] = 17; PT[17] = 6;  PTO[17] = 6;  PF[17] = 4   # jdk-stpe: dark red, open circle
PC[18] = "#f46d43"; PD[18] = 18; PT[18] = 4;  PTO[18] = 4;  PF[18] = 2   # jdk-stpe-roc: salmon, open square
PC[19] = "#313695"; PD[19] = 19; PT[19] = 8;  PTO[19] = 8;  PF[19] = 7   # netty-1ms: navy, open triangle
PC[20] = "#74add1"; PD[20] = 20; PT[20] = 10; PTO[20] = 10; PF[20] = 5   # netty-100ms: light blue, open inv. triangle
PC[21] = "#8c510a"; PD[21] = 21; PT[21] = 12; PTO[21] = 12; PF[21] = 3   # go-timers: brown, open diamond
PC[22] = "#e7298a"; PD[22] = 22; PT[22] = 14; PTO[22] = 14; PF[22] = 1   # tokio: magenta, open pentagon
PC[23] = "#66a61e"; PD[23] = 23; PT[23] = 13; PTO[23] = 12; PF[23] = 5   # libev: lime, diamond
PC[24] = "#7570b3"; PD[24] = 24; PT[24] = 15; PTO[24] = 14; PF[24] = 7   # asio: slate violet, pentagon
set dashtype 6  (10,3,2,3,2,3)
set dashtype 7  (12,4)
set dashtype 8  (4,3)
set dashtype 9  (1,2)
set dashtype 10 (8,3,2,3)
set dashtype 11 (14,3,3,3)
set dashtype 12 (2,5)
set dashtype 13 (6,2,1,2)
set dashtype 14 (10,2,1,2,1,2)
set dashtype 15 (1,2,1,2,6,2)
set dashtype 16 (16,3,6,3)
set dashtype 17 (3,3)
set dashtype 18 (3,3,1,3)
set dashtype 19 (7,2,7,6)
set dashtype 20 (2,2,2,6)
set dashtype 21 (5,2,5,2,1,2)
set dashtype 22 (1,3,4,3)
set dashtype 23 (9,2,2,2,2,2)
set dashtype 24 (12,2,1,2,1,2,1,2)

# Runs in a comparison (index 1..4, then cycling)
array RD[4]; RD[1] = 1; RD[2] = 2; RD[3] = 3; RD[4] = 4      # dash type by run
array RF[4]; RF[1] = 3; RF[2] = 5; RF[3] = 0; RF[4] = 1      # bar pattern by run
COMPARE = 0
run_i(r)     = (int(r) - 1) % 4 + 1
s_color(s)   = PC[s]
s_dash(s, r) = COMPARE ? RD[run_i(r)] : PD[s]
s_point(s, r)= (COMPARE && int(r) % 2 == 0) ? PTO[s] : PT[s]
s_fill(s, r) = COMPARE ? RF[run_i(r)] : PF[s]
LW = 1.2          # data lines
PS = 0.55         # points

# ---- common look -------------------------------------------------------------------------------------
set border 3 lw 0.8
set tics nomirror out scale 0.6
set mxtics default
set grid xtics ytics lw 0.4 lc rgb "#dddddd" dt 1
set key above center horizontal Left reverse samplen 2 spacing 0.9 width -1 font ",6" noenhanced
set style fill solid 1.0 border
set bars small
set pointintervalbox 0
set errorbars lw 0.8
set title font ",7" noenhanced
# Axis tick formats: powers of ten on log axes, engineering prefixes on big linear ones
LOGFMT = "10^{%T}"
ENGFMT = "%.0s%c"
