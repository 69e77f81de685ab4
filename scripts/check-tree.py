#!/usr/bin/env python3
"""check-tree.py: the tree agrees with itself.

Run by scripts/test.sh before anything is built; exits 1 with a line per
problem.  It checks what drifts when nobody looks:

  - one version everywhere: braidsort.control, META.json, debian/changelog,
    the newest release of CHANGELOG.md, the update script that reaches it
    (listed in the Makefile's DATA), and the licence named in META.json and
    debian/copyright;
  - the folders of src/ stand on one another in one order (docs/design.md,
    section 1): no file includes a header of a folder above its own, the
    two executor nodes do not include each other, and src/core/ is pure C
    (no PostgreSQL header);
  - docs/design.md cites only files and names that exist;
  - the TAP tests that profile a device (or run the docs' examples, which
    do) are among those the Makefile runs alone (TAP_ALONE), and every
    test it names there or among the longest exists;
  - nothing in the tree refers to a file outside the repository.
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folders of src/, from the bottom; a file may include headers of its own
# folder or of one below it
RANKS = {
    "core": 0,
    "compat": 0,        # src/compat.h: PostgreSQL's majors behind one face
    "io": 1,
    "monitor": 2,
    "guc": 3,           # src/guc.c, src/guc.h
    "plan": 4,
    "sort": 5,
    "join": 5,
    "top": 6,           # src/braidsort.c
}

# names docs/design.md may cite that are PostgreSQL's, not braidsort's
DESIGN_FOREIGN = {"tuplesort.c", "tuplesortvariants.c", "n_mod_since_analyze",
                  "enable_presorted_aggregate"}

problems = []


def problem(msg):
    problems.append(msg)


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def tracked_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True)
    if out.returncode != 0:         # not a git checkout: walk the tree
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("tmp_check", "tmp_regress")]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return files
    return out.stdout.split()


def check_versions():
    control = re.search(r"^default_version = '([^']+)'", read("braidsort.control"), re.M).group(1)
    meta = json.loads(read("META.json"))
    want = control if control.count(".") == 2 else control + ".0"
    if meta["version"] != want or meta["provides"]["braidsort"]["version"] != want:
        problem(f"META.json says {meta['version']}, braidsort.control {control} (want {want})")
    if meta.get("license") != "postgresql":
        problem(f"META.json names licence {meta.get('license')!r}, not the PostgreSQL Licence")
    if "License: PostgreSQL" not in read("debian/copyright") or not os.path.exists(os.path.join(ROOT, "LICENSE")):
        problem("debian/copyright or LICENSE does not give the PostgreSQL Licence")
    deb = re.match(r"braidsort \(([^)]+)\)", read("debian/changelog"))
    if not deb or deb.group(1) != control:
        problem(f"debian/changelog's newest entry is {deb.group(1) if deb else '?'}, braidsort.control {control}")
    log = read("CHANGELOG.md")
    heads = re.findall(r"^## (.+)$", log, re.M)
    if not heads or heads[0] != "Unreleased":
        problem("CHANGELOG.md does not start with one Unreleased section")
    if sum(1 for h in heads if h.startswith("Unreleased")) != 1:
        problem("CHANGELOG.md has more than one Unreleased section")
    released = [re.match(r"braidsort (\S+) \(\d{4}-\d\d-\d\d\)$", h) for h in heads[1:]]
    if not released or not all(released):
        problem("CHANGELOG.md has a section that is neither Unreleased nor 'braidsort X (date)'")
    elif released[0].group(1) != control:
        problem(f"CHANGELOG.md's newest release is {released[0].group(1)}, braidsort.control {control}")
    scripts = [f for f in os.listdir(ROOT) if re.match(r"braidsort--.*\.sql$", f)]
    if not any(f.endswith(f"--{control}.sql") for f in scripts):
        problem(f"no braidsort--*--{control}.sql update script")
    makefile = read("Makefile")
    for f in scripts:
        if f not in makefile:
            problem(f"{f} is not in the Makefile's DATA")


def folder_of(path):
    parts = path.split("/")
    if len(parts) == 2:
        if parts[1] == "compat.h":
            return "compat"
        return "guc" if parts[1].startswith("guc.") else "top"
    return parts[1]


def check_layers():
    for path in sorted(f for f in tracked_files() if re.match(r"src/.*\.[ch]$", f)):
        folder = folder_of(path)
        text = read(path)
        for inc in re.findall(r'^#include "([^"]+)"', text, re.M):
            if folder == "core" and not inc.startswith("core/"):
                problem(f"{path} includes \"{inc}\": src/core/ is pure C")
                continue
            if "/" in inc:
                target = inc.split("/")[0]
            elif inc.startswith("guc."):
                target = "guc"
            elif inc == "compat.h":
                target = "compat"
            else:
                continue        # a PostgreSQL header
            if target not in RANKS:
                continue
            if RANKS[target] > RANKS[folder]:
                problem(f"{path} includes \"{inc}\": {target}/ stands above {folder}/")
            elif RANKS[target] == RANKS[folder] and target != folder:
                problem(f"{path} includes \"{inc}\": the two executor nodes do not use each other")


def check_design():
    text = read("docs/design.md")
    names = set()
    sources = {}
    for f in tracked_files():
        if re.match(r"src/.*\.[ch]$", f):
            names.add(os.path.basename(f))
            sources[f] = read(f)
    all_src = "\n".join(sources.values())
    for f in sorted(set(re.findall(r"\b([a-z_]+\.[ch])\b", text))):
        if f not in names and f not in DESIGN_FOREIGN:
            problem(f"docs/design.md cites {f}, which is not in src/")
    for ident in sorted(set(re.findall(r"`([A-Za-z_][A-Za-z_0-9]*)(?:\(\))?`", text))):
        if "_" in ident and ident not in DESIGN_FOREIGN and \
                not re.search(r"\b" + re.escape(ident) + r"\b", all_src):
            problem(f"docs/design.md cites `{ident}`, which no source defines or uses")


def check_outside():
    me = os.path.relpath(os.path.abspath(__file__), ROOT)
    for f in tracked_files():
        if f == me or not re.search(r"\.(c|h|md|sql|pl|pm|py|sh|txt|control|json|spec)$|^Makefile$", f):
            continue
        try:
            text = read(f)
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            if re.search(r"(?<![/\w])DESIGN\.md|\.\./shared\b", line):
                problem(f"{f}:{n} refers to a file outside the repository: {line.strip()[:80]}")


def check_tap_groups():
    makefile = read("Makefile").replace("\\\n", " ")
    groups = {}
    for name in ("TAP_ALONE", "TAP_LONGEST"):
        m = re.search(r"^" + name + r" = (.*)$", makefile, re.M)
        groups[name] = m.group(1).split() if m else []
        if not m:
            problem(f"the Makefile sets no {name}")
        for t in groups[name]:
            if not os.path.exists(os.path.join(ROOT, t)):
                problem(f"the Makefile's {name} names {t}, which does not exist")
    for t in sorted(f for f in tracked_files() if re.match(r"test/t/.*\.pl$", f)):
        text = read(t)
        if re.search(r"profile_device|\bprofiled\(|docs/\*\.md", text) and t not in groups["TAP_ALONE"]:
            problem(f"{t} profiles a device or runs the docs' examples but is not in the Makefile's TAP_ALONE")


check_versions()
check_layers()
check_design()
check_outside()
check_tap_groups()
for p in problems:
    print("check-tree:", p)
sys.exit(1 if problems else 0)
