"""A store that is slow to take a result (here: its row locked by another writer of the
same PostgreSQL database, as a tournament worker or the command line may hold it) holds
up only that match's waiters: every other match on the referee plays on meanwhile."""

from __future__ import annotations

import asyncio
import threading
import time

from sqlalchemy import create_engine, text

from arena.referee.server import Referee, RefereeConfig
from arena.store import Store, database_url
from arena.v1 import arena_pb2 as pb

LOCKED_S = 2.0


def _match(referee: Referee, seed: int, turns: int):
    return referee.create_match(
        pb.RunMatchRequest(
            game="risk",
            players=["house:random"] * 3,
            seed=seed,
            options={"turn-limit": str(turns)},
        )
    )


def test_a_locked_result_row_does_not_stop_the_other_matches(postgres_url: str) -> None:
    locker = create_engine(database_url(postgres_url))

    async def scenario() -> dict[str, object]:
        store = Store(postgres_url)
        referee = Referee(store, RefereeConfig())
        try:
            # no turn limit: random bots play on far longer than the test (a 500-round
            # match, about 15,000 decisions, once ended before the lock was released)
            long = _match(referee, 1, 0)
            # another writer locks the short match's row until LOCKED_S has passed; on a
            # busy machine the lock can come after the short match has ended already: that
            # arrangement proves nothing, so it is made again with a new short match
            for attempt in range(5):
                short = _match(referee, 2 + attempt, 2)
                locked = threading.Event()

                def hold(match_id: str = short.match_id, locked: threading.Event = locked) -> None:
                    with locker.connect() as connection, connection.begin():
                        connection.execute(
                            text("SELECT id FROM matches WHERE id = :id FOR UPDATE"),
                            {"id": match_id},
                        )
                        locked.set()
                        time.sleep(LOCKED_S)

                holder = threading.Thread(target=hold)
                holder.start()
                await asyncio.to_thread(locked.wait, 10)
                if short.status == "running":
                    break
                await asyncio.wait_for(short.done.wait(), 30)
                await asyncio.to_thread(holder.join, 10)
            # the short match ends, and its result waits for the lock
            while short.status == "running":
                await asyncio.sleep(0.01)
            ended = time.monotonic()
            before = len(long._steps)
            await asyncio.sleep(LOCKED_S / 2)
            during = len(long._steps)
            still_waiting = not short.done.is_set()
            await asyncio.wait_for(short.done.wait(), 30)
            waited = time.monotonic() - ended
            await asyncio.to_thread(holder.join, 10)
            long_running = long.status == "running"
            return {
                "before": before,
                "during": during,
                "still_waiting": still_waiting,
                "waited": waited,
                "long_running": long_running,
                "stored": store.match(short.match_id).status,
                "replay": store.replay(short.match_id) == short.replay_text(),
            }
        finally:
            await referee.shutdown(grace_s=0.1)
            store.close()

    try:
        out = asyncio.run(scenario())
    finally:
        locker.dispose()
    assert out["still_waiting"]  # the result was held up by the lock...
    assert out["waited"] >= LOCKED_S / 2
    # ...while the other match went on playing (house bots: many steps a second)
    assert out["long_running"]
    assert out["during"] - out["before"] >= 20, out
    # and once the lock went, the result and the replay were stored
    assert out["stored"] == "finished" and out["replay"]
