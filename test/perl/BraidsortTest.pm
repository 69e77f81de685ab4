# BraidsortTest.pm
#	What the TAP tests of braidsort (test/t/*.pl) share: a cluster that
#	preloads braidsort with the settings the tests run under, the tmpfs
#	standing in for a DAX device and a tablespace on it, a table of random
#	keys to sort, PostgreSQL's own result of a query, braidsort's spill
#	files, psql sessions in the background, and waiting until the server
#	shows something.
#
#	A test loads it relative to its own file, so that it is found wherever
#	prove runs from (make installcheck runs prove from the top of the tree,
#	scripts/test.sh runs make installcheck in a copy of it):
#
#		use FindBin;
#		use lib "$FindBin::RealBin/../perl";
#		use BraidsortTest;
#
#	The environment: BRAID_TEST_DAX is a tmpfs standing in for a DAX mount
#	(scripts/test.sh mounts one; without it a temporary directory is used),
#	shared by the tests, each in a directory of its own.
package BraidsortTest;

use strict;
use warnings;
use Exporter 'import';
use File::Temp qw(tempdir);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(braid_node dax_dir dax_tablespace spill_file_paths count_spill_files sort_table
  reference_result start_psql session_pid wait_for poll_query stop_session
  signal_statement statement_reached profiled
  wait_for_stats_flush log_position log_since $parallel_sql);

# settings that make the planner use parallel workers for a sort of a few
# hundred thousand rows (the nodes run without them otherwise), each
# process with its own BraidSort under the Gather Merge (not one sort in
# its place: the tests using these are about the workers' sorts)
our $parallel_sql = q{SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET braidsort.parallel_sort = each;};

