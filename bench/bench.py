#!/usr/bin/python3
"""bench.py: braidsort's benchmarks (see docs/benchmarks.md).

The usual entry is bench/run.sh, which installs this driver's Debian packages
(python3-psycopg, python3-matplotlib) and runs it with the system Python:

    sudo bash bench/run.sh                  # onepass (the default)
    sudo bash bench/run.sh --spill          # or --sweep, --threads, --concurrency, --realistic, --wlimit, --join, --adaptive
    sudo bash bench/run.sh --quick          # every mode on small tables, one repetition (~2.5 min)
    sudo bash bench/run.sh --spill --quick  # one mode, small
    bash bench/run.sh --report bench/results/spill-*.json   # markdown and PNG plots

A measuring run (as root) installs the server packages it needs, builds and
installs braidsort from this checkout (--no-build: use the installed one),
creates a throwaway cluster with a tmpfs "DAX" tablespace, runs the
workload, and writes <out>/<workload>-<time>.json (the machine, the
settings, the commit, every measurement, the EXPLAIN captures) with a
markdown summary next to it.
"""
import argparse
import contextlib
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from braidbench.cluster import PG_CONFIG  # noqa: E402
PY_PACKAGES = {"psycopg": "python3-psycopg", "matplotlib": "python3-matplotlib"}
MODES = ("onepass", "spill", "sweep", "threads", "concurrency", "wlimit", "join", "adaptive")


def ensure_python_packages():
    """The Debian packages of this driver's modules, if any is missing."""
    missing = []
    for mod, pkg in PY_PACKAGES.items():
        try:
            __import__(mod)
        except ImportError:
            missing.append(pkg)
    if missing:
        if os.geteuid() != 0:
            sys.exit(f"bench.py: missing {' '.join(missing)}; install them (as root: "
                     f"apt-get install {' '.join(missing)}) or use bench/run.sh")
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def ensure_dependencies():
    subprocess.run(["bash", os.path.join(REPO, "scripts", "install-deps.sh")], check=True)
    ensure_python_packages()


def build_and_install():
    pgc = f"PG_CONFIG={PG_CONFIG}"
    subprocess.run(["make", "-C", REPO, "-s", pgc], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["make", "-C", REPO, "-s", pgc, "install"], check=True,
                   stdout=subprocess.DEVNULL)


def workload_module(name):
    from braidbench.workloads import (adaptive_run, concurrency_run, join_run, realistic_run,
                                      sortbench_run, sweep_run, threads_run, wlimit_run)
    return {"onepass": sortbench_run, "spill": sortbench_run, "sweep": sweep_run,
            "threads": threads_run, "concurrency": concurrency_run,
            "realistic": realistic_run, "wlimit": wlimit_run, "join": join_run,
            "adaptive": adaptive_run}[name]


def _call(name, fn, args, *rest, **kw):
    """Call a workload function; onepass and spill share a module that takes
    the mode."""
    mod = workload_module(name)
    f = getattr(mod, fn)
    if mod.__name__.endswith("sortbench_run"):
        return f(args, name, *rest, **kw)
    return f(args, *rest, **kw)


def add_common(p):
    p.add_argument("--quick", action="store_true",
                   help="small tables, one repetition (a smoke run, not a measurement)")
    p.add_argument("--out", default=os.path.join(HERE, "results"),
                   help="directory of the result files [bench/results]")
    p.add_argument("--port", type=int, default=5488, help="port number of the sandbox socket")
    p.add_argument("--no-build", action="store_true", help="use the installed braidsort.so")
    p.add_argument("--no-deps", action="store_true", help="skip installing packages")
    p.add_argument("--note", default="", help="a remark kept in the result file")
    p.add_argument("--thp-shmem", choices=("machine", "advise"), default="machine",
                   help="the kernel's transparent huge pages for shared memory during the "
                        "run: as the machine has them, or 'advise' (braidsort.advise_huge_pages "
                        "then puts shared buffers in them; restored afterwards; root) [machine]")


