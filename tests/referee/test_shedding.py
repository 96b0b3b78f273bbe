"""What the referee sheds, against a real ``arena referee`` process over real sockets:
a bot that floods while it does not read, one that never reads, connections that never
speak, a revoked bot's seats, a malformed stream (a replaced one: test_referee.py), and
a second referee on a port in use. The referee keeps serving the other bots throughout."""

from __future__ import annotations

import os
import queue
import socket
import time
from collections.abc import Iterator
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb

from .conftest import CONNECT, wait_until
from .test_referee import _sync, assert_still_serves

#: a client whose receive window stays small: no BDP probing, little lookahead; the
#: referee's writes to it stall after a few kilobytes it does not read
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]


class NonReader:
    """A bot stream that sends what it is given and reads nothing until ``read_all``."""

    def __init__(self, address: str, token: str, timeout: float = 60.0) -> None:
        self._outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
        self.channel = grpc.insecure_channel(address, options=SMALL_WINDOW)
        connect = self.channel.stream_stream(
            CONNECT,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        self.call = connect(
            self._requests(pb.BotMessage(hello=pb.Hello(token=token))), timeout=timeout
        )

    def _requests(self, first: pb.BotMessage) -> Iterator[pb.BotMessage]:
        yield first
        while (message := self._outbox.get()) is not None:
            yield message

    def ping(self, count: int, start: int = 0) -> None:
        for nonce in range(start, start + count):
            self._outbox.put(pb.BotMessage(ping=pb.Ping(nonce=nonce)))

    def read_all(self) -> tuple[grpc.StatusCode, str, list[pb.RefereeMessage]]:
        """Read what the referee had written, to the stream's status."""
        received = []
        try:
            for message in self.call:
                received.append(message)
        except grpc.RpcError as exc:
            return exc.code(), exc.details() or "", received
        return grpc.StatusCode.OK, "", received

    def close(self) -> None:
        self._outbox.put(None)
        self.call.cancel()
        self.channel.close()


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_flooding_bot_that_does_not_read_gets_resource_exhausted_every_time(
    referee_server, bot_fleet
):
    ref = referee_server
    for attempt in range(5):
        # a bot of its own each time: a bot cut for flooding is kept out a while
        name = f"flood-no-read-{attempt}"
        bot = NonReader(ref.address, ref.register(name).token)
        try:
            ref.wait_connected(name)
            # pings under the flood limit, whose pongs it does not read: the referee's
            # writes to it stall once its small window is full...
            bot.ping(150)
            time.sleep(1.0)
            bot.ping(5000, start=150)  # ...and then it floods
            wait_until(
                lambda name=name: not ref.bots()[name].connected, 15, "the flooder to be cut"
            )
            code, details, received = bot.read_all()
        finally:
            bot.close()
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (attempt, code, details)
        assert details.startswith("flood"), (attempt, details)
        assert received[0].WhichOneof("kind") == "welcome"
        # not even the calm pings' pongs all got through: a write to it was stalled when
        # it flooded, and what was queued behind it was dropped, not sent
        assert len(received) <= 150, (attempt, len(received))
    assert_still_serves(ref, bot_fleet)


def test_a_bot_that_never_reads_loses_its_stream_not_the_referees_memory(referee_factory, raw_bots):
    cap = 16 << 10
    ref = referee_factory(extra=("--max-queued-bytes", str(cap)))
    token = ref.register("never-reads").token
    calm = raw_bots(ref.address, ref.register("calm-pinger").token)
    calm.wait_kind("welcome")
    bot = NonReader(ref.address, token)
    try:
        ref.wait_connected("never-reads")
        before = _rss_kib(ref.process.pid)
        # 150 pings a second (under the flood limit) for at most 20 s, none of the pongs
        # read: what waits for it is capped at 16 KiB, then its stream ends
        nonce = 0
        deadline = time.monotonic() + 20
        while ref.bots()["never-reads"].connected and time.monotonic() < deadline:
            bot.ping(15, start=nonce)
            nonce += 15
            time.sleep(0.1)
            _sync(calm, nonce)  # the referee answers another bot meanwhile
        grown = _rss_kib(ref.process.pid) - before
        assert not ref.bots()["never-reads"].connected, f"still connected after {nonce} pings"
        code, details, received = bot.read_all()
    finally:
        bot.close()
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert details.startswith(f"not reading: over {cap} bytes"), details
    assert len(received) < nonce
    assert grown < 16 << 10, f"the referee grew by {grown} KiB"
    _sync(calm, nonce + 1)
    assert not calm.done.is_set()


def _silent_stream(channel: grpc.Channel) -> Any:
    """A Connect stream that sends nothing, not even Hello."""
    connect = channel.stream_stream(CONNECT, request_serializer=bytes, response_deserializer=None)
    blocker: queue.Queue[None] = queue.Queue()
    return connect(iter(blocker.get, None), timeout=60), blocker


def test_connections_that_never_speak_are_closed_and_their_descriptors_return(
    referee_factory, raw_bots
):
    ref = referee_factory(extra=("--idle-timeout", "2"))
    pid = ref.process.pid
    host, port = ref.address.rsplit(":", 1)
    calm = raw_bots(ref.address, ref.register("still-served").token)
    calm.wait_kind("welcome")
    time.sleep(0.5)
    baseline = _fds(pid)
    raw = [socket.create_connection((host, int(port)), timeout=30) for _ in range(100)]
    channels = [grpc.insecure_channel(ref.address) for _ in range(20)]
    streams = [_silent_stream(channel) for channel in channels]
    try:
        wait_until(lambda: _fds(pid) >= baseline + 100, 10, "the connections to be accepted")
        opened = _fds(pid) - baseline
        wait_until(lambda: _fds(pid) <= baseline, 15, f"{opened} descriptors to be returned")
        for sock in raw:  # the referee closed each one: the socket reads to its end
            sock.settimeout(5)
            while sock.recv(4096):  # its HTTP/2 settings, a GOAWAY, then nothing
                pass
        for call, _ in streams:
            assert call.code() == grpc.StatusCode.INVALID_ARGUMENT, call.details()
            assert "Hello" in call.details()
    finally:
        for sock in raw:
            sock.close()
        for (call, blocker), channel in zip(streams, channels, strict=True):
            blocker.put(None)
            call.cancel()
            channel.close()
    assert opened >= 100
    _sync(calm, 1)  # a bot that speaks is served all along
    assert not calm.done.is_set()


def test_a_revoked_bot_forfeits_at_once_with_reason_revoked(referee_factory, raw_bots):
    ref = referee_factory(grace_s=30)  # far longer than the wait below
    reg = ref.register("revoked-mid-match")
    bot = raw_bots(ref.address, reg.token)
    bot.wait_kind("welcome")
    mid = ref.start_match(
        "risk",
        ["revoked-mid-match", "house:blitz", "house:random"],
        options={"turn-limit": "80"},
        decision_ms=20_000,
        seed=5,
    )
    bot.wait_kind("decision", timeout=30)  # its turn: it thinks, and is revoked meanwhile
    revoked_at = time.monotonic()
    ref.arena.RevokeBot(pb.RevokeBotRequest(bot_id=reg.bot_id), timeout=10)
    assert bot.wait_done(10) == grpc.StatusCode.PERMISSION_DENIED, bot.details
    assert "revoked" in bot.details
    info = ref.wait_match(mid, timeout=60)
    assert [(f.seat, f.why) for f in info.result.forfeits] == [(0, "revoked")]
    assert info.status == "finished"
    assert time.monotonic() - revoked_at < ref.grace_s, "the seat waited for the grace"


def test_a_second_hello_or_an_empty_message_ends_the_stream_with_invalid_argument(
    referee_server, raw_bots
):
    ref = referee_server
    token = ref.register("malformed-later").token
    cases = {
        "Hello": pb.BotMessage(hello=pb.Hello(token=token)),
        "empty": pb.BotMessage(),
    }
    for what, message in cases.items():
        bot = raw_bots(ref.address, token)
        bot.wait_kind("welcome")
        _sync(bot, 1)
        bot.send(message)
        assert bot.wait_done(10) == grpc.StatusCode.INVALID_ARGUMENT, (what, bot.details)
        assert what in bot.details, bot.details
        assert not ref.bots()["malformed-later"].connected


def test_a_second_referee_on_a_port_in_use_fails_at_once_naming_the_port(
    referee_server, bot_fleet, spawn, tmp_path
):
    ref = referee_server
    host, port = ref.address.rsplit(":", 1)
    second = spawn.cli(
        tmp_path,
        "second-referee",
        "referee",
        "--host",
        host,
        "--port",
        port,
        "--db",
        str(tmp_path / "second.db"),
    )
    assert second.wait(30) != 0
    lines = second.stderr().strip().splitlines()
    assert len(lines) == 1, lines
    assert f"port {port}" in lines[0] and "in use" in lines[0], lines[0]
    assert "Traceback" not in second.stderr() and not second.stdout()
    assert_still_serves(ref, bot_fleet)
