#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""No workload name appears as a string literal in bench/, plots/ or scripts/
outside the descriptor file that declares it. The rule: a workload is
declared once, in its descriptor, and the CLI, the suites, the manifest, the
report and the figures derive from it (bench/README.md, "Workloads are
descriptors"); a name written a second time is a second list to keep in step.

Usage: check-names-once.py SOURCE_DIR TKBENCH
The names come from `tkbench list --names`; string literals are found in C,
C++, Python, shell, gnuplot and CMake files (comments are not literals).
"""
import os
import re
import subprocess
import sys

src, tkbench = sys.argv[1], sys.argv[2]
names = subprocess.run([tkbench, "list", "--names"], check=True, capture_output=True,
                       text=True).stdout.split()
assert len(names) >= 10, "tkbench list --names gave %r" % names
# A workload that shares its name with a peer (the machine-level workload and
# the `floor` peer that measures it): literals of that name are the peer's
# (specs, kinds), so that name is left out, and said so.
listing = subprocess.run([tkbench, "list"], check=True, capture_output=True, text=True).stdout
peer_names = set(re.findall(r"^  (\S+)\s+(?:engine|baseline|strawman|floor)\s", listing, re.M))
for n in sorted(set(names) & peer_names):
    print("note: %s is also a peer's name; its literals are not checked" % n)
names = [n for n in names if n not in peer_names]

# where each workload is declared: the file of bench/workloads/ with .name = "<name>"
declared_in = {}
wdir = os.path.join(src, "bench", "workloads")
for f in sorted(os.listdir(wdir)):
    text = open(os.path.join(wdir, f), encoding="utf-8").read()
    for m in re.finditer(r'\.name\s*=\s*"([^"]+)"', text):
        declared_in[m.group(1)] = os.path.join("bench", "workloads", f)

LITERAL = {
    "c": r'"(?:[^"\\\n]|\\.)*"',
    "py": r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'',
    "sh": r'"(?:[^"\\]|\\.)*"|\'[^\']*\'',
}
COMMENT = {"c": r"//[^\n]*|/\*[\s\S]*?\*/", "py": r"#[^\n]*", "sh": r"(?<![\w$])#[^\n]*"}
KIND = {".c": "c", ".h": "c", ".cc": "c", ".java": "c", ".py": "py", ".sh": "sh", ".gp": "sh",
        ".cmake": "sh", ".txt": "sh"}

bad = []
for top in ("bench", "plots", "scripts"):
    for dirpath, _, files in os.walk(os.path.join(src, top)):
        for f in files:
            kind = KIND.get(os.path.splitext(f)[1])
            if kind is None:
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            text = open(path, encoding="utf-8").read()
            # drop comments first (keeping line numbers), then look at literals
            text = re.sub(COMMENT[kind], lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
            for lit in re.finditer(LITERAL[kind], text):
                for name in names:
                    if declared_in.get(name) == rel:
                        continue
                    # a row of a workload with variants (<name>_<variant>) counts too
                    if re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9])",
                                 lit.group(0)):
                        line = text.count("\n", 0, lit.start()) + 1
                        bad.append("%s:%d: %s in %s" % (rel, line, name, lit.group(0)[:60]))

print("checked %d workload names in bench/, plots/ and scripts/" % len(names))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
