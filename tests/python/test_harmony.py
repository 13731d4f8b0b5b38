"""gpt-oss harmony (docs/chat.md, docs/tool-calls.md) against two oracles.

Rendering: `nextok chat-format` on the real gpt-oss chat template, read at
test time from the llama-cpp-python sdist (llama.cpp ships it as
models/templates/openai-gpt-oss-120b.jinja; the gpt-oss tokenizer files carry
no template), byte for byte equal to transformers' renderer of that template,
on conversations with and without tools, calls, tool results and reasoning.
Both sides print today's local date (the template's strftime_now), taken the
same way; one case passes the date explicitly.

Calls: `nextok harmony-generate` draws seeded random-logit generations under
the call constraint with the gpt-oss vocabulary. Every turn must end, every
call must name an allowed tool with arguments that validate with jsonschema,
and nextok's parse of the token ids must equal openai-harmony's (its
o200k_base vocabulary file is written from the fixture's tokenizer.json; the
library checks its SHA-256).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tarfile

import jsonschema
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from conftest import missing_fixture  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers"))
FIXTURES = pathlib.Path(os.environ.get("NEXTOK_GRAMMAR_FIXTURES", ROOT / "build" / "dev" / "fixtures"))
SDIST = "llama_cpp_python-0.3.36.tar.gz"
TEMPLATE = "vendor/llama.cpp/models/templates/openai-gpt-oss-120b.jinja"


def gpt_oss_dir() -> pathlib.Path:
    d = TOKENIZERS / "gpt-oss"
    if not (d / "tokenizer.json").exists():
        missing_fixture(f"tokenizer {d}")
    return d


@pytest.fixture(scope="module")
def template() -> str:
    sdist = FIXTURES / SDIST
    if not sdist.exists():
        FIXTURES.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        "llama-cpp-python==0.3.36", "-d", str(FIXTURES)], capture_output=True, timeout=600)
    if not sdist.exists():
        missing_fixture(f"{sdist} (pip download llama-cpp-python==0.3.36 --no-binary :all:)")
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            if m.name.endswith(TEMPLATE):
                return tar.extractfile(m).read().decode("utf-8")
    missing_fixture(f"{TEMPLATE} in {sdist}")


@pytest.fixture(scope="module")
def config(template, tmp_path_factory) -> pathlib.Path:
    """The gpt-oss tokenizer_config.json with the real template added."""
    cfg = json.loads((gpt_oss_dir() / "tokenizer_config.json").read_text(encoding="utf-8"))
    cfg["chat_template"] = template
    path = tmp_path_factory.mktemp("harmony") / "tokenizer_config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def render(template: str, messages, **kw) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template
    out, _ = render_jinja_template(conversations=[messages], chat_template=template,
                                   bos_token="<|startoftext|>", eos_token="<|return|>", **kw)
    return out[0]


def chat_format(cli, config, messages, tools=None, add_generation_prompt=True, **opts):
    args = [cli, "chat-format", "--tokenizer-config", str(config),
            "--messages-json", json.dumps(messages, ensure_ascii=False)]
    if tools is not None:
        args += ["--tools-json", json.dumps(tools, ensure_ascii=False)]
    if not add_generation_prompt:
        args.append("--no-generation-prompt")
    for k, v in opts.items():
        args += [f"--{k.replace('_', '-')}", v]
    return subprocess.run(args, capture_output=True)


def _m(role, content, **extra):
    return {"role": role, "content": content, **extra}


def _call(name, arguments):
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather — for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3}},
        "required": ["city"], "additionalProperties": False}}}
SEARCH = {"type": "function", "function": {
    "name": "search_docs", "description": "Search the documents.",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "maxLength": 30},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "limit": {"type": ["integer", "null"]},
        "filters": {"type": "object", "properties": {
            "year": {"type": "integer"}, "lang": {"type": "string", "nullable": True}},
            "required": ["year"], "additionalProperties": False},
        "sort": {"oneOf": [{"type": "string", "description": "a field"}, {"type": "number"}]},
        "points": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}},
                                                "additionalProperties": False}, "maxItems": 2},
        "flags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 4}, "any": {"type": "null"},
        "score": {"type": "number", "default": 0.5}, "exact": {"type": "boolean", "default": False}},
        "required": ["query"], "additionalProperties": False}}}
PING = {"type": "function", "function": {"name": "ping", "description": "Liveness check."}}
TOOLS = [WEATHER, SEARCH, PING]

# Schema shapes the template's type macro treats specially (rendering only).
EDGE = {"type": "function", "function": {
    "name": "edge", "description": "Odd schemas.",
    "parameters": {"type": "object", "properties": {
        "mode": {"oneOf": [{"type": "string", "default": "fast"}, {"type": "integer", "description": "n"}],
                 "default": "fast"},
        "objs": {"oneOf": [{"type": "object"}, {"type": "object", "properties": {"a": {"type": "string"}}}]},
        "kinds": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}, "nullable": True},
        "bare": {"type": "array"}, "maybe": {"type": "array", "nullable": True},
        "wide": {"type": "array", "items": {"type": "object", "properties": {
            "alpha": {"type": "string"}, "beta": {"type": "integer"}, "gamma": {"type": "boolean"}}}},
        "either": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "ref": {"$ref": "#/x"},
        "level": {"type": "string", "enum": ["low", "high"], "default": "low"},
        "ratio": {"type": "number", "default": 1.5}, "on": {"type": "boolean", "default": True},
        "tags": {"type": ["string", "integer"], "default": None}},
        "required": ["mode", "grid"]}}}

CASES = {
    "single_user": ([_m("user", "Hello")], None),
    "system_user": ([_m("system", "You are terse."), _m("user", "Hi")], None),
    "developer_user": ([_m("developer", "Answer in French."), _m("user", "Hi")], None),
    "multi_turn": ([_m("system", "Be kind."), _m("user", "2+2?"), _m("assistant", "4"),
                    _m("user", "And 3+3?")], None),
    "reasoning_dropped": ([_m("user", "Q1"), _m("assistant", "A1", thinking="think 1"),
                           _m("user", "Q2")], None),
    "ends_with_assistant": ([_m("user", "Q"), _m("assistant", "A", thinking="why")], None),
    "unicode": ([_m("user", "Grüße 👋\n\n\"quoted\" <|end|>"), _m("assistant", "日本語\u3000")], None),
    "late_system": ([_m("user", "Hi"), _m("system", "ignored"), _m("user", "Bye")], None),
    "tools_only": ([_m("user", "Weather in Paris?")], TOOLS),
    "tools_developer": ([_m("system", "Be brief."), _m("user", "Weather?")], TOOLS),
    "call_and_result": ([_m("user", "Weather in Paris?"),
                         _m("assistant", "", thinking="Need the weather tool.",
                            tool_calls=[_call("get_weather", {"city": "Paris", "days": 2})]),
                         _m("tool", "{\"temp\": 21, \"sky\": \"clear — ☀\"}\nline 2")], TOOLS),
    "call_content_as_analysis": ([_m("user", "Weather?"),
                                  _m("assistant", "Let me look.",
                                     tool_calls=[_call("get_weather", {"city": "Oslo"})]),
                                  _m("tool", "rain")], TOOLS),
    "call_then_final": ([_m("user", "Weather?"),
                         _m("assistant", "", thinking="dropped later",
                            tool_calls=[_call("ping", {})]),
                         _m("tool", "pong"), _m("assistant", "It is up."), _m("user", "Thanks")],
                        TOOLS),
    "edge_schemas": ([_m("user", "x")], [EDGE, PING]),
    "two_calls": ([_m("user", "Both?"),
                   _m("assistant", "", tool_calls=[_call("ping", {}), _call("get_weather", {"city": "X"})]),
                   _m("tool", "pong"), _m("tool", "sun")], TOOLS),
}
ERRORS = {
    "no_description": ([_m("user", "x")], [{"type": "function", "function": {"name": "f"}}]),
    "orphan_tool_result": ([_m("user", "x"), _m("tool", "42")], None),
    "channel_in_content": ([_m("user", "x"), _m("assistant", "<|channel|>final<|message|>hi")], None),
    "content_and_thinking_with_call": ([_m("user", "x"), _m("assistant", "a", thinking="b",
                                                            tool_calls=[_call("ping", {})])], TOOLS),
}


def _today() -> str:
    return datetime.datetime.now().strftime("%Y-%m-%d")


def test_rendering_matches_the_gpt_oss_template(cli, template, config):
    checked = 0
    for case, (messages, tools) in CASES.items():
        for gen in (True, False):
            for _ in range(2):  # again if the date changed between the two renders
                day = _today()
                kw = {"tools": tools} if tools else {}
                want = render(template, messages, add_generation_prompt=gen, **kw)
                r = chat_format(cli, config, messages, tools=tools, add_generation_prompt=gen)
                if day == _today():
                    break
            assert r.returncode == 0, f"{case}: {r.stderr.decode()}"
            assert f"Current date: {day}\n" in want
            assert r.stdout.decode("utf-8") == want, case
            checked += 1
    # Reasoning effort and an explicit date.
    messages = CASES["tools_only"][0]
    want = render(template, messages, tools=TOOLS, add_generation_prompt=True, reasoning_effort="high")
    r = chat_format(cli, config, messages, tools=TOOLS, reasoning_effort="high", date="2030-01-31")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode("utf-8") == want.replace(f"Current date: {_today()}", "Current date: 2030-01-31")
    assert checked == 2 * len(CASES)


def test_template_errors_are_invalid_argument(cli, template, config):
    for case, (messages, tools) in ERRORS.items():
        with pytest.raises(Exception):
            render(template, messages, tools=tools, add_generation_prompt=True)
        r = chat_format(cli, config, messages, tools=tools)
        assert r.returncode == 2 and b"[invalid_argument]" in r.stderr, (case, r.stderr.decode())


# --- constrained calls ----------------------------------------------------------------

@pytest.fixture(scope="module")
def harmony(tmp_path_factory):
    """openai-harmony with o200k_base.tiktoken written from the fixture (no download)."""
    try:
        import openai_harmony as oh
    except ImportError:
        missing_fixture("openai-harmony (pip install -r tests/python/requirements.txt)")
    vocab = json.loads((gpt_oss_dir() / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    # GPT-2's byte-level alphabet, undone.
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:] + [256 + n for n in range(256 - len(bs))]
    bs += [b for b in range(256) if b not in bs]
    byte_of = {chr(c): b for b, c in zip(bs, cs)}
    lines = [base64.b64encode(bytes(byte_of[ch] for ch in tok)).decode() + f" {rank}\n"
             for tok, rank in sorted(vocab.items(), key=lambda kv: kv[1])]
    d = tmp_path_factory.mktemp("tiktoken")
    (d / "o200k_base.tiktoken").write_text("".join(lines), encoding="ascii")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(d)
    return oh, oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)


def generate(cli, choice: str, count: int, seed: int, tools=TOOLS) -> list[dict]:
    r = subprocess.run([cli, "harmony-generate", "--tokenizer", str(gpt_oss_dir()),
                        "--tools-json", json.dumps(tools), "--tool-choice", choice,
                        "--count", str(count), "--seed", str(seed), "--max-tokens", "400"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert "compiled_ms" in lines[0]
    return lines[1:]


def harmony_messages(oh, enc, ids: list[int]) -> list[dict]:
    out = []
    for m in enc.parse_messages_from_completion_tokens(ids, oh.Role.ASSISTANT):
        d = m.to_dict()
        out.append({"channel": d.get("channel") or "", "recipient": d.get("recipient") or "",
                    "content_type": d.get("content_type") or "",
                    "content": "".join(c.get("text", "") for c in d["content"])})
    return out


SCHEMAS = {t["function"]["name"]: t["function"].get("parameters", {"type": "object", "properties": {}})
           for t in TOOLS}


@pytest.mark.parametrize("choice,count", [("required", 100), ("auto", 100), ("search_docs", 50),
                                          ("none", 30)])
def test_constrained_calls_validate_and_parse_like_openai_harmony(cli, harmony, choice, count):
    oh, enc = harmony
    gens = generate(cli, choice, count,
                    seed={"required": 1, "auto": 5000, "none": 7000}.get(choice, 9000))
    assert len(gens) == count
    calls = finals = 0
    for g in gens:
        assert not g.get("dead_end"), g
        assert g["ended"], f"generation {g['i']} did not end its turn: {g['text'][-200:]!r}"
        turn = g["turn"]
        ours = [{k: m[k] for k in ("channel", "recipient", "content_type", "content")}
                for m in turn["messages"]]
        assert all(m["complete"] for m in turn["messages"])
        theirs = harmony_messages(oh, enc, g["ids"])
        assert ours == theirs, f"generation {g['i']}: {g['text'][:300]!r}"
        if turn["tool_calls"]:
            calls += 1
            (call,) = turn["tool_calls"]
            assert choice in ("auto", "required") or call["name"] == choice
            jsonschema.validate(json.loads(call["arguments"]), SCHEMAS[call["name"]])
            # The call ends the turn; preambles before it are content.
            assert turn["messages"][-1]["recipient"] == "functions." + call["name"]
        else:
            assert choice in ("auto", "none"), f"{choice}: a turn without a call"
            assert turn["messages"][-1]["channel"] == "final"
            finals += 1
    if choice == "auto":
        assert calls > 0 and finals > 0, (calls, finals)
    elif choice == "none":
        assert calls == 0 and finals == count
    else:
        assert calls == count


def test_prompt_from_harmony_generate_matches_chat_format(cli, config):
    messages = CASES["call_and_result"][0]
    r = subprocess.run([cli, "harmony-generate", "--tokenizer", str(gpt_oss_dir()),
                        "--messages-json", json.dumps(messages), "--tools-json", json.dumps(TOOLS),
                        "--date", "2026-01-02"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    prompt = json.loads(r.stdout.splitlines()[0])["prompt"]
    want = chat_format(cli, config, messages, tools=TOOLS, date="2026-01-02")
    assert want.returncode == 0 and prompt == want.stdout.decode("utf-8")


def test_unknown_tool_names_are_refused(cli):
    for choice, needle in (("nope", "nope"),):
        r = subprocess.run([cli, "harmony-generate", "--tokenizer", str(gpt_oss_dir()),
                            "--tools-json", json.dumps(TOOLS), "--tool-choice", choice, "--count", "1"],
                           capture_output=True, text=True)
        assert r.returncode == 2 and needle in r.stderr, r.stderr


def test_turns_rendered_by_openai_harmony_are_accepted(cli, harmony, tmp_path):
    """Completeness: assistant turns as openai-harmony writes them (its own
    tokenization, both header forms) are read token by token to the end."""
    oh, enc = harmony

    def msg(text, channel, recipient=None, content_type=None):
        m = oh.Message.from_role_and_content(oh.Role.ASSISTANT, text).with_channel(channel)
        if recipient:
            m = m.with_recipient(recipient)
        return m.with_content_type(content_type) if content_type else m

    def turn(*messages):
        ids = [t for m in messages for t in enc.render(m)]
        start = enc.encode("<|start|>assistant", allowed_special="all")
        assert ids[:len(start)] == start
        ids = ids[len(start):]  # the generation prompt
        if ids[-1] == enc.encode("<|end|>", allowed_special="all")[0]:  # a final answer
            ids[-1] = enc.encode("<|return|>", allowed_special="all")[0]
        return ids

    calls = [
        turn(msg("The user wants weather.", "analysis"),
             msg('{"city":"Paris","days":3}', "commentary", "functions.get_weather", "<|constrain|>json")),
        turn(msg('{"query":"harmony","tags":["a","b"],"filters":{"year":2025}}', "commentary",
                 "functions.search_docs", "<|constrain|>json")),
        turn(msg("Checking first.", "commentary"), msg("{}", "commentary", "functions.ping", "json")),
        turn(msg('{"city":"Oslo","unit":"celsius"}', "commentary", "functions.get_weather", "json")),
    ]
    finals = [turn(msg("Hello! How can I help?", "final")),
              turn(msg("Simple greeting.", "analysis"), msg("Hi — 👋", "final"))]
    for choice, turns, want in (("required", calls + finals, [True] * len(calls) + [False] * len(finals)),
                                ("auto", calls + finals, [True] * (len(calls) + len(finals))),
                                ("none", calls + finals, [False] * len(calls) + [True] * len(finals))):
        path = tmp_path / f"{choice}.jsonl"
        path.write_text("".join(json.dumps(t) + "\n" for t in turns))
        r = subprocess.run([cli, "harmony-generate", "--tokenizer", str(gpt_oss_dir()),
                            "--tools-json", json.dumps(TOOLS), "--tool-choice", choice,
                            "--walk", str(path)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        walks = [json.loads(line) for line in r.stdout.splitlines()[1:]]
        assert [w["accepted"] and w["ended"] for w in walks] == want, (choice, walks)


def test_rendering_agrees_with_openai_harmony_where_the_template_does(cli, harmony):
    """The second rendering oracle, on what the template and openai-harmony
    write alike (docs/chat.md lists where they differ)."""
    oh, enc = harmony
    simple = {"type": "function", "function": {
        "name": "lookup", "description": "Look a word up.",
        "parameters": {"type": "object", "properties": {
            "word": {"type": "string", "description": "The word"},
            "lang": {"type": "string", "enum": ["en", "fr"]},
            "limit": {"type": "integer"}, "exact": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["word"]}}}
    cases = [([_m("user", "Hello")], []),
             ([_m("user", "Hi"), _m("assistant", "Hello!"), _m("user", "Define 'gist'.")], []),
             ([_m("user", "Define 'gist'.")], [simple, PING])]
    for messages, tools in cases:
        r = subprocess.run([cli, "harmony-generate", "--tokenizer", str(gpt_oss_dir()),
                            "--messages-json", json.dumps(messages), "--tools-json", json.dumps(tools),
                            "--date", "2026-12-05", "--reasoning-effort", "high"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        ours = json.loads(r.stdout.splitlines()[0])["prompt"]
        system = (oh.SystemContent.new().with_conversation_start_date("2026-12-05")
                  .with_reasoning_effort(oh.ReasoningEffort.HIGH))
        conv = [oh.Message.from_role_and_content(oh.Role.SYSTEM, system)]
        if tools:
            described = [oh.ToolDescription.new(t["function"]["name"], t["function"]["description"],
                                                parameters=t["function"].get("parameters"))
                         for t in tools]
            conv.append(oh.Message.from_role_and_content(
                oh.Role.DEVELOPER, oh.DeveloperContent.new().with_function_tools(described)))
        for m in messages:
            if m["role"] == "user":
                conv.append(oh.Message.from_role_and_content(oh.Role.USER, m["content"]))
            else:
                conv.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, m["content"])
                            .with_channel("final"))
        ids = enc.render_conversation_for_completion(oh.Conversation.from_messages(conv), oh.Role.ASSISTANT)
        assert ours == enc.decode_utf8(ids), messages
