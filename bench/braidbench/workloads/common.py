"""What every result file holds, whatever the workload."""
import datetime
import sys

from braidbench import machine, measure

FORMAT = "braidbench-2"


def now():
    return datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds")


def options(args):
    """The command's options, as JSON can keep them."""
    out = {}
    for k, v in vars(args).items():
        if isinstance(v, (str, int, float, bool, list, type(None))):
            out[k] = v
    return out


def new_result(workload, args, repo, cl):
    return {
        "format": FORMAT,
        "workload": workload,
        "started": now(),
        "command": " ".join(sys.argv),
        "options": options(args),
        "quick": bool(getattr(args, "quick", False)),
        "machine": machine.describe(repo),
        "cluster": {"dax": cl.dax_kind, "conf": dict(cl.conf), "port": cl.port},
        "warnings": [],
    }


def finish(result, t0):
    import time
    result["finished"] = now()
    result["seconds"] = round(time.time() - t0, 1)
    return result


def server_settings(conn):
    return dict(conn.execute(measure.SETTINGS_QUERY).fetchall())


def split(csv):
    return [x.strip() for x in str(csv).split(",") if x.strip()]
