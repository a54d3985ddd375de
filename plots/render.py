#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Render timerkit results folders into figures and a report (plots/README.md).

  plots/render.py render DIR
  plots/render.py compare OUT DIR_A DIR_B [DIR...]
  plots/render.py trace DIR [--title TEXT]
  plots/render.py --help
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tkplot.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
