#!/usr/bin/env bash
# Prepares the one-shot GPU check for a CUDA machine that has no Java and no network:
# builds the jars, a jlink'd Java runtime (only the modules the jars need) and copies the scripts into
# bench/gpu/bundle/ (git-ignored), at most 60 MiB. Copy that folder over and run its run.sh there:
#   OUT=/some/dir ./bundle/run.sh
# Usage: bench/gpu/prepare.sh            (from anywhere; needs a JDK >= 22 with jlink, found like .ci/run)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bundle="$here/bundle"
max_bytes=$((60 * 1024 * 1024))

jdk_ok() {
  local home="$1" v
  [ -x "$home/bin/jlink" ] && [ -x "$home/bin/jdeps" ] || return 1
  v=$("$home/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  [ -n "$v" ] && [ "${v%%.*}" -ge 22 ]
}
jdk=""
for home in "${JAVA_HOME:-}" /usr/lib/jvm/* "$HOME"/.jdks/* "$HOME"/.sdkman/candidates/java/*; do
  [ -n "$home" ] && jdk_ok "$home" && { jdk="$home"; break; }
done
if [ -z "$jdk" ]; then
  echo "prepare: no JDK 22 or newer with jlink found (looked at JAVA_HOME, /usr/lib/jvm, ~/.jdks, SDKMAN)" >&2
  exit 1
fi
echo "prepare: building with Maven (tests compiled, not run); jlink from $jdk"
(cd "$root" && ./mvnw -B -q -Pgpu-check -DskipTests package)

rm -rf "$bundle"
mkdir -p "$bundle/lib" "$bundle/tests"
cp "$root/bench/target/benchmarks.jar" "$root"/bench/target/gpu-lib/*.jar "$bundle/lib/"
for module in bindings core bench; do
  if [ -d "$root/$module/target/test-classes" ]; then
    cp -r "$root/$module/target/test-classes" "$bundle/tests/$module"
  fi
done
# native/build (fake libcudart, ABI printer, the JMH baseline's C helper; < 1 MiB) as the tests and
# benchmarks expect it under kvtier.native.dir. The gpu-tagged tests load the machine's real libcudart.
if [ -d "$root/native/build" ]; then
  cp -r "$root/native/build" "$bundle/native"
  rm -f "$bundle/native/.lock"
fi
cp "$here/run.sh" "$here/baseline.cu" "$bundle/"
chmod +x "$bundle/run.sh"

# Only the modules the code needs: jdeps over each jar and the test classes (one at a time: a modular jar
# such as jqwik-time names modules that exist only as plain jars here), plus what JMH and the JUnit
# launcher reach reflectively.
release=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
modules="java.base,java.management,jdk.management,jdk.unsupported,java.logging,jdk.zipfs"
for target in "$bundle"/lib/*.jar "$bundle"/tests/*; do
  found=$("$jdk/bin/jdeps" --multi-release "$release" --ignore-missing-deps --print-module-deps \
            --class-path "$bundle/lib/*" "$target" 2>/dev/null | tail -1) || found=""
  case "$found" in
    java.*|jdk.*) modules="$modules,$found" ;;
    *) echo "prepare: jdeps could not analyse $(basename "$target") alone; relying on the rest" ;;
  esac
done
# java.desktop (~10 MiB) is reached only by commons-math3's 2-D geometry inside JMH's jar, never loaded.
modules=$(echo "$modules" | tr ',' '\n' | grep -vx 'java.desktop' | sort -u | paste -sd, -)
echo "prepare: jlink modules: $modules"
"$jdk/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --compress=zip-9 --output "$bundle/runtime"
# libjvm.so ships with its symbol table (~5 MiB); the runtime does not need it.
if command -v strip >/dev/null 2>&1; then
  find "$bundle/runtime/lib" -name '*.so' -exec strip --strip-unneeded {} \;
fi
"$bundle/runtime/bin/java" -version > /dev/null 2>&1 || { echo "prepare: FAILED: the jlink'd runtime does not start" >&2; exit 1; }

mib() { du -sb "$1" | awk '{ printf "%.1f", $1 / 1048576 }'; }
size=$(du -sb "$bundle" | cut -f1)
echo "prepare: bundle $bundle is $(mib "$bundle") MiB (runtime $(mib "$bundle/runtime"), jars $(mib "$bundle/lib"), tests $(mib "$bundle/tests"))"
if [ "$size" -gt "$max_bytes" ]; then
  echo "prepare: FAILED: the bundle is over 60 MiB; trim jlink modules or jars" >&2
  exit 1
fi
echo "prepare: done. On the CUDA machine: OUT=/path/to/results <bundle>/run.sh"
