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


def byte_level_inverse():
    """The GPT-2 byte-level alphabet, inverted: char -> byte."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    fwd, n = {b: b for b in keep}, 0
    for b in range(256):
        if b not in fwd:
            fwd[b] = 256 + n
            n += 1
    return {chr(c): b for b, c in fwd.items()}
