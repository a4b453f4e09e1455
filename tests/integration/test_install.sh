#!/usr/bin/env bash
# make install into a DESTDIR tree, then use only what it installed: every file
# with its mode, the library's SONAME and symlinks, a C program outside the
# source tree built with `pkg-config idgen` (shared and static) taking IDs from
# a real idserver, the installed `idgen`, the man pages, `systemd-analyze
# verify` and `security` on the unit; make uninstall leaves no file behind.
. "$(dirname "$0")/lib.sh"

DEST=$T_DIR/root
PREFIX=/usr/local
P=$DEST$PREFIX
B=1048576	# the pair's block size (schema/20-*.sql)

# inst TARGET DESTDIR PREFIX: make install/uninstall of this BUILD, quietly.
inst() {
	make -s -C "$ROOT" BUILD="$BUILD" "$1" DESTDIR="$2" PREFIX="$3" \
		>"$T_DIR/make-$1.log" 2>&1 || fail "make $1 PREFIX=$3: $(tail -n 5 "$T_DIR/make-$1.log")"
}

# Path (under PREFIX) and mode of every regular file install puts there.
FILES=(
	"sbin/idserver 755"
	"sbin/idgenctl 755"
	"bin/idgen 755"
	"lib/libidgen.so.1.0.0 644"
	"lib/libidgen.a 644"
	"include/idgen.h 644"
	"lib/pkgconfig/idgen.pc 644"
	"etc/idgen/idserver.conf.sample 644"
	"share/man/man8/idserver.8 644"
	"share/man/man8/idgenctl.8 644"
	"share/man/man1/idgen.1 644"
	"lib/systemd/system/idserver.service 644"
	"share/idgen/grafana/idgen-dashboard.json 644"
	"share/idgen/prometheus/idgen-alerts.yml 644"
	"share/idgen/prometheus/idgen-alerts.test.yml 644"
)
# Symlinks and their targets.
LINKS=(
	"lib/libidgen.so.1 libidgen.so.1.0.0"
	"lib/libidgen.so libidgen.so.1"
)

inst install "$DEST" "$PREFIX"
inst install "$DEST" "$PREFIX"	# again, over the first: must succeed the same way

# Exactly these files and links, with these modes.
want=$(for f in "${FILES[@]}" "${LINKS[@]}"; do echo "$P/${f%% *}"; done | sort)
got=$(find "$DEST" \( -type f -o -type l \) | sort)
[ "$got" = "$want" ] || fail "installed files differ: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
for f in "${FILES[@]}"; do
	read -r path mode <<<"$f"
	[ -f "$P/$path" ] && [ ! -L "$P/$path" ] || fail "$path is not a regular file"
	[ "$(command stat -c %a "$P/$path")" = "$mode" ] || fail "$path has mode $(command stat -c %a "$P/$path"), want $mode"
done
for l in "${LINKS[@]}"; do
	read -r path target <<<"$l"
	[ -L "$P/$path" ] || fail "$path is not a symlink"
	[ "$(readlink "$P/$path")" = "$target" ] || fail "$path -> $(readlink "$P/$path"), want $target"
	[ "$(readlink -f "$P/$path")" = "$P/lib/libidgen.so.1.0.0" ] || fail "$path does not resolve to the library"
done
# Copies of the build products and sources, unchanged.
for pair in "$BUILD/idserver sbin/idserver" "$BUILD/idgenctl sbin/idgenctl" "$BUILD/idgen bin/idgen" \
	"$BUILD/libidgen.so.1.0.0 lib/libidgen.so.1.0.0" "$BUILD/libidgen.a lib/libidgen.a" \
	"$ROOT/include/idgen.h include/idgen.h" "$ROOT/idserver.conf etc/idgen/idserver.conf.sample" \
	"$ROOT/man/idserver.8 share/man/man8/idserver.8" "$ROOT/man/idgen.1 share/man/man1/idgen.1" \
	"$ROOT/man/idgenctl.8 share/man/man8/idgenctl.8"; do
	read -r src path <<<"$pair"
	cmp -s "$src" "$P/$path" || fail "$path differs from $src"
done
log "make install: ${#FILES[@]} files and ${#LINKS[@]} links under DESTDIR, modes right"

