# 001_preload.pl
#	braidsort refuses to work unless loaded via shared_preload_libraries,
#	and works once it is.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

# a node without braidsort: the test preloads it later
my $node = braid_node('preload', preload => 0);

# Not preloaded: CREATE EXTENSION and LOAD both fail with a hint.
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE EXTENSION braidsort');
isnt($ret, 0, 'CREATE EXTENSION fails without preloading');
like($stderr, qr/braidsort must be loaded via shared_preload_libraries/,
	'error names shared_preload_libraries');
like($stderr, qr/HINT:  Add braidsort to shared_preload_libraries/,
	'error carries a hint');

($ret, $stdout, $stderr) = $node->psql('postgres', "LOAD 'braidsort'");
isnt($ret, 0, 'LOAD fails without preloading');
like($stderr, qr/must be loaded via shared_preload_libraries/, 'LOAD error');

# Nothing was replaced either.
$node->safe_psql('postgres',
	'CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 1000) g');
unlike(
	$node->safe_psql('postgres', 'EXPLAIN SELECT * FROM t ORDER BY a'),
	qr/BraidSort/, 'no BraidSort without preloading');

# Preloaded: the extension installs and sorts are replaced.
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'braidsort'");
$node->restart;
$node->safe_psql('postgres', 'CREATE EXTENSION braidsort');
like(
	$node->safe_psql('postgres',
		"SET braidsort.force = on; EXPLAIN SELECT * FROM t ORDER BY a"),
	qr/Custom Scan \(BraidSort\)/, 'BraidSort used once preloaded');
is( $node->safe_psql('postgres',
		"SET braidsort.force = on; SELECT string_agg(a::text, ',') FROM (SELECT a FROM t ORDER BY a DESC OFFSET 995) s"),
	'5,4,3,2,1', 'preloaded sort returns correct rows');

# A bad value in postgresql.conf is reported and the server still starts
# with the default (PGC_USERSET parameters do not stop the server).
$node->append_conf('postgresql.conf', "braidsort.work_mem = 10");
$node->restart;
my $log = slurp_file($node->logfile);
like($log, qr/invalid value for parameter "braidsort.work_mem": 10/,
	'invalid setting in postgresql.conf is reported');
is($node->safe_psql('postgres', 'SHOW braidsort.work_mem'), '-1',
	'invalid setting falls back to the default');

# braidsort.advise_huge_pages: the postmaster advises its mapping of the
# 32 MB of shared buffers MADV_HUGEPAGE (the "hg" flag in smaps; whether
# the kernel then uses huge pages is its shmem_enabled setting's call),
# and does not when the parameter is off.  The advice covers the pool's
# whole 2 MB pages: at least 28 MB of 32.  (huge_pages off: a mapping in
# explicit huge pages of 1 GB could not take the advice.)
sub advised_kb
{
	my $pid = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	my ($kb, $size) = (0, 0);

	foreach my $line (split /\n/, slurp_file("/proc/$pid/smaps"))
	{
		$size = $1 if $line =~ /^Size:\s+(\d+) kB/;
		$kb += $size if $line =~ /^VmFlags:.* hg\b/;
	}
	return $kb;
}
SKIP:
{
	skip 'the kernel has no transparent huge pages', 3
	  unless -d '/sys/kernel/mm/transparent_hugepage' && -r '/proc/self/smaps';
	$node->append_conf('postgresql.conf', "shared_buffers = 32MB\nhuge_pages = off");
	$node->restart;
	is($node->safe_psql('postgres', 'SHOW braidsort.advise_huge_pages'), 'on',
		'huge pages are advised by default');
	cmp_ok(advised_kb(), '>=', 28 * 1024,
		'shared buffers are advised huge pages');
	$node->append_conf('postgresql.conf', 'braidsort.advise_huge_pages = off');
	$node->restart;
	is(advised_kb(), 0, 'nothing is advised with braidsort.advise_huge_pages off');
}

