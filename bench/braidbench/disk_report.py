"""The ordinary-disk workload (bench/ordinary_disk.sh): its markdown and its
plot, from the JSON the script writes.

markdown(result) is the table the script writes itself; plot(result, path,
plt, save) draws <stem>.png: each sort's time and the sectors the loop
device wrote while it ran and in the 35 s after (bars: medians, dots: runs).
"""

NAMES = {"pg": "PostgreSQL", "braid": "braidsort (forced)"}
COLORS = {"pg": "#8172b3", "braid": "#dd8452"}


def _variants(result):
    return [v for v in ("pg", "braid") if v in result["median"]]


def _method(result, v):
    for r in result["runs"]:
        if r["variant"] == v:
            return r.get("method", "")
    return ""


def markdown(result):
    """The result as ordinary_disk.sh writes it."""
    stem = f"ordinary-disk-{result['stamp']}"
    out = [f"# {stem} ({result['commit']}, {result['server']})", "",
           f"`SELECT * FROM sortbench ORDER BY k`, {result['rows']} rows "
           f"({result['table_size']}), work_mem {result['work_mem']}, parallel query "
           f"{result['parallel']}, spilling to a tablespace on {result['filesystem']}; medians.", "",
           "| sort | method | time | sectors written while it ran | ... and in the 35 s after |",
           "|---|---|---:|---:|---:|"]
    for v in _variants(result):
        m = result["median"][v]
        out.append(f"| {NAMES[v]} | {_method(result, v)} | {m['ms']:.0f} ms | "
                   f"{m['sectors_during']} | {m['sectors_with_writeback']} |")
    if result.get("pg_over_braid"):
        out += ["", f"pg/braid: **{result['pg_over_braid']:.2f}x**"]
    return "\n".join(out) + "\n"


def plot(result, path, plt, save):
    """Time and sectors written per sort, medians and runs."""
    vs = _variants(result)
    fields = (("ms", "time (ms)"), ("sectors_during", "sectors written during the sort"),
              ("sectors_with_writeback", "... and in the 35 s after"))
    fig, axes = plt.subplots(1, len(fields), figsize=(12, 4))
    for ax, (field, name) in zip(axes, fields):
        for i, v in enumerate(vs):
            vals = [r[field] for r in result["runs"] if r["variant"] == v]
            ax.bar(i, result["median"][v][field], color=COLORS[v], alpha=0.8)
            ax.plot([i] * len(vals), vals, "o", color="black", markersize=4)
        ax.set_xticks(range(len(vs)))
        ax.set_xticklabels([f"{NAMES[v]}\n{_method(result, v)}" for v in vs], fontsize=8)
        ax.set_title(name, fontsize=9)
        ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1))
    fig.suptitle(f"ordinary disk (bars: medians, dots: runs): {result['rows']} rows, "
                 f"work_mem {result['work_mem']}, "
                 f"spilling to {result['filesystem']} — {result['server'].split(' (Debian')[0]}, "
                 f"braidsort {result['commit']}, {result['stamp']}", fontsize=9)
    return save(fig, path)
