"""llguidance's Lark dialect against llguidance itself: random grammars that
use its extensions (`%llguidance {}`, `%json {schema}` as a rule,
`item{M,N}` / `{M,}` / `{,N}` / `{N}` repetitions, `-` in names, the
`capture` lexeme option), each compiled by llguidance (LLMatcher, Llama-3.1
vocabulary), which decides every verdict.
  - completeness: texts drawn from the grammar (JSON values written in the
    schema's property order, short whitespace runs) are accepted token by
    token, EOS at the end;
  - exactness: small edits of them are accepted exactly when llguidance
    accepts them;
  - soundness: random-logit generations that end with EOS are accepted by
    llguidance, and their JSON values validate with `jsonschema`.
Documented differences are kept out of the draws (docs/constraint-engine.md,
"Lark"): whitespace runs inside a %json value are bounded (20 bytes), and an
integer may be written with a zero fraction ("3.0", an integer in JSON
Schema). Fixed seed; NEXTOK_LLG_FUZZ_SEED and NEXTOK_LLG_FUZZ_CASES widen the
run."""

from __future__ import annotations

import json
import os
import pathlib
import random
import re

import jsonschema
import llguidance
import pytest
from test_grammar_fuzz import TOKENIZERS, compare, run
from tokenizers import Tokenizer

EOS = [128001, 128008, 128009]
WORDS = ["a", "b", "city", "n", "x-y", "é", "k2"]


class Oracle:
    def __init__(self) -> None:
        path = TOKENIZERS / "llama3.1" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(path))
        self.tok = llguidance.LLTokenizer(
            path.read_text(encoding="utf-8"),
            n_vocab=self.tokenizer.get_vocab_size(True),
            eos_token=EOS,
        )

    def matcher(self, grammar: str) -> object:
        m = llguidance.LLMatcher(
            self.tok, llguidance.LLMatcher.grammar_from_lark(grammar), log_level=0
        )
        assert not m.is_error(), m.get_error()
        return m

    def accepts(self, matcher: object, text: str) -> bool:
        m = matcher.deep_copy()
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        return m.try_consume_tokens(ids) == len(ids) and not m.is_error() and m.is_accepting()


