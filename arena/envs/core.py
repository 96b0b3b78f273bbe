"""What every Arena environment shares, with no reinforcement-learning library in it.

* A :class:`Codec` turns one seat's observation (the engine's ``State.observation``,
  the same dict a bot receives) into named numpy arrays, and one engine decision into
  a :class:`Chooser`: the decision made as one or more environment actions from a fixed
  ``Discrete`` range, each with its action mask.
* A :class:`Table` is one game being played through a codec: the engine state, the
  chooser of the decision in progress, and the rewards at the end.
* Reward schemes turn the final places into rewards.

The environments (``arena.envs.risk_v0``, ``arena.envs.stratego_v0``) and the SDK's
policy bot (``arena.sdk.policy``) are built on these, so a policy sees the same arrays
and masks in training and on a referee.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from arena.engine.core import Action, Decision, Game, Result, State
from arena.engine.seeds import fresh_seed
from arena.plugins import Registry, load_registry

#: a mask or an array of flags
FLAG = np.int8


@dataclass(frozen=True)
class ArraySpec:
    """The shape, type and bounds of one named observation array."""

    shape: tuple[int, ...]
    dtype: type
    low: int
    high: int


class Chooser(ABC):
    """One engine decision, made as a sequence of environment actions ("parts").

    ``mask`` is the action mask of the part asked now (1: legal). ``choose`` takes a
    legal action: it returns the engine action once the last part is chosen, else None
    (and ``mask`` is the next part's).
    """

    mask: np.ndarray

    @abstractmethod
    def choose(self, action: int) -> Action | None: ...

    def arrays(self) -> dict[str, np.ndarray]:
        """What the parts chosen so far add to the observation (the codec's names)."""
        return {}


class Codec(ABC):
    """A game's observation arrays and action layout for a fixed configuration."""

    game: str
    num_players: int
    num_actions: int
    #: every observation array but ``action_mask``, by name
    specs: dict[str, ArraySpec]

    @abstractmethod
    def chooser(self, seat: int, decision: Decision) -> Chooser:
        """``seat``'s decision, factored into parts."""

    @abstractmethod
    def arrays(self, seat: int, observation: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The arrays of ``seat``'s observation (the engine's dict), outside any part."""

    @abstractmethod
    def actions(self, seat: int, decision: Decision, action: Action) -> list[int]:
        """The environment actions that make the engine ``action`` for ``decision``:
        the way back from the protocol's action. ValueError if the layout cannot say it."""

    def observe(
        self, seat: int, observation: Mapping[str, Any], chooser: Chooser | None
    ) -> dict[str, np.ndarray]:
        """The whole observation: the arrays, the parts chosen so far, the action mask
        (all zeros when ``seat`` is not deciding)."""
        arrays = self.arrays(seat, observation)
        if chooser is None:
            arrays["action_mask"] = np.zeros(self.num_actions, FLAG)
        else:
            arrays.update(chooser.arrays())
            arrays["action_mask"] = chooser.mask.copy()  # the caller's to keep
        return arrays

    def mask_of(self, legal: Iterable[int]) -> np.ndarray:
        """The mask with ``legal`` set. A bytearray filled in a loop and seen as an
        array costs half of numpy's fancy indexing with a list."""
        mask = bytearray(self.num_actions)
        for action in legal:
            mask[action] = 1
        return np.frombuffer(mask, FLAG)


@cache
def registry() -> Registry:
    """The installed games, variants and bots (loaded once)."""
    return load_registry()


# --- rewards ---------------------------------------------------------------------------

#: a reward scheme: (places, seat) -> the seat's reward; places[s] is 1 for the best
Reward = Callable[[Sequence[int], int], float]


def win_loss(places: Sequence[int], seat: int) -> float:
    """+1 for a sole winner, 0 for a first place shared with others (a draw), -1 for
    every place below the first."""
    if places[seat] != 1:
        return -1.0
    return 1.0 if list(places).count(1) == 1 else 0.0


def ranked(places: Sequence[int], seat: int) -> float:
    """Linear in the place, from +1 (first) to -1 (last), tied seats sharing the mean
    of the positions they cover: the rewards of a game always sum to 0."""
    n = len(places)
    if n < 2:
        return 0.0
    ahead = sum(1 for p in places if p < places[seat])
    tied = sum(1 for p in places if p == places[seat])
    position = ahead + (tied - 1) / 2  # 0 for the best
    return 1.0 - 2.0 * position / (n - 1)


REWARDS: dict[str, Reward] = {"win_loss": win_loss, "ranked": ranked}


def reward_scheme(reward: str | Reward) -> Reward:
    """A scheme by name (``win_loss``, ``ranked``) or your own function."""
    if callable(reward):
        return reward
    try:
        return REWARDS[reward]
    except KeyError:
        raise ValueError(
            f"unknown reward scheme {reward!r}; known: {', '.join(REWARDS)} "
            "(or a function of (places, seat))"
        ) from None


def make_table(
    game_name: str,
    num_players: int,
    variants: Sequence[str],
    options: Mapping[str, Any] | None,
    codec_of: Callable[[State, dict[str, str]], Codec],
) -> Table:
    """A table of ``game_name`` under these rules, checked as the engine checks a match
    (a ValueError names what is wrong); ``codec_of(probe_state, options)`` makes the
    codec, from a game of these rules."""
    reg = registry()
    game = reg.game(game_name)
    chosen = reg.resolve_variants(game_name, variants)
    given = {name: str(value) for name, value in (options or {}).items()}
    reg.check_options(game_name, dict(given), chosen)
    given = game.stored_options(given, chosen)  # a Risk map file: read here, into the option
    probe = game.new_state(num_players, 0, given, chosen)
    return Table(game, codec_of(probe, given), num_players, given, chosen)


# --- a game played through a codec -----------------------------------------------------


class Table:
    """One game of ``game`` played part by part through ``codec``.

    Only the engine's public API is used: ``Game.new_state``, ``State.decision``,
    ``State.observation``, ``State.apply`` and ``State.result``.
    """

    def __init__(
        self,
        game: Game,
        codec: Codec,
        num_players: int,
        options: Mapping[str, str],
        variants: Sequence[Any],
    ) -> None:
        self.game = game
        self.codec = codec
        self.num_players = num_players
        self.options = dict(options)
        self.variants = list(variants)
        self._seeds: random.Random | None = None
        self.state: State | None = None
        self.seat = -1
        self.decision: Decision | None = None
        self._chooser: Chooser | None = None
        #: engine actions applied this game (observations are cached per value)
        self.applied = 0
        self._observed: dict[int, tuple[int, dict[str, Any]]] = {}

    def new_state(self, seed: int) -> State:
        return self.game.new_state(self.num_players, seed, self.options, self.variants)

    def reset(self, seed: int | None) -> int:
        """A new game. ``seed`` seeds the sequence of games; without one the sequence
        goes on (from a seed of the operating system the first time). Returns the game's
        seed."""
        if seed is not None:
            self._seeds = random.Random(seed)
        elif self._seeds is None:
            self._seeds = random.Random(fresh_seed())
        game_seed = self._seeds.getrandbits(63)
        self.replace_state(self.new_state(game_seed))
        return game_seed

    def replace_state(self, state: State) -> None:
        """Play on from ``state`` (a new game, or a position set up for a test)."""
        self.state = state
        self.applied += 1
        self._observed.clear()
        self._next()

    def _next(self) -> None:
        state = self.state
        assert state is not None
        self._chooser = None
        if state.terminal:
            self.seat, self.decision = -1, None
            return
        self.decision = state.decision()
        self.seat = self.decision.player

    @property
    def chooser(self) -> Chooser | None:
        """The decision in progress, part by part (None once the game is over). Made
        when first asked for: a house bot's decisions need none."""
        if self._chooser is None and self.decision is not None:
            self._chooser = self.codec.chooser(self.seat, self.decision)
        return self._chooser

    @property
    def mask(self) -> np.ndarray:
        chooser = self.chooser
        return np.zeros(self.codec.num_actions, FLAG) if chooser is None else chooser.mask

    @property
    def over(self) -> bool:
        return self.decision is None

    def act(self, action: int) -> bool:
        """The seat to move chooses ``action``; True when that made an engine action
        (applied). ValueError, and nothing changes, if ``action`` is not legal now."""
        chooser = self.chooser
        if chooser is None:
            raise ValueError("the game is over: reset() starts a new one")
        mask = chooser.mask
        if not (0 <= action < len(mask)) or not mask[action]:
            raise ValueError(self.refusal(action))
        engine_action = chooser.choose(action)
        if engine_action is None:
            return False
        self.apply(engine_action)
        return True

    def apply(self, action: Action) -> None:
        """The seat to move plays the engine ``action`` (a house bot's, say) whole."""
        assert self.state is not None
        self.state.apply(self.seat, action)
        self.applied += 1
        self._next()

    def refusal(self, action: Any) -> str:
        """Why ``action`` is refused, in one line."""
        assert self.decision is not None
        legal = np.flatnonzero(self.mask)
        shown = ", ".join(map(str, legal[:8])) + (", ..." if len(legal) > 8 else "")
        return (
            f"action {action!r} is not legal for seat {self.seat}'s {self.decision.kind} "
            f"decision now: {len(legal)} legal actions ({shown}); see the action_mask"
        )

    def engine_observation(self, seat: int) -> dict[str, Any]:
        """``State.observation(seat)``, made once per engine action."""
        cached = self._observed.get(seat)
        if cached is not None and cached[0] == self.applied:
            return cached[1]
        assert self.state is not None
        observation = self.state.observation(seat)
        self._observed[seat] = (self.applied, observation)
        return observation

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        chooser = self.chooser if seat == self.seat else None
        return self.codec.observe(seat, self.engine_observation(seat), chooser)

    def result(self) -> Result | None:
        assert self.state is not None
        return self.state.result()

    def render(self) -> str:
        assert self.state is not None
        return self.game.render(self.state)
