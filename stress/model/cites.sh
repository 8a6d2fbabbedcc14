#!/bin/bash
# SPDX-License-Identifier: MIT
#
# cites.sh - every Spin model names the code it models, and that code exists.
#
#   cites.sh [SRCDIR [MODEL...]]   check MODELs (default: every
#                                  SRCDIR/stress/model/*.pml) against the
#                                  sources of SRCDIR (default: $srcdir or .)
#   cites.sh --self-test           run the negative controls only
#
# A citation is a path from the top of the tree, one space, and the name of
# a function (or a macro, or an assembler routine) with "()", on one line:
#
#     lib/threadstatic/cache.c refill()
#
# Each model carries them in its correspondence table (a step's label,
# what it does, and the function it is in; the body's comments carry the
# labels), as HACKING.md ("Checks") says.  The check fails (exit status 1),
# with one line per problem naming the model, its line, the file and the
# function, when
#   - a model has no citation;
#   - a cited file does not exist, or does not define the function: a C
#     definition (the name and its parameters, then the body's "{", on a
#     line that starts at column 0: "static inline" and a return type on
#     the line above are fine; a declaration or a call is not), a #define
#     of the name, or in assembler a label, a .globl or a .macro of the
#     file called with the name;
#   - a file is named without its path (cache.c refill()), a citation is
#     split across two lines (its path ends one), or a citation carries
#     line numbers (refill() 61-64), which go stale.
# When a cited function is defined elsewhere in lib/ or include/ (a moved
# file), the line says where.  A model named in lib/ or include/
# ("Model: stress/model/depot.pml, steps R1-R4") must exist too.  Every run first runs the self-test (alone:
# --self-test): copies of a real model, each with a citation that holds
# broken in one of those ways, must fail, naming the model, the file and
# the function, and made-up definitions of each kind must be found, and
# mentions and declarations must not.  make model and make check run it.
set -u

# A citation: anything/with/a/slash.c name()
CITE='[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+\.[chS] +[A-Za-z_][A-Za-z0-9_]*\(\)'

# Whether file $1 defines $2 (see above).
defines() {
	case $1 in
	*.S | *.s) awk -v name="$2" '
		{ line[NR] = $0 }
		$1 == ".macro" { mac[$2] = 1 }
		END {
			for (i = 1; i <= NR; i++) {
				s = line[i]
				sub(/^[ \t]+/, "", s)
				if (index(s, name ":") == 1)
					exit 0
				n = split(s, w, /[ \t,]+/)
				if (n >= 2 && w[2] == name && (w[1] == ".globl" || (w[1] in mac)))
					exit 0
			}
			exit 1
		}' "$1" ;;
	*) awk -v name="$2" '
		{ line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				s = line[i]
				if (s ~ "^[ \t]*#[ \t]*define[ \t]+" name "([ \t(]|$)")
					exit 0
				if (s !~ /^[A-Za-z_]/)
					continue
				# the name as a whole word, then "(" (spaces between)
				if (!match(s, "(^|[^A-Za-z0-9_])" name "[ \t]*[(]"))
					continue
				t = substr(s, RSTART + RLENGTH - 1)
				for (j = i + 1; j <= NR && j <= i + 40; j++)
					t = t " " line[j]
				if (body_follows(t))
					exit 0
			}
			exit 1
		}
		# t starts at the "(" of the parameters: after its match, a "{"
		# (attributes may come between), not a ";" or anything else.
		function body_follows(t,   k, c, depth) {
			depth = 0
			for (k = 1; k <= length(t); k++) {
				c = substr(t, k, 1)
				if (c == "(")
					depth++
				else if (c == ")") {
					if (--depth == 0)
						break
				}
			}
			t = substr(t, k + 1)
			for (;;) {
				sub(/^[ \t]+/, "", t)
				if (t ~ /^__attribute__[ \t]*[(]/) {
					sub(/^__attribute__[ \t]*/, "", t)
					depth = 0
					for (k = 1; k <= length(t); k++) {
						c = substr(t, k, 1)
						if (c == "(")
							depth++
						else if (c == ")" && --depth == 0)
							break
					}
					t = substr(t, k + 1)
					continue
				}
				return substr(t, 1, 1) == "{"
			}
		}' "$1" ;;
	esac
}

# The files below lib/ and include/ of $1 that define $2, space-separated.
defined_in() {
	local f found=""
	while IFS= read -r f; do
		defines "$1/$f" "$2" && found="$found ${f}"
	done < <(cd "$1" && find lib include -type f \( -name '*.[chS]' \) 2>/dev/null | sort)
	echo "${found# }"
}

