# idgen - build, run and test.  `make` builds; `make run` serves; `make test` tests.

CC       ?= gcc
PKGS     := libmariadb libevent inih jansson
BUILD    ?= build
DEB_PKGS := gcc make pkg-config mariadb-server mariadb-client libmariadb-dev \
	    libevent-dev libcmocka-dev libinih-dev netcat-openbsd redis-server \
	    redis-tools faketime gnuplot-nox python3 procps iproute2 \
	    python3-redis libhiredis-dev curl bsdutils libjansson-dev prometheus \
	    nghttp2-client

WARN     := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wcast-align \
	    -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition \
	    -Wformat=2 -Wundef -Wvla -Wwrite-strings -Wnull-dereference
# OPT is the optimisation; the flags below apply even when CFLAGS is given.
OPT      ?= -O2 -g
override CFLAGS += $(OPT) -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
SAN      ?=
ifneq ($(SAN),)
override CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=$(SAN)
endif

LIB_SRC   := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ   := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/%)
TOOL_SRC  := $(wildcard bench/*.c)
TOOL_BIN  := $(TOOL_SRC:bench/%.c=$(BUILD)/%)

.PHONY: all deps run db-up db-down test unit integration sanitize bench clean
all: $(BUILD)/idserver $(TOOL_BIN)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/idserver: $(BUILD)/obj/main.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/test_%: tests/unit/test_%.c $(LIB_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Isrc -o $@ $^ $(LDFLAGS) $(PKG_LIBS) -lcmocka

$(BUILD)/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -o $@ $< $(LDFLAGS) -lm

# Installs the Debian packages the build, `make run`, the tests and the bench need.
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

db-up: deps
	scripts/dbpair.sh up var 3307 3308

db-down:
	scripts/dbpair.sh down var

run: deps all db-up
	$(BUILD)/idserver --config idserver.conf

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

sanitize:
	$(MAKE) --no-print-directory BUILD=build/asan SAN=address,undefined OPT="-O1 -g" all unit

integration: all
	tests/integration/run.sh $(BUILD)

test: deps
	@tests/run-all.sh

bench: deps all
	bench/run.sh

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(BUILD)/obj/main.d
