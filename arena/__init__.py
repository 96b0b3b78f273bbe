"""Arena: a tournament platform where AI bots play Risk and Stratego."""

import pluggy

__version__ = "0.1.0"

#: The one marker for every hook implementation, built-in or third-party.
hookimpl = pluggy.HookimplMarker("arena")

__all__ = ["__version__", "hookimpl"]
