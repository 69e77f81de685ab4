# 013_cancel_points.pl
#	Sorts cancelled and terminated at many points spread over every phase
#	they go through: OnePass and MergePass, gathering from the heap and
#	from a value log, and the write-limited modes (hybrid, segment, lazy).
#	A first run of each sort records when it enters and leaves each phase
#	(braidsort.progress); then, for two points within each phase, a run is
#	signalled there: cancels and terminations alternate.  After a cancel
#	the same session runs the sort again, to the end and right; after
#	either, no spill file is left.  At the end the server has never
#	restarted and reported no leak.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('points');
my $dir = dax_tablespace($node, 'points');
sort_table($node, 't', 800000);

my $query = 'SELECT count(*), sum(length(v)), md5(string_agg(k::text, \',\')) '
  . 'FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);
my $base = q{SET braidsort.force = on; SET braidsort.spill_tablespace = dax;
SET braidsort.gather_batch = 512;};

# the sorts: name, settings, the phases it must go through
my @sorts = (
	[ 'onepass', 'SET braidsort.work_mem = 65536;', [qw(building gathering)] ],
	# (a budget small enough for intermediate merge passes: at 256 kB the
	# fan-in is 16, and these sorts write 80 to 160 runs)
	[ 'mergepass', 'SET braidsort.work_mem = 256; SET braidsort.sort_mode = mergepass;',
		[qw(building merging gathering)] ],
	[ 'valuelog-onepass',
		q{SET braidsort.work_mem = 65536; SET braidsort.gather_source = value_log;},
		[qw(building gathering)] ],
	[ 'valuelog-mergepass',
		q{SET braidsort.work_mem = 256; SET braidsort.sort_mode = mergepass;
SET braidsort.gather_source = value_log;},
		[qw(building merging gathering)] ],
	[ 'hybrid', 'SET braidsort.work_mem = 1024; SET braidsort.sort_mode = hybrid;',
		[qw(building gathering)] ],
	[ 'segment',
		'SET braidsort.work_mem = 2048; SET braidsort.sort_mode = segment; '
		  . 'SET braidsort.write_intensity = 0;',
		[qw(building selecting)] ],
	[ 'lazy',
		'SET braidsort.work_mem = 2048; SET braidsort.sort_mode = lazy; '
		  . 'SET braidsort.write_intensity = 0;',
		[qw(building selecting)] ],
);

# timeline($pid, $s): the phases braidsort.progress shows for the backend
# $pid until the session $s ends: phase -> [first seen, last seen], in
# seconds from the call
sub timeline
{
	my ($pid, $s) = @_;
	my $t0 = time();
	my %seen;

	while ($s->{h}->pumpable)
	{
		my $phase = $node->safe_psql('postgres',
			"SELECT phase FROM braidsort.progress WHERE pid = $pid AND leader_pid IS NULL");
		my $t = time() - $t0;
		if ($phase ne '')
		{
			$seen{$phase} //= [ $t, $t ];
			$seen{$phase}[1] = $t;
		}
		$s->{h}->pump_nb;
		usleep(2000);
	}
	$s->{h}->finish;
	return \%seen;
}

my $signalled = 0;
my $run = 0;
foreach my $sort (@sorts)
{
	my ($name, $set, $phases) = @$sort;

	# a first run: the phases and when they come.  The sampling (a psql
	# a sample, some milliseconds each) can miss a phase of a few
	# milliseconds on a loaded machine (a lazy sort's build): up to three
	# runs, until every phase is seen.
	my ($s, $seen);
	for (my $try = 1; $try <= 3; $try++)
	{
		my $app = "$name-timeline-$try";
		$s = start_psql($node, "SET application_name = '$app'", "$base $set", $query);
		my $pid = session_pid($node, $app);
		$seen = timeline($pid, $s);
		last unless grep { !exists $seen->{$_} } @$phases;
		diag "$name: run $try missed a phase, trying again";
	}
	chomp $s->{out};
	is($s->{out}, $expected, "$name: the sort is right");
	foreach my $phase (@$phases)
	{
		ok(exists $seen->{$phase}, "$name: goes through phase $phase");
	}
	note "$name: "
	  . join(', ', map { sprintf('%s %.2f-%.2f s', $_, @{ $seen->{$_} }) }
		  sort { $seen->{$a}[0] <=> $seen->{$b}[0] } keys %$seen);

	# then a signal at two points of each phase seen
	my @order = sort { $seen->{$a}[0] <=> $seen->{$b}[0] } grep { $_ ne 'done' } keys %$seen;
	for (my $i = 0; $i < @order; $i++)
	{
		my $phase = $order[$i];
		# this phase, or a later one if this run passes it unseen
		my $phases_from = join(', ', map { "'$_'" } @order[ $i .. $#order ]);
		my ($from, $to) = @{ $seen->{$phase} };
		foreach my $at (0.1, 0.5)
		{
			my $signal = ($run++ % 2 == 0) ? 'cancel' : 'terminate';
			my $point = sprintf('%s-%s-%02d-%s', $name, $phase, $at * 100, $signal);
			my $delay = ($to - $from) * $at;
			my $func = $signal eq 'cancel' ? 'pg_cancel_backend' : 'pg_terminate_backend';

			# after a cancel, the session sleeps (so that the spill files
			# can be counted while it lives), then sorts again
			$s = start_psql($node, "SET application_name = '$point'", "$base $set",
				$query, 'SELECT pg_sleep(300)', $query);
			my $pid = session_pid($node, $point);
			poll_query($node,
				"SELECT phase FROM braidsort.progress WHERE pid = $pid AND leader_pid IS NULL "
				  . "AND phase IN ($phases_from)",
				interval => 0.002, timeout => 60);
			usleep(int($delay * 1_000_000));
			# signal only a sort still running (a run may be quicker than the
			# first; a signal after its end would hit the next statement)
			my $running = $node->safe_psql('postgres',
				"SELECT $func(pid) FROM braidsort.progress WHERE pid = $pid "
				  . "AND leader_pid IS NULL AND phase <> 'done'");
			$signal = 'none' if $running eq '';
			if ($signal ne 'terminate')
			{
				isnt(poll_query($node,
						"SELECT 1 FROM pg_stat_activity WHERE pid = $pid "
						  . "AND query = 'SELECT pg_sleep(300)' AND wait_event = 'PgSleep'"),
					'', "$point: the session goes on");
				is(count_spill_files($dir), 0, "$point: no spill file left");
				$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
				$s->{h}->finish;
				my @results = grep { $_ ne '' } split /\n/, $s->{out};
				is($results[-1], $expected, "$point: the same session sorts again, right");
			}
			else
			{
				$s->{h}->finish;
				is(poll_query($node,
						"SELECT 1 FROM pg_stat_activity WHERE pid = $pid HAVING count(*) = 0"),
					'1', "$point: the backend is gone");
				is(count_spill_files($dir), 0, "$point: no spill file left");
			}
			$signalled++ if $signal ne 'none';
		}
	}
}
note "$signalled of $run signals reached a running sort";
cmp_ok($signalled, '>=', $run / 2, 'most signals reached a running sort');

is($node->safe_psql('postgres',
		'SELECT count(*) FROM braidsort.scheduler WHERE readers + writers > 0'),
	'0', "the devices' gates are free");
my $log = slurp_file($node->logfile);
unlike($log,
	qr/buffer refcount leak|resource was not closed|temporary file leak|PANIC|terminated by signal|reinitializing/,
	'no leaks reported, no crash, no restart');

$node->stop;
done_testing();
