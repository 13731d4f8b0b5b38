"""An independent sentence sampler for Lark grammars, for the oracle tests of
the engine's Lark front-end (test_lark_oracle.py).

The language of a Lark grammar is what lark's own Earley parser with
`lexer="dynamic_complete"` accepts from `start`. Nothing here uses the
engine's code: lark reads the grammar (`Lark(...).rules`, `.terminals`,
`.ignore_tokens`), and the sampler

  - derives random sentences from the compiled rules (bounded depth; past it,
    or past a length budget, it takes the cheapest expansions);
  - draws each terminal's string from its regex (`pattern.to_regexp()`, flags
    included) with a small sampler over Python's own regex parse tree
    (re._parser), checked with `re.fullmatch`;
  - puts ignored terminals into the gaps between terminals (and at the start
    and end) now and then.

lark's dynamic lexer does not try every split: at offset i a terminal is
matched with `re.match` on the rest of the text, and only that match and the
`re.match`es of its prefixes count (so a lazy `.*?` ends at its first chance
and `/a|ab/` never reads "ab"); an ignored terminal is matched once, greedily.
The sampler models exactly that on each sentence it builds (`lexes_at`,
`ignore_reaches`) and redraws a sentence lark's lexer would not read its way;
it never calls lark's parser, so the tests can check its output with lark.

    python tests/python/lark_oracle.py --samples 200 FILE.lark...

draws sentences from each grammar, checks each with lark and prints one JSON
line per grammar (a self-check; the engine is not involved).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import re
import sys
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

from lark import Lark
from lark.exceptions import LarkError

# Characters the class, `.` and negated-literal draws pick from: ASCII mostly,
# a few multi-byte ones (Latin, CJK, emoji, non-ASCII digits and spaces).
ASCII_POOL = [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n", "\r"]
WIDE_POOL = list("éüßñÅç中文日本ぁァ€😀٣१Ωλж") + ["\u00a0", "\u2003"]


def parser(text: str) -> Lark:
    """The recogniser that defines the language: Earley, dynamic_complete."""
    return Lark(text, start="start", parser="earley", lexer="dynamic_complete")


def accepts(p: Lark, s: str) -> bool:
    try:
        p.parse(s)
        return True
    except LarkError:
        return False


def lexes_at(rx: re.Pattern, text: str, i: int) -> set[int]:
    """The ends lark's dynamic_complete lexer gives terminal `rx` at offset i
    (lark/parsers/xearley.py: the match on the stream, then the matches of
    its prefixes)."""
    m = rx.match(text, i)
    if not m:
        return set()
    s = m.group(0)
    ends = {m.end()}
    for j in range(1, len(s)):
        mj = rx.match(s[:-j])
        if mj:
            ends.add(i + mj.end())
    return ends


def ignore_reaches(ignores: list[re.Pattern], text: str, start: int, end: int) -> bool:
    """Whether lark's ignore handling (one greedy match per ignored terminal
    and offset, chained) gets from `start` to exactly `end`."""
    seen, todo = {start}, [start]
    while todo:
        at = todo.pop()
        for rx in ignores:
            m = rx.match(text, at)
            if m and at < m.end() <= end and m.end() not in seen:
                seen.add(m.end())
                todo.append(m.end())
    return end in seen


class RegexSampler:
    """Random strings of a Python regex: walks re._parser's tree. Assertions
    and anchors are skipped while drawing; `draw` keeps only strings that
    `re.fullmatch` and that `re.match` reads whole (what lark's lexer needs)."""

    def __init__(self, rng: random.Random, wide_p: float = 0.1):
        self.rng = rng
        self.wide_p = wide_p

    def pool_char(self) -> str:
        return self.rng.choice(WIDE_POOL if self.rng.random() < self.wide_p else ASCII_POOL)

    def _case(self, ch: str, icase: bool) -> str:
        if icase and self.rng.random() < 0.5:
            return ch.swapcase() if len(ch.swapcase()) == 1 else ch
        return ch

    def _class_item(self, ch: str, items: list) -> bool:
        for op, av in items:
            if op is sre.LITERAL and ord(ch) == av:
                return True
            if op is sre.RANGE and av[0] <= ord(ch) <= av[1]:
                return True
            if op is sre.CATEGORY:
                rx = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D",
                      sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W",
                      sre.CATEGORY_SPACE: r"\s", sre.CATEGORY_NOT_SPACE: r"\S"}[av]
                if re.fullmatch(rx, ch):
                    return True
        return False

    def _in(self, items: list, icase: bool) -> str:
        neg = bool(items) and items[0][0] is sre.NEGATE
        body = items[1:] if neg else items
        if not neg and self.rng.random() < 0.8:
            op, av = self.rng.choice(body)
            if op is sre.LITERAL:
                return self._case(chr(av), icase)
            if op is sre.RANGE:
                return self._case(chr(self.rng.randint(av[0], av[1])), icase)
        for _ in range(200):
            ch = self.pool_char()
            if self._class_item(ch, body) != neg:
                return ch
        return self.pool_char()

    def _count(self, lo: int, hi: int) -> int:
        n = lo
        cap = hi if hi != sre.MAXREPEAT else lo + 8
        while n < cap and self.rng.random() < 0.6:
            n += 1
        return n

    def _gen(self, tree, flags: int, out: list[str]) -> None:
        icase = bool(flags & sre.SRE_FLAG_IGNORECASE)
        for op, av in tree:
            if op is sre.LITERAL:
                out.append(self._case(chr(av), icase))
            elif op is sre.NOT_LITERAL:
                ch = self.pool_char()
                out.append(ch if ord(ch) != av else "x" if av != ord("x") else "y")
            elif op is sre.ANY:
                ch = self.pool_char()
                out.append(" " if ch == "\n" and not flags & sre.SRE_FLAG_DOTALL else ch)
            elif op is sre.IN:
                out.append(self._in(av, icase))
            elif op is sre.BRANCH:
                self._gen(self.rng.choice(av[1]), flags, out)
            elif op is sre.SUBPATTERN:
                _group, add, remove, sub = av
                self._gen(sub, (flags | add) & ~remove, out)
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
                lo, hi, sub = av
                for _ in range(self._count(lo, hi)):
                    self._gen(sub, flags, out)
            elif op is sre.ATOMIC_GROUP:
                self._gen(av, flags, out)
            elif op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
                pass  # checked by the full match below
            else:
                raise ValueError(f"regex construct {op} is not sampled")

    def draw(self, rx: re.Pattern, tries: int = 400) -> str:
        tree = sre_parse.parse(rx.pattern, rx.flags)
        for _ in range(tries):
            out: list[str] = []
            self._gen(tree, tree.state.flags, out)
            s = "".join(out)
            m = rx.match(s)
            if s and m and m.end() == len(s):
                return s
        raise ValueError(f"no string drawn for /{rx.pattern}/")


