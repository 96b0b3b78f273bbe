"""The plugin-manager factory and the registry of games, variants and bots.

Built-in plugins load exactly as third-party ones do: through the ``arena``
entry-point group (ours are declared in ``pyproject.toml``). Nothing is loaded at
import time; call :func:`load_registry`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pluggy

from arena import hookspecs
from arena.engine.core import Game, OptionSpec

ENTRY_POINT_GROUP = "arena"


@dataclass(frozen=True)
class Variant:
    """A named variant (or option bundle) of a game, implemented by a plugin object."""

    game: str
    name: str
    description: str
    plugin: object
    #: names of variants of the same game this one cannot be combined with
    conflicts: tuple[str, ...] = ()
    #: options this variant adds to its game (``--option name=value``)
    options: tuple[OptionSpec, ...] = ()
    #: raised by one whenever a rule changes so that a recorded game can go differently;
    #: replays record it, and verifying one made under another version says so
    rules_version: int = 1


@dataclass(frozen=True)
class BotSpec:
    """An in-process bot: ``factory(seat, seed)`` returns a :class:`~arena.engine.Player`."""

    game: str
    name: str
    description: str
    factory: Callable[[int, int], Any]


@dataclass
class Registry:
    """Everything the installed plugins registered."""

    games: dict[str, Game] = field(default_factory=dict)
    variants: dict[tuple[str, str], Variant] = field(default_factory=dict)
    bots: dict[tuple[str, str], BotSpec] = field(default_factory=dict)

    def game(self, name: str) -> Game:
        try:
            return self.games[name]
        except KeyError:
            raise ValueError(
                f"unknown game {name!r}; installed: {', '.join(sorted(self.games)) or 'none'}"
            ) from None

    def variant(self, game: str, name: str) -> Variant:
        try:
            return self.variants[(game, name)]
        except KeyError:
            known = sorted(v for g, v in self.variants if g == game)
            raise ValueError(
                f"unknown variant {name!r} for {game}; known: {', '.join(known) or 'none'}"
            ) from None

    def bot(self, game: str, name: str) -> BotSpec:
        try:
            return self.bots[(game, name)]
        except KeyError:
            known = sorted(b for g, b in self.bots if g == game)
            raise ValueError(
                f"unknown bot {name!r} for {game}; known: {', '.join(known) or 'none'}"
            ) from None

    def resolve_variants(self, game: str, names: Iterable[str]) -> list[Variant]:
        """Variant objects for ``names``, refusing unknown, repeated or conflicting ones."""
        chosen: list[Variant] = []
        for name in names:
            variant = self.variant(game, name)
            if variant in chosen:
                raise ValueError(f"variant {name!r} given twice")
            for other in chosen:
                if other.name in variant.conflicts or variant.name in other.conflicts:
                    raise ValueError(f"variants {other.name!r} and {name!r} cannot be combined")
            chosen.append(variant)
        return chosen

    def board_options(
        self, game: str, variants: list[str], options: dict[str, str]
    ) -> dict[str, str]:
        """The options that split a board of ``game`` (``Game.board_options``). Options
        that no longer parse (a store written by an older Arena) keep their own board:
        each as given, made safe for a key."""
        try:
            chosen = self.resolve_variants(game, variants)
            return self.game(game).board_options(options, chosen)
        except ValueError:
            return {
                re.sub(r"[^A-Za-z0-9._-]+", "-", k)[:32]: re.sub(r"[^A-Za-z0-9._-]+", "-", v)[:32]
                for k, v in sorted(options.items())
                if v is not None
            }

    def check_board_query(self, game: str, variants: list[str], options: dict[str, str]) -> None:
        """ValueError (one line) for a board asked for by options ``game`` (with
        ``variants``) does not have, or values it refuses: a filter that could only ever
        find nothing (:meth:`board_options` keeps what a store holds, whatever it is)."""
        self.game(game).board_options(options, self.resolve_variants(game, variants))

    def check_options(
        self, game: str, options: dict[str, str | None], chosen: list[Variant]
    ) -> None:
        """Refuse an option that belongs to a variant that was not chosen, saying which."""
        chosen_names = {v.name for v in chosen}
        for (g, name), variant in self.variants.items():
            if g != game or name in chosen_names:
                continue
            names = {spec.name for spec in variant.options}
            names |= {alias for spec in variant.options for alias, _ in spec.aliases}
            for option in options:
                if option in names:
                    raise ValueError(f"option {option} belongs to a variant: add --variant {name}")

    def _add_variant(self, variant: Variant) -> None:
        if variant.name == variant.game:
            # a replay records the game's rules version under the game's name
            raise ValueError(f"a variant of {variant.game} cannot be named {variant.name!r}")
        self._add(self.variants, (variant.game, variant.name), variant, "variant")

    def _add(self, table: dict, key: tuple | str, value: object, what: str) -> None:
        if key in table:
            raise ValueError(f"{what} {key!r} registered twice")
        table[key] = value


def get_plugin_manager(
    load_entrypoints: bool = True, plugins: Iterable[object] = ()
) -> pluggy.PluginManager:
    """A plugin manager with every hook spec, the installed plugins and ``plugins``."""
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    if load_entrypoints:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    for plugin in plugins:
        pm.register(plugin)
    pm.check_pending()
    return pm


@cache
def default_registry() -> Registry:
    """This process's registry of every installed plugin, loaded once (what the store
    asks when it keys a leaderboard by a game's options)."""
    return load_registry()


def load_registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """Ask every plugin to register its games, variants and bots."""
    pm = pm or get_plugin_manager()
    registry = Registry()
    pm.hook.arena_register_games(
        register=lambda game: registry._add(registry.games, game.name, game, "game")
    )
    pm.hook.arena_register_variants(register=registry._add_variant)
    pm.hook.arena_register_bots(
        register=lambda b: registry._add(registry.bots, (b.game, b.name), b, "bot")
    )
    return registry
