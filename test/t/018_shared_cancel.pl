# 018_shared_cancel.pl
#	A shared sort (braidsort.parallel_sort = shared: a Gather over one
#	BraidSort every process builds and one merges) and a shared join
#	(braidsort.parallel_join = shared: a BraidJoin in a Parallel Hash's
#	place, whose processes partition the inner input together and each
#	join every process's partitions) cancelled or terminated at points
#	spread over their run, in the leader or in a worker: the leader's
#	session goes on after a cancel, or after a worker's end, and runs the
#	query again, right; a terminated leader is gone; either way no spill
#	file is left, the workers' published files included, and the server
#	neither restarts nor reports a leak; the workers' files are named for
#	the leader's pid.  The sort by heap TID and from value logs, through
#	runs (a small braidsort.work_mem), and from value logs with every
#	process's share in its IndexMap ("entries": the workers hand their
#	entries over unsorted, the leader sorts them all).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('shared', conf => "max_worker_processes = 8\n");
my $dir = dax_tablespace($node, 'shared');
sort_table($node, 't', 800000);

my $query = 'SELECT count(*), sum(length(v)), md5(string_agg(k::text, \',\')) '
  . 'FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);
my $base = q{SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET braidsort.force = on; SET braidsort.parallel_sort = shared;
SET braidsort.spill_tablespace = dax; SET braidsort.work_mem = 512;};

my $signalled = 0;
my $run = 0;
my %variant = (
	heap_tid => 'SET braidsort.gather_source = heap_tid;',
	value_log => 'SET braidsort.gather_source = value_log;',
	entries =>
	  'SET braidsort.gather_source = value_log; SET braidsort.work_mem = 65536;');

# signal_points($label, $set, $query, $expected, $took): the query
# signalled at three points of its run (taking $took seconds), as the
# header says
sub signal_points
{
	my ($source, $set, $query, $expected, $took) = @_;

	foreach my $at (0.15, 0.45, 0.75)
	{
		foreach my $signal ('cancel', 'terminate', 'worker')
		{
			my $point = sprintf('%s-%02d-%s', $source, $at * 100, $signal);

			# after the statement, the session sleeps (so that the spill
			# files can be counted while it lives), then runs it again
			my $s = start_psql($node, "SET application_name = '$point'", $set,
				$query, 'SELECT pg_sleep(300)', $query);
			my $pid = session_pid($node, $point);
			usleep(int($took * $at * 1_000_000));

			my $target = $pid;
			if ($signal eq 'worker')
			{
				$target = $node->safe_psql('postgres',
					"SELECT pid FROM pg_stat_activity WHERE leader_pid = $pid "
					  . "AND backend_type = 'parallel worker' LIMIT 1");
			}
			my $func = $signal eq 'cancel' ? 'pg_cancel_backend' : 'pg_terminate_backend';
			my $hit = $target ne '' && $node->safe_psql('postgres',
				"SELECT $func($target) FROM pg_stat_activity WHERE pid = $target "
				  . "AND query <> 'SELECT pg_sleep(300)'") eq 't';
			$signalled++ if $hit;
			$run++;

			if ($signal ne 'terminate')
			{
				isnt(poll_query($node,
						"SELECT 1 FROM pg_stat_activity WHERE pid = $pid "
						  . "AND query = 'SELECT pg_sleep(300)' AND wait_event = 'PgSleep'"),
					'', "$point: the session goes on");
				is(wait_for(sub { count_spill_files($dir) == 0 ? 'none' : undef }) // '',
					'none', "$point: no spill file left");
				$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
				$s->{h}->finish;
				my @results = grep { $_ ne '' } split /\n/, $s->{out};
				is($results[-1], $expected, "$point: the same session runs it again, right");
			}
			else
			{
				# (a run quicker than the first may be asleep by now)
				$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
				$s->{h}->finish;
				is(poll_query($node,
						"SELECT 1 FROM pg_stat_activity WHERE pid = $pid "
						  . "OR leader_pid = $pid HAVING count(*) = 0"),
					'1', "$point: the backend and its workers are gone");
				is(wait_for(sub { count_spill_files($dir) == 0 ? 'none' : undef }) // '',
					'none', "$point: no spill file left");
			}
		}
	}
}

