"""Tournaments through the store: created whole, played once per match, stopped and
resumed without replaying or double-counting anything, retried only when worth it."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import pytest

from arena.engine import replay
from arena.engine.seeds import attempt_seed
from arena.store import Outcome, Store
from arena.tournament import executor as executor_module
from arena.tournament.executor import Executor, LocalExecutor, MatchJob, play_local
from arena.tournament.leaderboard import compute
from arena.tournament.runner import Progress, TournamentSpec, create_tournament, run_tournament

RISK_BOTS = ["aggressive", "blitz", "defensive", "random"]
# 4 bots, 3 seats: 4 groups; 3 games each (every seat rotation of one deal): 12 matches
RISK = TournamentSpec(
    game="risk",
    bots=RISK_BOTS,
    seats=3,
    games_per_pairing=3,
    options={"turn-limit": "30"},
    seed=5,
)
LABELS = [f"house:{b}@1" for b in RISK_BOTS]


class Scripted(Executor):
    """Plays the jobs one after another in this thread, stopping as soon as ``stop`` is
    set; ``fake`` may replace an outcome, and each outcome is delivered ``repeat`` times."""

    def __init__(
        self,
        fake: Callable[[MatchJob, int], Outcome | None] | None = None,
        repeat: int = 1,
    ) -> None:
        self.fake = fake
        self.repeat = repeat
        self.calls: list[str] = []
        #: (match id, seed, deal seed) of every job played, as on_start handed it over
        self.played: list[tuple[str, int, int | None]] = []

    def run(self, jobs: Iterable[MatchJob], on_outcome, stop=None, on_start=None) -> None:
        for job in jobs:
            if stop is not None and stop.is_set():
                return
            if on_start is not None:
                job = on_start(job) or job
            self.calls.append(job.match_id)
            self.played.append((job.match_id, job.seed, job.deal_seed))
            outcome = self.fake(job, self.calls.count(job.match_id)) if self.fake else None
            outcome = outcome or play_local(job)
            for _ in range(self.repeat):
                on_outcome(job, outcome)


def _stop_after(n: int, stop: threading.Event) -> Callable[[Progress], None]:
    seen = []

    def progress(state: Progress) -> None:
        seen.append(state.finished)
        if len(seen) >= n:
            stop.set()

    return progress


def _seat_counts(store: Store, tournament_id: str) -> Counter[str]:
    """How many of the tournament's matches each bot label plays."""
    return Counter(label for m in store.tournament_matches(tournament_id) for label in m.players)


def _snapshot(store: Store, tournament_id: str) -> dict[str, tuple]:
    """What a finished match holds: status, result, finish time and seat places."""
    matches = store.tournament_matches(tournament_id)
    seats = store.match_seats([m.id for m in matches])
    return {
        m.id: (m.status, m.result, m.finished, [s.place for s in seats[m.id]])
        for m in matches
        if m.status == "finished"
    }


# --- playing a whole tournament ----------------------------------------------------------


def test_a_round_robin_of_house_bots_plays_every_match_once_in_worker_processes(store):
    tournament = create_tournament(store, RISK)
    assert tournament.status == "created"
    finished_counts = []
    executor = LocalExecutor(workers=2)
    try:
        summary = run_tournament(
            store, tournament.id, executor, progress=lambda p: finished_counts.append(p.finished)
        )
    finally:
        executor.close()

    assert (summary.status, summary.total, summary.finished, summary.played) == (
        "finished",
        12,
        12,
        12,
    )
    assert summary.errors == {}
    assert finished_counts == list(range(1, 13))
    row = store.tournament(tournament.id)
    assert row.status == "finished"
    assert row.started is not None and row.finished is not None
    matches = store.tournament_matches(tournament.id)
    seats = store.match_seats([m.id for m in matches])
    assert len(matches) == 12
    for match in matches:
        assert match.status == "finished"
        places = [s.place for s in seats[match.id]]
        assert places == match.result["places"]
        assert sorted(places)[0] == 1 and all(1 <= p <= 3 for p in places)
        assert store.replay(match.id) is not None
    # the stored leaderboard counts each bot's matches of the schedule, once
    board = {r.label: r for r in compute(store, "risk")}
    assert {label: r.games for label, r in board.items()} == _seat_counts(store, tournament.id)
    assert {label: r.games for label, r in board.items()} == dict.fromkeys(LABELS, 9)
    stored = store.ratings("risk", "")
    assert sorted(r.games for r in stored) == [9, 9, 9, 9]


