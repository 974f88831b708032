# Stopping a process a script started (sourced, not run): stop_pid PID sends SIGTERM, waits up
# to 15 s for the process to exit, then sends SIGKILL, and reaps it when it is the shell's child.
# Nothing happens for an empty PID or a process already gone. By PID only, never by name.
stop_pid() {
  local pid=$1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
