"""Rendering result files: each one's markdown (report.py) and its PNG plots
(plots.py, imported only when plots are asked for, so that markdown alone
needs no matplotlib).

    python3 bench/bench.py report [--out DIR] [--plots DIR] [--history] FILES...
"""
import os

from braidbench import report


def render_files(paths, out=None, plots="same", history=False, stable_names=False,
                 per_file=True):
    """For each result file: <stem>.md and (unless plots is None) its PNG
    plots, linked from the markdown; history: also history.png over all
    the files."""
    results = [report.load(p) for p in paths]
    plots_mod = None
    if plots is not None:
        from braidbench import plots as plots_mod
    for r in results:
        if not per_file:
            continue
        src = r["_path"]
        stem = os.path.splitext(os.path.basename(src))[0]
        md_dir = out or os.path.dirname(os.path.abspath(src))
        os.makedirs(md_dir, exist_ok=True)
        md = report.markdown(r)
        if plots is not None:
            pdir = md_dir if plots == "same" else plots
            os.makedirs(pdir, exist_ok=True)
            pngs = plots_mod.plot_result(r, pdir, report.kind(r) if stable_names else stem)
            if pngs:
                md += "\n## Plots\n\n" + "\n".join(
                    f"![{os.path.basename(p)}]({os.path.relpath(p, md_dir)})" for p in pngs) + "\n"
            for p in pngs:
                print(p)
        path = os.path.join(md_dir, stem + ".md")
        with open(path, "w") as f:
            f.write(md)
        print(path)
    if history and plots is not None:
        pdir = (out or ".") if plots == "same" else plots
        os.makedirs(pdir, exist_ok=True)
        for p in plots_mod.plot_history(results, pdir):
            print(p)
