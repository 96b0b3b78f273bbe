"""Hidden information: a player is never told the rank of an enemy piece it has not seen.

Piece names and square numbers are short strings and small ints that occur everywhere
in the JSON, so searching the text for them proves nothing. The checks are instead:

* structural: the serialized observation parsed back has exactly the public keys, and
  every enemy piece entry has exactly the public fields, with no rank unless revealed;
* non-interference on one position: shuffle the enemy pieces the player has not seen
  (their ranks and their internal identities, among squares with the same public facts)
  and ``json.dumps(observation)`` must not change by a single byte. A rank, an
  identifier or an ordering that reflects either, under any key, shows as a difference;
* non-interference over a whole game: two games whose enemy setups differ only in the
  hidden ranks, played with the same public moves, give the player byte-identical
  observations (and the same legal options) until a strike reveals a difference.

Each checker is shown to catch a leaky observation built on purpose.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from arena.bots._stratego_common import random_setup
from arena.bots.random_bot import RandomStrategoBot
from arena.bots.stratego_heuristic import HeuristicStrategoBot
from arena.engine.core import IllegalAction
from arena.games.stratego import state as state_module
from arena.games.stratego.board import SQUARES, parse_square
from arena.games.stratego.pieces import NAMES, RANK_OF
from arena.games.stratego.state import RESCUE, StrategoState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("stratego")

#: rule set -> (variants, options)
RULE_SETS: dict[str, tuple[list[str], dict[str, str]]] = {
    "classic": ([], {}),
    "classic-rescue": ([], {"rescue": "on"}),
    "isf": (["isf"], {}),
    "barrage": (["barrage"], {}),
}
BOTS: dict[str, Callable[[int, int], Any]] = {
    "random": RandomStrategoBot,
    "heuristic": HeuristicStrategoBot,
}
TOP_KEYS = {
    "game",
    "seat",
    "rules",
    "phase",
    "current_player",
    "ply",
    "board",
    "lakes",
    "captured",
    "history",
    "rescues_left",
}
PIECE_KEYS = {"owner", "rank", "moved", "moved_far", "revealed"}
HISTORY_KEYS = (
    {"p", "from", "to"},
    {"p", "from", "to", "attacker", "defender", "result"},
    {"p", "rescue", "square"},
)

Observe = Callable[[StrategoState, int], dict[str, Any]]


def engine_observe(state: StrategoState, seat: int) -> dict[str, Any]:
    return state.observation(seat)


def new_state(rule_set: str, seed: int = 0, turn_limit: int = 300) -> StrategoState:
    variant_names, options = RULE_SETS[rule_set]
    variants = REGISTRY.resolve_variants("stratego", variant_names)
    return GAME.new_state(2, seed, {**options, "turn-limit": str(turn_limit)}, variants)


# --- the checkers ----------------------------------------------------------------------


def structural_problems(state: StrategoState, seat: int, observe: Observe) -> list[str]:
    """What is wrong with the shape of ``seat``'s serialized observation."""
    obs = json.loads(json.dumps(observe(state, seat)))
    problems = []
    if set(obs) != TOP_KEYS:
        problems.append(
            f"top-level keys differ from the public ones: {sorted(set(obs) ^ TOP_KEYS)}"
        )
    board = obs.get("board")
    if not isinstance(board, list) or len(board) != SQUARES:
        return [*problems, "the board is not one entry per square"]
    for s, entry in enumerate(board):
        owner = state.owner[s]
        if owner < 0:
            if entry is not None:
                problems.append(f"square {s} is empty but described: {entry}")
            continue
        if not isinstance(entry, dict) or set(entry) != PIECE_KEYS:
            problems.append(f"square {s}: fields {sorted(entry or ())} are not the public ones")
            continue
        known = owner == seat or state.revealed[s]
        expected = NAMES[state.rank[s]] if known else None
        if entry["rank"] != expected:
            problems.append(f"square {s}: rank {entry['rank']!r}, expected {expected!r}")
        public = (owner, state.moved[s], state.far[s], state.revealed[s])
        shown = (entry["owner"], entry["moved"], entry["moved_far"], entry["revealed"])
        if shown != public:
            problems.append(f"square {s}: public facts {shown}, expected {public}")
    for entry in obs.get("history", []):
        if set(entry) not in HISTORY_KEYS:
            problems.append(f"history entry with fields {sorted(entry)}")
    return problems


