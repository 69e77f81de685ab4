# 011_join_cancel.pl
#	BraidJoins cancelled or terminated in every phase: while the first
#	pass writes the inner and the outer inputs' partitions (slow emulated
#	writes), while later rounds read them back (slow emulated reads), and
#	while hybrid and lazy rescan their inputs, at several moments of each:
#	no spill file is left in the tablespace, the session (after a cancel) or
#	the server (after a termination) goes on without a restart, the
#	device's gate is free, and the join run to the end afterwards is right.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('join');
my $dir = dax_tablespace($node, 'joins');
$node->safe_psql('postgres', q{
CREATE TABLE jbig AS
SELECT g AS id, (g * 7) % 200003 AS k, repeat('x', 60) || g AS v
FROM generate_series(1, 200000) g;
CREATE TABLE jsmall AS
SELECT g AS id, repeat('y', 40) || g AS w FROM generate_series(1, 60000) g;
ANALYZE jbig;
ANALYZE jsmall;
});

my $query = 'SELECT count(*), sum(length(v)), sum(length(w)) FROM jbig JOIN jsmall ON jbig.k = jsmall.id';
my $expected = $node->safe_psql('postgres', "SET braidsort.join_mode = off; $query");
my $base = q{SET braidsort.force = on; SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0; SET enable_mergejoin = off;
SET braidsort.spill_tablespace = dax;};
my $start_pid = $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity WHERE backend_type = \'checkpointer\'');

# the cases: settings, whether to wait for a spill file before the signal,
# and the delays (seconds) after which the signal comes: well within each
# join's time here (grace about 1.3 s with the slow device, hybrid about
# 0.25 s, lazy about 0.3 s)
my @cases = (
	[ 'grace-writing', 'SET braidsort.join_mode = grace; SET braidsort.emulate_write_ns = 20000;',
		1, [ 0, 0.3 ] ],
	[ 'grace-rounds', 'SET braidsort.join_mode = grace; SET braidsort.emulate_read_ns = 20000;',
		1, [ 0.2, 0.8 ] ],
	[ 'hybrid-rescans', 'SET braidsort.join_mode = hybrid; SET braidsort.write_intensity = 0;',
		0, [ 0.02, 0.12 ] ],
	[ 'lazy', 'SET braidsort.join_mode = lazy; SET braidsort.emulate_write_ns = 5000;',
		0, [ 0.03, 0.15 ] ],
);

# every case really runs as a BraidJoin in its mode
foreach my $case (@cases)
{
	my ($name, $set) = @$case;
	my ($mode) = $name =~ /^(\w+)/;
	my $plan = $node->safe_psql('postgres', "$base $set EXPLAIN (COSTS OFF) $query");
	like($plan, qr/Custom Scan \(BraidJoin\)/, "$name: a BraidJoin");
	like($plan, qr/Join Mode: $mode/, "$name: in mode $mode");
}

foreach my $case (@cases)
{
	my ($name, $set, $files, $delays) = @$case;

	foreach my $delay (@$delays)
	{
		foreach my $signal ('cancel', 'terminate')
		{
			my $app = "$name-$delay-$signal";
			$app =~ s/\./_/g;
			my $s = signal_statement($node, $dir, $app, $signal, "$base $set", $query, sub {
				my ($pid) = @_;

				statement_reached($node, $dir, $pid,
					"SELECT 1 FROM pg_stat_activity WHERE pid = $pid AND query LIKE 'SELECT count(*)%'",
					"$app: the join started",
					$files ? "$app: the join has spill files" : undef);
				usleep(int($delay * 1e6));
			});
			like($s->{err}, qr/canceling statement due to user request|terminating connection due to administrator command/,
				"$app: the join was stopped ($signal)");
			is($node->safe_psql('postgres',
					"SELECT count(*) FROM braidsort.scheduler WHERE readers + writers > 0"),
				'0', "$app: the device's gate is free");
		}
	}

	# the same join to the end, in a new session
	is($node->safe_psql('postgres', "$base $set $query"), $expected,
		"$name: the join runs to the end afterwards, right");
	is(count_spill_files($dir), 0, "$name: and leaves no file");
}

is($node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity WHERE backend_type = \'checkpointer\''),
	$start_pid, 'the postmaster never restarted');
my $log = slurp_file($node->logfile);
unlike($log, qr/buffer refcount leak|resource was not closed|temporary file leak|PANIC|server process .* was terminated by signal/,
	'no leaks reported, no crash');

$node->stop;
done_testing();
