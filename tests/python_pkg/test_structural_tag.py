"""Grammar.structural_tag against XGrammar itself, the engine whose JSON
format it reads: random structural tags (const strings, JSON schemas in
JSON or an XML parameter style, with any_order or a whitespace bound,
regexes, GBNF grammars, free text with excludes, sequences, alternatives,
optional / plus / star / repeat, tags with one or several ends, triggered
tags and tags with a separator under every at_least_one /
stop_after_first setting, dispatch with or without loop, nested), and
the older {"structures", "triggers"} shape. Each is compiled by both over
one vocabulary of single characters; strings drawn from the format by this
file's own sampler, and small edits of them, must be accepted by nextok
(token by token, then EOS) exactly when XGrammar's matcher accepts them and
can end. Fixed seed; NEXTOK_STAG_SEED and NEXTOK_STAG_CASES widen the run.
NEXTOK_REQUIRE_ENGINES=1 makes a missing xgrammar a failure."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from typing import Any

import nextok
import pytest
from conftest import require_module

ENV = "NEXTOK_REQUIRE_ENGINES"
TRIGGERS = ["<f=", "<g"]
BEGINS = ["<f=a>", "<f=b>", "<g>", "<gx>"]
ENDS = ["</f>", "</g>", ">>", ""]
WORDS = ["a", "ab", "x,y", "{", ":", "é", ""]
# Schemas with the instances the sampler writes (compact, schema order).
SCHEMAS: list[tuple[dict, list[Any]]] = [
    ({"type": "integer"}, [0, 7, -3, 120]),
    ({"type": "boolean"}, [True, False]),
    ({"enum": ["a", "b x"]}, ["a", "b x"]),
    (
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 2}},
            "required": ["a"],
            "additionalProperties": False,
        },
        [{"a": 1}, {"a": 10, "b": "xy"}, {"a": 0, "b": ""}],
    ),
    ({"type": "array", "items": {"type": "integer"}, "maxItems": 2}, [[], [1], [1, 22]]),
    (
        {
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "o": {"type": "array", "items": {"type": "integer"}},
            },
            "required": ["s"],
            "additionalProperties": False,
        },
        [{"s": "ab"}, {"s": "a b", "o": [1]}, {"s": ""}],
    ),
    # No additionalProperties: XGrammar's strict mode closes the object.
    (
        {
            "type": "object",
            "properties": {"c": {"type": "string"}, "u": {"enum": ["x", "y"]}},
            "required": ["c"],
        },
        [{"c": "ab", "u": "y"}, {"c": ""}],
    ),
]
# XGrammar's XML parameter styles: (before the name, after it, before the
# value, after it, after the name when the value is not a string: styles that
# mark strings apart). A value is raw at the top (a string as its
# characters), JSON inside.
DSML = "\uff5cDSML\uff5c"
STYLES = {
    "qwen_xml": ("<parameter=", ">", "", "</parameter>", ""),
    "minimax_xml": ('<parameter name="', '">', "", "</parameter>", ""),
    "glm_xml": ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", ""),
    "deepseek_xml": (
        f'<{DSML}parameter name="',
        '" string="true">',
        "",
        f"</{DSML}parameter>",
        '" string="false">',
    ),
    "deepseek_v4_1_xml": (
        f'<{DSML} parameter name="',
        '" string="true">',
        "",
        f"</{DSML} parameter>",
        '" string="false">',
    ),
}
DISPATCH = ["<f=", "<g"]
# GBNF grammars (the `grammar` format) with strings each derives.
GRAMMARS: list[tuple[str, list[str]]] = [
    ('root ::= "yes" | "no"', ["yes", "no"]),
    ('root ::= [a-b]+ ("," [a-b]+)*', ["a", "ab,b"]),
    ('root ::= x x\nx ::= "0" | "1" x', ["00", "010", "1100"]),
    ("root ::= [^<>]{0,3}", ["", "é", "a b"]),
]

# Patterns (XGrammar's reading: \d \w \s ASCII, '.' any character, a
# '^' first and a '$' last ignored) with strings each matches.
REGEXES: list[tuple[str, list[str]]] = [
    (r"\d+", ["0", "12"]),
    (r"[a-x]{1,2}", ["a", "bx"]),
    (r"(ab|x)*", ["", "ab", "xab"]),
    (r"\w+", ["ab", "x_0"]),
    (r"a.b", ["a b", "a\nb", "aéb"]),
    (r"[^,:]+", ["ab", "é"]),
    (r"^x,y$", ["x,y"]),
    (r"[\w-]+", ["a-b", "_"]),
    (r"\s?\d", ["0", " 0", "\n0"]),
    (r"a/b|\/", ["a/b", "/"]),
    (r"(?:y|é){2}", ["yé", "éé"]),
]

# The vocabulary: one token per character that any tag, word, instance or
# edit can hold, then EOS.
CHARS = sorted(
    set("".join(TRIGGERS + BEGINS + ENDS + WORDS + DISPATCH) + 'abxy 0é,:{}[]"-\n_/')
    | {c for parts in STYLES.values() for p in parts for c in p}
    | {c for _, ms in REGEXES + GRAMMARS for m in ms for c in m}
    | {c for _, insts in SCHEMAS for i in insts for c in json.dumps(i, ensure_ascii=False)}
)
EOS = len(CHARS)


class Gen:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def tag(self, depth: int) -> dict:
        r = self.rng
        end: Any = r.choice(ENDS)
        if r.random() < 0.2:
            end = r.sample([e for e in ENDS if e], 2)
        content = self.fmt(depth - 1, in_tag=True)
        return {"type": "tag", "begin": r.choice(BEGINS), "content": content, "end": end}

    def fmt(self, depth: int, in_tag: bool = False, alone: bool = True) -> dict:
        """alone=False: an element of a sequence or repetition. Triggered
        tags are not drawn there: where two free texts meet inside a tag
        (two triggered tags in a row, or one repeated), XGrammar's verdicts
        depend on where one text ends and a trigger or the tag's end falls
        (docs/constraint-engine.md); nextok reads the concatenation."""
        r = self.rng
        leaves = ["const_string", "json_schema", "json_schema", "regex", "grammar"]
        if in_tag:
            leaves.append("any_text")
        kinds = (
            leaves
            if depth <= 0
            else leaves
            + [
                "sequence",
                "or",
                "optional",
                "plus",
                "star",
                "repeat",
                "tag",
                "triggered_tags",
                "tags_with_separator",
                "dispatch",
            ]
        )
        if not alone:
            kinds = [k for k in kinds if k not in ("triggered_tags", "dispatch")]
        k = r.choice(kinds)
        if k == "const_string":
            return {"type": k, "value": r.choice(WORDS[:-1])}
        if k == "json_schema":
            f = {"type": k, "json_schema": r.choice(SCHEMAS)[0]}
            x = r.random()
            if x < 0.3:
                f["style"] = r.choice(sorted(STYLES))
            elif x < 0.4:
                f["any_order"] = True
            elif x < 0.5:
                f["max_whitespace_cnt"] = r.randint(1, 2)
            return f
        if k == "dispatch":
            rules = [
                [p, self.fmt(depth - 1, alone=False)] for p in r.sample(DISPATCH, r.randint(1, 2))
            ]
            f = {"type": k, "rules": rules}
            if r.random() < 0.4:
                f["loop"] = r.random() < 0.5
            if r.random() < 0.2:
                f["excludes"] = ["xy"]
            return f
        if k == "regex":
            return {"type": k, "pattern": r.choice(REGEXES)[0]}
        if k == "grammar":
            return {"type": k, "grammar": r.choice(GRAMMARS)[0]}
        if k == "any_text":
            f: dict = {"type": k}
            if r.random() < 0.3:
                f["excludes"] = [r.choice(["x", "ab", "0"])]
            return f
        if k in ("sequence", "or"):
            n = r.randint(1, 3)
            return {"type": k, "elements": [self.fmt(depth - 1, alone=k == "or") for _ in range(n)]}
        if k in ("optional", "plus", "star"):
            return {"type": k, "content": self.fmt(depth - 1, alone=k == "optional")}
        if k == "repeat":
            lo = r.randint(0, 2)
            return {
                "type": k,
                "min": lo,
                "max": r.choice([lo, lo + 1, lo + 2, -1]),
                "content": self.fmt(depth - 1, alone=False),
            }
        if k == "tag":
            return self.tag(depth)
        tags = [self.tag(depth) for _ in range(r.randint(1, 3))]
        f = {
            "type": k,
            "tags": tags,
            "at_least_one": r.random() < 0.3,
            "stop_after_first": r.random() < 0.3,
        }
        if k == "triggered_tags":
            f["triggers"] = sorted({t for t in TRIGGERS for g in tags if g["begin"].startswith(t)})
            if r.random() < 0.2:
                f["excludes"] = ["xy"]
        else:
            f["separator"] = r.choice([",", "\n", ", "])
        return f


class Sampler:
    """Strings of a format, drawn from its own reading of XGrammar's docs."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def text(self, banned: list[str]) -> str:
        for _ in range(10):
            s = "".join(self.rng.choice("abxy 0é") for _ in range(self.rng.randint(0, 4)))
            if not any(b and b in s for b in banned):
                return s
        return ""

    def tag(self, f: dict) -> str:
        ends = f["end"] if isinstance(f["end"], list) else [f["end"]]
        end = self.rng.choice(ends)
        c = f["content"]
        inner = (
            self.text(ends + c.get("excludes", [])) if c["type"] == "any_text" else self.sample(c)
        )
        return f["begin"] + inner + end

    def sample(self, f: dict) -> str:
        r, k = self.rng, f["type"]
        if k == "const_string":
            return f["value"]
        if k == "json_schema":
            inst = r.choice(next(i for s, i in SCHEMAS if s == f["json_schema"]))
            if f.get("style", "json") != "json":
                return self.xml(inst, STYLES[f["style"]])
            if f.get("any_order") and isinstance(inst, dict):
                inst = dict(r.sample(sorted(inst.items()), len(inst)))
            return json.dumps(inst, separators=(",", ":"), ensure_ascii=False)
        if k == "dispatch":
            banned = [p for p, _ in f["rules"]] + f.get("excludes", [])
            loop = f.get("loop", True)
            out = self.text(banned)
            for _ in range(r.randint(0, 2 if loop else 1)):
                p, c = r.choice(f["rules"])
                out += p + self.sample(c) + (self.text(banned) if loop else "")
            return out
        if k == "regex":
            return r.choice(next(m for p, m in REGEXES if p == f["pattern"]))
        if k == "grammar":
            return r.choice(next(m for g, m in GRAMMARS if g == f["grammar"]))
        if k == "any_text":
            return self.text(f.get("excludes", []))
        if k == "sequence":
            return "".join(self.sample(e) for e in f["elements"])
        if k == "or":
            return self.sample(r.choice(f["elements"]))
        if k in ("optional", "plus", "star", "repeat"):
            lo, hi = {"optional": (0, 1), "plus": (1, 2), "star": (0, 2)}.get(k, (0, 0))
            if k == "repeat":
                lo = f["min"]
                hi = lo + 1 if f["max"] == -1 else min(f["max"], lo + 1)
            return "".join(self.sample(f["content"]) for _ in range(r.randint(lo, hi)))
        if k == "tag":
            return self.tag(f)
        n = r.randint(1 if f["at_least_one"] else 0, 1 if f["stop_after_first"] else 3)
        tags = [self.tag(r.choice(f["tags"])) for _ in range(n)]
        if k == "tags_with_separator":
            return f["separator"].join(tags)
        banned = f["triggers"] + f.get("excludes", [])
        out = "" if f["at_least_one"] else self.text(banned)
        for t in tags:
            out += t + ("" if f["stop_after_first"] else self.text(banned))
        return out

    def xml(self, inst: Any, style: tuple[str, str, str, str, str]) -> str:
        """The XML style's text: an object's properties as parameters, the
        values raw (strings unquoted), whitespace drawn around them."""

        def raw(v: Any) -> str:
            return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))

        def ws() -> str:
            return self.rng.choice(["", "", "\n", " "])

        if not isinstance(inst, dict):
            return raw(inst)
        before, after, value_open, close, after_other = style
        out = ""
        for k, v in inst.items():
            out += ws() + before + k
            if after_other and isinstance(v, str):
                out += after + v + close
                continue
            out += after_other or after
            if value_open:
                out += ws() + value_open
            out += ws() + raw(v) + ws() + close
        return out + ws()


