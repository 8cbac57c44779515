#!/usr/bin/env bash
# attn launcher inside the self-contained bundle: runs the CLI on the bundled Java runtime (no JDK needed).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec 3>&1
set +e
"$HERE/runtime/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -XX:+UseParallelGC ${ATTN_JAVA_OPTS:-} -cp "$HERE/lib/*" io.attn.cli.Main "$@" 2>&1 1>&3 3>&- \
  | grep -v --line-buffered '^WARNING: Using incubator modules: jdk.incubator.vector' >&2
exit "${PIPESTATUS[0]}"
