"""docker-compose.yml, checked without a Docker engine: the topology the issue asks for,
health checks, and every command a container would run exists in this project and
parses (``arena`` commands with the real parser, ``celery`` commands with Celery's own
command line, the Node.js bot's options against its source); the secrets are required
from the environment, registration is closed, each bot's token is on a volume of its
own, and a stopping worker is given the time to finish its match. The same topology
runs as real processes in tests/distributed/ (where the worker's health check is run
against a real worker: test_compose_worker.py)."""

from __future__ import annotations

import importlib
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from celery import Celery

from arena.cli import build_parser
from arena.tournament.distributed import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
OURS = sorted(name for name, service in SERVICES.items() if "build" in service)
BOTS = sorted(name for name in SERVICES if name.startswith("bot"))
#: ``$$`` (a ``$`` left for the container's shell), or ``${VAR}``, ``${VAR:-default}``,
#: ``${VAR:?error}``
VARIABLE = re.compile(r"\$\$|\$\{(\w+)(?:(:?[-?])([^}]*))?\}")
#: the services others wait for: each needs a health check
HEALTHY = ("redis", "postgres", "referee", "worker", "web")
#: what `docker compose up` is given here: the secrets the file requires
SECRETS = {
    "ARENA_ORGANISER_KEY": "compose-organiser-key",
    "ARENA_REGISTRATION_KEY": "compose-registration-key",
}


class Missing(Exception):
    """A ``${VAR:?error}`` that is not set: Compose refuses to start, with the error."""


def expand(text: str, env: dict[str, str] = SECRETS) -> str:
    """``text`` as Compose interpolates it, with ``env`` as its environment."""

    def value(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        name, operator, argument = found.groups()
        if env.get(name):
            return env[name]
        assert operator, f"{found.group(0)}: no default and not required: it would be empty"
        if "?" in operator:
            raise Missing(f"{name}: {argument}")
        return argument

    return VARIABLE.sub(value, text)


def argv(command: str | list[str]) -> list[str]:
    words = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
    return [expand(word) for word in words]


def commands(service: dict[str, Any]) -> list[list[str]]:
    """What the container runs: its command and its health check's (the CMD form)."""
    found = [argv(service["command"])] if "command" in service else []
    test = service.get("healthcheck", {}).get("test")
    if isinstance(test, list) and test[0] == "CMD":
        found.append(argv(test[1:]))
    elif isinstance(test, list) and test[0] == "CMD-SHELL":
        found.append(argv(test[1]))
    elif isinstance(test, str):
        found.append(argv(test))
    return found


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: expand(str(value)) for key, value in env.items()}


def test_the_services_of_the_topology() -> None:
    for name in ("redis", "postgres", "referee", "worker", "beat", "web"):
        assert name in SERVICES, f"docker-compose.yml has no {name} service"
    assert BOTS, "docker-compose.yml has no example bot service"
    for name in HEALTHY:
        assert SERVICES[name].get("healthcheck", {}).get("test"), f"{name}: no health check"
    for name, service in SERVICES.items():
        depends = service.get("depends_on", {})
        for target in depends:
            assert target in SERVICES, f"{name} depends on an unknown service {target}"
            if isinstance(depends, dict) and depends[target].get("condition") == (
                "service_healthy"
            ):
                assert "healthcheck" in SERVICES[target], f"{name} waits on {target}'s health"
    # `docker compose up --scale worker=8`: no fixed container name, no host port
    assert "container_name" not in SERVICES["worker"]
    assert "ports" not in SERVICES["worker"]
    assert "docker compose up --scale worker=8" in (ROOT / "README.md").read_text()


def test_the_services_share_one_store_broker_and_referee() -> None:
    referee = argv(SERVICES["referee"]["command"])
    referee_args = build_parser().parse_args(referee[1:])
    for name in OURS:
        env = environment(SERVICES[name])
        settings = Settings.from_env(env)
        assert settings.db == referee_args.db, name
        assert settings.broker_url.startswith("redis://redis:"), name
        assert settings.result_backend.startswith("redis://redis:"), name
        assert settings.referees == (f"referee:{referee_args.port}",), name
        assert settings.organiser_key == referee_args.organiser_key, name
    for name in BOTS:
        command = argv(SERVICES[name]["command"])
        assert command[command.index("--referee") + 1] == f"referee:{referee_args.port}", name
    # the web reads the same store (its --db defaults to ARENA_DB) and watches the referee
    web = build_parser().parse_args(argv(SERVICES["web"]["command"])[1:])
    assert web.referee == f"referee:{referee_args.port}"
    assert web.db == referee_args.db
    assert (web.host, f"{web.port}:{web.port}") == ("0.0.0.0", SERVICES["web"]["ports"][0])


