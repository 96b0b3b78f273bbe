"""Every command of the README and docs/*.md runs as written.

Each shell block (```sh) runs in one bash, its commands in order, in a fresh directory
that holds what a fresh clone holds (the repository's tracked files, linked) and the
`.venv` that `make run` installs. The PATH is the one the README's own steps give: the
system's, the venv's bin not on it, until the README's activate step
(`. .venv/bin/activate`) has run. A block of docs/ comes after the whole README, so
that step has run before it; a README block after the one that has it. Each command
must exit 0, and nothing may print a traceback or `command not found`.

A command that cannot run here is left out by one of the rules of NOT_HERE, each with
its reason; anything else runs, so a command added to the docs is run by default.
A server (`arena referee`, `arena web`) runs for real: started (in the background when
the docs end it with `&`, as they do when later lines talk to it), waited for until it
answers, and stopped with Ctrl-C (at once if it ran in the foreground, else at the
block's end), which must end it with 0 or 130.

Each block has a network of its own where the system allows it (`unshare --net`, only
loopback), so that the docs' own ports (50051, 8000) serve beside the other blocks and
other tests, and a command that would reach the internet fails instead.

The Python blocks that are whole bots are played as files through `arena play`, as the
README says, and run as `python FILE --help` (their main(), not run at import).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
SHELL = {"sh", "bash", "shell", "console"}
ACTIVATE = re.compile(r"^(\.|source) \S*\.venv/bin/activate\b")

# (reason, pattern): a command matching the pattern (searched in the command without
# its comment, unless the rule says "comment") is left out, for that reason.
NOT_HERE: list[tuple[str, re.Pattern[str]]] = [
    (
        "a placeholder the reader fills in",
        re.compile(
            r"HOST:PORT|\bTOKEN\b|\bKEY\b|\bMATCH_ID\b|\bID\b|--token T\b|\bPATH\b"
            r"|\[--[\w-]+\]|\ba,b,c\b|\b[a-z]+-host\b|\breferee-\d|@db/"
        ),
    ),
    (
        "the whole demo or the whole suite (tests/test_demo.py plays the demo)",
        re.compile(r"^make (run|test)\b"),
    ),
    ("Docker", re.compile(r"^docker\b")),
    ("Celery: its broker and workers are what docker compose starts", re.compile(r"\bcelery\b")),
    ("installs into the venv, from the internet", re.compile(r"^pip install\b")),
    ("the Node.js bot: its packages come from npm (`make node`)", re.compile(r"^node bots/node/")),
    ("a tool Arena does not install", re.compile(r"^(protoc|valgrind)\b")),
    (
        "a measurement, minutes long: the benchmarks, and the tournaments whose figures "
        "the docs report (their comment gives the minutes)",
        re.compile(r"benchmarks/|#.*\b\d+ minutes\b"),
    ),
    (
        "the trained policy: the extra `train` (PyTorch) and a model trained first",
        re.compile(r"\btrained\b"),
    ),
]
# the options of a server: how to ask it whether it answers
SERVERS = {"referee": 50051, "web": 8000}
SERVER = re.compile(r"^arena (referee|web)\b")


def _blocks(kind: set[str]) -> list[tuple[str, str]]:
    """(where, text) of every fenced block of these languages, in reading order."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for m in FENCE.finditer(text):
            if m.group(2) in kind:
                line = text.count("\n", 0, m.start()) + 1
                body = "".join(s[len(m.group(1)) :] for s in m.group(3).splitlines(True))
                found.append((f"{path.relative_to(ROOT)}:{line}", body))
    return found


def _commands(block: str) -> list[str]:
    """Its commands: lines joined at a trailing backslash, blank and comment lines out."""
    joined, commands, open_quote = re.sub(r"\\\n\s*", " ", block), [], False
    for line in joined.splitlines():
        if open_quote:  # inside a quoted string that spans lines: the same command
            commands[-1] += "\n" + line
        elif line.strip() and not line.lstrip().startswith("#"):
            commands.append(line.strip())
        else:
            continue
        open_quote ^= _code(line).count("'") % 2 == 1
    return commands


def _code(command: str) -> str:
    """The command without its comment."""
    return re.sub(r"\s+#.*$", "", command)


def why_not_here(command: str) -> str | None:
    for reason, pattern in NOT_HERE:
        if pattern.search(command if "comment" in reason else _code(command)):
            return reason
    return None


