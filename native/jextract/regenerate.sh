#!/usr/bin/env bash
# Regenerates the raw CUDA runtime bindings with the real jextract from the one list (native/jextract/cudart.args)
# into a temporary directory and diffs them against the hand-written ones in
# bindings/src/main/java/dev/kvtier/cuda/runtime.
#
# Usage: native/jextract/regenerate.sh [--keep DIR]      (--keep: write jextract's output to DIR and keep it)
# Exit:  0 no differences; 1 differences (printed as a unified diff); 2 jextract or the CUDA headers not found,
#        or jextract failed.
#
# jextract is found as $JEXTRACT_HOME/bin/jextract, else `jextract` on PATH. It is not published to Maven Central
# or the OS package registries, which is why the bindings are written by hand in its shape.
#
# Expected differences: the hand-maintained deviations, each marked "kvtier:" in the Java source and listed in
# bindings/src/main/java/dev/kvtier/cuda/runtime/package-info.java:
#   - symbol lookup: cudart_h resolves symbols in the libcudart chosen by dev.kvtier.cuda.CudaLibraryLoader, not in
#     the fixed library jextract derives from `-l cudart` (which would dlopen the dev symlink libcudart.so);
#   - descriptors live in CudartDescriptors.java (not generated), referenced by the holder classes;
#   - Linker.Option.critical(false) on the calls that never block (cudaGetLastError, cudaPeekAtLastError,
#     cudaEventQuery, cudaStreamQuery, cudaGetErrorName, cudaGetErrorString, cudaRuntimeGetVersion);
#   - cudaMemcpyBatchAsync_cuda12 (the 12.8/12.9 9-argument ABI of the same symbol) and MemcpyBatchAbi.java, which
#     chooses between it and jextract's 8-argument cudaMemcpyBatchAsync by cudaRuntimeGetVersion();
#   - package-info.java itself.
# Anything else in the diff is drift: fix the Java side (or the list) until only these remain.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bindings="$root/bindings/src/main/java/dev/kvtier/cuda/runtime"

keep=""
if [ "${1:-}" = "--keep" ]; then
    [ -n "${2:-}" ] || { echo "usage: $0 [--keep DIR]" >&2; exit 2; }
    keep="$2"
elif [ $# -gt 0 ]; then
    echo "usage: $0 [--keep DIR]" >&2
    exit 2
fi

jextract=""
if [ -n "${JEXTRACT_HOME:-}" ] && [ -x "$JEXTRACT_HOME/bin/jextract" ]; then
    jextract="$JEXTRACT_HOME/bin/jextract"
elif command -v jextract >/dev/null 2>&1; then
    jextract="$(command -v jextract)"
fi
if [ -z "$jextract" ]; then
    cat >&2 <<'EOF'
regenerate.sh: jextract not found (not on PATH, and $JEXTRACT_HOME/bin/jextract does not exist).
  jextract is not in Maven Central or the OS package registries. Download a build for JDK 22 or newer from
  https://jdk.java.net/jextract/ (or build https://github.com/openjdk/jextract), unpack it, and either put its
  bin/ directory on PATH or set JEXTRACT_HOME to the unpacked directory; then run this script again.
EOF
    exit 2
fi

cuda_inc=""
for r in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [ -n "$r" ] && [ -f "$r/include/cuda_runtime_api.h" ]; then
        cuda_inc="$r/include"
        break
    fi
done
[ -n "$cuda_inc" ] || { echo "regenerate.sh: no cuda_runtime_api.h under \$CUDA_HOME, \$CUDA_PATH or /usr/local/cuda" >&2; exit 2; }

if [ -n "$keep" ]; then
    mkdir -p "$keep"
    out="$(cd "$keep" && pwd)"
else
    out="$(mktemp -d "${TMPDIR:-/tmp}/kvtier-jextract.XXXXXX")"
    trap 'rm -rf "$out"' EXIT
fi

cd "$root"
echo "regenerate.sh: $("$jextract" --version 2>&1 | head -1) with $cuda_inc" >&2
"$jextract" @native/jextract/cudart.args -I "$cuda_inc" -I native/include --output "$out" \
    native/include/kvtier_cuda.h || { echo "regenerate.sh: jextract failed" >&2; exit 2; }

generated="$out/dev/kvtier/cuda/runtime"
if diff -ru "$generated" "$bindings"; then
    echo "regenerate.sh: the bindings match jextract's output" >&2
else
    echo "regenerate.sh: differences above (expected: the deviations listed at the top of this script)" >&2
    exit 1
fi
