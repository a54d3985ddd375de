# SPDX-License-Identifier: MIT
"""timerkit's renderer: a results folder (docs/results-format.md) in, figures and a report out.

Modules: load (manifest.json, results.csv, metadata, hist/*.hgrm), stats (medians, bootstrap
intervals, Mann-Whitney U), figures (gnuplot scripts and drawing), report (report.md and
compare.md), cli (the command line behind plots/render.py).
"""