def parse_args(argv):
    if argv and argv[0] == "sortbench":
        # the first version's spelling: bench.py sortbench --mode M [options of M]
        rest, mode, i = [], "onepass", 1
        while i < len(argv):
            if argv[i] == "--mode" and i + 1 < len(argv):
                mode, i = argv[i + 1], i + 2
            elif argv[i].startswith("--mode="):
                mode, i = argv[i].split("=", 1)[1], i + 1
            else:
                rest.append(argv[i])
                i += 1
        argv = [mode] + rest
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="workload", required=True)
    from braidbench.workloads import (adaptive_run, concurrency_run, join_run, realistic_run,
                                      sortbench_run, sweep_run, threads_run, wlimit_run)
    helps = {
        "onepass": "SELECT * ORDER BY k, work_mem braidsort's IndexMap fits (OnePass)",
        "spill": "the same with a work_mem neither fits (MergePass): time and bytes written",
        "sweep": "the spill comparison for several payload sizes",
        "threads": "1 vs 2 sort threads (OnePass) and write threads (MergePass)",
        "concurrency": "pgbench clients, braidsort.io_policy interference_aware vs overlap",
        "realistic": "DBA queries on an orders table, PostgreSQL's defaults",
        "wlimit": "write-limited sort modes against emulated write latency (--spillcheck: "
                  "auto vs PostgreSQL's temporary files)",
        "join": "BraidJoin vs PostgreSQL's hash join at 4/16/64 batches, then the join modes "
                "against emulated write latency",
        "adaptive": "underestimated sorts that spill (adaptive vs PostgreSQL vs planned), and "
                    "pgbench of short queries whose sorts stay small (adaptive on vs off)",
    }
    for name in ("onepass", "spill"):
        p = sub.add_parser(name, help=helps[name])
        sortbench_run.add_arguments(p, name)
        add_common(p)
    for name, mod in (("sweep", sweep_run), ("threads", threads_run),
                      ("concurrency", concurrency_run), ("realistic", realistic_run),
                      ("wlimit", wlimit_run), ("join", join_run),
                      ("adaptive", adaptive_run)):
        p = sub.add_parser(name, help=helps[name])
        mod.add_arguments(p)
        add_common(p)
    q = sub.add_parser("quick", help="every mode on small tables, one repetition, one cluster")
    q.add_argument("--only", default=",".join(MODES + ("realistic",)),
                   help=f"modes to run [{','.join(MODES + ('realistic',))}]")
    add_common(q)
    rp = sub.add_parser("report", help="markdown tables and PNG plots from result files")
    rp.add_argument("files", nargs="+", help="result JSON files")
    rp.add_argument("--out", default=None,
                    help="directory for the .md and .png files [next to each JSON file]")
    rp.add_argument("--plots", default=None, help="directory for the PNG plots [--out]")
    rp.add_argument("--no-plots", action="store_true")
    rp.add_argument("--stable-names", action="store_true",
                    help="name the plots by workload (onepass-phases.png), not by file, as "
                         "docs/benchmarks/ does")
    rp.add_argument("--history", action="store_true",
                    help="also plot speed-up and bytes written over time from all the files")
    rp.add_argument("--history-only", action="store_true",
                    help="only the history plot (history.png), nothing per file")
    return ap.parse_args(argv)


def cluster_for(spec, port):
    from braidbench import cluster as clustermod
    settings = {} if spec.get("defaults") else dict(clustermod.FAST_LOAD, jit="off")
    settings.update(spec.get("settings", {}))
    return clustermod.Cluster(port=port, locale=spec.get("locale"),
                              tmpfs_size=spec["tmpfs"], settings=settings)


THP_SHMEM = "/sys/kernel/mm/transparent_hugepage/shmem_enabled"


@contextlib.contextmanager
def thp_shmem(want, log):
    """The kernel's transparent huge pages for shared memory set to want
    ('advise') for the run and restored afterwards; 'machine' leaves them
    as they are (the result records the setting either way)."""
    if want == "machine":
        yield
        return
    try:
        with open(THP_SHMEM) as f:
            before = re.search(r"\[(\w+)\]", f.read()).group(1)
    except (OSError, AttributeError) as e:
        sys.exit(f"bench.py: --thp-shmem {want}: cannot read {THP_SHMEM} ({e}); "
                 "a kernel without transparent huge pages?")
    log(f"transparent huge pages for shared memory: {want} (was {before})")
    try:
        with open(THP_SHMEM, "w") as f:
            f.write(want)
    except OSError as e:
        sys.exit(f"bench.py: --thp-shmem {want}: cannot write {THP_SHMEM} ({e}); run as root")
    try:
        yield
    finally:
        with open(THP_SHMEM, "w") as f:
            f.write(before)


