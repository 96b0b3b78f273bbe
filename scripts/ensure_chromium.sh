#!/usr/bin/env bash
# Chromium for the web app's browser tests (tests/web/test_browser.py drives it with
# Playwright): installed from Debian's packages when missing and we may (root, apt-get
# present, as in CI); otherwise one line saying how. Playwright never downloads a browser.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "chromium not found: installing it from Debian's packages" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    [ -x "$CHROMIUM" ] && exit 0
fi
echo "the browser tests need Chromium at $CHROMIUM: install it, e.g." \
     "'sudo apt-get install chromium', then run 'make test' again" >&2
exit 1
