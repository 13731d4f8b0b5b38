"""Structured outputs beyond response_format, sent through the official
`openai` client's extra_body as vLLM, SGLang and llama.cpp clients send them
(docs/server.md): vLLM's `structured_outputs` {json, regex, choice, grammar,
json_object, structural_tag}, its older `guided_*` fields and its
`response_format` of type `structural_tag`, SGLang's `regex`, `ebnf` and
`json_schema` (JSON text), llama.cpp's `grammar`. On the default model
(SmolLM2), chat and completions, greedy and sampled, every output is judged
by an independent oracle: regress (ECMA-262) full-matches regexes, lark
parses Lark grammars, gbnf_oracle's recogniser (lark again) parses GBNF,
jsonschema validates JSON. Streams reassemble to the same text. Malformed,
conflicting and unsupported fields are 400s naming the field."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import jsonschema
import openai
import pytest
import regex
import regress
from gbnf_oracle import accepts as gbnf_accepts
from gbnf_oracle import recogniser
from lark_oracle import accepts as lark_accepts
from lark_oracle import parser as lark_parser
from server_util import Server

PHONE = r"\(\d{3}\) \d{3}-\d{4}"
SENTENCE = r"(Yes|No), [a-z]+( [a-z]+){0,6}\."
GBNF = 'root ::= "The answer is " num "."\nnum ::= [1-9] [0-9]{0,3}\n'
LARK = 'start: "colors: " COLOR (", " COLOR) ~ 0..3\nCOLOR: "red" | "green" | "blue"\n'
CHOICES = ["positive", "negative", "neutral"]
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
ASK = [{"role": "user", "content": "Answer in the required format."}]


@pytest.fixture(scope="module")
def client(cli: str) -> Any:
    server = Server(cli, "--parallel", 2)
    yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=120)
    assert server.stop() == 0


def fullmatch(pattern: str, text: str) -> bool:
    return regress.Regex(f"^(?:{pattern})$").find(text) is not None


def judge_regex(pattern: str):
    return lambda text: fullmatch(pattern, text)


def judge_gbnf(text: str):
    p = recogniser(text)
    return lambda out: gbnf_accepts(p, out)


def judge_lark(text: str):
    p = lark_parser(text)
    return lambda out: lark_accepts(p, out)


def judge_schema(schema: dict):
    def ok(out: str) -> bool:
        try:
            jsonschema.validate(json.loads(out), schema)
        except (ValueError, jsonschema.ValidationError):
            return False
        return True

    return ok


# (extra_body, oracle): each field spelling of each kind of constraint.
CASES = {
    "vllm_regex": ({"structured_outputs": {"regex": PHONE}}, judge_regex(PHONE)),
    "vllm_guided_regex": ({"guided_regex": SENTENCE}, judge_regex(SENTENCE)),
    "sglang_regex": ({"regex": SENTENCE}, judge_regex(SENTENCE)),
    "vllm_choice": ({"structured_outputs": {"choice": CHOICES}}, lambda t: t in CHOICES),
    "vllm_guided_choice": ({"guided_choice": CHOICES}, lambda t: t in CHOICES),
    "vllm_grammar_gbnf": ({"structured_outputs": {"grammar": GBNF}}, judge_gbnf(GBNF)),
    "vllm_grammar_lark": ({"structured_outputs": {"grammar": LARK}}, judge_lark(LARK)),
    "vllm_guided_grammar": ({"guided_grammar": LARK}, judge_lark(LARK)),
    "sglang_ebnf": ({"ebnf": GBNF}, judge_gbnf(GBNF)),
    "llama_cpp_grammar": ({"grammar": GBNF}, judge_gbnf(GBNF)),
    "vllm_json": ({"structured_outputs": {"json": SCHEMA}}, judge_schema(SCHEMA)),
    "vllm_guided_json": ({"guided_json": SCHEMA}, judge_schema(SCHEMA)),
    "sglang_json_schema": ({"json_schema": json.dumps(SCHEMA)}, judge_schema(SCHEMA)),
    "llama_cpp_json_schema": ({"json_schema": SCHEMA}, judge_schema(SCHEMA)),
    "vllm_json_object": (
        {"structured_outputs": {"json_object": True}},
        judge_schema({"type": "object"}),
    ),
}


# XGrammar's structural tags: exactly one tag (vLLM's structured_outputs
# field, JSON text), and the older shape as vLLM's response_format type, where
# free text may go on until max_tokens: there the output must be a prefix of
# the language (the `regex` module's partial match).
FREE = r"(?:[^<]|<(?!r))*"
SMALL = {"enum": ["red", "green", "blue"]}  # finite: a number could go on (7.000...)
ONE_TAG = {
    "type": "structural_tag",
    "format": {
        "type": "triggered_tags",
        "triggers": ["<r"],
        "at_least_one": True,
        "stop_after_first": True,
        "tags": [
            {
                "type": "tag",
                "begin": "<r>",
                "end": "</r>",
                "content": {"type": "json_schema", "json_schema": SMALL},
            }
        ],
    },
}
LEGACY = {
    "type": "structural_tag",
    "triggers": ["<r"],
    "structures": [{"begin": "<r>", "end": "</r>", "schema": SMALL}],
}


def tags_valid(text: str) -> bool:
    """Every complete tag holds a JSON value the schema accepts."""
    return all(judge_schema(SMALL)(v) for v in re.findall(r"<r>(.*?)</r>", text))


@pytest.mark.parametrize("seed", [None, 3])
def test_structural_tags(client: Any, seed: int | None) -> None:
    sampled = {} if seed is None else {"temperature": 1.0, "seed": seed}
    r = client.chat.completions.create(
        model="default",
        messages=ASK,
        max_tokens=40,
        **sampled,
        extra_body={"structured_outputs": {"structural_tag": json.dumps(ONE_TAG)}},
    )
    c = r.choices[0]
    out = c.message.content
    assert c.finish_reason == "stop" and re.fullmatch(r"<r>[^<]*</r>", out) and tags_valid(out), c
    r = client.chat.completions.create(
        model="default", messages=ASK, max_tokens=40, response_format=LEGACY, **sampled
    )
    c = r.choices[0]
    out = c.message.content
    lang = f"{FREE}(?:<r>[^<]*</r>{FREE})*"
    complete = c.finish_reason == "stop"
    assert regex.fullmatch(lang, out, partial=not complete) and tags_valid(out), out


@pytest.mark.parametrize("name", sorted(CASES))
def test_chat_outputs_satisfy_the_constraint(client: Any, name: str) -> None:
    extra, ok = CASES[name]
    for seed in (None, 1, 2):
        sampled = {} if seed is None else {"temperature": 1.0, "seed": seed}
        r = client.chat.completions.create(
            model="default", messages=ASK, max_tokens=60, extra_body=extra, **sampled
        )
        c = r.choices[0]
        assert c.finish_reason == "stop", (name, seed, c)
        assert ok(c.message.content), (name, seed, c.message.content)


@pytest.mark.parametrize(
    "name", ["vllm_regex", "vllm_choice", "llama_cpp_grammar", "vllm_grammar_lark"]
)
def test_completions_outputs_satisfy_the_constraint(client: Any, name: str) -> None:
    extra, ok = CASES[name]
    r = client.completions.create(
        model="default",
        prompt="The output:",
        max_tokens=60,
        temperature=1.0,
        seed=4,
        extra_body=extra,
    )
    assert r.choices[0].finish_reason == "stop"
    assert ok(r.choices[0].text), r.choices[0].text


@pytest.mark.parametrize("name", ["sglang_regex", "vllm_grammar_lark"])
def test_stream_reassembles_to_the_same_text(client: Any, name: str) -> None:
    extra, ok = CASES[name]
    kw = {
        "model": "default",
        "messages": ASK,
        "max_tokens": 60,
        "temperature": 1.0,
        "seed": 7,
        "extra_body": extra,
    }
    whole = client.chat.completions.create(**kw).choices[0].message.content
    parts = [
        ch.choices[0].delta.content or ""
        for ch in client.chat.completions.create(stream=True, **kw)
        if ch.choices
    ]
    assert "".join(parts) == whole and ok(whole)


@pytest.mark.parametrize(
    "extra, param, code",
    [
        ({"structured_outputs": {"regex": "a("}}, "structured_outputs.regex", "invalid_grammar"),
        ({"regex": "a\\b"}, "regex", "invalid_grammar"),  # no DFA for a word boundary
        ({"ebnf": "root ::= missing"}, "ebnf", "invalid_grammar"),
        ({"grammar": "start: undefined_rule"}, "grammar", "invalid_grammar"),
        ({"guided_json": {"type": "nonsense"}}, "guided_json", "invalid_schema"),
        ({"json_schema": "{not json"}, "json_schema", "invalid_schema"),
        ({"structured_outputs": {"choice": []}}, "structured_outputs.choice", None),
        (
            {"structured_outputs": {"choice": ["a", 1]}},
            "structured_outputs.choice[1]",
            "invalid_type",
        ),
        ({"structured_outputs": {"regex": 5}}, "structured_outputs.regex", "invalid_type"),
        ({"structured_outputs": "regex"}, "structured_outputs", "invalid_type"),
        ({"structured_outputs": {"regexp": "a"}}, "structured_outputs.regexp", None),
        (
            {"structured_outputs": {"regex": "a", "choice": ["b"]}},
            "structured_outputs.choice|structured_outputs.regex",
            "conflicting_parameters",
        ),
        (
            {"guided_regex": "a", "response_format": {"type": "json_object"}},
            "guided_regex|response_format",
            "conflicting_parameters",
        ),
        (
            {"structured_outputs": {"json": SCHEMA, "whitespace_pattern": " *"}},
            "structured_outputs.whitespace_pattern",
            "unsupported_parameter",
        ),
        (
            {"structured_outputs": {"json": SCHEMA, "disable_any_whitespace": True}},
            "structured_outputs.disable_any_whitespace",
            "unsupported_parameter",
        ),
        ({"guided_whitespace_pattern": " *"}, "guided_whitespace_pattern", "unsupported_parameter"),
        (
            {
                "structured_outputs": {
                    "structural_tag": json.dumps(
                        {
                            "type": "structural_tag",
                            "format": {"type": "token", "token": 5},
                        }
                    )
                }
            },
            "structured_outputs.structural_tag",
            "invalid_grammar",
        ),
        ({"structural_tag": "{not json"}, "structural_tag", "invalid_grammar"),
        # Nesting hidden inside strings, which the body's own depth check
        # cannot see: refused before any recursive walk.
        ({"guided_json": "[" * 100000 + "]" * 100000}, "guided_json", None),
        ({"regex": "(" * 20000 + "a" + ")" * 20000}, "regex", "invalid_grammar"),
        (
            {"grammar": "start: %json " + '{"items": ' * 20000 + "{}" + "}" * 20000},
            "grammar",
            "invalid_grammar",
        ),
        (
            {"structural_tag": '{"format": ' * 5000 + "{}" + "}" * 5000},
            "structural_tag",
            "invalid_grammar",
        ),
        ({"response_format": {"type": "structural_tag"}}, "response_format", "invalid_grammar"),
        (
            {"regex": "a", "tools": [{"type": "function", "function": {"name": "f"}}]},
            "regex",
            "unsupported_parameter",
        ),
    ],
)
def test_bad_fields_are_400s_naming_them(
    client: Any, extra: dict, param: str, code: str | None
) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model="default", messages=ASK, max_tokens=5, extra_body=extra
        )
    err = e.value.body
    assert err["code"] == code, err
    if code == "conflicting_parameters":  # either field may be named; the message names both
        assert all(f"'{p}" in err["message"] for p in param.split("|")), err
    else:
        assert err["param"] == param, err


def test_accepted_options_change_nothing(client: Any) -> None:
    kw = {"model": "default", "messages": ASK, "max_tokens": 30}
    plain = client.chat.completions.create(**kw, extra_body={"guided_regex": PHONE})
    opts = client.chat.completions.create(
        **kw,
        extra_body={
            "structured_outputs": {
                "regex": PHONE,
                "disable_fallback": True,
                "disable_any_whitespace": False,
            },
            "guided_decoding_backend": "xgrammar",
        },
    )
    assert plain.choices[0].message.content == opts.choices[0].message.content
    assert fullmatch(PHONE, opts.choices[0].message.content)


def test_hostile_grammars_are_answered_quickly(client: Any) -> None:
    """Grammars that once cost seconds or the process: 45,000 chained GBNF
    rules (the empty-language check was quadratic: 6 s), 100,000 chained
    Lark rules (the compiler recursed once a rule: a stack overflow).
    Each is a 4xx in well under two seconds, and the server goes on."""
    n = 45000
    gbnf = "root ::= r0\n" + "".join(f"r{i} ::= r{i + 1}\n" for i in range(n)) + f'r{n} ::= "a"\n'
    n = 100000
    lark = "start: r0\n" + "".join(f"r{i}: r{i + 1}\n" for i in range(n)) + f'r{n}: "a"\n'
    for extra in ({"grammar": gbnf}, {"structured_outputs": {"grammar": lark}}):
        t0 = time.monotonic()
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(
                model="default", messages=ASK, max_tokens=5, extra_body=extra
            )
        assert time.monotonic() - t0 < 2.0
    r = client.chat.completions.create(model="default", messages=ASK, max_tokens=3)
    assert r.choices[0].message.content