def edits(s: str, rng: random.Random, chars: list[str]) -> list[str]:
    out = []
    for _ in range(3):
        t = list(s)
        k = rng.randrange(len(t) + 1)
        op = rng.choice(["del", "ins", "rep", "dup"])
        if op == "del" and k < len(t):
            del t[k]
        elif op == "rep" and k < len(t):
            t[k] = rng.choice(chars)
        elif op == "dup" and k < len(t):
            t.insert(k, t[k])
        else:
            t.insert(k, rng.choice(chars))
        out.append("".join(t))
    return out


@dataclass
class Engines:
    """Both engines over one vocabulary: a token per character, then EOS."""

    xgr: Any
    info: Any
    compiler: Any
    chars: list[str]


def make_engines(chars: list[str]) -> Engines:
    xgr = require_module("xgrammar", ENV)
    eos = len(chars)
    info = nextok.TokenizerInfo.from_token_bytes(
        [c.encode() for c in chars] + [b"</s>"],
        eos_ids=[eos],
        special_ids=[eos],
        vocab_size=eos + 1,
    )
    xinfo = xgr.TokenizerInfo(chars + ["</s>"], vocab_type=xgr.VocabType.RAW, stop_token_ids=[eos])
    return Engines(xgr, info, xgr.GrammarCompiler(xinfo, cache_enabled=False), chars)


