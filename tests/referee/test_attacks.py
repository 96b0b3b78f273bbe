"""Attacks on the referee, one test each, through a real ``arena referee`` process over
real sockets, from hostile clients built from the wire (tests/referee/hostile_clients.py:
raw HTTP/2 frames, plain sockets) and the generated stubs, never the SDK. Each checks
the bound that holds and the status the attacker gets; benchmarks/hostile.py measures
what each costs an honest match."""

from __future__ import annotations

import contextlib
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


def test_rapid_reset_holds_the_connection_bans_the_address_and_the_referee_serves_on(
    referee_server, bot_fleet
):
    """Streams opened and reset at once reach no handler, but gRPC counts them: the
    guard reads its counts, holds the connection (the kernel drops what it sends: a
    PING on it is never acked) and bans the address (a new connection from it is not
    accepted), while another address is served."""
    ref = referee_server
    conn = hostile.RawHttp2(ref.address, source="127.0.0.2")
    stream = 1
    deadline = time.monotonic() + 20
    while "holding" not in ref.process.stderr() and time.monotonic() < deadline:
        chunk = []
        for _ in range(50):
            chunk.append(
                hostile.frame(hostile.HEADERS, hostile.END_HEADERS, stream, hostile.HEADER_BLOCK)
            )
            chunk.append(hostile.frame(hostile.RST_STREAM, 0, stream, hostile.struct.pack(">I", 8)))
            stream += 2
        if not conn.send(b"".join(chunk)):
            break
        conn.read(0.005)
    assert "holding" in ref.process.stderr() and "new streams in" in ref.process.stderr()
    assert stream > 800, stream  # at least the burst went through first
    conn.read(0.5)
    acks = conn.ping_acks
    conn.send(hostile.frame(hostile.PING, 0, 0, b"12345678"))
    conn.read(1.0)
    assert conn.ping_acks == acks and not conn.closed  # held: not read, not closed
    conn.close()
    assert "banning 127.0.0.2" in ref.process.stderr()
    try:
        hostile.RawHttp2(ref.address, timeout=1.0, source="127.0.0.2")
        raise AssertionError("a banned address was accepted")
    except OSError:
        pass  # its SYN is dropped: the connection times out
    fresh = hostile.RawHttp2(ref.address)
    try:
        fresh.read(0.2)
        fresh.send(hostile.frame(hostile.PING, 0, 0, b"12345678"))
        wait_until(lambda: fresh.read(0.05) and fresh.ping_acks > 0, 5, "a fresh PING's ack")
    finally:
        fresh.close()
    assert_still_serves(ref, bot_fleet)


def test_many_new_calls_on_one_connection_hold_it_after_resource_exhausted(referee_factory):
    ref = referee_factory(extra=("--max-new-streams-per-s", "20"))
    # a connection of its own (gRPC shares one between channels to the same address)
    own = [("grpc.use_local_subchannel_pool", 1)]
    stub = pb_grpc.ArenaServiceStub(channel := grpc.insecure_channel(ref.address, options=own))
    codes = []
    try:
        for _ in range(200):
            try:
                stub.ListBots(pb.ListBotsRequest(), timeout=5)
                codes.append("OK")
            except grpc.RpcError as exc:
                codes.append(exc.code().name)
                assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                assert "new streams a second" in exc.details(), exc.details()
                break
        assert codes[:20] == ["OK"] * 20, codes[:25]  # a burst of twice the rate passes
        assert codes[-1] == "RESOURCE_EXHAUSTED", codes
        assert "holding" in ref.process.stderr()
        # held (by the guard's thread, soon): what the connection sends is never read
        later = []
        for _ in range(10):
            try:
                stub.ListBots(pb.ListBotsRequest(), timeout=2)
                later.append("OK")
            except grpc.RpcError as exc:
                later.append(exc.code().name)
                if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    break
                time.sleep(0.2)
        assert later[-1] == "DEADLINE_EXCEEDED" and "OK" not in later, later
    finally:
        channel.close()
    # a new connection is served again
    assert ref.bots() is not None


