"""The realistic workload: the sorts a DBA's application runs on an orders table.

An orders-like table (ids, customers, realistic first and last names with a
skewed distribution and a long tail, e-mail addresses, timestamps nearly in
insertion order, numeric amounts, a status, optional notes) in an
en_US.UTF-8 database, and the queries a DBA would run over it: ORDER BY a
timestamp, a numeric, a collated text column, several columns, DESC; a
window function; GROUP BY; a merge join; COPY of an ordered query; count(*)
over an ordered subquery.  PostgreSQL's default settings, parallel query on.
"""

# Common surnames (skewed: earlier ones more frequent), with the punctuation,
# spaces, accents and case a real table has, which en_US orders specially.
LAST_NAMES = """Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez
Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez
Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright
Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell
Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart
Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly
Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza
Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jiménez O'Brien
McDonald MacDonald Müller Østergaard D'Angelo""".split() + [
    "van der Berg", "de la Cruz", "St. John", "le Blanc", "Van Buren", "smith"]

FIRST_NAMES = """James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth
William Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Christopher Lisa
Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra Donald Ashley Steven Kimberly Paul
Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy George Melissa
Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia
Jacob Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda Larry
Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha Samuel Katherine José
Zoë Renée André Chloé Mía Ángel""".split() + ["Mary Ann", "Jean-Luc", "jo"]

SYLLABLES = ("ka lo mi ster ber son ton ver ley ash ford ing man well ro na li da ki "
             "vi an el or ul en ar ba co de fi gu ha je ku").split()


def _sql_array(words):
    return "ARRAY[" + ",".join("'" + w.replace("'", "''") + "'" for w in words) + "]"


def _name_expr(common, tail_share):
    """A per-row random name: a skewed pick of a common one, or a long-tail one."""
    n = len(common)
    syl = "(" + _sql_array(SYLLABLES) + ")"
    k = len(SYLLABLES)
    return (f"CASE WHEN random() < {tail_share} THEN initcap({syl}[1 + floor(random() * {k})::int]"
            f" || {syl}[1 + floor(random() * {k})::int]"
            f" || CASE WHEN random() < 0.5 THEN {syl}[1 + floor(random() * {k})::int] ELSE '' END)"
            f" ELSE ({_sql_array(common)})[1 + floor({n} * random() ^ 2)::int] END")


def setup_sql(rows, customers):
    """Statements that create and fill the tables (run in order)."""
    return [
        "DROP TABLE IF EXISTS orders, customers",
        """CREATE TABLE customers (
            id int PRIMARY KEY,
            name text NOT NULL,
            country text NOT NULL,
            segment text NOT NULL)""",
        f"""INSERT INTO customers
            SELECT g, {_name_expr(LAST_NAMES, 0.4)},
                   (ARRAY['US','DE','SE','FR','GB','BR','IN','JP'])[1 + floor(8 * random() ^ 2)::int],
                   (ARRAY['retail','business','enterprise'])[1 + floor(3 * random() ^ 3)::int]
            FROM generate_series(1, {customers}) g""",
        """CREATE TABLE orders (
            id bigint NOT NULL,
            customer_id int NOT NULL,
            first_name text NOT NULL,
            last_name text NOT NULL,
            email text NOT NULL,
            created_at timestamptz NOT NULL,
            amount numeric(12,2) NOT NULL,
            status text NOT NULL,
            note text)""",
        # timestamps follow the ids with a few minutes of jitter (orders are
        # inserted roughly in time order); amounts are log-uniform
        f"""INSERT INTO orders
            SELECT g, 1 + floor({customers} * random() ^ 1.5)::int, fn, ln,
                   lower(replace(fn || '.' || ln, ' ', '')) || (g % 1000) || '@example.com',
                   timestamptz '2023-01-01 00:00+00' + g * interval '20 seconds'
                       + (random() * 600 - 300) * interval '1 second',
                   round(exp(random() * 8)::numeric, 2),
                   (ARRAY['delivered','shipped','pending','cancelled','returned'])[1 + floor(5 * random() ^ 3)::int],
                   CASE WHEN random() < 0.3 THEN NULL
                        ELSE left(repeat(md5(g::text), 3), 8 + floor(random() * 80)::int) END
            FROM generate_series(1, {rows}) g,
                 LATERAL (SELECT {_name_expr(FIRST_NAMES, 0.2)} || substr(g::text, 1, 0) AS fn,
                                 {_name_expr(LAST_NAMES, 0.4)} || substr(g::text, 1, 0) AS ln) n""",
        "VACUUM ANALYZE customers",
        "VACUUM ANALYZE orders",
    ]


# name -> (what it stands for, SQL, session settings it needs, how it is run)
QUERIES = [
    ("ts", "ORDER BY a timestamp",
     "SELECT * FROM orders ORDER BY created_at", {}, "explain"),
    ("ts_desc", "ORDER BY a timestamp DESC",
     "SELECT * FROM orders ORDER BY created_at DESC", {}, "explain"),
    ("numeric", "ORDER BY a numeric",
     "SELECT * FROM orders ORDER BY amount", {}, "explain"),
    ("text", "ORDER BY a collated text column",
     "SELECT * FROM orders ORDER BY last_name", {}, "explain"),
    ("names", "ORDER BY two collated text columns",
     "SELECT * FROM orders ORDER BY last_name, first_name", {}, "explain"),
    ("multi", "ORDER BY two columns, one DESC",
     "SELECT * FROM orders ORDER BY customer_id, created_at DESC", {}, "explain"),
    ("text_multi", "ORDER BY a collated text column, then a numeric DESC",
     "SELECT * FROM orders ORDER BY status, amount DESC", {}, "explain"),
    ("window", "a window function over partitions",
     "SELECT id, customer_id, sum(amount) OVER (PARTITION BY customer_id ORDER BY created_at) FROM orders",
     {}, "explain"),
    ("group", "GROUP BY",
     "SELECT customer_id, count(*), sum(amount) FROM orders GROUP BY customer_id", {}, "explain"),
    ("mergejoin", "a merge join (hash joins off)",
     "SELECT o.id, o.amount, c.name FROM orders o JOIN customers c ON c.id = o.customer_id",
     {"enable_hashjoin": "off"}, "explain"),
    ("copy", "COPY of an ordered query to the client",
     "COPY (SELECT * FROM orders ORDER BY amount) TO STDOUT", {}, "copy"),
    ("count", "count(*) over an ordered subquery",
     "SELECT count(*) FROM (SELECT * FROM orders ORDER BY created_at) s", {}, "explain"),
]
