"""What the Risk search bot plays its samples with: battle odds, goals, turn plans, fast
policies for every seat, and the evaluation of a position.

Everything here works on a full :class:`RiskState` that the bot sampled itself
(:mod:`arena.bots._risk_determinize`), never on a match's true state. The policies read the
state's lists directly and answer with the engine's actions, so a sample plays as fast
as the engine applies actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.games.risk import cards as cardlib
from arena.games.risk.odds import chance_table
from arena.games.risk.state import ATTACK, FORTIFY, MOVE_IN, REINFORCE, TRADE, RiskState
from arena.games.risk.variants import missions as missionlib

#: weight of a turn's reinforcements against armies on the board, in a player's strength
INCOME_WEIGHT = 3.0
#: a plan attacks one of its targets while the odds of capturing it are at least this
TARGET_ODDS = 0.45
#: without a capture this turn, a player attacks for a card at these odds or better
CARD_ODDS = 0.7
#: the opponents' model attacks any neighbour at these odds or better
GREEDY_ODDS = 0.6
#: weight of an army of an owner who takes no turns (a neutral, a forfeited seat) against a
#: player's strength: it attacks no one, but it stands in the way
PASSIVE_WEIGHT = 0.5
#: a searched sample stops after this many actions, whatever happens (a safety net)
MAX_STEPS = 3000
#: the largest side of the odds table kept (512 x 512 floats, about 8 MB as lists)
MAX_ODDS_SIDE = 512


class WinOdds:
    """P(``attackers`` capture a territory held by ``defenders``), from the exact table
    of :func:`arena.games.risk.odds.chance_table`, grown on demand and kept as lists
    (a list lookup is several times cheaper than indexing a numpy array). A battle
    larger than :data:`MAX_ODDS_SIDE` is scaled down to it, both sides alike: at such
    sizes the odds hang on the ratio of the armies."""

    def __init__(self, side: int = 64) -> None:
        self.side = 0
        self.rows: list[list[float]] = []
        self._grow(side)

    def _grow(self, side: int) -> None:
        self.side = min(side, MAX_ODDS_SIDE)
        self.rows = chance_table(self.side, self.side).tolist()

    def __call__(self, attackers: int, defenders: int) -> float:
        side = self.side
        if attackers > side or defenders > side:
            if side < MAX_ODDS_SIDE:
                self._grow(max(attackers, defenders, 2 * side))
                side = self.side
            largest = max(attackers, defenders)
            if largest > side:
                attackers = attackers * side // largest
                defenders = max(1, defenders * side // largest)
        return self.rows[attackers][defenders]


ODDS = WinOdds()


@dataclass(frozen=True)
class Goals:
    """What the bot plays for besides strength, from its own observation: its mission
    (missions), the headquarters (capital)."""

    me: int
    mission_continents: tuple[int, ...] = ()
    third_continent: bool = False
    occupy: int = 0
    min_armies: int = 1
    destroy: int = -1  # the seat whose colour the mission names
    headquarters: tuple[int, ...] = ()  # per seat, once revealed
    headquarters_needed: int = 0

    @classmethod
    def of(cls, obs: dict[str, Any], continents: tuple[str, ...]) -> Goals:
        me = obs["seat"]
        mission = obs.get("mission")
        hq = obs.get("headquarters")
        fields: dict[str, Any] = {}
        if mission:
            fields["mission_continents"] = tuple(continents.index(c) for c in mission["continents"])
            fields["third_continent"] = bool(mission["third_continent"])
            fields["occupy"] = mission["occupy"]
            fields["min_armies"] = mission["min_armies"]
            if mission["destroy"]:
                fields["destroy"] = missionlib.COLOURS.index(mission["destroy"])
        if hq and None not in hq:
            fields["headquarters"] = tuple(hq)
            fields["headquarters_needed"] = obs["headquarters_needed"]
        return cls(me, **fields)

    @property
    def any(self) -> bool:
        return bool(
            self.mission_continents or self.occupy or self.destroy >= 0 or self.headquarters
        )


@dataclass(frozen=True)
class Plan:
    """The rest of a turn: where the reinforcements go and which territories to take.

    ``targets``: the territories to take, ``goal`` and the ways in to it (empty: no
    conquest beyond one for a card); of two attacks as likely to capture, one onto the
    goal comes first. ``placement`` None: the reinforcements go where
    :func:`default_placement` puts them.
    """

    name: str
    targets: frozenset[int] = frozenset()
    placement: int | None = None
    goal: frozenset[int] = frozenset()
    greedy: bool = False  # attack any neighbour at GREEDY_ODDS (the opponents' model)


GREEDY = Plan("greedy", greedy=True)
HOLD = Plan("hold")


# --- the board ---------------------------------------------------------------------------


def threat(st: RiskState, t: int) -> int:
    """Armies next to ``t`` of owners who take turns (a neutral never attacks)."""
    owner, armies, passive = st.owner, st.armies, st.passive
    me = owner[t]
    return sum(armies[n] for n in st.map.neighbours[t] if owner[n] != me and not passive[owner[n]])


def frontier(st: RiskState, seat: int) -> list[int]:
    owner = st.owner
    nb = st.map.neighbours
    return [t for t, o in enumerate(owner) if o == seat and any(owner[n] != seat for n in nb[t])]


def launch(st: RiskState, seat: int, targets: frozenset[int]) -> int | None:
    """The own territory with the most armies next to a target still to take."""
    owner, armies = st.owner, st.armies
    best = None
    for t in sorted(targets):
        if owner[t] == seat:
            continue
        for n in st.map.neighbours[t]:
            if owner[n] == seat and (best is None or armies[n] > armies[best]):
                best = n
    return best


def with_paths(st: RiskState, seat: int, goals: set[int]) -> frozenset[int]:
    """``goals`` (territories to own) and the cheapest way in to each one not yet
    reachable: the enemy territories on the path of fewest defending armies from the
    seat's own territories (Dijkstra over the map, 42 territories), through the goals
    themselves where that costs no more."""
    owner, armies, nb = st.owner, st.armies, st.map.neighbours
    size = len(owner)
    inf = 1 << 30
    cost = [inf] * size
    prev = [-1] * size
    for t in range(size):
        if owner[t] == seat:
            cost[t] = 0
    done = [False] * size
    # plain O(n^2) Dijkstra: the map is small and this runs a few times per decision
    while True:
        u, best = -1, inf
        for t in range(size):
            if not done[t] and cost[t] < best:
                u, best = t, cost[t]
        if u < 0:
            break
        done[u] = True
        for v in nb[u]:
            if owner[v] == seat:
                continue
            c = best + 2 * armies[v] + (1 if v in goals else 2)
            if c < cost[v]:
                cost[v] = c
                prev[v] = u
    out = set()
    for g in goals:
        if owner[g] == seat:
            continue
        t = g
        while t >= 0 and owner[t] != seat and t not in out:
            out.add(t)
            t = prev[t]
    return frozenset(out)


# --- policies: an action for the seat to move, read from the state ----------------------


def trade_action(st: RiskState, seat: int) -> dict[str, Any]:
    """Trade the set worth most (then the one with most own territories for the +2)."""
    game_map = st.map
    owner = st.owner
    sets = cardlib.sets_in(game_map, st.tradable(seat))
    if not sets:
        return {"type": "no_trade"}
    fixed = st.config.cards == "fixed"

    def worth(s: tuple[int, int, int]) -> tuple[int, int, int]:
        value = cardlib.fixed_value(game_map, list(s)) if fixed else 0
        owned = sum(1 for c in s if c < game_map.size and owner[c] == seat)
        wilds = sum(1 for c in s if c >= game_map.size)
        return (value, min(owned, 1), -wilds)

    best = max(sets, key=worth)
    action: dict[str, Any] = {"type": "trade", "cards": list(best)}
    owned = [c for c in best if c < game_map.size and owner[c] == seat]
    if owned:
        action["bonus"] = max(owned, key=lambda t: (threat(st, t), -t))
    return action


def default_placement(st: RiskState, seat: int) -> int:
    """The frontier territory with the best edge over its weakest enemy neighbour."""
    owner, armies, nb = st.owner, st.armies, st.map.neighbours
    best, best_edge = -1, -(1 << 30)
    for t, o in enumerate(owner):
        if o != seat:
            continue
        weakest = min((armies[n] for n in nb[t] if owner[n] != seat), default=None)
        if weakest is not None and armies[t] - weakest > best_edge:
            best, best_edge = t, armies[t] - weakest
    if best < 0:
        best = owner.index(seat)
    return best


def reinforce_action(st: RiskState, seat: int, plan: Plan) -> dict[str, Any]:
    t = plan.placement
    if t is None or st.owner[t] != seat:
        t = default_placement(st, seat)
    return {"type": "reinforce", "armies": {t: st._reinforce_left}}


def _attack(st: RiskState, src: int, dst: int) -> dict[str, Any]:
    return {
        "type": "attack",
        "from": src,
        "to": dst,
        "dice": min(3, st.armies[src] - 1),
        "until": 1,
    }


def best_attack(
    st: RiskState,
    seat: int,
    among: Any = None,
    odds: WinOdds = ODDS,
    prefer: frozenset[int] = frozenset(),
) -> tuple[float, int, int]:
    """(P(capture), from, to) of the likeliest attack, onto ``among`` (any: None); an
    attack onto ``prefer`` counts as 5 points likelier."""
    owner, armies, nb = st.owner, st.armies, st.map.neighbours
    best = (0.0, -1, -1)
    if among is None:
        for src, o in enumerate(owner):
            a = armies[src]
            if o != seat or a < 2:
                continue
            for dst in nb[src]:
                if owner[dst] != seat:
                    p = odds(a - 1, armies[dst])
                    if p > best[0]:
                        best = (p, src, dst)
        return best
    top = 0.0
    for dst in sorted(among):
        if owner[dst] == seat:
            continue
        bonus = 0.05 if dst in prefer else 0.0
        for src in nb[dst]:
            if owner[src] == seat and armies[src] >= 2:
                p = odds(armies[src] - 1, armies[dst])
                if p + bonus > top:
                    best, top = (p, src, dst), p + bonus
    return best


def attack_action(st: RiskState, seat: int, plan: Plan, odds: WinOdds = ODDS) -> dict[str, Any]:
    if plan.greedy:
        p, src, dst = best_attack(st, seat, None, odds)
        if p >= GREEDY_ODDS:
            return _attack(st, src, dst)
        return {"type": "end_attack"}
    if plan.targets:
        p, src, dst = best_attack(st, seat, plan.targets, odds, plan.goal)
        if p >= TARGET_ODDS:
            return _attack(st, src, dst)
    if not st._conquered and st._draw_cards:
        p, src, dst = best_attack(st, seat, None, odds)
        if p >= CARD_ODDS:
            return _attack(st, src, dst)
    return {"type": "end_attack"}


def move_in_amount(st: RiskState, seat: int, plan: Plan) -> int:
    """All of them where the plan goes on from the conquered territory or the source is
    safe; otherwise the armies split by the threat each side faces."""
    src, dst, lo, hi = st._move_in  # type: ignore[misc]
    owner = st.owner
    if plan.greedy or any(owner[n] != seat for n in st.map.neighbours[dst] if n in plan.targets):
        return hi
    src_threat, dst_threat = threat(st, src), threat(st, dst)
    if src_threat == 0:
        return hi
    if dst_threat == 0:
        return lo
    total = hi + 1
    share = round(total * dst_threat / (src_threat + dst_threat))
    return max(lo, min(hi, share))


def fortify_action(st: RiskState, seat: int) -> dict[str, Any]:
    """The largest stack with no enemy next to it moves to its most threatened neighbour."""
    owner, armies, nb = st.owner, st.armies, st.map.neighbours
    best = None
    for t, o in enumerate(owner):
        if o != seat or armies[t] < 2 or (best is not None and armies[t] <= armies[best[0]]):
            continue
        if any(owner[n] != seat for n in nb[t]):
            continue
        to = max(nb[t], key=lambda n: (threat(st, n), -n))
        best = (t, to)
    if best is None:
        return {"type": "end_turn"}
    t, to = best
    return {"type": "fortify", "from": t, "to": to, "armies": armies[t] - 1}


def policy_action(st: RiskState, seat: int, plan: Plan, odds: WinOdds = ODDS) -> dict[str, Any]:
    phase = st.phase
    if phase == ATTACK:
        return attack_action(st, seat, plan, odds)
    if phase == MOVE_IN:
        return {"type": "move_in", "armies": move_in_amount(st, seat, plan)}
    if phase == REINFORCE:
        return reinforce_action(st, seat, plan)
    if phase == TRADE:
        return trade_action(st, seat)
    if phase == FORTIFY:
        return fortify_action(st, seat)
    return st.default_action()  # not reached in the phases searched


def play_turn(st: RiskState, seat: int, plan: Plan, odds: WinOdds = ODDS) -> None:
    """Play ``seat``'s decisions until another seat is to move or the game ends."""
    steps = 0
    while st._result is None and st.player == seat and steps < MAX_STEPS:
        st.apply(seat, policy_action(st, seat, plan, odds))
        steps += 1


