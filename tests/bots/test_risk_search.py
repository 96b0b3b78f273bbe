"""The Risk search bot: legal in every configuration, reproducible, blind to what its
observation does not show, and playing for what each variant gives it."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from arena.bots._risk_determinize import SEARCHED_PHASES, Determinizer, RulesGuess
from arena.bots._risk_policy import Goals, WinOdds, evaluate
from arena.bots.risk_search import RiskSearchBot
from arena.engine import EndReason, play_match
from arena.engine.match import BotFailed
from arena.games.risk.odds import attack_chance
from arena.games.risk.state import RiskState
from arena.games.risk.variants import missions as missionlib
from arena.plugins import load_registry

from .twins import play_beside_a_twin

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")
HEURISTICS = ["aggressive", "defensive", "blitz"]
#: a small budget: these tests check behaviour, not strength
BUDGET = 8

CONFIGS = [
    pytest.param(4, [], {}, id="classic-claim-progressive"),
    pytest.param(3, [], {"setup": "deal", "cards": "fixed"}, id="deal-fixed-cards"),
    pytest.param(5, [], {"cards": "none"}, id="no-cards-5p"),
    pytest.param(3, [], {"defender-dice": "choose", "dice": "faces"}, id="defender-chooses"),
    pytest.param(4, ["missions"], {}, id="missions"),
    pytest.param(4, ["capital"], {"short-capital": "on"}, id="capital-short"),
    pytest.param(3, ["capital"], {}, id="capital"),
    pytest.param(2, ["neutral"], {}, id="neutral"),
]


def _bots(names: list[str], seed: int, budget: int = BUDGET) -> list[Any]:
    return [
        RiskSearchBot(seat, seed * 10 + seat, iterations=budget)
        if name == "search"
        else REGISTRY.bot("risk", name).factory(seat, seed * 10 + seat)
        for seat, name in enumerate(names)
    ]


def _names(players: int, search_seat: int = 0) -> list[str]:
    others = (HEURISTICS * 2)[: players - 1]
    return [*others[:search_seat], "search", *others[search_seat:]]


def _variants(names: list[str]) -> list[Any]:
    return [REGISTRY.variant("risk", v) for v in names]


@pytest.mark.parametrize(("players", "variants", "options"), CONFIGS)
def test_it_plays_whole_games_legally_in_every_configuration(players, variants, options):
    """play_match raises BotError on any illegal action: a finished game is a legal one.
    The search bot sits in the last seat here, the registry's factory makes it."""
    names = _names(players, players - 1)
    bots = [REGISTRY.bot("risk", n).factory(seat, 40 + seat) for seat, n in enumerate(names)]
    rec = play_match(
        RISK, bots, 4, {**options, "turn-limit": "40"}, _variants(variants), names=names
    )
    assert rec.result is not None
    seat = names.index("search")
    assert sum(1 for s, _, _ in rec.steps if s == seat) > 20


def test_the_same_seed_plays_the_same_game_and_another_seed_another():
    names = _names(4)
    short = {"turn-limit": "25"}
    first = play_match(RISK, _bots(names, 3), 9, short, names=names)
    again = play_match(RISK, _bots(names, 3), 9, short, names=names)
    other = play_match(RISK, _bots(names, 4), 9, short, names=names)
    assert first.steps == again.steps
    assert first.steps != other.steps


def _searched_positions(
    players: int, variants: list[str], options: dict[str, str], seed: int, every: int = 7
):
    """(seat, observation, decision, rules) at every ``every``-th searched decision
    of a game of heuristic bots."""
    names = (HEURISTICS * 2)[:players]
    bots = _bots(names, seed)
    state = RISK.new_state(players, seed, options, _variants(variants))
    rules = [RulesGuess() for _ in range(players)]
    count = 0
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        obs = state.observation(seat)
        rules[seat].observe(obs, decision)
        if decision.kind in SEARCHED_PHASES:
            count += 1
            if count % every == 0:
                yield seat, obs, decision, rules[seat]
        state.apply(seat, bots[seat].decide(obs, decision))


