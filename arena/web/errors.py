"""What a request can fail with, and the one line its answer says.

Only these reach a user as themselves: each is raised with a message written for the
user (a missing thing, a secret not shown yet, a bad parameter). Any other exception
is the app's own failure: its answer is a fixed line (:data:`FAILED`), and its text,
which may name a file, a database or a library's internals, goes to the log only."""

from __future__ import annotations


class NotFound(LookupError):
    """Nothing by that name or id: a 404 with this message."""


class Hidden(PermissionError):
    """A secret not shown yet (a replay, a seed): a 403 with this message."""


class BadRequest(ValueError):
    """A parameter the request may not have (a page out of range, an unknown sort
    column): a 400 with this message."""


class ReplayBroken(BadRequest):
    """A stored replay that does not re-simulate under this Arena's rules: the answer
    says that much (:data:`BROKEN`); where and why is in the log."""

    def __init__(self, match_id: str, detail: str = "") -> None:
        super().__init__(BROKEN)
        self.match_id = match_id
        self.detail = detail

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # pickled by the prebuild worker
        return (type(self), (self.match_id, self.detail))


#: what a user is told of the app's own failure
FAILED = "the web app could not answer this request (its log says why)"
#: what a user is told of a replay that does not re-simulate
BROKEN = (
    "this replay does not re-simulate under this Arena's rules (the web's log says "
    "where): try `arena replay verify` on it"
)
