#!/usr/bin/env bash
# compare.sh -- lfccheck against SPIN on MCAST, side by side.
#
# Usage (from anywhere; the repository root is found from this file):
#   bash protocols/mcast/promela/compare.sh [TREE:P:C:K ...]
#
# Without arguments it runs the configurations listed in DEFAULT below.
# For each configuration it runs
#   lfccheck check --protocol mcast --nodes P --credits C --packets K --tree T --json
# with all its reductions (L), and for each form of the Promela model
# (FORMS) lfccheck with the model's reductions (R, the like-for-like state
# count) and SPIN on mcast.pml (spin -a; gcc -DSAFETY -DNOREDUCE; ./pan),
# and prints one table row per configuration and form:
#   unfused  R = --symmetry off --no-reduce --por off (no reduction),
#            S = mcast.pml (one d_step per lfccheck action)
#   fused    R = --symmetry off --por off (the ample-set fusion alone),
#            S = mcast.pml -DFUSED=1 (a copy and the host's process of
#            it as one d_step, as lfccheck's fusion takes them); the row's
#            config ends in "fused"
#
# Environment:
#   FORMS    the forms to run, in order (default "unfused fused")
#   TIMEOUT  seconds per run, each tool (default 600)
#   MEMLIM   megabytes per run, each tool (default 8000; pan's -DMEMLIM,
#            lfccheck's --max-memory)
#   COMPACT  auto (default): compact state storage where full storage
#            would not fit: lfccheck's unreduced run uses --fingerprint
#            for P >= 4 (tens of millions of states), and SPIN uses a bit
#            array unless the unreduced lfccheck run completed with few
#            enough states to store in full within MEMLIM (400 bytes
#            each; fused rows: lfccheck uses --fingerprint for P >= 5);
#            1: always; 0: never.  Compact means lfccheck
#            --fingerprint (64-bit fingerprints) and SPIN -DBITSTATE with
#            a 2^34-bit (2 GB) array and -k3.  Both may miss a few states
#            through collisions; SPIN's counts are then lower bounds.
#            (SPIN's -DHC4 hash compaction was tried and rejected: on this
#            model it lost 0.13% of the states at P=3 K=2 and 0.9% at P=4,
#            see README.md.)
#   SPIN_DEFS extra spin -D options for mcast.pml, e.g. "-DEXACT=0"
#   PAN_OPT  gcc's optimisation flag for pan (default -O2; the test uses
#            -O0, which compiles in a tenth of the time, for its tiny run)
#   REPEAT   runs of each tool on a configuration that it completes in
#            under a second (default 5): such times are tens of
#            milliseconds, where one run's noise decides the ratio; the
#            median time is reported (the lower middle one for an even
#            REPEAT; 1: one run each). A repeated run that ends
#            otherwise than the first (verdict, states) is reported on
#            stderr and its time left out.
#   KEEP     a directory to keep the logs (pan output, lfccheck JSON) in
#
# Timings come from the tools themselves (lfccheck's elapsed_s, pan's
# "elapsed time"); memory is the peak resident set size of the process
# (GNU time), which counts SPIN's hash table and lfccheck's Go heap alike.
# lfccheck is built once with `go build` (the same program `go run
# ./cmd/lfccheck` runs) so that compilation is not timed; SPIN's model
# generation and C compilation are likewise not in its time.
set -u

if ! command -v spin >/dev/null 2>&1; then
	echo "compare.sh: spin is not installed (Debian: apt-get install spin gcc); nothing to compare."
	exit 0
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
for tool in gcc go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "compare.sh: $tool is not installed; cannot compare." >&2
		exit 1
	fi
done

