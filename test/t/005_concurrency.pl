# 005_concurrency.pl
#	Several sessions sorting at once (pgbench, 4 clients), each sort
#	spilling runs and value logs to one tmpfs tablespace with device
#	emulation on, under both braidsort.io_policy settings: every result is
#	checked (row count, order and checksum, inside the server), and under
#	interference_aware the scheduler's overlap counter stays 0 while reads
#	and writes of different sessions did contend for the device, unless
#	the device's profile shows no interference (a second tablespace on
#	the same file system follows that profile too).
use strict;
use warnings;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('concurrency', conf => "max_connections = 20\n");
my $dax = dax_tablespace($node, 'concurrency');
# a second tablespace on the same file system (one device, one gate)
my $dax2 = dax_tablespace($node, 'concurrency2', 'dax2');
$node->safe_psql('postgres', qq{
CREATE TABLE t AS
SELECT decode(md5(g::text), 'hex') AS k, repeat('v', 40) || g AS v, g AS id
FROM generate_series(1, 60000) g;
CREATE TABLE u AS SELECT k, id FROM t WHERE id % 2 = 0;
ANALYZE t, u;

-- run a query returning (k bytea, id int) and check it inside the server:
-- nondecreasing k, the expected row count and sum of ids; raises otherwise
CREATE FUNCTION check_sorted(q text, nrows bigint, idsum bigint) RETURNS bigint
LANGUAGE plpgsql AS \$\$
DECLARE
	r record;
	prev bytea;
	n bigint := 0;
	s bigint := 0;
BEGIN
	FOR r IN EXECUTE q LOOP
		IF prev IS NOT NULL AND r.k < prev THEN
			RAISE EXCEPTION 'row % out of order in %', n, q;
		END IF;
		prev := r.k;
		n := n + 1;
		s := s + r.id;
	END LOOP;
	IF n <> nrows OR s <> idsum THEN
		RAISE EXCEPTION 'got % rows (id sum %), expected % (%), in %', n, s, nrows, idsum, q;
	END IF;
	RETURN n;
END
\$\$;
});

my $q_tid = 'SELECT k, id FROM t ORDER BY k';
my $q_log = 'SELECT k, id FROM (SELECT k, id FROM t UNION ALL SELECT k, id FROM u) s ORDER BY k';
my $q_merge = 'SELECT t.k, t.id FROM t JOIN u USING (k) ORDER BY t.k';
my %expect;
for my $q ($q_tid, $q_log, $q_merge)
{
	$expect{$q} = reference_result($node, "SELECT count(*), coalesce(sum(id), 0) FROM ($q) s");
}

# the pgbench script: each client runs the three kinds of spilling sort
my $dir = tempdir(CLEANUP => 1);
open(my $fh, '>', "$dir/sorts.sql") or die;
for my $q ($q_tid, $q_log, $q_merge)
{
	my ($n, $s) = split(/\|/, $expect{$q});
	print $fh "SELECT check_sorted('$q', $n, $s);\n";
}
close $fh;

# settings of every pgbench session: forced, small budget, spilling to dax,
# with a slow emulated device so that phases last
my $options = join(' ',
	'-c braidsort.force=on', '-c braidsort.work_mem=512',
	'-c braidsort.spill_tablespace=dax',
	'-c braidsort.emulate_write_ns=300', '-c braidsort.emulate_read_ns=100');

foreach my $policy ('interference_aware', 'overlap')
{
	$node->safe_psql('postgres', qq{
ALTER SYSTEM SET braidsort.io_policy = '$policy';
SELECT pg_reload_conf();});
	$node->poll_query_until('postgres', 'SHOW braidsort.io_policy', $policy)
	  or die "policy $policy not in force";
	$node->safe_psql('postgres', 'SELECT braidsort.stats_reset()');

	local $ENV{PGOPTIONS} = $options;
	$node->command_ok(
		[ 'pgbench', '-n', '-c', '4', '-j', '4', '-t', '3', '-f', "$dir/sorts.sql", 'postgres' ],
		"pgbench sorts under $policy: every result checked");

	my $sched = $node->safe_psql('postgres', q{
SELECT io_policy, read_grants > 0, write_grants > 0, "overlaps", waits, phase_switches
FROM braidsort.scheduler WHERE tablespace = 'dax'});
	note("scheduler under $policy: $sched");
	my ($pol, $reads, $writes, $overlaps, $waits, $switches) = split(/\|/, $sched);
	is($pol, $policy, "the view shows the policy $policy");
	is("$reads|$writes", 't|t', "reads and writes went through the gate under $policy");
	if ($policy eq 'interference_aware')
	{
		is($overlaps, 0, 'no read/write overlap under interference_aware');
		ok($waits > 0, "sessions waited for the other phase ($waits waits, $switches switches)");
	}
	else
	{
		ok($overlaps > 0, "reads and writes overlapped under overlap ($overlaps)");
	}
	is($node->safe_psql('postgres', q{
SELECT readers + writers + waiting_readers + waiting_writers + writer_threads
FROM braidsort.scheduler WHERE tablespace = 'dax'}), '0', "the gate is free after the run under $policy");
	is($node->safe_psql('postgres', q{
SELECT ungated_reads FROM braidsort.scheduler WHERE tablespace = 'dax'}), '0',
		"every device read was made under a read grant ($policy)");
}

