"""The search bots as their own processes (``arena bot run search``, or ``python -m
arena.bots.risk_search`` / ``python -m arena.bots.stratego_search`` with a budget of its
own) against a real referee, which only ever sends a seat its observation: they play
whole games, legally, and each of their decisions is the one the same bot makes in
process from the engine's observation of that moment (so the wire's observation is all
it needs and all it has).
"""

from __future__ import annotations

import pytest

from arena.bots import risk_search, stratego_search
from arena.engine.seeds import derive_seed

from .test_referee import assert_replay_verifies, assert_sensible_result, replay_states

SEED = 7  # the bot process's --seed: its per-match seeds follow from it


RISK = ("risk", "risk_search", risk_search.RiskSearchBot, risk_search.DEFAULT_ITERATIONS)
STRATEGO = (
    "stratego",
    "stratego_search",
    stratego_search.StrategoSearchBot,
    stratego_search.DEFAULT_ITERATIONS,
)


@pytest.mark.parametrize(
    ("game", "variants", "players", "iterations", "turns"),
    [
        (RISK, [], ["searcher", "house:aggressive", "house:defensive", "house:blitz"], None, 25),
        (RISK, ["missions"], ["house:defensive", "searcher", "house:aggressive"], 12, 25),
        (STRATEGO, [], ["house:heuristic", "searcher"], None, 160),
        (STRATEGO, ["isf"], ["searcher", "house:heuristic"], 6, 160),
    ],
    ids=[
        "risk-classic-arena-bot-run",
        "risk-missions-python-m",
        "stratego-classic-arena-bot-run",
        "stratego-isf-python-m",
    ],
)
def test_search_bot_process_plays_whole_games_as_it_plays_in_process(
    referee_factory, spawn, game, variants, players, iterations, turns
):
    name, module, bot_class, default_iterations = game
    # a search can take a while on a loaded machine: no timeouts in this test
    ref = referee_factory(decision_ms=60_000, time_bank_ms=60_000)
    if iterations is None:
        bot = spawn.bot(ref, "search", "searcher", "--seed", str(SEED))
    else:
        bot = spawn.module_bot(
            ref, module, "searcher", "--seed", str(SEED), "--iterations", str(iterations)
        )
    ref.wait_connected("searcher")
    options = {"turn-limit": str(turns)}
    info = ref.run_match(name, players, variants=variants, options=options, seed=5)
    assert_sensible_result(info, len(players))
    assert not info.result.forfeits
    rec = assert_replay_verifies(info)
    seat = players.index("searcher")
    twin = bot_class(
        seat,
        derive_seed(SEED, "house-process", info.match_id, seat),
        iterations=iterations or default_iterations,
    )
    decided = 0
    for _, step_seat, action, state in replay_states(rec):
        if step_seat != seat:
            continue
        decision = state.decision()
        mine = twin.decide(state.observation(seat), decision)
        # the same action (territories may come back from JSON as strings: compare effects;
        # a Stratego setup's events do not show the placement: compare the action itself)
        assert state.clone().apply(seat, mine) == state.clone().apply(seat, action), (
            decision.kind,
            mine,
            action,
        )
        if name == "stratego":
            assert mine == action
        decided += 1
    assert decided > 20
    assert "action rejected" not in bot.stderr() + bot.stdout()