# The shared library: SONAME libidgen.so.1, the API exported; the archive has objects.
readelf -d "$P/lib/libidgen.so.1.0.0" | grep -F '(SONAME)' | has -F '[libidgen.so.1]' ||
	fail "SONAME: $(readelf -d "$P/lib/libidgen.so.1.0.0" | grep -F '(SONAME)' || echo none)"
for s in idgen_options_init idgen_open idgen_next idgen_close; do
	nm -D --defined-only "$P/lib/libidgen.so.1.0.0" | awk '{ print $NF }' | has -x "$s" ||
		fail "libidgen.so does not export $s"
done
[ -n "$(ar t "$P/lib/libidgen.a")" ] || fail "libidgen.a is empty"
# Both export only idgen_*: the internals cannot clash with an application's names.
for lib in "$P/lib/libidgen.a" "$P/lib/libidgen.so.1.0.0"; do
	other=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 3 { print $NF }' | grep -v '^idgen_' || true)
	[ -z "$other" ] || fail "$(basename "$lib") exports more than idgen_*: $(echo $other | head -c 200)"
done

# No placeholder left; the paths of this PREFIX filled in.
! grep -n '@[A-Z_]*@' "$P/lib/pkgconfig/idgen.pc" "$P/lib/systemd/system/idserver.service" ||
	fail "placeholder left in a generated file"
grep -qx "prefix=$PREFIX" "$P/lib/pkgconfig/idgen.pc" || fail "idgen.pc: prefix is not $PREFIX"
grep -q "^ExecStart=$PREFIX/sbin/idserver --config $PREFIX/etc/idgen/idserver.conf " \
	"$P/lib/systemd/system/idserver.service" || fail "unit: ExecStart"
# Every secret a credential: the password always, the tokens and the TLS key when
# their files exist (SetCredential= is the empty default that keeps a missing one
# from failing the start).
for c in db_password auth_tokens tls_key; do
	f=$c; [ $c = tls_key ] && f=idserver-key.pem
	grep -qx "LoadCredential=$c:$PREFIX/etc/idgen/$f" "$P/lib/systemd/system/idserver.service" ||
		fail "unit: LoadCredential=$c"
	[ $c = db_password ] || has "^SetCredential=$c:# no $PREFIX/etc/idgen/$f" \
		"$P/lib/systemd/system/idserver.service" || fail "unit: SetCredential=$c (an optional credential)"
done
grep -q -- '--db_password_file %d/db_password' "$P/lib/systemd/system/idserver.service" ||
	fail "unit: the password is not read from its credential"
grep -qx 'Type=notify' "$P/lib/systemd/system/idserver.service" || fail "unit: not Type=notify"
# A reload runs --check-config on ExecStart's own arguments, then signals.
start=$(sed -n 's/^ExecStart=[^ ]* //p' "$P/lib/systemd/system/idserver.service")
mapfile -t reload < <(sed -n 's/^ExecReload=//p' "$P/lib/systemd/system/idserver.service")
[ "${#reload[@]}" = 2 ] && [ "${reload[0]}" = "$PREFIX/sbin/idserver --check-config $start" ] &&
	[ "${reload[1]}" = '/bin/kill -HUP $MAINPID' ] || fail "unit: ExecReload is not --check-config then kill -HUP: ${reload[*]}"
grep -q '^; .*auth_tokens_file = %d/auth_tokens' "$P/etc/idgen/idserver.conf.sample" &&
	grep -q '^; .*tls_key_file = %d/tls_key' "$P/etc/idgen/idserver.conf.sample" ||
	fail "idserver.conf.sample does not show the credentials' %d/ names"

# pkg-config finds only the installed idgen.pc, its paths inside DESTDIR (not
# exported: a rebuild by a later make must see the system's .pc files).
pc() {
	PKG_CONFIG_LIBDIR=$P/lib/pkgconfig PKG_CONFIG_PATH=$P/lib/pkgconfig \
		PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config "$@"
}
flags=$(pc --cflags --libs idgen) || fail "pkg-config --cflags --libs idgen failed"
for w in "-I$P/include" "-L$P/lib" -lidgen; do
	[[ " $flags " == *" $w "* ]] || fail "pkg-config --cflags --libs idgen: '$flags' lacks $w"
