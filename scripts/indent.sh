#!/usr/bin/env bash
# indent.sh: pgindent over braidsort's C sources ("make indent").
#
#	bash scripts/indent.sh [--check] [--typedefs] [FILE...]
#
# Lays the sources out as PostgreSQL's are: PostgreSQL's pgindent (a Perl
# script) with pg_bsd_indent 2.1.2 and a list of typedef names, PostgreSQL's
# own (src/tools/pgindent/typedefs.list) and braidsort's (typedefs.list at
# the top of the tree, kept with the sources: --typedefs rewrites it from
# the typedefs the sources declare).  --check changes nothing and exits 2 if
# a file would change (as pgindent --check does).  Without FILEs: every .c
# and .h under src/ and test/unit/.
#
# PostgreSQL 16 and later ship pgindent and pg_bsd_indent in their source.
# The first run fetches Debian's source package of PostgreSQL 18 into a
# cache (BRAID_INDENT_CACHE, default ~/.cache/braidsort-indent) through apt
# with a private list of sources, changing nothing of the system's apt
# configuration, and builds pg_bsd_indent there against the installed
# PostgreSQL server headers.  It needs apt-get source (dpkg-dev), perl, a C
# compiler and postgresql-server-dev-NN.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${BRAID_INDENT_CACHE:-${HOME:-/tmp}/.cache/braidsort-indent}
pg_config=${PG_CONFIG:-pg_config}
check=0
update_typedefs=0
files=()
for a in "$@"; do
	case "$a" in
		--check) check=1 ;;
		--typedefs) update_typedefs=1 ;;
		-*) echo "indent.sh: unknown option $a" >&2; exit 1 ;;
		*) files+=("$a") ;;
	esac
done

# fetch_source: Debian's source of PostgreSQL 18 in $cache/src, once.
fetch_source() {
	local src dir="$cache/apt"

	src=$(ls -d "$cache"/src/postgresql-18-* 2>/dev/null | head -1 || true)
	if [ -n "$src" ] && [ -x "$src/src/tools/pgindent/pgindent" ]; then
		echo "$src"
		return
	fi
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$cache/src"
	cat >"$dir/sources.list" <<-EOF
		deb-src http://deb.debian.org/debian sid main
	EOF
	local opts=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o "Dir::Etc::sourceparts=-"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
	echo "indent.sh: fetching PostgreSQL 18's source (once, into $cache)" >&2
	apt-get "${opts[@]}" -qq update >&2
	(cd "$cache/src" && apt-get "${opts[@]}" -qq source postgresql-18 >&2)
	ls -d "$cache"/src/postgresql-18-* | head -1
}

# build_indent: pg_bsd_indent from the source, against the server headers.
build_indent() {
	local src=$1 bin="$cache/pg_bsd_indent"
	local inc lib

	if [ -x "$bin" ]; then
		echo "$bin"
		return
	fi
	inc=$("$pg_config" --includedir-server)
	lib=$("$pg_config" --pkglibdir)
	(cd "$src/src/tools/pg_bsd_indent" &&
		${CC:-cc} -O2 -I. -I"$inc" '-Dpg_noreturn=__attribute__((noreturn))' -o "$bin" \
			args.c err.c indent.c io.c lexi.c parse.c pr_comment.c \
			-L"$lib" -lpgport -lpgcommon) >&2
	echo "$bin"
}

# braid_typedefs: the typedef names braidsort's sources declare, sorted.
braid_typedefs() {
	perl -0777 -ne '
		while (/typedef\s+(?:struct|union|enum)\s*\w*\s*\{.*?\}\s*(\w+)\s*;/sg) { print "$1\n"; }
		while (/typedef\s+(?:struct|union|enum)\s+\w+\s+(\w+)\s*;/g) { print "$1\n"; }
		while (/typedef\s+[\w\s\*]+\(\s*\*\s*(\w+)\s*\)\s*\(/g) { print "$1\n"; }
		while (/typedef\s+(?!struct|union|enum)[\w\s]+?\b(\w+)\s*;/g) { print "$1\n"; }
	' "$here"/src/*.[ch] "$here"/src/*/*.[ch] "$here"/test/unit/*.[ch] | sort -u
}

if [ $update_typedefs -eq 1 ]; then
	braid_typedefs >"$here/typedefs.list"
	echo "indent.sh: typedefs.list: $(wc -l <"$here/typedefs.list") names"
fi

src=$(fetch_source)
indent=$(build_indent "$src")
typedefs=$(mktemp)
trap 'rm -f "$typedefs"' EXIT
cat "$src/src/tools/pgindent/typedefs.list" "$here/typedefs.list" | sort -u >"$typedefs"

if [ ${#files[@]} -eq 0 ]; then
	mapfile -t files < <(cd "$here" && ls src/*.[ch] src/*/*.[ch] test/unit/*.[ch])
fi
args=(--indent="$indent" --typedefs="$typedefs")
[ $check -eq 1 ] && args+=(--check --diff)
cd "$here"
perl "$src/src/tools/pgindent/pgindent" "${args[@]}" "${files[@]}"
