# 004_scheduler.pl
#	The "braidsort scheduler" background worker and device profiles: the
#	worker shows in pg_stat_activity, comes back after it is terminated and
#	after a crash, and removes spill files orphaned by dead backends (but
#	not those of live ones); a profile of the tmpfs tablespace returns
#	positive bandwidths, a lambda that rises with write emulation, holds
#	the device alone while it runs (a sort waits for it, and a cancel ends
#	that wait cleanly), and survives a restart; NULL
#	arguments mean their defaults, and bad arguments (a size_mb over the
#	device's free space, no CREATE on the tablespace...) are refused with
#	messages that say what to change.
use strict;
use warnings;
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('sched', conf => "restart_after_crash = on\n");
my $dax = dax_tablespace($node, 'sched');
my $tmpdir = (glob("$dax/PG_*"))[0] . "/pgsql_tmp";
mkdir $tmpdir;

# the worker's pid, waiting up to a minute for one different from $old
sub worker_pid
{
	my ($old) = @_;
	$old //= 0;
	my $pid = wait_for(
		sub {
			# psql, not safe_psql: the server may be restarting after a crash
			my ($ret, $pid) = $node->psql('postgres',
				"SELECT pid FROM pg_stat_activity WHERE backend_type = 'braidsort scheduler'");
			return $ret == 0 && $pid ne '' && $pid != $old ? $pid : undef;
		},
		interval => 0.1);
	return $pid // '';
}

# a pid that no process has: one past the largest pid in use, scanning up
sub dead_pid
{
	my $pid = 4_000_000;
	$pid-- while kill(0, $pid) || $!{EPERM};
	return $pid;
}

my $pid = worker_pid();
like($pid, qr/^\d+$/, 'the braidsort scheduler worker is in pg_stat_activity');

# orphans planted before start are gone after it
$node->stop;
my $dead = dead_pid();
my $orphan = "$tmpdir/pgsql_tmp$dead.braid7";
open(my $fh, '>', $orphan) or die; print $fh 'x' x 4096; close $fh;
$node->start;
$pid = worker_pid();
ok(!-e $orphan, 'an orphan planted before start is removed');

