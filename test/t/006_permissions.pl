# 006_permissions.pl
#	braidsort.spill_tablespace and the privileges of the role that sorts,
#	as for temp_tablespaces: set server-wide, it is used only by roles that
#	may create in the tablespace; the others spill where an empty setting
#	sends them (temp_tablespaces, else the database's default), without an
#	error, with a DEBUG1 message and the stats counter
#	spill_tablespace_fallbacks, in parallel workers too, and a WARNING once
#	per session (not from the workers); the planner's
#	guess of the spill device follows the same rule; an interactive SET of
#	a tablespace the role may not use is refused at once.  pg_global is
#	refused.  The planner's DEBUG1 messages say nothing about a statement
#	reading a table the role may not read; every view is readable by all;
#	beside pgaudit the plan-time permission check runs no audit hook (it
#	crashed the backend) and a sort is audited once.
#
#	Runs the sorts as "app", a role that is not a superuser.  BRAID_TEST_DAX
#	(a tmpfs standing in for a DAX mount, from scripts/test.sh) holds the
#	tablespace if set.
use strict;
use warnings;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('permissions', conf => "log_temp_files = 0\n");
my $dax = dax_tablespace($node, 'permissions');
my $other = tempdir(CLEANUP => 1);
sort_table($node, 't', 300000);
$node->safe_psql('postgres', qq{
CREATE TABLESPACE other LOCATION '$other';
CREATE ROLE app LOGIN;
GRANT SELECT ON t TO app;
});
my $dax_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_tablespace WHERE spcname = 'dax'");

# run SQL as app; returns (exit code, stdout, stderr)
sub as_app
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql, extra_params => [ '-U', 'app' ]);
	return ($ret, $out, $err);
}

sub counter
{
	return $node->safe_psql('postgres',
		"SELECT value FROM braidsort.stats WHERE counter = 'spill_tablespace_fallbacks'");
}

# the spill files of the statements run since log offset $from, from
# log_temp_files: the tablespace of each ("default" or its oid)
sub spill_places
{
	my ($from) = @_;
	my $log = log_since($node, $from);
	my @places;
	while ($log =~ /temporary file: path "([^"]*\.braid\d+)", size \d+/g)
	{
		my $path = $1;
		push @places, $path =~ m{^base/pgsql_tmp/} ? 'default'
		  : $path =~ m{^pg_tblspc/(\d+)/} ? $1 : "? $path";
	}
	return join(',', sort { $a cmp $b } keys %{ { map { $_ => 1 } @places } });
}

my $dax_tmp_dir = sub { scalar(glob("$dax/PG_*/pgsql_tmp")) };

# (psql shows the CONTEXT of a notice too: "parallel worker")
my $setup = q{\set SHOW_CONTEXT always
SET braidsort.force = on; SET braidsort.work_mem = 1024;
SET client_min_messages = debug1;};
my $query = 'SELECT count(*), sum(id) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);
my $fallback = qr/DEBUG:  braidsort.spill_tablespace "dax" is not usable by this role, spilling to tablespace "pg_default" instead\nDETAIL:  Role "app" has no CREATE privilege on tablespace "dax"./;

# app really is an ordinary role, without CREATE on dax
my ($ret, $out, $err) = as_app(q{SELECT current_user, rolsuper, has_tablespace_privilege('dax', 'CREATE')
FROM pg_roles WHERE rolname = current_user});
is($out, 'app|f|f', 'app is not a superuser and may not create in dax');

# spill_tablespace set server-wide
$node->safe_psql('postgres', q{ALTER SYSTEM SET braidsort.spill_tablespace = 'dax';
SELECT pg_reload_conf();});
$node->poll_query_until('postgres', 'SHOW braidsort.spill_tablespace', 'dax')
  or die 'the reload did not take';
$node->safe_psql('postgres', 'SELECT braidsort.stats_reset()');

