#!/usr/bin/env bash
# Node.js and npm for the Node.js example bot's tests: installed from Debian's packages
# when missing and we may (root, apt-get present, as in CI); otherwise one line saying how.
set -euo pipefail

command -v npm >/dev/null && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "npm not found: installing Node.js and npm from Debian's packages" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    command -v npm >/dev/null && exit 0
fi
echo "the tests need Node.js 18+ with npm (for bots/node): install them, e.g." \
     "'sudo apt-get install nodejs npm', then run 'make test' again" >&2
exit 1