class Schemas:
    """Random schemas of what %json writes as rules, and values of them in
    the schema's property order."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def schema(self, depth: int = 0) -> dict:
        r = self.rng
        kinds = ["string", "integer", "number", "boolean", "null", "enum", "len"]
        if depth < 2:
            kinds += ["object", "object", "array", "anyOf"]
        k = r.choice(kinds)
        if k == "enum":
            return {"enum": r.sample(["red", "green", "x y", "é"], r.randint(1, 3))}
        if k == "len":
            lo = r.randint(0, 3)
            return {"type": "string", "minLength": lo, "maxLength": lo + r.randint(0, 3)}
        if k == "integer" and r.random() < 0.5:
            lo = r.randint(-20, 20)
            return {"type": "integer", "minimum": lo, "maximum": lo + r.randint(0, 150)}
        if k == "object":
            names = r.sample(WORDS, r.randint(1, 4))
            s: dict = {"type": "object", "properties": {n: self.schema(depth + 1) for n in names}}
            s["required"] = [n for n in names if r.random() < 0.5]
            s["additionalProperties"] = r.random() < 0.3
            return s
        if k == "array":
            lo = r.randint(0, 2)
            s = {"type": "array", "items": self.schema(depth + 1), "minItems": lo}
            if r.random() < 0.6:
                s["maxItems"] = lo + r.randint(0, 3)
            return s
        if k == "anyOf":
            return {"anyOf": [self.schema(depth + 1) for _ in range(2)]}
        return {"type": k}

    def ws(self) -> str:
        return "".join(self.rng.choice(" \n\t") for _ in range(self.rng.choice([0, 0, 1, 2])))

    def value(self, s: dict) -> str:
        r = self.rng
        if "enum" in s:
            return json.dumps(r.choice(s["enum"]), ensure_ascii=False)
        if "anyOf" in s:
            return self.value(r.choice(s["anyOf"]))
        t = s["type"]
        if t == "string":
            n = r.randint(s.get("minLength", 0), s.get("maxLength", s.get("minLength", 0) + 4))
            return json.dumps("".join(r.choice('ab é"\\\n') for _ in range(n)), ensure_ascii=False)
        if t == "integer":
            return str(r.randint(s.get("minimum", -999), s.get("maximum", 999)))
        if t == "number":
            return r.choice(["0", "-1.5", "2e3", "31.25", "-0.5E-2"])
        if t == "boolean":
            return r.choice(["true", "false"])
        if t == "null":
            return "null"
        if t == "array":
            hi = s.get("maxItems", s["minItems"] + 3)
            items = [self.value(s["items"]) for _ in range(r.randint(s["minItems"], hi))]
            sep = self.ws() + "," + self.ws()
            return "[" + self.ws() + sep.join(items) + (self.ws() if items else "") + "]"
        members = []
        for n, sub in s["properties"].items():
            if n in s["required"] or r.random() < 0.6:
                members.append(
                    json.dumps(n, ensure_ascii=False)
                    + self.ws()
                    + ":"
                    + self.ws()
                    + self.value(sub)
                )
        if s.get("additionalProperties", True) and r.random() < 0.5:
            members.append('"zz":' + self.ws() + "[1, {}]")
        sep = self.ws() + "," + self.ws()
        return "{" + self.ws() + sep.join(members) + (self.ws() if members else "") + "}"


def grammar(rng: random.Random, schema: dict) -> tuple[str, re.Pattern]:
    """A Lark grammar around one %json rule, and a pattern that finds the
    JSON value in an output."""
    header = "%llguidance {}\n" if rng.random() < 0.5 else ""
    lo = rng.randint(0, 1)
    reps = rng.choice([f"{{{lo},{lo + 2}}}", f"{{{lo},}}", "{,2}", "{1}"])
    body = json.dumps(schema, indent=rng.choice([None, 2]), ensure_ascii=False)
    text = (
        f"{header}start: open-tag json-value close-tag\n"
        f'open-tag[capture]: "<v" "!"{reps} ">"\n'
        f"json-value: %json {body}\n"
        'close-tag: "</v>"\n'
    )
    return text, re.compile(r"^<v!*>(.*)</v>$", re.DOTALL)


def draws(rng: random.Random, schema: dict, reps: str, n: int) -> list[str]:
    s = Schemas(rng)
    m = re.search(r"\{(\d*)(,?)(\d*)\}", reps)
    out = set()
    for _ in range(n):
        lo = int(m.group(1) or 0)
        hi = int(m.group(3)) if m.group(3) else (lo if not m.group(2) else lo + 3)
        out.add("<v" + "!" * rng.randint(lo, hi) + ">" + s.value(schema) + "</v>")
    return sorted(out)


def test_llguidance_dialect_matches_llguidance(cli: str, tmp_path: pathlib.Path) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_LLG_FUZZ_SEED", "5")))
    cases = int(os.environ.get("NEXTOK_LLG_FUZZ_CASES", "16"))
    oracle = Oracle()
    bad: list[dict] = []
    invalid_json: list[dict] = []
    totals = {"grammars": 0, "valid": 0, "invalid": 0, "generated": 0, "complete": 0}
    for k in range(cases):
        schema = Schemas(rng).schema(0 if rng.random() < 0.3 else 1)
        if "type" not in schema or schema.get("type") != "object":
            schema = {"type": "object", "properties": {"v": schema}, "required": ["v"]}
        text, value_re = grammar(rng, schema)
        reps = re.search(r'"!"(\{[^}]*\})', text).group(1)
        path = tmp_path / f"g{k}.lark"
        path.write_text(text, encoding="utf-8")
        matcher = oracle.matcher(text)
        valid = draws(rng, schema, reps, 10)

        def judge(
            t: str,
            matcher: object = matcher,
            value_re: re.Pattern = value_re,
            schema: dict = schema,
        ) -> bool | None:
            # Documented: an integer with a zero fraction is an integer here;
            # "-0" is never written in a bounded range; \u escapes count;
            # llguidance refuses JSON's \/ escape.
            if re.search(r"\d\.0+(?![0-9])|-0(?![0-9.])|\\u|\\/", t):
                return None
            ok = oracle.accepts(matcher, t)
            if ok:  # what either engine takes must be a valid value
                try:
                    jsonschema.validate(json.loads(value_re.match(t).group(1)), schema)
                except (jsonschema.ValidationError, ValueError) as e:
                    invalid_json.append({"text": t, "error": str(e)[:200]})
            return ok

        compare(cli, path, text, valid, judge, rng, k, totals, bad)
    print(json.dumps(totals))
    assert totals["grammars"] == cases
    assert totals["valid"] > 5 * cases and totals["invalid"] > 2 * cases
    assert not bad, json.dumps(bad[:3], ensure_ascii=False, indent=1)
    assert not invalid_json, invalid_json[:3]


def probe(
    cli: str,
    tmp_path: pathlib.Path,
    text: str,
    walks: list[str],
    count: int = 0,
    extra: tuple[str, ...] = (),
) -> tuple[Oracle, object, list[dict]]:
    """Walks `walks` (and `count` generations) under grammar `text` and
    asserts every walk's verdict is llguidance's; returns the oracle, its
    matcher and the generations."""
    path = tmp_path / "probe.lark"
    path.write_text(text, encoding="utf-8")
    oracle = Oracle()
    matcher = oracle.matcher(text)
    lines = run(cli, str(path), walks, count, 3, extra)
    got = {walks[x["i"]]: x["accepted"] for x in lines if "accepted" in x}
    assert len(got) == len(walks)
    want = {w: oracle.accepts(matcher, w) for w in walks}
    assert got == want, {w: (got[w], want[w]) for w in walks if got[w] != want[w]}
    return oracle, matcher, [g for g in lines if "complete" in g]


PROBES = [
    # (schema, texts): every text's verdict comes from llguidance.
    (
        {"type": "string", "minLength": 2, "maxLength": 4},
        [
            '""',
            '"a"',
            '"ab"',
            '"abcd"',
            '"abcde"',
            '"é中"',
            '"\\n\\t"',
            '"a\\u00e9cde"',
            '"\\"\\\\"',
            '"ab\\"cd"',
            '"中中中中"',
            '"中中中中中"',
            '"\\ud83d\\ude00a"',
        ],
    ),
    (
        {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        ['"ab"', '"abc"', '"abcd"', '"a1"', '""'],
    ),
    (
        {"type": "integer", "minimum": -5, "maximum": 120},
        ["-5", "-6", "0", "120", "121", "99", "007", "1e2"],
    ),
    (
        {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 2},
        ["[]", "[true]", "[true,false]", "[true, false, true]", "[ true ]", "[true,]"],
    ),
    (
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        ['[1,"a"]', "[1]", "[]", '[1,"a",2]', '["a",1]'],
    ),
    (
        {
            "type": "object",
            "properties": {"b": {"type": "integer"}, "a": {"type": "null"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        [
            '{"a":null}',
            '{"b":1,"a":null}',
            '{"a":null,"b":1}',
            '{"b":1}',
            "{}",
            '{"a":null,"c":1}',
            '{ "b" : 1 , "a" : null }',
        ],
    ),
    (
        {"type": "object", "properties": {"k": {"enum": ["x", 1, None]}}},
        ['{"k":"x"}', '{"k":1}', '{"k":null}', '{"k":2}', "{}", '{"k":"x","z":[]}'],
    ),
    (
        {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"n": {"const": "f"}},
                    "required": ["n"],
                    "additionalProperties": False,
                },
                {"type": "array", "maxItems": 0},
            ]
        },
        ['{"n":"f"}', "[]", "[1]", '{"n":"g"}', '{"n":"f","m":1}'],
    ),
]


# Where llguidance is narrower than JSON Schema, jsonschema decides (these
# verdicts are checked too): it refuses \u escapes of printable characters
# in a length-bounded string, which are one character each.
BEYOND = [
    (
        {"type": "string", "minLength": 2, "maxLength": 4},
        {'"\\u0041b"': True, '"a\\u00e9cd"': True, '"\\u0041\\u0042\\u0043\\u0044\\u0045"': False},
    )
]


@pytest.mark.parametrize("case", range(len(BEYOND)))
def test_json_rule_escapes_count_as_one_character(
    cli: str, tmp_path: pathlib.Path, case: int
) -> None:
    schema, want = BEYOND[case]
    for t, ok in want.items():
        assert ok == jsonschema.Draft202012Validator(schema).is_valid(json.loads(t)), t
    path = tmp_path / "beyond.lark"
    path.write_text(f"start: value\nvalue: %json {json.dumps(schema)}\n", encoding="utf-8")
    walks = list(want)
    lines = [x for x in run(cli, str(path), walks, 0, 1) if "accepted" in x]
    assert {walks[x["i"]]: x["accepted"] for x in lines} == want


@pytest.mark.parametrize("case", range(len(PROBES)))
def test_json_rule_probes_match_llguidance(cli: str, tmp_path: pathlib.Path, case: int) -> None:
    schema, texts = PROBES[case]
    text = f'start: "<" value ">"\nvalue: %json {json.dumps(schema)}\n'
    probe(cli, tmp_path, text, ["<" + t + ">" for t in texts])


DIALECT = [
    # %regex substrings: words (runs of word characters, of whitespace, of
    # the rest), chunks and characters.
    (
        'start: x\nx: %regex {"substring_words": "ab  cd-ef, g\\u00e9 h_i 12 a--b ,. c \\n d中文e"}\n',
        [
            "ab",
            "b",
            " ",
            "  ",
            "  cd",
            " cd",
            "cd-",
            "-ef",
            "-",
            "cd-ef",
            "ef,",
            ", g",
            "gé",
            "g",
            "h_i",
            "_i",
            "12",
            "1",
            "",
            "i 12",
            "--",
            "-b",
            ",.",
            ". c",
            " ,.",
            " \n d",
            "d中文e",
            "中文e",
            "ab  cd-ef, gé h_i 12 a--b ,. c \n d中文e",
        ],
    ),
    (
        'start: "<" X ">"\nX: %regex {"substring_chunks": ["abc", "de", "fg"]}\n%ignore " "\n',
        ["<>", "<abc>", "< de >", "<abcde>", "<defg >", "<abcdefg>", "<ab>", "<cde>", "<abcfg>"],
    ),
    (
        'start: x "!"\nx: %regex {"substring_chars": "ab c"}\n',
        ["!", "a!", "b c!", "ab c!", "ac!", " !"],
    ),
    # llguidance's lazy lexemes, suffix, & and ~ (verdicts from llguidance).
    (
        (
            'start: head "=foo>" %json {"type":"object"} "</function>"\n'
            'head[lazy]: TEXT "<function"\nTEXT: /(.|\\n)*/\n'
        ),
        [
            "hi<function=foo>{}</function>",
            "hi<function<function=foo>{}</function>",
            "a<functio=foo>{}</function>",
            '<function=foo>{"a":1}</function>',
            "x<function=foo>{",
        ],
    ),
    (
        "start: ASCII_LINES\nASCII_LINES: /[a-zA-Z \\n]*/ & ~/(?s:.*)\\n\\n(?s:.*)/\n",
        ["ab c", "ab\n\nc", "a\nb", "", "a\n\n", "\n"],
    ),
    (
        'start: body "!"\nbody[suffix="<end>"]: /.*/\n',
        ["foo<end>!", "foo<end>bar<end>!", "<end>!", "foo!", "<en<end>!"],
    ),
    ("start: n n\nn[lazy]: /[0-9]+/\n", ["12", "1", "123", "1a"]),
    # stop reads as suffix (stop="" as one lexeme, not lazy); texts whose
    # tokens end where the stop does (STOP_TOKEN_END below).
    ('start: line+\nline[stop="\\n"]: /[a-z ]*/\n', ["ab\n", "ab\ncd ef\n", "ab", "a b\nc"]),
    (
        'start: "Q: " answer "."\nanswer[stop=/ END| STOP/]: /[A-Za-z ]*/\n',
        ["Q: yes END.", "Q: no STOP.", "Q: yes.", "Q: a END b END.", "Q:  END."],
    ),
    ('start: a "X"\n%ignore " "\na[stop=""]: "ab" "cd"\n', ["abcdX", "ab cdX", "abcd X"]),
    ('start: a "X"\na[stop=""]: /[a-z]*q/\n', ["helloqX", "hqelloqX", "qX", "X"]),
    # '#' comments, and terminals' regexes in Rust's syntax where Python's
    # refuses it: \u{...}, \x{...}, \p{...}, \P{...}.
    (
        'start: item // a comment\nitem: "ok" W # another\n# a line of its own\nW: /[a-z]*/\n',
        ["ok", "okab", "", "ok#"],
    ),
    (
        "start: A B C D\nA: /\\u{1F600}+/\nB: /\\x{41}/\nC: /[\\p{Lu}\\d]+/\nD: /\\P{L}?/\n",
        ["\U0001f600AB1", "\U0001f600\U0001f600AZ-", "AB1", "\U0001f600Ab", "\U0001f600AB1a"],
    ),
    # ignore_once: one ignored token at most between two lexemes.
    (
        (
            '%llguidance {"ignore_once": true}\nstart: "a" WORD "c"\nWORD: /[a-z]+/\n'
            '%ignore " "\n%ignore /#[^\\n]*\\n/\n'
        ),
        ["a xy c", "a  xy c", "a#k\nxy c", "a#k\n xy c", "a #k\nxy c", "a xy#k\nc", "a xy #k\n c"],
    ),
    (
        'start: WORD (" " WORD)*\nWORD: /[a-z]+/ & ~("if" | "else")\n',
        ["a b", "if", "iff else", "ifx elsex", "x if"],
    ),
    (
        (
            'start: "<" WORD ">" tail\nWORD: /[a-z]+/ & ~("if" | "else")\ntail[lazy]: /[a-z ]*;/\n'
            '%ignore " "\n'
        ),
        ["< ab >x;", "<if>;", "< else >;", "<ab> xy ;", "<ab>a;b;", "<ab>;;"],
    ),
    (
        'start: item{2,3} end-tag\nitem: "a" | "b"\nend-tag: "c"{,2} "d"{1}\n',
        ["abd", "abccd", "abcccd", "ad", "abbbd", "abbd", "abd d"],
    ),
]


@pytest.mark.parametrize("case", range(len(DIALECT)))
def test_dialect_probes_match_llguidance(cli: str, tmp_path: pathlib.Path, case: int) -> None:
    text, walks = DIALECT[case]
    oracle, matcher, gens = probe(cli, tmp_path, text, walks, 4)
    for g in gens:
        if g["complete"]:
            # Documented: lark (and nextok) allow an ignored run at either
            # end of the text, llguidance at neither.
            out = g["text"].strip(" ") if "%ignore" in text else g["text"]
            assert oracle.accepts(matcher, out), g


def test_stop_reads_as_suffix_where_llguidance_wants_a_token_end(
    cli: str, tmp_path: pathlib.Path
) -> None:
    """Documented: llguidance hides a stop's text, so it refuses a token
    that runs on past the stop; token masks see no hidden text, and nextok
    reads stop as suffix. The same texts, tokenized apart at the stop, are
    accepted by both (the probes above)."""
    text = 'start: line+\nline[stop="\\n"]: /[a-z ]*/\n'
    path = tmp_path / "stop.lark"
    path.write_text(text, encoding="utf-8")
    oracle = Oracle()
    crossing = "ab\n\n"  # "\n\n" is one token: the first line's stop and the second's
    assert len(oracle.tokenizer.encode(crossing, add_special_tokens=False).ids) == 2
    assert not oracle.accepts(oracle.matcher(text), crossing)
    ids = [oracle.tokenizer.token_to_id(t) for t in ("ab", "\u010a", "\u010a")]
    m = oracle.matcher(text)
    assert m.try_consume_tokens(ids) == len(ids) and m.is_accepting()
    got = run(cli, str(path), [crossing], 0, 3, ())
    assert [x["accepted"] for x in got if "accepted" in x] == [True]


def test_a_lazy_lexeme_wins_over_others_in_llguidance_only(
    cli: str, tmp_path: pathlib.Path
) -> None:
    """Documented: llguidance's lexer ends a lazy lexeme as soon as it
    matches and drops the lexemes that began with it, so free text (TEXT)
    never holds a trigger where a lazy rule could start; nextok reads the
    grammar as lark does, and "<call>" is also free text. Texts without
    that ambiguity get the same verdicts (the probes above)."""
    text = (
        "start: tool* tail\ntail: TEXT\nhead[lazy]: /(\\n|.)*<call>/\n"
        'tool: head /[0-9]+/ "</call>"\nTEXT: /(\\n|.)*/\n'
    )
    path = tmp_path / "lazy.lark"
    path.write_text(text, encoding="utf-8")
    oracle = Oracle()
    m = oracle.matcher(text)
    agreed = ["", "free text", "x<call>12</call>y"]
    differs = ["<call>", "x<call>12</call><call>"]
    assert [oracle.accepts(m, t) for t in agreed + differs] == [True] * 3 + [False] * 2
    got = run(cli, str(path), agreed + differs, 0, 3, ())
    assert [x["accepted"] for x in got if "accepted" in x] == [True] * 5


SPECIAL = [
    # Special tokens by name and by id ranges, beside %json (the reserved
    # tokens of the test vocabulary: none of them is an EOS).
    (
        (
            "start: TEXT | fun_call\nTEXT: /[^{](.|\\n)*/\n"
            "fun_call: <|reserved_special_token_5|> json_body <|reserved_special_token_6|>\n"
            'json_body: %json {"type":"object","properties":{"name":{"const":"get_weather"},'
            '"parameters":{"type":"object","properties":{"city":{"type":"string"}},'
            '"required":["city"]}},"required":["name","parameters"]}\n'
        ),
        [
            (
                '<|reserved_special_token_5|>{"name":"get_weather","parameters":{"city":"P"}}'
                "<|reserved_special_token_6|>"
            ),
            "hello",
            "{no",
            "<|reserved_special_token_5|>{}<|reserved_special_token_6|>",
            '<|reserved_special_token_5|>{"name":"get_weather","parameters":{"city":"P"}}',
            "x<|reserved_special_token_6|>",
        ],
    ),
    (
        'start: "a" <[128010-128011]> "b" <|reserved_special_token_7|> ("c" | <[128012,128014]>)*\n',
        [
            "a<|reserved_special_token_5|>b<|reserved_special_token_7|>",
            "a<|reserved_special_token_6|>b<|reserved_special_token_7|>c",
            "a<|reserved_special_token_8|>b<|reserved_special_token_7|>",
            "a<|reserved_special_token_5|>b",
            (
                "a<|reserved_special_token_5|>b<|reserved_special_token_7|>"
                "<|reserved_special_token_7|>c<|reserved_special_token_9|>"
            ),
            (
                "a<|reserved_special_token_5|>b<|reserved_special_token_7|>"
                "<|reserved_special_token_8|>"
            ),
        ],
    ),
]


@pytest.mark.parametrize("case", range(len(SPECIAL)))
def test_special_tokens_match_llguidance(cli: str, tmp_path: pathlib.Path, case: int) -> None:
    text, walks = SPECIAL[case]
    extra = ("--parse-special", "--close-p", "0.3", "--close-bytes", "<")
    oracle, matcher, gens = probe(cli, tmp_path, text, walks, 12, extra)
    assert gens and not any(g.get("dead_end") for g in gens)
    for g in gens:
        if g["complete"]:
            assert oracle.accepts(matcher, g["text"]), g