def twin(state: StrategoState, seat: int, rng: random.Random) -> StrategoState:
    """A copy in which the enemy pieces ``seat`` has not seen are shuffled, ranks and
    identities together, among squares with the same public facts (never moved; moved
    one square at a time; moved far). Everything public stays."""
    other = state.clone()
    groups: dict[tuple[bool, bool], list[int]] = {}
    for s in sorted(state.pieces[1 - seat]):
        if not state.revealed[s]:
            groups.setdefault((state.moved[s], state.far[s]), []).append(s)
    for squares in groups.values():
        pieces = [(state.rank[s], state.pid[s]) for s in squares]
        rng.shuffle(pieces)
        for s, (rank, pid) in zip(squares, pieces, strict=True):
            other.rank[s], other.pid[s] = rank, pid
    other.zview = [0, 0]
    for s in range(SQUARES):
        if other.owner[s] >= 0:
            other._toggle(s, other.owner[s], other.rank[s])
    return other


def hidden_ranks_differ(a: StrategoState, b: StrategoState) -> bool:
    return a.rank != b.rank


def twin_problems(
    state: StrategoState, seat: int, observe: Observe, rng: random.Random, twins: int = 3
) -> tuple[list[str], int]:
    """Differences between ``seat``'s serialized observation of ``state`` and of twins
    of it; also returns how many twins really had other hidden ranks."""
    text = json.dumps(observe(state, seat))
    problems, differing = [], 0
    for _ in range(twins):
        other = twin(state, seat, rng)
        differing += hidden_ranks_differ(state, other)
        other_text = json.dumps(observe(other, seat))
        if other_text != text:
            at = next(i for i, (x, y) in enumerate(zip(text, other_text, strict=False)) if x != y)
            problems.append(f"differs at character {at}: ...{text[max(0, at - 60) : at + 20]}")
    return problems, differing


# --- whole games with the same public history ------------------------------------------


def hidden_variant(action: dict[str, Any], rng: random.Random, swaps: int) -> dict[str, Any]:
    """The same squares with some pieces of different ranks exchanged: ``swaps`` pairs,
    or a whole reshuffle for ``swaps=0``."""
    placement = dict(action["placement"])
    squares = list(placement)
    if swaps == 0:
        original = list(placement.values())
        names = original[:]
        while names == original:
            rng.shuffle(names)
        return {"type": "setup", "placement": dict(zip(squares, names, strict=True))}
    for _ in range(swaps):
        x = rng.choice(squares)
        y = rng.choice([q for q in squares if placement[q] != placement[x]])
        placement[x], placement[y] = placement[y], placement[x]
    return {"type": "setup", "placement": placement}