def test_ping_floods_are_cut_with_too_many_pings_and_their_address_banned(referee_factory):
    """A flood of 10,000 PINGs gets GOAWAY too_many_pings (or, if the guard looks while
    it is still open, is held: it sent that much and opened no stream); an address whose
    connections the referee keeps closing (here more than 3 in a minute) is banned: a
    new connection from it is not accepted, one from another address is."""
    ref = referee_factory(extra=("--max-closed-per-peer", "3"))
    report = hostile.ping_flood(ref.address, 10_000, source="127.0.0.3")
    if report.goaways:
        assert report.goaways == ["ENHANCE_YOUR_CALM too_many_pings"], report
        assert report.closed_after_s and report.closed_after_s[0] < 2.0, report
    else:  # held while it was read: the rest of the burst was dropped unread
        assert report.acks < report.sent, report
    for _ in range(20):
        if "banning 127.0.0.3" in ref.process.stderr():
            break
        with contextlib.suppress(OSError):
            hostile.ping_flood(ref.address, 10_000, wait=1.0, source="127.0.0.3")
    wait_until(lambda: "banning 127.0.0.3" in ref.process.stderr(), 5, "the ban")
    log = ref.process.stderr()
    assert "connections closed in a minute" in log or "bytes sent and no stream" in log
    try:
        hostile.ping_flood(ref.address, 10, wait=0.5, source="127.0.0.3")
        raise AssertionError("a banned address was accepted")
    except OSError:
        pass
    assert ref.bots() is not None  # 127.0.0.1 is served


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


# --- what the bots of one address share -------------------------------------------------


def test_the_bots_of_one_address_share_a_budget_of_unsolicited_messages(referee_factory):
    """Six bots from one address pinging 150 a second each, every one within its own
    limit (200), 900 in all against the address's 400: the heaviest are closed until
    the rest fit, with the status that says why; a light sender from the same address
    (5 a second) and two bot processes playing a match there are never touched."""
    ref = referee_factory()
    players = [ref.start_bot("random", "nat-a"), ref.start_bot("heuristic", "nat-b")]
    ref.wait_connected("nat-a", "nat-b")
    assert players
    match_id = ref.start_match("stratego", ["nat-a", "nat-b"], variants=["barrage"], seed=5)
    calm = PacedPinger(ref.address, ref.register("nat-calm").token, rate=5, seconds=8)
    heavy = [
        PacedPinger(ref.address, ref.register(f"nat-heavy{i}").token, rate=150, seconds=8)
        for i in range(6)
    ]
    try:
        for pinger in [calm, *heavy]:
            pinger.thread.join(timeout=60)
    finally:
        for pinger in [calm, *heavy]:
            pinger.close()
    cut = [p for p in heavy if p.status == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert 3 <= len(cut) <= 5, [(p.status, p.details) for p in heavy]
    for pinger in cut:
        assert pinger.details.startswith(
            "flood: more than 400 messages/s from the bots of your address; reconnect in "
        ), pinger.details
    assert calm.status in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED), calm.details
    assert calm.pongs >= calm.sent - 1, (calm.sent, calm.pongs)
    info = ref.wait_match(match_id)
    assert info.status == "finished" and not info.result.forfeits, info.result


def test_a_bot_reconnecting_in_a_loop_is_refused_past_its_address_rate(referee_factory):
    """New Connect streams from one address: ten times the rate at once, then
    RESOURCE_EXHAUSTED saying why, before the token is looked up."""
    ref = referee_factory(extra=("--max-connects-per-peer", "1"))
    token = ref.register("reconnects").token
    channel = grpc.insecure_channel(ref.address)
    connect = channel.stream_stream(
        CONNECT,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )
    outcomes = []
    try:
        for _ in range(14):
            call = connect(iter([pb.BotMessage(hello=pb.Hello(token=token))]), timeout=10)
            try:
                first = next(call)
                outcomes.append(first.WhichOneof("kind"))
            except grpc.RpcError as exc:
                outcomes.append(exc.code().name)
                assert exc.details() == "more than 1 new bot streams a second from your address"
            call.cancel()
    finally:
        channel.close()
    assert outcomes[:10] == ["welcome"] * 10, outcomes
    assert "RESOURCE_EXHAUSTED" in outcomes[10:], outcomes


def test_a_bot_cut_for_flooding_is_kept_out_a_while_then_let_back(referee_factory):
    """A bot that floods and reconnects at once gets no new budget: it is refused (after
    the token is known) for a couple of seconds, the wait doubling at each further cut."""
    ref = referee_factory()
    token = ref.register("flood-again").token
    flood = PacedPinger(ref.address, token, rate=400, seconds=5)
    try:
        flood.thread.join(timeout=60)
    finally:
        flood.close()
    assert flood.status == grpc.StatusCode.RESOURCE_EXHAUSTED, (flood.status, flood.details)
    assert flood.details.endswith("; reconnect in 2 s at the earliest"), flood.details
    channel = grpc.insecure_channel(ref.address)
    connect = channel.stream_stream(
        CONNECT,
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.RefereeMessage.FromString,
    )

    def hello() -> str:
        call = connect(iter([pb.BotMessage(hello=pb.Hello(token=token))]), timeout=10)
        try:
            return next(call).WhichOneof("kind")
        except grpc.RpcError as exc:
            return f"{exc.code().name}: {exc.details()}"
        finally:
            call.cancel()

    try:
        refused = hello()
        assert refused.startswith(
            "RESOURCE_EXHAUSTED: bot flood-again was cut for flooding: it may connect again in "
        ), refused
        time.sleep(2.5)
        assert hello() == "welcome"
    finally:
        channel.close()


