# 007_docs.pl
#	The SQL examples of README.md and of every docs/*.md run, and return
#	what the documents say they return.
#
#	Each file is its own sequence, on a cluster of its own that preloads
#	braidsort (docs/*.md's also pg_stat_statements) without CREATE
#	EXTENSION: a file's examples create what they use, so that a reader can
#	run any one file's examples from the top.  Its ```sql fenced blocks are
#	run by a superuser, in the file's order, each in a fresh psql session.
#	A block fenced "```sql last" runs after the file's others (uninstall
#	steps), one fenced "```sql skip" never (an example that cannot run
#	here: use sparingly).  Shell commands and configuration snippets are
#	not ```sql.
#
#	A statement ends on the line whose code ends in ";".  Every statement
#	must run without error, unless its documented result is an error.
#	Documented results are checked two ways:
#
#	- A statement whose last line ends in a comment "-- → result" must
#	  print exactly "result" (psql's unaligned output: columns separated
#	  by |; one row); "-- → ERROR:  message" says that the statement fails
#	  with that message, and "-- → DEBUG:  message" (or LOG, INFO, NOTICE,
#	  WARNING) that it succeeds and says that message, among others.
#	- A block fenced "```output" right after a ```sql block (only blank
#	  lines between) holds what that block's last statement shows in psql:
#	  its messages first (NOTICE, DEBUG, ERROR lines and their DETAIL, HINT
#	  and CONTEXT lines), then its rows, unaligned (an EXPLAIN's plan
#	  lines).  Indentation common to all of its lines is ignored.  (The
#	  clusters run without log_statement, whose LOG lines a session at
#	  client_min_messages = debug1 would see.)
#
#	In either, "..." stands for any text within a line, and a line that is
#	only "..." for any number of lines: for figures that vary from machine
#	to machine (times, thread counts) and lines left out.  Other comments
#	are free.
#
#	"/mnt/dax" in the SQL stands for the mount point of the README's DAX
#	recipe: it is replaced by a directory of the test's, where every
#	LOCATION is created first (mode 0700), as the recipe's shell steps do.
#	Roles the SQL grants to (GRANT ... TO name) are created first, unless
#	the file creates them itself.
#
#	After README.md's blocks, the rest of its uninstall steps: with
#	braidsort out of shared_preload_libraries and its settings reset, the
#	server restarts, without braidsort, and removes a leftover spill file.
use strict;
use warnings;
use File::Basename qw(basename);
use File::Path qw(make_path);
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $top = $ENV{TESTDIR} // "$FindBin::Bin/../..";
my $arrow = "\x{e2}\x{86}\x{92}";	# "→" in UTF-8: the files are read as bytes

