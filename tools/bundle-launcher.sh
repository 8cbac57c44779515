#!/usr/bin/env bash
# attn launcher inside the self-contained bundle: runs the CLI on the bundled Java runtime (no JDK needed).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# the JVM's stderr minus its start-up line about jdk.incubator.vector, partial lines passed through as they come
# (progress bars); the same filter as the repository's ./attn
drop_vector_warning() {
  local first
  if ! IFS= read -r first; then printf '%s' "$first"; exit 0; fi
  [ "$first" = "WARNING: Using incubator modules: jdk.incubator.vector" ] || printf '%s\n' "$first"
  exec cat
}

TTY=false; [ -t 2 ] && TTY=true
JAVA_CMD=("$HERE/runtime/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -Dattn.stderr.tty=$TTY -XX:+UseParallelGC ${ATTN_JAVA_OPTS:-} -cp "$HERE/lib/*" io.attn.cli.Main "$@")
if [ "${1:-}" = serve ]; then
  # the server replaces this shell, so that SIGTERM from a shell, systemd or a container reaches it (a graceful stop)
  exec "${JAVA_CMD[@]}"
fi
exec 3>&1
set +e
"${JAVA_CMD[@]}" 2>&1 1>&3 3>&- | drop_vector_warning >&2
exit "${PIPESTATUS[0]}"
