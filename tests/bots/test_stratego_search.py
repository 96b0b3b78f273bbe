"""The Stratego search bot: legal under every rule set, reproducible, blind to what its
observation does not show, and sampling only positions its observation allows."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest

from arena.bots._stratego_belief import Belief
from arena.bots.stratego_search import VALUE, StrategoSearchBot, defence, evaluate
from arena.engine import play_match
from arena.games.stratego.pieces import BOMB, FLAG, NAMES, RANK_OF, SCOUT
from arena.games.stratego.state import StrategoState
from arena.plugins import load_registry

from .twins import play_beside_a_twin

REGISTRY = load_registry()
STRATEGO = REGISTRY.game("stratego")
#: a small budget: these tests check behaviour, not strength
BUDGET = 3

RULE_SETS = [
    pytest.param([], {}, id="classic"),
    pytest.param([], {"rescue": "on"}, id="classic-rescue"),
    pytest.param(["isf"], {}, id="isf"),
    pytest.param(["barrage"], {}, id="barrage"),
]


def _variants(names: list[str]) -> list[Any]:
    return [REGISTRY.variant("stratego", v) for v in names]


def _bots(seed: int, search_seat: int = 0, budget: int = BUDGET) -> list[Any]:
    return [
        StrategoSearchBot(seat, seed * 10 + seat, iterations=budget)
        if seat == search_seat
        else REGISTRY.bot("stratego", "heuristic").factory(seat, seed * 10 + seat)
        for seat in (0, 1)
    ]


@pytest.mark.parametrize(("variants", "options"), RULE_SETS)
def test_it_plays_whole_games_legally_under_every_rule_set(variants, options):
    """play_match raises BotError on any illegal action, the ISF chase rule's refusals
    included: a finished game is a legal one. The registry's factory makes the bot, in
    each seat in turn."""
    for seat in (0, 1):
        names = ["heuristic", "heuristic"]
        names[seat] = "search"
        bots = [REGISTRY.bot("stratego", n).factory(s, 30 + s) for s, n in enumerate(names)]
        rec = play_match(
            STRATEGO, bots, 3 + seat, {**options, "turn-limit": "300"}, _variants(variants)
        )
        assert rec.result is not None
        assert sum(1 for s, _, _ in rec.steps if s == seat) > 20 or rec.result.reason != (
            "turn_limit"
        )


def test_it_answers_rescue_decisions_legally():
    """Under the rescue rule, a piece of the bot that reaches the enemy's back row earns
    a rescue decision: the bot brings back its strongest lost piece, legally."""
    state = _start(5, {"rescue": "on"})
    state._remove(95)
    state._remove(85)
    captain = min(s for s in state.pieces[0] if state.rank[s] == RANK_OF["captain"])
    state._relocate(captain, 85, False)
    for name in ("colonel", "sergeant"):
        state._remove(min(s for s in state.pieces[0] if state.rank[s] == RANK_OF[name]))
    state.apply(0, {"type": "move", "from": 85, "to": 95})
    decision = state.decision()
    assert decision.kind == "rescue"
    action = StrategoSearchBot(0, 5, iterations=BUDGET).decide(state.observation(0), decision)
    state.apply(0, action)
    assert action["piece"] == "colonel"
    assert state.rank[action["square"]] == RANK_OF["colonel"]
    assert state.current_player == 1


def test_the_same_seed_plays_the_same_game_and_another_seed_another():
    short = {"turn-limit": "120"}
    first = play_match(STRATEGO, _bots(3), 9, short)
    again = play_match(STRATEGO, _bots(3), 9, short)
    other = play_match(STRATEGO, _bots(4), 9, short)
    assert first.steps == again.steps
    assert first.steps != other.steps


def _positions(variants: list[str], options: dict[str, str], seed: int, every: int = 9):
    """(true state, seat) at every ``every``-th move decision of a game of heuristic
    bots (long enough for strikes, reveals and far-moving Scouts)."""
    bots = [REGISTRY.bot("stratego", "heuristic").factory(s, seed + s) for s in (0, 1)]
    state = STRATEGO.new_state(2, seed, {**options, "turn-limit": "400"}, _variants(variants))
    count = 0
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        if decision.kind == "move":
            count += 1
            if count % every == 0:
                yield state, seat
        state.apply(seat, bots[seat].decide(state.observation(seat), decision))


@pytest.mark.parametrize(("variants", "options"), RULE_SETS)
def test_samples_respect_every_constraint_of_the_belief(variants, options):
    """In every sample: the bot's own pieces and every revealed enemy piece are as
    they are; a moved enemy piece is never a bomb or the flag; a far-mover is a Scout;
    the enemy's pieces are exactly its army less what it lost; the sample's observation
    for the bot is the observation it was drawn from, and its legal moves the same."""
    checked = moved_seen = far_seen = 0
    games = (_positions(variants, options, seed, every=3) for seed in range(11, 21))
    for state, seat in (position for game in games for position in game):
        if checked >= 40:
            break
        obs = state.observation(seat)
        enemy = 1 - seat
        belief = Belief.from_observation(obs)
        army = Counter({RANK_OF[n]: c for n, c in state.rules.army.items()})
        army.subtract(RANK_OF[n] for n in obs["captured"][enemy])
        for k in range(4):
            sample = belief.sample(random.Random(k))
            assert sample.observation(seat) == obs
            # the same moves, except that a sample does not follow an ISF chase (it
            # may allow a chasing move the real game refuses: the bot only ever plays
            # one of its decision's moves)
            legal = sorted(state.legal_moves(seat))
            drawn = sorted(sample.legal_moves(seat))
            assert drawn == legal or (
                state.chase[seat] is not None and set(map(tuple, legal)) <= set(map(tuple, drawn))
            )
            ranks = Counter(sample.rank[s] for s in sample.pieces[enemy])
            assert +ranks == +army
            for s, piece in enumerate(obs["board"]):
                if piece is None:
                    continue
                if piece["owner"] == seat or piece["rank"] is not None:
                    assert NAMES[sample.rank[s]] == piece["rank"]
                elif piece["moved_far"]:
                    assert sample.rank[s] == SCOUT
                    far_seen += 1
                elif piece["moved"]:
                    assert sample.rank[s] not in (BOMB, FLAG)
                    moved_seen += 1
        checked += 1
    assert checked >= 5 and moved_seen > 20
    if variants != ["barrage"]:
        assert far_seen > 0


def _shuffle_hidden(state: StrategoState, seat: int, rng: random.Random) -> StrategoState:
    """A copy of ``state`` whose enemy unrevealed ranks are permuted among the enemy's
    unrevealed pieces (any permutation: a bomb may land on a piece that moved; nothing
    the bot's observation shows changes), and whose generator is another."""
    other = state.clone()
    hidden = [s for s in other.pieces[1 - seat] if not other.revealed[s]]
    ranks = [other.rank[s] for s in hidden]
    rng.shuffle(ranks)
    for s, r in zip(hidden, ranks, strict=True):
        other.rank[s] = r
    other.rng = random.Random(rng.getrandbits(64))
    return other


@pytest.mark.parametrize(("variants", "options"), RULE_SETS[::2])
def test_shuffling_what_it_cannot_see_changes_none_of_its_decisions(variants, options):
    """Two copies of the bot, same seed: one decides from the true state's observation,
    the other from a copy whose hidden ranks were shuffled. The serialized observations
    are the same, and so is every decision of the game."""
    bots = _bots(6)
    twin = StrategoSearchBot(0, 60, iterations=BUDGET)
    state = STRATEGO.new_state(2, 6, {**options, "turn-limit": "240"}, _variants(variants))
    compared, differed = play_beside_a_twin(
        state, bots, twin, _shuffle_hidden, lambda a, b: a.rank != b.rank
    )
    assert compared > 50 and differed > 40


def test_with_a_time_limit_it_stops_searching_before_its_budget():
    state = _start(1)
    bot = StrategoSearchBot(0, 1, iterations=100_000, time_ms=1)
    bot.decide(state.observation(0), state.decision())
    assert bot.searches == 1
    assert 0 < bot.simulations < 100


def _start(seed: int, options: dict[str, str] | None = None) -> StrategoState:
    """A classic game after both heuristic setups, seat 0 to move."""
    state = STRATEGO.new_state(2, seed, options or {}, [])
    bots = [REGISTRY.bot("stratego", "heuristic").factory(s, seed + s) for s in (0, 1)]
    for seat in (0, 1):
        state.apply(seat, bots[seat].decide(state.observation(seat), state.decision()))
    return state


def test_its_evaluation_counts_material_and_the_end_of_the_game():
    state = _start(2)
    before = evaluate(state, 0)
    lost = next(s for s in state.pieces[0] if state.rank[s] == RANK_OF["marshal"])
    worse = state.clone()
    worse._remove(lost)
    assert evaluate(worse, 0) < before - 5
    assert evaluate(worse, 1) > evaluate(state, 1) + 5
    won = state.clone()
    won.forfeit(1)
    assert evaluate(won, 0) > 100 > -100 > evaluate(won, 1)


def _stage(seed: int) -> StrategoState:
    """A classic start with seat 0's Marshal on e5 and seat 1's General on e6, both
    revealed: the Marshal may strike the General, which flees if it is left the time."""
    state = _start(seed)
    marshal = next(s for s in state.pieces[0] if state.rank[s] == RANK_OF["marshal"])
    general = next(s for s in state.pieces[1] if state.rank[s] == RANK_OF["general"])
    state._relocate(marshal, 44, False)
    state._relocate(general, 54, False)
    state.revealed[44] = state.revealed[54] = True
    return state


def test_it_strikes_a_revealed_piece_it_beats_and_never_one_that_beats_it():
    state = _stage(7)
    bot = StrategoSearchBot(0, 7, iterations=8)
    action = bot.decide(state.observation(0), state.decision())
    assert (action["from"], action["to"]) == (44, 54)
    # the same position with the two swapped: the General must not strike the Marshal
    swapped = _stage(7)
    swapped.rank[44], swapped.rank[54] = RANK_OF["general"], RANK_OF["marshal"]
    swapped.revealed[44] = False
    action = bot.decide(swapped.observation(0), swapped.decision())
    assert (action["from"], action["to"]) != (44, 54)


def test_moves_that_meet_a_raider_near_its_flag_are_searched_too():
    """An enemy piece near the bot's flag makes the moves that strike it or stand next
    to it candidates, whatever the prior thinks of them."""
    state = _start(8)
    flag = next(s for s in state.pieces[0] if state.rank[s] == RANK_OF["flag"])
    assert flag // 10 == 0  # the heuristic setup: the flag on the back row
    raider = next(s for s in state.pieces[1] if state.rank[s] == RANK_OF["miner"])
    near = flag + 30  # three rows up, in the flag's column: inside the setup rows
    state._remove(near)
    state._relocate(raider, near, False)
    moves = sorted(state.legal_moves(0))
    urgent = [moves[i] for i in defence(state, 0, moves)]
    assert urgent
    assert all(
        t == near or abs(t // 10 - near // 10) + abs(t % 10 - near % 10) <= 1 for _, t in urgent
    )
    assert any(t == near for _, t in urgent)  # the strikes on it
    far = _start(8)
    assert defence(far, 0, sorted(far.legal_moves(0))) == []


def _dig(seed: int) -> StrategoState:
    """An endgame: seat 1 keeps its flag behind its (revealed) guard bombs and one
    Scout; seat 0 keeps its army but for all its Miners except one, which stands two
    squares in front of the bomb that stands before the enemy flag."""
    state = _start(seed)
    flag = next(s for s in state.pieces[1] if state.rank[s] == FLAG)
    guards = [n for n in (flag - 10, flag - 1, flag + 1) if state.rank[n] == BOMB]
    assert flag // 10 == 9 and flag - 10 in guards  # the heuristic setup guards its flag
    scout = max(s for s in state.pieces[1] if state.rank[s] == SCOUT)
    for s in list(state.pieces[1]):
        if s not in (flag, scout, *guards):
            state._remove(s)
    for s in guards:
        state.revealed[s] = True
    miners = sorted(s for s in state.pieces[0] if state.rank[s] == RANK_OF["miner"])
    miner = miners.pop()
    for s in miners:
        state._remove(s)
    state._relocate(miner, flag - 30, False)
    if state.owner[scout] == 1 and abs(scout - (flag - 30)) < 12:  # out of the Miner's way
        state._relocate(scout, 59 if flag % 10 < 5 else 50, False)
    return state


def _farness(state: StrategoState, square: int) -> int:
    return min(abs(square // 10 - s // 10) + abs(square % 10 - s % 10) for s in state.pieces[0])


@pytest.mark.parametrize("seed", [3, 11])
def test_a_miner_digs_through_revealed_bombs_to_the_flag(seed):
    """A revealed bomb never strikes: the bot's Miner walks up to the bombs around the
    enemy flag, takes one and then the flag (it once kept away from them, as from a
    piece that would beat it, and the game ended in a draw at the turn limit)."""
    state = _dig(seed)
    bot = StrategoSearchBot(0, seed, iterations=8)
    for _ in range(8):  # the Miner needs 4 moves: two steps, the bomb, the flag
        if state.terminal:
            break
        if state.player == 0:
            state.apply(0, bot.decide(state.observation(0), state.decision()))
        else:  # the Scout keeps as far from seat 0's pieces as it can
            s, t = max(sorted(state.legal_moves(1)), key=lambda m: _farness(state, m[1]))
            state.apply(1, {"type": "move", "from": s, "to": t})
    assert state.terminal
    assert state.result().places == (1, 2)
    assert state.result().reason.value == "victory"


def test_every_miner_lost_lowers_its_evaluation():
    """The last two Miners are worth more than the others, but a Miner's loss is never
    a gain (a bonus paid only once two were left made the third one's loss look good)."""
    state = _start(4)
    miners = sorted(s for s in state.pieces[0] if state.rank[s] == RANK_OF["miner"])
    assert len(miners) == 5
    worth = [evaluate(state, 0)]
    for s in miners:
        state._remove(s)
        worth.append(evaluate(state, 0))
    drops = [a - b for a, b in itertools.pairwise(worth)]
    assert all(d > 0 for d in drops), drops
    assert drops[-1] > drops[0]  # the last Miner is worth more than the first lost


def test_a_miner_near_its_bombed_in_flag_is_an_urgent_danger():
    """Its flag behind bombs, only an enemy Miner can get to it: one next to the bombs
    weighs on the evaluation (more than the material of a piece to trade for it), and
    any other enemy piece there counts only by its material."""
    state = _start(5)
    flag = next(s for s in state.pieces[0] if state.rank[s] == FLAG)
    front = flag + 10
    assert state.rank[front] == BOMB  # the heuristic setup: a bomb before the flag
    raider = next(s for s in state.pieces[1] if state.rank[s] == RANK_OF["miner"])
    others = next(s for s in state.pieces[1] if state.rank[s] == RANK_OF["captain"])
    square = front + 10  # next to the bomb, two squares from the flag
    if state.owner[square] == 0:
        state._remove(square)
    far = evaluate(state, 0)
    miner_near = state.clone()
    miner_near._relocate(raider, square, False)
    captain_near = state.clone()
    captain_near._relocate(others, square, False)
    assert evaluate(miner_near, 0) < far - VALUE[RANK_OF["lieutenant"]]
    assert abs(evaluate(captain_near, 0) - far) < 1
