"""The sortbenchmark shape: 10-byte random keys and a payload.

SELECT * FROM sortbench ORDER BY k, the case braidsort was first built and
measured on: OnePass (a work_mem braidsort's IndexMap fits and PostgreSQL's
tuples do not) and spill (a work_mem neither fits: MergePass), in a cluster
whose shared_buffers hold the table (A) or are PostgreSQL's default (B),
with parallel query off (one process, braidsort with all its threads) and
on (PostgreSQL's default: two workers and the leader each sort their part).
"""


def setup_sql(rows, payload):
    return [
        "DROP TABLE IF EXISTS sortbench",
        "CREATE TABLE sortbench (k bytea NOT NULL, v bytea NOT NULL)",
        f"""INSERT INTO sortbench
            SELECT decode(substr(md5(random()::text), 1, 20), 'hex'),
                   decode(substr(repeat(md5(g::text), ceil({payload} / 16.0)::int), 1, 2 * {payload}), 'hex')
            FROM generate_series(1, {rows}) AS g""",
        "VACUUM ANALYZE sortbench",
        "CHECKPOINT",
    ]


QUERIES = [
    {"name": "order_by_k", "what": "SELECT * ORDER BY a 10-byte key",
     "sql": "SELECT * FROM sortbench ORDER BY k", "settings": {}, "how": "explain"},
]
