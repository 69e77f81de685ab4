"""What a result was measured on: the machine, the software, the commit."""
import hashlib
import os
import platform
import subprocess

from braidbench.cluster import PG_CONFIG, PGBIN


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def describe(repo):
    """A dict describing this machine and the braidsort build under test."""
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    huge = {}
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
            elif line.startswith(("HugePages_Total", "Hugepagesize")):
                huge[line.split(":")[0]] = int(line.split()[1])
    try:
        with open("/sys/kernel/mm/transparent_hugepage/shmem_enabled") as f:
            thp_shmem = f.read().strip()
    except OSError:
        thp_shmem = ""
    pkglib = _cmd([PG_CONFIG, "--pkglibdir"])
    so = os.path.join(pkglib, "braidsort.so")
    so_hash = ""
    if os.path.exists(so):
        with open(so, "rb") as f:
            so_hash = hashlib.sha256(f.read()).hexdigest()[:16]
    commit = _cmd(["git", "-C", repo, "rev-parse", "--short", "HEAD"])
    dirty = bool(_cmd(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"]))
    marker = os.path.join(repo, ".source-commit")
    if not commit and os.path.exists(marker):
        # a copy without git (another major's root): scripts/pgroot.sh
        # wrote the commit and whether the tree had changes
        with open(marker) as f:
            lines = f.read().splitlines()
        commit = lines[0] if lines else ""
        dirty = len(lines) > 1
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "loadavg_at_start": os.getloadavg(),
        "postgres": _cmd([f"{PGBIN}/postgres", "--version"]),
        "commit": commit,
        "dirty": dirty,
        "braidsort_so_sha256": so_hash,
        # huge pages reserved (vm.nr_hugepages): PostgreSQL's huge_pages=try
        # maps shared buffers in them when there are enough, which changes
        # the cost of random reads in shared buffers (the join's fetches)
        "hugepages_total": huge.get("HugePages_Total", 0),
        "hugepage_kb": huge.get("Hugepagesize", 0),
        "thp_shmem": thp_shmem,
    }
