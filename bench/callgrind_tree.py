# SPDX-License-Identifier: BSD-3-Clause
"""Callgrind's call tree, as bench/gateway_instr.sh and
bench/esp_gateway_instr.sh read it (callgrind_annotate --tree=calling)."""
import re
import subprocess

# "  1,234 (12.3%)  *  file:function [object]" for a caller, ">" and
# " (Nx)" for each of its callees
_LINE = re.compile(r"\s*([\d,]+)\s+\([^)]*\)\s+(\*|>)\s+\S*?:([^ \[]+)"
                   r"(?: \(([\d,]+)x\))?(?: \[(\S+)\])?")


def tree(path, by_object=True):
    """{caller: [self, {callee: (inclusive, calls)}]} of a callgrind file.
    Callers and callees are (function, object) pairs, or with by_object
    False function names alone (same-named functions' counts summed)."""
    txt = subprocess.run(["callgrind_annotate", "--tree=calling", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    fns, cur = {}, None
    for ln in txt.splitlines():
        m = _LINE.match(ln)
        if not m:
            continue
        n, kind, fn = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
        key = (fn, m.group(5) or "") if by_object else fn
        if kind == "*":
            cur = fns.setdefault(key, [0, {}])
            cur[0] += n
        elif cur is not None:
            calls = int(m.group(4).replace(",", "")) if m.group(4) else 0
            c = cur[1].get(key, (0, 0))
            cur[1][key] = (c[0] + n, c[1] + calls)
    return fns


def totals(path):
    """All the instructions a callgrind file counted (its totals: line; the
    summary: line is 0 once collection was switched off from outside)."""
    v = {}
    with open(path) as f:
        for ln in f:
            if ln.startswith(("totals:", "summary:")):
                v[ln.split(":")[0]] = int(ln.split()[1])
    return v.get("totals", v.get("summary", 0))