TIMEOUT=${TIMEOUT:-600}
REPEAT=${REPEAT:-5}
if ! [[ $REPEAT =~ ^[0-9]+$ ]] || [ $((10#$REPEAT)) -eq 0 ]; then
	echo "compare.sh: REPEAT must be a positive number of runs, not '$REPEAT'" >&2
	exit 2
fi
REPEAT=$((10#$REPEAT))
MEMLIM=${MEMLIM:-8000}
COMPACT=${COMPACT:-auto}
DEFAULT="binary:3:1:1 binomial:3:1:1 chain:4:1:1 binary:4:1:1 binomial:4:1:1 binary:2:4:6"
FORMS=${FORMS:-unfused fused}
read -r -a forms <<<"$FORMS"
for form in "${forms[@]}"; do
	case $form in unfused | fused) ;; *)
		echo "compare.sh: FORMS lists unfused and/or fused, not '$form'" >&2
		exit 2
		;;
	esac
done
[ ${#forms[@]} -eq 0 ] && {
	echo "compare.sh: FORMS is empty" >&2
	exit 2
}
SPIN_DEFS=${SPIN_DEFS:-}
PAN_OPT=${PAN_OPT:--O2}
configs=("$@")
[ ${#configs[@]} -eq 0 ] && read -r -a configs <<<"$DEFAULT"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${KEEP:-$work}
mkdir -p "$logs"

gnutime=
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
	gnutime=/usr/bin/time
fi

(cd "$root" && go build -o "$work/lfccheck" ./cmd/lfccheck) || {
	echo "compare.sh: go build ./cmd/lfccheck failed" >&2
	exit 1
}

# run OUTFILE RSSFILE CMD...: run CMD under the time limit, stdout to
# OUTFILE, peak RSS in kB to RSSFILE (or "?").
run() {
	local out=$1 rss=$2
	shift 2
	if [ -n "$gnutime" ]; then
		"$gnutime" -f %M -o "$rss" timeout $((TIMEOUT + 30)) "$@" >"$out" 2>&1
	else
		echo "?" >"$rss"
		timeout $((TIMEOUT + 30)) "$@" >"$out" 2>&1
	fi
}

mb() { # kB -> MB, one decimal
	local k
	k=$(tail -n 1 "$1" 2>/dev/null)
	case $k in '' | *[!0-9]*) echo "?" ;; *) awk -v k="$k" 'BEGIN { printf "%.1f", k / 1024 }' ;; esac
}

median() { # the median of the numbers on stdin (the lower middle one of an even count), as given; other lines are left out
	grep -E '^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$' | sort -g | awk '{ v[NR] = $0 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

short() { # time -> status 0 if it is a number under a second (worth repeating)
	awk -v t="$1" 'BEGIN { exit !(t ~ /^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/ && t + 0 < 1) }'
}

ratio() { # a / b, two decimals, or "-"
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'
}

jnum() { # value of a top-level JSON number or string field
	sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1
}

lfc() { # tag tree P C K [flags...] -> sets L_verdict L_states L_time L_mem
	local tag=$1 tree=$2 p=$3 c=$4 k=$5
	shift 5
	local out="$logs/$tag.json"
	run "$out" "$work/$tag.rss" "$work/lfccheck" check --protocol mcast --nodes "$p" --credits "$c" \
		--packets "$k" --tree "$tree" --json -q --timeout "${TIMEOUT}s" --max-memory "${MEMLIM}MiB" "$@"
	L_verdict=$(jnum "$out" verdict)
	local prop
	prop=$(jnum "$out" property)
	[ -n "$prop" ] && L_verdict="$L_verdict $prop"
	[ -z "$L_verdict" ] && L_verdict="error"
	L_states=$(jnum "$out" states)
	[ "$(jnum "$out" verdict)" = incomplete ] && L_states=">$L_states"
	L_time=$(awk -v t="$(jnum "$out" elapsed_s)" 'BEGIN { if (t == "") print "?"; else printf "%.3f", t }')
	L_mem=$(mb "$work/$tag.rss")
	if short "$L_time"; then
		local times=$L_time i again
		for ((i = 1; i < REPEAT; i++)); do
			again="$work/$tag.again"
			run "$again" "$work/$tag.rss2" "$work/lfccheck" check --protocol mcast --nodes "$p" --credits "$c" \
				--packets "$k" --tree "$tree" --json -q --timeout "${TIMEOUT}s" --max-memory "${MEMLIM}MiB" "$@"
			if [ "$(jnum "$again" verdict) $(jnum "$again" states)" != "$(jnum "$out" verdict) $(jnum "$out" states)" ]; then
				echo "compare.sh: $tag: run $((i + 1)) gave '$(jnum "$again" verdict) $(jnum "$again" states)', the first '$(jnum "$out" verdict) $(jnum "$out" states)'; its time is left out" >&2
				continue
			fi
			times="$times
$(jnum "$again" elapsed_s)"
		done
		L_time=$(awk -v t="$(median <<<"$times")" 'BEGIN { printf "%.3f", t }')
	fi
}

compact() { # P form -> status 0 if lfccheck's R run uses compact storage
	case $COMPACT in 1) return 0 ;; 0) return 1 ;; esac
	# tens of millions of states unfused at P=4; a few million fused
	if [ "$2" = fused ]; then [ "$1" -ge 5 ]; else [ "$1" -ge 4 ]; fi
}

spinrun() { # tag tree P C K BITSTATE(0/1) FUSED(0/1) W -> sets S_verdict S_states S_time S_mem
	local tag=$1 tree=$2 p=$3 c=$4 k=$5 bits=$6 fused=$7 w=$8 t
	case $tree in binary) t=0 ;; binomial) t=1 ;; chain) t=2 ;; *)
		S_verdict="no-tree-$tree" S_states=- S_time=- S_mem=-
		return ;;
	esac
	local dir="$work/$tag"
	mkdir -p "$dir"
	# exact: a hash table of 2^w slots, w from R's count (pan grows it
	# when it fills up); compact: a bit array of 2^34 bits, 3 bits per state
	local flags=("$PAN_OPT" -DSAFETY -DNOREDUCE "-DMEMLIM=$MEMLIM") args=("-w$w")
	[ "$bits" = 1 ] && flags+=(-DBITSTATE) && args=(-w34 -k3)
	if ! (cd "$dir" && spin -DP="$p" -DC="$c" -DK="$k" -DTREE="$t" -DFUSED="$fused" $SPIN_DEFS -a "$here/mcast.pml" >spin.log 2>&1 &&
		gcc "${flags[@]}" -o pan pan.c >>spin.log 2>&1); then
		S_verdict="build-error" S_states=- S_time=- S_mem=-
		cp "$dir/spin.log" "$logs/$tag.spin.log" 2>/dev/null
		return
	fi
	(cd "$dir" && run pan.out pan.rss timeout "$TIMEOUT" ./pan -m100000 "${args[@]}")
	local rc=$?
	local out="$dir/pan.out"
	cp "$out" "$logs/$tag.pan.txt" 2>/dev/null
	if grep -q "^pan:[0-9]*: invalid end state" "$out"; then
		S_verdict="fail deadlock"
	elif grep -q "^pan:[0-9]*: assertion violated" "$out"; then
		S_verdict="fail assert"
	elif grep -q "reached -DMEMLIM bound\|out of memory" "$out"; then
		S_verdict="incomplete (memlim)"
	elif grep -q "errors: 0" "$out"; then
		S_verdict="pass"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		S_verdict="incomplete (timeout)"
	else
		S_verdict="error"
	fi
	S_states=$(sed -n 's/^ *\([0-9][0-9e+.]*\) states, stored.*/\1/p' "$out" | tail -n 1)
	if [ -z "$S_states" ]; then # killed: the last progress line
		S_states=">$(sed -n 's/.*States= *\([0-9e+.]*\).*/\1/p' "$out" | tail -n 1)"
		S_time=">$TIMEOUT"
	else
		case $S_verdict in incomplete*) S_states=">$S_states" ;; esac
		S_time=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$out" | tail -n 1)
		[ -z "$S_time" ] && S_time="?"
		if short "$S_time"; then
			local times=$S_time i n1 n2
			n1=$(sed -n 's/^ *\([0-9][0-9e+.]*\) states, stored.*/\1/p' "$out" | tail -n 1)
			for ((i = 1; i < REPEAT; i++)); do
				(cd "$dir" && run pan.again pan.rss2 timeout "$TIMEOUT" ./pan -m100000 "${args[@]}")
				n2=$(sed -n 's/^ *\([0-9][0-9e+.]*\) states, stored.*/\1/p' "$dir/pan.again" | tail -n 1)
				if [ "$n2" != "$n1" ]; then
					echo "compare.sh: $tag: pan run $((i + 1)) stored '$n2' states, the first '$n1'; its time is left out" >&2
					continue
				fi
				times="$times