@pytest.fixture(scope="module")
def engines() -> Engines:
    return make_engines(CHARS)


def nextok_accepts(g: nextok.Grammar, s: str, chars: list[str]) -> bool:
    m = nextok.Matcher(g)
    for c in s:
        try:
            m.accept_token(chars.index(c))
        except nextok.NextokError:
            return False
    return m.is_accepting()


def xgrammar_accepts(xgr: Any, compiled: Any, s: str) -> bool:
    m = xgr.GrammarMatcher(compiled)
    return m.accept_string(s) and m.is_completed()


def compare(e: Engines, tag: dict, rng: random.Random, totals: dict, bad: list) -> None:
    xgr, info, compiler = e.xgr, e.info, e.compiler
    text = json.dumps(tag)
    try:
        compiled = compiler.compile_structural_tag(text)
    except Exception:  # noqa: BLE001 - XGrammar refuses it (counted, drawn again)
        totals["refused_by_xgrammar"] += 1
        return
    g = nextok.Grammar.structural_tag(text, info)
    sampler = Sampler(rng)
    samples = sorted(  # sorted: the edits drawn after must not depend on hash order
        {sampler.sample(tag.get("format", tag)) for _ in range(8)}
        if "format" in tag
        else {sampler.sample(legacy_format(tag)) for _ in range(8)}
    )
    # XGrammar refuses -0 as a JSON integer; JSON Schema (and nextok) take
    # it: a documented difference, left out of the edits.
    texts = sorted(
        set(samples) | {x for s in samples for x in edits(s, rng, e.chars) if "-0" not in x}
    )
    totals["tags"] += 1
    for s in texts:
        want = xgrammar_accepts(xgr, compiled, s)
        totals["valid" if want else "invalid"] += 1
        if nextok_accepts(g, s, e.chars) != want:
            bad.append({"tag": tag, "text": s, "xgrammar": want})