# interference_aware keeps reads and writes apart only on a device whose
# profile (taken under the sessions' emulation) shows interference: with
# none emulated the profile's reads under a writer run as fast as alone and
# the gate lets them overlap; with interference emulated it keeps them
# apart.  (The profile decides, so the check follows its "I".)
$node->safe_psql('postgres', q{
ALTER SYSTEM SET braidsort.io_policy = 'interference_aware'; SELECT pg_reload_conf();});
$node->poll_query_until('postgres', 'SHOW braidsort.io_policy', 'interference_aware')
  or die "policy not in force";
foreach my $interference (0, 1000)
{
	my $emulation = "-c braidsort.emulate_write_ns=300 -c braidsort.emulate_read_ns=100 "
	  . "-c braidsort.emulate_interference_ns=$interference";
	profiled($node, qq{SET braidsort.emulate_write_ns = 300; SET braidsort.emulate_read_ns = 100;
SET braidsort.emulate_interference_ns = $interference;
SELECT count(*) FROM braidsort.profile_device('dax', 16, 1)});
	my ($ratio, $shows) = split(/\|/, $node->safe_psql('postgres', q{
SELECT round(interference::numeric, 2), read_write_interference
FROM braidsort.device_summary() WHERE tablespace = 'dax'}));
	$shows //= '';
	note("profile with $interference ns of emulated interference: interference "
		  . ($ratio // 'none'));
	# (with none emulated the ratio is about 1, but a burst of other work on
	# the CPUs during the profile can push it up: the checks below follow
	# what the profile says)
	is($shows, 't', "a profile with $interference ns of emulated interference shows it (" . ($ratio // "none") . ")")
	  if $interference > 0;
	# dax, then (no interference emulated) a second tablespace on the same
	# file system with no profile of its own: under the device's rules,
	# those of the profile of dax
	foreach my $spc ($interference > 0 ? ('dax') : ('dax', 'dax2'))
	{
		$node->safe_psql('postgres', 'SELECT braidsort.stats_reset()');
		{
			local $ENV{PGOPTIONS} = join(' ',
				'-c braidsort.force=on', '-c braidsort.work_mem=512',
				"-c braidsort.spill_tablespace=$spc", $emulation);
			$node->command_ok(
				[ 'pgbench', '-n', '-c', '4', '-j', '4', '-t', '2', '-f', "$dir/sorts.sql", 'postgres' ],
				"pgbench sorts through $spc under a profile with $interference ns of interference: every result checked");
		}
		my $overlaps = $node->safe_psql('postgres', qq{
SELECT "overlaps" FROM braidsort.scheduler WHERE tablespace = '$spc'});
		if ($shows ne 'f')
		{
			is($overlaps, '0', "$spc: the profile shows interference: reads and writes kept apart");
		}
		else
		{
			ok($overlaps > 0,
				"$spc: the profile shows no interference: reads and writes overlapped ($overlaps)");
		}
	}
}
is($node->safe_psql('postgres', q{SELECT braidsort.forget_profile('dax')}), 't',
	'the profile is dropped');

# spill files spread over two tablespaces (temp_tablespaces; the second one
# on another filesystem when the first is the tmpfs): readers of runs on
# both devices take both gates, in order, with writers on each
my $disk2 = tempdir(CLEANUP => 1);
$node->safe_psql('postgres', qq{CREATE TABLESPACE disk2 LOCATION '$disk2';
ALTER SYSTEM SET braidsort.io_policy = 'interference_aware'; SELECT pg_reload_conf();});
$node->poll_query_until('postgres', 'SHOW braidsort.io_policy', 'interference_aware')
  or die "policy not in force";
$node->safe_psql('postgres', 'SELECT braidsort.stats_reset()');
{
	local $ENV{PGOPTIONS} = join(' ',
		'-c braidsort.force=on', '-c braidsort.work_mem=512',
		'-c temp_tablespaces=dax,disk2',
		'-c braidsort.emulate_write_ns=300', '-c braidsort.emulate_read_ns=100');
	$node->command_ok(
		[ 'pgbench', '-n', '-c', '4', '-j', '4', '-t', '2', '-f', "$dir/sorts.sql", 'postgres' ],
		'pgbench sorts spilling to two tablespaces: every result checked');
}
is($node->safe_psql('postgres', q{
SELECT sum(readers + writers + waiting_readers + waiting_writers + writer_threads),
       sum("overlaps"), sum(ungated_reads), bool_and(read_grants > 0)
FROM braidsort.scheduler WHERE tablespace IN ('dax', 'disk2')}), '0|0|0|t',
	'two devices: gates free afterwards, no overlap, every read under a grant');

# spilled sorts: MergePass or the write-limited mode braidsort.sort_mode picks
my $stats = $node->safe_psql('postgres', q{
SELECT 'sorts_spilled=' || sum(value) FILTER (WHERE counter IN ('sorts_mergepass', 'sorts_hybrid',
														'sorts_segment', 'sorts_lazy'))
	   || ' sorts_value_log=' || sum(value) FILTER (WHERE counter = 'sorts_value_log')
FROM braidsort.stats WHERE scope = 'global'});
like($stats, qr/sorts_spilled=[1-9]\d* sorts_value_log=[1-9]/, "stats count the sorts ($stats)");

# no spill file outlives the runs
is(count_spill_files($dax) + count_spill_files($dax2) + count_spill_files($disk2), 0,
	'no spill files left');

$node->stop;
done_testing();
