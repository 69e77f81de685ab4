# 017_declines.pl
#	braidsort.log_declines: a Sort left to PostgreSQL on cost is reported
#	with its estimates and the margin the cost model applied, at NOTICE to
#	the client or at LOG in the server log, as is an adaptive sort whose
#	switch is declined at run time; "log" is for superusers (refused in a
#	session, a connection's options and a role's own defaults, honoured
#	when a superuser sets it for a role or grants SET on it); a hash join
#	whose table fits in memory is no decline.  sort_modes() shows
#	PostgreSQL's estimate beside the modes, and the rule: a sort is taken
#	when MergePass's estimate is at most 0.85 of it.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('declines');
dax_tablespace($node, 'declines');
$node->append_conf('postgresql.conf', "braidsort.spill_tablespace = 'dax'\n");
$node->reload;
$node->safe_psql('postgres', q{
CREATE TABLE t AS
SELECT (g * 7919) % 100003 AS k, g AS id, md5(g::text) AS pad
FROM generate_series(1, 200000) g;
ANALYZE t;
CREATE ROLE app LOGIN;
GRANT SELECT ON t TO app;
});

# 300,000 integers from generate_series (whose row count the planner
# knows) sorted at work_mem 1MB: PostgreSQL's external sort of such narrow
# rows is estimated well below braidsort's, which keeps them in a value log
my $slow = q{SET work_mem = '1MB';};
my $plan = 'EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 300000) g ORDER BY g DESC';
my $decline = qr/braidsort: Sort left to PostgreSQL: [^\n]* \(braidsort (\d+) ms, PostgreSQL (\d+) ms estimated for 300000 rows; braidsort takes a sort only if its estimate is at most 85% of PostgreSQL's, (\d+) ms\)/;

my ($ret, $out, $err) = $node->psql('postgres', "$slow $plan");
unlike($out, qr/BraidSort/, 'the sort is left to PostgreSQL');
unlike($err, qr/braidsort:/, 'log_declines = off: nothing said');

($ret, $out, $err) = $node->psql('postgres', "$slow SET braidsort.log_declines = notice; $plan");
like($err, qr/NOTICE:  $decline/, 'notice: the decline, its estimates and the margin');
if ($err =~ $decline)
{
	cmp_ok($1, '>', 0.85 * $2, "braidsort's estimate is above the margin ($1 ms against $2 ms)");
	cmp_ok(abs($3 - 0.85 * $2), '<=', 1, "the margin is 0.85 of PostgreSQL's estimate ($3 ms)");
}

my $from = log_position($node);
($ret, $out, $err) = $node->psql('postgres', "$slow SET braidsort.log_declines = log; $plan");
unlike($err, qr/braidsort:/, 'log: not sent to the client');
like(log_since($node, $from), qr/LOG:  $decline/, 'log: written to the server log');

# an adaptive sort (a PL/pgSQL function, estimated at 1000 rows) whose
# switch the cost model declines at run time
$node->safe_psql('postgres', q{CREATE FUNCTION many(n int) RETURNS SETOF int
LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY SELECT generate_series(1, n); END $$});
($ret, $out, $err) = $node->psql('postgres', qq{$slow SET braidsort.log_declines = notice;
SELECT count(*) FROM (SELECT * FROM many(300000) g ORDER BY g DESC OFFSET 0) s});
is($out, '300000', 'the adaptive sort returns its rows');
like($err,
	qr/NOTICE:  braidsort: adaptive sort left to PostgreSQL's external sort after \d+ rows: [^\n]*; braidsort takes a sort only if its estimate is at most 85% of PostgreSQL's, [\d.]+ ms\)/,
	'notice: the switch declined at run time, with the margin');

# a hash join whose table fits in memory is no decline
($ret, $out, $err) = $node->psql('postgres', q{SET braidsort.log_declines = notice;
SELECT count(*) FROM t a JOIN (SELECT * FROM t WHERE id < 100) b ON a.id = b.id});
is($out, '99', 'a small hash join');
unlike($err, qr/braidsort:/, 'an in-memory hash join is not reported');