def _written(command: str) -> set[str]:
    """What a command makes: files (-o FILE, --replay FILE, > FILE), variables (export
    VAR=...), a variant (what pip install of the plugin example adds)."""
    code = _code(command)
    made = set(re.findall(r"(?:-o|--replay|>)\s*([\w./-]+)", code))
    made |= {f"${v}" for v in re.findall(r"\b([A-Z_]+)=", code) if code.startswith("export")}
    made |= {f"--variant {m}" for m in re.findall(r"^pip install \./arena-([\w-]+)", code)}
    return made


def _server_check(command: str) -> str:
    """A bash line that waits (30 s at most) until this server answers."""
    words = shlex.split(_code(command).rstrip("&"))
    kind = words[1]
    port = SERVERS[kind]
    if "--port" in words:
        port = int(words[words.index("--port") + 1])
    if kind == "referee":
        ask = f"arena health --referee 127.0.0.1:{port} --timeout 1 >/dev/null 2>&1"
    else:
        ask = (
            f"python -c 'import urllib.request as u; "
            f'u.urlopen("http://127.0.0.1:{port}/", timeout=1)\' 2>/dev/null'
        )
    return (
        f"for i in $(seq 60); do {ask} && break; sleep 0.5; done; {ask}"
        f' || {{ echo "DOC-TEST: {kind} on port {port} never answered"; exit 1; }}'
    )


def _fail(what: str) -> str:
    return f'{{ echo "DOC-TEST: exit $code: "{what}; exit 1; }}'


def script(where: str, block: str, prelude: list[str]) -> tuple[str, list[str]]:
    """The bash script that runs the block, and the lines it leaves out with why."""
    lines = ["set -m", *prelude]  # job control: a background server gets Ctrl-C
    skipped, unwritten = [], set()
    for command in _commands(block):
        reason = why_not_here(command)
        if reason is None and any(
            re.search(rf"(?<![\w./-]){re.escape(f)}(?![\w./-])", command) for f in unwritten
        ):
            reason = "needs what a line left out would have made"
        if reason is not None:
            skipped.append(f"{command}  <- {reason}")
            unwritten |= _written(command)
            continue
        quoted = shlex.quote(command)
        lines.append(f"echo DOC-TEST: running {quoted}")
        if SERVER.match(command) and _code(command).endswith("&"):
            lines += [command, _server_check(command)]
        elif _code(command).endswith("&") and "--token-file" in command:  # a bot: registered
            token = shlex.split(_code(command))[
                shlex.split(_code(command)).index("--token-file") + 1
            ]
            lines += [command, f"for i in $(seq 60); do [ -s {token} ] && break; sleep 0.5; done"]
        elif SERVER.match(command):  # in the foreground it runs until Ctrl-C
            lines += [
                f"{_code(command)} &",
                _server_check(command),
                "kill -INT %%; wait %%; code=$?",
                f"[ $code = 0 ] || [ $code = 130 ] || {_fail(quoted)}",
            ]
        else:
            lines += [
                command,
                f"code=$?; [ $code = 0 ] || {_fail(quoted)}",
            ]
    lines += [  # the servers still up: Ctrl-C, and each must end well
        "for job in $(jobs -p); do kill -INT $job; wait $job; code=$?",
        f"  [ $code = 0 ] || [ $code = 130 ] || {_fail('a server')}",
        "done",
    ]
    return "\n".join(lines) + "\n", skipped


def _fresh_clone(where: Path) -> None:
    """What a fresh clone after `make run` holds: its tracked files (linked) and .venv."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in sorted({p.split("/")[0] for p in tracked} | {".venv"}):
        (where / name).symlink_to(ROOT / name)


def _own_network() -> list[str]:
    """The prefix that gives a command a network of its own, if the system allows it."""
    if shutil.which("unshare") and shutil.which("ip"):
        probe = ["unshare", "--net", "--map-root-user", "ip", "link", "set", "lo", "up"]
        if subprocess.run(probe, capture_output=True).returncode == 0:
            return ["unshare", "--net", "--map-root-user"]
    return []


def _system_path() -> str:
    """The PATH of a fresh shell: this one's, without the venv's bin."""
    venv = {str(BIN), str(ROOT / ".venv" / "bin")}
    return os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p not in venv)


SHELL_BLOCKS = _blocks(SHELL)


def _prelude(where: str) -> list[str]:
    """The README's activate steps that a reader of this block has run before it."""
    order = [w for w, _ in SHELL_BLOCKS]
    return [
        c
        for w, block in SHELL_BLOCKS[: order.index(where)]
        if w.startswith("README.md:")
        for c in _commands(block)
        if ACTIVATE.match(c)
    ]


