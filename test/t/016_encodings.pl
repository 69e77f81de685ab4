# 016_encodings.pl
#	Sorts of text in databases whose encoding is not UTF-8: under an ICU
#	collation (the database's default, or a column's), which braidsort
#	encodes through UTF-16 where PostgreSQL lets it (15, 17) and leaves to
#	PostgreSQL on 18 (its conversion is no longer exported); under a libc
#	collation; and as bytes (C).  Each forced sort returns PostgreSQL's
#	rows in PostgreSQL's order, and is taken or declined as the major
#	allows.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib "$FindBin::RealBin/../perl";
use BraidsortTest;

my $node = braid_node('enc', extension => 0);
my $version = $node->safe_psql('postgres', 'SHOW server_version_num');
my $icu_encodes = $version < 180000;

$node->safe_psql('postgres', q{
CREATE DATABASE lat_icu TEMPLATE template0 ENCODING 'LATIN1'
	LOCALE_PROVIDER icu ICU_LOCALE 'de' LOCALE 'C';
CREATE DATABASE lat_c TEMPLATE template0 ENCODING 'LATIN1' LOCALE 'C';
});

# strings of letters that the collations order differently: cases, umlauts,
# accents, sharp s, spaces and digits
my $table = q{
CREATE TABLE words AS
SELECT g AS id,
	   (SELECT string_agg(chr((ARRAY[65, 97, 90, 122, 228, 196, 246, 214, 252, 223, 233, 201,
								   32, 48, 57, 111, 79, 117, 85])[1 + (g * 7 + i * 13 + g / (i + 1)) % 19]), '')
		FROM generate_series(1, 1 + g % 9) i) AS s
FROM generate_series(1, 3000) g;
ANALYZE words;
};

# check($db, $order, $what, $taken): the forced sort's rows against
# PostgreSQL's, and whether braidsort took it
sub check
{
	my ($db, $order, $what, $taken) = @_;
	my $query = "SELECT s, id FROM words ORDER BY $order, id";
	my $plan = $node->safe_psql($db, "SET braidsort.force = on; EXPLAIN (COSTS OFF) $query");
	is($plan =~ /Custom Scan \(BraidSort\)/ ? 'taken' : 'declined',
		$taken ? 'taken' : 'declined',
		"$what: " . ($taken ? 'taken' : 'left to PostgreSQL'));
	is($node->safe_psql($db, "SET braidsort.force = on; $query"),
		$node->safe_psql($db, "SET braidsort.enable = off; $query"),
		"$what: PostgreSQL's rows in PostgreSQL's order");
}

$node->safe_psql($_, $table) for qw(lat_icu lat_c);

check('lat_icu', 's', 'LATIN1, ICU default collation', $icu_encodes);
check('lat_icu', 's DESC', 'LATIN1, ICU default collation, descending', $icu_encodes);
check('lat_icu', 's COLLATE "C"', 'LATIN1, C collation', 1);
check('lat_c', 's COLLATE "de-x-icu"', 'LATIN1, an ICU column collation', $icu_encodes);
check('lat_c', 's', 'LATIN1, C default collation', 1);
is($node->safe_psql('lat_icu', q{SELECT count(DISTINCT s) > 1000 FROM words}), 't',
	'the words are many and varied');

$node->stop;
done_testing();
