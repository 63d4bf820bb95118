#!/usr/bin/env bash
# bench/accuracy.sh - how far the sampled fractions are from the truth, on
# programs nobody here planted anything in (issue 12): each program runs in
# every mode once under the exact mode (`wasp run --exact`: every access, under
# Valgrind) and once sampled (`wasp run`), and `wasp diff exact sampled`
# gives |Δ fraction| and whether the exact mode's top pair is among the
# sampled run's top 3. Writes the table to build/accuracy/accuracy.md (copy it
# into docs/accuracy.md) and the raw figures to build/accuracy/results.tsv.
#
# Programs: the native ones are real code from Debian's source packages
# compiled here (bench/accuracy/build-native.sh: zlib's minigzip, bzip2,
# lz4, brotli, lua); the Java ones are Debian's Rhino, Saxon-HE and BeanShell
# (bench/real/workload.{js,bsh}, report.xsl; installed with apt-get when missing).
#
# Sampled runs need watchpoints that fire. Where they never do (`wasp doctor
# --watch`), the sampled runs go to the QEMU TCG guest of tests/guest/ (one
# boot for all of them), as the trap-dependent tests do; the exact runs stay
# on the host. The table says which.
#
# Environment:
#   ACC_NATIVE="minigzip bzip2 lz4 brotli lua"   ACC_JAVA="rhino saxon bsh" (jython too: its
#                              exact run fails, jnr-ffi's start-up misbehaving under Valgrind)
#   ACC_MODES="dead-store silent-store silent-load"
#   ACC_OUT=build/accuracy     ACC_GUEST=auto|yes|no
#   ACC_STEPS="exact sampled table"   which steps to run (exact runs are kept
#                              once done; the slow Java ones can run apart)
#   ACC_INTERVAL               sampled interval (default: wasp's; 500us in the guest)
#   ACC_REPEAT="minigzip=8 lz4-dead-store=3"  sampled runs of a program, or of a program in
#                              one mode (default 1), merged into one
#                              profile: the inputs are sized for the exact mode, and a
#                              short run gives the sampled side too few pairs
#   WASP_GUEST_SMP=1 WASP_GUEST_QEMU_ARGS="-icount shift=0,sleep=off"   the guest's
#                              clock counts instructions (one per ns) instead of
#                              following the host's: samples then land per
#                              instruction, as on a machine whose every instruction
#                              takes the same time, wherever QEMU ends a block (its
#                              default clock lands them only at block starts and
#                              charges each block its emulation cost); icount needs
#                              one vCPU (two hang at boot here)
#   ACC_JVM_FLAGS              the JVM's machine-dependent settings, the same on both sides
#                              (default below: what Valgrind's JVM picks on our hosts)
#   ACC_SAMPLED_ARGS="--budget off"   more `wasp run` options for the sampled runs:
#                              in the guest one signal costs 3-9 ms, and the 2% budget
#                              left minigzip 10 samples and Rhino 115
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
native=${ACC_NATIVE-minigzip bzip2 lz4 brotli lua}
java=${ACC_JAVA-rhino saxon bsh}
modes=${ACC_MODES:-dead-store silent-store silent-load}
out=${ACC_OUT:-build/accuracy}
guest=${ACC_GUEST:-auto}
steps=" ${ACC_STEPS:-exact sampled table} "
step() { [[ $steps == *" $1 "* ]]; }
wasp=$root/build/bin/wasp
die() { echo "accuracy: $*" >&2; exit 1; }
# How many sampled runs program $1 gets in mode $2: ACC_REPEAT's "P-M=K",
# else its "P=K", else 1.
repeats_of() {
    local kv k
    for k in "$1-$2" "$1"; do
        for kv in ${ACC_REPEAT:-}; do
            [[ $kv == "$k="* ]] && { echo "${kv#*=}"; return; }
        done
    done
    echo 1
}
note() { echo "# accuracy: $*" >&2; }
[[ -x $wasp && -f build/lib/valgrind/wasp-amd64-linux ]] || die "run make first"
command -v python3 >/dev/null || die "python3 is needed"
mkdir -p "$out/runs"
out=$(cd "$out" && pwd)

bench/accuracy/build-native.sh "$out" || die "cannot build the native programs"
[[ -s $out/corpus.txt ]] || python3 bench/accuracy/corpus.py "$out/corpus.txt" 4096

