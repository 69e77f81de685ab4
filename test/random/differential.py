#!/usr/bin/python3
"""Randomized differential testing of braidsort against PostgreSQL's own nodes.

Builds random tables (randgen.py) in a database of a running server that
preloads braidsort, then runs random queries over them, each twice under
the same random settings (work_mem, braidsort's budget and modes, parallel
query): with braidsort off, and with braidsort forced (or, in a quarter of
the cases, as shipped: the sorts its cost model declines only for their
row estimate taken adaptively, most of them staying PostgreSQL's
tuplesort, the rest switching to braidsort's path).  The two results are
compared allowing only the freedom PostgreSQL has: rows tied on every sort
key may come in any order (and where OFFSET/LIMIT cut a group of ties, which
of its rows are kept), and values PostgreSQL calls equal may print
differently (1.5 and 1.50, -0 and 0).

	differential.py --dsn DSN [--seed N] [--seconds S] [--case N]

The database must have been created with LOCALE 'en_US.UTF-8' (its default
collation is then a libc one); sv_SE.UTF-8 and de_DE.UTF-8 must exist.
Exits 1 if a case differs or fails only with braidsort, or if too few cases
used braidsort at all (a generator that never reaches it tests nothing),
and prints how to run a failing case again.  scripts/random-test.sh runs it
on a sandbox server with a new seed; test/t/012_random.pl runs a seeded,
time-bounded batch in the test suite.
"""
import argparse
import collections
import decimal
import os
import random
import sys
import time

import psycopg
from psycopg import pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import randgen  # noqa: E402

NUMERIC_OID, FLOAT4_OID, FLOAT8_OID = 1700, 700, 701
MIN_BRAID_SHARE = 0.3


class QueryError(Exception):
    pass


def execute(conn, sql):
    """Run one statement; its rows as tuples of text (bytes, None for NULL)
    with the column types, or QueryError."""
    res = conn.pgconn.exec_(sql.encode())
    if res.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        msg = res.error_message.decode(errors="replace").strip()
        raise QueryError(msg)
    types = [res.ftype(c) for c in range(res.nfields)]
    rows = [tuple(res.get_value(r, c) for c in range(res.nfields)) for r in range(res.ntuples)]
    return normalized(rows, types)


def normalized(rows, types):
    """Values PostgreSQL calls equal made identical: numerics by value, -0
    and 0 as floats."""
    fix = {}
    for i, t in enumerate(types):
        if t == NUMERIC_OID:
            fix[i] = lambda v: v if v in (b"NaN", b"Infinity", b"-Infinity") else \
                str(decimal.Decimal(v.decode()).normalize()).encode()
        elif t in (FLOAT4_OID, FLOAT8_OID):
            fix[i] = lambda v: b"0" if v == b"-0" else v
    if not fix:
        return rows
    out = []
    for row in rows:
        row = list(row)
        for i, f in fix.items():
            if row[i] is not None:
                row[i] = f(row[i])
        out.append(tuple(row))
    return out


def groups(rows, nkeys):
    """Consecutive rows with equal first nkeys columns: [(key, [rows])]."""
    out = []
    for row in rows:
        k = row[:nkeys]
        if out and out[-1][0] == k:
            out[-1][1].append(row)
        else:
            out.append((k, [row]))
    return out


def show(row, width=160):
    s = "(" + ", ".join("NULL" if v is None else v.decode(errors="replace") for v in row) + ")"
    return s if len(s) <= width else s[:width] + "..."


