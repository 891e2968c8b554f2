#!/usr/bin/env bash
# Replays one StoreOpTrace file through the Rust seed and the Java stores, ROUNDS rounds, the stores interleaved
# in every round (one fresh process each), and prints each run's RESULT line with its peak RSS (KiB, /usr/bin/time).
# Usage (from the repository root, after `./mvnw -B -o -q -DskipTests package` and
#   `KVTIER_SEED_DIR=/work/shared/seeds cargo build --release --manifest-path bench/seed-replay/Cargo.toml`):
#   bench/seed-replay/compare.sh TRACE ROUNDS [JAR] [STORES]
# STORES: space-separated, default "rust-seed default least-accessed-first seed-port"; WARMUPS (env, default 1)
# warm-up passes per loop; JAVA (env) the java binary, default JDK 25's.
set -euo pipefail
trace=$1
rounds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
jar=${3:-$root/bench/target/benchmarks.jar}
stores=${4:-rust-seed default least-accessed-first seed-port}
warmups=${WARMUPS:-1}
java=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
rust=$root/bench/seed-replay/target/release/seed-replay
[[ -f $trace ]] || { echo "no trace $trace (make one with StoreOpTrace)" >&2; exit 2; }
for round in $(seq 1 "$rounds"); do
    for store in $stores; do
        out=$(mktemp)
        if [[ $store == rust-seed ]]; then
            /usr/bin/time -f 'RSS_KB %M' "$rust" "$trace" "$warmups" >"$out" 2>&1
        else
            /usr/bin/time -f 'RSS_KB %M' "$java" -Xmx6g -cp "$jar" dev.kvtier.bench.store.StoreTraceReplay \
                "$trace" "$store" "$warmups" >"$out" 2>&1
        fi
        echo "round $round $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) $(grep '^RESULT' "$out") rss_kb=$(grep '^RSS_KB' "$out" | cut -d' ' -f2)"
        rm -f "$out"
    done
done