def twin_games(
    rule_set: str,
    seed: int,
    observer: int,
    observer_bot: str,
    enemy_bot: str,
    swaps: int = 0,
    observe: Observe = engine_observe,
) -> tuple[str | None, int]:
    """Play two games whose enemy setups differ only in the hidden ranks, with the same
    moves, and compare what ``observer`` is given at every ply until the rules announce
    different events (a strike revealed different ranks, or one game ended). Returns
    the first difference (or None) and the plies compared."""
    rng = random.Random(seed)
    a, b = new_state(rule_set, seed), new_state(rule_set, seed)
    me = BOTS[observer_bot](observer, seed)
    enemy = BOTS[enemy_bot](1 - observer, seed + 1)
    compared = 0
    for seat in (0, 1):
        if seat == observer:
            action = me.decide(a.observation(seat), a.decision())
            a.apply(seat, action)
            b.apply(seat, action)
        else:
            action = enemy.decide(a.observation(seat), a.decision())
            a.apply(seat, action)
            b.apply(seat, hidden_variant(action, rng, swaps))
    assert hidden_ranks_differ(a, b)
    while not (a.terminal or b.terminal):
        # an enemy rescue: the same one in both games, or none where only one may
        for x, y in ((a, b), (b, a)):
            if x.phase == RESCUE and x.player != observer:
                if y.phase == RESCUE:
                    opts = x.decision().options
                    action = {
                        "type": "rescue",
                        "piece": rng.choice(opts["pieces"]),
                        "square": rng.choice(opts["squares"]),
                    }
                    x.apply(x.player, action)
                    y.apply(y.player, action)
                else:
                    x.apply(x.player, {"type": "no_rescue"})
        if a.terminal or b.terminal:
            break
        text_a, text_b = json.dumps(observe(a, observer)), json.dumps(observe(b, observer))
        if text_a != text_b:
            return f"observations differ at ply {a.ply}", compared
        compared += 1
        if a.player == observer:
            options_a = json.dumps(a.decision().options)
            if options_a != json.dumps(b.decision().options):
                return f"the legal options differ at ply {a.ply}", compared
            action = me.decide(observe(a, observer), a.decision())
            events = a.apply(observer, action), b.apply(observer, action)
        else:
            legal_b = {tuple(m) for m in b.legal_moves(b.player)}
            common = [m for m in a.legal_moves(a.player) if tuple(m) in legal_b]
            if not common:
                break
            wanted = enemy.decide(a.observation(a.player), a.decision())
            if wanted.get("type") == "move" and [wanted["from"], wanted["to"]] in common:
                s, t = wanted["from"], wanted["to"]
            else:
                s, t = rng.choice(common)
            action = {"type": "move", "from": s, "to": t}
            events = a.apply(a.player, action), b.apply(b.player, action)
        if events[0] != events[1]:
            break  # a strike revealed different ranks: from here the games differ
    return None, compared


# --- leaky observations, to show that the checkers catch them --------------------------


def unrevealed_enemy(state: StrategoState, seat: int) -> list[int]:
    return [s for s in sorted(state.pieces[1 - seat]) if not state.revealed[s]]


def leak_rank(state: StrategoState, seat: int) -> dict[str, Any]:
    """The ranks of the enemy pieces that have not moved yet."""
    obs = state.observation(seat)
    for s in unrevealed_enemy(state, seat):
        if not state.moved[s]:
            obs["board"][s] = {**obs["board"][s], "rank": NAMES[state.rank[s]]}
    return obs


def leak_identity(state: StrategoState, seat: int) -> dict[str, Any]:
    obs = state.observation(seat)
    for s in unrevealed_enemy(state, seat):
        obs["board"][s] = {**obs["board"][s], "piece": state.pid[s]}
    return obs


def leak_order(state: StrategoState, seat: int) -> dict[str, Any]:
    """Only public squares, but listed strongest first."""
    obs = state.observation(seat)
    squares = unrevealed_enemy(state, seat)
    obs["enemy_squares"] = sorted(squares, key=lambda s: -state.rank[s])
    return obs


def leak_in_a_public_field(state: StrategoState, seat: int) -> dict[str, Any]:
    """Every key and rank as it should be, but the Flag's entry says it moved far."""
    obs = state.observation(seat)
    for s in unrevealed_enemy(state, seat):
        if state.rank[s] == RANK_OF["flag"]:
            obs["board"][s] = {**obs["board"][s], "moved_far": True}
    return obs


@pytest.fixture
def leaky_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules engine records a plain move's fields in an order that depends on the
    moving piece's rank: same keys, same values, different bytes."""
    original = state_module._HANDLERS["move"]

    def leaky_move(self: StrategoState, action: dict[str, Any], events: list[Any]) -> None:
        try:
            rank = self.rank[parse_square(action.get("from"))]
        except ValueError:
            rank = 0
        original(self, action, events)
        entry = self.history[-1]
        if "attacker" not in entry and rank % 2:
            self.history[-1] = {"to": entry["to"], "from": entry["from"], "p": entry["p"]}

    monkeypatch.setitem(state_module._HANDLERS, "move", leaky_move)


