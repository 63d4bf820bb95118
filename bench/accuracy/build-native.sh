#!/usr/bin/env bash
# bench/accuracy/build-native.sh OUT - builds the unplanted native programs of
# bench/accuracy.sh from their Debian source packages: real code nobody here
# wrote, compiled with the flags a distribution uses (-O2 -g), so reports
# carry file:line. Sources come from Debian's archive through apt-get source
# with a private apt state under OUT/apt (the system's sources list is not
# touched). Prints nothing on success; one line on failure.
#
# Programs (binary name: package, what it runs in bench/accuracy.sh):
#   minigzip  zlib 1.2.13     deflate a text corpus
#   bzip2     bzip2 1.0.8     BWT-compress the corpus
#   lz4       lz4 1.9.4       LZ4 HC compress the corpus
#   brotli    brotli 1.0.9    Brotli compress the corpus
#   lua       lua5.4 5.4.4    a Lua script (tables, strings, closures)
set -euo pipefail
out=${1:?usage: build-native.sh OUT}
mkdir -p "$out/apt/lists/partial" "$out/apt/cache/archives/partial" "$out/apt/parts" "$out/src" "$out/bin"
out=$(cd "$out" && pwd)
die() { echo "accuracy build: $*" >&2; exit 1; }

cat >"$out/apt/parts/debian-src.sources" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_private=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$out/apt/parts"
             -o "Dir::State::Lists=$out/apt/lists" -o "Dir::Cache=$out/apt/cache")

# fetch PACKAGE DIRGLOB: the package's upstream source unpacked in src/.
fetch() {
    local pkg=$1 glob=$2
    compgen -G "$out/src/$glob" >/dev/null && return 0
    [[ -s $out/apt/updated ]] || { apt-get "${apt_private[@]}" update -qq >/dev/null 2>&1 &&
        date >"$out/apt/updated"; } || die "apt-get update of Debian's source index failed"
    (cd "$out/src" && apt-get "${apt_private[@]}" source --download-only "$pkg" >/dev/null 2>&1) ||
        die "apt-get source $pkg failed"
    local tarball
    tarball=$(ls "$out/src/${pkg}"_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -n 1)
    [[ -n $tarball ]] || die "no upstream tarball for $pkg"
    tar -C "$out/src" -xf "$tarball" || die "cannot unpack $tarball"
}

CC=${CC:-gcc}
CFLAGS_REAL="-O2 -g -w"

build_minigzip() {
    fetch zlib 'zlib-*'
    local d
    d=$(ls -d "$out"/src/zlib-*/ | head -n 1)
    (cd "$d" && $CC $CFLAGS_REAL -D_LARGEFILE64_SOURCE=1 -I. adler32.c crc32.c deflate.c infback.c inffast.c \
        inflate.c inftrees.c trees.c zutil.c compress.c uncompr.c gzclose.c gzlib.c gzread.c gzwrite.c \
        test/minigzip.c -o "$out/bin/minigzip")
}

build_bzip2() {
    fetch bzip2 'bzip2-*'
    local d
    d=$(ls -d "$out"/src/bzip2-*/ | head -n 1)
    (cd "$d" && $CC $CFLAGS_REAL -D_FILE_OFFSET_BITS=64 blocksort.c huffman.c crctable.c randtable.c \
        compress.c decompress.c bzlib.c bzip2.c -o "$out/bin/bzip2")
}

build_lz4() {
    fetch lz4 'lz4-*'
    local d
    d=$(ls -d "$out"/src/lz4-*/ | head -n 1)
    (cd "$d" && $CC $CFLAGS_REAL -Ilib lib/lz4.c lib/lz4hc.c lib/lz4frame.c lib/xxhash.c programs/*.c \
        -o "$out/bin/lz4" -lpthread)
}

build_brotli() {
    fetch brotli 'brotli-*'
    local d
    d=$(ls -d "$out"/src/brotli-*/ | head -n 1)
    (cd "$d" && $CC $CFLAGS_REAL -Ic/include c/common/*.c c/dec/*.c c/enc/*.c c/tools/brotli.c \
        -o "$out/bin/brotli" -lm)
}

build_lua() {
    fetch lua5.4 'lua-*'
    local d
    d=$(ls -d "$out"/src/lua-*/ | head -n 1)
    (cd "$d/src" && $CC $CFLAGS_REAL -std=gnu99 -DLUA_USE_LINUX $(ls *.c | grep -v '^luac\.c$') \
        -o "$out/bin/lua" -lm -ldl)
}

for p in ${ACC_NATIVE:-minigzip bzip2 lz4 brotli lua}; do
    [[ -x $out/bin/$p ]] && continue
    declare -F "build_$p" >/dev/null || die "no build rule for '$p'"
    "build_$p" || die "building $p failed"
done
