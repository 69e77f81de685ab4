# 009_temp_files.pl
#	braidsort's spill files are reported where DBAs look for temporary
#	files: log_temp_files logs each as it goes (at the end of a sort, after
#	an error, at backend exit; a profile's scratch file too), with the bytes
#	written to it; pg_stat_database's temp_files and temp_bytes count them;
#	their traffic is the executor's temporary blocks, so EXPLAIN (ANALYZE,
#	BUFFERS) shows "temp read/written" on the BraidSort node and
#	pg_stat_statements' temp_blks_* include it, parallel workers' too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('tempfiles', preload => 'braidsort, pg_stat_statements',
	conf => "log_temp_files = 0\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
sort_table($node, 't', 300000);

my $setup = q{SET braidsort.force = on; SET braidsort.work_mem = 1024;};
my $query = 'SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);

# the spill files logged since log offset $from: (count, total bytes)
sub logged
{
	my ($from) = @_;
	my $log = log_since($node, $from);
	my ($n, $bytes) = (0, 0);
	while ($log =~ /LOG:  temporary file: path "[^"]*pgsql_tmp\d+\.braid\d+", size (\d+)/g)
	{
		$n++;
		$bytes += $1;
	}
	return ($n, $bytes);
}

# this database's temporary-file statistics, once every other session has
# gone
sub db_temp
{
	wait_for_stats_flush($node);
	my $row = $node->safe_psql('postgres',
		q{SELECT temp_files || ',' || temp_bytes FROM pg_stat_database WHERE datname = 'postgres'});
	return split(/,/, $row);
}

# a spilling sort: every file logged with the bytes written to it, the same
# as the sort's Device Bytes Written, and counted in pg_stat_database (all
# of one run: where the runs after the first are made from half the
# IndexMap by a helper, where one ends depends on timing)
{
	my ($files0, $bytes0) = db_temp();
	my $from = log_position($node);
	my $plan = $node->safe_psql('postgres',
		"$setup EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) $query");
	like($plan, qr/Sort Method: braid (?:mergepass|hybrid)/, 'the sort spills');
	my ($written) = $plan =~ /Device Bytes Written: (\d+)/;
	my ($read) = $plan =~ /Device Bytes Read: (\d+)/;
	my ($node_text) = $plan =~ /(Custom Scan \(BraidSort\).*?)->/s;
	my ($tread, $twritten) = $node_text =~ /Buffers: .*temp read=(\d+) written=(\d+)/;
	ok(defined $twritten, 'EXPLAIN (BUFFERS): temp I/O on the BraidSort node')
	  or diag($plan);
	# a fresh backend: its counts are exact
	is($twritten, int($written / 8192), 'temp written = Device Bytes Written / BLCKSZ');
	is($tread, int($read / 8192), 'temp read = Device Bytes Read / BLCKSZ');
	my ($seq) = $plan =~ /(->  Seq Scan on t.*)/s;
	unlike($seq, qr/temp/, 'the scan below shows none of it');

	my ($n, $bytes) = logged($from);
	cmp_ok($n, '>', 1, "log_temp_files: the spill files are logged ($n)");
	is($bytes, $written, 'log_temp_files: their sizes add up to Device Bytes Written');
	my ($files1, $bytes1) = db_temp();
	is($files1 - $files0, $n, 'pg_stat_database: temp_files counts each file');
	is($bytes1 - $bytes0, $bytes, 'pg_stat_database: temp_bytes counts their bytes');
	is($node->safe_psql('postgres', "$setup $query"), $expected, 'right result');

	# above the threshold only
	$from = log_position($node);
	$node->safe_psql('postgres', "SET log_temp_files = '1GB'; $setup $query");
	($n) = logged($from);
	is($n, 0, 'log_temp_files: smaller files are not logged');
}

