"""nextok's tokenizer.json reader on tokenizers nobody shipped: HF `tokenizers`
trains small BPE tokenizers under seeded random pipelines (normalizers,
pre-tokenizer sequences of Split with every behaviour and `invert`, Digits,
ByteLevel, Metaspace with each prepend_scheme, Whitespace, WhitespaceSplit,
Punctuation, BertPreTokenizer; byte-level, Metaspace and legacy
SentencePiece decoders; added tokens, normalized or not), and for each one:

  - `nextok tokenize` equals HF `encode` on seeded random texts;
  - `nextok detokenize` of HF's ids equals HF `decode`;
  - every id's bytes (`vocab --dump`) are what HF's spelling stands for;
  - pipelines nextok does not implement (Unigram and WordPiece models,
    Lowercase, Strip, StripAccents and regex Replace normalizers) fail with
    an `unsupported` error naming the construct, never a different encoding.

Fixed seed; NEXTOK_TOKENIZER_GEN_SEED and NEXTOK_TOKENIZER_GEN_CASES widen
the run by hand."""

from __future__ import annotations

import json
import os
import pathlib
import random
import re
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
import tokenizers
from conftest import byte_level_inverse
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, trainers
from tokenizers import pre_tokenizers as pt

SEED = int(os.environ.get("NEXTOK_TOKENIZER_GEN_SEED", "1"))
CASES = int(os.environ.get("NEXTOK_TOKENIZER_GEN_CASES", "48"))

PIECES = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "hello",
    "world",
    "123",
    "4567",
    "naïve",
    "café",
    "日本語",
    "テキスト",
    "😀",
    "don't",
    "it's",
    "I'm",
    "x+y=z",
    "(a,b)",
    "[c]",
    "{d}",
    "tab\tnew\nline",
    "ﬁne",
    "①",
    "½",
    "Ā",
    "é",
    "\xa0",
    "\u3000",
    "'s",
    "'LL",
    "▁",
    "__init__",
    "a-b",
    "a.b.c",
    "3.14",
    "1,000",
    "$5",
    "#tag",
    "@you",
    "¿qué?",
    "«ok»",
    "—",
    "…",
    "‘q’",
    "“dq”",
]
ADDED = ["<|im_end|>", "<think>", "[TOOL]"]


def random_text(r: random.Random) -> str:
    out = []
    for _ in range(r.randint(0, 24)):
        w = r.choice(PIECES + [" ", "  ", "\n", "\t", "", "\r\n"])
        if r.random() < 0.15:
            w = w.upper()
        out.append(w + r.choice(["", " ", "", ",", ".", "!", "  ", "\n"]))
    if r.random() < 0.2:
        k = r.randint(0, len(out))
        out.insert(k, r.choice(ADDED))
    return "".join(out)


CORPUS = [random_text(random.Random(i)) for i in range(300)]
BYTES = [f"<0x{b:02X}>" for b in range(256)]


def split_step(r: random.Random) -> Any:
    pattern = r.choice(
        [Regex(r"\s+"), Regex(r"\p{P}"), " ", ",", Regex(r"\d+|[^\d\s]+"), Regex(r"[aeiou]")]
    )
    behavior = r.choice(
        ["isolated", "merged_with_previous", "merged_with_next", "removed", "contiguous"]
    )
    return pt.Split(pattern, behavior, invert=r.random() < 0.25)


def other_step(r: random.Random) -> Any:
    return r.choice(
        [
            lambda: split_step(r),
            lambda: pt.Digits(individual_digits=r.random() < 0.5),
            lambda: pt.Whitespace(),
            lambda: pt.WhitespaceSplit(),
            lambda: pt.Punctuation(
                r.choice(
                    [
                        "isolated",
                        "removed",
                        "merged_with_previous",
                        "merged_with_next",
                        "contiguous",
                    ]
                )
            ),
            lambda: pt.BertPreTokenizer(),
        ]
    )()


def supported_normalizer(r: random.Random) -> Any:
    steps = r.sample(
        [
            normalizers.NFC(),
            normalizers.NFKC(),
            normalizers.NFD(),
            normalizers.NFKD(),
            normalizers.Replace("  ", " "),
            normalizers.Replace("é", "e"),
        ],
        r.randint(0, 2),
    )
    return normalizers.Sequence(steps) if steps else None


def byte_level(r: random.Random) -> tuple[Tokenizer, Any]:
    t = Tokenizer(models.BPE(ignore_merges=r.random() < 0.3))
    if (n := supported_normalizer(r)) is not None:
        t.normalizer = n
    steps = [other_step(r) for _ in range(r.randint(0, 2))]
    steps.append(pt.ByteLevel(add_prefix_space=r.random() < 0.4, use_regex=r.random() < 0.6))
    t.pre_tokenizer = pt.Sequence(steps)
    t.decoder = decoders.ByteLevel()
    return t, trainers.BpeTrainer(
        vocab_size=r.choice([300, 700]),
        initial_alphabet=pt.ByteLevel.alphabet(),
        special_tokens=["<unk>"],
        show_progress=False,
    )