done
sflags=$(pc --static --libs idgen) || fail "pkg-config --static failed"
[[ " $sflags " == *" -lpthread "* ]] || fail "pkg-config --static --libs idgen: '$sflags' lacks -lpthread"

# A program outside the source tree: 1000 IDs through idgen_next, distinct, nonzero.
cat >"$T_DIR/prog.c" <<'C'
#include <idgen.h>	/* first: the header stands on its own */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

static int
cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static uint64_t ids[N];
	struct idgen_options o;
	idgen_client *c;
	char err[256] = "";
	int i, rc;

	if (argc != 2)
		return 2;
	idgen_options_init(&o);
	c = idgen_open(argv[1], &o, err, sizeof(err));
	if (c == NULL) {
		fprintf(stderr, "idgen_open: %s\n", err);
		return 1;
	}
	for (i = 0; i < N; i++) {
		if ((rc = idgen_next(c, &ids[i])) != IDGEN_OK) {
			fprintf(stderr, "idgen_next: error %d after %d IDs\n", rc, i);
			return 1;
		}
		if (ids[i] == 0) {
			fprintf(stderr, "idgen_next gave 0\n");
			return 1;
		}
	}
	idgen_close(c);
	qsort(ids, N, sizeof(ids[0]), cmp);
	for (i = 1; i < N; i++)
		if (ids[i] == ids[i - 1]) {
			fprintf(stderr, "duplicate %" PRIu64 "\n", ids[i]);
			return 1;
		}
	printf("%d %" PRIu64 " %" PRIu64 "\n", N, ids[0], ids[N - 1]);
	return 0;
}
C
cd_prog() { (cd "$T_DIR" && "$@"); }	# compiled and inspected where the tree is not
# shellcheck disable=SC2086 # pkg-config output is a list of words
cd_prog cc -std=c11 -Wall -Wextra -Werror -o prog prog.c $flags 2>"$T_DIR/cc.log" ||
	fail "cc with pkg-config idgen: $(head -n 5 "$T_DIR/cc.log")"
readelf -d "$T_DIR/prog" | grep -F '(NEEDED)' | has -F '[libidgen.so.1]' || fail "prog does not need libidgen.so.1"
# Captured first: grep -q would stop reading early, and ldd's SIGPIPE fail the pipeline.
libs=$(LD_LIBRARY_PATH=$P/lib ldd "$T_DIR/prog")
grep -q "libidgen.so.1 => $P/lib/libidgen.so.1 " <<<"$libs" ||
	fail "prog does not load the installed library: $(grep idgen <<<"$libs")"