class LarkSampler:
    """Random sentences of a Lark grammar, read by lark itself."""

    def __init__(self, text: str, seed: int, depth: int = 8, budget: int = 60,
                 ignore_p: float = 0.3, wide_p: float = 0.1):
        self.lark = parser(text)
        self.rng = random.Random(seed)
        self.regex = RegexSampler(self.rng, wide_p)
        self.depth, self.budget, self.ignore_p = depth, budget, ignore_p
        self.rx = {t.name: re.compile(t.pattern.to_regexp()) for t in self.lark.terminals}
        self.ignores = list(self.lark.ignore_tokens)
        self.rules: dict[str, list[list]] = {}
        for r in self.lark.rules:
            self.rules.setdefault(r.origin.name, []).append(list(r.expansion))
        # The fewest terminals each rule can derive (a fixpoint).
        self.cost = {n: float("inf") for n in self.rules}
        changed = True
        while changed:
            changed = False
            for n, alts in self.rules.items():
                c = min(self._cost(a) for a in alts)
                if c < self.cost[n]:
                    self.cost[n], changed = c, True
        if self.cost.get("start", float("inf")) == float("inf"):
            raise ValueError("start derives no sentence")

    def _cost(self, expansion: list) -> float:
        return sum(1 if s.is_term else self.cost[s.name] + 1 for s in expansion)

    def _derive(self, name: str, d: int, out: list[tuple[str, str]]) -> None:
        alts = [a for a in self.rules[name] if self._cost(a) < float("inf")]
        length = sum(len(s) for _, s in out)
        if d >= self.depth or length >= self.budget or self.rng.random() < d / (2 * self.depth):
            best = min(self._cost(a) for a in alts)
            alts = [a for a in alts if self._cost(a) == best]
        for sym in self.rng.choice(alts):
            if sym.is_term:
                out.append((sym.name, self.regex.draw(self.rx[sym.name])))
            else:
                self._derive(sym.name, d + 1, out)

    def _ignored(self) -> list[tuple[str, str]]:
        if not self.ignores or self.rng.random() >= self.ignore_p:
            return []
        names = [self.rng.choice(self.ignores) for _ in range(self.rng.choice([1, 1, 1, 2]))]
        return [("%ignore", self.regex.draw(self.rx[n])) for n in names]

    def _lark_reads(self, pieces: list[list[tuple[str, str]]]) -> bool:
        """Whether lark's lexer reads the sentence the way it was derived:
        `pieces` alternates ignore runs and terminals, runs first and last."""
        text = "".join(s for piece in pieces for _, s in piece)
        ignores = [self.rx[n] for n in self.ignores]
        at = 0
        for k, piece in enumerate(pieces):
            n = sum(len(s) for _, s in piece)
            if k % 2 == 0:
                if n and not ignore_reaches(ignores, text, at, at + n):
                    return False
            elif at + n not in lexes_at(self.rx[piece[0][0]], text, at):
                return False
            at += n
        return True

    def sample(self, tries: int = 100) -> str:
        for _ in range(tries):
            toks: list[tuple[str, str]] = []
            self._derive("start", 0, toks)
            pieces: list[list[tuple[str, str]]] = [self._ignored()]
            for t in toks:
                pieces += [[t], self._ignored()]
            # An ignore run that lark's greedy matches would overrun is dropped.
            ignores = [self.rx[n] for n in self.ignores]
            for k in range(0, len(pieces), 2):
                if pieces[k]:
                    text = "".join(s for piece in pieces for _, s in piece)
                    at = sum(len(s) for piece in pieces[:k] for _, s in piece)
                    n = sum(len(s) for _, s in pieces[k])
                    if not ignore_reaches(ignores, text, at, at + n):
                        pieces[k] = []
            if self._lark_reads(pieces):
                return "".join(s for piece in pieces for _, s in piece)
        raise ValueError("no sentence lark's lexer reads as derived")


