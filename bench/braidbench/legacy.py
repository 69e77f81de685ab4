"""The results of the bash driver (bench/run.sh before it moved to Python),
converted from their markdown into JSON so that nothing measured is lost.

Each old file (onepass-*, spill-*, sweep-*, threads-*, concurrency-*.md)
becomes bench/results/legacy/<same name>.json holding the whole document
in order -- every section with its paragraphs, tables (columns and rows, as
written) and code blocks (settings, EXPLAIN captures, pgbench output) -- and
a "summary" with the numbers the reports plot (medians, ratios, bytes
written), parsed from the results tables:

    python3 bench/bench.py legacy bench/results/onepass-*.md ...

The converter was run once, when the markdown files were retired; it stays
so that the conversion can be checked and repeated.
"""
import datetime
import json
import os
import re

FORMAT = "braidbench-legacy-1"


# ---- markdown structure ---------------------------------------------------
def _cells(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def parse_markdown(text):
    """Sections (heading, level, blocks) of a markdown document; blocks are
    {"type": "text" | "table" | "code", ...} in document order."""
    sections = [{"heading": "", "level": 0, "blocks": []}]
    lines = text.split("\n")
    i = 0
    para = []

    def flush():
        if para:
            sections[-1]["blocks"].append({"type": "text", "text": "\n".join(para)})
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            lang = line[3:].strip()
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            block = {"type": "code", "text": "\n".join(body)}
            if lang:
                block["lang"] = lang
            sections[-1]["blocks"].append(block)
            i += 1
            continue
        m = re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            flush()
            sections.append({"heading": m.group(2).strip(), "level": len(m.group(1)),
                             "blocks": []})
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|\s*$", lines[i + 1]):
            flush()
            cols = _cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            sections[-1]["blocks"].append({"type": "table", "columns": cols, "rows": rows})
            continue
        if line.strip() == "":
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    if not sections[0]["blocks"]:
        sections.pop(0)
    return sections


# ---- values ---------------------------------------------------------------
def number(cell):
    """The number a cell starts with ("561143808 (535.1 MB)", "2.72x",
    "**1509.158**", "547992 kB"), or None."""
    if cell is None:
        return None
    c = cell.replace("**", "").replace("`", "").strip()
    m = re.match(r"^(-?[0-9]+(?:\.[0-9]+)?)(?:x|\s*kB|\s*ms|\s*B)?(?:\s*\(.*\))?$", c)
    if not m:
        return None
    s = m.group(1)
    return float(s) if "." in s else int(s)


def numbers(cell):
    """Whitespace-separated numbers of a cell ("3816.147 3545.873 ...")."""
    out = []
    for tok in (cell or "").replace("**", "").split():
        v = number(tok)
        if v is not None:
            out.append(v)
    return out


def table_dicts(table):
    return [dict(zip(table["columns"], row)) for row in table["rows"]]


def _tables_after(sections, heading_re):
    """Tables of the sections whose heading matches, with the text before
    each (its caption)."""
    out = []
    for s in sections:
        if re.search(heading_re, s["heading"]):
            caption = ""
            for b in s["blocks"]:
                if b["type"] == "text":
                    caption = b["text"]
                elif b["type"] == "table":
                    out.append((s["heading"], caption, b))
    return out


def _col(d, *names):
    for n in names:
        for k, v in d.items():
            if k.startswith(n):
                return v
    return None


# ---- header facts ---------------------------------------------------------
def header_facts(sections, text):
    out = {}
    title = sections[0]["heading"] if sections else ""
    m = re.match(r"^(.*?) — (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?: (\S+))?$", title)
    if m:
        out["title"] = m.group(1)
        out["date"] = f"{m.group(2)} {m.group(3) or ''}".strip()
        out["started"] = m.group(2).replace(" ", "T") + ("+00:00" if m.group(3) == "UTC" else "")
    else:
        out["title"] = title
    m = re.search(r"## Command\n\n```\n(.*?)\n```", text, re.S)
    if m:
        out["command"] = m.group(1).strip()
    eff = {}
    m = re.search(r"^Effective settings: (.*?)\n\n", text, re.S | re.M)
    if m:
        for k, v in re.findall(r'([A-Za-z_0-9]+)=("[^"]*"|\S+)', m.group(1)):
            eff[k] = v.strip('"')
    out["effective_settings"] = eff
    m = re.search(r"^Sizing: (.*)$", text, re.M)
    if m:
        out["sizing"] = m.group(1)
    mach = {}
    for s in sections:
        if s["heading"] == "Machine":
            for b in s["blocks"]:
                if b["type"] != "text":
                    continue
                for line in b["text"].split("\n"):
                    mm = re.match(r"^- ([^:]+): (.*)$", line)
                    if mm:
                        mach[mm.group(1)] = mm.group(2)
                    elif line.startswith("- "):
                        mach.setdefault("other", []).append(line[2:])
    norm = {"raw": mach}
    if "CPUs (nproc)" in mach:
        norm["cpus"] = int(mach["CPUs (nproc)"])
    norm["cpu_model"] = mach.get("CPU model")
    norm["memory"] = mach.get("Memory")
    norm["kernel"] = mach.get("Kernel")
    norm["postgres"] = mach.get("PostgreSQL")
    la = mach.get("Load average at start / end of the run", "")
    mm = re.match(r"^([\d.]+) ([\d.]+) ([\d.]+) / ([\d.]+) ([\d.]+) ([\d.]+)", la)
    if mm:
        v = [float(x) for x in mm.groups()]
        norm["loadavg_at_start"], norm["loadavg_at_end"] = v[:3], v[3:]
    rc = mach.get("braidsort repo commit", "")
    mm = re.match(r"^(\S+) \((\d+) uncommitted/untracked paths\); installed braidsort.so sha256 (\w+)", rc)
    if mm:
        norm["commit"] = mm.group(1)
        norm["dirty_paths"] = int(mm.group(2))
        norm["braidsort_so_sha256"] = mm.group(3)
    norm["dax"] = mach.get("DAX stand-in")
    for k, v in mach.items():
        if k.startswith("braidsort extension version") or k.startswith("pgbench"):
            norm[k] = v
    out["machine"] = norm
    for s in sections:
        if s["heading"] == "Data":
            out["data"] = "\n\n".join(b["text"] for b in s["blocks"] if b["type"] == "text")
            codes = [b["text"] for b in s["blocks"] if b["type"] == "code"]
            if codes:
                out["server_config"] = codes[-1]
    out["warnings"] = re.findall(r"^\*\*WARNING:\*\* (.*)$", text, re.M)
    return out


# ---- per-mode summaries ---------------------------------------------------
def _summary_onepass_spill(sections, mode):
    rows = []
    for _, _, t in _tables_after(sections, r"^Results"):
        for d in table_dicts(t):
            cfg = d.get("config", "")
            r = {"config": cfg.split(":")[0].strip(), "config_label": cfg,
                 "shared_buffers": d.get("shared_buffers"), "work_mem": d.get("work_mem"),
                 "pg_ms": number(_col(d, "PostgreSQL median")),
                 "braid_ms": number(_col(d, "braidsort median")),
                 "speedup": number(_col(d, "speed-up"))}
            if mode == "spill":
                r.update({"pg_bytes": number(_col(d, "PostgreSQL bytes written")),
                          "braid_bytes": number(_col(d, "braidsort bytes written")),
                          "write_reduction": number(_col(d, "write reduction")),
                          "runs": _col(d, "braid Runs"),
                          "merge_passes": _col(d, "braid Merge Passes")})
            rows.append(r)
        break
    temp = {}
    for _, _, t in _tables_after(sections, r"^Results"):
        cols = t["columns"]
        if "system" in cols and "sort method" in cols:
            for d in table_dicts(t):
                key = f"{d['config']}/{d['system']}"
                temp[key] = {k: (number(v) if number(v) is not None else v) for k, v in d.items()}
    runs = {}
    for _, _, t in _tables_after(sections, r"^Individual runs"):
        for d in table_dicts(t):
            if "runs" in d:          # onepass: one row per config and system
                runs.setdefault(d["config"], {})[d["system"]] = numbers(d["runs"])
            elif d.get("rep", "").isdigit():   # spill: one row per rep
                c = runs.setdefault(d["config"], {})
                c.setdefault("pg", []).append(number(d.get("pg (ms)")))
                c.setdefault("braid", []).append(number(d.get("braid (ms)")))
                c.setdefault("pg_bytes", []).append(number(d.get("pg temp_bytes")))
                c.setdefault("braid_bytes", []).append(
                    number(d.get("braid Device Bytes Written")))
    for r in rows:
        r["run_ms"] = runs.get(r["config"], {})
        if temp:
            r["temp"] = {k.split("/")[1]: v for k, v in temp.items()
                         if k.startswith(r["config"] + "/")}
    return {"configs": rows}


def _summary_sweep(sections):
    rows = []
    tables = _tables_after(sections, r"^Results")
    for d in table_dicts(tables[0][2]) if tables else []:
        rp = (_col(d, "braid Runs") or "").split("/")
        rows.append({
            "payload": number(d.get("payload", "").replace(" B", "")),
            "table": d.get("table"),
            "pg_ms": number(_col(d, "PostgreSQL median")),
            "braid_ms": number(_col(d, "braidsort median")),
            "speedup": number(_col(d, "speed-up")),
            "pg_bytes": number(_col(d, "PostgreSQL bytes written")),
            "braid_bytes": number(_col(d, "braidsort bytes written")),
            "write_reduction": number(_col(d, "write reduction")),
            "runs": rp[0].strip() if rp else None,
            "merge_passes": rp[1].strip() if len(rp) > 1 else None,
            "force_off_plan": _col(d, "planner with force"),
            "force_off_ms": number(_col(d, "force = off run")),
        })
    return {"payloads": rows}


def _summary_threads(sections):
    out = {"sort": [], "write": {}}
    for heading, _, t in _tables_after(sections, r"phase: "):
        recs = []
        for d in table_dicts(t):
            first = t["columns"][0]
            key = d.get(first, "")
            rec = {k: number(v) for k, v in d.items()}
            rec[first] = number(key) if number(key) is not None else key.replace("**", "")
            recs.append(rec)
        if heading.startswith("Sort phase"):
            out["sort"] = recs
            m = re.search(r"work_mem (\S+)", heading)
            out["sort_work_mem"] = m.group(1) if m else None
        else:
            m = re.search(r"work_mem (\S+), braidsort.emulate_write_ns = (\d+)", heading)
            if m:
                out["write"][m.group(2)] = recs
                out["spill_work_mem"] = m.group(1)
    sort = {r.get("sort_threads"): r for r in out["sort"]}
    if 1 in sort and 2 in sort and sort[2].get("Sort Time (ms)"):
        out["sort_time_ratio"] = round(sort[1]["Sort Time (ms)"] / sort[2]["Sort Time (ms)"], 3)
    return out


def _summary_concurrency(sections, text):
    out = {"policies": []}
    tables = _tables_after(sections, r"^Results")
    if tables:
        for d in table_dicts(tables[0][2]):
            ov = (d.get("overlaps (median / max)") or "").split("/")
            out["policies"].append({
                "policy": d.get("io_policy"),
                "tps": number(d.get("tps")),
                "latency_ms": number(d.get("latency average (ms)")),
                "transactions": number(d.get("transactions")),
                "failed": number(_col(d, "failed transactions")),
                "aborted_clients": number(_col(d, "aborted clients")),
                "read_grants": number(d.get("read_grants")),
                "write_grants": number(d.get("write_grants")),
                "waits": number(d.get("waits")),
                "phase_switches": number(d.get("phase_switches")),
                "overlaps": number(ov[0]) if ov else None,
                "overlaps_max": number(ov[1]) if len(ov) > 1 else None,
                "bytes_written": number(d.get("device bytes_written")),
                "bytes_read": number(d.get("device bytes_read")),
            })
    m = re.search(r"tps\(interference_aware\) / tps\(overlap\) = ([\d.]+)x", text)
    if m:
        out["tps_ratio"] = float(m.group(1))
    return out


def convert(path):
    """One old markdown result file as a dict."""
    with open(path) as f:
        text = f.read()
    name = os.path.basename(path)
    mode = name.split("-")[0]
    sections = parse_markdown(text)
    doc = {"format": FORMAT, "workload": mode, "source": f"bench/results/{name}"}
    doc.update(header_facts(sections, text))
    eff = doc["effective_settings"]
    doc["quick"] = eff.get("quick") == "1"
    for k in ("ROWS", "PAYLOAD", "REPS", "WORK_MEM", "CONC_ROWS", "CONC_ROWS2", "CONC_SECONDS",
              "CONC_REPS", "CONC_CLIENTS"):
        if k in eff:
            v = eff[k]
            doc[k.lower()] = int(v) if v.isdigit() else v
    if mode in ("onepass", "spill"):
        doc["summary"] = _summary_onepass_spill(sections, mode)
    elif mode == "sweep":
        doc["summary"] = _summary_sweep(sections)
    elif mode == "threads":
        doc["summary"] = _summary_threads(sections)
    elif mode == "concurrency":
        doc["summary"] = _summary_concurrency(sections, text)
    doc["sections"] = sections
    doc["converted"] = datetime.date.today().isoformat()
    return doc


def to_markdown(doc):
    """The document again, from its sections (a check that nothing was lost:
    it reproduces the original up to blank lines)."""
    out = []
    for s in doc["sections"]:
        if s["level"]:
            out.append("#" * s["level"] + " " + s["heading"])
            out.append("")
        for b in s["blocks"]:
            if b["type"] == "text":
                out.append(b["text"])
            elif b["type"] == "code":
                out.append("```" + b.get("lang", ""))
                out.append(b["text"])
                out.append("```")
            else:
                out.append("| " + " | ".join(b["columns"]) + " |")
                out.append("|" + "---|" * len(b["columns"]))
                for r in b["rows"]:
                    out.append("| " + " | ".join(r) + " |")
            out.append("")
    return "\n".join(out)


def _normalized(text):
    """Markdown without blank lines and with table rules and cell padding
    normalized (what to_markdown does not keep)."""
    out = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if re.match(r"^\|[-:| ]+\|\s*$", line):
            out.append("|rule|")
        elif line.startswith("|"):
            out.append("|".join(c.strip() for c in line.split("|")))
        else:
            out.append(line.rstrip())
    return out


def convert_files(paths, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for p in sorted(paths):
        doc = convert(p)
        with open(p) as f:
            original = f.read()
        if _normalized(to_markdown(doc)) != _normalized(original):
            raise SystemExit(f"{p}: the conversion does not reproduce the document")
        dest = os.path.join(out_dir, os.path.splitext(os.path.basename(p))[0] + ".json")
        with open(dest, "w") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"{p} -> {dest}")