foreach my $source ('heap_tid', 'value_log', 'entries')
{
	my $set = "$base $variant{$source}";

	like($node->safe_psql('postgres', "$set EXPLAIN (COSTS OFF) $query"),
		qr/Gather.*\n.*Workers Planned: 2.*\n.*Parallel Custom Scan \(BraidSort\).*\n.*\n\s*Shared Sort:/,
		"$source: a Gather over a shared BraidSort");
	my $explain = $node->safe_psql('postgres',
		"$set EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query");
	like($explain, qr/Processes Merged: [23]/, "$source: the workers' runs or entries are taken");
	if ($source eq 'entries')
	{
		like($explain, qr/^\s*Sort Method: braid onepass$/m,
			'entries: the leader sorts every entry in memory');
		unlike($explain, qr/Runs: [1-9]/, 'entries: no process writes a run');
	}

	# a run to time it, logging the temporary files: the workers' published
	# runs and logs are named for the leader's pid (the background worker's
	# clean-up keeps a file whose process lives), the leader's own are its
	my $from = -s $node->logfile;
	my $t0 = time();
	my ($pid, $result) = split /\n/,
	  $node->safe_psql('postgres', "$set SET log_temp_files = 0; SELECT pg_backend_pid(); $query"), 2;
	my $took = time() - $t0;
	is($result, $expected, "$source: the sort is right");
	my $log = substr(slurp_file($node->logfile), $from);
	my @handed = $log =~ /temporary file: path "[^"]*pgsql_tmp(\d+)\.braid\.p\d+\.[0-9a-f]+\.\d+\.\d+"/g;
	cmp_ok(scalar(@handed), '>', 0, "$source: the workers handed files over");
	is(scalar(grep { $_ != $pid } @handed), 0, "$source: named for the leader's pid ($pid)");
	note sprintf('%s: %.2f s', $source, $took);

	signal_points($source, $set, $query, $expected, $took);
}

# a shared join: a BraidJoin over every process's partitions of the inner
# input, each process partitioning its share
$node->safe_psql('postgres', q{
CREATE TABLE jo AS
SELECT g AS id, (g::bigint * 7919) % 150000 + 1 AS fk, repeat('o', 30) || g AS pad
FROM generate_series(1, 1500000) g;
CREATE TABLE ji AS
SELECT g AS id, repeat('i', 30) || g AS pad FROM generate_series(1, 150000) g;
ANALYZE jo;
ANALYZE ji;
});
my $join = 'SELECT count(*), sum(length(o.pad)), sum(length(i.pad)), sum(o.id::bigint * i.id) '
  . 'FROM jo o JOIN ji i ON o.fk = i.id';
my $join_expected = reference_result($node, $join);
my $join_set = q{SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET enable_mergejoin = off; SET enable_nestloop = off; SET work_mem = '256kB';
SET braidsort.force = on; SET braidsort.parallel_join = shared;
SET braidsort.spill_tablespace = dax;};
like($node->safe_psql('postgres', "$join_set EXPLAIN (COSTS OFF) $join"),
	qr/Parallel Custom Scan \(BraidJoin\)(.*\n)+\s*Shared Inner:(.*\n)+.*Parallel Seq Scan on ji/,
	'join: a shared BraidJoin over a Parallel Seq Scan of the inner table');
{
	my $from = -s $node->logfile;
	my $t0 = time();
	my ($pid, $result) = split /\n/,
	  $node->safe_psql('postgres', "$join_set SET log_temp_files = 0; SELECT pg_backend_pid(); $join"), 2;
	my $took = time() - $t0;
	is($result, $join_expected, 'join: the join is right');
	my $log = substr(slurp_file($node->logfile), $from);
	my @handed = $log =~ /temporary file: path "[^"]*pgsql_tmp(\d+)\.braid\.p\d+\.[0-9a-f]+\.\d+\.\d+"/g;
	cmp_ok(scalar(@handed), '>', 0, 'join: the processes published files');
	is(scalar(grep { $_ != $pid } @handed), 0, "join: named for the leader's pid ($pid)");
	note sprintf('join: %.2f s', $took);
	signal_points('join', $join_set, $join, $join_expected, $took);
}

note "$signalled of $run signals reached a running sort";
cmp_ok($signalled, '>=', $run / 2, 'most signals reached a running sort');

my $log = slurp_file($node->logfile);
unlike($log,
	qr/buffer refcount leak|resource was not closed|temporary file leak|was not closed|PANIC|terminated by signal|reinitializing/,
	'no leaks reported, no crash, no restart');

$node->stop;
done_testing();
