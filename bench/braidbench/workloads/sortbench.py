"""The sortbenchmark shape: 10-byte random keys and a payload.

SELECT * FROM sortbench ORDER BY k, the case braidsort was first built and
measured on: OnePass (a work_mem braidsort's IndexMap fits and PostgreSQL's
tuples do not) and spill (a work_mem neither fits: MergePass), in a cluster
whose shared_buffers hold the table (A) or are PostgreSQL's default (B),
with parallel query off (one process, braidsort with all its threads) and
on (PostgreSQL's default: two workers and the leader each sort their part).

The table lives on the tmpfs standing in for a DAX device (tablespace dax),
with the temporary and spill files of both systems, as in every earlier run.
"""
import time

MB = 1024 * 1024

QUERY = "SELECT * FROM sortbench ORDER BY k"


# A key whose encoding runs past braidsort's 16-byte prefix: bytea's
# encoding escapes zero bytes, and a random 10-byte key with four of them
# (about one in twenty million) is kept aside in full (--long-key).
LONG_KEY = "'\\x00a100b200c300d4e5f6'::bytea"
ZERO_BYTES = " + ".join(f"(get_byte(k, {i}) = 0)::int" for i in range(10))


def _comment(rows, payload, tablespace, long_key):
    return (f"rows={rows} payload={payload} tablespace={tablespace}" +
            ("" if long_key == "natural" else f" long_key={long_key}"))


def setup_sql(rows, payload, tablespace="dax", table="sortbench", seed_offset=0,
              long_key="natural"):
    """Statements that create and fill the table (run in order).  The load
    runs in the transaction that creates the table, so that with
    wal_level = minimal it writes no WAL.  long_key: "natural" (random keys
    as they come, a key with four zero bytes in about one load of five at
    5M rows), "none" (such keys lose their zero bytes) or a row number
    (none but the row at that place in the table, which gets one)."""
    ts = f" TABLESPACE {tablespace}" if tablespace else ""
    key = "k"
    if long_key != "natural":
        row = int(long_key) if long_key != "none" else 0
        key = (f"CASE WHEN g = {row} THEN {LONG_KEY} "
               f"WHEN {ZERO_BYTES} >= 4 THEN decode(replace(encode(k, 'hex'), '00', '01'), 'hex') "
               f"ELSE k END")
    return [
        f"DROP TABLE IF EXISTS {table}",
        "BEGIN",
        f"CREATE TABLE {table} (k bytea NOT NULL, v bytea NOT NULL){ts}",
        f"""INSERT INTO {table}
            SELECT {key},
                   decode(substr(repeat(md5((g + {seed_offset})::text), ceil({payload} / 16.0)::int),
                                 1, 2 * {payload}), 'hex')
            FROM (SELECT g, decode(substr(md5(random()::text), 1, 20), 'hex') AS k
                  FROM generate_series(1, {rows}) AS g) AS s""",
        f"COMMENT ON TABLE {table} IS '{_comment(rows, payload, tablespace, long_key)}'",
        "COMMIT",
        f"VACUUM (ANALYZE) {table}",
        "CHECKPOINT",
    ]


def long_keys(conn, table="sortbench"):
    """The rows whose key has four zero bytes or more, and where they are."""
    return [r[0] for r in conn.execute(
        f"SELECT g FROM (SELECT row_number() OVER () AS g, k FROM {table}) s "
        f"WHERE {ZERO_BYTES} >= 4").fetchall()]


def query(name="order_by_k", expect=None):
    return {"name": name, "what": "SELECT * ORDER BY a 10-byte key", "sql": QUERY,
            "settings": {}, "how": "explain", "check": True, "expect": expect or {}}


