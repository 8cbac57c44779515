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
# The JVM runs as a child (stdin this shell's, stderr through the filter, a coprocess), and TERM, HUP and INT sent to
# this shell's PID alone are passed on to it (as ./attn does: see there); this shell exits with the JVM's status.
set +e
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then # no coproc (macOS's bash 3.2): the JVM replaces the shell, signals reach it
  exec "${JAVA_CMD[@]}" 2> >(drop_vector_warning >&2)
fi
JVM= SIG=
trap 'SIG=TERM; [ -n "$JVM" ] && kill -TERM "$JVM" 2>/dev/null' TERM HUP
trap 'SIG=INT; [ -n "$JVM" ] && kill -INT "$JVM" 2>/dev/null' INT
# the filter outlives a signal to the whole process group (systemd's control-group stop, a hangup) to pass on the
# JVM's last lines; it ends at the JVM's end (EOF)
coproc FILTER { trap '' TERM HUP; drop_vector_warning >&2; }
FILTER_CHILD=$FILTER_PID # bash unsets FILTER_PID once it has reaped the coprocess
exec 5>&"${FILTER[1]}" {FILTER[1]}>&- {FILTER[0]}<&-
# a background command of a non-interactive shell starts with INT and QUIT ignored, which the JVM would keep (no
# Ctrl-C): the subshell restores them before it becomes the JVM
( trap - INT QUIT; exec "${JAVA_CMD[@]}" ) 0<&0 2>&5 5>&- &
JVM=$!
[ -n "$SIG" ] && kill -"$SIG" "$JVM" 2>/dev/null # a signal that came before the JVM did
exec 5>&-
# a trapped signal interrupts wait (status 128 + n): wait again until the JVM's own status comes back
while :; do
  SIG=
  wait "$JVM"; rc=$?
  [ -n "$SIG" ] || break
done
wait "$FILTER_CHILD" 2>/dev/null
exit "$rc"
