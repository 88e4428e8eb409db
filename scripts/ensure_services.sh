#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on 127.0.0.1; start local ones that are installed but stopped.
set -u

pg_ready() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null || (echo > /dev/tcp/127.0.0.1/5432) 2>/dev/null; }
redis_ready() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

wait_for() {
  local check=$1 name=$2
  for _ in $(seq 1 30); do
    if $check; then return 0; fi
    sleep 1
  done
  echo "error: $name did not come up on 127.0.0.1" >&2
  return 1
}

if ! pg_ready; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "PostgreSQL is down; starting the local cluster"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    wait_for pg_ready PostgreSQL || exit 1
  else
    echo "error: PostgreSQL is not answering on 127.0.0.1:5432 and no local cluster is installed." >&2
    echo "       Install PostgreSQL or set DATABASE_URL to a reachable server." >&2
    exit 1
  fi
fi

if ! redis_ready; then
  if command -v redis-server >/dev/null 2>&1; then
    echo "Redis is down; starting a local server"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no || true
    wait_for redis_ready Redis || exit 1
  else
    echo "error: Redis is not answering on 127.0.0.1:6379 and redis-server is not installed." >&2
    echo "       Install Redis or set REDIS_URL to a reachable server." >&2
    exit 1
  fi
fi
echo "PostgreSQL and Redis are up."