# orphans of dead backends found by a (re)started worker are removed; the
# files of a live backend are kept
my $orphan2 = "$tmpdir/pgsql_tmp$dead.braid8";
open($fh, '>', $orphan2) or die; close $fh;
my $live = start_psql($node, "SET application_name = 'live'; SELECT pg_sleep(120)");
my $live_pid = session_pid($node, 'live');
my $kept = "$tmpdir/pgsql_tmp$live_pid.braid9";
open($fh, '>', $kept) or die; close $fh;
my $log_offset = log_position($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
my $pid2 = worker_pid($pid);
isnt($pid2, '', 'the worker comes back after pg_terminate_backend');
ok($node->wait_for_log(qr/braidsort scheduler removed 1 orphaned spill file/, $log_offset),
	'the restarted worker reports the orphan it removed');
ok(!-e $orphan2, 'an orphan of a dead backend is removed');
ok(-e $kept, 'a spill file of a live backend is kept');
is($node->safe_psql('postgres',
	"SELECT value >= 1 FROM braidsort.stats WHERE counter = 'orphan_files_removed'"),
	't', 'braidsort.stats counts removed orphans');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($live_pid)");
$live->{h}->finish;
unlink $kept;

# a crash (SIGKILL) restarts the server and the worker
kill 'KILL', $pid2;
my $pid3 = worker_pid($pid2);
isnt($pid3, '', 'the worker is back after a crash restart');

# device profile on the tmpfs tablespace
my $rows = profiled($node, q{
SELECT count(*), bool_and(mb_per_s > 0), bool_and(ns_per_access > 0),
       count(DISTINCT operation)
FROM braidsort.profile_device('dax', 32, 1)});
is($rows, '9|t|t|5', 'a profile measures five operations with positive bandwidth');
my $lambda0 = $node->safe_psql('postgres',
	"SELECT lambda FROM braidsort.device_summary() WHERE tablespace = 'dax'");
ok($lambda0 > 0, "lambda without emulation ($lambda0)");

profiled($node, q{SET braidsort.emulate_write_ns = 2000;
SELECT count(*) FROM braidsort.profile_device('dax', 16, 1)});
my $lambda1 = $node->safe_psql('postgres',
	"SELECT lambda FROM braidsort.device_summary() WHERE tablespace = 'dax'");
ok($lambda1 > 3 * $lambda0, "lambda rises with write emulation ($lambda0 -> $lambda1)");
is($node->safe_psql('postgres',
	"SELECT asymmetric_cost, braid LIKE '__A__' FROM braidsort.device_summary() WHERE tablespace = 'dax'"),
	't|t', 'the emulated device is write-asymmetric (A)');

# emulated read/write interference shows as BRAID's I
profiled($node, q{SET braidsort.emulate_write_ns = 2000;
SET braidsort.emulate_read_ns = 20; SET braidsort.emulate_interference_ns = 200;
SELECT count(*) FROM braidsort.profile_device('dax', 16, 1)});
is($node->safe_psql('postgres', q{
SELECT interference > 3, read_write_interference, braid LIKE '__AI_'
FROM braidsort.device_summary() WHERE tablespace = 'dax'}),
	't|t|t', 'emulated interference slows reads under writes (I)');
$lambda1 = $node->safe_psql('postgres',
	"SELECT lambda FROM braidsort.device_summary() WHERE tablespace = 'dax'");

# profiles survive a restart
my $before = $node->safe_psql('postgres',
	'SELECT count(*), max(emulate_write_ns), min(taken_at) FROM braidsort.device_profiles');
$node->restart;
is($node->safe_psql('postgres',
	'SELECT count(*), max(emulate_write_ns), min(taken_at) FROM braidsort.device_profiles'),
	$before, 'stored profiles survive a restart');
is($node->safe_psql('postgres',
	"SELECT round(lambda::numeric, 6) = round(${lambda1}::numeric, 6) FROM braidsort.device_summary()"),
	't', 'the summary after restart is the same');

# while a profile runs, other braidsort I/O on the device waits
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT (g * 7919) % 100003 AS k, g AS id FROM generate_series(1, 200000) g;
ANALYZE t;});
my $prof = start_psql($node,
	"SET braidsort.emulate_read_ns = 20; SELECT count(*) FROM braidsort.profile_device('dax', 64, 2)");
my $seen = wait_for(sub {
		$node->safe_psql('postgres',
			"SELECT coalesce(max(profilers), 0) FROM braidsort.scheduler WHERE tablespace = 'dax'");
	});
is($seen, 1, 'the scheduler view shows the running profile');
my $waits0 = $node->safe_psql('postgres',
	"SELECT waits FROM braidsort.scheduler WHERE tablespace = 'dax'");
my $expected = reference_result($node,
	'SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s');
is($node->safe_psql('postgres', q{
SET braidsort.force = on; SET braidsort.work_mem = 1024; SET braidsort.spill_tablespace = dax;
SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s}),
	$expected, 'a sort during a profile returns the right rows');
ok($node->safe_psql('postgres',
	"SELECT waits FROM braidsort.scheduler WHERE tablespace = 'dax'") > $waits0,
	'the sort waited for the profile');
$prof->{h}->finish;
is($node->safe_psql('postgres',
	"SELECT profilers + readers + writers FROM braidsort.scheduler WHERE tablespace = 'dax'"),
	'0', 'nothing holds the gate afterwards');

# a sort cancelled while it waits for the gate (held by a profile) stops
# waiting, gives up its place in the queue and leaves no file behind (the
# profile's 8 thread counts hold the device for several seconds)
$prof = start_psql($node,
	"SET braidsort.emulate_read_ns = 20; SELECT count(*) FROM braidsort.profile_device('dax', 64, 8)");
