"""The Risk search bot as its own process (``arena bot run search``, or ``python -m
arena.bots.risk_search`` with a budget of its own) against a real referee, which only ever
sends a seat its observation: it plays whole games, legally, and each of its decisions
is the one the same bot makes in process from the engine's observation of that moment
(so the wire's observation is all it needs and all it has).
"""

from __future__ import annotations

import pytest

from arena.bots.risk_search import DEFAULT_ITERATIONS, RiskSearchBot
from arena.engine.seeds import derive_seed

from .test_referee import assert_replay_verifies, assert_sensible_result, replay_states

SEED = 7  # the bot process's --seed: its per-match seeds follow from it


@pytest.mark.parametrize(
    ("variants", "players", "iterations"),
    [
        ([], ["searcher", "house:aggressive", "house:defensive", "house:blitz"], None),
        (["missions"], ["house:defensive", "searcher", "house:aggressive"], 12),
    ],
    ids=["classic-arena-bot-run", "missions-python-m"],
)
def test_search_bot_process_plays_whole_games_as_it_plays_in_process(
    referee_factory, spawn, variants, players, iterations
):
    # a search can take a while on a loaded machine: no timeouts in this test
    ref = referee_factory(decision_ms=60_000, time_bank_ms=60_000)
    if iterations is None:
        bot = spawn.bot(ref, "search", "searcher", "--seed", str(SEED))
    else:
        bot = spawn.module_bot(
            ref, "risk_search", "searcher", "--seed", str(SEED), "--iterations", str(iterations)
        )
    ref.wait_connected("searcher")
    info = ref.run_match("risk", players, variants=variants, options={"turn-limit": "25"}, seed=5)
    assert_sensible_result(info, len(players))
    assert not info.result.forfeits
    rec = assert_replay_verifies(info)
    seat = players.index("searcher")
    twin = RiskSearchBot(
        seat,
        derive_seed(SEED, "house-process", info.match_id, seat),
        iterations=iterations or DEFAULT_ITERATIONS,
    )
    decided = 0
    for _, step_seat, action, state in replay_states(rec):
        if step_seat != seat:
            continue
        decision = state.decision()
        mine = twin.decide(state.observation(seat), decision)
        # the same action (territories may come back from JSON as strings: compare effects)
        assert state.clone().apply(seat, mine) == state.clone().apply(seat, action), (
            decision.kind,
            mine,
            action,
        )
        decided += 1
    assert decided > 20
    assert "action rejected" not in bot.stderr() + bot.stdout()
