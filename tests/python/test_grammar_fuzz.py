"""The GBNF front-end and the Earley matcher on grammars nobody wrote: random
GBNF grammars (literals with every escape, classes and negated classes, `.`,
groups over lines, every repetition form, rules that refer to later rules,
left, right and centre recursion), each read by the oracle's own GBNF parser
into a `lark` grammar (gbnf_oracle.py, no engine code) whose Earley parser
decides every verdict.
  - completeness: random derivations are accepted token by token, EOS at the
    end;
  - exactness: small edits of them are accepted exactly when lark accepts them;
  - soundness: random-logit generations that end with EOS parse with lark, and
    no walk dead-ends.
Llama-3.1 vocabulary. Fixed seed; NEXTOK_GRAMMAR_FUZZ_SEED and
NEXTOK_GRAMMAR_FUZZ_CASES widen the run by hand."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import random
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator

from gbnf_oracle import Gbnf, Sampler, accepts, recogniser
from lark.exceptions import GrammarError
from lark_oracle import mutants

TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", "build/release/tokenizers"))

# Negated classes and `.` under nested repetitions make grammars so
# ambiguous that Earley over bytes slows to seconds a mask (docs/
# constraint-engine.md, "Grammars"); CI draws them rarely,
# NEXTOK_GRAMMAR_FUZZ_WIDE=1 as often as any other item.
WIDE = os.environ.get("NEXTOK_GRAMMAR_FUZZ_WIDE") == "1"
NEGATED, ANY = (0.25, 0.03) if WIDE else (0.08, 0.01)

CHARS = list("abcxyz019 -_{}:,") + ["\n", "\t", "é", "中", '"', "\\", "[", "]"]


def spell(c: str, rng: random.Random, in_class: bool) -> str:
    """One character as GBNF writes it: raw where it may be, else escaped."""
    special = '"\\' if not in_class else "]\\^-["
    named = {"\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"', "[": "\\[", "]": "\\]"}
    if c in named and (c in special or c in "\n\t" or rng.random() < 0.3):
        return named[c]
    if c in special:
        return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
    r = rng.random()
    if r < 0.1 and ord(c) < 0x100:
        return f"\\x{ord(c):02X}"
    if r < 0.15:
        return f"\\u{ord(c):04x}"
    if r < 0.18:
        return f"\\U{ord(c):08x}"
    return c


class Generator:
    def __init__(self, rng: random.Random, rules: int):
        self.rng = rng
        self.names = ["root"] + [
            f"r{k}" if rng.random() < 0.5 else f"rule-{k}" for k in range(1, rules)
        ]

    def literal(self) -> str:
        n = self.rng.randint(1, 3)
        return '"' + "".join(spell(self.rng.choice(CHARS), self.rng, False) for _ in range(n)) + '"'

    def klass(self) -> str:
        body = ""
        for _ in range(self.rng.randint(1, 3)):
            a = self.rng.choice(CHARS)
            if self.rng.random() < 0.4:
                b = chr(ord(a) + self.rng.randint(0, 5))
                body += spell(a, self.rng, True) + "-" + spell(b, self.rng, True)
            else:
                body += spell(a, self.rng, True)
        return "[" + ("^" if self.rng.random() < NEGATED else "") + body + "]"

    def item(self, rule: int, depth: int) -> str:
        r = self.rng.random()
        if r < 0.35:
            s = self.literal()
        elif r < 0.6:
            s = self.klass()
        elif r < 0.6 + ANY:
            s = "."
        elif r < 0.8 and rule + 1 < len(self.names):
            s = self.rng.choice(self.names[rule + 1 :])  # later rules: no cycles
        elif depth < 2:
            sep = "\n    " if self.rng.random() < 0.3 else " "
            s = "(" + sep + self.alternatives(rule, depth + 1) + sep + ")"
        else:
            s = self.literal()
        q = self.rng.random()
        if q < 0.35:
            s += self.rng.choice(
                ["*", "+", "?", "{2}", "{0,2}", "{1,3}", "{2,}", "{0,}", "{ 1 , 2 }"]
            )
        return s

    def sequence(self, rule: int, depth: int) -> str:
        return " ".join(self.item(rule, depth) for _ in range(self.rng.randint(1, 3)))

    def alternatives(self, rule: int, depth: int) -> str:
        sep = " |\n    " if self.rng.random() < 0.3 else " | "
        return sep.join(self.sequence(rule, depth) for _ in range(self.rng.randint(1, 3)))

    def grammar(self) -> str:
        lines = []
        for k, name in enumerate(self.names):
            body = self.alternatives(k, 0)
            rec = self.rng.random()
            if rec < 0.3:  # recursion beside a base case, so the rule stays productive
                step = self.sequence(k, 1)
                body += " | " + self.rng.choice(
                    [f"{name} {step}", f"{step} {name}", f"{step} {name} {self.literal()}"]
                )
            comment = "  # a comment" if self.rng.random() < 0.2 else ""
            lines.append(f"{name} ::= {body}{comment}")
        self.rng.shuffle(lines)
        return "\n".join(lines) + "\n"


class OracleSlow(Exception):
    pass


@contextlib.contextmanager
def oracle_deadline(seconds: float) -> Iterator[None]:
    """Raises OracleSlow in the block after `seconds`: the oracle's own
    limit, not the engine's (lark parses ambiguous grammars slowly)."""

    def stop(*_: object) -> None:
        raise OracleSlow

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def verdict(lark: object, text: str) -> bool | None:
    """lark's verdict, or None when its Earley parse of an ambiguous grammar
    takes over a second."""
    try:
        with oracle_deadline(1.0):
            return accepts(lark, text)
    except OracleSlow:
        return None


