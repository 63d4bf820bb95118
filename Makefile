# wasp - one Makefile. `make` builds build/bin/wasp and build/lib/libwasp.so;
# `make test` builds and runs every test (`make stress`: the stress suite); `make demo` profiles the bundled example.

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
BASE    := -std=c11 -D_GNU_SOURCE -fPIC -fno-omit-frame-pointer $(WARN) -Isrc/engine -Isrc/native -Isrc/jvm -Isrc/cli -Ibuild/gen
LIBS    := -lZydis -lunwind -ldw -lelf -lz -lpthread -lm -ldl
CLI_LIBS := $(LIBS) -lprotobuf-c

ENGINE_SRC := $(wildcard src/engine/*.c)
NATIVE_SRC := $(wildcard src/native/*.c)
JVM_SRC    := $(wildcard src/jvm/*.c)
CLI_SRC    := $(filter-out src/cli/main.c,$(wildcard src/cli/*.c))
UNIT_SRC   := $(wildcard tests/unit/test_*.c)

ENGINE_OBJ := $(ENGINE_SRC:%.c=build/obj/%.o)
NATIVE_OBJ := $(NATIVE_SRC:%.c=build/obj/%.o)
JVM_OBJ    := $(JVM_SRC:%.c=build/obj/%.o)
CLI_OBJ    := $(CLI_SRC:%.c=build/obj/%.o) build/obj/build/gen/profile.pb-c.o
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=build/tests/%)

all: deps build/bin/wasp build/lib/libwasp.so build/lib/valgrind/wasp-amd64-linux

# Installs the Debian packages the build needs, only when one is missing.
DEPS_PKGS := libzydis-dev libunwind-dev libdw-dev zlib1g-dev python3 xxd openjdk-17-jdk-headless valgrind \
             libprotobuf-c-dev protobuf-c-compiler
deps:
	@./scripts/install-deps $(DEPS_PKGS)

# The QEMU TCG guest that runs the trap-dependent e2e cases where this
# machine's watchpoints never fire (tests/guest/run; its kernel comes from
# Debian's linux-image-cloud-amd64 through apt-get download). Installed only
# there; if it cannot be, those cases are skipped with the reason.
GUEST_PKGS := qemu-system-x86 busybox-static
guest-deps: build/bin/wasp
	@build/bin/wasp doctor --watch >/dev/null 2>&1 || ./scripts/install-deps $(GUEST_PKGS) || \
		echo "[wasp] WARN cannot install $(GUEST_PKGS): the trap cases will be skipped"

# The HTML report template, compiled into wasp as a byte array.
build/gen/report_html.h: src/res/report.html | deps
	@mkdir -p $(dir $@)
	xxd -i -n report_html $< > $@.tmp && mv $@.tmp $@

build/obj/src/cli/out_html.o: build/gen/report_html.h

# The pprof schema, compiled by protoc-c into an encoder the CLI links.
build/gen/profile.pb-c.c build/gen/profile.pb-c.h &: src/res/profile.proto | deps
	@mkdir -p build/gen
	protoc-c --proto_path=src/res --c_out=build/gen $<

build/obj/src/cli/out_pprof.o build/tests/test_pprof: build/gen/profile.pb-c.h

# Order-only on deps: with -j, nothing compiles before the headers are installed.
build/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -MMD -MP -c $< -o $@

# JVMTI headers: from the JDK that provides javac (evaluated late, after deps).
JAVA_HOME ?= $(shell dirname "$$(dirname "$$(readlink -f "$$(command -v javac)")")")
JNI_INC = -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux

build/obj/src/jvm/%.o: src/jvm/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(JNI_INC) $(CFLAGS) -MMD -MP -c $< -o $@

# The exact mode's Valgrind tool (src/exact/): built against Valgrind's own
# library (Debian's valgrind package ships the headers and archives), no libc.
# gnu11: Valgrind's headers use GNU extensions. VALGRIND_LIB must name one
# folder with the tool and Valgrind's files, hence the links.
VG_ARCH    := /usr/lib/x86_64-linux-gnu/valgrind
VG_CFLAGS  := -std=gnu11 -O2 -g $(WARN) -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 \
              -fno-stack-protector -fpic -fno-builtin -isystem /usr/include/valgrind
EXACT_SRC  := $(wildcard src/exact/*.c)
EXACT_OBJ  := $(EXACT_SRC:%.c=build/obj/%.o)

build/obj/src/exact/%.o: src/exact/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(VG_CFLAGS) -MMD -MP -c $< -o $@

build/lib/valgrind/wasp-amd64-linux: $(EXACT_OBJ)
	@mkdir -p $(dir $@)
	@for f in /usr/libexec/valgrind/*; do ln -sfn "$$f" $(dir $@); done
	$(CC) -o $@ $^ -static -nodefaultlibs -nostartfiles -u _start -Wl,-Ttext-segment=0x58000000 \
	    $(VG_ARCH)/libcoregrind-amd64-linux.a $(VG_ARCH)/libvex-amd64-linux.a -lgcc

build/lib/libwasp.so: $(ENGINE_OBJ) $(NATIVE_OBJ) $(JVM_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ $(LIBS) -Wl,--no-undefined -Wl,-z,nodelete

build/bin/wasp: build/obj/src/cli/main.o $(CLI_OBJ) $(ENGINE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(CLI_LIBS)

build/tests/%: tests/unit/%.c $(ENGINE_OBJ) $(CLI_OBJ) | deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -Itests/unit -o $@ $(filter %.c %.o,$^) $(CLI_LIBS)

# Unit tests of native front-end files that need no preloading.
build/tests/test_unloads: build/obj/src/native/unloads.o

# Unit tests of JVM front-end files that include no JVM header.
build/tests/test_stubstep: build/obj/src/jvm/stubstep.o build/obj/src/jvm/codemap.o
# libFuzzer targets (tests/fuzz/), every engine and CLI source rebuilt with
# clang, ASan and UBSan into build/fuzz/; `tests/fuzz/run` runs them.
FUZZ_CC    := clang-14
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_PKGS  := clang-14 libclang-rt-14-dev
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_OBJ   := $(ENGINE_SRC:%.c=build/fuzz/obj/%.o) $(CLI_SRC:%.c=build/fuzz/obj/%.o) \
              build/fuzz/obj/build/gen/profile.pb-c.o

fuzz-deps: deps
	@./scripts/install-deps $(FUZZ_PKGS)

build/fuzz/obj/%.o: %.c build/gen/report_html.h build/gen/profile.pb-c.h | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

build/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ) | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(CLI_LIBS)

fuzz: all $(FUZZ_BIN)

unit: all $(UNIT_BIN)
	@tests/unit/run $(UNIT_BIN)

# fuzz-deps: clang-14 and its sanitizer runtimes, for the MemorySanitizer case.
e2e: all guest-deps fuzz-deps
	@tests/e2e/run

# Every suite, one closing line: tests/run-all.
test: all $(UNIT_BIN) $(FUZZ_BIN) guest-deps
	@tests/run-all

# The stress suite (not part of `test`): docs/testing.md, "Stress suite".
# WASP_STRESS_QUICK=1 runs it in about 5 minutes (a 60 s JVM soak).
stress: all
	@tests/stress/run

demo: all
	@examples/demo.sh

bench: all
	@bench/native.sh

clean:
	rm -rf build

.PHONY: all deps guest-deps fuzz-deps fuzz unit e2e test stress demo bench clean
-include $(shell find build/obj build/fuzz/obj -name '*.d' 2>/dev/null)
