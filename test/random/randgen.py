"""Random tables and random queries for braidsort's differential testing.

Pure generation, no database: everything here is a function of a
random.Random, so a seed gives the same tables and a (seed, case) pair the
same query wherever it runs.  differential.py runs what this makes.

Tables have an integer id (unique: it tells rows apart) and random columns
of every type braidsort encodes, under several collations, plus types it
declines (interval, arrays); each column has its own NULL rate (0 to 90%)
and number of distinct values (from two, to as many as rows), and a table
may carry a wide payload (some of it TOASTed).

A query is a Case: its SQL, the session settings it needs (beyond the ones
differential.py varies), and what of its result is determined, which is
what may be compared with PostgreSQL's own result:

	ordered   the result's order is defined by its first "nkeys" columns:
			  rows tied on all of them may come in any order
	loose     (with ordered) the first and last groups of ties may be cut
			  (OFFSET/LIMIT): only their keys and sizes are determined
	cursor    a list of FETCH commands over a SCROLL cursor of the query
"""
from dataclasses import dataclass, field

# Collations a text column may have (created by differential.py).  "default"
# is the database's own (en_US.UTF-8, libc).
TEXT_COLLATIONS = ["default", "C", "rt_en", "rt_sv", "rt_de", "rt_cutf8", "rt_icu"]

WORDS = ["apple", "Apple", "APPLE", "äpple", "Äpfel", "apfel", "zebra", "Zebra", "ångström",
         "Ångström", "angstrom", "öl", "Öl", "oil", "ol", "a b", "ab", "a-b", "a_b", "", " x",
         "x ", "résumé", "resume", "Résumé", "straße", "strasse", "Straße", "ß", "ss", "æble",
         "aeble", "œuvre", "oeuvre", "1st", "10th", "2nd", "I", "ı", "İ", "i", "日本", "中文",
         "ǅ", "dž", "Müller", "Mueller", "van Dijk", "O'Brien", "McDonald", "MacDonald",
         "Smith", "smith", "Émile", "Zoë", "Zoe", "co-op", "coop", "co op", "\t tab"]


@dataclass
class Column:
    name: str
    type: str					# SQL type
    kind: str					# generator kind (see _value)
    collation: str = None		# text kinds: one of TEXT_COLLATIONS
    null_rate: float = 0.0
    distinct: int = 0			# 0: as many as rows
    sortable: bool = True		# can be a sort/group key in PostgreSQL
    summable: bool = False		# exact sums (integers)

    def ddl(self):
        c = ""
        if self.collation and self.collation != "default":
            c = f' COLLATE "{self.collation}"'
        return f"{self.name} {self.type}{c}"


@dataclass
class Table:
    name: str
    rows: int
    columns: list
    wide: int = 0				# payload bytes (0: none)

    def ddl(self):
        cols = ["id int"] + [c.ddl() for c in self.columns]
        if self.wide:
            cols.append("payload text")
        return f"CREATE TABLE {self.name} ({', '.join(cols)})"


@dataclass
class Case:
    sql: str
    what: str
    ordered: bool = False
    nkeys: int = 0
    loose: bool = False
    settings: dict = field(default_factory=dict)
    cursor: list = None			# FETCH commands, or None


# kind -> (SQL type, sortable, summable)
KINDS = {
    "int2": ("int2", True, True),
    "int4": ("int4", True, True),
    "int8": ("int8", True, True),
    "float4": ("float4", True, False),
    "float8": ("float8", True, False),
    "numeric": ("numeric", True, False),
    "numeric_ps": ("numeric(10,2)", True, False),
    "bool": ("bool", True, False),
    "date": ("date", True, False),
    "timestamp": ("timestamp", True, False),
    "timestamptz": ("timestamptz", True, False),
    "time": ("time", True, False),
    "uuid": ("uuid", True, False),
    "bytea": ("bytea", True, False),
    "text": ("text", True, False),
    "varchar": ("varchar(40)", True, False),
    "bpchar": ("char(8)", True, False),
    "oid": ("oid", True, False),
    "interval": ("interval", False, False),	# declined; equal values print differently
    "int4_array": ("int4[]", True, False),		# declined
}
TEXT_KINDS = ("text", "varchar", "bpchar")


