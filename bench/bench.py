#!/usr/bin/env python3
"""bench.py: braidsort's benchmarks (run as root; see bench/README.md).

    sudo python3 bench/bench.py realistic [--rows N] [--reps R] [--work-mem 4MB,64MB]

Installs what it needs (Debian packages), builds and installs braidsort from
this checkout, creates a throwaway cluster with a tmpfs "DAX" tablespace,
runs the workload comparing PostgreSQL's sort with braidsort in the same
run, and writes results/<workload>-<time>.json and .md.
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def ensure_dependencies():
    subprocess.run(["bash", os.path.join(REPO, "scripts", "install-deps.sh")], check=True)
    missing = [p for p in ("python3-psycopg2", "python3-matplotlib")
               if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def build_and_install():
    pgc = "PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config"
    subprocess.run(["make", "-C", REPO, "-s", pgc], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["make", "-C", REPO, "-s", pgc, "install"], check=True, stdout=subprocess.DEVNULL)


def main():
    if os.geteuid() != 0:
        sys.exit("bench.py: run as root (it installs packages and mounts a tmpfs)")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="workload", required=True)
    r = sub.add_parser("realistic", help="DBA queries on an orders table, PostgreSQL defaults")
    r.add_argument("--rows", type=int, default=3000000)
    r.add_argument("--customers", type=int, default=200000)
    r.add_argument("--reps", type=int, default=5)
    r.add_argument("--work-mem", default="4MB,64MB")
    r.add_argument("--queries", default="", help="comma-separated subset of query names")
    r.add_argument("--variants", default="pg,braid,forced")
    r.add_argument("--set", action="append", default=[],
                   help="extra server setting name=value (recorded)")
    s = sub.add_parser("sortbench", help="the sortbenchmark shape: OnePass and spill")
    s.add_argument("--mode", choices=["onepass", "spill"], default="onepass")
    s.add_argument("--rows", type=int, default=5000000)
    s.add_argument("--payload", type=int, default=90)
    s.add_argument("--reps", type=int, default=5)
    s.add_argument("--work-mem", default="", help="default: 128MB onepass, 16MB spill")
    s.add_argument("--shared-buffers", default="2GB,128MB",
                   help="comma-separated: one server configuration each")
    s.add_argument("--parallel", default="off,on", help="max_parallel_workers_per_gather 0 / 2")
    s.add_argument("--variants", default="pg,braid,forced")
    s.add_argument("--tmpfs", default="4G")
    rp = sub.add_parser("report", help="render the markdown of result files again")
    rp.add_argument("files", nargs="+")
    for p in (r, s):
        p.add_argument("--no-build", action="store_true", help="use the installed braidsort.so")
        p.add_argument("--no-deps", action="store_true", help="skip installing packages")
    args = ap.parse_args()

    if args.workload == "report":
        sys.path.insert(0, HERE)
        from braidbench import report
        for path in args.files:
            with open(path) as f:
                result = json.load(f)
            md = report.markdown(result)
            with open(os.path.splitext(path)[0] + ".md", "w") as f:
                f.write(md)
            print(f"{os.path.splitext(path)[0]}.md")
        return
    if not args.no_deps:
        ensure_dependencies()
    if not args.no_build:
        build_and_install()
    sys.path.insert(0, HERE)
    from braidbench import report
    from braidbench.workloads import realistic_run, sortbench_run

    runner = {"realistic": realistic_run, "sortbench": sortbench_run}[args.workload]
    result = runner.run(args, REPO, log=lambda s: print(s, flush=True))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    name = args.workload if args.workload != "sortbench" else f"sortbench-{args.mode}"
    base = os.path.join(HERE, "results", f"{name}-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=1)
    md = report.markdown(result)
    with open(base + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"results: {base}.json, {base}.md")


if __name__ == "__main__":
    main()
