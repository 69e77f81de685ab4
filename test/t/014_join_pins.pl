# 014_join_pins.pl
#	BraidJoin keeps the inner table's blocks pinned for its fetches, all
#	joins of the server together at most a quarter of shared buffers: with
#	shared buffers of 128 blocks (a limit of 32) and an inner table of
#	about 20 blocks, a join that holds the table (an open cursor's) leaves
#	the next one the rest of the limit, and that one fetches its other
#	blocks without keeping them and is still right; the held count comes
#	back when the cursor closes, and when a join fails inside a
#	subtransaction (not only at the transaction's end).  The outer table's
#	blocks are held too, after the inner table's, up to the same limit.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('pins', conf => "shared_buffers = 1MB\n");
dax_tablespace($node, 'pins');
$node->safe_psql('postgres', q{
CREATE TABLE pin_inner AS
SELECT g AS id, repeat('p', 80) || g AS w FROM generate_series(1, 1500) g;
CREATE TABLE pin_outer AS
SELECT g AS id, (g * 7) % 1500 + 1 AS k, repeat('q', 20) || g AS v
FROM generate_series(1, 15000) g;
ANALYZE pin_inner;
ANALYZE pin_outer;
});

# blocks($table): the table's size in blocks
sub blocks
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT pg_relation_size('$table') / current_setting('block_size')::int");
}

my $blocks = blocks('pin_inner');
my $limit = $node->safe_psql('postgres',
	"SELECT setting::int / 4 FROM pg_settings WHERE name = 'shared_buffers'");
ok($blocks > $limit / 2 && $blocks <= $limit,
	"the inner table ($blocks blocks) fits the limit ($limit) once, not twice");

my $query = 'SELECT count(*), sum(length(v)), sum(length(w)) FROM pin_outer o JOIN pin_inner i ON o.k = i.id';
my $expected = $node->safe_psql('postgres', "SET braidsort.join_mode = off; $query");
my $set = q{SET braidsort.force = on; SET braidsort.join_mode = grace;
SET work_mem = '64kB'; SET enable_mergejoin = off;};

# pinned_blocks($sql_before): EXPLAIN ANALYZE of the join in one session
# (after $sql_before): its inner side's pinned blocks and its result
sub pinned_blocks
{
	my ($before) = @_;
	my $plan = $node->safe_psql('postgres',
		"$set $before EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query");
	like($plan, qr/Custom Scan \(BraidJoin\)/, 'a BraidJoin');
	my ($pinned) = $plan =~ /Inner Pinned Blocks: (\d+)/;
	return $pinned // -1;
}

is(pinned_blocks(''), $blocks, 'alone, a join keeps every block of the inner table pinned');

# a cursor's join holds the table: the next join gets what is left
my $app = 'pins_cursor';
my $s = start_psql($node, "SET application_name = $app; $set "
	  . "BEGIN; DECLARE c CURSOR FOR SELECT o.v, i.w FROM pin_outer o JOIN pin_inner i ON o.k = i.id; "
	  . "FETCH 1 FROM c; SELECT pg_sleep(300);");
my $pid = poll_query($node,
	"SELECT pid FROM pg_stat_activity WHERE application_name = '$app' "
	  . "AND wait_event = 'PgSleep'");
isnt($pid, '', 'the cursor has fetched its first row');
is(pinned_blocks(''), $limit - $blocks,
	'beside it, a join keeps only the rest of the limit pinned');
is($node->safe_psql('postgres', "$set $query"), $expected,
	'that join, fetching its other blocks as a larger table does, is right');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$s->{h}->finish;
is(pinned_blocks(''), $blocks, 'once the cursor is gone, its count is back');

# a join that fails inside a subtransaction gives its count back with it
my $failing = 'SELECT sum(length(w) / (o.id - 7000)) FROM pin_outer o JOIN pin_inner i ON o.k = i.id';
like($node->safe_psql('postgres', "$set EXPLAIN (COSTS OFF) $failing"),
	qr/Custom Scan \(BraidJoin\)/, 'the failing join is a BraidJoin');
