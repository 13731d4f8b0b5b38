import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _find_cli():
    env = os.environ.get("NEXTOK_CLI")
    if env:
        return env
    for preset in ("dev", "release", "asan"):
        p = ROOT / "build" / preset / "tools" / "nextok"
        if p.exists():
            return str(p)
    raise RuntimeError("nextok CLI not found: build it or set NEXTOK_CLI")


@pytest.fixture(scope="session")
def cli():
    return _find_cli()


def run_cli(cli, *args, check=True):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"nextok {' '.join(map(str, args))} failed: {r.stderr}")
    return r


def missing_fixture(what: str) -> None:
    """Skip locally, fail when NEXTOK_REQUIRE_FIXTURES is set (the test command and CI)."""
    if os.environ.get("NEXTOK_REQUIRE_FIXTURES", "0") not in ("", "0"):
        pytest.fail(f"missing fixture: {what}")
    pytest.skip(f"missing fixture: {what}")
