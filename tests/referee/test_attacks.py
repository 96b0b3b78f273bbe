"""Attacks on the referee, one test each, through a real ``arena referee`` process over
real sockets, from hostile clients built from the wire (tests/referee/hostile_clients.py:
raw HTTP/2 frames, plain sockets) and the generated stubs, never the SDK. Each checks
the bound that holds and the status the attacker gets; benchmarks/hostile.py measures
what each costs an honest match."""

from __future__ import annotations

import resource
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator

import grpc

from arena.referee import limits
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

from .conftest import CONNECT, load_sibling, wait_until
from .test_referee import assert_still_serves
from .test_shedding import SMALL_WINDOW, NonReader

hostile = load_sibling("hostile_clients")


def test_rapid_reset_is_refused_past_the_stream_limit_and_the_referee_serves_on(
    referee_server, bot_fleet
):
    ref = referee_server
    report = hostile.rapid_reset(ref.address, 2.0, rate=8300)
    assert report.sent > 5000, report
    # streams beyond the open-streams limit (100) are refused by HTTP/2 itself
    assert report.resets > 0, report
    assert_still_serves(ref, bot_fleet)


def test_many_new_calls_on_one_connection_close_it_with_resource_exhausted(referee_factory):
    ref = referee_factory(extra=("--max-new-streams-per-s", "20"))
    stub = pb_grpc.ArenaServiceStub(channel := grpc.insecure_channel(ref.address))
    codes = []
    try:
        for _ in range(200):
            try:
                stub.ListBots(pb.ListBotsRequest(), timeout=5)
                codes.append("OK")
            except grpc.RpcError as exc:
                codes.append(exc.code().name)
                if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    assert "new streams a second" in exc.details(), exc.details()
    finally:
        channel.close()
    assert codes[:20] == ["OK"] * 20, codes[:25]  # a burst of twice the rate passes
    assert "RESOURCE_EXHAUSTED" in codes, codes
    assert "closing" in ref.process.stderr()
    # a new connection is served again
    assert ref.bots() is not None


def test_a_ping_flood_is_cut_with_too_many_pings(referee_server, bot_fleet):
    ref = referee_server
    report = hostile.ping_flood(ref.address, 10_000)
    assert report.goaways == ["ENHANCE_YOUR_CALM too_many_pings"], report
    assert report.closed_after_s and report.closed_after_s[0] < 2.0, report
    assert_still_serves(ref, bot_fleet)


def _watch(channel: grpc.Channel, match_id: str, batches: bool = False) -> grpc.Future:
    stub = pb_grpc.ArenaServiceStub(channel)
    return stub.WatchMatch(pb.WatchMatchRequest(match_id=match_id, batches=batches), timeout=60)


def test_spectators_are_capped_per_match_and_per_address(
    referee_factory,
):
    ref = referee_factory(
        extra=("--max-spectators-per-match", "5", "--max-spectators-per-peer", "8")
    )
    matches = [
        ref.start_match(
            "risk", ["house:random"] * 3, options={"turn-limit": "2000"}, seed=s, decision_ms=0
        )
        for s in (1, 2)
    ]
    # small receive windows: what a watcher does not read soon stops the referee's writes
    channels = [grpc.insecure_channel(ref.address, options=SMALL_WINDOW) for _ in range(4)]
    try:
        calls: list[grpc.Future] = []
        codes = []
        for match_id, count in ((matches[0], 7), (matches[1], 4)):
            made = [_watch(channels[i % 4], match_id) for i in range(count)]
            calls += made
            for call in made:
                try:
                    next(call)
                    codes.append("open")
                except grpc.RpcError as exc:
                    codes.append(exc.code().name)
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                    assert len(exc.details()) < 100, exc.details()
        # 5 on the first match (its cap), then 3 on the second (8 from this address)
        first, second = Counter(codes[:7]), Counter(codes[7:])
        assert first == {"open": 5, "RESOURCE_EXHAUSTED": 2}, codes
        assert second == {"open": 3, "RESOURCE_EXHAUSTED": 1}, codes
    finally:
        for call in calls:
            call.cancel()
        for channel in channels:
            channel.close()