def run(
    cli: str, path: str, walks: list[str], count: int, seed: int, extra: tuple[str, ...] = ()
) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for t in walks:
            f.write(json.dumps(t) + "\n")
        walk_path = f.name
    try:
        args = [
            cli,
            "grammar-generate",
            "--tokenizer",
            str(TOKENIZERS / "llama3.1"),
            "--grammar",
            path,
            "--walk",
            walk_path,
            "--count",
            str(count),
            "--seed",
            str(seed),
            "--max-tokens",
            "40",
            *extra,
        ]
        r = subprocess.run(
            args,
            check=False,
            capture_output=True,
            text=True,
            timeout=int(os.environ.get("NEXTOK_GRAMMAR_FUZZ_TIMEOUT", "120")),
        )
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        return [json.loads(line) for line in r.stdout.split("\n") if line.strip()]
    finally:
        pathlib.Path(walk_path).unlink()


def compare(
    cli: str,
    path: pathlib.Path,
    text: str,
    valid: list[str],
    judge: Callable[[str], bool | None],
    rng: random.Random,
    seed: int,
    totals: dict[str, int],
    bad: list[dict],
) -> None:
    """One grammar against the oracle `judge` (True, False, or None for no
    verdict): its sampled sentences (kept where judge accepts them) and their
    edits walked token by token, and random generations; totals counted and
    disagreements appended to bad."""
    valid = [s for s in valid if judge(s)]
    edits = sorted({m for s in valid for m in mutants(s, rng, 3)} - set(valid))
    verdicts = {s: True for s in valid}
    for m in edits:
        v = judge(m)
        if v is not None:
            verdicts[m] = v
    walks = list(verdicts)
    lines = run(cli, str(path), walks, 6, seed)
    gens = [x for x in lines if "complete" in x]
    walked = [x for x in lines if "accepted" in x]
    assert len(walked) == len(walks), (text, lines[-3:])
    totals["grammars"] += 1
    totals["valid"] += sum(verdicts.values())
    totals["invalid"] += sum(not v for v in verdicts.values())
    totals["generated"] += len(gens)
    totals["complete"] += sum(g["complete"] for g in gens)
    for w in walked:
        s = walks[w["i"]]
        if w["accepted"] != verdicts[s]:
            bad.append({"grammar": text, "text": s, "oracle": verdicts[s], "engine": w})
    for g in gens:
        if g.get("dead_end") or (g["complete"] and judge(g["text"]) is False):
            bad.append({"grammar": text, "generated": g})


def test_random_gbnf_grammars_match_lark(cli: str, tmp_path: pathlib.Path) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_GRAMMAR_FUZZ_SEED", "3")))
    cases = int(os.environ.get("NEXTOK_GRAMMAR_FUZZ_CASES", "20"))
    bad: list[dict] = []
    totals = {"grammars": 0, "valid": 0, "invalid": 0, "generated": 0, "complete": 0}
    for k in range(cases):
        text = Generator(rng, rng.randint(1, 4)).grammar()
        path = tmp_path / f"g{k}.gbnf"
        path.write_text(text, encoding="utf-8")
        try:
            lark = recogniser(text)
        except GrammarError:  # lark refuses alternatives its expansion makes twice
            continue
        sampler = Sampler(Gbnf.parse(text), seed=k)
        valid = sorted({s for s in (sampler.sample() for _ in range(12)) if len(s) <= 60})
        compare(cli, path, text, valid, lambda t: verdict(lark, t), rng, k, totals, bad)
    print(json.dumps(totals))
    assert totals["valid"] > 5 * cases and totals["invalid"] > 2 * cases
    assert not bad, json.dumps(bad[:3], ensure_ascii=False, indent=1)