# Java programs run with -Xbatch on both sides: a method's compiled code
# then replaces its slower tier at the same point of the program's progress
# in every run. Without it the JIT's timing decides which code runs: under
# Valgrind (one thread at a time, every thread ~50x slower) and under QEMU
# the program runs interpreted and profiling code for a different share of
# its work than on hardware, so the two runs would not execute the same code.
#
# And with one set of the JVM's machine-dependent choices: a JVM sizes its
# heap from the memory it sees and picks its code from the CPU features it
# sees, and Valgrind's JVM (AVX2, no ERMS, 24 GiB) and the guest's (ERMS,
# 16-byte vectors, 2 GiB) differ: the guest's JIT zeroed new objects with
# `rep stosb` where the exact run's used vector stores (BeanShell's dead-store
# run: 15% of the exact bytes in vector stores, 16% of the sampled ones in
# rep stos), copied arrays another way, vectorized loops 16 bytes wide, and
# collected a heap of 1 MiB regions instead of 4. ACC_JVM_FLAGS (default: the
# values `valgrind java -XX:+PrintFlagsFinal` gives on our hosts, so the exact
# runs made before this setting ran the same code) pins them on both sides.
# Not pinned: class data sharing, which the guest's jlink'd runtime lacks.
JVM_FLAGS=${ACC_JVM_FLAGS-"-XX:UseAVX=2 -XX:MaxVectorSize=32 -XX:-UseFastStosb -XX:+UseXMMForObjInit \
-XX:+UseUnalignedLoadStores -XX:+UseXMMForArrayCopy -XX:+UseFPUForSpilling -XX:-UseNewLongLShift \
-XX:-UseStoreImmI16 -XX:-UseXmmI2D -XX:-UseXmmI2F -XX:AllocatePrefetchDistance=192 \
-XX:AllocatePrefetchLines=4 -XX:MaxLoopPad=11 -XX:G1HeapRegionSize=4m \
-XX:InitialHeapSize=398458880 -XX:MaxHeapSize=6320816128"}
JAVA="java -Xbatch $JVM_FLAGS"
# The same holds for glibc: it picks its string and copy routines from the CPU
# it sees, and Valgrind's (Haswell-like: AVX2, no AVX-512, no FSRM, an 8 MiB
# cache) is not the host's. On our AMD hosts glibc ran its AVX-512 `memmove`
# and switched to `rep movsb` at 2 KiB where the exact run's used AVX2 loops up
# to 8 KiB: the two sides executed different copy code. ACC_GLIBC_TUNABLES
# (default: Valgrind's choices, read off `ld.so --list-diagnostics` under
# Valgrind; a no-op there) pins them on both sides, Java's JVMs included.
GLIBC_PIN=${ACC_GLIBC_TUNABLES-"glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,\
-AVX512_VBMI,-AVX512_VBMI2,-AVX512_BITALG,-AVX512_VPOPCNTDQ,-AVX512_IFMA,-AVX512_BF16,-AVX512_VNNI,-FSRM,\
Fast_Unaligned_Load,Fast_Unaligned_Copy,Prefer_PMINUB_for_stringop,Fast_Rep_String\
:glibc.cpu.x86_rep_movsb_threshold=8192:glibc.cpu.x86_rep_stosb_threshold=2048\
:glibc.cpu.x86_non_temporal_threshold=2097152"}
pinned=(env "GLIBC_TUNABLES=$GLIBC_PIN")
# Rhino names the classes it compiles a script into after the script's path:
# the same path on both sides (the guest gets files outside /w and /tmp at
# their own paths), or no pair of a JS function would match across them.
RHINO_JS=/var/tmp/wasp-accuracy/workload.js