# a spilling sort as app: falls back to the database's default, no error
{
	my $from = log_position($node);
	($ret, $out, $err) = as_app("$setup $query");
	is($ret, 0, 'app sorts with the server-wide setting: no error');
	is($out, $expected, 'app: right result');
	like($err, $fallback, 'app: DEBUG1 says where it spills instead');
	my @msgs = $err =~ /is not usable by this role/g;
	is(scalar(@msgs), 1, 'app: one message per statement, not per file');
	unlike($err, qr/ERROR/, 'app: no permission error (the WARNING below is not one)');
	is(spill_places($from), 'default', 'app: every spill file in the default tablespace');
	ok(!$dax_tmp_dir->(), 'app: nothing was ever written to dax');
	is(counter(), '1', 'spill_tablespace_fallbacks counts the statement once');
	like($err, qr/WARNING:  permission denied for tablespace "dax" named by braidsort.spill_tablespace\nDETAIL:  Spill files go to tablespace "pg_default" instead.\nHINT:  Grant CREATE on tablespace "dax" to role "app"/,
		'app: a WARNING says where spill files go instead');
	($ret, $out, $err) = as_app("$setup $query; $query");
	my @warnings = $err =~ /WARNING:  permission denied for tablespace "dax"/g;
	is(scalar(@warnings), 1, 'app: the WARNING comes once per session, not per statement');
	($ret, $out, $err) = as_app("$setup EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query");
	like($out, qr/Sort Method: braid (?:mergepass|hybrid)/, 'app: the sort spills');
	($ret, $out, $err) = as_app(
		'SELECT setting, tablespace, setting_unusable FROM braidsort.spill_location');
	is($out, 'dax|pg_default|role "app" has no CREATE privilege on tablespace "dax"',
		'app: spill_location says where spills go, and why');
}

# the same in parallel workers: each falls back on its own
{
	($ret, $out, $err) = as_app("$setup $parallel_sql EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query");
	like($out, qr/Gather Merge.*Workers Launched: [12].*Custom Scan \(BraidSort\).*Sort Method: braid (?:mergepass|hybrid)/s,
		'parallel: workers sort and spill');
	my $before = counter();
	my $from = log_position($node);
	($ret, $out, $err) = as_app("$setup $parallel_sql $query");
	is($ret, 0, 'parallel: no error');
	is($out, $expected, 'parallel: right result');
	like($err, qr/$fallback\nCONTEXT:  parallel worker/, 'parallel: a worker falls back');
	my @msgs = $err =~ /is not usable by this role/g;
	cmp_ok(scalar(@msgs), '>=', 2, 'parallel: the leader and workers fall back');
	my @warnings = $err =~ /WARNING:  permission denied for tablespace "dax"/g;
	is(scalar(@warnings), 1, 'parallel: one WARNING, from the leader only');
	is(counter() - $before, scalar(@msgs), 'parallel: counted once per process');
	is(spill_places($from), 'default', 'parallel: every spill file in the default tablespace');
	ok(!$dax_tmp_dir->(), 'parallel: nothing was ever written to dax');
}

# temp_tablespaces comes first, as with an empty setting
{
	$node->safe_psql('postgres', 'GRANT CREATE ON TABLESPACE other TO app');
	my $other_oid = $node->safe_psql('postgres',
		"SELECT oid FROM pg_tablespace WHERE spcname = 'other'");
	my $from = log_position($node);
	($ret, $out, $err) = as_app("$setup SET temp_tablespaces = other; $query");
	is($out, $expected, 'temp_tablespaces: right result');
	like($err, qr/spilling to tablespace "other" instead/, 'temp_tablespaces: named as the fallback');
	is(spill_places($from), $other_oid, 'temp_tablespaces: spill files in it');
	ok(!$dax_tmp_dir->(), 'temp_tablespaces: nothing was ever written to dax');
}

# SET: refused at once, as for temp_tablespaces
($ret, $out, $err) = as_app("SET braidsort.spill_tablespace = 'dax'");
like($err, qr/ERROR:  permission denied for tablespace dax/, 'SET by app: permission denied');
($ret, $out, $err) = as_app("SET braidsort.spill_tablespace = 'nope'");
like($err, qr/ERROR:  invalid value for parameter "braidsort.spill_tablespace": "nope"\nDETAIL:  Tablespace "nope" does not exist./,
	'SET: a tablespace that does not exist');
($ret, $out, $err) = as_app("SET braidsort.spill_tablespace = 'pg_default'; SHOW braidsort.spill_tablespace");
is($out, 'pg_default', "SET: the database's default needs no privilege");
($ret, $out, $err) = $node->psql('postgres', "ALTER ROLE app SET braidsort.spill_tablespace = 'nope'");
is($ret, 0, 'ALTER ROLE ... SET: a tablespace that does not exist is accepted');
like($err, qr/NOTICE:  tablespace "nope" does not exist/, 'ALTER ROLE ... SET: with a NOTICE');