my ($ret, $out, $err) = $node->psql('postgres', "$set BEGIN; SAVEPOINT s; $failing;
ROLLBACK TO SAVEPOINT s;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query;
COMMIT;", on_error_stop => 0);
like($err, qr/division by zero/, 'the join fails in the subtransaction');
my ($after) = $out =~ /Inner Pinned Blocks: (\d+)/;
is($after // -1, $blocks,
	'in the same transaction, the next join gets the whole limit again');
is(pinned_blocks(''), $blocks, 'and so does one in the next transaction');

# the outer table's blocks are held too, after the inner's, within the same
# limit: with several partitions (a table of 64kB), an inner table within
# the limit and an outer one of up to half of shared buffers, the inner
# table is held whole and the outer one up to the limit; the outer rows of
# the other blocks are fetched as a larger table's are
$node->safe_psql('postgres', q{
CREATE TABLE pin_inner2 AS
SELECT g AS id FROM generate_series(1, 3500) g;
CREATE TABLE pin_outer2 AS
SELECT g AS id, (g * 7) % 3500 + 1 AS k FROM generate_series(1, 10000) g;
ANALYZE pin_inner2;
ANALYZE pin_outer2;
});
my $inner2 = blocks('pin_inner2');
my $outer2 = blocks('pin_outer2');
ok($inner2 < $limit && $outer2 > $limit && $outer2 <= 2 * $limit,
	"the inner table ($inner2 blocks) fits the limit, the outer ($outer2) half of shared buffers only");
my $query2 = 'SELECT count(*), sum(o.id), sum(i.id) FROM pin_outer2 o JOIN pin_inner2 i ON o.k = i.id';
my $set2 = "$set SET hash_mem_multiplier = 1;";
my $plan2 = $node->safe_psql('postgres',
	"$set2 EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query2");
my ($parts2) = $plan2 =~ /Partitions: (\d+)/;
ok(($parts2 // 0) > 1, 'the join has several partitions');
my ($held_in) = $plan2 =~ /Inner Pinned Blocks: (\d+)/;
my ($held_out) = $plan2 =~ /Outer Pinned Blocks: (\d+)/;
is($held_in // -1, $inner2, 'the inner table is held whole');
is($held_out // -1, $limit - $inner2, 'the outer table up to the limit');
is($node->safe_psql('postgres', "$set2 $query2"),
	$node->safe_psql('postgres', "SET braidsort.join_mode = off; $query2"),
	'the join, fetching outer rows from held and other blocks, is right');
my $failing2 = 'SELECT sum(i.id / (o.id - 5000)) FROM pin_outer2 o JOIN pin_inner2 i ON o.k = i.id';
like($node->safe_psql('postgres', "$set2 EXPLAIN (COSTS OFF) $failing2"),
	qr/Custom Scan \(BraidJoin\)/, 'that failing join is a BraidJoin');
($ret, $out, $err) = $node->psql('postgres', "$set2 BEGIN; SAVEPOINT s; $failing2;
ROLLBACK TO SAVEPOINT s;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query2;
COMMIT;", on_error_stop => 0);
like($err, qr/division by zero/, 'a join holding both sides fails in a subtransaction');
my ($after_out) = $out =~ /Outer Pinned Blocks: (\d+)/;
is($after_out // -1, $limit - $inner2, 'both sides\' counts came back');

# unforced, auto leaves a join to PostgreSQL when its inner table is larger
# than half of shared buffers: every match would fetch an inner row by TID
# from a table the buffers do not hold (what the model was not fitted on)
my $big = blocks('pin_outer');
ok($big > 2 * $limit, "pin_outer ($big blocks) is larger than half of shared buffers");
($ret, $out, $err) = $node->psql('postgres',
	"SET work_mem = '64kB'; SET enable_mergejoin = off; SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pin_outer o JOIN pin_outer x ON o.k = x.id;");
like($err, qr/Hash Join left to PostgreSQL: its inner table is larger than half of shared buffers/,
	'auto declines a join whose inner table the buffers cannot hold');
like($out, qr/Hash Join/, 'and PostgreSQL\'s hash join runs it');
like($node->safe_psql('postgres', "SET braidsort.force = on; SET work_mem = '64kB'; SET enable_mergejoin = off; EXPLAIN (COSTS OFF) SELECT count(*) FROM pin_outer o JOIN pin_outer x ON o.k = x.id"),
	qr/Custom Scan \(BraidJoin\)/, 'braidsort.force takes it');

# unforced, an outer table larger than half of shared buffers: the pages
# each round reads back through the buffer manager are costed (the join is
# taken here, two partitions, one round), but beyond effective_cache_size
# (perhaps from disk) the join is left to PostgreSQL
$node->safe_psql('postgres', q{
CREATE TABLE pin_mid AS SELECT g AS id, g % 7 AS c FROM generate_series(1, 10000) g;
ANALYZE pin_mid;
});
my $mid = blocks('pin_mid');
ok($mid <= $limit * 2 && $big > $limit * 2,
	"pin_mid ($mid blocks) fits half of shared buffers, pin_outer ($big) does not");
my $uncached = q{SET work_mem = '64kB'; SET enable_mergejoin = off; SET enable_nestloop = off;
SET max_parallel_workers_per_gather = 0; SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT count(*), sum(length(o.v)) FROM pin_outer o JOIN pin_mid m ON o.id = m.id};
($ret, $out, $err) = $node->psql('postgres', $uncached);
like($out, qr/Custom Scan \(BraidJoin\)(?s:.*)Partitions: 2/,
	'a join fetching outer rows back from an uncached table is taken');
($ret, $out, $err) = $node->psql('postgres', "SET effective_cache_size = '8kB'; $uncached");
like($err, qr/Hash Join left to PostgreSQL: its outer table is larger than effective_cache_size/,
	'beyond effective_cache_size it is left to PostgreSQL');
like($out, qr/Hash Join/, 'and PostgreSQL\'s hash join runs it');
# under a Gather (each worker's own hash table over its share of the outer
# rows), fetching the outer rows back from that table is not measured:
# left to PostgreSQL, unless forced
my $parallel = q{SET work_mem = '64kB'; SET enable_mergejoin = off; SET enable_nestloop = off;
SET max_parallel_workers_per_gather = 2; SET enable_parallel_hash = off;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT count(*), sum(length(o.v)) FROM pin_outer o JOIN pin_mid m ON o.id = m.id};
($ret, $out, $err) = $node->psql('postgres', $parallel);
like($out, qr/Gather(?s:.*)Hash Join(?s:.*)Parallel Seq Scan on pin_outer/,
	'under a Gather, the join\'s outer input is a parallel scan');
like($err, qr/Hash Join left to PostgreSQL: its outer table is larger than half of shared buffers, and the outer rows of written partitions would be fetched back by TID in parallel workers/,
	'and fetching its rows back in parallel workers is declined');
($ret, $out, $err) = $node->psql('postgres', "SET braidsort.force = on; $parallel");
like($out, qr/Gather(?s:.*)Custom Scan \(BraidJoin\)/, 'braidsort.force takes it');
is($node->safe_psql('postgres', $parallel =~ s/SET client_min_messages = debug1;\s+EXPLAIN \(COSTS OFF\)/SET braidsort.force = on;/r),
	$node->safe_psql('postgres', q{SET braidsort.join_mode = off; SET enable_mergejoin = off;
SELECT count(*), sum(length(o.v)) FROM pin_outer o JOIN pin_mid m ON o.id = m.id}),
	'and the forced join in parallel workers is right');
# a Parallel Hash over tables shared buffers hold: the inner table's 30
# blocks fit the quarter of shared buffers all joins may hold (32), but
# not 3 times over, once for each process that would read it whole; left
# to PostgreSQL unless forced
$node->safe_psql('postgres', q{
CREATE TABLE pin_o2 AS SELECT g AS id, g % 5 AS c FROM generate_series(1, 12000) g;
CREATE TABLE pin_i3 AS SELECT g AS id, repeat('r', 250) AS w FROM generate_series(1, 800) g;
ANALYZE pin_o2;
ANALYZE pin_i3;
});
my $i3 = blocks('pin_i3');
ok($i3 <= $limit && 3 * $i3 > $limit,
	"pin_i3 ($i3 blocks) fits the quarter of shared buffers ($limit) once, not 3 times");
my $shared = q{SET work_mem = '64kB'; SET hash_mem_multiplier = 1; SET enable_mergejoin = off;
SET enable_nestloop = off; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT count(*), sum(length(i.w)) FROM pin_o2 o JOIN pin_i3 i ON o.id = i.id};
($ret, $out, $err) = $node->psql('postgres', $shared);
like($out, qr/Parallel Hash Join(?s:.*)Parallel Hash\n(?s:.*)Parallel Seq Scan on pin_i3/,
	'PostgreSQL plans a Parallel Hash over pin_i3');
like($err, qr/Parallel Hash Join left to PostgreSQL: each of its 3 processes would hold the inner table's $i3 blocks, more than a quarter of shared buffers together/,
	'whose inner table the processes could not all hold is left to PostgreSQL');
my $forced = $shared =~ s/EXPLAIN \(COSTS OFF\)/EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)/r;
($ret, $out, $err) = $node->psql('postgres', "SET braidsort.force = on; $forced");
like($out, qr/Workers Launched: [12](?s:.*)Custom Scan \(BraidJoin\)(?s:.*)Seq Scan on pin_i3/,
	'braidsort.force takes it in parallel workers, the inner table read whole');
unlike($out, qr/Parallel Seq Scan on pin_i3/, 'no process reads a share of the inner table');
is($node->safe_psql('postgres', $shared =~ s/SET client_min_messages = debug1;\s+EXPLAIN \(COSTS OFF\)/SET braidsort.force = on;/r),
	$node->safe_psql('postgres', q{SET braidsort.join_mode = off;
SELECT count(*), sum(length(i.w)) FROM pin_o2 o JOIN pin_i3 i ON o.id = i.id}),
	'and the join is right');
is($node->safe_psql('postgres', q{SET work_mem = '64kB'; SET enable_mergejoin = off;
SET enable_nestloop = off; SET max_parallel_workers_per_gather = 0;
SELECT count(*), sum(length(o.v)) FROM pin_outer o JOIN pin_mid m ON o.id = m.id}),
	$node->safe_psql('postgres', q{SET braidsort.join_mode = off; SET enable_mergejoin = off;
SELECT count(*), sum(length(o.v)) FROM pin_outer o JOIN pin_mid m ON o.id = m.id}),
	'and the uncached join taken is right');
# the charge reaches the plan: a temporary copy (local buffers, counted as
# held) plans the same join but for the pages a round reads back, one
# round over pin_outer's blocks at 3.2 us each (braidsort.join_modes())
my $charge = $node->safe_psql('postgres', q{
CREATE TEMP TABLE pin_outer_t AS SELECT * FROM pin_outer;
ANALYZE pin_outer_t;
SET work_mem = '64kB'; SET enable_mergejoin = off; SET enable_nestloop = off;
SET max_parallel_workers_per_gather = 0; SET braidsort.force = on;
SELECT (SELECT compared_ms FROM braidsort.join_modes('SELECT count(*) FROM pin_outer o JOIN pin_mid m ON o.id = m.id') WHERE chosen AND partitions = 2)
     - (SELECT compared_ms FROM braidsort.join_modes('SELECT count(*) FROM pin_outer_t o JOIN pin_mid m ON o.id = m.id') WHERE chosen AND partitions = 2)});
ok(abs($charge - $big * 0.0032) < 0.001,
	"one round's reads of the uncached outer table charged ($charge ms for $big pages)");
$node->stop;

# a round reads such a table back through a ring of buffers, as a scan of
# it does, so that it does not push everything else out of shared buffers:
# with 512 of them, a table of 45 blocks read just before the join stays
# (a read of the outer table's blocks without the ring evicts it)
my $ring = braid_node('ring', conf => "shared_buffers = 4MB\nautovacuum = off\n");
dax_tablespace($ring, 'ring');
$ring->safe_psql('postgres', q{
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
CREATE TABLE ring_outer AS
SELECT g AS id, g % 10000 + 1 AS k, repeat('q', 100) || g AS v FROM generate_series(1, 80000) g;
CREATE TABLE ring_inner AS SELECT g AS id, g % 7 AS c FROM generate_series(1, 10000) g;
CREATE TABLE ring_hot AS SELECT g AS id, g % 7 AS c FROM generate_series(1, 10000) g;
ANALYZE ring_outer, ring_inner, ring_hot;
});
my ($outer_blocks, $hot_blocks) = split /\|/, $ring->safe_psql('postgres',
	"SELECT pg_relation_size('ring_outer') / 8192, pg_relation_size('ring_hot') / 8192");
ok($outer_blocks > 256, "ring_outer ($outer_blocks blocks) is larger than half of shared buffers");
my $ring_set = q{SET work_mem = '64kB'; SET enable_mergejoin = off; SET enable_nestloop = off;
SET max_parallel_workers_per_gather = 0; SET braidsort.force = on;
SET braidsort.join_mode = grace;};
my $ring_query = 'SELECT count(*), sum(length(o.v)) FROM ring_outer o JOIN ring_inner i ON o.k = i.id';
like($ring->safe_psql('postgres', "$ring_set EXPLAIN (COSTS OFF) $ring_query"),
	qr/Custom Scan \(BraidJoin\)(?s:.*)Partitions: [2-9]/,
	'that join is a BraidJoin writing partitions');
my $ring_expected = $ring->safe_psql('postgres', "SET braidsort.join_mode = off; $ring_query");
$ring->restart;
my $survived = $ring->safe_psql('postgres', qq{
SELECT count(*) FROM ring_hot;
$ring_set
$ring_query;
SELECT count(*) FROM pg_buffercache
WHERE relfilenode = pg_relation_filenode('ring_hot') AND reldatabase =
	(SELECT oid FROM pg_database WHERE datname = current_database())});
my @lines = split /\n/, $survived;
is($lines[1], $ring_expected, 'the join through the ring is right');
my ($cached) = $survived =~ /(\d+)$/;
ok(defined $cached && $cached == $hot_blocks,
	"a table read before the join stays in shared buffers ("
	  . ($cached // '?') . " of its $hot_blocks blocks)");
$ring->stop;
done_testing();
