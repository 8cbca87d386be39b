#!/usr/bin/env python3
"""Group the inspector CLI's --strict schema-portability messages (stderr) by kind."""
import re, sys, collections
text = open(sys.argv[1]).read()
blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
groups = collections.OrderedDict()
other = []
for b in blocks:
    m = re.match(r"(Warning|Error): tool \"([^\"]+)\"\n\s*Path: (.*)\n\s*Issue: (.*)\n\s*Suggestion: (.*)", b, re.S)
    if not m:
        other.append(b.strip()); continue
    sev, tool, path, issue, sugg = m.groups()
    key_issue = re.sub(r"\(\[[^\]]*\]\)", "([...])", issue)
    key_issue = re.sub(r"\"[a-z0-9]+\"", "\"…\"", key_issue) if "format" in key_issue else key_issue
    key = (sev, key_issue.strip())
    g = groups.setdefault(key, {"n": 0, "tools": collections.Counter(), "example": b.strip(), "paths": []})
    g["n"] += 1; g["tools"][tool] += 1; g["paths"].append(f"{tool}: {path}")
print(f"blocks: {len(blocks)}, grouped: {sum(g['n'] for g in groups.values())}, other: {len(other)}\n")
for (sev, issue), g in groups.items():
    print(f"### {sev} x{g['n']} — {issue[:160]}")
    print("per tool:", ", ".join(f"{t} {n}" for t, n in g["tools"].items()))
    print("example (verbatim):\n" + "\n".join("    " + l for l in g["example"].splitlines()))
    if g["n"] <= 12: print("all paths:", "; ".join(g["paths"]))
    print()
for o in other: print("OTHER:\n" + o + "\n")