def difference(pg, braid, case):
    """None if braidsort's rows are a result PostgreSQL could have given,
    else what differs."""
    if not case.ordered:
        a, b = collections.Counter(pg), collections.Counter(braid)
        if a == b:
            return None
        only_pg = list((a - b).elements())[:3]
        only_braid = list((b - a).elements())[:3]
        return (f"{len(pg)} rows vs {len(braid)}; only PostgreSQL's: "
                f"{[show(r) for r in only_pg]}; only braidsort's: {[show(r) for r in only_braid]}")
    ga, gb = groups(pg, case.nkeys), groups(braid, case.nkeys)
    for i, ((ka, ra), (kb, rb)) in enumerate(zip(ga, gb)):
        if ka != kb:
            return (f"group {i} (row {sum(len(g[1]) for g in ga[:i])}) has keys {show(ka)} "
                    f"in PostgreSQL's result, {show(kb)} in braidsort's")
        edge = case.loose and (i == 0 or i == len(ga) - 1)
        if len(ra) != len(rb) or (not edge and collections.Counter(ra) != collections.Counter(rb)):
            return (f"group {i} with keys {show(ka)}: {len(ra)} rows in PostgreSQL's result, "
                    f"{len(rb)} in braidsort's; first: {show(ra[0])} vs {show(rb[0])}")
    if len(ga) != len(gb):
        return f"{len(ga)} groups of ties ({len(pg)} rows) vs {len(gb)} ({len(braid)} rows)"
    return None


def run_cursor(conn, case):
    """The rows of each FETCH of the case's cursor walk."""
    execute(conn, "BEGIN")
    try:
        execute(conn, f"DECLARE c SCROLL CURSOR FOR {case.sql}")
        return [execute(conn, f"{f} FROM c") for f in case.cursor]
    finally:
        execute(conn, "ROLLBACK")


def cursor_difference(pg, braid, case):
    """The first fetch (all rows) compared as a sort's result; later ones by
    their keys, and each row must be one of braidsort's own with those keys."""
    d = difference(pg[0], braid[0], case)
    if d:
        return "FETCH FORWARD ALL: " + d
    own = collections.defaultdict(set)
    for row in braid[0]:
        own[row[:case.nkeys]].add(row)
    for f, a, b in zip(case.cursor[1:], pg[1:], braid[1:]):
        ka = [r[:case.nkeys] for r in a]
        kb = [r[:case.nkeys] for r in b]
        if ka != kb:
            return f"{f}: keys {[show(k) for k in ka[:3]]} vs {[show(k) for k in kb[:3]]}"
        for r in b:
            if r not in own[r[:case.nkeys]]:
                return f"{f}: row {show(r)} is not in the cursor's own rows with its keys"
    return None


def uses_braidsort(conn, sql):
    plan = "\n".join(r[0].decode() for r in execute(conn, f"EXPLAIN (COSTS OFF) {sql}"))
    return ("Custom Scan (BraidSort)" in plan, "Custom Scan (BraidJoin)" in plan)


def set_all(conn, settings):
    for k, v in settings.items():
        execute(conn, f"SET {k} = '{v}'")


def run_case(conn, case, settings):
    """Run the case both ways: (outcome, detail, used) where outcome is
    'same', 'both-failed' or 'FAILED'."""
    execute(conn, "RESET ALL")
    execute(conn, "SET statement_timeout = '120s'")
    set_all(conn, settings)
    set_all(conn, case.settings)
    run = run_cursor if case.cursor else (lambda c, k: execute(c, k.sql))
    compare = cursor_difference if case.cursor else difference
    execute(conn, "SET braidsort.enable = off")
    try:
        pg = run(conn, case)
        pg_error = None
    except QueryError as e:
        pg, pg_error = None, str(e)
    execute(conn, "SET braidsort.enable = on")
    execute(conn, f"SET braidsort.force = {settings.get('braidsort.force', 'on')}")
    used = (False, False)
    try:
        used = uses_braidsort(conn, case.sql)
        braid = run(conn, case)
        braid_error = None
    except QueryError as e:
        braid, braid_error = None, str(e)
    if pg_error and braid_error:
        return "both-failed", f"PostgreSQL: {pg_error}; braidsort: {braid_error}", used
    if braid_error:
        return "FAILED", f"only with braidsort: {braid_error}", used
    if pg_error:
        return "FAILED", f"only without braidsort: {pg_error}", used
    d = compare(pg, braid, case)
    return ("FAILED", d, used) if d else ("same", None, used)


