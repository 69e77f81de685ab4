# 012_random.pl
#	Randomized differential testing (test/random/differential.py): random
#	tables of every supported type and random queries over them (sorts,
#	GROUP BY, DISTINCT, windows, merge and hash joins, set operations,
#	subqueries, scroll cursors, OFFSET), each run with braidsort off and
#	forced (a quarter of them as shipped: sorts taken adaptively) under
#	random memory, modes and parallel settings, compared allowing only the
#	freedom PostgreSQL has.  A seeded batch bounded in
#	time; BRAID_RANDOM_SEED, BRAID_RANDOM_SECONDS and BRAID_RANDOM_CASE
#	(scripts/random-test.sh sets them) run another.  Then: no spill file
#	is left, and the server never restarted.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $seed = $ENV{BRAID_RANDOM_SEED} // 20261125;
my $seconds = $ENV{BRAID_RANDOM_SECONDS} // 90;
my $case = $ENV{BRAID_RANDOM_CASE};

my $node = braid_node('random', extension => 0);
my $dax = dax_tablespace($node, 'random');
$node->safe_psql('postgres', q{ALTER SYSTEM SET braidsort.spill_tablespace = 'dax';
ALTER SYSTEM SET temp_tablespaces = 'dax'; SELECT pg_reload_conf();});
# the database's default collation a libc one, as most clusters have it
$node->safe_psql('postgres',
	q{CREATE DATABASE fuzz TEMPLATE template0 ENCODING 'UTF8' LOCALE 'en_US.UTF-8'});
$node->safe_psql('fuzz', 'CREATE EXTENSION braidsort');

my @cmd = ('/usr/bin/python3', "$FindBin::RealBin/../random/differential.py",
	'--dsn', $node->connstr('fuzz'), '--seed', $seed, '--seconds', $seconds);
push @cmd, '--case', $case if defined $case;
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
note $out;
diag $err if $err ne '';
ok($ok, "seed $seed: every case gave a result PostgreSQL could have given")
  or diag $out;
like($out, qr/^seed $seed: \d+ cases in/m, 'the batch ran to its end');

is(count_spill_files($dax), 0, 'no spill file is left');
unlike(slurp_file($node->logfile), qr/terminated by signal|reinitializing|PANIC/,
	'no backend crashed, the server never restarted');

$node->stop;
done_testing();