def test_silent_connections_under_a_small_open_files_limit_leave_room_for_a_bot(
    referee_factory, raw_bots, tmp_path
):
    """1,100 connections that never speak, the referee's open-files limit 1,024: it keeps
    at most 128 from one address (the newest go), and a registered bot connecting then
    gets its Welcome at once."""
    original = subprocess.Popen

    def limited(*args, **kwargs):
        kwargs.setdefault(
            "preexec_fn", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        )
        return original(*args, **kwargs)

    subprocess.Popen = limited
    try:
        ref = referee_factory(extra=("--idle-timeout", "60"))
    finally:
        subprocess.Popen = original
    token = ref.register("after-the-flood").token
    sockets = hostile.silent_connections(ref.address, 1100)
    try:
        assert len(sockets) > 1000, len(sockets)
        wait_until(lambda: hostile.still_open(sockets) <= 128, 10, "the guard to close them")
        started = time.monotonic()
        bot = raw_bots(ref.address, token)
        bot.wait_kind("welcome", timeout=5)
        assert time.monotonic() - started < 3.0
        kept = hostile.still_open(sockets)
        assert 100 <= kept <= 128, kept  # the cap, and no more
    finally:
        for sock in sockets:
            sock.close()
    assert "closed" in ref.process.stderr() and "over the caps" in ref.process.stderr()


def test_unbounded_organiser_inputs_are_refused_before_any_work_with_a_short_message(
    referee_server,
):
    ref = referee_server
    stub = ref.arena
    huge = "x" * 1_000_000
    cases = {
        "RunMatch players": lambda: stub.RunMatch(
            pb.RunMatchRequest(game="risk", players=["nobody"] * 10_000), timeout=10
        ),
        "RunMatch 7 players": lambda: stub.RunMatch(
            pb.RunMatchRequest(game="risk", players=["nobody"] * 7), timeout=10
        ),
        "RunMatch options": lambda: stub.RunMatch(
            pb.RunMatchRequest(
                game="risk", players=["a"], options={f"k{i}": "v" for i in range(1000)}
            ),
            timeout=10,
        ),
        "RunMatch option value": lambda: stub.RunMatch(
            pb.RunMatchRequest(game="risk", players=["a"], options={"map": huge[:10_000]}),
            timeout=10,
        ),
        "CreateTournament games": lambda: stub.CreateTournament(
            pb.CreateTournamentRequest(
                game="risk", bots=["a", "b"], seats=2, games_per_pairing=(1 << 32) - 1
            ),
            timeout=10,
        ),
        "CreateTournament bots": lambda: stub.CreateTournament(
            pb.CreateTournamentRequest(game="risk", bots=[f"b{i}" for i in range(5000)], seats=2),
            timeout=10,
        ),
        "CreateTournament schedule": lambda: stub.CreateTournament(
            pb.CreateTournamentRequest(
                game="risk", bots=[f"b{i}" for i in range(200)], seats=3, games_per_pairing=1000
            ),
            timeout=10,
        ),
        "GetMatch id": lambda: stub.GetMatch(pb.GetMatchRequest(match_id=huge), timeout=10),
        "WatchMatch id": lambda: next(
            stub.WatchMatch(pb.WatchMatchRequest(match_id=huge), timeout=10)
        ),
        "GetTournament id": lambda: stub.GetTournament(
            pb.GetTournamentRequest(tournament_id=huge), timeout=10
        ),
        "RegisterBot name": lambda: stub.RegisterBot(pb.RegisterBotRequest(name=huge), timeout=10),
        "RevokeBot id": lambda: stub.RevokeBot(pb.RevokeBotRequest(bot_id=huge), timeout=10),
        "PauseRecurring id": lambda: stub.PauseRecurring(
            pb.PauseRecurringRequest(recurring_id=huge), timeout=10
        ),
        "GetLeaderboard variants": lambda: stub.GetLeaderboard(
            pb.GetLeaderboardRequest(game="risk", variants=["v"] * 1000), timeout=10
        ),
    }
    for what, call in cases.items():
        started = time.monotonic()
        try:
            call()
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, (what, exc.code(), exc.details())
            assert len(exc.details() or "") < 200, (what, len(exc.details()))
            assert "xxxxxxxxxx" not in (exc.details() or ""), what
        else:
            raise AssertionError(f"{what}: accepted")
        assert time.monotonic() - started < 2.0, what
    # a short unknown id is still NOT_FOUND, and says which
    try:
        stub.GetMatch(pb.GetMatchRequest(match_id="no-such-match"), timeout=10)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.NOT_FOUND and "no-such-match" in exc.details()
    assert limits.MAX_REQUEST_TEXT < 1000