# "log" is for superusers
($ret, $out, $err) = $node->psql('postgres', 'SET braidsort.log_declines = log',
	extra_params => [ '-U', 'app' ]);
like($err, qr/ERROR:  permission denied to set parameter "braidsort.log_declines" to "log"/,
	'SET to log by a role that is not a superuser: refused');
($ret, $out, $err) = $node->psql('postgres', 'SET braidsort.log_declines = notice; SHOW braidsort.log_declines',
	extra_params => [ '-U', 'app' ]);
is($out, 'notice', 'notice is for everyone');
{
	local $ENV{PGOPTIONS} = '-c braidsort.log_declines=log';
	($ret, $out, $err) = $node->psql('postgres', 'SELECT 1', extra_params => [ '-U', 'app' ]);
}
like($err, qr/permission denied to set parameter "braidsort.log_declines" to "log"/,
	"in the connection's options: refused");
($ret, $out, $err) = $node->psql('postgres', 'ALTER ROLE app SET braidsort.log_declines = log',
	extra_params => [ '-U', 'app' ]);
like($err, qr/permission denied to set parameter "braidsort.log_declines" to "log"/,
	"in the role's own defaults: refused");
$node->safe_psql('postgres', 'CREATE ROLE granted LOGIN; GRANT SET ON PARAMETER braidsort.log_declines TO granted');
($ret, $out, $err) = $node->psql('postgres', 'SET braidsort.log_declines = log; SHOW braidsort.log_declines',
	extra_params => [ '-U', 'granted' ]);
is($out, 'log', 'a role granted SET on the parameter may ask for log');

# set by a superuser for the role, its declines go to the server log
$node->safe_psql('postgres', 'ALTER ROLE app SET braidsort.log_declines = log');
$from = log_position($node);
($ret, $out, $err) = $node->psql('postgres',
	"EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY k * interval '1 second'",
	extra_params => [ '-U', 'app' ]);
is($ret, 0, 'the role connects with the setting a superuser made');
like(log_since($node, $from), qr/LOG:  braidsort: Sort left to PostgreSQL: type interval has no exact key encoding/,
	"the role's declines are in the server log");
unlike($err, qr/braidsort:/, 'and not sent to its client');
$node->safe_psql('postgres', 'ALTER ROLE app RESET braidsort.log_declines');

# sort_modes(): PostgreSQL's estimate beside the modes; a sort is taken
# when MergePass's estimate is below 0.85 of it
# (whether this sort is taken depends on the CPUs: if it is, its rows must
# say why)
my $taken = $node->safe_psql('postgres', q{SET work_mem = '1MB';
SELECT count(*), bool_and(postgresql_ms > 0),
	   bool_and(compared_ms <= 0.85 * postgresql_ms) FILTER (WHERE mode = 'mergepass')
FROM braidsort.sort_modes('SELECT * FROM t ORDER BY k')});
ok($taken eq '4|t|t' || $taken eq '0||', "sort_modes: a sort taken is within the margin ($taken)");
is($node->safe_psql('postgres', qq{$slow SET braidsort.force = on;
SELECT bool_and(compared_ms >= 0.85 * postgresql_ms) FILTER (WHERE mode = 'mergepass')
FROM braidsort.sort_modes('SELECT * FROM generate_series(1, 300000) g ORDER BY g DESC')}),
	't', 'sort_modes: a sort declined but forced is above it');
is($node->safe_psql('postgres', q{
SELECT count(*), bool_and(postgresql_ms IS NULL AND compared_ms IS NULL)
FROM braidsort.sort_modes('SELECT * FROM t WHERE id < 100 ORDER BY k')}),
	'4|t', 'sort_modes: a sort taken adaptively has no estimates');

$node->stop;
done_testing();