# braid_node($name, %opts): a new cluster, initialized and started, that
# preloads braidsort and runs without parallel workers (unless a statement
# asks for them) or JIT, so that plans and timings are those of the sort;
# CREATE EXTENSION braidsort is done.  Options:
#	preload => 'braidsort, pg_stat_statements': what to preload; 0 for a
#		node without braidsort or any of these settings
#	conf => "...": more postgresql.conf lines
#	extension => 0: no CREATE EXTENSION (braidsort sorts without it)
#	install_path => '/usr/lib/postgresql/15': another installation's
#		server (its bin/ and lib/), as PostgreSQL::Test::Cluster takes it
#	initdb => [ options ]: more options for initdb
sub braid_node
{
	my ($name, %opts) = @_;
	my $preload = exists $opts{preload} ? $opts{preload} : 'braidsort';
	my $node = PostgreSQL::Test::Cluster->new($name,
		$opts{install_path} ? (install_path => $opts{install_path}) : ());

	$node->init($opts{initdb} ? (extra => $opts{initdb}) : ());
	if ($preload)
	{
		$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = '$preload'
max_parallel_workers_per_gather = 0
jit = off
} . ($opts{conf} // ''));
	}
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION braidsort')
	  if $preload && ($opts{extension} // 1);
	return $node;
}

# dax_dir($name): a new directory $name of the test's own on the tmpfs of
# BRAID_TEST_DAX (other tests use it too), or in a temporary directory
sub dax_dir
{
	my ($name) = @_;
	my $dir = ($ENV{BRAID_TEST_DAX} || tempdir(CLEANUP => 1)) . "/$name";

	mkdir $dir or die "could not create $dir: $!";
	return $dir;
}

# dax_tablespace($node, $name [, $tablespace]): a tablespace (default
# "dax") in a new directory dax_dir($name); returns the directory
sub dax_tablespace
{
	my ($node, $name, $tablespace) = @_;
	my $dir = dax_dir($name);

	$tablespace //= 'dax';
	$node->safe_psql('postgres', "CREATE TABLESPACE $tablespace LOCATION '$dir'");
	return $dir;
}

# spill_file_paths($dir): the braidsort spill files (and profile scratch
# files) in the temporary directory of the tablespace at $dir
sub spill_file_paths
{
	my ($dir) = @_;

	return glob("$dir/PG_*/pgsql_tmp/pgsql_tmp*.braid*");
}

# count_spill_files($dir): how many spill_file_paths($dir) there are
sub count_spill_files
{
	my ($dir) = @_;
	my @files = spill_file_paths($dir);

	return scalar(@files);
}

# sort_table($node, $table, $rows [, id => 0]): a table of $rows rows to
# sort: k, a random 16-byte key (the md5 of the row number), v, a payload
# of some 65 bytes, and id, the row number (left out with id => 0);
# analyzed
sub sort_table
{
	my ($node, $table, $rows, %opts) = @_;
	my $id = ($opts{id} // 1) ? ', g AS id' : '';

	$node->safe_psql('postgres', qq{
CREATE TABLE $table AS
SELECT decode(md5(g::text), 'hex') AS k, repeat('x', 60) || g AS v$id
FROM generate_series(1, $rows) g;
ANALYZE $table;
});
}

# reference_result($node, $sql): what $sql returns with braidsort off
sub reference_result
{
	my ($node, $sql) = @_;

	return $node->safe_psql('postgres', "SET braidsort.enable = off; $sql");
}

# start_psql($node, @commands): a psql session in the background that runs
# each command (psql -c) in turn, going on after an error.  Returns a hash:
# h, the IPC::Run harness (h->finish waits for the session's end), and out
# and err, what psql printed (complete once it has finished).
sub start_psql
{
	my ($node, @commands) = @_;
	my $s = { out => '', err => '' };

	$s->{h} = IPC::Run::start(
		[
			'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=0',
			'-d', $node->connstr('postgres'),
			map { ('-c', $_) } @commands
		],
		'>', \$s->{out}, '2>', \$s->{err});
	return $s;
}

# session_pid($node, $application_name): the pid of the client backend of
# that application_name (parallel workers inherit it: not theirs), once it
# shows in pg_stat_activity; '' if it never does
sub session_pid
{
	my ($node, $name) = @_;

	return poll_query($node,
		"SELECT pid FROM pg_stat_activity WHERE application_name = '$name' "
		  . "AND backend_type = 'client backend'");
}

# wait_for($code [, timeout => seconds] [, interval => seconds]): call
# $code until it returns something true, every interval (default 0.02 s)
# for at most timeout seconds (default 180: the machines running the tests
# may be slow and busy, and a timeout only delays a failure); returns the
# last value $code returned
sub wait_for
{
	my ($code, %opts) = @_;
	my $deadline = time() + ($opts{timeout} // 180);
	my $value;

	while (1)
	{
		$value = $code->();
		last if $value || time() > $deadline;
		usleep(int(($opts{interval} // 0.02) * 1_000_000));
	}
	return $value;
}

# poll_query($node, $sql [, role => name] [, wait_for options]): run $sql
# until it returns something (as role, if given); returns that, or '' if
# it never did
sub poll_query
{
	my ($node, $sql, %opts) = @_;
	my $connstr = $node->connstr('postgres');
	my $role = delete $opts{role};

	$connstr .= " user=$role" if defined $role;
	my $result = wait_for(
		sub {
			my $r = $node->safe_psql('postgres', $sql, connstr => $connstr);
			return $r ne '' ? $r : undef;
		},
		%opts);
	return $result // '';
}

# stop_session($node, $dir, $app, $pid, $signal, $s): cancel or terminate
# ($signal) the backend $pid of the start_psql session $s, whose statement
# is followed by SELECT pg_sleep(300); check that after a cancel the session
# goes on to that sleep (which is then cancelled too), after a termination
# that the backend is gone, and either way that no spill file is left in
# $dir.  Waits for the session's end: $s->{err} is complete afterwards.
# Returns 1, or 0 when the signal came too late: the statement had finished
# (it printed its result) and the signal stopped the sleep instead (a busy
# machine can delay the signal past the statement's end); the caller then
# tries again, in a session of another application_name (the old backend
# may still be leaving).
sub stop_session
{
	my ($node, $dir, $app, $pid, $signal, $s) = @_;
	my $func = $signal eq 'cancel' ? 'pg_cancel_backend' : 'pg_terminate_backend';
	my $state = '';
	my $files;

	$node->safe_psql('postgres', "SELECT $func($pid)");
	if ($signal eq 'cancel')
	{
		# the session goes on to the sleep or, when a late cancel stopped
		# the sleep, ends; the files are counted while it sleeps, so that
		# the cancelled statement removed them, not the backend's exit
		$state = poll_query($node,
			"SELECT CASE WHEN count(*) = 0 THEN 'gone' "
			  . "WHEN bool_or(query = 'SELECT pg_sleep(300)' AND wait_event = 'PgSleep') "
			  . "THEN 'sleeping' END FROM pg_stat_activity WHERE pid = $pid");
		$files = count_spill_files($dir) if $state eq 'sleeping';
		$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)")
		  if $state ne 'gone';
	}
	$s->{h}->finish;
	$files //= count_spill_files($dir);
	Test::More::is($files, 0, "$app: no spill file left");
	if ($s->{out} ne '')
	{
		Test::More::diag("$app: the statement finished before the $signal came; trying again");
		return 0;
	}
	if ($signal eq 'cancel')
	{
		Test::More::is($state, 'sleeping', "$app: the session goes on after the cancel");
	}
	else
	{
		Test::More::is(poll_query($node,
				"SELECT 1 FROM pg_stat_activity WHERE pid = $pid HAVING count(*) = 0"),
			'1', "$app: the backend is gone");
	}
	return 1;
}

# signal_statement($node, $dir, $app, $signal, $setup, $statement, $reached):
# run $statement in a background session (after $setup), followed by
# SELECT pg_sleep(300); once $reached->($pid) has waited for the moment to
# signal it (and checked what it must), stop_session; again, in a new
# session, when the statement had finished before the signal came (up to 5
# times).  Returns the last session: its err is complete.
sub signal_statement
{
	my ($node, $dir, $app, $signal, $setup, $statement, $reached) = @_;
	my ($s, $stopped);

	for (my $try = 1; $try <= 5 && !$stopped; $try++)
	{
		$s = start_psql($node, "SET application_name = '${app}_$try'", $setup, $statement,
			'SELECT pg_sleep(300)');
		my $pid = session_pid($node, "${app}_$try");
		Test::More::isnt($pid, '', "$app: the session started");
		$reached->($pid);
		$stopped = stop_session($node, $dir, $app, $pid, $signal, $s);
	}
	Test::More::ok($stopped, "$app: the $signal came while the statement ran");
	return $s;
}

# statement_reached($node, $dir, $pid, $condition, $name, $files_name):
# wait until the query $condition returns a row (checked as $name), then,
# if $files_name is given, until spill files exist in $dir (checked as
# $files_name): a signal_statement's $reached.  When the statement of
# backend $pid ends before $condition was seen (a fast run on an idle
# machine: the session is already in its pg_sleep), nothing is checked:
# stop_session then finds the statement's result and signal_statement
# tries again in a new session.
sub statement_reached
{
	my ($node, $dir, $pid, $condition, $name, $files_name) = @_;
	my $state = poll_query($node,
		"SELECT CASE WHEN EXISTS ($condition) THEN 'reached' "
		  . "WHEN EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $pid "
		  . "AND query = 'SELECT pg_sleep(300)') THEN 'past' END",
		interval => 0.005);

	if ($state eq 'past')
	{
		Test::More::diag("$name: not seen, the statement had ended");
		return;
	}
	Test::More::is($state, 'reached', $name);
	Test::More::ok(wait_for(sub { count_spill_files($dir) > 0 }, interval => 0.005),
		$files_name)
	  if defined $files_name;
}

# wait_for_stats_flush($node): wait until no other client backend is left,
# so that the cumulative statistics hold everything they did (a backend
# flushes its statistics before it leaves pg_stat_activity)
sub wait_for_stats_flush
{
	my ($node) = @_;

	$node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()})
	  or Test::More::diag('other sessions did not go');
}

# profiled($node, $sql): run $sql, which profiles tablespace dax, until the
# profile is stored (a machine busy with other work makes profile_device()
# keep it back, with a WARNING), at most 5 times (then a failed test); its
# output
sub profiled
{
	my ($node, $sql) = @_;
	my $taken = q{SELECT coalesce(max(taken_at)::text, '') FROM braidsort.device_profiles
WHERE tablespace = 'dax'};
	my $before = $node->safe_psql('postgres', $taken);
	my ($ret, $out, $err);

	for my $try (1 .. 5)
	{
		($ret, $out, $err) = $node->psql('postgres', $sql);
		return $out if $ret == 0 && $node->safe_psql('postgres', $taken) ne $before;
		Test::More::diag("profile not stored (try $try): $err");
	}
	Test::More::fail('a profile of dax was stored within 5 tries');
	return $out;
}

# log_position($node): where the server log ends now, for log_since
sub log_position
{
	my ($node) = @_;

	return -s $node->logfile;
}

# log_since($node, $position): the server log written since log_position
sub log_since
{
	my ($node, $position) = @_;

	return slurp_file($node->logfile, $position);
}

1;
