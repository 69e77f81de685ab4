# 008_progress.pl
#	braidsort.progress seen from other sessions.  A slow spilling sort
#	shows its phase, the rows read of the planner's estimate and its runs
#	while it runs, and its row is gone once the statement is over (while
#	the session lives on), or once it is cancelled; a parallel sort shows
#	its workers with their leader's pid.  Another role sees only the pid,
#	unless it has pg_read_all_stats; a role sees its own sorts.  A sort
#	waiting for its spill device's I/O gate (held by a device profile)
#	shows the wait.  (The phases in one session are checked by the
#	regression test sql/monitor.sql.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('progress');
dax_tablespace($node, 'progress');
$node->safe_psql('postgres', qq{
CREATE TABLE t AS SELECT (g::int8 * 7919) % 300007 AS k, g AS id FROM generate_series(1, 300000) g;
ANALYZE t;
CREATE ROLE joe LOGIN;
CREATE ROLE watcher LOGIN IN ROLE pg_read_all_stats;
GRANT SELECT ON t TO joe;
});

my $query = 'SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);
# MergePass: it writes runs (under the slow device below sort_mode = auto
# would pick a write-limited mode that writes none)
my $spill = q{SET braidsort.force = on; SET braidsort.work_mem = 1024;
SET braidsort.spill_tablespace = dax; SET braidsort.sort_mode = mergepass;};
# a slow emulated device (superuser settings), so that the sort lasts
my $slow = q{SET braidsort.emulate_write_ns = 100000; SET braidsort.emulate_read_ns = 10000;};

# the planner's row estimate for the sort
my $plan = $node->safe_psql('postgres', "SET braidsort.force = on; EXPLAIN $query");
my ($estimate) = $plan =~ /BraidSort\) on t\s+\(cost=\S+ rows=(\d+)/;
ok($estimate, "the planner estimates $estimate rows");

# start a session running these commands, one after the other (an error
# does not stop it); returns it, with its pid
sub start_session
{
	my ($name, @commands) = @_;
	my $s = start_psql($node, "SET application_name = '$name'", @commands);
	$s->{pid} = session_pid($node, $name);
	die "session $name did not start" if $s->{pid} eq '';
	return $s;
}

# poll a query until it returns something; returns that
sub poll
{
	my ($sql) = @_;
	return poll_query($node, $sql, interval => 0.01);
}

# wait until the session's backend sleeps in pg_sleep (its sort is over)
sub wait_sleeping
{
	my ($s) = @_;
	return poll("SELECT 1 FROM pg_stat_activity WHERE pid = $s->{pid} "
		  . "AND query = 'SELECT pg_sleep(300)' AND wait_event = 'PgSleep'");
}

my $cols = 'phase, rows_read, rows_estimated, runs, coalesce(leader_pid, 0), '
  . 'started <= now(), waiting IS NULL';

# a slow sort as the superuser, then a pause in the same session
my $s = start_session('sorter', "$spill $slow", $query, 'SELECT pg_sleep(300)');
my $row = poll("SELECT $cols FROM braidsort.progress WHERE pid = $s->{pid} AND rows_read > 0");
my ($phase, $read, $est, $runs, $leader, $started, $nowait) = split(/\|/, $row);
like($phase, qr/^(building|writing run)$/, "the sort shows while it builds ($phase)");
ok($read > 0 && $read <= 300000, "rows read so far ($read)");
is($est, $estimate, 'rows_estimated is the planner\'s estimate');
is($leader, '0', 'no leader_pid outside parallel workers');
is($started, 't', 'started is set');
isnt(poll("SELECT runs FROM braidsort.progress WHERE pid = $s->{pid} AND runs > 0"), '',
	'runs written are counted');

# other roles: the pid only, unless they may read all statistics
is($node->safe_psql('postgres', qq{
SELECT count(*) FROM braidsort.progress
WHERE pid = $s->{pid} AND num_nonnulls(leader_pid, node, phase, rows_read, rows_estimated,
	runs, merge_passes, batches_gathered, waiting, started) = 0},
	connstr => $node->connstr('postgres') . ' user=joe'),
	'1', 'another role sees the pid and nothing else');
is($node->safe_psql('postgres', qq{
SELECT count(*) FROM braidsort.progress
WHERE pid = $s->{pid} AND phase IS NOT NULL AND rows_estimated = $estimate},
	connstr => $node->connstr('postgres') . ' user=watcher'),
	'1', 'pg_read_all_stats sees the details');
# a role sees its own sorts (here, from inside one)
is($node->safe_psql('postgres', qq{
SET braidsort.force = on;
SELECT count(*), min(p) FROM (SELECT (SELECT phase FROM braidsort.progress WHERE pid = pg_backend_pid()) p
	FROM (SELECT * FROM t ORDER BY k OFFSET 0) s) x},
	connstr => $node->connstr('postgres') . ' user=joe'),
	'300000|gathering', 'a role sees its own sort');

# once the statement is over the row is gone, the session still there
isnt(wait_sleeping($s), '', 'the sort finished');
is($node->safe_psql('postgres', "SELECT count(*) FROM braidsort.progress WHERE pid = $s->{pid}"),
	'0', 'the row is gone once the statement is over');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
$s->{h}->finish;
like($s->{out}, qr/^\Q$expected\E$/m, 'the sort returned the right rows');

# a cancelled sort leaves no row behind
$s = start_session('cancelled', "$spill $slow", $query, 'SELECT pg_sleep(300)');
isnt(poll("SELECT 1 FROM braidsort.progress WHERE pid = $s->{pid}"), '', 'the sort shows');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
isnt(wait_sleeping($s), '', 'the sort was cancelled');
is($node->safe_psql('postgres', "SELECT count(*) FROM braidsort.progress WHERE pid = $s->{pid}"),
	'0', 'a cancelled sort leaves no row');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
$s->{h}->finish;
like($s->{err}, qr/canceling statement due to user request/, 'it was the sort that was cancelled');

# a parallel sort: the leader's row and its workers', with leader_pid
$s = start_session('parallel', "$spill $slow $parallel_sql", $query, 'SELECT pg_sleep(300)');
my $workers = poll("SELECT count(*) FROM braidsort.progress WHERE leader_pid = $s->{pid} "
	  . "AND rows_estimated < $estimate HAVING count(*) > 0");
ok($workers >= 1, "parallel workers show with their leader's pid ($workers)");
isnt(poll("SELECT 1 FROM braidsort.progress WHERE pid = $s->{pid} AND leader_pid IS NULL"), '',
	'the leader shows too');
isnt(wait_sleeping($s), '', 'the parallel sort finished');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM braidsort.progress WHERE $s->{pid} IN (pid, leader_pid)"),
	'0', 'the rows of the leader and its workers are gone');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