def write_result(result, out, name):
    from braidbench import report
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"{name}-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1, default=str)
        f.write("\n")
    md = report.markdown(result)
    with open(base + ".md", "w") as f:
        f.write(md)
    return base, md


def measure_one(args):
    from braidbench.progress import Progress
    spec = _call(args.workload, "cluster_spec", args)
    progress = Progress(_call(args.workload, "steps", args))
    progress.log(f"{args.workload}: cluster with a {spec['tmpfs']} tmpfs on port {args.port}")
    with cluster_for(spec, args.port) as cl:
        result = _call(args.workload, "run", args, REPO, cl, progress=progress)
    if args.note:
        result["note"] = args.note
    name = args.workload + ("-quick" if args.quick else "")
    base, md = write_result(result, args.out, name)
    print(md)
    for w in result.get("warnings", []):
        print(f"WARNING: {w}")
    print(f"results: {base}.json, {base}.md")
    return [base + ".json"]


def measure_quick(args):
    """Every mode (--only) on small tables in one cluster, one result file each."""
    from braidbench.progress import Progress
    modes = [m for m in args.only.split(",") if m]
    for m in modes:
        if m not in MODES + ("realistic",):
            sys.exit(f"bench.py quick: unknown mode {m!r}")
    t0 = time.time()
    per = {}
    for m in modes:
        a = parse_args([m, "--quick", "--port", str(args.port), "--out", args.out])
        per[m] = a
    specs = {m: _call(m, "cluster_spec", per[m]) for m in modes}
    progress = Progress(sum(_call(m, "steps", per[m]) for m in modes))
    files, warnings = [], []
    sortmodes = [m for m in modes if not specs[m].get("defaults")]
    if sortmodes:
        tmpfs = max(int(specs[m]["tmpfs"].rstrip("M")) for m in sortmodes)
        spec = {"tmpfs": f"{tmpfs}M", "locale": None}
        progress.log(f"quick: {', '.join(sortmodes)} in one cluster ({tmpfs} MB tmpfs, "
                     f"port {args.port})")
        with cluster_for(spec, args.port) as cl:
            for m in sortmodes:
                progress.log(f"== {m} (quick)")
                result = _call(m, "run", per[m], REPO, cl, progress=progress)
                if args.note:
                    result["note"] = args.note
                base, _ = write_result(result, args.out, f"{m}-quick")
                files.append(base + ".json")
                warnings += [f"{m}: {w}" for w in result.get("warnings", [])]
    for m in modes:
        if m in sortmodes:
            continue
        with cluster_for(specs[m], args.port) as cl:
            progress.log(f"== {m} (quick)")
            result = _call(m, "run", per[m], REPO, cl, progress=progress)
            if args.note:
                result["note"] = args.note
            base, _ = write_result(result, args.out, f"{m}-quick")
            files.append(base + ".json")
            warnings += [f"{m}: {w}" for w in result.get("warnings", [])]
    print(f"quick: {len(files)} result files in {time.time() - t0:.0f} s:")
    for f in files:
        print(f"  {f}")
    # the quick run is the driver's test: a sort that did not take the path
    # it should, or a pgbench client that saw a wrong result, fails it
    if warnings:
        for w in warnings:
            print(f"WARNING: {w}")
        sys.exit(f"bench.py quick: {len(warnings)} warnings")
    return files


def main(argv=None):
    # a kill stops the run as Ctrl-C does: the cluster's context managers
    # stop the server, unmount the tmpfs and remove the directories
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench.py: terminated"))
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.workload == "report":
        ensure_python_packages()
        from braidbench import render
        render.render_files(args.files, out=args.out, plots=None if args.no_plots
                            else (args.plots or args.out or "same"),
                            history=args.history or args.history_only,
                            stable_names=args.stable_names, per_file=not args.history_only)
        return
    if os.geteuid() != 0:
        sys.exit("bench.py: run as root (it installs packages, mounts a tmpfs and runs "
                 "the server as the postgres user)")
    if not args.no_deps:
        ensure_dependencies()
    else:
        ensure_python_packages()
    if not args.no_build:
        build_and_install()
    with thp_shmem(args.thp_shmem, print):
        if args.workload == "quick":
            measure_quick(args)
        else:
            measure_one(args)


if __name__ == "__main__":
    main()
