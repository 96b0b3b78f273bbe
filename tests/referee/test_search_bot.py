"""The Risk search bot as its own process (``arena bot run search``) against a real
referee, which only ever sends a seat its observation: it plays whole games, legally,
and each of its decisions is the one the same bot makes in process from the engine's
observation of that moment (so the wire's observation is all it needs and all it has).
"""

from __future__ import annotations

import pytest

from arena.engine.seeds import derive_seed
from arena.plugins import load_registry

from .test_referee import assert_replay_verifies, assert_sensible_result, replay_states

REGISTRY = load_registry()
SEED = 7  # the bot process's --seed: its per-match seeds follow from it


@pytest.mark.parametrize(
    ("variants", "players"),
    [
        ([], ["searcher", "house:aggressive", "house:defensive", "house:blitz"]),
        (["missions"], ["house:defensive", "searcher", "house:aggressive"]),
    ],
    ids=["classic", "missions"],
)
def test_search_bot_process_plays_whole_games_as_it_plays_in_process(
    referee_factory, spawn, variants, players
):
    # a search can take a while on a loaded machine: no timeouts in this test
    ref = referee_factory(decision_ms=60_000, time_bank_ms=60_000)
    bot = spawn.bot(ref, "search", "searcher", "--seed", str(SEED))
    ref.wait_connected("searcher")
    info = ref.run_match("risk", players, variants=variants, options={"turn-limit": "25"}, seed=5)
    assert_sensible_result(info, len(players))
    assert not info.result.forfeits
    rec = assert_replay_verifies(info)
    seat = players.index("searcher")
    twin = REGISTRY.bot("risk", "search").factory(
        seat, derive_seed(SEED, "house-process", info.match_id, seat)
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