def test_a_restarted_bot_container_is_the_same_bot_version() -> None:
    """A bot that registers itself keeps its token on a named volume: started again (a
    crash, an upgrade), it connects as the version it registered, not as a new one."""
    for name in BOTS:
        command = argv(SERVICES[name]["command"])
        if "--register-as" not in command:
            continue
        assert "--token-file" in command, f"{name}: registers a new version at every start"
        token_file = PurePosixPath(command[command.index("--token-file") + 1])
        mounts = [str(v).split(":") for v in SERVICES[name].get("volumes", [])]
        kept = [src for src, dst, *_ in mounts if token_file.is_relative_to(dst)]
        assert kept, f"{name}: {token_file} is not on a volume: lost when the container is"
        assert kept[0] in COMPOSE["volumes"], f"{name}: {kept[0]} is not a named volume"


@pytest.mark.parametrize("name", OURS)
def test_every_command_exists_and_parses(name: str) -> None:
    found = commands(SERVICES[name])
    assert found, f"{name}: no command"
    for command in found:
        program = command[0]
        if program == "arena":
            try:
                build_parser().parse_args(command[1:])
            except SystemExit:
                pytest.fail(f"{name}: `{shlex.join(command)}` does not parse")
        elif program == "celery":
            check_celery(name, command)
        elif program == "node":
            check_node_bot(name, command)
        elif program == "python" and command[1] == "-c":  # a health check's few lines
            compile(command[2], f"{name}'s health check", "exec")
        else:
            pytest.fail(f"{name}: {program!r} is not a command of this project")


