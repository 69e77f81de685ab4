# 010_wlimit_cancel.pl
#	Write-limited sorts cancelled or terminated while they make selection
#	passes (segment, lazy), while lazy writes its entry log, and while
#	hybrid merges its memory run with its runs on the device: no spill
#	file is left in the tablespace, the session (after a cancel) or the
#	server (after a termination) goes on, and a sort run to the end
#	afterwards is right.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('wlimit');
my $dir = dax_tablespace($node, 'wlimit');
sort_table($node, 't', 400000);

my $query = 'SELECT count(*), sum(length(v)) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);
# a small budget: many selection passes, each rescanning the table
my $base = q{SET braidsort.force = on; SET braidsort.work_mem = 128;
SET braidsort.spill_tablespace = dax;};

# the cases: settings, and what to wait for before the signal (an SQL
# condition on the sort's braidsort.progress row; "files" also waits for a
# spill file of the sort to exist)
my @cases = (
	[ 'segment', 'SET braidsort.sort_mode = segment; SET braidsort.write_intensity = 0;',
		"phase = 'selecting'", 0 ],
	[ 'lazy', 'SET braidsort.sort_mode = lazy; SET braidsort.write_intensity = 0;',
		"phase = 'selecting'", 0 ],
	# lazy writing its entry log: slow emulated writes so that it lasts
	[ 'lazy-materializing',
		'SET braidsort.sort_mode = lazy; SET braidsort.write_intensity = 0.8; '
		  . 'SET braidsort.emulate_write_ns = 20000;',
		"phase = 'selecting'", 1 ],
	[ 'hybrid',
		'SET braidsort.sort_mode = hybrid; SET braidsort.emulate_read_ns = 5000;',
		"phase IN ('merging', 'gathering')", 1 ],
);

# the sort really runs in each mode, with selection passes where expected
foreach my $case (@cases)
{
	my ($name, $set) = @$case;
	next if $name eq 'lazy-materializing';
	my $plan = $node->safe_psql('postgres',
		"$base $set EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
		  . 'SELECT * FROM t WHERE id <= 100000 ORDER BY k');
	my ($mode) = $name =~ /^(\w+)/;
	like($plan, qr/Sort Method: braid $mode/, "$name: the sort runs as $mode");
	like($plan, qr/Selection Passes: [1-9]/, "$name: with selection passes")
	  unless $mode eq 'hybrid';
}

foreach my $case (@cases)
{
	my ($name, $set, $when, $files) = @$case;

	foreach my $signal ('cancel', 'terminate')
	{
		my $app = "$name-$signal";
		my $s = signal_statement($node, $dir, $app, $signal, "$base $set", $query, sub {
			my ($pid) = @_;

			statement_reached($node, $dir, $pid,
				"SELECT 1 FROM braidsort.progress WHERE pid = $pid AND $when",
				"$app: the sort reached the phase ($when)",
				$files ? "$app: the sort has spill files" : undef);
		});
		like($s->{err},
			$signal eq 'cancel' ? qr/canceling statement due to user request/
			: qr/terminating connection due to administrator command/,
			$signal eq 'cancel' ? "$app: the sort was cancelled" : "$app: the backend was terminated");
		is($node->safe_psql('postgres',
				"SELECT count(*) FROM braidsort.scheduler WHERE readers + writers > 0"),
			'0', "$app: the device's gate is free");
	}

	# the same sort to the end, in a new session
	is($node->safe_psql('postgres', "$base $set $query"), $expected,
		"$name: the sort runs to the end afterwards, right");
	is(count_spill_files($dir), 0, "$name: and leaves no file");
}

my $log = slurp_file($node->logfile);
unlike($log, qr/buffer refcount leak|resource was not closed|temporary file leak|PANIC|server process .* was terminated by signal/,
	'no leaks reported, no crash');

$node->stop;
done_testing();
