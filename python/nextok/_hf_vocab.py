"""Token byte strings from Hugging Face tokenizers.

``TokenizerInfo.from_huggingface`` calls :func:`huggingface_token_bytes`,
which turns each token's spelling into the bytes it decodes to:

* byte-level BPE (GPT-2, Llama 3, Qwen, gpt-oss): every character of the
  spelling stands for one byte through the GPT-2 printable alphabet
  (``Ġ`` is the space byte);
* SentencePiece (Llama 2, Gemma): ``▁`` is a space and ``<0xNN>`` is the
  raw byte NN (byte fallback);
* added tokens: their content, as UTF-8 (``▁`` as a space in the
  non-special added tokens of a SentencePiece tokenizer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

_BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
_SPIECE_SPACE = "\u2581"


def _byte_level_alphabet() -> dict[str, int]:
    """The GPT-2 byte-to-character table, inverted: character -> byte."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(0xA1, 0xAC + 1))
        + list(range(0xAE, 0xFF + 1))
    )
    table: dict[str, int] = {chr(b): b for b in printable}
    shifted = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + shifted)] = b
            shifted += 1
    return table


_BYTE_LEVEL = _byte_level_alphabet()


def _decode_byte_level(token: str) -> bytes:
    try:
        return bytes(_BYTE_LEVEL[c] for c in token)
    except KeyError:  # not in the alphabet: an unusual spelling, keep its text
        return token.encode("utf-8")


def _decode_sentencepiece(token: str, byte_fallback: bool) -> bytes:
    if byte_fallback:
        m = _BYTE_TOKEN.match(token)
        if m:
            return bytes([int(m.group(1), 16)])
    return token.replace(_SPIECE_SPACE, " ").encode("utf-8")


def _has_type(node: Any, names: Iterable[str]) -> bool:
    """Whether a tokenizer.json component (or a Sequence of them) has a type in names."""
    if not isinstance(node, dict):
        return False
    wanted = set(names)
    if node.get("type") in wanted:
        return True
    for key in ("decoders", "pretokenizers", "normalizers"):
        if any(_has_type(child, wanted) for child in node.get(key) or []):
            return True
    return False


def _style_from_json(spec: dict[str, Any]) -> tuple[str, bool]:
    decoder = spec.get("decoder")
    pre = spec.get("pre_tokenizer")
    model = spec.get("model") or {}
    byte_fallback = bool(model.get("byte_fallback")) or _has_type(decoder, ["ByteFallback"])
    if _has_type(decoder, ["ByteLevel"]) or _has_type(pre, ["ByteLevel"]):
        return "byte_level", byte_fallback
    if _has_type(decoder, ["Metaspace", "Replace", "ByteFallback"]) or _has_type(
        pre, ["Metaspace"]
    ):
        return "sentencepiece", byte_fallback
    return "plain", byte_fallback


def _state(component: Any) -> Any:
    """A tokenizers component (decoder, pre-tokenizer, model) as its JSON."""
    if component is None:
        return None
    return json.loads(component.__getstate__())


def _components(backend: Any) -> dict[str, Any]:
    """The parts of tokenizer.json that say how spellings map to bytes, read
    without serialising the whole tokenizer (its vocabulary and merges)."""
    model = backend.model
    return {
        "decoder": _state(backend.decoder),
        "pre_tokenizer": _state(backend.pre_tokenizer),
        "model": {"byte_fallback": bool(getattr(model, "byte_fallback", False))},
    }


def _style_from_vocab(vocab: dict[str, int]) -> tuple[str, bool]:
    tokens = list(vocab)
    if any(_SPIECE_SPACE in t for t in tokens):
        return "sentencepiece", any(_BYTE_TOKEN.match(t) for t in tokens)
    if any("\u0120" in t for t in tokens):  # "Ġ"
        return "byte_level", False
    return "plain", False


def _decode(token: str, style: str, byte_fallback: bool) -> bytes:
    if style == "byte_level":
        return _decode_byte_level(token)
    if style == "sentencepiece":
        return _decode_sentencepiece(token, byte_fallback)
    return token.encode("utf-8")


def _eos_of(tokenizer: Any) -> list[int]:
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is None:
        return []
    return [int(e) for e in eos] if isinstance(eos, (list, tuple)) else [int(eos)]


def huggingface_token_bytes(
    tokenizer: Any, eos_ids: Sequence[int] | None = None
) -> tuple[list[bytes], list[int], list[int]]:
    """(token bytes by id, EOS ids, special ids) for a HF tokenizer.

    ``tokenizer``: a ``tokenizers.Tokenizer``, a transformers fast tokenizer
    (its ``backend_tokenizer`` is read) or a slow (SentencePiece/BPE)
    transformers tokenizer. EOS: ``eos_ids`` if given, else the tokenizer's
    ``eos_token_id``; a bare ``tokenizers.Tokenizer`` has none, so it needs
    ``eos_ids``.
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None and hasattr(tokenizer, "to_str") and hasattr(tokenizer, "get_vocab"):
        backend = tokenizer  # a tokenizers.Tokenizer
    specials: set[int] = set()
    added: dict[int, str] = {}
    if backend is not None:
        style, byte_fallback = _style_from_json(_components(backend))
        vocab: dict[str, int] = backend.get_vocab(with_added_tokens=True)
        for tid, token in backend.get_added_tokens_decoder().items():
            added[int(tid)] = token.content
            if token.special:
                specials.add(int(tid))
    elif hasattr(tokenizer, "get_vocab"):
        vocab = tokenizer.get_vocab()
        style, byte_fallback = _style_from_vocab(vocab)
        for tid in getattr(tokenizer, "added_tokens_decoder", {}) or {}:
            added[int(tid)] = str(tokenizer.added_tokens_decoder[tid])
    else:
        raise TypeError(
            "expected a tokenizers.Tokenizer or a transformers tokenizer, "
            f"got {type(tokenizer).__name__}"
        )
    specials.update(int(i) for i in getattr(tokenizer, "all_special_ids", []) or [])

    size = max([*vocab.values(), *added.keys(), -1]) + 1
    tokens: list[bytes] = [b""] * size
    for text, tid in vocab.items():
        tokens[tid] = _decode(text, style, byte_fallback)
    for tid, content in added.items():
        # Special tokens decode to their text; SentencePiece decoders also
        # turn U+2581 into spaces in the other added tokens (Gemma's runs).
        plain = tid in specials or style != "sentencepiece"
        tokens[tid] = content.encode("utf-8") if plain else _decode(content, style, False)

    if eos_ids is not None:
        eos = [int(e) for e in eos_ids]
    else:
        eos = _eos_of(tokenizer)
        if not eos and backend is tokenizer:
            raise ValueError(
                "a tokenizers.Tokenizer does not say which token ends a sequence; pass eos_ids"
            )
    for e in eos:
        if not 0 <= e < size:
            raise ValueError(f"eos id {e} is outside the tokenizer's {size} ids")
    return tokens, sorted(set(eos)), sorted(specials)