def test_the_bots_of_one_address_share_a_cap_on_bytes_queued_for_them(referee_factory):
    """Three bots of one address that never read, each far below its own cap (1 MiB),
    together over the address's 64 KiB: the one with the most queued is closed with
    RESOURCE_EXHAUSTED saying why; a bot of that address that reads stays."""
    ref = referee_factory(
        extra=(
            "--max-queued-bytes",
            str(1 << 20),
            "--max-queued-bytes-per-peer",
            str(64 << 10),
            "--max-messages-per-peer",
            "100000",
        )
    )
    calm = PacedPinger(ref.address, ref.register("reads").token, rate=5, seconds=30)
    silent = [NonReader(ref.address, ref.register(f"reads-not{i}").token) for i in range(3)]
    try:
        ref.wait_connected("reads", *(f"reads-not{i}" for i in range(3)))
        nonce = 0
        deadline = time.monotonic() + 30
        while all(ref.bots()[f"reads-not{i}"].connected for i in range(3)):
            assert time.monotonic() < deadline, "no bot of the address was closed"
            for bot in silent:
                bot.ping(15, start=nonce)
            nonce += 15
            time.sleep(0.1)
        assert ref.bots()["reads"].connected
        gone = [bot for i, bot in enumerate(silent) if not ref.bots()[f"reads-not{i}"].connected]
        code, details, _ = gone[0].read_all()
    finally:
        calm.close()
        for bot in silent:
            bot.close()
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert details == f"not reading: over {64 << 10} bytes queued for the bots of your address"


def test_a_spectator_that_stops_reading_is_dropped_and_the_others_get_every_batch(
    referee_factory,
):
    """A WatchMatch stream that reads its first message and then nothing, over a small
    receive window, on a long fast match: the referee's writes to it stall, at most
    MAX_WAITING messages wait for it, then it is dropped (its status says why, after
    what was in flight: about as many, buffered by gRPC at both ends). A watcher that
    reads gets every step, in order, to the end."""
    from arena.referee.spectators import MAX_WAITING

    ref = referee_factory()
    match_id = ref.start_match(
        "risk", ["house:random"] * 3, options={"turn-limit": "5000"}, seed=11, decision_ms=0
    )
    own = [("grpc.use_local_subchannel_pool", 1)]
    slow_channel = grpc.insecure_channel(ref.address, options=SMALL_WINDOW + own)
    slow = pb_grpc.ArenaServiceStub(slow_channel).WatchMatch(
        pb.WatchMatchRequest(match_id=match_id, batches=True, without_replay=True), timeout=600
    )
    next(slow)
    steps: list[int] = []
    ended: list[pb.MatchInfo] = []

    def read_all() -> None:
        stub = pb_grpc.ArenaServiceStub(grpc.insecure_channel(ref.address, options=own))
        for message in stub.WatchMatch(
            pb.WatchMatchRequest(match_id=match_id, batches=True, without_replay=True),
            timeout=600,
        ):
            if message.HasField("finished"):
                ended.append(message.finished)
            else:
                steps.extend(step.steps for step in message.batch.steps)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    try:
        # about MAX_WAITING ticks of 0.1 s after its writes stalled, it is dropped
        wait_until(lambda: "dropped a spectator" in ref.process.stderr(), 90, "the drop")
        assert ref.get_match(match_id).status == "running"  # dropped while it plays on
        received = 1
        code = details = None
        try:
            for _ in slow:
                received += 1
        except grpc.RpcError as exc:
            code, details = exc.code(), exc.details()
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details, received)
        assert details.startswith("a spectator that does not keep up"), details
        assert received < 2 * MAX_WAITING, received  # what was in flight, not what waited
    finally:
        slow.cancel()
        slow_channel.close()
    reader.join(timeout=120)  # (GetMatch of a match this long: its replay is over 16 MiB)
    assert ended and ended[0].status == "finished", "the reading watcher saw no end"
    assert len(steps) > 1000 and steps == list(range(steps[0], steps[0] + len(steps))), steps[:20]