$s->{h}->finish;
like($s->{out}, qr/^\Q$expected\E$/m, 'the parallel sort returned the right rows');

# one sort in the Gather Merge's place: the leader's row alone, for every
# row; cancelled while it builds, it leaves no row
$s = start_session('one', "$spill $slow $parallel_sql SET braidsort.parallel_sort = one;",
	$query, 'SELECT pg_sleep(300)');
isnt(poll("SELECT 1 FROM braidsort.progress WHERE pid = $s->{pid} AND leader_pid IS NULL "
	  . "AND rows_estimated >= $estimate * 0.9 AND rows_read > 0"), '',
	'one sort of every row shows as the leader\'s');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM braidsort.progress WHERE leader_pid = $s->{pid}"),
	'0', 'one sort: no worker sorts');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
isnt(wait_sleeping($s), '', 'one sort was cancelled');
is($node->safe_psql('postgres', "SELECT count(*) FROM braidsort.progress WHERE pid = $s->{pid}"),
	'0', 'one sort cancelled leaves no row');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
$s->{h}->finish;
like($s->{err}, qr/canceling statement due to user request/, 'it was one sort that was cancelled');

# a sort waiting for the device's I/O gate: a profile holds the device
my $prof = start_session('profile', 'SET braidsort.emulate_read_ns = 20',
	"SELECT count(*) FROM braidsort.profile_device('dax', 64, 6)");
isnt(poll("SELECT 1 FROM braidsort.scheduler WHERE tablespace = 'dax' AND profilers > 0"), '',
	'the profile holds the device');
$s = start_session('waiter', $spill, $query, 'SELECT pg_sleep(300)');
is(poll("SELECT waiting || ', ' || phase FROM braidsort.progress "
	  . "WHERE pid = $s->{pid} AND waiting IS NOT NULL"),
	'io gate write, writing run', 'a sort waiting for the gate shows it');
# ... and pg_stat_activity names its wait (17 and later; "Extension" before)
my $gate_event =
  $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000
  ? 'BraidsortDeviceGate' : 'Extension';
is(poll("SELECT wait_event_type || ' ' || wait_event FROM pg_stat_activity "
	  . "WHERE pid = $s->{pid} AND wait_event = '$gate_event'"),
	"Extension $gate_event", "pg_stat_activity shows the wait as $gate_event");
$prof->{h}->finish;
isnt(wait_sleeping($s), '', 'the waiting sort finished after the profile');
is($node->safe_psql('postgres', "SELECT count(*) FROM braidsort.progress"),
	'0', 'no rows are left');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($s->{pid})");
$s->{h}->finish;
like($s->{out}, qr/^\Q$expected\E$/m, 'the waiting sort returned the right rows');

$node->stop;
done_testing();