# The command line of program P, with the repository at $1 and the output
# directory at $2 (the host's paths, or the guest's): stdout is discarded by
# the caller.
command_of() {
    local r=$1 o=$2 p=$3 b=$2/bin c=$2/corpus.txt
    case $p in
    minigzip) echo "$b/minigzip -c $c" ;;
    bzip2)    echo "$b/bzip2 -c $c" ;;
    lz4)      echo "$b/lz4 -9 -c $c" ;;
    brotli)   echo "$b/brotli -c -q 6 $c" ;;
    lua)      echo "$b/lua $r/bench/accuracy/workload.lua 2" ;;
    rhino)    echo "$JAVA -cp /usr/share/java/js.jar org.mozilla.javascript.tools.shell.Main $RHINO_JS 4" ;;
    saxon)    echo "$JAVA -cp /usr/share/java/Saxon-HE.jar net.sf.saxon.Transform -s:$o/orders-5k.xml -xsl:$r/bench/real/report.xsl -o:/tmp/acc-report.xml" ;;
    jython)   echo "$JAVA -jar /usr/share/java/jython.jar $r/bench/real/workload.py 1" ;;
    bsh)      echo "$JAVA -cp /usr/share/java/bsh.jar bsh.Interpreter $r/bench/real/workload.bsh 2" ;;
    *) die "unknown program '$p'" ;;
    esac
}

java_ready() {
    local p=$1
    case $p in
    rhino)  [[ -f /usr/share/java/js.jar ]] || apt-get install -y -qq rhino >/dev/null 2>&1 || return 1
            mkdir -p "${RHINO_JS%/*}" && cp bench/real/workload.js "$RHINO_JS" ;;
    saxon)  [[ -f /usr/share/java/Saxon-HE.jar ]] || apt-get install -y -qq libsaxonhe-java >/dev/null 2>&1
            [[ -s $out/orders-5k.xml ]] || python3 bench/real/gen-orders.py 5000 "$out/orders-5k.xml" ;;
    jython) [[ -f /usr/share/java/jython.jar ]] || apt-get install -y -qq jython >/dev/null 2>&1 ;;
    bsh)    [[ -f /usr/share/java/bsh.jar ]] || apt-get install -y -qq bsh >/dev/null 2>&1 ;;
    esac
}

programs="$native"
for p in $java; do
    if java_ready "$p"; then programs="$programs $p"; else note "skipping $p: cannot install its Debian package"; fi
done

# The exact runs, on the host: each is kept, with its command in .done, and
# run again only when the command changes.
step exact && for p in $programs; do
    for m in $modes; do
        d=$out/runs/$p-$m-exact
        cmd=$(command_of "$root" "$out" "$p")
        [[ -s $d/.done && $(cat "$d/.done") == "$cmd" ]] && continue
        rm -rf "$d"
        note "exact $p $m"
        # shellcheck disable=SC2086
        "${pinned[@]}" "$wasp" run --exact --mode "$m" -o "$d" -- $cmd >/dev/null 2>"$out/runs/$p-$m-exact.log" ||
            die "exact run of $p ($m) failed: $(tail -n 2 "$out/runs/$p-$m-exact.log")"
        printf '%s\n' "$cmd" >"$d/.done"
    done
done

# The sampled runs: here, or in the guest where watchpoints never fire.
where=host
if [[ $guest == yes ]] || { [[ $guest == auto ]] && ! "$wasp" doctor --watch >/dev/null 2>&1; }; then
    where=guest
