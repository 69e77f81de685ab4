"""A long-lived sandbox for experiments (as root, from bench/):
/usr/bin/python3 -m braidbench.sandbox start [ROWS] | stop.

Creates the realistic workload's cluster and tables and leaves it running
(state in /tmp/braidbench-sandbox.json); "stop" removes everything.
"""
import json
import os
import sys

from braidbench import cluster as clustermod
from braidbench.workloads import realistic

STATE = "/tmp/braidbench-sandbox.json"


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else "start"
    if cmd == "start":
        rows = int(sys.argv[2]) if len(sys.argv) > 2 else 3000000
        cl = clustermod.Cluster(port=5490, locale="en_US.UTF-8")
        cl.__enter__()
        with cl.session() as conn:
            for stmt in realistic.setup_sql(rows, max(rows // 15, 1000)):
                conn.execute(stmt)
        json.dump({"dir": cl.dir, "dax": cl.dax, "mounted": cl.mounted, "port": cl.port},
                  open(STATE, "w"))
        print(f"psql -h {cl.dir} -p {cl.port} -U postgres postgres")
    else:
        st = json.load(open(STATE))
        cl = clustermod.Cluster(port=st["port"])
        cl.dir, cl.dax, cl.mounted, cl.running = st["dir"], st["dax"], st["mounted"], True
        cl.destroy()
        os.unlink(STATE)


if __name__ == "__main__":
    main()