def midgame(rule_set: str = "classic", plies: int = 30, seed: int = 3) -> StrategoState:
    """A position some way into a random game, with strikes behind it."""
    state = new_state(rule_set, seed)
    bots = [RandomStrategoBot(0, seed), HeuristicStrategoBot(1, seed)]
    while not state.terminal and state.ply < plies:
        decision = state.decision()
        seat = decision.player
        state.apply(seat, bots[seat].decide(state.observation(seat), decision))
    assert not state.terminal
    assert any(state.revealed[s] for s in state.pieces[1]), "no enemy piece revealed yet"
    return state


# --- the tests -------------------------------------------------------------------------


def sampled_positions(rule_set: str, games: int) -> Iterator[tuple[StrategoState, int]]:
    """Positions along random and heuristic games, every few plies."""
    pairings = [("random", "random"), ("heuristic", "random"), ("random", "heuristic")]
    for i in range(games):
        names = pairings[i % len(pairings)]
        seed = 1000 * i + len(rule_set)
        state = new_state(rule_set, seed)
        bots = [BOTS[name](seat, seed + seat) for seat, name in enumerate(names)]
        rng = random.Random(seed)
        while not state.terminal:
            decision = state.decision()
            if decision.kind != "setup" and rng.random() < 0.2:
                yield state, decision.player
                yield state, 1 - decision.player
            action = bots[decision.player].decide(state.observation(decision.player), decision)
            state.apply(decision.player, action)
        yield state, 0
        yield state, 1


@pytest.mark.parametrize("rule_set", list(RULE_SETS))
def test_observations_never_show_an_unrevealed_enemy_rank(rule_set: str) -> None:
    rng = random.Random(rule_set)
    checked = differing = revealed = 0
    for state, seat in sampled_positions(rule_set, games=6 if rule_set != "barrage" else 24):
        assert structural_problems(state, seat, engine_observe) == []
        problems, n = twin_problems(state, seat, engine_observe, rng)
        assert problems == [], problems
        checked += 1
        differing += n
        revealed += sum(state.revealed[s] for s in state.pieces[1 - seat])
    assert checked >= 100
    assert differing >= checked, "the twins hardly ever hid other ranks"
    assert revealed > 0, "no strike revealed an enemy piece: the revealed case never ran"


@pytest.mark.parametrize("rule_set", list(RULE_SETS))
def test_same_public_history_gives_byte_identical_observations(rule_set: str) -> None:
    compared = 0
    # (observer, its bot, the enemy's bot, pairs of enemy pieces exchanged; 0: all)
    plans = [
        (0, "random", "random", 0),
        (1, "random", "heuristic", 0),
        (0, "heuristic", "random", 1),
        (1, "heuristic", "heuristic", 1),
        (0, "random", "heuristic", 1),
        (1, "heuristic", "random", 1),
        (0, "heuristic", "heuristic", 2),
        (1, "random", "random", 2),
    ]
    for seed, (observer, mine, theirs, swaps) in enumerate(plans):
        difference, n = twin_games(rule_set, seed, observer, mine, theirs, swaps)
        assert difference is None, (seed, observer, difference)
        compared += n
    assert compared >= 200, "the twin games diverged almost at once: little was compared"


def test_the_structural_checker_flags_leaky_observations() -> None:
    state = midgame()
    assert structural_problems(state, 0, engine_observe) == []
    assert any("expected None" in p for p in structural_problems(state, 0, leak_rank))
    assert any("not the public ones" in p for p in structural_problems(state, 0, leak_identity))
    assert any("enemy_squares" in p for p in structural_problems(state, 0, leak_order))