def test_a_stopped_tournament_resumes_with_only_the_unfinished_matches(store):
    tournament = create_tournament(store, RISK)
    stop = threading.Event()
    first = Scripted()
    summary = run_tournament(store, tournament.id, first, progress=_stop_after(5, stop), stop=stop)

    assert (summary.status, summary.finished, summary.played) == ("stopped", 5, 5)
    assert store.tournament(tournament.id).status == "stopped"
    assert store.progress(tournament.id) == Counter(finished=5, pending=7)
    before = _snapshot(store, tournament.id)
    assert set(before) == set(first.calls)

    second = Scripted()
    summary = run_tournament(store, tournament.id, second)
    assert (summary.status, summary.total, summary.finished, summary.played) == (
        "finished",
        12,
        12,
        7,
    )
    all_ids = {m.id for m in store.tournament_matches(tournament.id)}
    assert len(second.calls) == 7
    assert set(second.calls) == all_ids - set(first.calls)
    after = _snapshot(store, tournament.id)
    assert {k: after[k] for k in before} == before  # the first run's results untouched
    assert store.tournament(tournament.id).status == "finished"
    games = {r.label: r.games for r in compute(store, "risk")}
    assert games == _seat_counts(store, tournament.id)
    assert sum(games.values()) == 12 * 3

    third = Scripted()
    summary = run_tournament(store, tournament.id, third)  # nothing is left to play
    assert third.calls == []
    assert (summary.status, summary.played, summary.finished) == ("finished", 0, 12)
    assert _snapshot(store, tournament.id) == after


def test_the_local_executor_stops_early_and_the_resume_plays_the_rest(sqlite_store, monkeypatch):
    spec = replace(RISK, games_per_pairing=6)  # 24 matches
    tournament = create_tournament(sqlite_store, spec)
    played: list[str] = []

    def counting(job: MatchJob) -> Outcome:
        played.append(job.match_id)
        return play_local(job)

    monkeypatch.setattr(executor_module, "play_local", counting)
    stop = threading.Event()
    summary = run_tournament(
        sqlite_store,
        tournament.id,
        LocalExecutor(workers=0),
        progress=_stop_after(3, stop),
        stop=stop,
    )
    assert summary.status == "stopped"
    assert 3 <= summary.finished < 24
    assert summary.finished == len(played) == len(set(played))
    first = set(played)

    played.clear()
    summary = run_tournament(sqlite_store, tournament.id, LocalExecutor(workers=0))
    assert summary.status == "finished"
    assert summary.played == len(played) == 24 - len(first)
    assert not first & set(played)
    assert sum(r.games for r in compute(sqlite_store, "risk")) == 24 * 3


def test_ctrl_c_leaves_the_tournament_stopped_and_resumable(sqlite_store):
    tournament = create_tournament(sqlite_store, RISK)

    class Interrupted(Scripted):
        def run(self, jobs, on_outcome, stop=None, on_start=None):
            def interrupt_after_four(job, outcome):
                on_outcome(job, outcome)
                if len(self.calls) == 4:
                    raise KeyboardInterrupt

            super().run(jobs, interrupt_after_four, stop, on_start)

    with pytest.raises(KeyboardInterrupt):
        run_tournament(sqlite_store, tournament.id, Interrupted())
    assert sqlite_store.tournament(tournament.id).status == "stopped"
    assert sqlite_store.progress(tournament.id)["finished"] == 4
    # the results so far are rated already
    assert sum(r.games for r in sqlite_store.ratings("risk", "")) == 4 * 3

    rest = Scripted()
    assert run_tournament(sqlite_store, tournament.id, rest).status == "finished"
    assert len(rest.calls) == 8