class PacedPinger:
    """A bot stream that sends pings at an even rate and reads every pong."""

    def __init__(self, address: str, token: str, rate: float, seconds: float) -> None:
        self.rate = rate
        self.seconds = seconds
        self.pongs = 0
        self.sent = 0
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.channel = grpc.insecure_channel(address)
        connect = self.channel.stream_stream(
            CONNECT,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        self.call = connect(self._messages(token), timeout=seconds + 30)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _messages(self, token: str) -> Iterator[pb.BotMessage]:
        yield pb.BotMessage(hello=pb.Hello(token=token))
        start = time.monotonic()
        while time.monotonic() - start < self.seconds:
            due = start + (self.sent + 1) / self.rate
            time.sleep(max(0.0, due - time.monotonic()))
            self.sent += 1
            yield pb.BotMessage(ping=pb.Ping(nonce=self.sent))

    def _read(self) -> None:
        try:
            for message in self.call:
                self.pongs += message.WhichOneof("kind") == "pong"
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status = exc.code()
            self.details = exc.details() or ""

    def close(self) -> None:
        self.call.cancel()
        self.channel.close()


def test_the_flood_limit_lets_an_evenly_paced_bot_at_190_a_second_pass_and_cuts_400(
    referee_factory,
):
    ref = referee_factory()
    calm = PacedPinger(ref.address, ref.register("paced-190").token, rate=190, seconds=10)
    fast = PacedPinger(ref.address, ref.register("paced-400").token, rate=400, seconds=10)
    try:
        calm.thread.join(timeout=60)
        fast.thread.join(timeout=60)
    finally:
        calm.close()
        fast.close()
    assert calm.sent >= 1800 and calm.pongs >= calm.sent - 5, (calm.sent, calm.pongs)
    assert calm.status in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED), calm.details
    assert fast.status == grpc.StatusCode.RESOURCE_EXHAUSTED, (fast.status, fast.details)
    assert fast.details.startswith("flood"), fast.details
    assert fast.pongs < 1000, fast.pongs


def test_a_bot_closed_while_it_does_not_read_sees_the_status_once_it_reads(referee_factory):
    """Closed for not reading (its queue over the cap) while it reads nothing: once it
    reads, it gets what had been written, then RESOURCE_EXHAUSTED saying why."""
    ref = referee_factory(extra=("--max-queued-bytes", str(16 << 10)))
    token = ref.register("reads-late").token
    calm = NonReader(ref.address, ref.register("calm").token)
    bot = NonReader(ref.address, token)
    try:
        ref.wait_connected("reads-late")
        nonce = 0
        deadline = time.monotonic() + 20
        while ref.bots()["reads-late"].connected and time.monotonic() < deadline:
            bot.ping(15, start=nonce)
            nonce += 15
            time.sleep(0.1)
        assert not ref.bots()["reads-late"].connected
        time.sleep(3.0)  # it still reads nothing for a while
        code, details, received = bot.read_all()
    finally:
        bot.close()
        calm.close()
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert details.startswith("not reading"), details
    assert received and received[0].WhichOneof("kind") == "welcome"
