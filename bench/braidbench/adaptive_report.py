"""Markdown and plots of the adaptive workload (bench/run.sh --adaptive):
underestimated sorts that spill, compared as the realistic workload's
queries are, and pgbench of short queries whose sorts stay small, with the
targets of the issue checked (overhead under 2%; the spilling sort winning
as a planned braidsort sort would).

report.py renders the spilling part as it renders the realistic workload
and hands it in (comparison_md), so that this module needs nothing of
report.py."""
import os
import statistics

OVERHEAD_TARGET = 0.02
VARIANT_COLORS = {"adaptive": "#dd8452", "not_adaptive": "#4c72b0", "pg": "#8c8c8c"}


def small_medians(result, field="tps"):
    """{variant: median of field} over the pgbench part's runs."""
    small = result.get("small") or {}
    out = {}
    for v in small.get("variants", {}):
        xs = [r[field] for r in small["runs"] if r["variant"] == v and r.get(field)]
        out[v] = statistics.median(xs) if xs else None
    return out


def paired_ratio(result, a, b, field):
    """Median over the rounds of a's field / b's in the same round."""
    small = result.get("small") or {}
    rounds = {}
    for r in small.get("runs", []):
        if r.get(field):
            rounds.setdefault(r["rep"], {})[r["variant"]] = r[field]
    xs = [x[a] / x[b] for x in rounds.values() if a in x and b in x]
    return statistics.median(xs) if xs else None


def _ms(result, query, variant):
    ms = [r["ms"] for r in result.get("runs", []) if r["query"] == query and r["variant"] == variant]
    return statistics.median(ms) if ms else None


def targets(result):
    rows = []
    for other, what in (("not_adaptive", "braidsort.adaptive = off"), ("pg", "braidsort off")):
        tps = paired_ratio(result, "adaptive", other, "tps")
        cpu = paired_ratio(result, "adaptive", other, "cpu_us_per_tx")
        if tps is None:
            continue
        over = (cpu - 1) if cpu is not None else (1 - tps)
        rows.append((f"small sorts: adaptive within 2% of {what} (median of the rounds' "
                     f"ratios)", f"{(1 - tps) * 100:+.2f}% tps lost, "
                     + (f"{(cpu - 1) * 100:+.2f}% CPU a transaction" if cpu else "CPU not measured"),
                     over < OVERHEAD_TARGET))
    for q in result.get("queries", []):
        if not q["name"].startswith("under"):
            continue
        right = "right" + q["name"][len("under"):]
        pg, ad = _ms(result, q["name"], "pg"), _ms(result, q["name"], "braid")
        planned = _ms(result, right, "braid")
        forced = _ms(result, q["name"], "forced")
        if pg and ad:
            rows.append((f"{q['name']}: adaptive faster than PostgreSQL",
                         f"{pg / ad:.2f}x", pg / ad > 1.0))
        if ad and forced:
            rows.append((f"{q['name']}: adaptive within 10% of braidsort forced on the same plan",
                         f"{ad:.0f} vs {forced:.0f} ms", ad <= forced * 1.10))
        if ad and planned:
            # not a target: without the predicate the scan does less work
            rows.append((f"{q['name']}: adaptive against braidsort on the same rows without "
                         f"the predicate ({right}; for scale, not a target)",
                         f"{ad:.0f} vs {planned:.0f} ms", None))
    return rows


def markdown(result, machine_line, title_quick, comparison_md=None):
    """The adaptive result's markdown; comparison_md is the spilling part
    rendered as report.comparison_markdown renders a comparison (None when
    the run has no spilling part)."""
    out = []
    if comparison_md is not None:
        body = comparison_md
        out += [body.replace("# ", "# adaptive: ", 1).replace(" (quick: a smoke run, not a "
                                                              "measurement)", title_quick, 1), ""]
    else:
        out += [f"# adaptive{title_quick}", "", machine_line, ""]
    small = result.get("small")
    if small:
        med = small_medians(result)
        out += ["## Short queries whose sorts stay small (pgbench)", "",
                f"pgbench -i -s {small['scale']}; {small['clients']} clients, {small['seconds']} s "
                f"a run, {small['reps']} runs per variant in rotating order; the script:", "",
                "```", small["script"].rstrip(), "```", "",
                "| variant | PGOPTIONS | median tps | median CPU us a transaction | runs (tps) |",
                "|---|---|---|---|---|"]
        cpu = small_medians(result, "cpu_us_per_tx")
        for v, opt in small["variants"].items():
            runs = [f"{r['tps']:.0f}" for r in small["runs"] if r["variant"] == v]
            out.append(f"| {v} | `{opt}` | {med[v] or 0:.1f} | {cpu.get(v) or 0:.1f} | "
                       f"{', '.join(runs)} |")
        out += ["", "The first query's plan per variant:", ""]
        for v, plan in small.get("plans", {}).items():
            out += [f"{v}:", "", "```", plan, "```", ""]
    rows = targets(result)
    if rows:
        out += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        out += [f"| {a} | {b} | {'-' if c is None else 'yes' if c else 'NO'} |"
                for a, b, c in rows]
        out.append("")
    return "\n".join(out)


def plots(result, out_dir, stem, plt, save, subtitle):
    made = []
    med = small_medians(result)
    queries = [q["name"] for q in result.get("queries", [])] if result.get("runs") else []
    panels = (1 if med else 0) + (1 if queries else 0)
    if not panels:
        return made
    fig, axes = plt.subplots(1, panels, squeeze=False, figsize=(6 * panels, 4))
    i = 0
    if queries:
        ax = axes[0, i]
        i += 1
        variants = result["variants"]
        w = 0.8 / len(variants)
        colors = {"pg": "#8c8c8c", "braid": "#dd8452", "forced": "#4c72b0"}
        for j, v in enumerate(variants):
            vals = [_ms(result, q, v) or 0 for q in queries]
            ax.bar([x + j * w for x in range(len(queries))], vals, w, label=v,
                   color=colors.get(v))
        ax.set_xticks([x + w * (len(variants) - 1) / 2 for x in range(len(queries))])
        ax.set_xticklabels(queries, fontsize=7)
        ax.set_ylabel("median ms")
        ax.set_title("sorts that spill (under_*: estimated 0.5% of the rows)", fontsize=9)
        ax.legend(fontsize=8)
    if med:
        ax = axes[0, i]
        names = list(med)
        for j, v in enumerate(names):
            runs = [r["tps"] for r in result["small"]["runs"] if r["variant"] == v]
            ax.bar(j, med[v] or 0, color=VARIANT_COLORS.get(v), alpha=0.8)
            ax.plot([j] * len(runs), runs, "o", color="black", markersize=3)
        lo = min((r["tps"] for r in result["small"]["runs"] if r["tps"]), default=0)
        ax.set_ylim(bottom=lo * 0.9)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, fontsize=8)
        ax.set_title("short queries, sorts that stay small: tps (bar: median, dots: runs)",
                     fontsize=9)
    fig.suptitle(f"adaptive sorts — {subtitle}", fontsize=9)
    p = save(fig, os.path.join(out_dir, f"{stem}-adaptive.png"))
    if p:
        made.append(p)
    return made
