# 015_pg_upgrade.pl
#	pg_upgrade from a PostgreSQL 15 cluster with braidsort to this major's,
#	as docs/upgrading.md's steps do it: braidsort preloaded by both, its extension
#	created in the old cluster with a spill tablespace set, then
#	pg_upgrade --check and pg_upgrade --link, the settings carried over in
#	postgresql.conf.  In the new cluster: the extension at the version it
#	had, its objects and privileges, the spill tablespace, and sorts that
#	spill and merge equal to PostgreSQL 15's.
#
#	Runs where scripts/test.sh staged Debian 12's PostgreSQL 15 with
#	braidsort built for it (scripts/stage-old-major.sh), that is inside the
#	root of a later major: BRAID_TEST_OLD_PG is its installation.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $old_install = $ENV{BRAID_TEST_OLD_PG};
plan skip_all => 'no older PostgreSQL staged (BRAID_TEST_OLD_PG; scripts/test.sh --pg 18 stages 15)'
  unless $old_install;
# the shared libraries of its release that this one no longer has
$ENV{LD_LIBRARY_PATH} = join(':', grep { $_ } $ENV{BRAID_TEST_OLD_PG_LIBS}, $ENV{LD_LIBRARY_PATH})
  if $ENV{BRAID_TEST_OLD_PG_LIBS};

my $objects = q{SELECT string_agg(format('%s %s', p.oid::regprocedure, p.proacl), E'\n'
	ORDER BY p.oid::regprocedure::text)
FROM pg_proc p WHERE p.pronamespace = 'braidsort'::regnamespace};
my $query = 'SELECT k, v FROM up_t ORDER BY k, v';
my $spill = 'SET braidsort.force = on; SET braidsort.work_mem = 64; '
  . 'SET braidsort.sort_mode = mergepass;';

# the old cluster: 15, braidsort preloaded, extension and data
my $old = braid_node('old', install_path => $old_install);
like($old->safe_psql('postgres', 'SHOW server_version'), qr/^15\./, 'the old cluster runs 15');
my $dax = dax_tablespace($old, 'upgrade_dax');
$old->append_conf('postgresql.conf', "braidsort.spill_tablespace = 'dax'");
$old->reload;
$old->safe_psql('postgres', q{
CREATE TABLE up_t AS SELECT md5(g::text) AS k, g AS v FROM generate_series(1, 50000) g;
ANALYZE up_t;
CREATE ROLE up_monitor;
GRANT EXECUTE ON FUNCTION braidsort.stats_reset() TO up_monitor;
});
my $want_rows = reference_result($old, $query);
is($old->safe_psql('postgres', "$spill $query"), $want_rows,
	'before: a spilling sort in the old cluster is right');
my $version = $old->safe_psql('postgres',
	"SELECT extversion FROM pg_extension WHERE extname = 'braidsort'");
my $old_objects = $old->safe_psql('postgres', $objects);

# Debian 12's PostgreSQL 15.20 gives every column an attribute option
# pg_attver, which later majors do not know: pg_upgrade (and pg_dump and
# pg_restore) of any table fails on it, with or without braidsort.  Where
# it is there, the table is left out of the upgrade and made again after.
my $attver = $old->safe_psql('postgres',
	q{SELECT count(*) FROM pg_attribute WHERE attrelid = 'up_t'::regclass
	  AND array_to_string(attoptions, ',') LIKE '%pg_attver=%'});
if ($attver > 0)
{
	diag('this PostgreSQL 15 sets the column option pg_attver, which '
		  . 'pg_upgrade cannot carry to a later major: upgrading without tables');
	$old->safe_psql('postgres', 'DROP TABLE up_t');
}
$old->stop;

# the new cluster: this major, braidsort preloaded, nothing created; without
# data checksums like the old one (initdb turns them on from 18 on)
my $new = braid_node('new', extension => 0, initdb => ['--no-data-checksums']);
my $major = int($new->safe_psql('postgres', 'SHOW server_version_num') / 10000);
$new->stop;

# pg_upgrade, from a directory of the test's (it writes its logs there)
my $bindir_old = "$old_install/bin";
my $bindir_new = $new->config_data('--bindir');
my @upgrade = ('pg_upgrade', '--no-sync',
	'-d', $old->data_dir, '-D', $new->data_dir,
	'-b', $bindir_old, '-B', $bindir_new,
	'-s', $new->host, '-p', $old->port, '-P', $new->port);
my $cwd = PostgreSQL::Test::Utils::tempdir;
chdir $cwd or die "could not enter $cwd: $!";
command_ok([ @upgrade, '--check' ], 'pg_upgrade --check passes');
command_ok([ @upgrade, '--link' ], "pg_upgrade --link from 15 to $major");

# the settings, as docs/upgrading.md's steps carry them from the old cluster's
# configuration (pg_upgrade does not)
$new->append_conf('postgresql.conf', "braidsort.spill_tablespace = 'dax'");
$new->start;
$new->safe_psql('postgres', q{
CREATE TABLE up_t AS SELECT md5(g::text) AS k, g AS v FROM generate_series(1, 50000) g;
ANALYZE up_t;
}) if $attver > 0;
is($new->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'braidsort'"),
	$version, "the extension is at $version after the upgrade");
is($new->safe_psql('postgres', $objects), $old_objects,
	'its functions and their privileges are as they were');
my $current = $new->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'braidsort'");
is($new->safe_psql('postgres', 'SELECT braidsort.version()'), $current,
	"the library loaded is this tree's ($current)");
is($new->safe_psql('postgres', 'SHOW braidsort.spill_tablespace'), 'dax',
	'the tablespace braidsort.spill_tablespace names was upgraded');
like($new->safe_psql('postgres', "$spill EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, BUFFERS OFF) $query"),
	qr/Sort Method: braid mergepass/, 'a sort spills in the new cluster');
is($new->safe_psql('postgres', "$spill $query"), $want_rows,
	'and its rows are those PostgreSQL 15 sorted'
	  . ($attver > 0 ? ' (the table made again: 15.20\'s tables cannot be upgraded)' : ''));
is($new->safe_psql('postgres', "SET braidsort.enable = off; $query"), $want_rows,
	'as are PostgreSQL\'s own');
is($new->safe_psql('postgres', q{ALTER EXTENSION braidsort UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'braidsort'}),
	$current, "ALTER EXTENSION braidsort UPDATE brings it from $version to $current");
is($new->safe_psql('postgres', 'SELECT braidsort.version() = extversion FROM pg_extension '
		  . "WHERE extname = 'braidsort'"), 't', 'docs/upgrading.md\'s check says it is up to date');
is(count_spill_files($dax), 0, 'no spill file is left');
$new->stop;

done_testing();