def mutants(text: str, rng: random.Random, count: int) -> list[str]:
    """Small edits of a sentence: a character deleted, doubled, inserted,
    replaced, or two swapped (lark decides which are still sentences)."""
    out = []
    for _ in range(count):
        s = list(text)
        k = rng.randrange(len(s) + 1)
        op = rng.choice(["del", "dup", "ins", "rep", "swap"])
        if op == "del" and k < len(s):
            del s[k]
        elif op == "dup" and k < len(s):
            s.insert(k, s[k])
        elif op == "swap" and k + 1 < len(s):
            s[k], s[k + 1] = s[k + 1], s[k]
        elif op == "rep" and k < len(s):
            s[k] = rng.choice(ASCII_POOL)
        else:
            s.insert(k, rng.choice(ASCII_POOL + list(text or "x")))
        m = "".join(s)
        if m != text:
            out.append(m)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("grammars", nargs="+")
    a = ap.parse_args()
    bad = 0
    for path in a.grammars:
        text = pathlib.Path(path).read_text(encoding="utf-8")
        sampler = LarkSampler(text, a.seed)
        texts = [sampler.sample() for _ in range(a.samples)]
        refused = [t for t in texts if not accepts(sampler.lark, t)]
        rng = random.Random(a.seed)
        edits = [m for t in texts[:50] for m in mutants(t, rng, 2)]
        still = sum(accepts(sampler.lark, m) for m in edits)
        bad += bool(refused)
        print(json.dumps({"grammar": path, "samples": len(texts), "refused_by_lark": refused[:3],
                          "mean_len": sum(map(len, texts)) / len(texts),
                          "with_ignored": sum(t != t.strip() for t in texts),
                          "mutants": len(edits), "mutants_still_sentences": still,
                          "examples": texts[:3]}, ensure_ascii=False))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