@pytest.mark.parametrize(
    "leak", [leak_rank, leak_identity, leak_order, leak_in_a_public_field], ids=lambda f: f.__name__
)
def test_the_twin_checker_flags_leaky_observations(leak: Observe) -> None:
    state = midgame()
    rng = random.Random(5)
    assert twin_problems(state, 0, engine_observe, rng, twins=8)[0] == []
    problems, differing = twin_problems(state, 0, leak, rng, twins=8)
    assert differing > 0
    assert problems, f"{leak.__name__} was not caught"


def test_the_twin_game_checker_flags_a_leak_in_the_public_history(leaky_history: None) -> None:
    # the leak passes the single-position checks: only a whole game shows it
    state = midgame()
    assert structural_problems(state, 0, engine_observe) == []
    assert twin_problems(state, 0, engine_observe, random.Random(1))[0] == []
    difference, _ = twin_games("classic", 0, 0, "random", "random")
    assert difference is not None and "observations differ" in difference


def test_the_twin_game_checker_flags_leaky_observations() -> None:
    difference, _ = twin_games("classic", 0, 0, "random", "random", observe=leak_order)
    assert difference == "observations differ at ply 0"


# --- legal options are information too ----------------------------------------------------

#: a chase found by search: seat 1's Marshal (A) chases seat 0's pieces E and F, which
#: flee in turn until they have swapped squares; A's last move recreates the first
#: position if and only if E and F have the same rank
SWAP_CHASE = [
    ("c2", "b2"),  # E flees
    ("c3", "c2"),  # A follows
    ("b2", "a2"),
    ("c2", "b2"),
    ("b1", "c1"),  # F flees
    ("b2", "b1"),
    ("c1", "c2"),
    ("b1", "b2"),
    ("a2", "a1"),
    ("b2", "a2"),
    ("a1", "b1"),
    ("a2", "b2"),
    ("c2", "c3"),
    ("b2", "b3"),
    ("c3", "c2"),
]
SWAP_LAST = ("b3", "c3")  # A's move back to its first square


def chase_twin(e_rank: str, f_rank: str) -> StrategoState:
    state = new_state("isf")
    for seat in (0, 1):
        state.apply(seat, random_setup(random.Random(seat), state.decision().options))
    for s in range(SQUARES):
        if state.owner[s] >= 0:
            state._clear(s)
    state.pieces = [set(), set()]
    state.zview = [0, 0]
    pieces = {
        "c2": (0, e_rank),
        "b1": (0, f_rank),
        "j1": (0, "flag"),
        "f1": (0, "bomb"),
        "c3": (1, "marshal"),
        "j10": (1, "flag"),
        "a10": (1, "bomb"),
    }
    for i, (ref, (seat, name)) in enumerate(pieces.items()):
        state._put(parse_square(ref), seat, RANK_OF[name], i)
    return state


def test_the_legal_moves_offered_never_depend_on_hidden_enemy_ranks() -> None:
    # RULES.md: "The opponent sees only where pieces stand, never which". The chaser's
    # legal moves must then be the same whether or not the two pieces it chased have
    # the same (hidden) rank.
    same, different = chase_twin("captain", "captain"), chase_twin("captain", "major")
    for a, b in SWAP_CHASE:
        for state in (same, different):
            state.apply(state.player, {"type": "move", "from": a, "to": b})
    assert same.player == different.player == 1
    assert json.dumps(same.observation(1)) == json.dumps(different.observation(1))
    last = {"type": "move", "from": SWAP_LAST[0], "to": SWAP_LAST[1]}
    allowed = []
    for state in (same, different):
        try:
            state.clone().apply(1, last)
            allowed.append(True)
        except IllegalAction:
            allowed.append(False)
    assert allowed[0] == allowed[1], (
        "whether the chaser may play b3-c3 tells it whether the two enemy pieces it "
        f"chased have the same rank (same ranks: {allowed[0]}, different: {allowed[1]})"
    )
    assert json.dumps(same.decision().options) == json.dumps(different.decision().options)