$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$dir/pan.again" | tail -n 1)"
			done
			S_time=$(median <<<"$times")
		fi
	fi
	S_mem=$(mb "$dir/pan.rss")
}

echo "lfccheck vs SPIN $(spin -V | sed -n 's/^Spin Version \([^ ]*\).*/\1/p') on MCAST ($(nproc 2>/dev/null || echo ?) cores; limits ${TIMEOUT}s and ${MEMLIM}MB per run; compact storage: $COMPACT)"
[ -n "$SPIN_DEFS" ] && echo "mcast.pml options: $SPIN_DEFS"
[ "$PAN_OPT" != -O2 ] && echo "pan compiled with $PAN_OPT"
echo "L = lfccheck with its reductions (ample-set fusion, symmetry, stubborn sets), S = SPIN on mcast.pml, R = lfccheck with the model's reductions:"
echo "  rows without 'fused': one d_step per lfccheck action, R = --symmetry off --no-reduce --por off"
echo "  rows 'fused': mcast.pml -DFUSED=1 (copy + process as one d_step, lfccheck's fusion), R = --symmetry off --por off"
echo "(*: lfccheck --fingerprint; ~: SPIN -DBITSTATE -w34 -k3, a lower bound); S-R = difference of the state counts"
echo "times in s (search only; the median of $REPEAT runs where a run takes under a second), memory = peak RSS in MB (of the first run); ratios are R/S and L/S"
echo
printf '| %-26s | %-16s | %-14s | %9s | %11s | %11s | %5s | %7s | %7s | %7s | %7s | %7s | %7s | %6s | %6s | %6s | %6s |\n' \
	config "verdict L / R" "verdict S" "states L" "states R" "states S" "S-R" "time L" "time R" "time S" \
	"mem L" "mem R" "mem S" "t R/S" "m R/S" "t L/S" "m L/S"
