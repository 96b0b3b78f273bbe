"""``arena web``: the store's leaderboards, bots, tournaments and matches in a browser,
read-only, rendered on the server (see docs/web.md)."""

from arena.web.app import create_app

__all__ = ["create_app"]
