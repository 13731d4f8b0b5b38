"""The regex front-end (`--regex`, ECMA-262 without flags, full match) on
patterns nobody wrote: random patterns over literals (raw and escaped,
`\\xHH`, `\\uHHHH`, control escapes), classes (ranges, negation, `\\d \\w \\s`
and their complements inside and out, escaped members), `.`, capturing,
non-capturing and named groups, alternation with empty branches, every
quantifier greedy and lazy (`{n}`, `{n,}`, `{n,m}`), `^`/`$` where they
stand, Annex B's literal braces (`a{,5}`, `x{`), and now and then a syntax
error (`a**`, `[z-a]`, an unclosed group). Every verdict comes from
regress (the ECMA-262 engine of Rust's `regress` crate), on
`^(?:pattern)$`:
  - a pattern regress refuses must be refused with an error;
  - exactness: strings drawn from the pattern by this file's own sampler,
    and small edits of them, are accepted token by token (EOS at the end)
    exactly when regress matches them;
  - soundness: random-logit generations that end with EOS match, and no walk
    dead-ends.
Strings stay in the Basic Multilingual Plane (ECMA-262 without `u` reads
UTF-16 code units). Llama-3.1 vocabulary. Fixed seed; NEXTOK_REGEX_FUZZ_SEED
and NEXTOK_REGEX_FUZZ_CASES widen the run."""

from __future__ import annotations

import json
import multiprocessing
import os
import pathlib
import random
import subprocess
import tempfile
from dataclasses import dataclass, field

import regress
from lark_oracle import mutants

TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", "build/release/tokenizers"))

# ECMA-262's WhiteSpace and LineTerminator (what \s matches).
SPACES = set("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)
}
WORD = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
DIGITS = set("0123456789")
LINE_ENDS = set("\n\r\u2028\u2029")
# Characters that strings and classes draw from: letters, digits, every
# syntax character, the spaces and line ends that tell ECMA-262 from other
# flavours, and non-ASCII letters of two and three UTF-8 bytes.
POOL = list("abcxyzABZ019 -_.,:;/\\\"'[](){}|*+?^$\t\n\r") + [
    "\u00a0",
    "\u2028",
    "\ufeff",
    "é",
    "ß",
    "中",
    "Ω",
]
SYNTAX = set("^$\\.*+?()[]{}|/")
SHORTHAND = {"d": DIGITS, "w": WORD, "s": SPACES}


@dataclass
class Node:
    kind: str  # lit, class, dot, seq, alt, group, rep, bol, eol
    text: str = ""  # how the node is written (lit, class)
    chars: str = ""  # lit: the character it matches
    members: set[str] = field(default_factory=set)  # class: members among POOL
    negated: bool = False
    items: list[Node] = field(default_factory=list)
    low: int = 0
    high: int | None = None

    def render(self) -> str:
        if self.kind in ("lit", "class", "dot", "bol", "eol"):
            return self.text
        if self.kind == "seq":
            return "".join(n.render() for n in self.items)
        if self.kind == "alt":
            return "|".join(n.render() for n in self.items)
        if self.kind == "group":
            return self.text + self.items[0].render() + ")"
        assert self.kind == "rep"
        return self.items[0].render() + self.text

    def sample(self, rng: random.Random) -> str:
        if self.kind == "lit":
            return self.chars
        if self.kind in ("class", "dot"):
            pick = [c for c in POOL if (c in self.members) != self.negated]
            return rng.choice(pick) if pick else ""
        if self.kind in ("bol", "eol"):
            return ""
        if self.kind == "seq":
            return "".join(n.sample(rng) for n in self.items)
        if self.kind == "alt":
            return rng.choice(self.items).sample(rng)
        if self.kind == "group":
            return self.items[0].sample(rng)
        high = self.low + 3 if self.high is None else min(self.high, self.low + 3)
        return "".join(self.items[0].sample(rng) for _ in range(rng.randint(self.low, high)))