def _word(rng):
    r = rng.random()
    if r < 0.6:
        w = rng.choice(WORDS)
    elif r < 0.8:
        w = "".join(rng.choice("aAäÄbBoöÖeéE -'") for _ in range(rng.randint(0, 6)))
    elif r < 0.95:
        w = rng.choice(WORDS) + " " + rng.choice(WORDS)
    else:
        # long strings sharing a prefix
        w = "long" * rng.randint(20, 90) + rng.choice(["a", "B", "ä", ""])
    return w


def _value(rng, kind):
    """One random non-NULL value of a kind, as COPY text."""
    if kind in ("int2", "int4", "int8", "oid"):
        bits = {"int2": 15, "int4": 31, "int8": 63, "oid": 32}[kind]
        r = rng.random()
        if r < 0.05:
            return str(rng.choice([-(1 << bits), (1 << bits) - 1, 0, -1, 1])) if kind != "oid" \
                else str(rng.choice([0, 1, (1 << 32) - 1, 1 << 31]))
        if kind == "oid":
            return str(rng.randint(0, (1 << 32) - 1))
        if r < 0.6:
            return str(rng.randint(-1000, 1000))
        return str(rng.randint(-(1 << bits), (1 << bits) - 1))
    if kind in ("float4", "float8"):
        r = rng.random()
        if r < 0.1:
            return rng.choice(["NaN", "Infinity", "-Infinity", "-0", "0", "1e-40", "-1e-310"
                               if kind == "float8" else "-1e-40"])
        return repr(round(rng.uniform(-1000, 1000), rng.randint(0, 4)))
    if kind in ("numeric", "numeric_ps"):
        r = rng.random()
        if kind == "numeric" and r < 0.05:
            return rng.choice(["NaN", "Infinity", "-Infinity"])
        if r < 0.2:
            # equal values written differently: 1.5, 1.50, 1.500
            return rng.choice(["1.5", "1.50", "1.500", "0", "0.00", "-0.0", "100", "1e2"])
        digits = rng.randint(1, 8 if kind == "numeric_ps" else 30)
        scale = rng.randint(0, min(digits, 2 if kind == "numeric_ps" else 12))
        n = rng.randint(0, 10 ** digits - 1)
        s = str(n).rjust(scale + 1, "0")
        v = s[:len(s) - scale] + ("." + s[len(s) - scale:] if scale else "")
        return ("-" if rng.random() < 0.4 else "") + v
    if kind == "bool":
        return rng.choice(["t", "f"])
    if kind == "date":
        if rng.random() < 0.03:
            return rng.choice(["infinity", "-infinity"])
        return f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if kind in ("timestamp", "timestamptz"):
        if rng.random() < 0.03:
            return rng.choice(["infinity", "-infinity"])
        tz = rng.choice(["+00", "+05:30", "-08"]) if kind == "timestamptz" else ""
        return (f"{rng.randint(1900, 2100):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
                f".{rng.randint(0, 999999):06d}{tz}")
    if kind == "time":
        return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    if kind == "uuid":
        return "%032x" % rng.getrandbits(128)
    if kind == "bytea":
        n = rng.randint(0, 24)
        return "\\\\x" + bytes(rng.choice([0, 1, 0x7f, 0x80, 0xff, rng.randint(0, 255)])
                               for _ in range(n)).hex()
    if kind in TEXT_KINDS:
        w = _word(rng)
        if kind == "varchar":
            w = w[:40]
        elif kind == "bpchar":
            w = w[:8]
        return w.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    if kind == "interval":
        return rng.choice(["1 day", "24 hours", "1 mon", "30 days", "00:00:00", "-1 day",
                           f"{rng.randint(0, 1000)} minutes"])
    if kind == "int4_array":
        return "{" + ",".join(str(rng.randint(-3, 3)) for _ in range(rng.randint(0, 3))) + "}"
    raise ValueError(kind)


