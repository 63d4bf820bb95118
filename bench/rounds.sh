# bench/rounds.sh - the measuring loop bench/native.sh and bench/java.sh
# share (sourced, not run).
#
# bench_rounds WORKLOAD...: `runs` rounds; in each, every workload under
# every configuration of the array `configs`, visited in an order rotated
# per round so baseline and profiled runs interleave. Each measurement is
# `measure_once WORKLOAD CONFIG ROUND`, whose output is "wall user sys rss
# other steal ... profile_interval"; one disturbed by other processes (other
# + steal above a quarter of wall) is repeated up to `retries` times. A
# function `before_measure`, if defined, runs first (native.sh waits for a
# quiet machine). Rows go to $results as TSV with config_ns[CONFIG]; a
# "default" run whose profile states another interval than $default_ns
# means a stale build and stops the benchmark.
# The library's default interval (ns), as src/engine/options.h defines it.
bench_default_ns() {
    local ns
    ns=$(sed -n 's/^#define[[:space:]]*OPTIONS_DEFAULT_INTERVAL_NS[[:space:]]*\([0-9][0-9]*\).*/\1/p' \
         src/engine/options.h)
    [[ -n $ns ]] || die "cannot read OPTIONS_DEFAULT_INTERVAL_NS from src/engine/options.h"
    echo "$ns"
}

bench_rounds() {
    local r k w cfg try fields wall user sys rss other steal rest piv vals n=${#configs[@]}
    local start=$SECONDS
    noisy=0
    for ((r = 1; r <= runs; r++)); do
        for w in "$@"; do
            for ((k = 0; k < n; k++)); do
                cfg=${configs[$(((k + r) % n))]}
                for ((try = 0; ; try++)); do
                    if declare -F before_measure >/dev/null; then before_measure; fi
                    fields=$(measure_once "$w" "$cfg" "$r")
                    read -r wall user sys rss other steal rest <<<"$fields"
                    if awk -v o="$other" -v s="$steal" -v t="$wall" 'BEGIN { exit !((o + s) > 0.25 * t) }' &&
                       ((try < retries)); then
                        noisy=$((noisy + 1))
                        continue
                    fi
                    break
                done
                piv=${fields##* }
                vals=${fields% *}
                [[ $cfg == default && $piv != - && $piv != "$default_ns" ]] &&
                    die "wasp's default interval $piv ns != options.h $default_ns ns — rebuild (make)"
                printf '%s\t%s\t%d\t%s\t%s\t%s\n' "$w" "$cfg" "$r" "${config_ns[$cfg]}" \
                    "$(tr ' ' '\t' <<<"$vals")" "$piv" >>"$results"
            done
        done
        echo "  round $r/$runs done ($((SECONDS - start)) s)" >&2
    done
    ((noisy == 0)) || echo "  $noisy measurement(s) repeated because other processes were busy" >&2
}