class Generator:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.groups = 0

    def char(self) -> tuple[str, str]:
        """(written, matched) for one literal character outside a class."""
        r = self.rng.random()
        c = self.rng.choice([p for p in POOL if p not in "\n\r\t"])
        if r < 0.08:
            c = self.rng.choice("abc-.[")
            return f"\\x{ord(c):02x}", c
        if r < 0.14:
            c = self.rng.choice(["é", "中", "a", "-", "\u00a0"])
            return f"\\u{ord(c):04x}", c
        if r < 0.2:
            e = self.rng.choice(["n", "t", "r", "f", "v", "0"])
            return "\\" + e, {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}[e]
        if c in SYNTAX:
            return "\\" + c, c
        return c, c

    def literal(self) -> Node:
        written, matched = self.char()
        return Node("lit", text=written, chars=matched)

    def klass(self) -> Node:
        negated = self.rng.random() < 0.3
        parts: list[str] = []
        members: set[str] = set()
        for _ in range(self.rng.randint(1, 4)):
            r = self.rng.random()
            if r < 0.25:
                letter = self.rng.choice("dwsDWS")
                parts.append("\\" + letter)
                base = SHORTHAND[letter.lower()]
                members |= base if letter.islower() else {c for c in POOL if c not in base}
            elif r < 0.5:
                lo, hi = self.rng.choice(
                    [
                        ("a", "c"),
                        ("0", "9"),
                        ("x", "z"),
                        ("A", "Z"),
                        ("\u00e0", "\u00ff"),
                        ("\u4e00", "\u9fff"),
                        (" ", "/"),
                    ]
                )
                parts.append(self.member(lo) + "-" + self.member(hi))
                members |= {c for c in POOL if lo <= c <= hi}
            else:
                c = self.rng.choice(POOL)
                parts.append(self.member(c))
                members.add(c)
        if self.rng.random() < 0.1:  # a `-` first or last is a member
            parts.insert(0 if self.rng.random() < 0.5 else len(parts), "-")
            members.add("-")
        text = "[" + ("^" if negated else "") + "".join(parts) + "]"
        return Node("class", text=text, members=members, negated=negated)

    def member(self, c: str) -> str:
        if c in "\\]^-[":
            return "\\" + c
        if c == "\n":
            return "\\n"
        if c == "\t":
            return "\\t" if self.rng.random() < 0.5 else c
        if c == "\r":
            return "\\r"
        return c

    def atom(self, depth: int) -> Node:
        r = self.rng.random()
        if r < 0.4 or depth <= 0:
            return self.literal()
        if r < 0.6:
            return self.klass()
        if r < 0.67:
            return Node("dot", text=".", members=set(POOL) - LINE_ENDS)
        if r < 0.75:
            letter = self.rng.choice("dwsDWS")
            base = SHORTHAND[letter.lower()]
            return Node("class", text="\\" + letter, members=base, negated=letter.isupper())
        opener = self.rng.choice(["(", "(?:", "(?<g%d>"])
        if "%d" in opener:
            self.groups += 1
            opener = opener % self.groups
        return Node("group", text=opener, items=[self.alternation(depth - 1)])

    def quantified(self, depth: int) -> Node:
        atom = self.atom(depth)
        r = self.rng.random()
        if r < 0.55:
            return atom
        forms = [("*", 0, None), ("+", 1, None), ("?", 0, 1)]
        n = self.rng.randint(0, 3)
        m = n + self.rng.randint(0, 4)
        forms += [(f"{{{n}}}", n, n), (f"{{{n},}}", n, None), (f"{{{n},{m}}}", n, m)]
        text, low, high = self.rng.choice(forms)
        if self.rng.random() < 0.2:
            text += "?"  # lazy: the same language under a full match
        return Node("rep", text=text, low=low, high=high, items=[atom])

    def sequence(self, depth: int) -> Node:
        items = [self.quantified(depth) for _ in range(self.rng.randint(0, 4))]
        if self.rng.random() < 0.06:  # Annex B: braces that are no quantifier are literals
            brace = self.rng.choice(["{", "}", "{,5}", "{a}", "x{"])
            items += [Node("lit", text=brace, chars=brace)]
        if self.rng.random() < 0.03:  # mostly syntax errors, which must be refused
            bad = self.rng.choice(["a+*", "(", ")", "[z-a]", "a{3,1}", "\\", "?", "a**", "[\\d-z]"])
            items += [Node("lit", text=bad, chars="")]
        return Node("seq", items=items)

    def alternation(self, depth: int) -> Node:
        branches = [
            self.sequence(depth)
            for _ in range(1 if self.rng.random() < 0.6 else self.rng.randint(2, 3))
        ]
        return branches[0] if len(branches) == 1 else Node("alt", items=branches)

    def pattern(self) -> Node:
        top = self.alternation(self.rng.randint(1, 3))
        branches = top.items if top.kind == "alt" else [top]
        for b in branches:  # anchors where they stand: at a branch's ends
            if b.kind == "seq" and self.rng.random() < 0.15:
                b.items.insert(0, Node("bol", text="^"))
            if b.kind == "seq" and self.rng.random() < 0.15:
                b.items.append(Node("eol", text="$"))
        return top