printf '|%s|\n' "----------------------------|------------------|----------------|-----------|-------------|-------------|-------|---------|---------|---------|---------|---------|---------|--------|--------|--------|--------"
for cfg in "${configs[@]}"; do
	IFS=: read -r tree p c k <<<"$cfg"
	tag="$tree-P$p-C$c-K$k"
	lfc "$tag.L" "$tree" "$p" "$c" "$k"
	lv=$L_verdict ls=$L_states lt=$L_time lm=$L_mem
	for form in "${forms[@]}"; do
		fp=() mark= fused=0 label="$tree P=$p C=$c K=$k" rflags=(--symmetry off --no-reduce --por off) f=
		if [ "$form" = fused ]; then
			fused=1 label="$label fused" rflags=(--symmetry off --por off) f=F
		fi
		compact "$p" "$form" && fp=(--fingerprint) mark="*"
		lfc "$tag.R$f" "$tree" "$p" "$c" "$k" "${rflags[@]}" "${fp[@]}"
		rv=$L_verdict rs=$L_states rt=$L_time rm=$L_mem
		bits=0 w=18
		case $COMPACT in
		1) bits=1 ;;
		auto) case $rs in *[!0-9]* | '') bits=1 ;; *) [ $((rs * 400)) -gt $((MEMLIM * 1048576)) ] && bits=1 ;; esac ;;
		esac
		case $rs in *[!0-9]* | '') ;; *) while [ $w -lt 30 ] && [ $((1 << w)) -lt "$rs" ]; do w=$((w + 1)); done ;; esac
		spinrun "$tag.S$f" "$tree" "$p" "$c" "$k" "$bits" "$fused" "$w"
		vl="$lv / $rv"
		[ "$lv" = "$rv" ] && vl=$lv
		diff=-
		case $rs$S_states in *[!0-9]*) ;; *) diff=$((S_states - rs)) ;; esac
		case $lv$rv$S_verdict in *fail*) diff=- ;; esac # stopped at the first error: not comparable
		printf '| %-26s | %-16s | %-14s | %9s | %11s | %11s | %5s | %7s | %7s | %7s | %7s | %7s | %7s | %6s | %6s | %6s | %6s |\n' \
			"$label" "$vl" "$S_verdict" "$ls" "$rs$mark" "$S_states$([ "$bits" = 1 ] && echo "~")" "$diff" "$lt" "$rt" "$S_time" \
			"$lm" "$rm" "$S_mem" "$(ratio "$rt" "$S_time")" "$(ratio "$rm" "$S_mem")" \
			"$(ratio "$lt" "$S_time")" "$(ratio "$lm" "$S_mem")"
	done
done
