"""Generate the Python stubs of arena/proto/arena/v1/*.proto into arena/v1/ (committed).

    .venv/bin/python scripts/gen_protos.py            # regenerate
    .venv/bin/python scripts/gen_protos.py --check    # fail if the committed stubs are stale

Generated code is never edited by hand; tests/referee/test_protos.py runs --check.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the import root of the .proto files (shipped in the package: `arena proto --path`)
PROTO_ROOT = ROOT / "arena" / "proto"
PROTOS = sorted(PROTO_ROOT.rglob("*.proto"))
OUT = ROOT / "arena" / "v1"
GENERATED = ("arena_pb2.py", "arena_pb2.pyi", "arena_pb2_grpc.py")


def generate(into: Path) -> None:
    from grpc_tools import protoc

    include = str(resources.files("grpc_tools") / "_proto")
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={into}",
        f"--pyi_out={into}",
        f"--grpc_python_out={into}",
        *map(str, PROTOS),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        fresh = Path(tmp) / "arena" / "v1"
        if args.check:
            stale = [
                name
                for name in GENERATED
                if not (OUT / name).exists()
                or not filecmp.cmp(fresh / name, OUT / name, shallow=False)
            ]
            if stale:
                print(
                    f"stale generated stubs: {', '.join(stale)}; run scripts/gen_protos.py",
                    file=sys.stderr,
                )
                return 1
            return 0
        OUT.mkdir(parents=True, exist_ok=True)
        for name in GENERATED:
            shutil.copyfile(fresh / name, OUT / name)
        (OUT / "__init__.py").write_text(
            '"""Generated from arena/proto/arena/v1 (scripts/gen_protos.py)."""\n'
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
