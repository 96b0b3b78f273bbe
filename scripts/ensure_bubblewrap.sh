#!/usr/bin/env bash
# bubblewrap (Debian's bubblewrap) for the sandbox that bot code runs in (arena/sandbox,
# docs/hosting.md): installed from Debian's packages when missing and we may (root,
# apt-get present, as in CI); otherwise one line saying how. Then one run of it, which
# fails where the kernel or a container forbids its namespaces: one line says so too.
set -euo pipefail

BWRAP=${ARENA_BWRAP:-/usr/bin/bwrap}
if [ ! -x "$BWRAP" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bubblewrap not found: installing it from Debian's packages" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
if [ ! -x "$BWRAP" ]; then
    echo "the sandbox for bot code needs bubblewrap at $BWRAP: install it, e.g." \
         "'sudo apt-get install bubblewrap', then run make again" >&2
    exit 1
fi
if ! "$BWRAP" --unshare-pid --unshare-net --ro-bind / / -- /bin/true 2>/dev/null; then
    echo "bubblewrap cannot make its namespaces here: in a container allow user" \
         "namespaces, or give it CAP_SYS_ADMIN with seccomp unconfined (docs/hosting.md)" >&2
    exit 1
fi