def run_block(where: str, block: str, tmp: Path) -> tuple[int, str, list[str]]:
    text, skipped = script(where, block, _prelude(where))
    (tmp / "clone").mkdir()
    _fresh_clone(tmp / "clone")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "VIRTUAL_ENV"))}
    env["PATH"] = _system_path()
    net = _own_network()
    if net:
        text = "ip link set lo up\n" + text
    proc = subprocess.run(
        [*net, "bash", "-c", text],
        cwd=tmp / "clone",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr, skipped


@pytest.mark.parametrize("where,block", SHELL_BLOCKS, ids=[w for w, _ in SHELL_BLOCKS])
def test_the_commands_of_the_docs_run_as_written(where: str, block: str, tmp_path: Path):
    code, output, skipped = run_block(where, block, tmp_path)
    left_out = "".join(f"\n  {s}" for s in skipped)
    assert code == 0, f"{where} failed:\n{output[-4000:]}\nleft out:{left_out}"
    for bad in ("Traceback", "command not found"):
        assert bad not in output, f"{where} printed {bad!r}:\n{output[-4000:]}"


def test_the_docs_have_commands_and_most_run():
    """The rules leave out what cannot run here, not most of the docs."""
    commands = [c for _, block in SHELL_BLOCKS for c in _commands(block)]
    run = [c for c in commands if why_not_here(c) is None]
    assert len(commands) > 60 and len(run) > len(commands) / 3, (len(run), len(commands))


def test_without_the_readme_activate_step_arena_is_not_found(tmp_path: Path):
    """The test's shell is honest: the README's first arena command fails without it."""
    where, block = next(
        (w, b) for w, b in SHELL_BLOCKS if any(ACTIVATE.match(c) for c in _commands(b))
    )
    without = "\n".join(c for c in _commands(block) if not ACTIVATE.match(c))
    code, output, _ = run_block(where, without, tmp_path)
    assert code != 0 and "arena: command not found" in output, output[-2000:]


# --- the Python blocks that are whole bots, played as files --------------------------


def _whole_bots() -> list[tuple[str, str]]:
    """A block that defines a Bot (or PolicyBot) subclass and runs main() under
    `if __name__ == "__main__":`, with more than a skeleton's `...` for methods."""
    bots = []
    for where, code in _blocks({"python"}):
        tree = ast.parse(code)
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        is_bot = any(
            isinstance(b, ast.Name) and b.id.endswith("Bot") for c in classes for b in c.bases
        )
        trained = "sb3_contrib" in code  # the trained policy: see NOT_HERE
        if (
            is_bot
            and 'if __name__ == "__main__":' in code
            and "): ...\n" not in code
            and not trained
        ):
            bots.append((where, code))
    return bots


def test_no_doc_block_runs_a_bot_at_import():
    """run_bot() or main() at the top level would connect when `arena play` imports it."""
    found = []
    for where, code in _blocks({"python"}):
        for node in ast.parse(code).body:
            call = node.value if isinstance(node, ast.Expr) else None
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") in ("run_bot", "main"):
                found.append(where)
    assert not found, f"blocks that run a bot when imported: {found}"


WHOLE_BOTS = _whole_bots()
OPPONENTS = {"risk": "aggressive,defensive", "stratego": "heuristic"}


@pytest.mark.parametrize("where,code", WHOLE_BOTS, ids=[w for w, _ in WHOLE_BOTS])
def test_the_bots_of_the_docs_play_as_files(where: str, code: str, tmp_path: Path):
    path = tmp_path / "docbot.py"
    path.write_text(code)
    games = re.findall(r"def decide_(\w+)", code) or ["stratego"]  # a PolicyBot: both
    for game in games:
        players = f"./docbot.py,{OPPONENTS[game]}"
        proc = subprocess.run(
            [str(BIN / "arena"), "play", game, "--players", players, "--seed", "3"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"{where}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        assert "seat 0 file:docbot: 0 strikes" in proc.stdout, proc.stdout[-2000:]
    proc = subprocess.run(
        [sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "--referee" in proc.stdout, proc.stderr