def check_celery(name: str, command: list[str]) -> None:
    assert command[1] == "-A", f"{name}: `{shlex.join(command)}` names no app"
    module, _, attribute = command[2].partition(":")
    app = getattr(importlib.import_module(module), attribute or "app", None)
    assert isinstance(app, Celery), f"{name}: {command[2]} is not a Celery app"
    # Celery's own command line: it loads the app and refuses an unknown option
    done = subprocess.run(
        [sys.executable, "-m", "celery", *command[1:], "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, f"{name}: `{shlex.join(command)}`: {done.stderr}"


def check_node_bot(name: str, command: list[str]) -> None:
    assert command[1] == "bots/node/bot.js", f"{name}: {shlex.join(command)}"
    source = (ROOT / command[1]).read_text()
    defaults = re.search(r"const args = (\{[^}]*\});", source)
    assert defaults, "bots/node/bot.js: no `const args = {...}` of its options"
    known = set(re.findall(r'[{,]\s*"?([A-Za-z][\w-]*)"?\s*:', defaults.group(1)))
    for word in command[2::2]:
        assert word.startswith("--") and word[2:] in known, f"{name}: {word} is not an option"
    assert json.loads((ROOT / "bots/node/package.json").read_text())["dependencies"]


def test_the_build_context_has_a_dockerfile_whose_sources_exist() -> None:
    for name in OURS:
        build = SERVICES[name]["build"]
        context = ROOT / (build if isinstance(build, str) else build.get("context", "."))
        dockerfile = context / (
            "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
        )
        assert dockerfile.is_file(), f"{name}: no {dockerfile}"
        copies = 0
        for line in dockerfile.read_text().splitlines():
            if not line.strip().upper().startswith("COPY "):
                continue
            rest = line.strip()[5:].strip()
            words = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
            if any(w.startswith("--from") for w in words):
                continue  # from another build stage, not the context
            for source in [w for w in words if not w.startswith("--")][:-1]:
                assert (context / source).exists(), f"Dockerfile: COPY {source}: no such file"
                copies += 1
        assert copies, "the Dockerfile copies nothing from the context"


# --- secrets, registration, tokens, stopping -----------------------------------------------


def referee_args() -> Any:
    return build_parser().parse_args(argv(SERVICES["referee"]["command"])[1:])


def test_the_secrets_are_required_from_the_environment() -> None:
    """No default key anyone could read here: without the secrets Compose refuses to
    start, naming what to set."""
    text = (ROOT / "docker-compose.yml").read_text()
    assert "change-me" not in text
    uses = re.findall(r"\$\{(ARENA_\w*KEY)([^}]*)\}", text)
    assert {name for name, _ in uses} == set(SECRETS)
    for name, rest in uses:
        assert rest == f":?set {name}", f"${{{name}{rest}}}: must be required (:?)"
    for name in SECRETS:
        others = {k: v for k, v in SECRETS.items() if k != name}
        with pytest.raises(Missing, match=f"{name}: set {name}"):
            expand(text, others)
    args = referee_args()
    assert args.organiser_key == SECRETS["ARENA_ORGANISER_KEY"]
    for name in OURS:
        assert environment(SERVICES[name])["ARENA_ORGANISER_KEY"] == args.organiser_key, name


def test_registration_is_closed_and_the_bots_register_with_its_key() -> None:
    # `arena referee` keeps registration open only when it is given no key
    key = referee_args().registration_key
    assert key == SECRETS["ARENA_REGISTRATION_KEY"]
    registering = [name for name in BOTS if "--register-as" in argv(SERVICES[name]["command"])]
    assert registering
    for name in registering:
        command = argv(SERVICES[name]["command"])
        assert "--key" in command, f"{name}: registers without the key: it would be refused"
        assert command[command.index("--key") + 1] == key, name


def test_each_bot_keeps_its_token_on_a_volume_of_its_own() -> None:
    """A bot container can read no other bot's token."""
    mounted: dict[str, list[str]] = {}
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            mounted.setdefault(str(volume).split(":")[0], []).append(name)
    for name in BOTS:
        command = argv(SERVICES[name]["command"])
        token_file = PurePosixPath(command[command.index("--token-file") + 1])
        (volume,) = [
            src
            for src, dst, *_ in (str(v).split(":") for v in SERVICES[name]["volumes"])
            if token_file.is_relative_to(dst)
        ]
        assert mounted[volume] == [name], f"{volume} is shared by {mounted[volume]}"


def seconds(duration: str) -> float:
    """A Compose duration (``90s``, ``1m30s``, ``61m``, ``1h``) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "us": 1e-6}
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|us|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, f"not a duration: {duration}"
    return sum(float(number) * units[unit] for number, unit in parts)


def test_a_stopping_worker_has_the_time_to_finish_its_match() -> None:
    """SIGTERM is Celery's warm shutdown (the match being played is finished): the
    worker gets longer than a match task may last before it is killed."""
    worker = SERVICES["worker"]
    assert argv(worker["command"])[:4] == ["celery", "-A", "arena.workers.app", "worker"]
    assert worker.get("stop_signal", "SIGTERM") == "SIGTERM"
    limit = Settings.from_env(environment(worker)).task_time_limit_s
    assert seconds(worker["stop_grace_period"]) > limit
    assert seconds(str(worker["healthcheck"]["timeout"])) > 5  # the ping's own --timeout


def worker_health_check() -> tuple[str, str]:
    """The worker's node name (``-n``) and its health check, a shell command."""
    command = argv(SERVICES["worker"]["command"])
    test = SERVICES["worker"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL", "the check needs the container's shell for $HOSTNAME"
    return command[command.index("-n") + 1], expand(test[1])


def test_the_worker_health_check_asks_for_this_worker() -> None:
    """Not any worker: the node this container runs (``-n NAME@%h``, where Celery puts
    the host name for %h, which is $HOSTNAME in a container)."""
    node, check = worker_health_check()
    name, _, host = node.partition("@")
    assert name and host == "%h", node
    words = shlex.split(check)
    assert words[:5] == ["celery", "-A", "arena.workers.app", "inspect", "ping"], check
    assert words[words.index("-d") + 1] == f"{name}@$HOSTNAME", check


def test_results_spooled_by_a_worker_outlive_its_container() -> None:
    """A result played while the store was away waits in the spool: on a volume, not in
    the container, whose replacement would lose it."""
    worker = SERVICES["worker"]
    spool = PurePosixPath(environment(worker)["ARENA_SPOOL_DIR"])
    assert spool.is_absolute()
    mounts = [str(v).split(":") for v in worker.get("volumes", [])]
    assert any(spool.is_relative_to(dst) and src in COMPOSE["volumes"] for src, dst, *_ in mounts)
    # the worker's environment still has everything the shared one gives
    assert environment(SERVICES["beat"]).items() <= environment(worker).items()


def test_the_web_health_check_asks_a_running_arena_web(tmp_path) -> None:
    """The web's health check, as written, run against `arena web` on its port: healthy
    while it answers, not once it has stopped."""
    from arena.store import Store
    from arena.web import browser

    test = SERVICES["web"]["healthcheck"]["test"]
    assert test[:2] == ["CMD", "python"]
    command = argv(SERVICES["web"]["command"])
    port = command[command.index("--port") + 1]
    Store(str(tmp_path / "arena.db")).close()  # an empty store, as a new deployment's
    with browser.serve(tmp_path / "arena.db") as base:
        code = test[-1].replace(f":{port}/", f":{base.rsplit(':', 1)[1]}/")
        check = [sys.executable, *test[2:-1], code]
        assert subprocess.run(check, capture_output=True, timeout=30).returncode == 0
    assert subprocess.run(check, capture_output=True, timeout=30).returncode != 0


#: the services that run bot code (hosted bots, bot files) in bubblewrap's sandbox
SANDBOXED = ("referee", "worker")


@pytest.mark.parametrize("name", SANDBOXED)
def test_the_services_running_bot_code_may_run_bubblewrap(name: str) -> None:
    """bubblewrap as the container's root, with no user namespace, needs CAP_SYS_ADMIN,
    and Docker's default seccomp and AppArmor profiles lifted (docs/hosting.md); the
    other services keep Docker's defaults."""
    service = SERVICES[name]
    assert "SYS_ADMIN" in service["cap_add"]
    assert "seccomp=unconfined" in service["security_opt"]
    assert "apparmor=unconfined" in service["security_opt"]
    for other in set(SERVICES) - set(SANDBOXED):
        assert "cap_add" not in SERVICES[other] and "security_opt" not in SERVICES[other], other
    assert re.search(r"apt-get install[^\n]*\bbubblewrap\b", (ROOT / "Dockerfile").read_text())


def test_the_sandbox_runs_here_as_it_runs_in_those_containers(tmp_path: Path) -> None:
    """The containers' way, with real processes on this machine: as root, no user
    namespace (the bot is given an unprivileged uid of its own instead), and a bot
    plays in it."""
    import os

    from arena.engine.match import play_match
    from arena.plugins import load_registry
    from arena.sandbox import Limits, python_bot_program, sandbox_problem, stdio_player
    from arena.sandbox.bwrap import sandbox_command
    from arena.sdk import MatchContext

    assert os.geteuid() == 0, "the suite runs as root here, as the containers do"
    assert sandbox_problem() is None
    argv = sandbox_command(["true"], tmp_path, Limits(), 3_100_000)
    assert "--unshare-user" not in argv and "--unshare-net" in argv
    path = tmp_path / "first.py"
    path.write_text(
        "from arena.sdk import Bot\n\nclass First(Bot):\n"
        "    def decide_stratego(self, observation, decision):\n"
        "        if decision.kind == 'move':\n"
        "            src, dst = decision.options['moves'][0]\n"
        "            return {'type': 'move', 'from': src, 'to': dst}\n"
        "        return self.default_setup(decision)\n"
    )
    registry = load_registry()
    context = MatchContext("m", "stratego", 0, ["file:first", "random"], ["barrage"])
    player = stdio_player(python_bot_program(path), context)
    try:
        record = play_match(
            registry.game("stratego"),
            [player, registry.bot("stratego", "random").factory(1, 1)],
            5,
            {"turn-limit": "30"},
            registry.resolve_variants("stratego", ["barrage"]),
        )
    finally:
        player.close()
    assert record.result is not None and record.conduct[0].strikes == 0
    assert player.uid is not None and player.uid >= 3_100_000