def setup(conn, seed, tables):
    execute(conn, "SET client_min_messages = warning")
    for i in range(10):
        execute(conn, f"DROP TABLE IF EXISTS rt{i}")
    icu = execute(conn, "SELECT count(*) FROM pg_collation WHERE collprovider = 'i'")[0][0] != b"0"
    for name, locale in (("rt_en", "en_US.UTF-8"), ("rt_sv", "sv_SE.UTF-8"),
                         ("rt_de", "de_DE.UTF-8"), ("rt_cutf8", "C.UTF-8")):
        execute(conn, f"DROP COLLATION IF EXISTS {name}")
        execute(conn, f"CREATE COLLATION {name} (provider = libc, locale = '{locale}')")
    execute(conn, "DROP COLLATION IF EXISTS rt_icu")
    execute(conn, "CREATE COLLATION rt_icu (provider = icu, locale = 'und')" if icu else
            "CREATE COLLATION rt_icu (provider = libc, locale = 'en_US.UTF-8')")
    rng = random.Random(f"{seed}/rows")
    for t in tables:
        execute(conn, t.ddl())
        with conn.cursor().copy(f"COPY {t.name} FROM STDIN") as cp:
            for line in randgen.rows_of(t, rng):
                cp.write(line + "\n")
        # some tables without statistics: the planner's estimates are wrong
        if rng.random() < 0.8:
            execute(conn, f"ANALYZE {t.name}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dsn", required=True, help="libpq connection string of the database")
    ap.add_argument("--seed", type=int, default=None, help="[a new one]")
    ap.add_argument("--seconds", type=float, default=120, help="time to run cases for [120]")
    ap.add_argument("--case", type=int, default=None, help="run only this case")
    ap.add_argument("--max-cases", type=int, default=100000)
    ap.add_argument("--repro", default="bash scripts/random-test.sh",
                    help="the command that reruns a case, printed with failures")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)

    tables = randgen.make_tables(random.Random(f"{seed}/tables"))
    conn = psycopg.connect(args.dsn, autocommit=True)
    t0 = time.time()
    setup(conn, seed, tables)
    print(f"seed {seed}: tables made in {time.time() - t0:.1f} s: " +
          "; ".join(f"{t.name} {t.rows} rows ({', '.join(c.ddl() for c in t.columns)}"
                    f"{', payload' if t.wide else ''})" for t in tables), flush=True)

    t0 = time.time()
    counts = collections.Counter()
    used_by = collections.Counter()
    failures = []
    cases = [args.case] if args.case is not None else range(args.max_cases)
    for n in cases:
        if args.case is None and time.time() - t0 > args.seconds:
            break
        rng = random.Random(f"{seed}/{n}")
        case = randgen.make_case(rng, tables)
        settings = randgen.session_settings(rng)
        t1 = time.time()
        outcome, detail, used = run_case(conn, case, settings)
        ms = (time.time() - t1) * 1000
        counts[outcome] += 1
        counts["cases"] += 1
        if used[0] or used[1]:
            counts["braid"] += 1
            used_by[case.what] += 1
        if args.verbose or outcome == "FAILED":
            print(f"{outcome} case {n} ({ms:.0f} ms, {case.what}; braidsort {'sort ' if used[0] else ''}"
                  f"{'join' if used[1] else '' if used[0] else 'not used'}): {case.sql}",
                  flush=True)
        if outcome == "FAILED":
            failures.append(n)
            print(f"  settings: {settings} {case.settings}"
                  + (f"\n  cursor: {case.cursor}" if case.cursor else "")
                  + f"\n  difference: {detail}"
                  + f"\n  reproduce: {args.repro} --seed {seed} --case {n}", flush=True)
        elif outcome == "both-failed" and args.verbose:
            print(f"  {detail}")
    conn.close()

    print(f"seed {seed}: {counts['cases']} cases in {time.time() - t0:.0f} s, "
          f"{counts['braid']} used braidsort ({', '.join(f'{k} {v}' for k, v in sorted(used_by.items()))}), "
          f"{counts['both-failed']} failed both ways, {len(failures)} differed", flush=True)
    if failures:
        print(f"FAILED cases {failures}: reproduce with {args.repro} --seed {seed} --case N")
        return 1
    if args.case is None and counts["braid"] < MIN_BRAID_SHARE * counts["cases"]:
        print(f"too few cases used braidsort ({counts['braid']} of {counts['cases']})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
