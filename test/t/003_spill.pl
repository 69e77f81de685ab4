# 003_spill.pl
#	MergePass spill files: they live on the chosen tablespace while a sort
#	runs and are gone after it ends, after a cancel, after an error, after
#	a backend crash; a full spill device (filled by one session, or by two
#	at once), or one whose directory is gone, gives a clear error and
#	leaves nothing behind; a device too full to profile says so.
#
#	BRAID_TEST_DAX (a tmpfs standing in for a DAX mount) and
#	BRAID_TEST_TINY_DAX (a tmpfs of a couple of megabytes) are mounted by
#	scripts/test.sh; without them plain directories are used and the full
#	device test is skipped.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use File::Path ();
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('spill', extension => 0, conf => qq{
restart_after_crash = on
remove_temp_files_after_crash = on
});
my $dax = dax_tablespace($node, 'spill');
sort_table($node, 't', 300000);

# MergePass: with the slow emulated writes below, sort_mode = auto would
# pick a write-limited mode that writes (almost) nothing
my $setup = q{SET braidsort.force = on; SET braidsort.work_mem = 1024;
SET braidsort.spill_tablespace = dax; SET braidsort.sort_mode = mergepass;};
my $slow = q{SET braidsort.emulate_write_ns = 20000; SET braidsort.emulate_read_ns = 20000;};
my $query = 'SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);

# a normal run: right result, files gone afterwards
is($node->safe_psql('postgres', "$setup $query"), $expected, 'mergepass result');
like($node->safe_psql('postgres', "$setup EXPLAIN (ANALYZE, COSTS OFF) $query"),
	qr/Sort Method: braid (?:mergepass|hybrid)/, 'plan spills');
is(count_spill_files($dax), 0, 'no spill files after the sort');

# start a slow sort in the background, wait until its files appear
sub start_slow_sort
{
	my $s = start_psql($node, "$setup $slow SET application_name = 'slowsort'; $query");
	my $seen = wait_for(sub { count_spill_files($dax) > 0 }, interval => 0.05);
	return ($s, $seen);
}

# files exist on the tablespace during the sort, and are removed at its end
{
	my ($s, $seen) = start_slow_sort();
	ok($seen, 'spill files exist on the spill tablespace during the sort');
	$s->{h}->finish;
	is($s->{out}, "$expected\n", 'slow sort result');
	is(count_spill_files($dax), 0, 'spill files removed when the sort ends');
}

# cancel
{
	my ($s, $seen) = start_slow_sort();
	ok($seen, 'spill files present before the cancel');
	$node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'slowsort'");
	$s->{h}->finish;
	like($s->{err}, qr/canceling statement due to user request/, 'sort cancelled');
	is(count_spill_files($dax), 0, 'spill files removed after a cancel');
}

# an error in the middle of the build, after runs were written
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"$setup SELECT count(*) FROM (SELECT * FROM t ORDER BY k, 1 / (id - 250000) OFFSET 0) s");
	like($stderr, qr/division by zero/, 'error during the build');
	is(count_spill_files($dax), 0, 'spill files removed after an error');
}

# the error inside a subtransaction: the session goes on
is($node->safe_psql('postgres', qq{$setup
DO \$\$ BEGIN PERFORM count(*) FROM (SELECT * FROM t ORDER BY k, 1 / (id - 250000) OFFSET 0) s;
EXCEPTION WHEN division_by_zero THEN NULL; END \$\$;
SELECT count(*) FROM pg_ls_tmpdir((SELECT oid FROM pg_tablespace WHERE spcname = 'dax'));
$query}), "0\n$expected", 'subtransaction abort removes its files; next sort is right');

# a crashed backend: the server's restart removes what it left
{
	my ($s, $seen) = start_slow_sort();
	ok($seen, 'spill files present before the crash');
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'slowsort'");
	kill 'KILL', $pid;
	$s->{h}->finish;
	$node->poll_query_until('postgres', 'SELECT 1', '1');
	is(count_spill_files($dax), 0, 'spill files of a crashed backend removed at restart');
}