def play_round(st: RiskState, me: int, odds: WinOdds = ODDS) -> None:
    """Play the other seats' turns (the opponents' model) until ``me`` is to begin a
    turn again, or the game ends, or ``me`` is out."""
    turns = 0
    while st._result is None and st.alive[me] and st.turn_seat != me and turns <= st.num_players:
        play_turn(st, st.player, GREEDY, odds)
        turns += 1


# --- evaluation --------------------------------------------------------------------------


def card_worth(st: RiskState) -> float:
    """What one card in hand is worth in armies, roughly: a third of a set."""
    cards = st.config.cards
    if cards == "none":
        return 0.0
    if cards == "fixed":
        return 7.0 / 3.0
    return cardlib.progressive_value(st.sets_traded) / 3.0


def board_armies(st: RiskState) -> list[float]:
    """Per owner (the seats, then the passive owners), its armies on the board."""
    total = [0.0] * st.num_owners
    for t, o in enumerate(st.owner):
        if o >= 0:
            total[o] += st.armies[t]
    return total


def strengths(st: RiskState) -> list[float]:
    """Per owner: armies, plus INCOME_WEIGHT turns of reinforcements, plus cards."""
    owners = st.num_owners
    owner = st.owner
    total = board_armies(st)
    income = [max(3, c // 3) for c in st.territory_count]
    game_map = st.map
    for c, members in enumerate(game_map.continent_members):
        o = owner[members[0]]
        if o >= 0 and all(owner[t] == o for t in members):
            income[o] += game_map.continent_bonus[c]
    worth = card_worth(st)
    return [total[o] + INCOME_WEIGHT * income[o] + worth * len(st.hands[o]) for o in range(owners)]


def goal_progress(st: RiskState, goals: Goals) -> float:
    """How far the bot is toward its mission or the headquarters it needs, 0 to 1."""
    me = goals.me
    owner = st.owner
    if goals.headquarters:
        hq = goals.headquarters
        own = owner[hq[me]] == me
        held = sum(1 for s, t in enumerate(hq) if s != me and owner[t] == me)
        return 0.4 * own + 0.6 * min(1.0, held / max(1, goals.headquarters_needed))
    if goals.occupy:
        armies = st.armies
        held = sum(1 for t, o in enumerate(owner) if o == me and armies[t] >= goals.min_armies)
        return min(1.0, held / goals.occupy)
    if goals.destroy >= 0:
        theirs = st.territory_count[goals.destroy]
        return 1.0 - theirs / max(1, theirs + st.territory_count[me])
    if goals.mission_continents:
        members = st.map.continent_members
        named = [t for c in goals.mission_continents for t in members[c]]
        done = sum(1 for t in named if owner[t] == me) / len(named)
        if not goals.third_continent:
            return done
        third = max(
            sum(1 for t in members[c] if owner[t] == me) / len(members[c])
            for c in range(len(members))
            if c not in goals.mission_continents
        )
        return 0.75 * done + 0.25 * third
    return 0.0


def evaluate(st: RiskState, goals: Goals) -> float:
    """The bot's prospects from 0 (out) to 1 (won): its share of the strength on the
    board, blended half and half with its goal's progress in the variants that give
    one. A game that ended: 1 for a win (shared by a tie), 0.1 for still in when another
    won, 0 for out.

    The strength on the board is that of the players still taking turns, plus
    PASSIVE_WEIGHT times the armies of the owners who never do (a neutral, a seat that
    forfeited): they attack no one, but they stand in the way (a forfeited seat's last
    territory must fall for the game to end). Without them, a bot left alone with a
    forfeited seat would hold a share of 1 whatever it did, and never attack.
    """
    me = goals.me
    result = st._result
    if result is not None:
        places = result.places
        if places[me] == 1:
            return 1.0 / sum(1 for p in places if p == 1)
        return 0.1 if st.alive[me] else 0.0
    if not st.alive[me]:
        return 0.0
    power = strengths(st)
    alive, passive = st.alive, st.passive
    players = [s for s in range(st.num_players) if alive[s] and not passive[s]]
    standing = 0.0
    if True in passive:  # a neutral, or a seat that forfeited
        held = board_armies(st)
        seats = st.num_players
        standing = sum(h for o, h in enumerate(held) if passive[o] and (o >= seats or alive[o]))
    share = power[me] / (sum(power[s] for s in players) + PASSIVE_WEIGHT * standing)
    if goals.any:
        return 0.5 * share + 0.5 * goal_progress(st, goals)
    return share


# --- plans -------------------------------------------------------------------------------


def candidate_plans(st: RiskState, goals: Goals, reinforcements: int) -> list[Plan]:
    """The plans worth searching for the seat to move, most promising first:

    hold (reinforce the most threatened border, attack only for a card); take each
    continent the seat is in or next to; break each continent an opponent holds; wipe
    out each opponent small enough (their cards come too); and for the variants, the
    mission's continents or colour, spreading out for an "occupy" mission, and the
    opposing headquarters.
    """
    me = goals.me
    owner, armies = st.owner, st.armies
    game_map = st.map
    nb = game_map.neighbours
    members = game_map.continent_members
    passive = st.passive
    front = frontier(st, me)
    if not front:
        return [HOLD]
    mine = sum(armies[t] for t, o in enumerate(owner) if o == me) + reinforcements
    plans: list[tuple[float, Plan]] = []

    def add(name: str, goal: set[int], prior: float) -> None:
        targets = with_paths(st, me, goal)
        if not targets:
            return
        cost = sum(armies[t] for t in targets)
        if cost > mine:
            return
        plan = Plan(name, targets, launch(st, me, targets), frozenset(goal))
        plans.append((prior - cost / max(1, mine), plan))

    worst = max(front, key=lambda t: (threat(st, t) - armies[t], -t))
    plans.append((10.0, Plan("hold", placement=worst)))  # always searched
    for c, ts in enumerate(members):
        enemy = {t for t in ts if owner[t] != me}
        if not enemy or (
            len(enemy) == len(ts) and not any(owner[n] == me for t in ts for n in nb[t])
        ):
            continue
        prior = game_map.continent_bonus[c] / len(ts) + (
            1.0 if c in goals.mission_continents else 0
        )
        add(f"take {game_map.continents[c]}", enemy, prior)
        holder = owner[ts[0]]
        if holder != me and not passive[holder] and all(owner[t] == holder for t in ts):
            door = [t for t in ts if any(owner[n] == me for n in nb[t])]
            if door:
                weakest = min(door, key=lambda t: (armies[t], t))
                add(f"break {game_map.continents[c]}", {weakest}, 1.0)
    for seat in range(st.num_players):
        if seat == me or not st.alive[seat] or passive[seat]:
            continue
        theirs = {t for t, o in enumerate(owner) if o == seat}
        if len(theirs) <= 6 or seat == goals.destroy:
            add(f"wipe out seat {seat}", theirs, 1.5 + 0.3 * len(st.hands[seat]))
    if goals.occupy:
        cheap = {n for t in front for n in nb[t] if owner[n] != me and armies[n] <= 2}
        if cheap:
            add("spread out", cheap, 1.0)
    if goals.headquarters:
        hq = goals.headquarters
        for seat, t in enumerate(hq):
            if seat != me and owner[t] != me:
                add(f"take the headquarters of seat {seat}", {t}, 2.0)
        if owner[hq[me]] == me and threat(st, hq[me]) > 0:
            plans.append((0.5, Plan("guard the headquarters", placement=hq[me])))
    _, src, dst = best_attack(st, me, None)
    if src >= 0:
        plans.append((0.2, Plan(f"card from {dst}", frozenset({dst}), src)))
    plans.sort(key=lambda item: -item[0])
    out: list[Plan] = []
    seen = set()
    for _, plan in plans:
        key = (plan.targets, plan.placement)
        if key not in seen:
            seen.add(key)
            out.append(plan)
    return out
