# 007_readme.pl
#	The README's SQL examples run, and return what it says they return.
#
#	Every ```sql fenced block of README.md is run by a superuser, in the
#	README's order, each in a fresh psql session that stops at the first
#	error, on a cluster that preloads braidsort.  A block fenced
#	"```sql last" runs after all the others (the uninstall steps), one
#	fenced "```sql skip" never (for an example that cannot run here: use
#	sparingly).  Shell commands and configuration snippets are not ```sql.
#
#	A statement ends on the line whose code ends in ";".  If that line ends
#	in a comment "-- → result", the statement must print exactly "result"
#	(psql's unaligned output: columns separated by |; one row).  Other
#	comments are free.  Every statement must run without error.
#
#	"/mnt/dax" in the SQL stands for the mount point of the README's DAX
#	recipe: it is replaced by a directory of the test's, where every
#	LOCATION is created first (mode 0700), as the recipe's shell steps do.
#	Roles the SQL grants to (GRANT ... TO name) are created first.
#
#	After the blocks, the rest of the README's uninstall steps: with
#	braidsort out of shared_preload_libraries and its settings reset, the
#	server restarts, without braidsort, and removes a leftover spill file.
use strict;
use warnings;
use File::Path qw(make_path);
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $readme_path = ($ENV{TESTDIR} // "$FindBin::Bin/../..") . '/README.md';
my $arrow = "\x{e2}\x{86}\x{92}";	# "→" in UTF-8: the files are read as bytes

# parse_readme: the ```sql blocks of a Markdown text, as
# { line, tag, statements => [ { line, sql, code, expect } ] } (code: the
# sql without comments); dies on a
# statement without its ";" or a result comment that ends no statement.
sub parse_readme
{
	my ($text) = @_;
	my (@blocks, $block, $stmt, $quote);
	my $n = 0;

	foreach my $line (split /\n/, $text)
	{
		$n++;
		if (!defined $block)
		{
			if ($line =~ /^```sql(?:\s+(\S+))?\s*$/)
			{
				$block = { line => $n, tag => $1 // '', statements => [] };
				$quote = '';
			}
			next;
		}
		if ($line =~ /^```\s*$/)
		{
			die "README.md line $stmt->{line}: statement without a final \";\"\n"
			  if defined $stmt;
			push @blocks, $block;
			undef $block;
			next;
		}

		# split the line into code and a "--" comment outside quotes
		my ($code, $comment) = ($line, '');
		for (my $i = 0; $i < length $line; $i++)
		{
			my $c = substr($line, $i, 1);
			if ($quote ne '')
			{
				$quote = '' if $c eq $quote;
			}
			elsif ($c eq "'" || $c eq '"')
			{
				$quote = $c;
			}
			elsif (substr($line, $i, 2) eq '--')
			{
				($code, $comment) = (substr($line, 0, $i), substr($line, $i));
				last;
			}
		}
		my $expect;
		if ($comment =~ /^--\s*\Q$arrow\E\s?(.*?)\s*$/)
		{
			$expect = $1;
		}
		elsif ($comment =~ /^--\s*(?:->|=>|returns\b|\\x)/)
		{
			die "README.md line $n: write a documented result as \"-- $arrow result\"\n";
		}

		if ($code =~ /\S/)
		{
			$stmt //= { line => $n, sql => '', code => '' };
			$stmt->{sql} .= "$line\n";
			$stmt->{code} .= "$code\n";
		}
		if ($quote eq '' && $code =~ /;\s*$/)
		{
			$stmt->{expect} = $expect;
			push @{ $block->{statements} }, $stmt;
			undef $stmt;
		}
		elsif (defined $expect)
		{
			die "README.md line $n: \"-- $arrow\" must end the line that ends a statement\n";
		}
	}
	die "README.md: unterminated ```sql block at line $block->{line}\n"
	  if defined $block;
	return @blocks;
}

# run_block: run a block's statements in one session; returns the index
# of the statement that failed (undef if none), psql's stderr, and each
# statement's output.
sub run_block
{
	my ($node, $block) = @_;
	my $script = '';
	my @stmts = @{ $block->{statements} };

	for my $i (0 .. $#stmts)
	{
		$script .= "\\echo \@\@readme $i\n$stmts[$i]{sql}";
	}
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $script);
	my (@out, $cur);
	foreach my $line (split /\n/, $stdout, -1)
	{
		if ($line =~ /^\@\@readme (\d+)$/)
		{
			$cur = $1;
			$out[$cur] = undef;
		}
		elsif (defined $cur)
		{
			$out[$cur] = defined $out[$cur] ? "$out[$cur]\n$line" : $line;
		}
	}
	$_ //= '' foreach @out;
	return ($ret == 0 ? undef : $cur // 0, $stderr, \@out);
}

# the README's blocks create the extension themselves
my $node = braid_node('readme', extension => 0);

# the harness itself: it sees a wrong result, an error and the fences
{
	my @b = parse_readme("```sql\nSELECT 1;  -- $arrow 2\nSELECT 'a--b',\n 2; -- $arrow a--b|2\n```\n"
		  . "```sh\nfalse\n```\n```sql last\nSELECT nosuch;\n```\n```sql skip\nSELECT 3;\n```\n");
	is(join(',', map { "$_->{tag}:" . scalar(@{ $_->{statements} }) } @b),
		':2,last:1,skip:1', 'harness: parses the blocks, their tags and statements');
	is($b[0]{statements}[1]{expect}, 'a--b|2', 'harness: comments start outside quotes');
	my ($failed, $err, $out) = run_block($node, $b[0]);
	ok(!defined $failed && $out->[0] eq '1' && $out->[0] ne $b[0]{statements}[0]{expect}
		  && $out->[1] eq $b[0]{statements}[1]{expect},
		'harness: a wrong documented result is told from a right one');
	($failed, $err) = run_block($node, $b[1]);
	ok(defined $failed && $failed == 0 && $err =~ /column "nosuch" does not exist/,
		'harness: a failing statement is found');
	ok(!eval { parse_readme("```sql\nSELECT 1  -- $arrow 1\n;\n```\n"); 1 },
		'harness: a result comment that ends no statement is refused');
	ok(!eval { parse_readme("```sql\nSELECT 1;  -- \\x01\n```\n"); 1 },
		'harness: a result written another way is refused');
}

my @blocks = parse_readme(slurp_file($readme_path));
my @run = ((grep { $_->{tag} eq '' } @blocks), (grep { $_->{tag} eq 'last' } @blocks));
my @stmts = map { @{ $_->{statements} } } @run;
my $documented = grep { defined $_->{expect} } @stmts;
ok(@run >= 3, scalar(@run) . ' ```sql blocks of README.md to run');
ok($documented >= 3, "$documented documented results to check");
foreach my $b (@blocks)
{
	die "README.md line $b->{line}: unknown ```sql tag \"$b->{tag}\"\n"
	  unless $b->{tag} =~ /^(|last|skip)$/;
}

# the DAX recipe's mount point, and the roles it grants to
my $mount = dax_dir('readme');
my %roles;
foreach my $s (@stmts)
{
	$s->{$_} =~ s{/mnt/dax}{$mount}g foreach ('sql', 'code');
	while ($s->{code} =~ /\bLOCATION\s+'([^']+)'/gi)
	{
		make_path($1, { mode => 0700 });
	}
	if ($s->{code} =~ /\bGRANT\b.*\bTO\s+([^;]+)/is)
	{
		foreach (split /\s*,\s*/, $1)
		{
			s/\s.*//s;
			$roles{$_} = 1 unless /^(public|current_user|current_role|session_user)$/i;
		}
	}
}
$node->safe_psql('postgres', "CREATE ROLE $_") foreach sort keys %roles;

foreach my $b (@run)
{
	my ($failed, $err, $out) = run_block($node, $b);
	my @s = @{ $b->{statements} };
	ok(!defined $failed, "README.md block at line $b->{line} runs")
	  or diag("README.md line $s[$failed]{line} failed:\n$s[$failed]{sql}$err");
	for my $i (0 .. $#s)
	{
		next unless defined $s[$i]{expect};
		my ($first) = split /\n/, $s[$i]{sql};
		is($out->[$i], $s[$i]{expect}, "README.md line $s[$i]{line}: $first");
	}
}

# the rest of the uninstall steps
is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'braidsort')
	 + (SELECT count(*) FROM pg_namespace WHERE nspname = 'braidsort')}),
	'0', 'after the README\'s uninstall block the extension and its schema are gone');
my ($tmpdir) = glob("$mount/pg/PG_*");
ok(defined $tmpdir, 'the README\'s tablespace is where the recipe put it');
$tmpdir .= '/pgsql_tmp';
mkdir $tmpdir;
my $leftover = "$tmpdir/pgsql_tmp4000000.braid0";
open(my $fh, '>', $leftover) or die "could not create $leftover: $!";
close $fh;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET braidsort.spill_tablespace');
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'), '',
	'the server restarts without braidsort');
ok(!-e $leftover, 'the restart removed a leftover spill file');
ok(-e $node->data_dir . '/braidsort_profiles',
	'the profiles file the README says to remove is there');

$node->stop;
done_testing();