# The archive alone: -l:libidgen.a instead of -lidgen, with the --static flags.
# shellcheck disable=SC2046,SC2086
cd_prog cc -std=c11 -Wall -Wextra -Werror -o prog-static prog.c $(pc --cflags idgen) \
	${sflags//-lidgen/-l:libidgen.a} 2>"$T_DIR/cc.log" ||
	fail "cc with libidgen.a: $(head -n 5 "$T_DIR/cc.log")"
! readelf -d "$T_DIR/prog-static" | has -F 'libidgen' || fail "prog-static still needs libidgen.so"
# The header in C++ too (extern "C"); clang++ comes with Debian's clang.
cxx=$(command -v c++ || command -v clang++) || fail "no C++ compiler (c++ or clang++)"
printf '#include <idgen.h>\nint main() { idgen_options o; idgen_options_init(&o); return 0; }\n' >"$T_DIR/cxx.cc"
# shellcheck disable=SC2046,SC2086
cd_prog "$cxx" -Wall -Wextra -Werror -fsyntax-only $(pc --cflags idgen) cxx.cc 2>"$T_DIR/cxx.log" ||
	fail "idgen.h in C++: $(head -n 5 "$T_DIR/cxx.log")"

pair_up
idserver_start svc "$SVC_PORT"
wait_buffered "$SVC_PORT"
for p in prog prog-static; do
	out=$(LD_LIBRARY_PATH=$P/lib timeout 20 "$T_DIR/$p" "127.0.0.1:$SVC_PORT" 2>"$T_DIR/$p.log") ||
		fail "$p: $(cat "$T_DIR/$p.log")"
	read -r n lo hi <<<"$out"
	[ "$n" = 1000 ] && [ "$lo" -gt 0 ] && [ "$hi" -lt 9007199254740992 ] || fail "$p printed '$out'"
	log "$p (pkg-config idgen): 1000 distinct IDs, $lo..$hi"
done


# Credentials as the unit hands them over: a *_file setting beginning with %d/
# is read in $CREDENTIALS_DIRECTORY (the password, the tokens); without that
# variable it is refused at start (exit 2) with one line.
CRED=$T_DIR/credentials
mkdir -p "$CRED"
cp "$T_DIR/db/db_password" "$CRED/db_password"
TOKEN=$(openssl rand -hex 16)
printf 'app:%s\n' "$TOKEN" >"$CRED/auth_tokens"
chmod 400 "$CRED"/*
CPORT=$((SVC_PORT + 1))
env -u IDGEN_DB_PASSWORD CREDENTIALS_DIRECTORY="$CRED" "$P/sbin/idserver" --odd_port "$ODD_PORT" \
	--even_port "$EVEN_PORT" --listen_port "$CPORT" --state_file "$T_DIR/cred.state" \
	--db_password_file %d/db_password --auth_tokens_file %d/auth_tokens >"$T_DIR/cred.log" 2>&1 &
PIDS+=("$!")
wait_for "idserver with credentials answering PING after AUTH" 10 \
	bash -c "printf 'AUTH %s\nPING\n' '$TOKEN' | timeout 5 nc -N 127.0.0.1 $CPORT | grep -qx PONG"
grep -q "authentication on: 1 tokens.* from $CRED/auth_tokens" "$T_DIR/cred.log" ||
	fail "tokens not read from the credential: $(grep -m1 authentication "$T_DIR/cred.log")"
! q "$CPORT" 'ID\n' | has -E '^[0-9]+$' || fail "idserver with credentials served an ID without a token"
rc=0
out=$(env -u CREDENTIALS_DIRECTORY "$P/sbin/idserver" --state_file "" --db_password_file %d/db_password 2>&1) || rc=$?
[ $rc = 2 ] && grep -q "db_password_file: '%d/db_password' names a systemd credential, but \$CREDENTIALS_DIRECTORY is not set" <<<"$out" ||
	fail "%d/ without CREDENTIALS_DIRECTORY: exit $rc, '$out'"
# ... and the reload's check reads them there too.
out=$(env -u IDGEN_DB_PASSWORD CREDENTIALS_DIRECTORY="$CRED" "$P/sbin/idserver" --check-config \
	--db_password_file %d/db_password --auth_tokens_file %d/auth_tokens 2>&1) && [ "$out" = ok ] ||
	fail "--check-config with credentials: '$out'"
log "credentials: %d/db_password and %d/auth_tokens read in \$CREDENTIALS_DIRECTORY; refused (exit 2) without it"

# The installed idgen: one positive integer; decode agrees, offline.
idgen() { LD_LIBRARY_PATH=$P/lib timeout 20 "$P/bin/idgen" "$@"; }
out=$(idgen --server "127.0.0.1:$SVC_PORT" id) || fail "idgen id exited $?"
[[ "$out" =~ ^[0-9]+$ ]] && [ "$out" -gt 0 ] || fail "idgen id printed '$out'"
out2=$(IDGEN_SERVER=127.0.0.1:$SVC_PORT idgen id) || fail "IDGEN_SERVER=... idgen id exited $?"
[[ "$out2" =~ ^[0-9]+$ ]] && [ "$out2" != "$out" ] || fail "idgen id printed '$out2' after '$out'"
t=$((out / B))
want="$out ticket block=$t server=$([ $((t % 2)) = 1 ] && echo odd || echo even)"
[ "$(idgen --server 127.0.0.1:1 decode "$out")" = "$want" ] || fail "idgen decode $out: '$(idgen decode "$out")'"
idgen --help >"$T_DIR/idgen-help.txt" || fail "idgen --help exited $?"
log "installed idgen id -> $out; decode offline -> ${want#* }"

# The man pages: found by man in the installed tree, no groff warning, and
# every option of --help documented (idserver.8 with its default too).
for page in idserver.8 idgen.1 idgenctl.8; do
	f=$P/share/man/man${page##*.}/$page
	[ "$(MANPATH=$P/share/man man -w "${page%.*}" 2>&1)" = "$f" ] || fail "man -w ${page%.*}"
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "$page: $w"
done
"$P/sbin/idserver" --help >"$T_DIR/idserver-help.txt" || fail "installed idserver --help exited $?"
python3 - "$T_DIR/idserver-help.txt" "$P/share/man/man8/idserver.8" <<'PY' || fail "idserver.8 does not match idserver --help"
import re, sys
page = open(sys.argv[2]).read().replace("\\:", "")	# \: lets troff break a long default
bad = []
for line in open(sys.argv[1]):
    m = re.match(r"  --(\w+) (N|STR)\s+.*\(default: (.*)\)$", line.rstrip("\n"))
    if not m:
        continue
    name, arg, dflt = m.groups()
    dflt = "none" if dflt == "none" else "\\fB" + dflt.replace("-", "\\-") + "\\fR"
    entry = '.BI \\-\\-%s " %s"\n' % (name, arg)
    i = page.find(entry)
    if i < 0 or ("Default: %s." % dflt) not in page[i:page.find(".TP", i + 1)]:
        bad.append(name)
if bad:
    sys.exit("missing or different: " + " ".join(bad))
PY
"$P/sbin/idgenctl" --help >"$T_DIR/idgenctl-help.txt" || fail "installed idgenctl --help exited $?"
for o in $(grep -oE -- '--[a-z][a-z-]+' "$T_DIR/idgenctl-help.txt" | sort -u) 'tier status' 'tier check'; do
	grep -qF -- "${o//-/\\-}" "$P/share/man/man8/idgenctl.8" || fail "idgenctl.8 lacks $o"
done
for o in $(grep -oE -- '--[a-z][a-z-]+' "$T_DIR/idgen-help.txt" | sort -u); do
	grep -qF -- "${o//-/\\-}" "$P/share/man/man1/idgen.1" || fail "idgen.1 lacks $o"
done

# systemd-analyze verify wants ExecStart to exist: a copy of the installed unit
# pointing into DESTDIR, and MANPATH for Documentation=man:idserver(8). It
# prints problems but exits 0 for most, so any output fails.
mkdir -p "$T_DIR/verify"
sed "s|^ExecStart=$PREFIX/sbin/|ExecStart=$P/sbin/|; s|^ExecReload=$PREFIX/sbin/|ExecReload=$P/sbin/|" "$P/lib/systemd/system/idserver.service" \
	>"$T_DIR/verify/idserver.service"
grep -q "^ExecStart=$P/sbin/idserver " "$T_DIR/verify/idserver.service" || fail "verify copy: ExecStart"
out=$(cd "$T_DIR/verify" && MANPATH=$P/share/man systemd-analyze verify idserver.service 2>&1) ||
	fail "systemd-analyze verify exited $?: $out"
# A reload copies the credentials again (RefreshOnReload=, systemd 260+): a new key
# or tokens file takes a reload. An older systemd names the key it does not know,
# and only that.
grep -qx 'RefreshOnReload=credentials' "$P/lib/systemd/system/idserver.service" ||
	fail "unit: no RefreshOnReload=credentials"
sdver=$(systemctl --version | awk 'NR == 1 { print $2 + 0 }')
[ "$sdver" -ge 260 ] || out=$(grep -vE "Unknown key( name)? 'RefreshOnReload' in section" <<<"$out" || true)
[ -z "$out" ] || fail "systemd-analyze verify: $out"
# The sandbox stays tight: exposure at most 2.0 of 10 (1.1 when written).
out=$(cd "$T_DIR/verify" && systemd-analyze security --offline=yes --threshold=20 idserver.service 2>&1) ||
	fail "systemd-analyze security: $(echo "$out" | tail -n 1)"
log "systemd-analyze verify: clean; $(echo "$out" | tail -n 1 | sed 's/ for .*:/:/')"

# A PREFIX the dynamic linker does not search, no DESTDIR (a user's own tree): the
# system's linker cache is left alone (LDCONFIG records any call), and a program
# built with `pkg-config idgen` runs with no LD_LIBRARY_PATH (idgen.pc's rpath).
# Under /usr/local the same make would run ldconfig (its LIBDIR is searched).
OPT=$T_DIR/opt
rm -rf "$OPT" "$T_DIR/ldconfig.calls"
printf '#!/bin/sh\necho "$0 $*" >>"%s"\n' "$T_DIR/ldconfig.calls" >"$T_DIR/ldconfig"
chmod +x "$T_DIR/ldconfig"
make -s -C "$ROOT" BUILD="$BUILD" install PREFIX="$OPT" LDCONFIG="$T_DIR/ldconfig" >"$T_DIR/make-opt.log" 2>&1 ||
	fail "make install PREFIX=$OPT: $(tail -n 5 "$T_DIR/make-opt.log")"
[ ! -e "$T_DIR/ldconfig.calls" ] || fail "make install PREFIX=$OPT ran ldconfig"
dry=$(make -n -C "$ROOT" BUILD="$BUILD" install PREFIX=/usr/local LDCONFIG=LDCONFIG_HERE 2>/dev/null)
grep -qF 'elif [ "yes" = yes ]; then' <<<"$dry" && grep -qF 'echo "LDCONFIG_HERE"; LDCONFIG_HERE;' <<<"$dry" ||
	fail "make install PREFIX=/usr/local would not run ldconfig"
oflags=$(PKG_CONFIG_LIBDIR=$OPT/lib/pkgconfig pkg-config --cflags --libs idgen) || fail "pkg-config under $OPT"
[[ " $oflags " == *" -Wl,-rpath,$OPT/lib "* ]] || fail "idgen.pc under $OPT: no rpath in '$oflags'"
[[ " $flags " != *"-rpath"* ]] || fail "idgen.pc under /usr/local: an rpath in '$flags'"
# shellcheck disable=SC2086
cd_prog cc -std=c11 -Wall -Wextra -Werror -o prog-opt prog.c $oflags 2>"$T_DIR/cc.log" ||
	fail "cc with pkg-config idgen under $OPT: $(head -n 5 "$T_DIR/cc.log")"
libs=$(env -u LD_LIBRARY_PATH ldd "$T_DIR/prog-opt")
grep -q "libidgen.so.1 => $OPT/lib/libidgen.so.1 " <<<"$libs" ||
	fail "prog-opt does not load $OPT/lib's library: $(grep idgen <<<"$libs")"
out=$(env -u LD_LIBRARY_PATH timeout 20 "$T_DIR/prog-opt" "127.0.0.1:$SVC_PORT" 2>"$T_DIR/prog-opt.log") ||
	fail "prog-opt: $(cat "$T_DIR/prog-opt.log")"
make -s -C "$ROOT" BUILD="$BUILD" uninstall PREFIX="$OPT" LDCONFIG="$T_DIR/ldconfig" >"$T_DIR/make-opt.log" 2>&1 ||
	fail "make uninstall PREFIX=$OPT: $(tail -n 5 "$T_DIR/make-opt.log")"
[ ! -e "$T_DIR/ldconfig.calls" ] || fail "make uninstall PREFIX=$OPT ran ldconfig"
log "PREFIX=$OPT (not searched by the linker): no ldconfig, prog-opt runs by idgen.pc's rpath: $out"

# PREFIX=/usr: configuration under /etc/idgen.
inst install "$T_DIR/usr" /usr
[ -f "$T_DIR/usr/etc/idgen/idserver.conf.sample" ] || fail "PREFIX=/usr: no /etc/idgen/idserver.conf.sample"
grep -q '^ExecStart=/usr/sbin/idserver --config /etc/idgen/idserver.conf ' \
	"$T_DIR/usr/usr/lib/systemd/system/idserver.service" || fail "PREFIX=/usr: unit ExecStart"
grep -qx 'LoadCredential=db_password:/etc/idgen/db_password' \
	"$T_DIR/usr/usr/lib/systemd/system/idserver.service" || fail "PREFIX=/usr: unit LoadCredential"
inst uninstall "$T_DIR/usr" /usr
[ -z "$(find "$T_DIR/usr" \( -type f -o -type l \))" ] || fail "PREFIX=/usr: uninstall left files"

# make uninstall removes every file and link (empty directories may stay).
inst uninstall "$DEST" "$PREFIX"
left=$(find "$DEST" \( -type f -o -type l \))
[ -z "$left" ] || fail "make uninstall left: $(echo "$left" | tr '\n' ' ')"
log "make uninstall: nothing left"
log "ok"