def metaspace(r: random.Random) -> tuple[Tokenizer, Any]:
    t = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=r.random() < 0.5))
    if (n := supported_normalizer(r)) is not None:
        t.normalizer = n
    scheme, split = r.choice(["always", "first", "never"]), r.random() < 0.5
    steps = [other_step(r) for _ in range(r.choice([0, 0, 1]))]
    steps.append(pt.Metaspace(replacement="▁", prepend_scheme=scheme, split=split))
    t.pre_tokenizer = pt.Sequence(steps) if len(steps) > 1 else steps[0]
    meta = decoders.Metaspace(replacement="▁", prepend_scheme=scheme, split=split)
    t.decoder = r.choice(
        [meta, decoders.Sequence([meta, decoders.ByteFallback(), decoders.Fuse()])]
    )
    return t, trainers.BpeTrainer(
        vocab_size=r.choice([400, 700]),
        special_tokens=["<unk>", "<s>"] + BYTES,
        show_progress=False,
    )


def legacy_sentencepiece(r: random.Random) -> tuple[Tokenizer, Any]:
    t = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    t.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    t.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    return t, trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<unk>", "<s>"] + BYTES, show_progress=False
    )


FAMILIES: list[Callable[[random.Random], tuple[Tokenizer, Any]]] = [
    byte_level,
    metaspace,
    legacy_sentencepiece,
]


def train(t: Tokenizer, trainer: Any, r: random.Random) -> Tokenizer:
    t.train_from_iterator(CORPUS, trainer)
    # The trainer holds <0xNN> as special tokens; SentencePiece files keep them
    # in the model's vocabulary as plain entries.
    d = json.loads(t.to_str())
    d["added_tokens"] = [
        a for a in d["added_tokens"] if not re.fullmatch(r"<0x[0-9A-F]{2}>", a["content"])
    ]
    t = Tokenizer.from_str(json.dumps(d))

    def flags() -> dict[str, bool]:
        return {k: r.random() < 0.3 for k in ("lstrip", "rstrip", "single_word")}

    if r.random() < 0.5:
        t.add_special_tokens(
            [tokenizers.AddedToken(ADDED[0], special=True, normalized=False, **flags())]
        )
    if r.random() < 0.5:
        t.add_tokens([tokenizers.AddedToken(ADDED[1], normalized=r.random() < 0.5, **flags())])
    if r.random() < 0.3:
        t.add_tokens(
            [tokenizers.AddedToken(r.choice(["fox", "the", "é"]), normalized=False, **flags())]
        )
    return t


def describe(t: Tokenizer) -> str:
    d = json.loads(t.to_str())
    return json.dumps({k: d[k] for k in ("normalizer", "pre_tokenizer", "decoder")})[:600]


def run(cli: str, *args: Any) -> subprocess.CompletedProcess:
    return subprocess.run(
        [cli, *map(str, args)], check=False, capture_output=True, text=False, timeout=120
    )


def decoder_types(t: Tokenizer) -> list[str]:
    d = json.loads(t.to_str())["decoder"]
    return [x["type"] for x in d.get("decoders", [d])]


def reference_bytes(t: Tokenizer, byte_level_spelling: bool) -> dict[int, bytes]:
    """id -> the bytes HF's spelling stands for, from the vocabulary alone."""
    inv = byte_level_inverse()
    added = t.get_added_tokens_decoder()
    byte_fallback = "ByteFallback" in decoder_types(t)
    out = {}
    for i in range(t.get_vocab_size(with_added_tokens=True)):
        s = t.id_to_token(i)
        # HF's decode runs added tokens through the decoder too; ByteLevel
        # keeps a token whole when a character is outside its alphabet.
        if byte_level_spelling:
            out[i] = bytes(inv[c] for c in s) if all(c in inv for c in s) else s.encode()
        elif i in added:
            out[i] = s.replace("\u2581", " ").encode()
        elif byte_fallback and (m := re.fullmatch(r"<0x([0-9A-F]{2})>", s)):
            out[i] = bytes([int(m.group(1), 16)])
        else:
            out[i] = s.replace("\u2581", " ").encode()
    return out