fi
if step sampled; then
    interval=${ACC_INTERVAL:-}
    sampled_args=${ACC_SAMPLED_ARGS-"--budget off"}
    if [[ $where == host ]]; then
        for p in $programs; do
            for m in $modes; do
                d=$out/runs/$p-$m-sampled
                rm -rf "$d" "$d.log"
                note "sampled $p $m"
                for ((i = 0; i < $(repeats_of "$p" "$m"); i++)); do
                    # shellcheck disable=SC2046,SC2086 # the command and ACC_SAMPLED_ARGS are word lists
                    "${pinned[@]}" "$wasp" run --mode "$m" ${interval:+--interval "$interval"} $sampled_args -o "$d" -- $(command_of "$root" "$out" "$p") \
                        >/dev/null 2>>"$d.log" || die "sampled run of $p ($m) failed: $(tail -n 2 "$d.log")"
                done
            done
        done
    else
        note "watchpoints do not fire here: the sampled runs go to the QEMU TCG guest"
        # The guest sees the repository at /w (tests/guest/run-jobs ROOTDIR).
        [[ $out == "$root"/* ]] || die "the guest runs need ACC_OUT inside the repository ($root)"
        jobs=$out/guest-jobs.txt
        : >"$jobs"
        for p in $programs; do
            for m in $modes; do
                for ((i = 0; i < $(repeats_of "$p" "$m"); i++)); do
                    printf '%s %s %s\n' "$p-$m-sampled" "$m" "${pinned[*]} $(command_of /w "/w/${out#"$root"/}" "$p")" >>"$jobs"
                done
            done
        done
        for p in $programs; do
            for m in $modes; do
                rm -rf "$out/runs/$p-$m-sampled" "$out/runs/$p-$m-sampled".{log,status}
            done
        done
        WASP_GUEST_INTERVAL=${interval:-500us} WASP_GUEST_RUN_ARGS=$sampled_args tests/guest/run-jobs "$out/runs" "$jobs" "$root" ||
            die "the guest did not bring the sampled runs back"
        for p in $programs; do
            for m in $modes; do
                s=$out/runs/$p-$m-sampled
                [[ $(cat "$s.status" 2>/dev/null) == 0 ]] ||
                    die "sampled run of $p ($m) in the guest failed: $(tail -n 2 "$s.log" 2>/dev/null)"
            done
        done
    fi
fi

# The table.
step table || exit 0
printf 'program\tmode\texact\tsampled\tdelta\ttop_rank\tpairs\tci_lo\tci_hi\n' >"$out/results.tsv"
for p in $programs; do
    for m in $modes; do
        "$wasp" diff "$out/runs/$p-$m-exact" "$out/runs/$p-$m-sampled" --format json >"$out/runs/$p-$m.diff.json" ||
            die "wasp diff failed for $p $m"
        "$wasp" report "$out/runs/$p-$m-sampled" --format json >"$out/runs/$p-$m-sampled.json" ||
            die "wasp report failed for $p $m"
        python3 - "$p" "$m" "$out/runs/$p-$m.diff.json" "$out/runs/$p-$m-sampled.json" >>"$out/results.tsv" <<'PY'
import json, sys
p, m, path, sampled_path = sys.argv[1:5]
d = json.load(open(path))
totals = json.load(open(sampled_path))["totals"]  # pairs counted, the sampling interval
# The exact mode's synthetic pairs (its smallest pairs folded into one, the
# pairs past its context table) are not pairs to rank.
folded = lambda x: x["watch"]["frames"][0]["function"].startswith("[pairs ")
pairs = [x for x in d["pairs"] if not folded(x)]
exact_top = max(pairs, key=lambda x: x["a_share"], default=None)
sampled = sorted((x for x in pairs if x["b_share"] > 0), key=lambda x: -x["b_share"])
rank = 0
if exact_top is not None and exact_top["b_share"] > 0:
    rank = 1 + sampled.index(exact_top)
lo, hi = totals["fraction_ci95"]
print("%s\t%s\t%.4f\t%.4f\t%.4f\t%d\t%d\t%.4f\t%.4f" % (p, m, d["a"]["fraction"], d["b"]["fraction"],
      d["fraction_delta"], rank, totals["count"], lo, hi))
PY
    done
done
python3 - "$out/results.tsv" "$where" >"$out/accuracy.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
where = sys.argv[2]
print("| program | mode | exact | sampled (95% interval) | |Δ| (points) | exact top pair's rank in sampled | sampled pairs |")
print("|---|---|---:|---:|---:|---:|---:|")
deltas, hits, inside = [], 0, 0
for r in rows:
    d = abs(float(r["delta"])) * 100
    deltas.append(d)
    rank = int(r["top_rank"])
    hits += 1 <= rank <= 3
    exact, lo, hi = float(r["exact"]), float(r["ci_lo"]), float(r["ci_hi"])
    inside += lo <= exact <= hi
    print("| %s | %s | %.2f%% | %.2f%% (%.1f-%.1f) | %.2f | %s | %s |" % (
          r["program"], r["mode"], exact * 100, float(r["sampled"]) * 100, lo * 100, hi * 100, d,
          rank if rank else "absent", r["pairs"]))
print()
print("mean |Δ| %.2f points, worst %.2f, exact top pair in the sampled top 3 in %d of %d cells (%.0f%%); "
      "exact fraction inside the sampled run's 95%% interval in %d of %d; sampled runs on the %s" % (
      statistics.mean(deltas), max(deltas), hits, len(rows), 100.0 * hits / len(rows), inside, len(rows), where))
PY
cat "$out/accuracy.md"