# parse_doc: the ```sql blocks of a Markdown text ($name in messages), as
# { line, tag, statements => [ { line, sql, code, expect } ], output } (code:
# the sql without comments; output: the lines of the ```output block after
# it, if any); dies on a statement without its ";", a result comment that
# ends no statement, or an ```output block that follows no ```sql block.
sub parse_doc
{
	my ($text, $name) = @_;
	my (@blocks, $block, $stmt, $quote, $output);
	my $after_sql = 0;	# only blank lines since a ```sql block ended
	my $n = 0;

	foreach my $line (split /\n/, $text)
	{
		$n++;
		if (defined $output)
		{
			if ($line =~ /^```\s*$/)
			{
				$blocks[-1]{output} = $output;
				undef $output;
			}
			else
			{
				push @$output, $line;
			}
			next;
		}
		if (!defined $block)
		{
			if ($line =~ /^```sql(?:\s+(\S+))?\s*$/)
			{
				$block = { line => $n, tag => $1 // '', statements => [] };
				$quote = '';
			}
			elsif ($line =~ /^```output\s*$/)
			{
				die "$name line $n: an ```output block must follow a ```sql block\n"
				  unless $after_sql;
				die "$name line $n: the ```sql block before this ```output block has no statement\n"
				  unless @{ $blocks[-1]{statements} };
				$output = [];
			}
			$after_sql = 0 if $line =~ /\S/;
			next;
		}
		if ($line =~ /^```\s*$/)
		{
			die "$name line $stmt->{line}: statement without a final \";\"\n"
			  if defined $stmt;
			push @blocks, $block;
			undef $block;
			$after_sql = 1;
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
			die "$name line $n: write a documented result as \"-- $arrow result\"\n";
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
			die "$name line $n: \"-- $arrow\" must end the line that ends a statement\n";
		}
	}
	die "$name: unterminated ```sql block at line $block->{line}\n"
	  if defined $block;
	die "$name: unterminated ```output block\n" if defined $output;
	return @blocks;
}

# run_block: run a block's statements in one session, going on after an
# error.  Returns, for each statement, { out, err, failed }: what it
# printed, its messages (without psql's "psql:<stdin>:N: " prefix), and
# whether it failed.
sub run_block
{
	my ($node, $block) = @_;
	my $script = '';
	my @stmts = @{ $block->{statements} };

	for my $i (0 .. $#stmts)
	{
		$script .= "\\echo \@\@doc $i\n\\warn \@\@doc $i\n$stmts[$i]{sql}";
	}
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $script, on_error_stop => 0);
	my @res = map { { out => undef, err => '' } } @stmts;
	foreach my $stream (['out', $stdout], ['err', $stderr])
	{
		my ($key, $text) = @$stream;
		my $cur;
		foreach my $line (split /\n/, $text, -1)
		{
			if ($line =~ /^\@\@doc (\d+)$/)
			{
				$cur = $1;
			}
			elsif (defined $cur)
			{
				$line =~ s/^psql:[^:]*:\d+: // if $key eq 'err';
				$res[$cur]{$key} =
				  defined $res[$cur]{$key} && $res[$cur]{$key} ne ''
				  ? "$res[$cur]{$key}\n$line" : $line;
			}
		}
	}
	foreach my $r (@res)
	{
		$r->{out} //= '';
		$r->{err} =~ s/\n+$//;
		$r->{out} =~ s/\n+$//;
		$r->{failed} = $r->{err} =~ /^(?:ERROR|FATAL|PANIC):/m ? 1 : 0;
	}
	return \@res;
}

# line_matches: does a line match a documented line, where "..." stands
# for any text?
sub line_matches
{
	my ($pattern, $line) = @_;
	my $re = join '.*', map { quotemeta } split /\.\.\./, $pattern, -1;

	return $line =~ /^$re$/s;
}

# lines_match: do the lines match the documented ones, where a line that
# is only "..." stands for any number of lines?
sub lines_match
{
	my ($pat, $act, $p, $a) = @_;
	($p, $a) = (0, 0) unless defined $p;
	return $a == @$act if $p == @$pat;
	if ($pat->[$p] eq '...')
	{
		for (my $k = $a; $k <= @$act; $k++)
		{
			return 1 if lines_match($pat, $act, $p + 1, $k);
		}
		return 0;
	}
	return 0 if $a == @$act || !line_matches($pat->[$p], $act->[$a]);
	return lines_match($pat, $act, $p + 1, $a + 1);
}

# trim_lines: lines without trailing blanks nor the indentation common to
# all of them ("..." lines and empty lines aside)
sub trim_lines
{
	my @lines = map { my $l = $_; $l =~ s/\s+$//; $l } @_;
	my $indent;
	foreach (@lines)
	{
		next if $_ eq '' || /^\s*\.\.\.$/;
		my ($lead) = /^(\s*)/;
		$indent = length $lead if !defined $indent || length $lead < $indent;
	}
	$indent //= 0;
	return map { /^\s*\.\.\.$/ ? '...' : substr($_, $indent < length $_ ? $indent : length $_) }
	  @lines;
}

# check_result: is a statement's result what its "-- →" comment says?
# Returns an error text, or undef.
sub check_result
{
	my ($stmt, $res) = @_;
	my $expect = $stmt->{expect};

	if ($expect =~ /^(?:DEBUG|LOG|INFO|NOTICE|WARNING):/)
	{
		return "it failed:\n$res->{err}" if $res->{failed};
		return (grep { line_matches($expect, $_) } split /\n/, $res->{err}) ? undef
		  : "its messages were:\n$res->{err}\nnot \"$expect\"";
	}
	if ($expect =~ /^ERROR:/)
	{
		return "it did not fail (expected: $expect)" unless $res->{failed};
		my ($error) = grep { /^ERROR:/ } split /\n/, $res->{err};
		return line_matches($expect, $error) ? undef : "it failed with \"$error\", not \"$expect\"";
	}
	return "it failed:\n$res->{err}" if $res->{failed};
	return line_matches($expect, $res->{out}) ? undef : "it printed \"$res->{out}\", not \"$expect\"";
}

# as_documented: what a statement showed, in the form the documents show
# it, which is PostgreSQL 15's: from 18 on, EXPLAIN ANALYZE shows rows with
# two decimals and buffers by default (left out unless the document shows
# buffers), and EXPLAIN (SETTINGS) lists settings in another order (sorted
# by name here, as 15 lists them)
sub as_documented
{
	my ($want, @lines) = @_;
	my $buffers = grep { /^\s*Buffers: / } @$want;
	my @out;

	for (my $i = 0; $i < @lines; $i++)
	{
		my $line = $lines[$i];

		$line =~ s/\b(rows=\d+)\.00(?= loops=)/$1/g;
		if (!$buffers)
		{
			next if $line =~ /^\s*Buffers: /;
			next if $line =~ /^\s*Planning:$/ && ($lines[ $i + 1 ] // '') =~ /^\s*Buffers: /;
		}
		if ($line =~ /^(\s*Settings: )(.*)$/)
		{
			my ($head, $list) = ($1, $2);
			$line = $head . join(', ', sort split /, (?=[\w.]+ = ')/, $list);
		}
		push @out, $line;
	}
	return @out;
}

# check_output: is what a statement showed (messages, then rows) what the
# ```output block after it says?  Returns an error text, or undef.
sub check_output
{
	my ($output, $res) = @_;
	my @want = trim_lines(@$output);
	my @got = trim_lines(as_documented(\@want, (grep { $_ ne '' } split /\n/, $res->{err}),
			split /\n/, $res->{out}));

	return lines_match(\@want, \@got) ? undef
	  : "it showed:\n" . join("\n", @got) . "\nnot:\n" . join("\n", @want);
}

# the harness itself: it sees a wrong result, an error and the fences
{
	my $node = braid_node('harness', extension => 0);
	my @b = parse_doc("```sql\nSELECT 1;  -- $arrow 2\nSELECT 'a--b',\n 2; -- $arrow a--b|2\n```\n"
		  . "```sh\nfalse\n```\n```sql last\nSELECT nosuch;\n```\n```sql skip\nSELECT 3;\n```\n"
		  . "```sql\nSELECT 4 / 0; -- $arrow ERROR:  division by zero\n"
		  . "EXPLAIN (COSTS OFF) SELECT * FROM pg_class ORDER BY relname;\n```\n\n"
		  . "```output\n Sort\n   Sort Key: ...\n   ...\n```\n", 'harness');
	is(join(',', map { "$_->{tag}:" . scalar(@{ $_->{statements} }) } @b),
		':2,last:1,skip:1,:2', 'harness: parses the blocks, their tags and statements');
	is($b[0]{statements}[1]{expect}, 'a--b|2', 'harness: comments start outside quotes');
	my $res = run_block($node, $b[0]);
	ok(defined check_result($b[0]{statements}[0], $res->[0])
		  && !defined check_result($b[0]{statements}[1], $res->[1]),
		'harness: a wrong documented result is told from a right one');
	$res = run_block($node, $b[1]);
	ok($res->[0]{failed} && $res->[0]{err} =~ /^ERROR:  column "nosuch" does not exist/,
		'harness: a failing statement is found');
	$res = run_block($node, $b[3]);
	ok(!defined check_result($b[3]{statements}[0], $res->[0]) && !$res->[1]{failed},
		'harness: a documented error is checked, and the block goes on after it');
	ok(!defined check_result({ expect => 'NOTICE:  hello...' },
			run_block($node, { statements => [ { sql => "DO \$\$BEGIN RAISE NOTICE 'hello world'; END\$\$;\n" } ] })->[0])
		  && defined check_result({ expect => 'NOTICE:  bye' }, $res->[0]),
		'harness: a documented message is checked');
	ok(!defined check_output($b[3]{output}, $res->[1]),
		'harness: an output block is checked, with "..." for any text and any lines');
	ok(defined check_output([' Sort', '   Sort Key: relkind'], $res->[1])
		  && defined check_output([' Sort'], $res->[1]),
		'harness: a wrong output block is told from a right one');
	ok(!eval { parse_doc("```sql\nSELECT 1  -- $arrow 1\n;\n```\n", 'harness'); 1 },
		'harness: a result comment that ends no statement is refused');
	ok(!eval { parse_doc("```sql\nSELECT 1;  -- \\x01\n```\n", 'harness'); 1 },
		'harness: a result written another way is refused');
	ok(!eval { parse_doc("```sql\nSELECT 1;\n```\ntext\n```output\n1\n```\n", 'harness'); 1 },
		'harness: an output block that follows no ```sql block is refused');
	$node->stop;
}

# run_file: run a file's blocks on a new cluster; returns the cluster and
# the directory standing for /mnt/dax
sub run_file
{
	my ($path, %opts) = @_;
	my $name = $path =~ m{(?:^|/)(docs/[^/]+)$} ? $1 : basename($path);
	(my $tag = lc $name) =~ s/\W+/_/g;
	my @blocks = parse_doc(slurp_file($path), $name);
	my @run = ((grep { $_->{tag} eq '' } @blocks), (grep { $_->{tag} eq 'last' } @blocks));
	my @stmts = map { @{ $_->{statements} } } @run;
	my $documented = (grep { defined $_->{expect} } @stmts) + (grep { $_->{output} } @run);

	foreach my $b (@blocks)
	{
		die "$name line $b->{line}: unknown ```sql tag \"$b->{tag}\"\n"
		  unless $b->{tag} =~ /^(|last|skip)$/;
	}
	ok(@run >= $opts{min_blocks}, scalar(@run) . " ```sql blocks of $name to run, "
		  . scalar(@stmts) . " statements, $documented documented results");
	return () unless @run;

	my $node = braid_node($tag, extension => 0, conf => "log_statement = none\n",
		%{ $opts{node} // {} });

	# the DAX recipe's mount point, and the roles the SQL grants to (but
	# does not create itself)
	my $mount = dax_dir($tag);
	my (%roles, %created);
	foreach my $s (@stmts)
	{
		$created{ lc $1 } = 1 while $s->{code} =~ /\bCREATE\s+(?:ROLE|USER)\s+(\w+)/gi;
	}
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
				$roles{$_} = 1
				  unless /^(public|current_user|current_role|session_user)$/i || $created{ lc $_ };
			}
		}
	}
	$node->safe_psql('postgres', "CREATE ROLE $_") foreach sort keys %roles;

	foreach my $b (@run)
	{
		my $res = run_block($node, $b);
		my @s = @{ $b->{statements} };
		my ($failed) = grep {
			$res->[$_]{failed} && !(defined $s[$_]{expect} && $s[$_]{expect} =~ /^ERROR:/)
		} 0 .. $#s;
		ok(!defined $failed, "$name block at line $b->{line} runs")
		  or diag("$name line $s[$failed]{line} failed:\n$s[$failed]{sql}$res->[$failed]{err}");
		for my $i (0 .. $#s)
		{
			next unless defined $s[$i]{expect};
			my ($first) = split /\n/, $s[$i]{sql};
			my $error = check_result($s[$i], $res->[$i]);
			ok(!defined $error, "$name line $s[$i]{line}: $first")
			  or diag($error);
		}
		if ($b->{output})
		{
			my $error = check_output($b->{output}, $res->[-1]);
			ok(!defined $error, "$name line $s[-1]{line}: the output shown after it")
			  or diag($error);
		}
	}
	return ($node, $mount);
}

# every docs/*.md, each on its own cluster
foreach my $path (sort glob("$top/docs/*.md"))
{
	my ($node) = run_file($path, min_blocks => 0,
		node => { preload => 'braidsort, pg_stat_statements' });
	$node->stop if defined $node;
}

# README.md, then the rest of its uninstall steps
my ($node, $mount) = run_file("$top/README.md", min_blocks => 3);
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
