"""Fixtures for the installed `nextok` package's tests (run against the wheel
in a fresh venv by scripts/test.sh; see docs/python.md)."""

from __future__ import annotations

import lzma
import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("NEXTOK_SHARED", ROOT.parent / "shared"))
TOKENIZERS = ("llama3.1", "qwen3", "gemma3", "gpt-oss")


def missing_fixture(what: str) -> None:
    """Skip locally; fail when NEXTOK_REQUIRE_FIXTURES is set (scripts/test.sh, CI)."""
    if os.environ.get("NEXTOK_REQUIRE_FIXTURES", "0") not in ("", "0"):
        pytest.fail(f"missing fixture: {what}")
    pytest.skip(f"missing fixture: {what}")


def require_module(name: str, env: str = "NEXTOK_REQUIRE_HF"):
    """Imports an optional test dependency: skip when absent, unless env is set."""
    try:
        return __import__(name)
    except ImportError as e:
        if os.environ.get(env, "0") not in ("", "0"):
            pytest.fail(f"{name} is required ({env}=1) but does not import: {e}")
        pytest.skip(f"{name} not installed")


@pytest.fixture(scope="session")
def tokenizer_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """name -> a directory with tokenizer.json and tokenizer_config.json, decompressed
    from ../shared/tokenizers/<name>/tokenizer.json.xz."""
    out: dict[str, pathlib.Path] = {}
    base = tmp_path_factory.mktemp("tokenizers")
    for name in TOKENIZERS:
        src = SHARED / "tokenizers" / name
        if not (src / "tokenizer.json.xz").exists():
            continue
        dst = base / name
        dst.mkdir()
        (dst / "tokenizer.json").write_bytes(
            lzma.decompress((src / "tokenizer.json.xz").read_bytes())
        )
        if (src / "tokenizer_config.json").exists():
            shutil.copy(src / "tokenizer_config.json", dst / "tokenizer_config.json")
        out[name] = dst
    return out


@pytest.fixture(scope="session")
def llama_dir(tokenizer_dirs: dict[str, pathlib.Path]) -> pathlib.Path:
    if "llama3.1" not in tokenizer_dirs:
        missing_fixture(str(SHARED / "tokenizers/llama3.1/tokenizer.json.xz"))
    return tokenizer_dirs["llama3.1"]


@pytest.fixture(scope="session")
def llama_info(llama_dir: pathlib.Path):
    import nextok

    return nextok.TokenizerInfo.from_path(llama_dir)


# A hand-made vocabulary small enough to brute-force: every JSON
# punctuation byte, some letters and digits, multi-byte tokens that cross
# JSON token boundaries, a special token, an EOS and two padded ids.
SMALL_TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b'"',
    b" ",
    b"\n",
    b"a",
    b"b",
    b"x",
    b"0",
    b"1",
    b"7",
    b"-",
    b".",
    b"e",
    b"true",
    b"false",
    b"null",
    b'{"',
    b'":',
    b'",',
    b'"}',
    b"ab",
    b"12",
    b'"a"',
    b"tr",
    b"ue",
    b"\\",
    b"n",
    b"\xc3",
    b"\xa9",
    b"<|special|>",
    b"</s>",
]
SMALL_EOS = len(SMALL_TOKENS) - 1
SMALL_SPECIAL = len(SMALL_TOKENS) - 2


@pytest.fixture()
def small_info():
    import nextok

    return nextok.TokenizerInfo.from_token_bytes(
        SMALL_TOKENS,
        eos_ids=[SMALL_EOS],
        special_ids=[SMALL_SPECIAL, SMALL_EOS],
        vocab_size=len(SMALL_TOKENS) + 2,
    )
