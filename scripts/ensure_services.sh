#!/usr/bin/env bash
# Start the services the test suite talks to, if they are not running: PostgreSQL on
# 127.0.0.1:5432 (database "test", trust auth). Tests that need a service fail, never
# skip, when it is missing, so this runs before them (`make test`, and so CI).
set -euo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ! pg_up; then
    echo "PostgreSQL is not running: starting it" >&2
    if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
        for version in /etc/postgresql/*; do
            pg_ctlcluster --skip-systemctl-redirect "$(basename "$version")" main start || true
        done
    fi
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
    if ! pg_up; then
        echo "PostgreSQL is needed on 127.0.0.1:5432 (database 'test', trust auth) and could" \
             "not be started here; set ARENA_TEST_POSTGRES to another server's URL" >&2
        [ -n "${ARENA_TEST_POSTGRES:-}" ] || exit 1
    fi
fi