def test_ctrl_c_marks_the_in_process_matches_in_play_aborted_not_running(sqlite_store):
    tournament = create_tournament(sqlite_store, RISK)

    class InterruptedMidMatch(Scripted):
        """Starts three matches (the pool would be playing them), then Ctrl-C."""

        def run(self, jobs, on_outcome, stop=None, on_start=None):
            for job in list(jobs)[:3]:
                on_start(job)
                self.calls.append(job.match_id)
            assert len(sqlite_store.tournament_matches(tournament.id, ["running"])) == 3
            raise KeyboardInterrupt

    executor = InterruptedMidMatch()
    with pytest.raises(KeyboardInterrupt):
        run_tournament(sqlite_store, tournament.id, executor)
    assert sqlite_store.progress(tournament.id) == Counter(pending=9, aborted=3)
    for match_id in executor.calls:
        match = sqlite_store.match(match_id)
        assert (match.status, match.error) == ("aborted", "stopped before its end")

    rest = Scripted()
    assert run_tournament(sqlite_store, tournament.id, rest).status == "finished"
    assert len(rest.calls) == 12


def test_a_tournament_is_found_by_a_unique_prefix_and_an_unknown_one_is_a_key_error(
    sqlite_store,
):
    tournament = create_tournament(sqlite_store, RISK)
    summary = run_tournament(sqlite_store, tournament.id[:6], Scripted())
    assert (summary.tournament_id, summary.status) == (tournament.id, "finished")
    with pytest.raises(KeyError, match="nope"):
        run_tournament(sqlite_store, "nope", Scripted())


# --- retries -----------------------------------------------------------------------------


def _first_match(store: Store, tournament_id: str) -> str:
    return store.tournament_matches(tournament_id)[0].id


def test_an_aborted_match_is_retried_up_to_max_attempts_then_left_unfinished(sqlite_store):
    tournament = create_tournament(sqlite_store, RISK)
    unlucky = _first_match(sqlite_store, tournament.id)

    def abort_unlucky(job: MatchJob, attempt: int) -> Outcome | None:
        if job.match_id == unlucky:
            return Outcome(job.match_id, "aborted", error=f"worker lost (attempt {attempt})")
        return None

    executor = Scripted(abort_unlucky)
    summary = run_tournament(sqlite_store, tournament.id, executor, max_attempts=3, backoff_s=0)

    assert Counter(executor.calls)[unlucky] == 3
    assert all(n == 1 for m, n in Counter(executor.calls).items() if m != unlucky)
    # three attempts, three seeds: none replays what a bot saw; one deal
    tried = [(seed, deal) for m, seed, deal in executor.played if m == unlucky]
    assert len({seed for seed, _ in tried}) == 3 and len({deal for _, deal in tried}) == 1
    assert sqlite_store.match(unlucky).attempts == 3
    assert (summary.status, summary.finished, summary.played) == ("stopped", 11, 11)
    assert summary.errors == {unlucky: "worker lost (attempt 3)"}
    match = sqlite_store.match(unlucky)
    assert (match.status, match.error) == ("aborted", "worker lost (attempt 3)")
    assert [s.place for s in sqlite_store.seats(unlucky)] == [None, None, None]
    assert sqlite_store.tournament(tournament.id).status == "stopped"
    assert sum(r.games for r in sqlite_store.ratings("risk", "")) == 11 * 3