# a full device
SKIP:
{
	skip 'BRAID_TEST_TINY_DAX not set (scripts/test.sh mounts a tiny tmpfs)', 13
	  unless $ENV{BRAID_TEST_TINY_DAX};
	my $tiny = $ENV{BRAID_TEST_TINY_DAX};
	$node->safe_psql('postgres', "CREATE TABLESPACE tiny LOCATION '$tiny'");
	my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET braidsort.force = on; SET braidsort.work_mem = 1024;
SET braidsort.spill_tablespace = tiny; $query});
	isnt($ret, 0, 'sort on a full device fails');
	like($stderr, qr/ERROR:  could not write braidsort spill file .*No space left on device/,
		'full device: could not write ... No space left on device');
	like($stderr, qr/HINT:  The spill device is full/, 'full device: hint');
	my @left = glob("$tiny/PG_*/pgsql_tmp/*");
	is(scalar(@left), 0, 'full device: nothing left behind');

	# two sessions spilling to the device at once: the one that finds it
	# full fails with the same error, the other's result (if it fits, or
	# its error too) is not touched, and neither leaves a file behind
	my @two = map {
		start_psql($node, qq{SET braidsort.force = on; SET braidsort.work_mem = 1024;
SET braidsort.spill_tablespace = tiny; $query})
	} 1 .. 2;
	$_->{h}->finish foreach @two;
	my $full = grep { $_->{err} =~ /could not write braidsort spill file .*No space left on device/ } @two;
	cmp_ok($full, '>=', 1, 'two sessions on a full device: the device fills up');
	ok(!grep({ $_->{err} ne '' && $_->{err} !~ /No space left on device/ } @two),
		'two sessions on a full device: no other error')
	  or diag(join("\n", map { $_->{err} } @two));
	ok(!grep({ $_->{out} ne '' && $_->{out} ne "$expected\n" } @two),
		'two sessions on a full device: a result that came is right');
	@left = glob("$tiny/PG_*/pgsql_tmp/*");
	is(scalar(@left), 0, 'two sessions on a full device: nothing left behind');

	# unforced, the planner leaves a sort the device has no room for to
	# PostgreSQL's sort, whose files go where temp_tablespaces says
	my $auto = q{SET client_min_messages = debug1; SET braidsort.work_mem = 2048;};
	my $plain = 'EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY k';
	like($node->safe_psql('postgres', "$auto SET braidsort.spill_tablespace = dax; $plain"),
		qr/Custom Scan \(BraidSort\)/, 'room on the device: the sort is taken');
	($ret, $stdout, $stderr) = $node->psql('postgres',
		"$auto SET braidsort.spill_tablespace = tiny; $plain");
	unlike($stdout, qr/BraidSort/, 'no room: left to PostgreSQL');
	like($stderr, qr/the spill device has \d+ MB free, and the sort may write \d+ MB to it/,
		'no room: the decline says why');

	# a device with less free than the smallest profile cannot be profiled:
	# said plainly, not as a size_mb to choose
	($ret, $stdout, $stderr) = $node->psql('postgres',
		"CREATE EXTENSION IF NOT EXISTS braidsort; SELECT * FROM braidsort.profile_device('tiny', 16, 1)");
	like($stderr, qr/ERROR:  cannot profile tablespace "tiny": its device has \d+ MB free\nDETAIL:  A profile needs a scratch file of at least 16 MB/,
		'a device with less than 16 MB free: cannot be profiled, and why');
	unlike($stderr, qr/smaller size_mb/, 'not asked for a smaller size_mb');
}

# a spill tablespace whose directory is gone (a tmpfs emptied by a reboot):
# the error says what to do, and nothing is created in its place
{
	my $gone = PostgreSQL::Test::Utils::tempdir();
	$node->safe_psql('postgres', "CREATE TABLESPACE gone LOCATION '$gone'");
	my ($version) = glob("$gone/PG_*");
	File::Path::rmtree($version);
	my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET braidsort.force = on; SET braidsort.work_mem = 1024;
SET braidsort.spill_tablespace = gone; $query});
	isnt($ret, 0, 'missing tablespace directory: the sort fails');
	like($stderr, qr/ERROR:  could not create directory .*pgsql_tmp.*: No such file or directory/,
		'missing tablespace directory: the error');
	like($stderr, qr/HINT:  The directory of tablespace "gone" is missing/,
		'missing tablespace directory: the hint');
	ok(!-e $version, 'missing tablespace directory: not recreated');
	File::Path::make_path($version);
	$node->safe_psql('postgres', 'DROP TABLESPACE gone');
}

# a terminated backend (a FATAL exit) while helpers make runs or merge ahead:
# they are stopped before its files go, and nothing crashes
{
	# shared buffers large enough for the gather to share batches with helpers
	$node->append_conf('postgresql.conf', 'shared_buffers = 1GB');
	$node->restart;
	my $started = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	my $log_from = log_position($node);
	my $ahead = q{SET braidsort.force = on; SET braidsort.work_mem = 4096;
SET braidsort.sort_threads = 2; SET braidsort.spill_tablespace = dax;};
	# a OnePass sort first, whose gather registers its exit callback before
	# the spill files' (callbacks run in reverse: the files' first); then
	# a longer MergePass sort, terminated in every phase
	sort_table($node, 'big', 1200000);
	my $onepass = q{SET braidsort.force = on;
SELECT count(*) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s;};
	my $bigquery = 'SELECT count(*), sum(id) FROM (SELECT * FROM big ORDER BY k OFFSET 0) s';
	my $bigexpected = reference_result($node, $bigquery);
	like($node->safe_psql('postgres', "$ahead EXPLAIN (ANALYZE, COSTS OFF) $bigquery"),
		qr/Rows Merged Ahead: [1-9]/, 'the sort merges ahead');
	foreach my $ms (150, 250, 300, 350, 400, 450, 500, 550, 600, 650)
	{
		my $s = start_psql($node, "SET application_name = 'victim'; $onepass $ahead $bigquery");
		usleep($ms * 1000);
		$node->safe_psql('postgres',
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'victim'");
		$s->{h}->finish;
		my $how = $s->{err} =~ /terminating connection/ ? 'terminated'
		  : $s->{out} eq "300000\n$bigexpected\n" ? 'finished, right' : "wrong: $s->{out} $s->{err}";
		like($how, qr/^(terminated|finished, right)$/, "terminate after ${ms}ms: $how");
		is(count_spill_files($dax), 0, "terminated after ${ms}ms: no spill files left");
	}
	is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $started,
		'no terminated backend crashed the server');
	unlike(log_since($node, $log_from), qr/terminated by signal/,
		'no backend died of a signal');
}

$node->stop;
done_testing();