def legacy_format(tag: dict) -> dict:
    return {
        "type": "triggered_tags",
        "triggers": tag["triggers"],
        "at_least_one": False,
        "stop_after_first": False,
        "tags": [
            {
                "type": "tag",
                "begin": s["begin"],
                "end": s["end"],
                "content": {"type": "json_schema", "json_schema": s["schema"]},
            }
            for s in tag["structures"]
        ],
    }


def test_random_structural_tags_match_xgrammar(engines: Engines) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_STAG_SEED", "5")))
    cases = int(os.environ.get("NEXTOK_STAG_CASES", "80"))
    totals = dict.fromkeys(["tags", "refused_by_xgrammar", "valid", "invalid"], 0)
    bad: list[dict] = []
    for _ in range(cases):
        tag = {"type": "structural_tag", "format": Gen(rng).fmt(rng.randint(1, 3))}
        compare(engines, tag, rng, totals, bad)
    for _ in range(cases // 8):
        structures = [
            {"begin": b, "end": rng.choice(ENDS[:2]), "schema": rng.choice(SCHEMAS)[0]}
            for b in rng.sample(BEGINS, rng.randint(1, 3))
        ]
        triggers = sorted({t for t in TRIGGERS for s in structures if s["begin"].startswith(t)})
        compare(
            engines,
            {"type": "structural_tag", "structures": structures, "triggers": triggers},
            rng,
            totals,
            bad,
        )
    print(json.dumps(totals))
    assert totals["tags"] >= cases // 2
    assert totals["valid"] > 2 * cases and totals["invalid"] > 2 * cases
    assert not bad, json.dumps(bad[:3], ensure_ascii=False, indent=1)


# XGrammar's own tool-call tags for the model families it ships
# (get_model_structural_tag): the independent generator of real tags.
MODELS = [
    "llama",
    "kimi",
    "deepseek_r1",
    "deepseek_v3_1",
    "deepseek_v3_2",
    "deepseek_v4",
    "deepseek_v4_1",
    "qwen_3",
    "qwen_3_5",
    "qwen_3_coder",
    "mimo",
    "harmony",
    "minimax",
    "glm_4_7",
    "exaone",
]
# Families whose argument markup depends on the value's declared type.
REFUSED_MODELS = {"cohere": "cohere_xml", "kimi_k3": "kimi_k3_xml", "minimax_m3": "minimax_m3_xml"}
CHOICES: list[Any] = ["auto", "required", {"type": "function", "function": {"name": "fb"}}, "none"]


def model_tag(xgr: Any, model: str, rng: random.Random, choice: Any = None) -> dict:
    tools = [
        {"type": "function", "function": {"name": name, "parameters": SCHEMAS[k][0]}}
        for name, k in (("fa", 3), ("fb", 5), ("fc", 6))
    ]
    tag = xgr.get_model_structural_tag(
        model,
        tools=tools,
        tool_choice=choice or rng.choice(CHOICES),
        reasoning=rng.choice(["enabled", "disabled", "auto"]),
        parallel_tool_calls=rng.random() < 0.5,
        any_order=rng.random() < 0.2,
        max_whitespace_cnt=rng.choice([None, None, 2]),
    )
    return json.loads(tag.model_dump_json())


def test_model_tool_call_tags_match_xgrammar() -> None:
    xgr = require_module("xgrammar", ENV)
    rng = random.Random(int(os.environ.get("NEXTOK_STAG_SEED", "5")))
    rounds = max(1, int(os.environ.get("NEXTOK_STAG_CASES", "80")) // 40)
    tags = [model_tag(xgr, m, rng) for _ in range(rounds) for m in MODELS]
    chars = sorted(set(CHARS) | {c for t in tags for c in json.dumps(t, ensure_ascii=False)})
    e = make_engines(chars)
    totals = dict.fromkeys(["tags", "refused_by_xgrammar", "valid", "invalid"], 0)
    bad: list[dict] = []
    for tag in tags:
        compare(e, tag, rng, totals, bad)
    print(json.dumps(totals))
    assert totals["tags"] == len(tags)
    assert totals["valid"] > 3 * len(tags) and totals["invalid"] > 3 * len(tags)
    assert not bad, json.dumps(bad[:3], ensure_ascii=False, indent=1)
    for model, style in REFUSED_MODELS.items():
        with pytest.raises(nextok.NextokError, match=style):
            nextok.Grammar.structural_tag(json.dumps(model_tag(xgr, model, rng, "auto")), e.info)


@pytest.mark.parametrize(
    "fmt, kind, where",
    [
        ({"type": "regex"}, nextok.NextokError, "format: needs 'pattern'"),
        ({"type": "regex", "pattern": "a("}, nextok.NextokError, "format.pattern"),
        ({"type": "grammar", "grammar": 'root ::= "a'}, nextok.NextokError, "format.grammar: 1:"),
        ({"type": "any_tokens"}, nextok.NextokError, "format"),
        (
            {"type": "tag", "begin": "<a>", "content": {"type": "const_string", "value": "x"}},
            nextok.NextokError,
            "format: needs 'end'",
        ),
        (
            {
                "type": "triggered_tags",
                "triggers": ["<z"],
                "tags": [
                    {
                        "type": "tag",
                        "begin": "<a>",
                        "end": "</a>",
                        "content": {"type": "const_string", "value": "x"},
                    }
                ],
            },
            nextok.NextokError,
            "no trigger is a prefix",
        ),
        (
            {"type": "json_schema", "json_schema": {"type": "integer"}, "style": "cohere_xml"},
            nextok.NextokError,
            "style",
        ),
        ({"type": "nonsense"}, nextok.NextokError, "unknown format"),
    ],
)
def test_unsupported_and_malformed_formats_are_clear_errors(
    engines: Engines, fmt: dict, kind: type, where: str
) -> None:
    info = engines.info
    with pytest.raises(kind) as e:
        nextok.Grammar.structural_tag(json.dumps({"type": "structural_tag", "format": fmt}), info)
    assert where in str(e.value) and e.value.param == "structural_tag"
