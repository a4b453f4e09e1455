# idgen - build, run and test.  `make` builds; `make run` serves; `make test` tests.

CC       ?= gcc
PKGS     := libmariadb libevent libevent_openssl openssl inih jansson libnghttp2 libprotobuf-c libcrypto
BUILD    ?= build
DEB_PKGS := gcc make pkg-config mariadb-server mariadb-client libmariadb-dev man-db \
	    libevent-dev libcmocka-dev libinih-dev netcat-openbsd redis-server \
	    redis-tools faketime gnuplot-nox python3 procps iproute2 \
	    python3-redis libhiredis-dev curl bsdutils libjansson-dev prometheus \
	    nghttp2-client libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev \
	    python3-grpcio python3-grpc-tools python3-yaml clang nftables systemd nodejs \
	    golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev \
	    golang-google-protobuf-dev protobuf-compiler protoc-gen-go protoc-gen-go-grpc \
	    openssl libssl-dev nginx-light rsync strace

WARN     := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wcast-align \
	    -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition \
	    -Wformat=2 -Wundef -Wvla -Wwrite-strings -Wnull-dereference
# OPT is the optimisation; the flags below apply even when CFLAGS is given.
OPT      ?= -O2 -g
override CFLAGS += $(OPT) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP
# idserver's state file has a writer thread (docs/design.md section 6.9).
override LDFLAGS += -pthread
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
SAN      ?=
SAN_FLAGS :=
ifneq ($(SAN),)
SAN_FLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
override CFLAGS  += $(SAN_FLAGS)
override LDFLAGS += -fsanitize=$(SAN)
endif
# protoc-c output (proto/*.proto): build products, compiled without our warning list.
GEN       := $(BUILD)/gen
PROTO_SRC := $(wildcard proto/*.proto)
GEN_C     := $(PROTO_SRC:proto/%.proto=$(GEN)/%.pb-c.c)
GEN_H     := $(GEN_C:.c=.h)
# ... and their FileDescriptorProtos, served by gRPC reflection (src/reflect.c).
GEN_C     += $(GEN)/descriptors.c
# ... read with protobuf-c's code for descriptor.proto (Debian's libprotobuf-dev ships it).
PROTO_INC := /usr/include
GEN_C     += $(GEN)/google/protobuf/descriptor.pb-c.c
GEN_H     += $(GEN)/google/protobuf/descriptor.pb-c.h
GEN_OBJ   := $(GEN_C:$(GEN)/%.c=$(BUILD)/obj/gen/%.o) $(BUILD)/obj/gen/openapi_json.o
override CFLAGS += -I$(GEN)

# The version, defined once: include/idgen.h's IDGEN_VERSION (idserver, idgenctl and
# idgen print it with --version; the library's file name, idgen.pc and the man pages
# installed carry it).
IDGEN_VERSION := $(shell sed -n 's/^\#define IDGEN_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' include/idgen.h)
override CFLAGS += -Iinclude

# A binary's own sources and objects: $^ also holds the headers its .d file names.
SRCS = $(filter %.c %.o,$^)

# The pure ID rules (common/: the layout, base58, decode) and the clocks (clk.c) are
# compiled by both builds: idserver's objects below, libidgen's position-independent
# ones further down.
COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:common/%.c=$(BUILD)/obj/common/%.o)
override CFLAGS += -Icommon

LIB_SRC   := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ   := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o) $(COMMON_OBJ) $(GEN_OBJ)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/%)
SIM_SRC   := $(wildcard sim/*.c)
# idgenctl's procedures, compiled a second time into the simulation (sim/ctlrun.c).
SIM_CTL   := conn ctldb read raise add ns
SIM_OBJ   := $(SIM_SRC:sim/%.c=$(BUILD)/obj/sim/%.o) $(SIM_CTL:%=$(BUILD)/obj/sim/ctl/%.o)
SIM_SECONDS ?= 60
SIM_SEED  ?= $(shell date +%s)
SIM_ARGS  ?=
TOOL_SRC  := $(wildcard bench/*.c)
TOOL_BIN  := $(TOOL_SRC:bench/%.c=$(BUILD)/%)

# libidgen (lib/, include/idgen.h): position-independent, only idgen_* exported;
# it carries its own build of common/, and of idserver's lease and the code it
# runs on (the generator of a mariadb:// address, lib/gen.c; docs/design.md
# 11.8): one lease implementation, compiled twice. lib/genlog.c stands in for
# src/log.c (the library writes nothing).
LIBIDGEN_SRC := $(wildcard lib/*.c)
LIBIDGEN_SRV := lease snowflake db dbtls server statefile state config config_doc check rules
LIBIDGEN_OBJ := $(LIBIDGEN_SRC:lib/%.c=$(BUILD)/obj/lib/%.o) \
		$(COMMON_SRC:common/%.c=$(BUILD)/obj/lib/common/%.o) \
		$(LIBIDGEN_SRV:%=$(BUILD)/obj/lib/src/%.o)
LIBIDGEN_SO  := $(BUILD)/libidgen.so.$(IDGEN_VERSION)
LIBIDGEN     := $(BUILD)/libidgen.a $(LIBIDGEN_SO) $(BUILD)/idgen $(BUILD)/idgen_load
LIBIDGEN_PKGS := libssl libcrypto libmariadb libevent inih
LIB_CFLAGS   := -fPIC -fvisibility=hidden -pthread -Iinclude -Ilib -Isrc \
		$(shell pkg-config --cflags $(LIBIDGEN_PKGS) 2>/dev/null)
# TLS to idserver (lib/wiretls.c): OpenSSL; the generator: MariaDB's
# Connector/C, libevent and inih (idserver's config table).
LIBIDGEN_LIBS = $(shell pkg-config --libs $(LIBIDGEN_PKGS) 2>/dev/null)

.PHONY: settings sim rules-fixed all deps run run-regions db-up db-down test unit integration sanitize bench clean fuzz fuzz-short \
	fuzz-bins tsan soak go test-go
all: $(BUILD)/idserver $(BUILD)/idgenctl $(TOOL_BIN) $(LIBIDGEN) $(BUILD)/idsim

$(BUILD)/obj/%.o: src/%.c | $(GEN_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: proto/%.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=proto --c_out=$(GEN) $<

$(GEN)/google/protobuf/descriptor.pb-c.c $(GEN)/google/protobuf/descriptor.pb-c.h &: \
    $(PROTO_INC)/google/protobuf/descriptor.proto
	@mkdir -p $(GEN)
	protoc-c --proto_path=$(PROTO_INC) --c_out=$(GEN) google/protobuf/descriptor.proto

# docs/openapi.json built into idserver (served at /v1/openapi.json) byte for byte.
$(GEN)/openapi_json.c: docs/openapi.json
	@mkdir -p $(@D)
	{ echo '/* Generated from docs/openapi.json by the Makefile. */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const char proto_http_openapi[];'; \
	  echo 'extern const size_t proto_http_openapi_len;'; \
	  echo 'const char proto_http_openapi[] = {'; \
	  od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const size_t proto_http_openapi_len = sizeof(proto_http_openapi);'; } >$@.tmp
	mv $@.tmp $@

# protoc-c's FileDescriptorSet of every proto/*.proto, as a C array.
$(GEN)/descriptors.c: $(PROTO_SRC)
	@mkdir -p $(@D)
	protoc-c --proto_path=proto --descriptor_set_out=$(GEN)/descriptors.pb $(PROTO_SRC)
	{ printf '#include <stddef.h>\n#include <stdint.h>\n'; \
	  printf 'const uint8_t reflect_descriptor_set[] = {\n'; \
	  od -An -v -tx1 $(GEN)/descriptors.pb | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  printf '};\nconst size_t reflect_descriptor_set_len = sizeof(reflect_descriptor_set);\n'; \
	} >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(@D)
	$(CC) $(OPT) -std=c11 -w -MMD -MP $(SAN_FLAGS) $(PKG_CFLAGS) -I$(GEN) -c $< -o $@

$(BUILD)/idserver: $(BUILD)/obj/main.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The deterministic simulation (docs/design.md section 14): the real tier over
# simulated ticket servers, in virtual time (sim/vclock.c defines the clocks).
$(BUILD)/obj/sim/%.o: sim/%.c | $(GEN_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -Ictl -c $< -o $@

$(BUILD)/obj/sim/ctl/%.o: ctl/%.c | $(GEN_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -Ictl -c $< -o $@

$(BUILD)/idsim: $(SIM_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# Runs it for SIM_SECONDS (default 60) from SIM_SEED (default: the time), with
# SIM_ARGS (e.g. "--disable own-mark --namespaces all"); a duplicate is shrunk
# and printed with the command line that replays it.
sim: $(BUILD)/idsim
	$(BUILD)/idsim --seed $(SIM_SEED) --seconds $(SIM_SECONDS) --shrink $(SIM_ARGS)

# The operator's command: idserver's config, checks and server names, its own queries.
$(BUILD)/idgenctl: ctl/idgenctl.c ctl/conn.c ctl/ctldb.c ctl/read.c ctl/add.c ctl/raise.c ctl/ns.c ctl/ctl.h $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -Ictl -o $@ $(SRCS) $(LDFLAGS) $(PKG_LIBS)

# tier retire-server's carry (ctl/add.c) over a fake of ctl.h's seam, not a database.
$(BUILD)/test_retire: tests/unit/test_retire.c ctl/conn.c ctl/add.c ctl/ctl.h tests/unit/fake_ctl.h $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -Ictl -o $@ $(SRCS) $(LDFLAGS) $(PKG_LIBS) -lcmocka

# tier add-server with namespaces (ctl/add.c, ctl/ns.c) over the same kind of fake.
$(BUILD)/test_add: tests/unit/test_add.c ctl/conn.c ctl/add.c ctl/ns.c ctl/ctl.h tests/unit/fake_ctl.h $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -Ictl -o $@ $(SRCS) $(LDFLAGS) $(PKG_LIBS) -lcmocka

# ns create/drop/raise (ctl/ns.c) over the same kind of fake, servers read by ctl/read.c.
$(BUILD)/test_nsctl: tests/unit/test_nsctl.c ctl/conn.c ctl/read.c ctl/ns.c ctl/ctl.h tests/unit/fake_ctl.h $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -Ictl -o $@ $(SRCS) $(LDFLAGS) $(PKG_LIBS) -lcmocka

$(BUILD)/test_%: tests/unit/test_%.c $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -o $@ $(SRCS) $(LDFLAGS) $(PKG_LIBS) -lcmocka

$(BUILD)/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -o $@ $< $(LDFLAGS) -lm

# idbench parses replies with libidgen's parser and reads the common clocks.
$(BUILD)/idbench: bench/idbench.c $(BUILD)/obj/lib/reply.o $(BUILD)/obj/common/clk.o
	$(CC) $(CFLAGS) -Ilib -o $@ $(SRCS) $(LDFLAGS) -lm

$(BUILD)/obj/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/lib/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/lib/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) -c $< -o $@

# One relocatable object with every hidden symbol made local: an application
# linking the archive sees only idgen_* (our wire_*, held_*, layout_*... cannot
# clash with its own names).
$(BUILD)/libidgen.a: $(LIBIDGEN_OBJ)
	ld -r -o $(BUILD)/obj/lib/libidgen-all.o $^
	objcopy --localize-hidden $(BUILD)/obj/lib/libidgen-all.o
	rm -f $@
	ar rcs $@ $(BUILD)/obj/lib/libidgen-all.o

$(LIBIDGEN_SO): $(LIBIDGEN_OBJ)
	$(CC) $(LDFLAGS) -shared -pthread -Wl,-soname,libidgen.so.1 $(if $(SAN),,-Wl,--no-undefined) \
	    -o $@ $^ $(LIBIDGEN_LIBS)
	ln -sf libidgen.so.$(IDGEN_VERSION) $(BUILD)/libidgen.so.1
	ln -sf libidgen.so.1 $(BUILD)/libidgen.so

# The idgen command (the library's objects linked in: one file to copy; it also
# uses the wire module for stats and ping).
$(BUILD)/idgen: cli/idgen.c $(LIBIDGEN_OBJ)
	$(CC) $(CFLAGS) -Iinclude -Ilib -o $@ $(SRCS) -pthread $(LDFLAGS) $(LIBIDGEN_LIBS)

# Load and uniqueness tool of the library's integration tests and bench row.
$(BUILD)/idgen_load: tests/integration/idgen_load.c $(BUILD)/libidgen.a
	$(CC) $(CFLAGS) -Iinclude -o $@ $< $(BUILD)/libidgen.a -pthread $(LDFLAGS) $(LIBIDGEN_LIBS)

# The library's unit test: its own objects only, and a fake reply source.
$(BUILD)/test_libidgen: tests/unit/test_libidgen.c $(LIBIDGEN_OBJ)
	$(CC) $(CFLAGS) -Iinclude -Ilib -pthread -o $@ $(SRCS) $(LDFLAGS) $(LIBIDGEN_LIBS) -lcmocka

# The Go programs of tests/go (docs/clients.md's grpc-go client, the bench's grpc-go
# peer), built offline from Debian's packages only: GOPATH mode (GO111MODULE=off,
# as Debian's own Go packaging builds) over /usr/share/gocode, no module proxy;
# the stubs of proto/idgen.proto by protoc-gen-go and protoc-gen-go-grpc into the
# GOPATH as package idgen/idgenv1. Nothing is written outside build/: GOENV=off
# reads no user settings, GOCACHE is build/go-cache (a clean tree builds cold).
GO_DIR   := build/go
GO_ENV   := GO111MODULE=off GOENV=off GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
	    GOPATH=$(abspath $(GO_DIR)):/usr/share/gocode GOCACHE=$(abspath build/go-cache)
GO_STUBS := $(GO_DIR)/src/idgen/idgenv1/idgen.pb.go $(GO_DIR)/src/idgen/idgenv1/idgen_grpc.pb.go
GO_BIN   := $(GO_DIR)/bin/go-idclient $(GO_DIR)/bin/go-idpeer

go: $(GO_BIN)

$(GO_STUBS) &: proto/idgen.proto
	@mkdir -p $(GO_DIR)/src
	protoc -I proto --go_out=$(GO_DIR)/src --go-grpc_out=$(GO_DIR)/src \
	    --go_opt=Midgen.proto=idgen/idgenv1 --go-grpc_opt=Midgen.proto=idgen/idgenv1 $<

$(GO_DIR)/bin/go-idclient: $(wildcard tests/go/idclient/*.go) $(GO_STUBS)
	cd tests/go/idclient && $(GO_ENV) go build -o $(abspath $@) .

$(GO_DIR)/bin/go-idpeer: $(wildcard tests/go/idpeer/*.go) $(GO_STUBS)
	cd tests/go/idpeer && $(GO_ENV) go build -o $(abspath $@) .

# test_go alone (docs/clients.md's Go client against a real idserver, both modes).
test-go: deps all go
	tests/integration/run.sh $(BUILD) tests/integration/test_go.sh

# Installs the Debian packages the build, `make run`, the tests and the bench need,
# npm if no Node install brought it, and test_js's npm packages.
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
		echo "deps: missing packages; run: sudo apt-get install -y $$missing"; exit 1; \
	fi
	@command -v npm >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; } || \
		{ echo "deps: npm missing; run: sudo apt-get install -y npm"; exit 1; }
	@$(MAKE) -s --no-print-directory $(JS_DEPS)

# test_js's Node clients: the exact tree of tests/js/package-lock.json, installed
# again only when it or package.json changed (the stamp is npm's record of the tree).
JS_DEPS := tests/js/node_modules/.package-lock.json
$(JS_DEPS): tests/js/package.json tests/js/package-lock.json
	cd tests/js && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

# PORT=N moves `make run` (text/RESP N, HTTP N+1, gRPC N+2, its pair N+3/N+4, data
# under var/N/) and `make run-regions` (region 1 from N+10); unset, the sample
# config's ports (4242-4244, pair 3307/3308) and var/.
PORT ?=
RUN_VAR := $(if $(PORT),var/$(PORT),var)

db-up: deps
	$(if $(PORT),scripts/dbpair.sh up $(RUN_VAR) $$(($(PORT) + 3)) $$(($(PORT) + 4)),scripts/dbpair.sh up var 3307 3308)

db-down:
	scripts/dbpair.sh down $(RUN_VAR)

run: deps all
	BUILD=$(BUILD) scripts/run.sh $(PORT)

# Two regions on loopback, each its own pair (docs/design.md section 12).
run-regions: deps all
	BUILD=$(BUILD) scripts/run-regions.sh $(PORT)

# The sample config, the man page's settings and docs/operations.md's reference,
# written from src/config.c's settings table (test_config checks they match).
settings: $(BUILD)/idserver
	BUILD=$(BUILD) scripts/gen-settings.sh

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

sanitize:
	$(MAKE) --no-print-directory BUILD=build/asan SAN=address,undefined OPT="-O1 -g" all unit

# ThreadSanitizer: the library's threaded unit test, and idserver's state file
# writer thread under the tier and alone (docs/design.md section 6.9).
tsan:
	$(MAKE) --no-print-directory BUILD=build/tsan SAN=thread OPT="-O1 -g" build/tsan/test_libidgen \
	    build/tsan/test_state build/tsan/test_state_ns build/tsan/test_tier
	TSAN_OPTIONS="die_after_fork=0 halt_on_error=1" build/tsan/test_libidgen
	TSAN_OPTIONS="die_after_fork=0 halt_on_error=1" build/tsan/test_state
	TSAN_OPTIONS="die_after_fork=0 halt_on_error=1" build/tsan/test_state_ns
	TSAN_OPTIONS="die_after_fork=0 halt_on_error=1" build/tsan/test_tier

integration: all
	tests/integration/run.sh $(BUILD)

test: deps
	@tests/run-all.sh

bench: deps all rules-fixed
	bench/run.sh

# idserver with the simulation's rule switches compiled out (src/rules.h's
# IDGEN_RULES_FIXED), in a build directory of its own with the same OPT: bench
# row 19 runs it beside $(BUILD)/idserver (docs/design.md section 14).
rules-fixed:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/rules-fixed OPT="$(OPT) -DIDGEN_RULES_FIXED" \
	    $(BUILD)/rules-fixed/idserver

# A seeded mix of every fault for SOAK_SECONDS (default 1800); one verdict line.
soak: deps all
	tests/soak.sh

# libFuzzer harnesses (fuzz/fuzz_*.c), built with clang against every object.
FUZZ_SRC  := $(wildcard fuzz/fuzz_*.c)
FUZZ_SAN  := fuzzer-no-link,address,undefined
FUZZ_TIME ?= 600	# seconds per harness for `make fuzz`
FUZZ_SHORT ?= 5		# ... for the bounded run in `make test`
fuzz-bins: $(FUZZ_SRC:fuzz/%.c=$(BUILD)/%)

$(BUILD)/fuzz_%: fuzz/fuzz_%.c $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -fsanitize=fuzzer,address,undefined -o $@ $(SRCS) \
	    $(PKG_LIBS)

fuzz: deps
	$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang SAN=$(FUZZ_SAN) OPT="-O1 -g" fuzz-bins
	fuzz/run.sh build/fuzz $(FUZZ_TIME)

fuzz-short:
	$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang SAN=$(FUZZ_SAN) OPT="-O1 -g" fuzz-bins
	fuzz/run.sh build/fuzz $(FUZZ_SHORT)

clean:
	rm -rf build

# Generated sources stay (they are not intermediates to delete).
.SECONDARY: $(GEN_C) $(GEN_H)

-include $(LIB_OBJ:.o=.d) $(SIM_OBJ:.o=.d) $(BUILD)/obj/main.d $(LIBIDGEN_OBJ:.o=.d) $(UNIT_BIN:=.d) \
	$(BUILD)/idgenctl.d $(BUILD)/idgen.d $(BUILD)/idgen_load.d $(BUILD)/idbench.d

# make install / make uninstall (PREFIX, DESTDIR).
-include install.mk
