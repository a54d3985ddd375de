#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shared library exports exactly the public API.

    check-symbols.py LIBRARY HEADER_DIR...

Collects every name declared with TK_API in the headers under HEADER_DIRs
(timerkit/export.h defines the macro; the generated timerkit/version.h is in
the build tree), reads the dynamic symbols LIBRARY defines (nm -D
--defined-only), and fails if either set has a name the other lacks: a
missing name is a public function that does not link, an extra one is an
internal symbol that leaked into the ABI. Prints the count on success."""
import pathlib
import re
import subprocess
import sys


def declared(dirs):
    names = {}
    for d in dirs:
        for h in sorted(pathlib.Path(d).rglob("*.h")):
            text = h.read_text()
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            text = re.sub(r"//[^\n]*", " ", text)
            text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", " ", text, flags=re.M)
            for m in re.finditer(r"\bTK_API\b([^;{]*)", text):
                decl = m.group(1)
                # a function: the identifier before the first '('; a variable:
                # the last identifier (before an array bound)
                f = re.search(r"([A-Za-z_]\w*)\s*\(", decl)
                v = re.findall(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", decl.strip())
                name = f.group(1) if f else (v[0] if v else None)
                if not name:
                    sys.exit(f"check-symbols: cannot read the TK_API declaration in {h}: {decl.strip()!r}")
                names[name] = h.name
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            syms.add(parts[2].split("@")[0])
    return syms


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check-symbols.py LIBRARY HEADER_DIR...")
    lib, dirs = sys.argv[1], sys.argv[2:]
    want = declared(dirs)
    if not want:
        sys.exit(f"check-symbols: no TK_API declaration under {' '.join(dirs)}")
    have = exported(lib)
    missing = sorted(set(want) - have)
    extra = sorted(have - set(want))
    for n in missing:
        print(f"declared TK_API in {want[n]} but not exported by {lib}: {n}")
    for n in extra:
        print(f"exported by {lib} but not declared TK_API in a public header: {n}")
    if missing or extra:
        sys.exit(1)
    print(f"check-symbols: {lib} exports exactly the {len(want)} TK_API functions of the public headers")


main()