@pytest.mark.parametrize(("players", "variants", "options"), CONFIGS)
def test_a_sampled_state_shows_exactly_the_observation_it_came_from(players, variants, options):
    """Determinization fills in only what the observation hides: the sample's own
    observation for the bot's seat is the observation, and so are its legal options;
    the hidden cards are dealt anew by the public counts, never read."""
    options = {**options, "turn-limit": "40"}
    checked = 0
    for seat, obs, decision, rules in _searched_positions(players, variants, options, 2):
        det = Determinizer(obs, rules)
        samples = [det.sample(random.Random(k)) for k in range(3)]
        for sample in samples:
            assert sample.observation(seat) == obs
            assert sample.decision().kind == decision.kind
            assert sample.legal_options() == decision.options
            hidden = [c for o, hand in enumerate(sample.hands) if o != seat for c in hand]
            assert Counter(hidden + sample.draw_pile) == Counter(det.unknown_cards)
            assert [len(h) for h in sample.hands] == obs["hand_sizes"]
        checked += 1
    assert checked >= 5


def _shuffle_hidden(state: RiskState, seat: int, rng: random.Random) -> RiskState:
    """A copy of ``state`` whose hidden facts are dealt differently: the other players'
    cards and the draw pile (the same counts), the other players' missions, the dice."""
    other = state.clone()
    pool = [c for o, hand in enumerate(other.hands) if o != seat for c in hand] + other.draw_pile
    rng.shuffle(pool)
    at = 0
    for o, hand in enumerate(other.hands):
        if o != seat:
            other.hands[o] = pool[at : at + len(hand)]
            at += len(hand)
    other.draw_pile = pool[at:]
    data = other.variant_data.get("missions")
    if data is not None:
        mine = data["assigned"][seat]
        free = [m.id for m in missionlib.STANDARD_DECK if m.id != mine and not m.destroy]
        for s in range(other.num_players):
            if s != seat:
                data["assigned"][s] = rng.choice(free)
    other.rng = random.Random(rng.getrandbits(64))
    return other


@pytest.mark.parametrize(
    ("variants", "options"),
    [([], {}), (["missions"], {}), ([], {"cards": "fixed", "setup": "deal"})],
    ids=["classic", "missions", "fixed-cards"],
)
def test_shuffling_what_it_cannot_see_changes_none_of_its_decisions(variants, options):
    """Two copies of the bot, same seed: one decides from the true state's observation,
    the other from a copy whose hidden facts were shuffled (the other hands, the draw
    pile, the other missions). Every decision of a whole game is the same."""
    names = ["search", *HEURISTICS]
    bots = _bots(names, 6)
    twin = RiskSearchBot(0, 60, iterations=BUDGET)
    state = RISK.new_state(4, 6, {**options, "turn-limit": "30"}, _variants(variants))
    compared, differed = play_beside_a_twin(
        state,
        bots,
        twin,
        _shuffle_hidden,
        lambda a, b: a.hands != b.hands or a.draw_pile != b.draw_pile,
    )
    assert compared > 50 and differed > 10


def test_with_a_time_limit_it_stops_searching_before_its_budget():
    bot = RiskSearchBot(0, 1, iterations=100_000, time_limit=0.05)
    for seat, obs, decision, _ in _searched_positions(4, [], {}, 5, every=20):
        if seat == 0:
            bot.decide(obs, decision)
            if bot.simulations:
                break
    assert 0 < bot.simulations < 100_000


def _position(variants: list[str], options: dict[str, str], seed: int) -> RiskState:
    """A game of heuristic bots played until seat 0 is to reinforce in round 3."""
    names = ["aggressive", *HEURISTICS]
    bots = _bots(names, seed)
    state = RISK.new_state(4, seed, options, _variants(variants))
    while True:
        decision = state.decision()
        if decision.player == 0 and decision.kind == "attack" and state.round >= 3:
            return state
        seat = decision.player
        state.apply(seat, bots[seat].decide(state.observation(seat), decision))


def _give(state: RiskState, t: int, owner: int, armies: int) -> None:
    state.territory_count[state.owner[t]] -= 1
    state.territory_count[owner] += 1
    state.owner[t] = owner
    state.armies[t] = armies


