"""What every answer of the web carries, whatever route made it (an ASGI middleware,
:class:`Headers`), and the one way a download is named (:func:`attachment`).

* A strict **Content-Security-Policy**: scripts, styles, pictures and connections from
  the app itself only, no inline script or style attribute (the pages have none), no
  plugin, no ``<base>``, forms to the app only, and no framing (``frame-ancestors
  'none'``, and ``X-Frame-Options: DENY`` for older browsers). A payload that got into
  a page despite the escaping could not run.
* ``X-Content-Type-Options: nosniff``: a JSON answer or a replay is never taken for a
  page or a script. ``Referrer-Policy: no-referrer``: a link out of a page tells nothing
  of it. ``Cross-Origin-Opener-Policy: same-origin``.
* ``Cache-Control``: a route that says nothing gets ``no-store`` (a secret's 403, a
  live stream, an error: never kept by a browser or a proxy); a route whose answer is
  public says so (:data:`PUBLIC`: kept, but asked again each time), and the app's own
  static files may be kept an hour (:data:`STATIC`).
* Redirects are **relative**: a ``Location`` holds a path (and query) of this app,
  never a host, so a ``Host`` header is never reflected (Starlette's redirects of a
  path with a trailing slash build it from the request's Host); its characters are
  percent-encoded, and a path that begins with ``//`` (which a browser would take for
  another host) keeps one slash.
* A header value with a line break (an id with CR/LF in a header) is never sent: the
  break becomes a space; h11 would refuse it and the answer would be lost.
* ``HEAD`` is answered wherever ``GET`` is: the app answers a GET, the server sends the
  head only (uvicorn does that for a HEAD request), and a stream (server-sent events)
  ends after its head.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: set on every answer
FIXED = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
#: an answer nothing in which is secret, that changes with the store: kept, asked again
PUBLIC = "no-cache"
#: an answer that may hold a secret, or is live: never kept
SECRET = "no-store"
#: the app's stylesheets and scripts
STATIC = "public, max-age=3600"
#: the characters a Location path keeps as they are (RFC 3986's pchar, "/" and "?")
_SAFE = "/%:@!$&'()*+,;=-._~"


def relative(location: str) -> str:
    """``location`` as a path of this app: no scheme or host, every character that a
    URL path may not hold percent-encoded, one leading slash."""
    parts = urlsplit(location)
    path = "/" + quote(parts.path, safe=_SAFE).lstrip("/")
    query = quote(parts.query, safe=_SAFE + "?")
    return f"{path}?{query}" if query else path


def attachment(name: str) -> str:
    """A ``Content-Disposition`` that downloads as ``name``, whatever it holds (RFC
    6266): ``filename*`` with the name percent-encoded as UTF-8, and a ``filename`` of
    ASCII letters, digits, ``.``, ``-`` and ``_`` only (every other character an
    ``_``) for clients that know no ``filename*``. No quote, semicolon or line break
    of ``name`` reaches the header as itself."""
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:120].lstrip(".") or "download"
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def _clean(value: bytes) -> bytes:
    """A header value without line breaks."""
    return value.replace(b"\r", b" ").replace(b"\n", b" ")


class Headers:
    """The middleware (see the module's doc), outermost: it sees every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        static = scope["path"].startswith("/static/")
        headed = asyncio.Event()  # a HEAD's head is sent: the app may stop

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = [(k, _clean(v)) for k, v in message.get("headers", [])]
                headers = MutableHeaders(raw=raw)
                for name, value in FIXED.items():
                    headers[name] = value
                if "cache-control" not in headers or static:
                    headers["cache-control"] = STATIC if static else SECRET
                if "location" in headers:
                    headers["location"] = relative(headers["location"])
                await send({**message, "headers": headers.raw})
                if head:  # the head is all a HEAD gets (the server sends no body)
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    headed.set()
                return
            if head and headed.is_set():
                return  # the body of a HEAD: nothing to send
            await send(message)

        async def receiving() -> dict[str, Any]:
            if not head:
                return await receive()
            await headed.wait()  # a HEAD has no body; a stream ends once its head is sent
            return {"type": "http.disconnect"}

        if head:
            scope = {**scope, "method": "GET"}  # the server's own scope still says HEAD
        await self.app(scope, receiving, sending)