def load(conn, rows, payload, tablespace="dax", table="sortbench", seed_offset=0, log=print,
         long_key="natural"):
    """(Re)load the table unless it already holds these rows; returns its
    description (rows, bytes, load seconds)."""
    want = _comment(rows, payload, tablespace, long_key)
    have = conn.execute("SELECT obj_description(to_regclass(%s), 'pg_class')", (table,)).fetchone()[0]
    t0 = time.time()
    if have != want:
        log(f"loading {table}: {rows} rows, 10-byte keys, {payload}-byte payloads "
            f"(tablespace {tablespace})")
        for stmt in setup_sql(rows, payload, tablespace, table, seed_offset, long_key):
            conn.execute(stmt)
    n, size = conn.execute(f"SELECT count(*), pg_relation_size('{table}') FROM {table}").fetchone()
    if n != rows:
        raise RuntimeError(f"{table} has {n} rows, expected {rows}")
    info = {"table": table, "rows": rows, "payload": payload, "tablespace": tablespace,
            "bytes": size, "load_seconds": round(time.time() - t0, 1), "reloaded": have != want}
    log(f"{table}: {rows} rows, {size / 1e6:.0f} MB" +
        (f", loaded in {info['load_seconds']} s" if have != want else " (already loaded)"))
    return info


def prewarm(conn, table="sortbench"):
    conn.execute(f"SELECT count(*) FROM {table}")
    conn.execute(f"SELECT pg_prewarm('{table}')")


# ---- size estimates (as bench/run.sh made them) --------------------------
def est_tuple_len(payload):
    """Heap tuple of a sortbench row: 24-byte header, k (10 bytes + 1-byte
    varlena header), v (payload; 1-byte header up to 126 bytes, else padding
    to int alignment + 4-byte header)."""
    return 24 + 11 + 1 + payload if payload <= 126 else 24 + 11 + 1 + 4 + payload


def est_heap_bytes(rows, payload):
    """MAXALIGNed tuples + 4-byte line pointers on 8168 usable bytes a page."""
    slot = (est_tuple_len(payload) + 7) // 8 * 8 + 4
    per = min(8168 // slot, 291)
    return (rows + per - 1) // per * 8192


def est_pg_temp_bytes(rows, payload):
    """PostgreSQL's external sort writes each tuple as a MinimalTuple
    without its 10-byte offset plus a 4-byte length word."""
    return rows * (est_tuple_len(payload) - 14)


def est_braid_spill_bytes(rows):
    """braidsort's runs: [varint len][10-byte key][8-byte ref], at most two
    generations of runs on the device at once."""
    return rows * 19 * 2


def _round_up_mb(nbytes, step=256):
    return (nbytes + step * MB - 1) // (step * MB) * step


def sizing(rows, payloads, tablespace="dax", extra_rows=0, clients=1):
    """tmpfs size and a shared_buffers that holds the largest table twice
    (braidsort's planner counts a table as cached when it is at most half
    of shared_buffers), with a note saying how they were computed."""
    heap_max, used_max, notes = 0, 0, []
    for p in payloads:
        h = est_heap_bytes(rows, p) + (est_heap_bytes(extra_rows, p) if extra_rows else 0)
        t = est_pg_temp_bytes(rows + extra_rows, p)
        spill = max(t * 5 // 4, est_braid_spill_bytes(rows + extra_rows)) * clients
        used = spill + (h if tablespace == "dax" else 0)
        heap_max, used_max = max(heap_max, h), max(used_max, used)
        notes.append(f"payload {p} B: table ~{h // MB} MB, PostgreSQL temp ~{t // MB} MB")
    tmpfs_mb = _round_up_mb(used_max + 256 * MB)
    sb_mb = max(2048, _round_up_mb(2 * heap_max + 256 * MB))
    return {"tmpfs": f"{tmpfs_mb}M", "shared_buffers": f"{sb_mb}MB", "heap_bytes": heap_max,
            "tmpfs_used_bytes": used_max,
            "note": "; ".join(notes) + f"; tmpfs {tmpfs_mb} MB (table + 1.25 x temp + 256 MB), "
                    f"shared_buffers {sb_mb} MB (>= 2 GB and 2 x table)"}


def check_memory(size):
    """Refuse to run the machine out of memory: the tmpfs contents plus the
    cached table (both only resident once used)."""
    avail = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
    need = size["tmpfs_used_bytes"] + size["heap_bytes"] + 512 * MB
    if need > avail * 0.9:
        raise SystemExit(f"this run needs ~{need // MB} MB of memory (tmpfs ~"
                         f"{size['tmpfs_used_bytes'] // MB} MB + cached table ~"
                         f"{size['heap_bytes'] // MB} MB + slack), but only {avail // MB} MB "
                         f"are available; lower --rows")
