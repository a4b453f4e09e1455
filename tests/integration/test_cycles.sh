#!/usr/bin/env bash
# No two files call each other in a cycle (issue 33): scripts/cycles.py reads the
# objects of idserver with idgenctl, of the simulation (with the idgenctl
# procedures compiled into it, sim/ctl/) and of libidgen, and any
# strongly connected set of files fails the test: there are none, and a new one
# is cut (a piece moved down, or a callback handed in), never allowed.
. "$(dirname "$0")/lib.sh"

O=$BUILD/obj
for d in "$O" "$O/common" "$O/sim" "$O/sim/ctl" "$O/lib" "$O/lib/common" "$O/lib/src"; do
	compgen -G "$d/*.o" >/dev/null || fail "no objects in $d: build with make all first"
done
# idgenctl's files are compiled into its binary at once: their objects here.
mkdir -p "$T_DIR/obj/ctl"
cflags=$(pkg-config --cflags libmariadb libevent openssl inih jansson)
for f in "$ROOT"/ctl/*.c; do
	# shellcheck disable=SC2086
	gcc -std=c11 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/common" -I"$ROOT/src" \
	    -I"$ROOT/ctl" -I"$BUILD/gen" $cflags -c "$f" \
	    -o "$T_DIR/obj/ctl/$(basename "$f" .c).o" || fail "ctl: $f does not compile"
done
srv=()
for o in "$O"/*.o; do
	[ "$(basename "$o")" = main.o ] || srv+=("$o")
done
found=$(
	{ python3 "$ROOT/scripts/cycles.py" "$O/main.o" "${srv[@]}" "$O"/common/*.o \
	    "$T_DIR"/obj/ctl/*.o || true
	  python3 "$ROOT/scripts/cycles.py" "$O"/sim/*.o "$O"/sim/ctl/*.o "${srv[@]}" \
	    "$O"/common/*.o || true
	  python3 "$ROOT/scripts/cycles.py" "$O"/lib/*.o "$O"/lib/common/*.o \
	    "$O"/lib/src/*.o || true
	} | sed -n 's/^cycle: \([^(]*\) (.*/\1/p' | sed 's/ *$//' | sort -u
)
bad=0
while IFS= read -r c; do
	[ -n "$c" ] || continue
	log "cycle: $c"
	bad=1
done <<<"$found"
[ $bad = 0 ] || fail "files call each other in a cycle: see scripts/cycles.py's lines above"
log ok