def test_a_match_aborted_once_is_played_again_and_the_tournament_finishes(sqlite_store):
    tournament = create_tournament(sqlite_store, RISK)
    unlucky = _first_match(sqlite_store, tournament.id)

    def abort_once(job: MatchJob, attempt: int) -> Outcome | None:
        if job.match_id == unlucky and attempt == 1:
            return Outcome(job.match_id, "aborted", error="referee unreachable")
        return None

    scheduled = sqlite_store.match(unlucky)
    executor = Scripted(abort_once)
    summary = run_tournament(sqlite_store, tournament.id, executor, backoff_s=0)
    assert Counter(executor.calls)[unlucky] == 2
    assert len(executor.calls) == 13
    # the first attempt played the schedule's seed; the second a fresh one, from the
    # store with its number, and the same deal: the replay and the store say which
    first, second = [(s, d) for m, s, d in executor.played if m == unlucky]
    assert first == (scheduled.seed, scheduled.deal_seed) and scheduled.deal_seed is not None
    assert second == (attempt_seed(scheduled.seed, 2), scheduled.deal_seed)
    row = sqlite_store.match(unlucky)
    assert (row.attempts, row.seed, row.deal_seed) == (2, *second)
    record = replay.from_json(json.loads(sqlite_store.replay(unlucky)))
    assert (record.seed, record.deal_seed) == second
    assert replay.verify(record) == len(record.steps)
    # every match played once kept its scheduled seed
    once = {m: s for m, s, _ in executor.played if m != unlucky}
    assert all(sqlite_store.match(m).seed == s for m, s in once.items())
    assert (summary.status, summary.finished, summary.played, summary.errors) == (
        "finished",
        12,
        12,
        {},
    )
    assert sqlite_store.match(unlucky).status == "finished"


def test_a_failed_match_is_not_retried_but_is_played_again_on_resume(sqlite_store):
    tournament = create_tournament(sqlite_store, RISK)
    broken = _first_match(sqlite_store, tournament.id)

    def fail_broken(job: MatchJob, attempt: int) -> Outcome | None:
        if job.match_id == broken:
            return Outcome(job.match_id, "failed", error="ValueError: cannot be played")
        return None

    executor = Scripted(fail_broken)
    summary = run_tournament(sqlite_store, tournament.id, executor, max_attempts=5, backoff_s=0)
    assert Counter(executor.calls)[broken] == 1
    assert len(executor.calls) == 12
    assert (summary.status, summary.finished) == ("stopped", 11)
    assert summary.errors == {broken: "ValueError: cannot be played"}
    assert sqlite_store.match(broken).status == "failed"

    again = Scripted()
    summary = run_tournament(sqlite_store, tournament.id, again)
    assert again.calls == [broken]
    assert (summary.status, summary.finished, summary.played) == ("finished", 12, 1)


def test_matches_with_registered_bots_fail_without_a_referee_and_are_not_retried(
    sqlite_store, monkeypatch
):
    sqlite_store.register_bot("remote-one")
    spec = TournamentSpec(
        game="stratego", bots=["remote-one", "random"], seats=2, games_per_pairing=2, seed=1
    )
    tournament = create_tournament(sqlite_store, spec)
    monkeypatch.setattr(executor_module, "play_local", lambda job: pytest.fail("played locally"))
    summary = run_tournament(
        sqlite_store, tournament.id, LocalExecutor(workers=0), max_attempts=3, backoff_s=0
    )
    assert (summary.status, summary.finished) == ("stopped", 0)
    assert len(summary.errors) == 2
    assert all("no referee" in why for why in summary.errors.values())
    assert sqlite_store.progress(tournament.id) == Counter(failed=2)
    assert sqlite_store.ratings("stratego", "") == []


def test_a_duplicated_delivery_counts_once(store):
    normal, doubled = Scripted(), Scripted(repeat=2)
    states: dict[str, list[tuple[int, list[Any]]]] = defaultdict(list)
    summaries = {}
    for name, executor in (("normal", normal), ("doubled", doubled)):
        tournament = create_tournament(store, replace(RISK, name=name))
        summaries[name] = run_tournament(
            store,
            tournament.id,
            executor,
            progress=lambda p, name=name: states[name].append((p.finished, list(p.results))),
        )
        assert store.progress(tournament.id) == Counter(finished=12)

    assert len(doubled.calls) == 12
    summary = summaries["doubled"]
    assert (summary.status, summary.finished, summary.played) == ("finished", 12, 12)
    assert all(finished <= 12 for finished, _ in states["doubled"])
    # the standings saw each result once: as in the run without duplicates
    assert states["doubled"][-1] == states["normal"][-1]
    # two identical tournaments, each bot 9 matches in each
    assert {r.label: r.games for r in compute(store, "risk")} == dict.fromkeys(LABELS, 18)