def matches(pattern: str, texts: list[str]) -> list[bool] | None:
    """regress's verdicts on texts, or None where it refuses the pattern."""
    try:
        check = regress.Regex(f"^(?:{pattern})$")
    except Exception:  # noqa: BLE001 - regress refuses the pattern
        return None
    return [check.find(t) is not None for t in texts]


class OracleSlow(Exception):
    pass


def oracle(pattern: str, texts: list[str]) -> list[bool] | None:
    """matches() in a child process: regress backtracks, exponentially on
    nested quantifiers, and cannot be interrupted from Python."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        job = pool.apply_async(matches, (pattern, texts))
        try:
            return job.get(timeout=10)
        except multiprocessing.TimeoutError:
            pool.terminate()
            raise OracleSlow from None


def engine(cli: str, pattern: str, walks: list[str], seed: int) -> tuple[int, list[dict]]:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for t in walks:
            f.write(json.dumps(t) + "\n")
        path = f.name
    try:
        r = subprocess.run(
            [
                cli,
                "grammar-generate",
                "--tokenizer",
                str(TOKENIZERS / "llama3.1"),
                "--regex",
                pattern,
                "--walk",
                path,
                "--count",
                "6",
                "--seed",
                str(seed),
                "--max-tokens",
                "30",
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = [json.loads(line) for line in r.stdout.split("\n") if line.strip()]
        assert r.returncode in (0, 1) and lines, (pattern, r.stdout[-2000:], r.stderr[-2000:])
        return r.returncode, lines
    finally:
        pathlib.Path(path).unlink()


def test_random_regexes_match_regress(cli: str) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_REGEX_FUZZ_SEED", "13")))
    cases = int(os.environ.get("NEXTOK_REGEX_FUZZ_CASES", "40"))
    totals = dict.fromkeys(
        [
            "patterns",
            "refused_by_regress",
            "slow_for_regress",
            "valid",
            "invalid",
            "generated",
            "complete",
        ],
        0,
    )
    bad: list[dict] = []
    for k in range(cases):
        tree = Generator(rng).pattern()
        pattern = tree.render()
        samples = sorted({tree.sample(rng) for _ in range(10)})
        texts = sorted(set(samples) | {m for s in samples for m in mutants(s, rng, 3)})
        rc, lines = engine(cli, pattern, texts, k)
        gens = [x for x in lines if "complete" in x]
        try:
            found = oracle(pattern, texts + [g["text"] for g in gens])
        except OracleSlow:
            totals["slow_for_regress"] += 1
            continue
        if found is None:
            totals["refused_by_regress"] += 1
            if rc == 0:
                bad.append({"pattern": pattern, "engine": "compiled what regress refuses"})
            continue
        verdicts = dict(zip(texts, found))
        if rc != 0:
            # The one refusal allowed: a pattern that matches nothing.
            if "matches no string" not in lines[0].get("error", "") or any(verdicts.values()):
                bad.append({"pattern": pattern, "engine": lines[0]})
            continue
        totals["patterns"] += 1
        totals["valid"] += sum(verdicts.values())
        totals["invalid"] += sum(not v for v in verdicts.values())
        for w in (x for x in lines if "accepted" in x):
            t = texts[w["i"]]
            if w["accepted"] != verdicts[t]:
                bad.append({"pattern": pattern, "text": t, "oracle": verdicts[t], "engine": w})
        for g, match in zip(gens, found[len(texts) :]):
            totals["generated"] += 1
            totals["complete"] += g["complete"]
            if g.get("dead_end") or (g["complete"] and not match):
                bad.append({"pattern": pattern, "generated": g})
    print(json.dumps(totals))
    assert totals["patterns"] >= cases // 2 and totals["slow_for_regress"] <= cases // 10
    assert totals["valid"] > 3 * cases and totals["invalid"] > 3 * cases
    assert not bad, json.dumps(bad[:4], ensure_ascii=False, indent=1)