# ALTER EXTENSION UPDATE from every released version gives what a fresh
# install of the current one gives; the library reports that version
my $objects = q{
SELECT string_agg(f, E'\n' ORDER BY f) FROM (
	SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') '
		   || pg_get_function_result(p.oid) || ' '
		   || coalesce(array_to_string(p.proacl, ','), '') AS f
	FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	WHERE n.nspname = 'braidsort') procs
UNION ALL
SELECT string_agg(c.relname, ',' ORDER BY c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'braidsort'
UNION ALL
SELECT array_to_string(nspacl, ',') FROM pg_namespace WHERE nspname = 'braidsort'};
my $control = slurp_file(($ENV{TESTDIR} // "$FindBin::Bin/../..") . '/braidsort.control');
my ($current) = $control =~ /^default_version = '([^']+)'/m;
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION braidsort');
is($node->safe_psql('fresh', 'SELECT braidsort.version()'), $current,
	"braidsort.version() is the library's version, $current");
foreach my $from ('0.1', '0.3', '0.3.1', '0.4', '0.5', '0.6', '0.7')
{
	(my $db = "updated_$from") =~ s/\./_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION braidsort VERSION '$from'; ALTER EXTENSION braidsort UPDATE");
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'braidsort'"),
		$current, "the extension updates from $from to $current");
	is($node->safe_psql($db, $objects), $node->safe_psql('fresh', $objects),
		"an updated $from has the objects and privileges of a fresh $current");
}

# a database updated to 0.5 on 25 November, before the 0.4 to 0.5 script
# took its final form (join_modes() without compared_ms, no
# stats_reset_time(), no grant on the scheduler view), updates to what a
# fresh install has too
$node->safe_psql('postgres', 'CREATE DATABASE early_0_5');
$node->safe_psql('early_0_5', q{
CREATE EXTENSION braidsort VERSION '0.5';
ALTER EXTENSION braidsort DROP FUNCTION braidsort.join_modes(text);
DROP FUNCTION braidsort.join_modes(text);
CREATE FUNCTION braidsort.join_modes(query text,
	OUT node int, OUT join_clause text, OUT mode text, OUT write_intensity float8,
	OUT partitions int, OUT lines_written float8, OUT lines_read float8,
	OUT rescans float8, OUT est_ms float8, OUT postgresql_ms float8,
	OUT feasible boolean, OUT chosen boolean)
RETURNS SETOF record AS '$libdir/braidsort', 'braidsort_join_modes' LANGUAGE C STRICT;
ALTER EXTENSION braidsort ADD FUNCTION braidsort.join_modes(text);
ALTER EXTENSION braidsort DROP FUNCTION braidsort.stats_reset_time();
DROP FUNCTION braidsort.stats_reset_time();
REVOKE SELECT ON braidsort.scheduler FROM PUBLIC;
ALTER EXTENSION braidsort UPDATE});
is($node->safe_psql('early_0_5', $objects), $node->safe_psql('fresh', $objects),
	"an early 0.5 updates to the objects and privileges of a fresh $current");

# a DBA's view on braidsort.scheduler does not stop the update that gave
# the view new columns (0.3.1 to 0.4), and keeps working
$node->safe_psql('postgres', 'CREATE DATABASE with_view');
$node->safe_psql('with_view', "CREATE EXTENSION braidsort VERSION '0.3.1'; "
	  . 'CREATE VIEW my_io AS SELECT device, phase, waits FROM braidsort.scheduler');
my ($rc, $out, $err) = $node->psql('with_view', 'ALTER EXTENSION braidsort UPDATE');
is($rc, 0, 'the update passes a view built on braidsort.scheduler') or diag($err);
is($node->safe_psql('with_view', 'SELECT count(*) >= 0 FROM my_io; '
	  . 'SELECT count(*) >= 0 FROM braidsort.scheduler WHERE interfered_lines >= 0'),
	"t\nt", 'the view and the new columns are read');
is($node->safe_psql('with_view', $objects), $node->safe_psql('fresh', $objects),
	"... with the objects of a fresh $current");

$node->stop;
done_testing();
