# Sourced by run.sh and race.sh: a scratch PostgreSQL 15 on 127.0.0.1:$port in a temporary data directory,
# started with the settings faultline's postgres database uses (examples/sql/postgres.ts) plus any extra
# `-c name=value` arguments, stopped and removed when the calling script exits (also on error or Ctrl-C).
# Sets: work (the temporary directory), psql (an array: psql connected to the server), version.
start_scratch_server() {
  local port=$1
  shift
  local bin
  bin=$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || pg_config --bindir)
  as_pg=()
  [[ $(id -u) -eq 0 ]] && as_pg=(runuser -u postgres --)
  work=$(mktemp -d /tmp/pg-ssi-repro.XXXXXX)
  chmod 755 "$work"
  [[ ${#as_pg[@]} -gt 0 ]] && chown postgres "$work"
  scratch_bin=$bin
  trap stop_scratch_server EXIT
  trap 'exit 130' INT TERM
  "${as_pg[@]}" "$bin/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
  "${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/postgres.log" -w -t 60 -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$work -c max_connections=200 -c shared_buffers=32MB -c lock_timeout=1s -c deadlock_timeout=200ms $*" start >/dev/null
  psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres)
  version=$("${psql[@]}" -Atc 'SELECT version()')
}

stop_scratch_server() {
  "${as_pg[@]}" "$scratch_bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