# pg_stat_statements: temp blocks of the braidsort query
{
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
	$node->safe_psql('postgres', "$setup $query");
	my $row = $node->safe_psql('postgres', q{
SELECT temp_blks_written, temp_blks_read FROM pg_stat_statements
WHERE query LIKE '%ORDER BY k%' AND query NOT LIKE '%pg_stat_statements%'});
	like($row, qr/^[1-9]\d*\|[1-9]\d*$/, "pg_stat_statements: temp_blks_written and read ($row)");

	# parallel workers' blocks reach the statement too
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
	my $plan = $node->safe_psql('postgres',
		"$setup $parallel_sql EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, VERBOSE) $query");
	like($plan, qr/Workers Launched: [12].*Custom Scan \(BraidSort\).*Worker 0:.*temp read=\d+ written=[1-9]/s,
		'parallel EXPLAIN: a worker shows temp blocks')
	  or diag($plan);
	my ($total) = $plan =~ /Custom Scan \(BraidSort\).*?Buffers: .*?temp read=\d+ written=(\d+)/s;
	# (a worker's braidsort lines may come between its "Worker N:" and its
	# Buffers line; a line starting with Buffers ends the worker's group)
	my @workers = $plan =~
	  /Worker \d+:[^\n]*\n(?:[ ]+(?!Buffers)[^\n]*\n)*?[ ]+Buffers: [^\n]*?temp read=\d+ written=(\d+)/g;
	$node->safe_psql('postgres', "$setup $parallel_sql $query");
	$row = $node->safe_psql('postgres', q{
SELECT temp_blks_written FROM pg_stat_statements
WHERE query LIKE '%ORDER BY k%' AND query NOT LIKE '%EXPLAIN%' AND query NOT LIKE '%pg_stat_statements%'});
	cmp_ok($row, '>', 0, "parallel: pg_stat_statements temp_blks_written ($row)");
	my $sum = 0;
	$sum += $_ foreach @workers;
	ok(defined $total && $sum > 0 && $total >= $sum,
		"parallel: the node total ($total) includes the workers' (@workers)");
}

# an error after runs were written: the files are still reported
{
	my $from = log_position($node);
	my ($ret, $out, $err) = $node->psql('postgres',
		"$setup SELECT count(*) FROM (SELECT * FROM t ORDER BY k, 1 / (id - 250000) OFFSET 0) s");
	like($err, qr/division by zero/, 'error during the build');
	my ($n) = logged($from);
	cmp_ok($n, '>', 0, "error: the spill files are logged ($n)");
}

# a backend terminated during a slow sort: reported at exit
{
	my $from = log_position($node);
	my $s = start_psql($node, "$setup SET braidsort.sort_mode = mergepass;
SET braidsort.emulate_write_ns = 20000; SET braidsort.emulate_read_ns = 20000;
SET application_name = 'victim'; $query");
	my $seen = wait_for(
		sub {
			$node->safe_psql('postgres',
				q{SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE '%.braid%'}) > 0;
		},
		interval => 0.05);
	ok($seen, 'the slow sort has spill files');
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'victim'");
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	$s->{h}->finish;
	like($s->{err}, qr/terminating connection/, 'terminated');
	my $logged = wait_for(
		sub {
			my $n = () = log_since($node, $from) =~
			  /temporary file: path "[^"]*pgsql_tmp$pid\.braid\d+", size \d+/g;
			return $n;
		},
		timeout => 10, interval => 0.1);
	cmp_ok($logged, '>', 0, "exit: the spill files are logged ($logged)");
	is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE '%.braid%'}), '0',
		'exit: and removed');
}

# a profile's scratch file: reported at its full size
{
	my $from = log_position($node);
	$node->safe_psql('postgres',
		"SELECT count(*) FROM braidsort.profile_device(NULL, size_mb => 16, max_threads => 1)");
	my ($n, $bytes) = logged($from);
	is("$n $bytes", '1 ' . 16 * 1024 * 1024, 'profile scratch file: logged at its size');
}

$node->stop;
done_testing();