def _stage(state: RiskState, goal: int, decoy: int, src: int) -> None:
    """Seat 0 holds ``src`` with 25 armies, between two weakly held enemy territories:
    ``goal`` (3 armies) and ``decoy`` (1 army, the likelier capture)."""
    enemy = next(s for s in range(1, 4) if state.alive[s] and state.territory_count[s] > 3)
    _give(state, src, 0, 25)
    _give(state, goal, enemy, 3)
    _give(state, decoy, enemy, 1)


def _plays_turn(state: RiskState, bot: RiskSearchBot) -> None:
    turn = state.turn
    while not state.terminal and state.turn == turn:
        decision = state.decision()
        state.apply(decision.player, bot.decide(state.observation(decision.player), decision))


def test_it_takes_an_opposing_headquarters_it_can_reach():
    state = _position(["capital"], {}, 8)
    game_map = state.map
    hq = state.variant_data["capital"]["hq"]
    # a border: a territory of seat 0's and two neighbours, none of them a headquarters
    src = next(
        t
        for t in range(game_map.size)
        if t not in hq and len([n for n in game_map.neighbours[t] if n not in hq]) >= 2
    )
    goal, decoy = [n for n in game_map.neighbours[src] if n not in hq][:2]
    _stage(state, goal, decoy, src)
    enemy = state.owner[goal]
    hq[enemy] = goal  # the enemy's headquarters is now the strongly held neighbour
    state.untradable = set(hq)
    _plays_turn(state, RiskSearchBot(0, 3, iterations=32))
    assert state.owner[goal] == 0


@pytest.mark.parametrize(
    ("mission", "continent"),
    [
        ("north-america+africa", "Africa"),
        ("asia+south-america", "Asia"),
    ],
)
def test_it_attacks_toward_the_continents_its_mission_asks_for(mission, continent):
    """The Middle East (seat 0's, 25 armies) borders two territories of each of Europe,
    Africa and Asia, all enemy-held with 2 armies: its first attack goes where its
    mission points."""
    state = _position(["missions"], {}, 8)
    game_map = state.map
    data = state.variant_data["missions"]
    data["assigned"][0] = mission
    for s in range(1, 4):  # no one else may win on the spot
        data["assigned"][s] = "occupy-24"
    middle_east = game_map.territory("Middle-East")
    enemy = next(s for s in range(1, 4) if state.alive[s] and state.territory_count[s] > 8)
    _give(state, middle_east, 0, 25)
    for n in game_map.neighbours[middle_east]:
        _give(state, n, enemy, 2)
    bot = RiskSearchBot(0, 3, iterations=32)
    action = bot.decide(state.observation(0), state.decision())
    assert action["type"] == "attack" and action["from"] == middle_east
    assert game_map.continents[game_map.territory_continent[action["to"]]] == continent


def test_its_evaluation_counts_its_mission_and_its_headquarters():
    state = _position(["missions"], {}, 8)
    obs = state.observation(0)
    obs["mission"] = missionlib.BY_ID["asia+africa"].to_json()
    goals = Goals.of(obs, state.map.continents)
    assert goals.mission_continents == (
        state.map.continents.index("Asia"),
        state.map.continents.index("Africa"),
    )
    egypt, brazil = state.map.territory("Egypt"), state.map.territory("Brazil")
    africa_taken, elsewhere = state.clone(), state.clone()
    for s in (africa_taken, elsewhere):
        for t in (egypt, brazil):
            _give(s, t, 1, 1)
    _give(africa_taken, egypt, 0, 1)
    _give(elsewhere, brazil, 0, 1)
    assert evaluate(africa_taken, goals) > evaluate(elsewhere, goals)


def test_it_beats_the_heuristic_bots_more_often_than_not():
    """Four 4-player games, the seats rotated: it wins at least three."""
    wins = 0
    for seed in range(4):
        names = _names(4, seed % 4)
        rec = play_match(RISK, _bots(names, seed, 16), seed, {}, names=names)
        wins += rec.result.reason == EndReason.VICTORY and rec.result.places[seed % 4] == 1
    assert wins >= 3


def test_its_battle_odds_are_the_exact_table_and_scale_down_beyond_it():
    odds = WinOdds()
    for attackers, defenders in [(1, 1), (3, 2), (10, 10), (70, 64), (300, 280)]:
        assert odds(attackers, defenders) == attack_chance(attackers, defenders)
    # past the table's side, the battle is scaled down with its ratio kept
    assert odds(5000, 4000) == odds(512, 409)
    assert odds(4000, 5000) == odds(409, 512)