def make_tables(rng, count=3, max_rows=30000):
    """count random tables rt0.. (their definitions; rows come from rows_of)."""
    tables = []
    for t in range(count):
        cols = []
        ncols = rng.randint(3, 8)
        for i in range(ncols):
            kind = rng.choice(list(KINDS))
            if i == 0 and rng.random() < 0.5:
                # text is what real sorts are by, and the hardest case
                kind = rng.choice(TEXT_KINDS)
            coll = rng.choice(TEXT_COLLATIONS) if kind in TEXT_KINDS else None
            if tables and rng.random() < 0.4:
                # a column like one of an earlier table: something to join on
                like = rng.choice(rng.choice(tables).columns)
                kind, coll = like.kind, like.collation
            sqltype, sortable, summable = KINDS[kind]
            cols.append(Column(f"c{i}", sqltype, kind, coll,
                               rng.choice([0, 0, 0.01, 0.1, 0.5, 0.9]),
                               rng.choice([2, 5, 50, 1000, 0, 0]),
                               sortable, summable))
        # one large table, one middling, one of any size (empty included)
        rows = [max_rows, rng.choice([2000, max_rows // 2, max_rows]),
                rng.choice([0, 1, 50, 2000, max_rows])][min(t, 2)]
        tables.append(Table(f"rt{t}", rows, cols, rng.choice([0, 0, 20, 300, 3000])))
    return tables


def rows_of(table, rng):
    """The table's rows as COPY text lines."""
    domains = {}
    for c in table.columns:
        if c.distinct:
            domains[c.name] = [_value(rng, c.kind) for _ in range(c.distinct)]
    out = []
    for i in range(1, table.rows + 1):
        vals = [str(i)]
        for c in table.columns:
            if rng.random() < c.null_rate:
                vals.append("\\N")
            elif c.distinct:
                vals.append(rng.choice(domains[c.name]))
            else:
                vals.append(_value(rng, c.kind))
        if table.wide:
            n = rng.randint(0, table.wide)
            vals.append(("%x" % rng.getrandbits(4 * n + 4))[:n])
        out.append("\t".join(vals))
    return out


# ---- expressions --------------------------------------------------------

def _key_expr(rng, col, alias=""):
    """A sort key over a column: the column or an expression of it (an
    expression's values tie as often as the column's, or more)."""
    c = f"{alias}{col.name}"
    r = rng.random()
    if r < 0.6:
        e = c
    elif col.kind in ("int2", "int4", "int8"):
        e = rng.choice([f"({c} % 7)", f"({c} / 3)", f"abs({c} % 1000)"])
    elif col.kind in TEXT_KINDS:
        e = rng.choice([f"lower({c})", f"substr({c}, 1, 2)", f"({c} || 'x')", f"length({c})",
                        f"upper({c})"])
    elif col.kind in ("numeric", "numeric_ps"):
        e = rng.choice([f"round({c}, 1)", f"({c} * 2)", f"trunc({c})"])
    elif col.kind in ("float4", "float8"):
        e = rng.choice([f"floor({c})", f"({c} * 2)"])
    elif col.kind in ("timestamp", "timestamptz"):
        e = f"date_trunc('day', {c})"
    else:
        e = c
    if col.kind in TEXT_KINDS and not e.startswith("length(") and rng.random() < 0.3:
        e = f'{e} COLLATE "{rng.choice(TEXT_COLLATIONS[1:])}"'
    return e


def _direction(rng):
    d = rng.choice(["", "", " DESC", " ASC"])
    n = rng.choice(["", "", " NULLS FIRST", " NULLS LAST"])
    return d + n


def _sortable(table):
    return [c for c in table.columns if c.sortable]


def _keys(rng, table, alias="", most=4):
    cols = _sortable(table)
    if not cols:
        return []
    n = rng.randint(1, min(most, len(cols) + 1))
    return [_key_expr(rng, rng.choice(cols), alias) for _ in range(n)]


def _payload(rng, table, alias=""):
    cols = [f"{alias}id"] + [f"{alias}{c.name}" for c in table.columns
                             if rng.random() < 0.5]
    if table.wide and rng.random() < 0.5:
        cols.append(f"md5({alias}payload)")
    return cols


def _where(rng, alias=""):
    return rng.choice(["", "", f" WHERE {alias}id % 3 <> 0", f" WHERE {alias}id > 100"])


def _named(keys):
    """Key expressions as output columns k1, k2, ...: output names must not
    clash, as ORDER BY looks a bare name up among them first."""
    return [f"{k} AS k{i + 1}" for i, k in enumerate(keys)]


def _order_by(rng, keys):
    return ", ".join(f"{k}{_direction(rng)}" for k in keys)


# ---- query templates ----------------------------------------------------

def q_sort(rng, tables):
    t = rng.choice(tables)
    keys = _keys(rng, t)
    if not keys:
        return None
    cols = _named(keys) + _payload(rng, t)
    sql = f"SELECT {', '.join(cols)} FROM {t.name}{_where(rng)} ORDER BY {_order_by(rng, keys)}"
    r = rng.random()
    if r < 0.15:
        sql += f" OFFSET {rng.randint(0, 500)}"
        return Case(sql, "sort with offset", True, len(keys), loose=True)
    if r < 0.25:
        sql += f" LIMIT {rng.choice([1, 10, 3000])} OFFSET {rng.randint(0, 100)}"
        return Case(sql, "sort with limit", True, len(keys), loose=True)
    return Case(sql, "sort", True, len(keys))


def q_group(rng, tables):
    t = rng.choice(tables)
    keys = _keys(rng, t, most=3)
    if not keys:
        return None
    aggs = ["count(*)"]
    for c in t.columns:
        if c.summable and rng.random() < 0.5:
            aggs.append(f"sum({c.name})")
        elif c.sortable and c.kind not in ("bool", "int4_array", "uuid", "bytea") \
                and rng.random() < 0.3:
            aggs.append(f"min({c.name}), max({c.name})")
    sql = (f"SELECT {', '.join(_named(keys))}, {', '.join(aggs)} FROM {t.name}{_where(rng)} "
           f"GROUP BY {', '.join(keys)}")
    settings = {"enable_hashagg": "off"}
    if rng.random() < 0.5:
        sql += f" ORDER BY {_order_by(rng, keys)}"
        return Case(sql, "group by, ordered", True, len(keys), settings=settings)
    return Case(sql, "group by", settings=settings)


def q_distinct(rng, tables):
    t = rng.choice(tables)
    keys = _keys(rng, t, most=3)
    if not keys:
        return None
    settings = {"enable_hashagg": "off"}
    if rng.random() < 0.5:
        sql = f"SELECT DISTINCT {', '.join(_named(keys))} FROM {t.name}{_where(rng)}"
        if rng.random() < 0.5:
            return Case(sql + f" ORDER BY {_order_by(rng, keys)}", "distinct, ordered", True,
                        len(keys), settings=settings)
        return Case(sql, "distinct", settings=settings)
    # DISTINCT ON the first keys: the row kept is the first by all keys, and
    # only keys are output, so the result is determined
    on = keys[:rng.randint(1, len(keys))]
    order = [f"{k}{_direction(rng)}" for k in keys]
    sql = (f"SELECT DISTINCT ON ({', '.join(on)}) {', '.join(_named(keys))} FROM {t.name}{_where(rng)} "
           f"ORDER BY {', '.join(order)}")
    return Case(sql, "distinct on", True, len(keys))


def q_window(rng, tables):
    t = rng.choice(tables)
    part = _keys(rng, t, most=2)
    order = _keys(rng, t, most=2)
    if not order:
        return None
    ints = [c.name for c in t.columns if c.summable]
    # functions whose values do not depend on the order of peers: ranks and
    # aggregates over the default RANGE frame (which takes peers whole)
    fns = ["rank() OVER w", "dense_rank() OVER w", "count(*) OVER w", "cume_dist() OVER w"]
    if ints:
        fns.append(f"sum({rng.choice(ints)}) OVER w")
    w = (f"PARTITION BY {', '.join(part)} " if part and rng.random() < 0.7 else "") + \
        f"ORDER BY {_order_by(rng, order)}"
    extra = ""
    if rng.random() < 0.4:
        o2 = _keys(rng, t, most=2)
        extra = f", rank() OVER (ORDER BY {_order_by(rng, o2)})"
    sql = (f"SELECT id, {', '.join(rng.sample(fns, rng.randint(1, len(fns))))}{extra} "
           f"FROM {t.name}{_where(rng)} WINDOW w AS ({w})")
    return Case(sql, "window")


def _join_pair(rng, tables):
    """Two tables and a column of each of one type to join on (a table with
    itself when no two share a type)."""
    a = rng.choice(tables)
    b = rng.choice(tables)
    pairs = [(ca, cb) for ca in _sortable(a) for cb in _sortable(b)
             if ca.type == cb.type and ca.kind not in ("int4_array",)
             and (ca.collation or "default") == (cb.collation or "default")]
    if not pairs:
        cols = [c for c in _sortable(a) if c.kind != "int4_array"]
        if not cols:
            return None
        c = rng.choice(cols)
        return a, a, c, c
    ca, cb = rng.choice(pairs)
    return a, b, ca, cb


def _few(ca, cb):
    """Either join column has few distinct values: a join on it explodes."""
    return bool(ca.distinct and ca.distinct < 1000 or cb.distinct and cb.distinct < 1000)


def q_mergejoin(rng, tables):
    p = _join_pair(rng, tables)
    if p is None:
        return None
    a, b, ca, cb = p
    kind = rng.choice(["JOIN", "LEFT JOIN", "FULL JOIN"])
    # thin both sides: columns with few distinct values join to many rows
    join = (f"(SELECT * FROM {a.name} WHERE id % 13 = 0) a {kind} "
            f"(SELECT * FROM {b.name} WHERE id % 11 = 0) b ON a.{ca.name} = b.{cb.name}")
    settings = {"enable_hashjoin": "off", "enable_nestloop": "off"}
    if _few(ca, cb):
        sql = (f"SELECT count(*), count(a.id), count(b.id), sum(a.id::int8), "
               f"sum(b.id::int8 * 3) FROM {join}")
        return Case(sql, "merge join, counted", settings=settings)
    sql = f"SELECT a.id, b.id, a.{ca.name} FROM {join}"
    if rng.random() < 0.3:
        sql += " ORDER BY 1, 2"
        return Case(sql, "merge join, ordered", True, 2, settings=settings)
    return Case(sql, "merge join", settings=settings)


def q_hashjoin(rng, tables):
    p = _join_pair(rng, tables)
    if p is None:
        return None
    a, b, ca, cb = p
    # work_mem small enough for PostgreSQL to expect several batches (only
    # then does BraidJoin take the join); ranges of ids, which the planner
    # estimates well, bound the sides
    settings = {"enable_mergejoin": "off", "enable_nestloop": "off",
                "work_mem": "64kB"}
    r = rng.random()
    if r < 0.25:
        sql = (f"SELECT a.id FROM {a.name} a WHERE EXISTS (SELECT 1 FROM {b.name} b "
               f"WHERE b.{cb.name} = a.{ca.name})")
        return Case(sql, "semi join", settings=settings)
    if r < 0.5:
        sql = (f"SELECT a.id FROM {a.name} a WHERE NOT EXISTS (SELECT 1 FROM {b.name} b "
               f"WHERE b.{cb.name} = a.{ca.name})")
        return Case(sql, "anti join", settings=settings)
    kind = rng.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
    bound = rng.choice([3000, 100000])
    join = (f"(SELECT * FROM {a.name} WHERE id <= {bound // 4}) a {kind} "
            f"(SELECT * FROM {b.name} WHERE id <= {bound}) b ON a.{ca.name} = b.{cb.name}")
    if _few(ca, cb):
        # many rows a key: what the join produced, summed
        sql = (f"SELECT count(*), count(a.id), count(b.id), sum(a.id::int8), "
               f"sum(b.id::int8 * 3) FROM {join}")
        return Case(sql, "hash join, counted", settings=settings)
    return Case(f"SELECT a.id, b.id FROM {join}", "hash join", settings=settings)


def q_setop(rng, tables):
    t = rng.choice(tables)
    keys = _keys(rng, t, most=3)
    if not keys:
        return None
    op = rng.choice(["UNION", "INTERSECT", "EXCEPT", "UNION ALL", "INTERSECT ALL", "EXCEPT ALL"])
    sel = ", ".join(_named(keys))
    sql = (f"SELECT {sel} FROM {t.name} WHERE id % 2 = 0 {op} "
           f"SELECT {sel} FROM {t.name} WHERE id % 3 = 0")
    settings = {"enable_hashagg": "off"}
    if rng.random() < 0.4:
        sql = f"SELECT * FROM ({sql}) s ORDER BY {', '.join(str(i + 1) for i in range(len(keys)))}"
        return Case(sql, "set operation, ordered", True, len(keys), settings=settings)
    return Case(sql, "set operation", settings=settings)


def q_subquery(rng, tables):
    t = rng.choice(tables)
    keys = _keys(rng, t, most=3)
    if not keys:
        return None
    r = rng.random()
    if r < 0.35:
        sql = (f"WITH s AS MATERIALIZED (SELECT {', '.join(_named(keys))}, id FROM {t.name} "
               f"ORDER BY {_order_by(rng, keys)}) SELECT * FROM s WHERE id % 2 = 0")
        return Case(sql, "materialized CTE")
    if r < 0.7:
        inner = rng.choice(tables)
        ik = _keys(rng, inner, most=2)
        if not ik:
            return None
        # an ordered subquery aggregated: its order is irrelevant, its rows not
        sql = (f"SELECT count(*), count(DISTINCT x) FROM (SELECT {ik[0]} AS x FROM {inner.name} "
               f"ORDER BY {_order_by(rng, ik)}) s")
        return Case(sql, "ordered subquery, aggregated")
    # a sort rescanned once per outer row, with a parameter
    o = rng.choice(tables)
    sql = (f"SELECT x.id, (SELECT count(*) FROM (SELECT {', '.join(_named(keys))} FROM {t.name} "
           f"WHERE id > x.id * 37 ORDER BY {_order_by(rng, keys)} OFFSET 5) s) "
           f"FROM {o.name} x WHERE x.id <= 6")
    return Case(sql, "correlated subquery")


def q_cursor(rng, tables):
    c = q_sort(rng, tables)
    if c is None or c.loose:
        return None
    fetches = ["FETCH FORWARD ALL"]
    for _ in range(rng.randint(2, 8)):
        fetches.append(rng.choice(["FETCH BACKWARD {n}", "FETCH FORWARD {n}", "FETCH ABSOLUTE {n}",
                                   "FETCH RELATIVE -{n}", "FETCH LAST", "FETCH FIRST",
                                   "FETCH PRIOR", "FETCH NEXT", "MOVE BACKWARD {n}"])
                       .format(n=rng.randint(1, 300)))
    c.cursor = fetches
    c.what = "scroll cursor"
    return c


TEMPLATES = [(q_sort, 6), (q_group, 2), (q_distinct, 2), (q_window, 2), (q_mergejoin, 2),
             (q_hashjoin, 2), (q_setop, 1), (q_subquery, 2), (q_cursor, 1)]


def make_case(rng, tables):
    """One random query over the tables."""
    fns = [f for f, w in TEMPLATES for _ in range(w)]
    while True:
        c = rng.choice(fns)(rng, tables)
        if c is not None:
            return c


def session_settings(rng):
    """The settings a case runs under, in both runs: memory, the mode braidsort
    is told to use, parallel query; and whether braidsort's run is forced."""
    s = {"work_mem": rng.choice(["64kB", "256kB", "1MB", "4MB", "64MB"]),
         "braidsort.work_mem": rng.choice(["-1", "-1", "64", "512"]),
         "braidsort.sort_mode": rng.choice(["auto", "auto", "mergepass", "hybrid", "segment",
                                            "lazy"]),
         "braidsort.join_mode": rng.choice(["auto", "grace", "hybrid", "segmented", "lazy"]),
         "braidsort.write_intensity": rng.choice(["-1", "0", "0.3", "1"])}
    if rng.random() < 0.3:
        s.update({"max_parallel_workers_per_gather": "2", "parallel_setup_cost": "0",
                  "parallel_tuple_cost": "0", "min_parallel_table_scan_size": "0",
                  # one sort in a Gather Merge's place, or one in each process
                  "braidsort.parallel_sort": rng.choice(["auto", "each", "one"])})
    # braidsort forced, or as shipped (sorts expected small taken adaptively)
    s["braidsort.force"] = rng.choice(["on", "on", "on", "off"])
    # ... and, as shipped, whether an adaptive sort asks the cost model
    s["braidsort.adaptive"] = rng.choice(["on", "always"])
    return s