$seen = wait_for(sub {
		$node->safe_psql('postgres',
			"SELECT coalesce(max(profilers), 0) FROM braidsort.scheduler WHERE tablespace = 'dax'");
	});
is($seen, 1, 'a second profile holds the device');
my $waiter = start_psql($node, q{SET application_name = 'waiter'; SET braidsort.force = on;
SET braidsort.work_mem = 1024; SET braidsort.spill_tablespace = dax;
SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s});
# (until the sort waits, or the profile is over: then this machine was too
# slow for the profile to outlast the sort's start, and the checks of the
# cancelled wait are skipped, not failed)
my $waiting = wait_for(sub {
		$node->safe_psql('postgres', q{
SELECT CASE WHEN sum(waiting_readers + waiting_writers) > 0 THEN 'waiting'
            WHEN sum(profilers) = 0 THEN 'profile over' END
FROM braidsort.scheduler WHERE tablespace = 'dax'});
	});
if (($waiting // '') ne 'waiting')
{
	$waiter->{h}->finish;
	$prof->{h}->finish;
}
SKIP:
{
	skip 'the profile ended before the sort reached the gate', 3
	  unless ($waiting // '') eq 'waiting';
	$node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'waiter'");
	$waiter->{h}->finish;
	like($waiter->{err}, qr/canceling statement due to user request/,
		'a sort cancelled while it waits for the gate');
	diag('the profile ended around the cancel: the sort may have been cancelled after its wait')
	  unless $node->safe_psql('postgres',
		"SELECT profilers FROM braidsort.scheduler WHERE tablespace = 'dax'") eq '1';
	is($node->safe_psql('postgres', q{
SELECT waiting_readers + waiting_writers + readers + writers FROM braidsort.scheduler
WHERE tablespace = 'dax'}), '0', 'the cancelled sort left the queue');
	$prof->{h}->finish;
	is(count_spill_files($dax), 0, 'the cancelled sort left no spill file');
}

# a backend terminated while it holds the gate gives it back
my $victim = start_psql($node, q{SET application_name = 'victim'; SET braidsort.force = on;
SET braidsort.work_mem = 1024; SET braidsort.spill_tablespace = dax;
SET braidsort.sort_mode = mergepass;
SET braidsort.emulate_write_ns = 20000; SET braidsort.emulate_read_ns = 20000;
SELECT count(*) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s});
my $held = wait_for(sub {
		$node->safe_psql('postgres',
			"SELECT coalesce(max(readers + writers), 0) FROM braidsort.scheduler WHERE tablespace = 'dax'");
	});
is($held, 1, 'the slow sort holds the gate');
$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'victim'");
$victim->{h}->finish;
ok($node->poll_query_until('postgres', q{
SELECT readers + writers + writer_threads + waiting_readers + waiting_writers = 0
FROM braidsort.scheduler WHERE tablespace = 'dax'}), 'the terminated backend gave the gate back');
is(count_spill_files($dax), 0, 'and removed its spill files');

# the automatic writer pool of the device follows its profile
# (a profile of the idle device, unemulated: the one above ran beside the
# test's sorts and may not have been stored; so may this one, on a machine
# busy with other work: tried until one is)
profiled($node, q{SELECT count(*) FROM braidsort.profile_device('dax', 16, 2)});
is($node->safe_psql('postgres', q{
SELECT s.write_thread_cap = d.write_threads
FROM braidsort.scheduler s JOIN braidsort.device_summary() d USING (tablespace)}),
	't', 'the write thread cap is the profiled best write thread count');

# bad arguments
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM braidsort.profile_device('nosuch')");
like($err, qr/tablespace "nosuch" does not exist/, 'unknown tablespace');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM braidsort.profile_device('dax', 1)");
like($err, qr/size_mb must be between 16 and 65536/, 'size_mb checked');
($ret, $out, $err) = $node->psql('postgres', q{
CREATE ROLE nobody LOGIN; SET ROLE nobody; SELECT * FROM braidsort.profile_device('dax')});
like($err, qr/permission denied for function profile_device/, 'profiling needs a grant');

# NULL arguments mean their defaults: where braidsort spills, 256 MB, one
# thread per CPU, within braidsort.max_backend_threads (reads under a
# writer need one thread more, so none at the cap).  The scratch file shows
# the size while the profile runs.
my $cpus = `getconf _NPROCESSORS_ONLN`;
chomp $cpus;
$cpus = 32 if $cpus > 32;
my $cap = $node->safe_psql('postgres', 'SHOW braidsort.max_backend_threads');
$cpus = $cap if $cpus > $cap;
my $profile_rows = 9 * $cpus - ($cpus + 1 > $cap ? 1 : 0);
my $nulls = start_psql($node, q{SET braidsort.spill_tablespace = dax;
SELECT count(*), count(DISTINCT operation), min(threads), max(threads)
FROM braidsort.profile_device(NULL, NULL, NULL)});
my $scratch_size = wait_for(
	sub {
		my ($f) = spill_file_paths($dax);
		return defined $f ? -s $f : 0;
	},
	interval => 0.01);
$nulls->{h}->finish;
is($nulls->{out}, "$profile_rows|5|1|$cpus\n",
	'profile_device(NULL, NULL, NULL) profiles one to one thread per CPU, within max_backend_threads')
  or diag($nulls->{err});
is($scratch_size, 256 * 1024 * 1024, 'a NULL size_mb is 256 MB');
is($node->safe_psql('postgres', q{
SET braidsort.spill_tablespace = dax;
SELECT max(threads) FROM braidsort.profile_device(NULL, 16, NULL)}),
	$cpus, 'a NULL max_threads alone is one thread per CPU');

# a size_mb larger than the device's free space is refused before anything
# is created, with its own message (the free space from df, in MB)
SKIP:
{
	my @df = split /\s+/, (`df -Pk $dax`)[1];
	my $too_big = int($df[3] / 1024) + 64;
	skip "the device of $dax has more than 64 GB free", 5 if $too_big > 65536;
	($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM braidsort.profile_device('dax', $too_big, 1)");
	like($err,
		qr/ERROR:  53100: size_mb $too_big exceeds the free space on the device of tablespace "dax"/,
		'a size_mb over the free space is a disk_full error naming the tablespace');
	like($err, qr/DETAIL:  The device has \d+ MB free\./, 'the detail gives the free space');
	like($err, qr/HINT:  Choose a smaller size_mb\./, 'the hint says to choose a smaller size_mb');
	unlike($err, qr/work_mem/, 'the hint is not about braidsort.work_mem');
	is(count_spill_files($dax), 0, 'and no scratch file is left');
}

# a granted role still needs CREATE on the tablespace, as for temp_tablespaces
$node->safe_psql('postgres', q{
CREATE ROLE profiler LOGIN;
GRANT EXECUTE ON FUNCTION braidsort.profile_device(name, int, int) TO profiler});
($ret, $out, $err) = $node->psql('postgres', q{
SET ROLE profiler; SELECT * FROM braidsort.profile_device('dax', 16, 1)});
like($err, qr/permission denied for tablespace dax/, 'profiling needs CREATE on the tablespace');
like($err, qr/HINT:  Grant CREATE on tablespace dax to role profiler, or profile another tablespace\./,
	'with a hint naming the grant');
is($node->safe_psql('postgres', q{
GRANT CREATE ON TABLESPACE dax TO profiler;
SET ROLE profiler; SELECT count(*) > 0 FROM braidsort.profile_device('dax', 16, 1)}),
	't', 'a role granted EXECUTE and CREATE profiles');

# pg_global has no temporary files
($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM braidsort.profile_device('pg_global', 16, 1)");
like($err, qr/cannot profile tablespace "pg_global".*HINT:  Profile pg_default/s, 'pg_global is refused');

($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM braidsort.profile_device('dax', 16, 33)");
like($err, qr/max_threads must be between 0 and 32/, 'max_threads checked');

# a NULL tablespace when braidsort.spill_tablespace names a dropped one
my $gone = dirname($dax) . '/sched_gone';
mkdir $gone or die "could not create $gone: $!";
($ret, $out, $err) = $node->psql('postgres', qq{
CREATE TABLESPACE gone LOCATION '$gone';
SET braidsort.spill_tablespace = gone;
DROP TABLESPACE gone;
SELECT * FROM braidsort.profile_device(NULL, 16, 1)});
like($err, qr/tablespace "gone" does not exist.*DETAIL:  braidsort.spill_tablespace names it/s,
	'a NULL tablespace follows braidsort.spill_tablespace, even to a dropped one');
rmdir $gone;

# a profile records the emulation it was taken under and whether the
# device is persistent memory, and is used only under the same emulation
($ret, $out, $err) = $node->psql('postgres', q{SET braidsort.emulate_write_ns = 500;
SELECT count(*) > 0 FROM braidsort.profile_device('dax', 16, 1)});
like($err, qr/NOTICE:  tablespace "dax" is not on persistent memory\nDETAIL:  Its files are not mapped directly \(DAX\)/,
	'profiling the tmpfs says it is not persistent memory');
my $provenance = q{SELECT DISTINCT emulate_read_ns, emulate_write_ns, emulate_interference_ns,
	emulate_parallelism, persistent_memory, in_use
FROM braidsort.device_profiles WHERE tablespace = 'dax'};
is($node->safe_psql('postgres', $provenance), '0|500|0|4|f|f',
	'the profile records its emulation and media; unused without the emulation');
is($node->safe_psql('postgres', "SET braidsort.emulate_write_ns = 500; $provenance"),
	'0|500|0|4|f|t', 'used under the same emulation');
is($node->safe_psql('postgres',
		"SET braidsort.emulate_write_ns = 500; SET braidsort.emulate_parallelism = 2; $provenance"),
	'0|500|0|4|f|f', 'not used with other lanes');
my $location = q{SELECT setting, tablespace, setting_unusable, directory LIKE 'pg_tblspc/%/pgsql_tmp',
	device ~ '^\d+:\d+$', free_mb > 0, profile, persistent_memory FROM braidsort.spill_location};
is($node->safe_psql('postgres', "SET braidsort.spill_tablespace = dax; $location"),
	'dax|dax||t|t|t|other emulation|f', 'spill_location: dax, its profile not used');
is($node->safe_psql('postgres',
		"SET braidsort.spill_tablespace = dax; SET braidsort.emulate_write_ns = 500; $location"),
	'dax|dax||t|t|t|in use|f', 'spill_location: the profile used under its emulation');
($ret, $out, $err) = $node->psql('postgres', q{SET braidsort.spill_tablespace = dax;
SET braidsort.work_mem = 1024; SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY k});
like($err,
	qr/DEBUG:  braidsort ignores the device profile of tablespace "dax": it was taken under other emulation settings\nDETAIL:  Profiled with emulate_read_ns 0, emulate_write_ns 500, emulate_interference_ns 0 and emulate_parallelism 4; now 0, 0, 0 and 4\.\nHINT:  Profile the device again/,
	'the planner says at debug1 that it ignores the profile');

# forget_profile() drops a profile, for good
is($node->safe_psql('postgres', "SELECT braidsort.forget_profile('dax')"), 't',
	'forget_profile: true when there was a profile');
is($node->safe_psql('postgres',
		"SELECT braidsort.forget_profile('dax'), count(*) FROM braidsort.device_profiles WHERE tablespace = 'dax'"),
	'f|0', 'forget_profile: false when there is none; the view is empty');
($ret, $out, $err) = $node->psql('postgres', "SELECT braidsort.forget_profile('nosuch')");
like($err, qr/tablespace "nosuch" does not exist/, 'forget_profile: unknown tablespace');
($ret, $out, $err) = $node->psql('postgres',
	"SET ROLE nobody; SELECT braidsort.forget_profile('dax')");
like($err, qr/permission denied for function forget_profile/, 'forgetting needs a grant');
is($node->safe_psql('postgres', "SET braidsort.spill_tablespace = dax; SELECT profile FROM braidsort.spill_location"),
	'none', 'spill_location: no profile');
$node->restart;
is($node->safe_psql('postgres', "SELECT count(*) FROM braidsort.device_profiles WHERE tablespace = 'dax'"),
	'0', 'a forgotten profile stays forgotten after a restart');

# a profile measured while other work takes the CPUs is not stored: backends
# spinning on every CPU, twice over (backends, so that the scheduler shares
# the CPUs between them and the profiling backend as it would on a busy
# server)
{
	my $ncpu = `getconf _NPROCESSORS_ONLN`;
	chomp $ncpu;
	my $nhogs = 2 * $ncpu + 2;
	$nhogs = 80 if $nhogs > 80;		# within max_connections (100)
	my @hogs = map {
		start_psql($node, q{SET application_name = 'hog'; SET statement_timeout = '120s';
DO $$BEGIN LOOP PERFORM 1; END LOOP; END$$})
	} 1 .. $nhogs;
	wait_for(sub {
			$node->safe_psql('postgres',
				"SELECT count(*) = $nhogs FROM pg_stat_activity WHERE application_name = 'hog' AND state = 'active'") eq 't' ? 1 : 0;
		});
	($ret, $out, $err) = $node->psql('postgres',
		"SELECT count(*) > 0 FROM braidsort.profile_device('dax', 16, 1)");
	wait_for(sub {
			$node->safe_psql('postgres',
				"SELECT count(pg_terminate_backend(pid)) = 0 FROM pg_stat_activity WHERE application_name = 'hog'") eq 't' ? 1 : 0;
		});
	$_->{h}->finish foreach @hogs;
	is($out, 't', 'a busy profile still returns its measurements');
	like($err,
		qr/WARNING:  device profile of tablespace "dax" not stored: other work took the CPUs while it ran\nDETAIL:  Measuring \w+ with \d+ threads?, the profile's threads ran \d+% of the time they could have, after 3 tries\./,
		'a busy profile warns');
	is($node->safe_psql('postgres', "SELECT count(*) FROM braidsort.device_profiles WHERE tablespace = 'dax'"),
		'0', 'and is not stored');
}

# a profile file of braidsort 0.7 (format 1) is read back: no media and no
# lanes (NULL); one taken under emulation is then used under none
{
	my $spc = $node->safe_psql('postgres', "SELECT oid FROM pg_tablespace WHERE spcname = 'dax'");
	my $v1 = '';
	foreach my $p ([$spc, 0], [1663, 500])
	{
		my ($oid, $ew) = @$p;
		my $rows = pack('l l l x4 d d', 0, 4096, 1, 2000.0, 2.0)
		  . pack('l l l x4 d d', 2, 4096, 1, 1000.0, 4.0);
		$v1 .= pack('C x3 L Q q l l l x4', 1, $oid, 0, 0, 0, $ew, 2)
		  . $rows . ("\0" x (32 * 254));
	}
	$node->stop;
	open(my $fh, '>:raw', $node->data_dir . '/braidsort_profiles') or die $!;
	print $fh pack('L L L', 0x42524450, 1, 2) . $v1;
	close $fh;
	$node->start;
	is($node->safe_psql('postgres', q{
SELECT tablespace, count(*), max(emulate_write_ns), max(emulate_parallelism),
	bool_and(persistent_memory IS NULL), bool_and(in_use)
FROM braidsort.device_profiles GROUP BY 1 ORDER BY 1}),
		"dax|2|0||t|t\npg_default|2|500||t|f",
		"a 0.7 profile file is read back; an emulated profile's lanes are unknown");
	is($node->safe_psql('postgres', q{SET braidsort.emulate_write_ns = 500;
SELECT DISTINCT in_use FROM braidsort.device_profiles WHERE tablespace = 'pg_default'}),
		'f', 'and it is used under no emulation');
}

$node->stop;
done_testing();