# --- finishing a game against owners who take no turns ------------------------------


class Leaver:
    """A house bot held to the referee's rules that plays until round ``at`` and then
    fails every decision: its strikes forfeit the seat, whose armies stay on the board."""

    refereed = True

    def __init__(self, inner: Any, at: int) -> None:
        self.inner, self.at = inner, at

    def decide(self, obs: dict[str, Any], decision: Any) -> dict[str, Any]:
        if obs["round"] >= self.at:
            raise BotFailed("gone")
        return self.inner.decide(obs, decision)

    def rejected(self, reason: str, allowed: str, strikes: int) -> None:
        pass

    def ended(self, result: Any, events: list[Any], forfeits: dict[int, str]) -> None:
        pass


def _rounds_of(rec: Any) -> list[tuple[int, dict[str, Any]]]:
    """Each event of ``rec`` with the round it happened in."""
    out, now = [], 0
    for _, _, events in rec.steps:
        for event in events:
            if event["e"] == "turn":
                now = event["round"]
            out.append((now, event))
    return out


def test_left_alone_with_a_forfeited_seat_it_wipes_it_out_well_before_the_turn_limit():
    """Seat 1 stops answering in round 4 and its strikes forfeit it, its armies staying
    on the board; the search bot takes
    out seats 2 and 3 and then, alone with the forfeited armies and without cards to play
    for, takes their last territories within a few rounds (it used to only reinforce,
    round after round, up to the turn limit)."""
    names = ["search", "defensive", "aggressive", "defensive"]
    bots = _bots(names, 4, 16)
    bots[1] = Leaver(bots[1], at=4)
    limit = 150
    rec = play_match(RISK, bots, 4, {"cards": "none", "turn-limit": str(limit)}, names=names)
    assert rec.conduct[1].forfeit, "seat 1 was meant to forfeit"
    assert rec.result.reason == EndReason.VICTORY and rec.result.places[0] == 1
    timeline = _rounds_of(rec)
    out = {e["p"]: (r, e["by"]) for r, e in timeline if e["e"] == "eliminate"}
    assert out[1][1] == 0, "the forfeited seat's last territory fell to the search bot"
    alone = max(out[2][0], out[3][0])  # from here only the forfeited armies were left
    assert alone <= out[1][0], "the forfeited seat was the last to go"
    end = rec.final_state.round
    assert end - alone <= 5 and end <= limit // 5, (alone, end)


def test_its_evaluation_counts_the_armies_of_owners_who_take_no_turns():
    """Alone with a forfeited seat, a position in which it took one more of that seat's
    territories scores higher (it once scored 1 for both), and a forfeited seat or a
    neutral weighs less than a player who takes turns."""
    state = _position([], {}, 8)
    state.forfeit(1)  # while seats 2 and 3 are in: the game goes on
    for seat in (2, 3):  # then they are out, their territories the forfeited seat's
        for t, o in enumerate(state.owner):
            if o == seat:
                _give(state, t, 1, state.armies[t])
        state.alive[seat] = False
    assert not state.terminal
    goals = Goals(0)
    theirs = next(t for t, o in enumerate(state.owner) if o == 1)
    taken = state.clone()
    _give(taken, theirs, 0, 1)
    assert evaluate(state, goals) < evaluate(taken, goals) < 1.0
    # a player who takes turns, holding the same, is worth more than forfeited armies
    active = state.clone()
    active.passive[1] = False
    assert evaluate(active, goals) < evaluate(state, goals)


def test_it_still_beats_aggressive_with_a_neutral_on_the_board():
    """Two-player games with the neutral army (which now counts against it), the seats
    alternated: it wins at least three of four."""
    neutral = _variants(["neutral"])
    wins = 0
    for seed in range(4):
        me = seed % 2
        names = ["aggressive", "aggressive"]
        names[me] = "search"
        rec = play_match(RISK, _bots(names, seed, 16), seed, {}, neutral, names=names)
        wins += rec.result.reason == EndReason.VICTORY and rec.result.places[me] == 1
    assert wins >= 3