# Where $2 is defined now in the sources of $1, as the end of a line.
where_now() {
	local where
	where=$(defined_in "$1" "$2")
	if [ -n "$where" ]; then
		echo "$2 is defined in $where"
	else
		echo "$2 is defined nowhere in lib/ or include/: does the model still match the code?"
	fi
}

# Check models $2... against the sources of $1 (a model below $1 is named
# from there); print a line per problem, and fail if there is one.
check() {
	local src=$1 m name bad=0 cites=0 models=0 at file fn where
	shift
	for m in "$@"; do
		name=${m#"$src"/}
		models=$((models + 1))
		local n=0
		while IFS=: read -r at cite; do
			[ -n "$cite" ] || continue
			n=$((n + 1))
			file=${cite%% *}
			fn=${cite##* }
			fn=${fn%()}
			if [ ! -f "$src/$file" ]; then
				echo "cites: $name:$at: $file $fn(): $file does not exist; $(where_now "$src" "$fn")"
				bad=$((bad + 1))
			elif ! defines "$src/$file" "$fn"; then
				echo "cites: $name:$at: $file $fn(): $file defines no $fn (a definition, not a mention);" \
					"$(where_now "$src" "$fn")"
				bad=$((bad + 1))
			fi
		done < <(grep -n -o -E "$CITE" "$m" | sed 's/  */ /')
		cites=$((cites + n))
		if [ "$n" -eq 0 ]; then
			echo "cites: $name: no citation: name the code it models (path function(), HACKING.md \"Checks\")"
			bad=$((bad + 1))
		fi
		while IFS=: read -r at cite; do
			[ -n "$cite" ] || continue
			echo "cites: $name:$at: '${cite# }': a file without its path; write the path from the top of the tree"
			bad=$((bad + 1))
		done < <(grep -n -o -E '(^|[ (])[A-Za-z0-9_-]+\.[chS] +[A-Za-z_][A-Za-z0-9_]*\(\)' "$m")
		while IFS=: read -r at cite; do
			[ -n "$cite" ] || continue
			echo "cites: $name:$at: '$cite': a citation split across lines; put the path and the name on one line"
			bad=$((bad + 1))
		done < <(awk 'prev != "" && match($0, /^[ \t]*\*?[ \t]*[A-Za-z_][A-Za-z0-9_]*\(\)/) {
				name = substr($0, RSTART, RLENGTH)
				sub(/^[ \t]*\*?[ \t]*/, "", name)
				print NR - 1 ":" prev " " name
			}
			{ prev = "" }
			match($0, /[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+\.[chS][ \t]*$/) {
				prev = substr($0, RSTART)
				sub(/[ \t]+$/, "", prev)
			}' "$m")
		while IFS=: read -r at cite; do
			[ -n "$cite" ] || continue
			echo "cites: $name:$at: '$cite': line numbers go stale; name the function and the step"
			bad=$((bad + 1))
		done < <(grep -n -o -E '[A-Za-z_][A-Za-z0-9_]*\(\) +[0-9]+(-[0-9]+)?([ ,;)]|$)|\.[chS]:[0-9]+' "$m")
	done
	# The code's own pointers to the models ("Model: stress/model/x.pml").
	while IFS=: read -r file at cite; do
		[ -n "$cite" ] || continue
		[ -f "$src/$cite" ] && continue
		echo "cites: $file:$at: $cite: no such model"
		bad=$((bad + 1))
	done < <(cd "$src" && grep -rno -E 'stress/model/[A-Za-z0-9_.-]+\.pml' lib include 2>/dev/null)
	if [ "$bad" -ne 0 ]; then
		echo "cites: $bad bad of $cites citations in $models models"
		return 1
	fi
	echo "cites: $cites citations in $models models, every one defined"
	return 0
}

# Model $2 must fail the check against the sources of $1 with a line
# matching each pattern $4...; $3 says what it tries.
must_fail() {
	local src=$1 m=$2 what=$3 out p
	shift 3
	if out=$(check "$src" "$m"); then
		echo "self-test: $what passed:"
		echo "$out"
		return 1
	fi
	for p in "$@"; do
		if ! echo "$out" | grep -q -- "$p"; then
			echo "self-test: $what: no line like '$p':"
			echo "$out"
			return 1
		fi
	done
}

# The first citation of the models $2... that holds in $1: "MODEL FILE FUNCTION".
first_good() {
	local src=$1 m cite
	shift
	for m in "$@"; do
		while IFS= read -r cite; do
			defines "$src/${cite%% *}" "$(echo "${cite##* }" | tr -d '()')" 2>/dev/null &&
				{ echo "$m ${cite%% *} $(echo "${cite##* }" | tr -d '()')"; return 0; }
		done < <(grep -o -E "$CITE" "$m" | sed 's/  */ /')
	done
	return 1
}

# The negative controls: a copy of a real model with one of its citations
# that hold (the first) broken in each way must fail, naming the model,
# the file and the function; made-up definitions of each kind must pass.
# The copies and the made-up tree live in a temporary directory.
self_test() {
	local tmp rc
	tmp=$(mktemp -d) || return 1
	self_test_in "$1" "$tmp"
	rc=$?
	rm -rf "$tmp"
	return $rc
}

self_test_in() {
	local src=$1 tmp=$2 model file fn ok=0 base
	mkdir -p "$tmp/m" "$tmp/t/lib" "$tmp/t/include"
	if read -r model file fn < <(first_good "$src" "$src"/stress/model/*.pml); then
		base=$(basename "$model" .pml)
		# a function that is not there
		sed "s|$file $fn()|$file ${fn}_gone()|" "$model" >"$tmp/m/$base-gone.pml"
		# a file that is not there
		sed "s|$file $fn()|lib/gone/gone.c $fn()|" "$model" >"$tmp/m/$base-nofile.pml"
		# a file without its path, and line numbers
		printf '/* %s %s() */\n/* %s %s() 12-14 */\n/* %s\n * %s() */\n' "$file" "$fn" \
			"$(basename "$file")" "$fn" "$file" "$fn" >"$tmp/m/short.pml"
		# no citation at all
		grep -v -E "$CITE" "$model" >"$tmp/m/none.pml"
		must_fail "$src" "$tmp/m/$base-gone.pml" "a citation of a missing function" \
			"$base-gone.pml:[0-9]*: $file ${fn}_gone(): $file defines no ${fn}_gone" || ok=1
		must_fail "$src" "$tmp/m/$base-nofile.pml" "a citation of a missing file" \
			"lib/gone/gone.c $fn(): lib/gone/gone.c does not exist; $fn is defined in .*$file" || ok=1
		must_fail "$src" "$tmp/m/short.pml" "a citation without a path, with line numbers or split" \
			"a file without its path" "line numbers go stale" \
			"short.pml:3: '$file $fn()': a citation split across lines" || ok=1
		must_fail "$src" "$tmp/m/none.pml" "a model without citations" "none.pml: no citation" || ok=1
	else
		echo "self-test: no citation of any model holds: only the made-up definitions are tried"
	fi

	# Made-up definitions: each kind is found, mentions and declarations are not.
	cat >"$tmp/t/lib/a.c" <<'EOF'
/* Comment: defined_in_comment(void) { */
static inline uint32_t
on_next_line(int x)
{
	return mentioned_only(x);
}

LFPOOL_API static void *with_params(int x,
				    int y) __attribute__((hot))
{
}
#define A_MACRO(x) ((x) + 1)
# define OBJ_MACRO 1
void declared_only(int x);
__attribute__((always_inline)) static inline void declared_attr(void);
EOF
	cat >"$tmp/t/lib/r.S" <<'EOF'
.macro BEGIN name, miss
.endm
BEGIN asm_routine, asm_miss
asm_label:
	jmp asm_jumped_to
EOF
	local c
	for c in 'lib/a.c on_next_line()' 'lib/a.c with_params()' 'lib/a.c A_MACRO()' \
		'lib/a.c OBJ_MACRO()' 'lib/r.S asm_routine()' 'lib/r.S asm_label()'; do
		printf '/* %s */\n' "$c" >"$tmp/m/found.pml"
		check "$tmp/t" "$tmp/m/found.pml" >/dev/null ||
			{ echo "self-test: not found: $c"; ok=1; }
	done
	for c in 'lib/a.c defined_in_comment()' 'lib/a.c mentioned_only()' 'lib/a.c declared_only()' \
		'lib/a.c declared_attr()' 'lib/r.S asm_jumped_to()' 'lib/r.S asm_miss()'; do
		printf '/* %s */\n' "$c" >"$tmp/m/found.pml"
		check "$tmp/t" "$tmp/m/found.pml" >/dev/null &&
			{ echo "self-test: taken for a definition: $c"; ok=1; }
	done
	return $ok
}

case ${1:-} in
--self-test)
	self_test "${srcdir:-.}"
	;;
-*)
	echo "usage: cites.sh [SRCDIR [MODEL...]] | --self-test" >&2
	exit 2
	;;
*)
	src=${1:-${srcdir:-.}}
	[ $# -gt 0 ] && shift
	if ! self_test "$src" >/dev/null; then
		echo "cites: the self-test let a broken citation pass; the check is broken:"
		self_test "$src"
		exit 1
	fi
	if [ $# -eq 0 ]; then
		set -- "$src"/stress/model/*.pml
	fi
	check "$src" "$@"
	;;
esac
