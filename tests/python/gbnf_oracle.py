"""An independent reading of GBNF for the grammar engine's oracle tests.

Nothing here uses the engine's code: a small GBNF parser written from
llama.cpp's documented syntax, a translation to a `lark` grammar (character
classes become one-character regex terminals, repetitions become lark's
`*`, `+`, `?` and `~ m..n`) that lark's Earley parser recognises, and a
random-derivation generator that draws sentences of the grammar.

    python tests/python/gbnf_oracle.py --cli build/release/tools/nextok \\
        --tokenizer build/release/tokenizers/llama3.1 --count 10000 FILE.gbnf...

runs the soundness check (random-logit generations, each parsed by lark)
and the completeness check (sampled sentences walked token by token) and
prints one JSON line per grammar.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from lark import Lark
from lark.exceptions import LarkError

# --- GBNF -> AST -------------------------------------------------------------
# Nodes: ("alt", [seq]), ("seq", [node]), ("lit", str), ("cls", negated,
# [(lo, hi)]), ("any",), ("ref", name), ("rep", node, min, max|None).

ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]"}


class GbnfError(Exception):
    pass


@dataclass
class Gbnf:
    rules: dict[str, tuple]

    @staticmethod
    def parse(text: str) -> "Gbnf":
        p = _Parser(text)
        p.grammar()
        for name in p.refs:
            if name not in p.rules:
                raise GbnfError(f"undefined rule {name}")
        if "root" not in p.rules:
            raise GbnfError("no root")
        return Gbnf(p.rules)


class _Parser:
    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.rules: dict[str, tuple] = {}
        self.refs: set[str] = set()

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def ws(self, newlines: bool) -> None:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "#":
                while self.i < len(self.s) and self.s[self.i] not in "\r\n":
                    self.i += 1
            elif c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            else:
                break

    def name(self) -> str:
        j = self.i
        while self.peek() and (self.peek().isascii() and (self.peek().isalnum() or self.peek() == "-")):
            self.i += 1
        if j == self.i:
            raise GbnfError(f"name expected at {self.i}")
        return self.s[j : self.i]

    def grammar(self) -> None:
        self.ws(True)
        while self.i < len(self.s):
            n = self.name()
            self.ws(False)
            if self.s[self.i : self.i + 3] != "::=":
                raise GbnfError(f"::= expected at {self.i}")
            self.i += 3
            self.ws(True)
            self.rules[n] = self.alternates(False)
            if self.peek() in ("\r", "\n"):
                self.i += 1
            elif self.peek():
                raise GbnfError(f"newline expected at {self.i}")
            self.ws(True)

    def alternates(self, nested: bool) -> tuple:
        alts = [self.sequence(nested)]
        while self.peek() == "|":
            self.i += 1
            self.ws(True)
            alts.append(self.sequence(nested))
        return ("alt", alts)

    def char(self) -> str:
        c = self.peek()
        if c == "":
            raise GbnfError("unexpected end")
        if c == "\\":
            e = self.peek(1)
            self.i += 2
            if e in ESCAPES:
                return ESCAPES[e]
            width = {"x": 2, "u": 4, "U": 8}.get(e)
            if width is None:
                raise GbnfError(f"bad escape {e}")
            h = self.s[self.i : self.i + width]
            self.i += width
            return chr(int(h, 16))
        self.i += 1
        return c

    def sequence(self, nested: bool) -> tuple:
        items: list[tuple] = []
        while self.i < len(self.s):
            c = self.peek()
            if c == '"':
                self.i += 1
                lit = ""
                while self.peek() != '"':
                    lit += self.char()
                self.i += 1
                items.append(("lit", lit))
            elif c == "[":
                self.i += 1
                neg = self.peek() == "^"
                if neg:
                    self.i += 1
                ranges = []
                while self.peek() != "]":
                    lo = self.char()
                    hi = lo
                    if self.peek() == "-" and self.peek(1) != "]":
                        self.i += 1
                        hi = self.char()
                    ranges.append((ord(lo), ord(hi)))
                self.i += 1
                items.append(("cls", neg, ranges))
            elif c.isascii() and (c.isalnum() or c == "-"):
                n = self.name()
                self.refs.add(n)
                items.append(("ref", n))
            elif c == "(":
                self.i += 1
                self.ws(True)
                items.append(self.alternates(True))
                if self.peek() != ")":
                    raise GbnfError(f") expected at {self.i}")
                self.i += 1
            elif c == ".":
                self.i += 1
                items.append(("any",))
            elif c in "*+?":
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                items.append(("rep", items.pop(), lo, hi))
            elif c == "{":
                self.i += 1
                self.ws(nested)
                j = self.i
                while self.peek().isdigit():
                    self.i += 1
                lo = int(self.s[j : self.i])
                self.ws(nested)
                hi: int | None = lo
                if self.peek() == ",":
                    self.i += 1
                    self.ws(nested)
                    j = self.i
                    while self.peek().isdigit():
                        self.i += 1
                    hi = int(self.s[j : self.i]) if self.i > j else None
                    self.ws(nested)
                if self.peek() != "}":
                    raise GbnfError(f"}} expected at {self.i}")
                self.i += 1
                items.append(("rep", items.pop(), lo, hi))
            else:
                break
            self.ws(nested)
        return ("seq", items)


# --- AST -> lark ---------------------------------------------------------------


def _cls_char(c: int) -> str:
    # lark turns \U escapes into the characters before Python's re sees
    # them, so the class's own metacharacters need a backslash instead.
    ch = chr(c)
    return "\\" + ch if ch in "\\]^-[/" else f"\\U{c:08x}"


def _cls_regex(neg: bool, ranges: list[tuple[int, int]]) -> str:
    body = "".join(_cls_char(lo) + (f"-{_cls_char(hi)}" if hi != lo else "") for lo, hi in ranges)
    return f"/[{'^' if neg else ''}{body}]/s"


def to_lark(g: Gbnf) -> str:
    names = {n: f"r{k}" for k, n in enumerate(g.rules)}

    def expr(node: tuple) -> str:
        kind = node[0]
        if kind == "alt":
            return "(" + " | ".join(expr(s) for s in node[1]) + ")"
        if kind == "seq":
            return " ".join(expr(x) for x in node[1]) if node[1] else ""
        if kind == "lit":
            return json.dumps(node[1]) if node[1] else ""
        if kind == "cls":
            return _cls_regex(node[1], node[2]) if node[2] else ""
        if kind == "any":
            return "/./s"
        if kind == "ref":
            return names[node[1]]
        if kind == "rep":
            inner = expr(node[1])
            if not inner:
                return ""
            inner = f"({inner})"
            lo, hi = node[2], node[3]
            if hi is None:
                return f"{inner}*" if lo == 0 else (f"{inner}+" if lo == 1 else f"{inner} ~ {lo} {inner}*")
            if hi < lo:
                return f"{inner} ~ {lo}"
            if hi == 0:
                return ""
            return f"[{inner} ~ 1..{hi}]" if lo == 0 else f"{inner} ~ {lo}..{hi}"
        raise AssertionError(kind)

    lines = ["start: " + names["root"]]
    for n, body in g.rules.items():
        alts = body[1]
        lines.append(f"{names[n]}: " + " | ".join(expr(s) for s in alts))
    return "\n".join(lines) + "\n"


def recogniser(text: str) -> Lark:
    return Lark(to_lark(Gbnf.parse(text)), parser="earley", lexer="dynamic", start="start")


def accepts(parser: Lark, s: str) -> bool:
    try:
        parser.parse(s)
        return True
    except LarkError:
        return False


# --- random derivations ---------------------------------------------------------

POOL = [chr(c) for c in range(0x20, 0x7F)] + list("\t\né€中😀ぁァ、一ü")


class Sampler:
    """Draws sentences by random derivation; past `depth` it takes the
    cheapest way out, so every draw ends."""

    def __init__(self, g: Gbnf, seed: int, depth: int = 12):
        self.g = g
        self.rng = random.Random(seed)
        self.depth = depth
        self.cost: dict[str, float] = {n: float("inf") for n in g.rules}
        for _ in range(len(g.rules) + 2):
            for n, body in g.rules.items():
                self.cost[n] = min(self.cost[n], self._cost(body))

    def _cost(self, node: tuple) -> float:
        kind = node[0]
        if kind == "alt":
            return min(self._cost(s) for s in node[1])
        if kind == "seq":
            return sum(self._cost(x) for x in node[1]) + 0
        if kind == "lit":
            return len(node[1])
        if kind in ("cls", "any"):
            return 1
        if kind == "ref":
            return self.cost[node[1]] + 1
        if kind == "rep":
            return node[2] * self._cost(node[1])
        raise AssertionError(kind)

    def char(self, neg: bool, ranges: list[tuple[int, int]]) -> str:
        inside = lambda c: any(lo <= ord(c) <= hi for lo, hi in ranges)  # noqa: E731
        if not neg:
            for _ in range(50):
                lo, hi = self.rng.choice(ranges)
                if hi < lo:
                    continue
                c = self.rng.randint(lo, hi)
                if not 0xD800 <= c <= 0xDFFF:
                    return chr(c)
            raise ValueError("empty class")
        choices = [c for c in POOL if not inside(c)]
        return self.rng.choice(choices)

    def gen(self, node: tuple, d: int, out: list[str]) -> None:
        kind = node[0]
        if kind == "alt":
            alts = node[1]
            if d > self.depth:
                best = min(self._cost(s) for s in alts)
                alts = [s for s in alts if self._cost(s) == best]
            self.gen(self.rng.choice(alts), d, out)
        elif kind == "seq":
            for x in node[1]:
                self.gen(x, d, out)
        elif kind == "lit":
            out.append(node[1])
        elif kind == "cls":
            if node[2]:
                out.append(self.char(node[1], node[2]))
        elif kind == "any":
            out.append(self.rng.choice(POOL))
        elif kind == "ref":
            self.gen(self.g.rules[node[1]], d + 1, out)
        elif kind == "rep":
            lo, hi = node[2], node[3]
            if hi is not None and hi < lo:
                hi = lo
            top = lo if d > self.depth else (hi if hi is not None else lo + 3)
            n = self.rng.randint(lo, max(lo, min(top, lo + 4)))
            for _ in range(n):
                self.gen(node[1], d + 1, out)
        else:
            raise AssertionError(kind)

    def sample(self) -> str:
        out: list[str] = []
        self.gen(self.g.rules["root"], 0, out)
        return "".join(out)


# --- the engine through the CLI -------------------------------------------------


def engine_lines(cli: str, tokenizer: str, flags: list[str], timeout: float = 600) -> list[dict]:
    r = subprocess.run(
        [cli, "grammar-generate", "--tokenizer", tokenizer, *flags],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if r.returncode != 0:
        raise RuntimeError(f"grammar-generate failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    return [json.loads(line) for line in r.stdout.split("\n") if line.strip()]


def generate(cli: str, tokenizer: str, grammar_flags: list[str], count: int, seed: int,
             max_tokens: int = 48, close: str = "") -> list[dict]:
    flags = [*grammar_flags, "--count", str(count), "--seed", str(seed), "--max-tokens", str(max_tokens)]
    if close:
        flags += ["--close-bytes", close, "--close-p", "0.6"]
    return [x for x in engine_lines(cli, tokenizer, flags) if "i" in x]


def walk(cli: str, tokenizer: str, grammar_flags: list[str], texts: list[str]) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps(t) + "\n")
        path = f.name
    try:
        return [x for x in engine_lines(cli, tokenizer, [*grammar_flags, "--walk", path]) if "i" in x]
    finally:
        pathlib.Path(path).unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("grammars", nargs="+")
    a = ap.parse_args()
    bad = 0
    for path in a.grammars:
        text = pathlib.Path(path).read_text(encoding="utf-8")
        lark = recogniser(text)
        gens = generate(a.cli, a.tokenizer, ["--grammar", path], a.count, 1, close="\n\"})];")
        complete = [g for g in gens if g["complete"]]
        unsound = [g["text"] for g in complete if not accepts(lark, g["text"])]
        dead = sum(1 for g in gens if g.get("dead_end"))
        samp = Sampler(Gbnf.parse(text), 7)
        texts = [samp.sample() for _ in range(a.samples)]
        texts = [t for t in texts if accepts(lark, t)]
        walks = walk(a.cli, a.tokenizer, ["--grammar", path], texts)
        refused = [texts[w["i"]] for w in walks if not w["accepted"]]
        bad += len(unsound) + len(refused) + dead
        print(json.dumps({"grammar": pathlib.Path(path).name, "generations": len(gens),
                          "complete": len(complete), "unsound": len(unsound), "dead_ends": dead,
                          "sampled": len(texts), "refused": len(refused),
                          "examples": (unsound + refused)[:3]}, ensure_ascii=False))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