def check_one(cli: str, t: Tokenizer, d: pathlib.Path, r: random.Random) -> list[str]:
    t.save(str(d / "tokenizer.json"))
    texts = [random_text(r) for _ in range(60)] + [
        "",
        " ",
        "  x",
        "\n\nA",
        "▁lead",
        "a<|im_end|>b <think>c",
        "x  <think>  y",
        " <|im_end|>\n<|im_end|> ",
        "thefox the fox é",
        "a\u3000<think>\u00a0b",
        "<think><think>fox<|im_end|>fox",
    ]
    (d / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in texts), encoding="utf-8")
    p = run(cli, "tokenize", "--tokenizer", d, "--input-jsonl", d / "t.jsonl", "--json")
    if p.returncode != 0:
        return [f"nextok refused a supported pipeline: {p.stderr.decode()[:300]}"]
    got = [json.loads(x)["ids"] for x in p.stdout.decode().splitlines()]
    want = [e.ids for e in t.encode_batch(texts, add_special_tokens=False)]
    errors = []
    for k, text in enumerate(texts):
        if got[k] != want[k]:
            errors.append(f"encode {text!r}: HF {want[k][:16]} nextok {got[k][:16]}")
            break
    byte_level_spelling = decoder_types(t) == ["ByteLevel"]
    dump = run(cli, "vocab", "--tokenizer", d, "--dump")
    assert dump.returncode == 0, dump.stderr.decode()
    ref = reference_bytes(t, byte_level_spelling)
    for line in dump.stdout.decode().splitlines():
        e = json.loads(line)
        if e["id"] in ref and bytes.fromhex(e["hex"]) != ref[e["id"]]:
            errors.append(
                f"id {e['id']} ({t.id_to_token(e['id'])!r}): bytes {e['hex']} want {ref[e['id']].hex()}"
            )
            break
    for ids in want[:30]:
        if not ids:
            continue
        hf = t.decode(ids, skip_special_tokens=False)
        if "\ufffd" in hf or "<unk>" in hf:
            continue
        p = run(cli, "detokenize", "--tokenizer", d, *ids)
        if p.returncode != 0 or p.stdout.decode() != hf:
            errors.append(
                f"decode {ids[:12]}: HF {hf!r} nextok {p.stdout.decode()!r} {p.stderr.decode()[:200]}"
            )
            break
    return errors


def test_generated_pipelines_encode_and_decode_as_hf(cli: str, tmp_path: pathlib.Path) -> None:
    failures, kinds = [], {f.__name__: 0 for f in FAMILIES}
    for case in range(CASES):
        r = random.Random(SEED * 100_003 + case)
        family = FAMILIES[case % len(FAMILIES)]
        t = train(*family(r), r)
        d = tmp_path / f"case{case}"
        d.mkdir()
        kinds[family.__name__] += 1
        for err in check_one(cli, t, d, r):
            failures.append(f"case {case} ({family.__name__}) {describe(t)}\n    {err}")
    assert all(kinds.values()), kinds
    assert not failures, (
        f"{len(failures)} of {CASES} generated tokenizers differ from HF:\n"
        + "\n".join(failures[:6])
    )


UNSUPPORTED = {
    "Unigram": lambda: (
        Tokenizer(models.Unigram()),
        trainers.UnigramTrainer(
            vocab_size=200, unk_token="<unk>", special_tokens=["<unk>"], show_progress=False
        ),
    ),
    "WordPiece": lambda: (
        Tokenizer(models.WordPiece(unk_token="[UNK]")),
        trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]"], show_progress=False),
    ),
    "Lowercase": lambda: (Tokenizer(models.BPE()), None),
    "Strip": lambda: (Tokenizer(models.BPE()), None),
    "StripAccents": lambda: (Tokenizer(models.BPE()), None),
    "Replace (regex)": lambda: (Tokenizer(models.BPE()), None),
}


@pytest.mark.parametrize("construct", sorted(UNSUPPORTED))
def test_unimplemented_pipelines_are_named_errors(
    cli: str, tmp_path: pathlib.Path, construct: str
) -> None:
    t, trainer = UNSUPPORTED[construct]()
    if trainer is None:
        t.normalizer = {
            "Lowercase": normalizers.Lowercase(),
            "Strip": normalizers.Strip(),
            "StripAccents": normalizers.StripAccents(),
            "Replace (regex)": normalizers.Replace(Regex(r"\s+"), " "),
        }[construct]
        trainer = trainers.BpeTrainer(
            vocab_size=300, initial_alphabet=pt.ByteLevel.alphabet(), show_progress=False
        )
    t.pre_tokenizer = pt.ByteLevel()
    t.decoder = decoders.ByteLevel()
    t.train_from_iterator(CORPUS, trainer)
    t.save(str(tmp_path / "tokenizer.json"))
    p = run(cli, "tokenize", "--tokenizer", tmp_path, "hello world")
    err = p.stderr.decode()
    assert p.returncode != 0 and p.stdout == b"", (p.returncode, p.stdout[:200])
    assert "[unsupported]" in err and construct in err, err
