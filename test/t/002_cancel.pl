# 002_cancel.pl
#	A BraidSort cancelled in any phase (build, sort, gather; in memory or in
#	the tuplesort fallback) leaves the session usable, holds no buffers and
#	leaves no temporary files behind.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('cancel', extension => 0);
sort_table($node, 't', 600000, id => 0);

my $query = 'SELECT count(*), sum(length(v)) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s';
my $expected = reference_result($node, $query);

# onepass: small gather batches; fallback: runs spilled; offload: the
# sorted refs go to the device (a budget where that saves a gather pass);
# mergeahead: runs spilled, made from half the IndexMap on a helper thread
# while the scan goes on, and large gather batches, each gathered while a
# helper merges the next; ring: shared buffers too small for the
# table, so the gather reads through a buffer ring and streams pages to a
# copier thread; ringstream: the same through a read stream (17+, off by
# default; before 17 the setting changes nothing), on the 16MB of shared
# buffers the ring mode, just before it, restarted the server with
foreach my $mode ('onepass', 'fallback', 'offload', 'mergeahead', 'ring', 'ringstream')
{
	my $setup = 'SET braidsort.force = on;';
	$setup .= ' SET braidsort.gather_batch = 256;'
	  unless $mode eq 'offload' || $mode eq 'mergeahead';
	$setup .= ' SET braidsort.work_mem = 1024;' if $mode eq 'fallback';
	$setup .= ' SET braidsort.gather_read_stream = on;' if $mode eq 'ringstream';
	$setup .= ' SET braidsort.work_mem = 20480;' if $mode eq 'offload';
	$setup .= ' SET braidsort.work_mem = 4096; SET braidsort.sort_threads = 2;'
	  if $mode eq 'mergeahead';
	if ($mode eq 'mergeahead')
	{
		# shared buffers large enough for the gather to pin chunks of pages
		# and copy them with helpers (only then does one merge ahead)
		$node->append_conf('postgresql.conf', 'shared_buffers = 1GB');
		$node->restart;
	}
	if ($mode eq 'ring')
	{
		$node->append_conf('postgresql.conf', 'shared_buffers = 16MB');
		$node->restart;
	}
	if ($mode eq 'offload')
	{
		like($node->safe_psql('postgres',
				"$setup EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $query"),
			qr/Sorted Refs: device/, "offload: the refs go to the device");
	}

	if ($mode eq 'mergeahead')
	{
		# how much a helper merges depends on timing: any of three sorts
		my $ahead = 0;
		for (my $try = 0; $try < 3 && !$ahead; $try++)
		{
			($ahead) = $node->safe_psql('postgres',
				"$setup EXPLAIN (ANALYZE, COSTS OFF) $query") =~ /Rows Merged Ahead: (\d+)/;
			$ahead //= 0;
		}
		cmp_ok($ahead, '>', 0, "mergeahead: a helper merges ahead ($ahead rows)");
		# 4 runs of the whole IndexMap, or more of halves made on a helper
		my ($runs) = $node->safe_psql('postgres',
			"$setup EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $query") =~ /Runs: (\d+)/;
		cmp_ok($runs, '>', 4, "mergeahead: runs made during the scan ($runs)");
	}

	like($node->safe_psql('postgres', "$setup EXPLAIN $query"),
		qr/BraidSort/, "$mode: plan uses BraidSort");

	# later timeouts reach the gather of the slower modes
	my @timeouts =
	    $mode =~ /^ring/ ? (10, 150, 400, 700, 1000)
	  : $mode eq 'mergeahead' ? (10, 100, 200, 300, 450, 600, 800)
	  : (10, 60, 150, 300);
	foreach my $timeout (@timeouts)
	{
		my ($ret, $stdout, $stderr) = $node->psql('postgres',
			"$setup SET statement_timeout = $timeout; $query");
		if ($ret == 0)
		{
			# finished before the timeout: the result must still be right
			is($stdout, $expected, "$mode, timeout ${timeout}ms: finished, correct");
		}
		else
		{
			like($stderr, qr/canceling statement due to statement timeout/,
				"$mode, timeout ${timeout}ms: cancelled cleanly");
		}
		is($node->safe_psql('postgres',
				"SELECT count(*) FROM pg_ls_tmpdir()"),
			'0', "$mode, timeout ${timeout}ms: no temporary files left");
	}

	# in one session: cancel, then run to completion
	my $out = $node->safe_psql('postgres', qq{
$setup
SET statement_timeout = 50;
DO \$\$ BEGIN PERFORM count(*) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s;
EXCEPTION WHEN query_canceled THEN NULL; END \$\$;
RESET statement_timeout;
$query;
});
	is($out, $expected, "$mode: same session sorts correctly after a cancel");
}

my $log = slurp_file($node->logfile);
unlike($log, qr/buffer refcount leak|resource was not closed|temporary file leak/,
	'no leaked buffers, resources or temporary files reported');

$node->stop;
done_testing();