# a role default naming a tablespace that does not exist: the role connects
# and falls back
{
	my $from = log_position($node);
	($ret, $out, $err) = as_app("$setup SHOW braidsort.spill_tablespace; $query");
	is($out, "nope\n$expected", 'role default to a missing tablespace: right result');
	like($err, qr/braidsort.spill_tablespace "nope" is not usable by this role, spilling to tablespace "pg_default" instead\nDETAIL:  Tablespace "nope" does not exist./,
		'missing tablespace: DEBUG1 with the reason');
	like($err, qr/WARNING:  tablespace "nope" named by braidsort.spill_tablespace does not exist\nDETAIL:  Spill files go to tablespace "pg_default" instead./,
		'missing tablespace: a WARNING');
	is(spill_places($from), 'default', 'missing tablespace: spill files in the default');
	($ret, $out, $err) = as_app(
		'SELECT setting, tablespace, setting_unusable FROM braidsort.spill_location');
	is($out, 'nope|pg_default|tablespace "nope" does not exist',
		'missing tablespace: spill_location says where spills go, and why');
	$node->safe_psql('postgres', 'ALTER ROLE app RESET braidsort.spill_tablespace');
}

# a tablespace dropped after it was set
{
	my $gone = tempdir(CLEANUP => 1);
	my $from = log_position($node);
	($ret, $out, $err) = $node->psql('postgres', qq{CREATE TABLESPACE gone LOCATION '$gone';
SET braidsort.spill_tablespace = gone; DROP TABLESPACE gone; $setup $query});
	is($out, $expected, 'dropped tablespace: right result');
	like($err, qr/braidsort.spill_tablespace "gone" is not usable by this role.*\nDETAIL:  Tablespace "gone" does not exist./,
		'dropped tablespace: DEBUG1');
	like($err, qr/WARNING:  tablespace "gone" named by braidsort.spill_tablespace does not exist/,
		'dropped tablespace: a WARNING (the name looked up again once it was dropped)');
	is(spill_places($from), 'default', 'dropped tablespace: spill files in the default');
}

# the planner guesses the same device: a profile makes dax look very slow,
# so the cost model leaves the sort to PostgreSQL where spills go to dax,
# and takes it where they would go to the default tablespace (no profile).
# A profile counts only under the emulation it was taken with: the server's
# (every session's, app's too), until the spills below.
my $planq = "EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY k";
$node->safe_psql('postgres', q{ALTER SYSTEM SET braidsort.emulate_read_ns = 20000;
ALTER SYSTEM SET braidsort.emulate_write_ns = 20000; SELECT pg_reload_conf();});
$node->poll_query_until('postgres', 'SHOW braidsort.emulate_write_ns', '20000')
  or die 'the reload did not take';
$node->safe_psql('postgres', q{
SELECT count(*) FROM braidsort.profile_device('dax', size_mb => 16, max_threads => 1);});
like($node->safe_psql('postgres', "SET braidsort.spill_tablespace = ''; $planq"),
	qr/BraidSort/, 'plan: no profile of the default tablespace, braidsort sorts');
unlike($node->safe_psql('postgres', $planq), qr/BraidSort/,
	'plan: spilling to the slow dax, PostgreSQL sorts');
($ret, $out, $err) = as_app($planq);
like($out, qr/BraidSort/, 'plan as app: the guess is the default tablespace, not dax');

# with CREATE on dax, app spills there
{
	$node->safe_psql('postgres', 'GRANT CREATE ON TABLESPACE dax TO app');
	($ret, $out, $err) = as_app($planq);
	unlike($out, qr/BraidSort/, 'plan as app with the grant: the guess is dax');
	$node->safe_psql('postgres', q{ALTER SYSTEM RESET braidsort.emulate_read_ns;
ALTER SYSTEM RESET braidsort.emulate_write_ns; SELECT pg_reload_conf();});
	$node->poll_query_until('postgres', 'SHOW braidsort.emulate_write_ns', '0')
	  or die 'the reload did not take';
	my $before = counter();
	my $from = log_position($node);
	($ret, $out, $err) = as_app("$setup $query");
	is($out, $expected, 'granted: right result');
	unlike($err, qr/not usable/, 'granted: no fallback');
	is(spill_places($from), $dax_oid, 'granted: spill files in dax');
	ok($dax_tmp_dir->(), "granted: dax's temporary directory was made");
	is(counter(), $before, 'granted: no fallback counted');

	# a parallel worker takes its leader's SET as it is (the grant was
	# checked then) and falls back at use if the grant has gone since
	my $revoke = 'psql -XAtq -d "' . $node->connstr('postgres')
	  . '" -c "REVOKE CREATE ON TABLESPACE dax FROM app"';
	($ret, $out, $err) = as_app(qq{SET braidsort.spill_tablespace = dax;
$setup
$parallel_sql
\\! $revoke
$query});
	is($ret, 0, 'revoked after SET: no error, in the leader or the workers');
	like($out, qr/\Q$expected\E$/, 'revoked after SET: right result');
	like($err, qr/not usable by this role.*\nDETAIL:  Role "app" has no CREATE privilege.*\nCONTEXT:  parallel worker/s,
		'revoked after SET: the workers fall back');
}

# The planner's DEBUG1 messages carry estimates from a table's statistics,
# which pg_stats hides from a role that may not read the table; the
# executor refuses the statement only after planning, so for such a
# statement nothing is said.  A table app may read is still explained.
{
	$node->safe_psql('postgres', q{
CREATE TABLE hidden AS SELECT g AS id, g % 7 AS v FROM generate_series(1, 50000) g;
ANALYZE hidden;
});
	my $ask = q{SET client_min_messages = debug1; SET work_mem = '64kB';
SET max_parallel_workers_per_gather = 0;
};
	($ret, $out, $err) = as_app("$ask SELECT * FROM hidden WHERE v = 3 ORDER BY id;");
	like($err, qr/permission denied for table hidden/, 'unreadable table: refused');
	unlike($err, qr/braidsort:/, 'unreadable table: no braidsort message before the refusal');
	($ret, $out, $err) = as_app("$ask SELECT count(*) FROM hidden a JOIN hidden b USING (id);");
	unlike($err, qr/braidsort:/, 'unreadable tables joined: no message');
	($ret, $out, $err) = as_app("$ask SELECT count(*) FROM braidsort.sort_modes('SELECT * FROM hidden ORDER BY id');");
	unlike($err, qr/braidsort:/, 'sort_modes() over an unreadable table: no message');
	($ret, $out, $err) = as_app("$ask SELECT * FROM t ORDER BY 1 LIMIT 0;");
	like($err, qr/braidsort:/, 'a readable table: still explained at debug1');

	# the same statements as the owner are explained
	for my $q (
		'SELECT * FROM hidden WHERE v = 3 ORDER BY id;',
		'SELECT count(*) FROM hidden a JOIN hidden b USING (id);',
		"SELECT count(*) FROM braidsort.sort_modes('SELECT * FROM hidden ORDER BY id');")
	{
		($ret, $out, $err) = $node->psql('postgres', "$ask $q");
		like($err, qr/braidsort:/, "as the owner, explained: $q");
	}
}

# pg_global holds no temporary files, even for a superuser
($ret, $out, $err) = $node->psql('postgres', 'SET braidsort.spill_tablespace = pg_global');
like($err, qr/invalid value for parameter "braidsort.spill_tablespace": "pg_global"\nDETAIL:  Temporary files are never placed in tablespace "pg_global"./,
	'SET to pg_global: refused');

# Every view of the extension is readable by every role.
is($node->safe_psql('postgres', q{
SELECT string_agg(c.relname || '=' || has_table_privilege('public', c.oid, 'select'), ',' ORDER BY c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'braidsort' AND c.relkind = 'v'}),
	'device_profiles=true,progress=true,scheduler=true,spill_location=true,stats=true',
	'PUBLIC may select every view');

$node->stop;

# Beside pgaudit, whose ExecutorCheckPerms_hook writes through state its
# ExecutorStart hook pushes: braidsort's plan-time check of permissions
# must not call that hook (it crashed the backend: no statement was being
# executed yet).  Each statement is audited once, as it runs.
my $audit = braid_node('audit', preload => 'pgaudit, braidsort',
	conf => "pgaudit.log = 'read'\npgaudit.log_client = on\n");
sort_table($audit, 't', 50000);
($ret, $out, $err) = $audit->psql('postgres', q{
SET client_min_messages = debug1;
SET work_mem = '64kB';
SET braidsort.force = on;
SELECT 1;
SELECT count(*) FROM (SELECT * FROM t ORDER BY 2 OFFSET 10) s;
SELECT count(*) FROM braidsort.sort_modes('SELECT * FROM t ORDER BY 2');
});
is($ret, 0, 'with pgaudit: statements run');
like($err, qr/braidsort: Sort replaced/, 'with pgaudit: the sort is explained at debug1');
my @audited = ($err =~ /AUDIT: SESSION,\d+,\d+,READ,SELECT,,,"?SELECT count\(\*\) FROM \(SELECT \* FROM t/g);
is(scalar(@audited), 1, 'with pgaudit: the sort is audited once');
is($audit->safe_psql('postgres', 'SELECT 1'), '1', 'with pgaudit: the server is up');
$audit->stop;
done_testing();
