"""The long Llama 3.1 chat template (docs/chat.md): `nextok chat-format`
against transformers' renderer of the real template text, byte for byte.

The templates are read at test time from the llama-cpp-python sdist, where
llama.cpp ships them as models/templates/meta-llama-Llama-3.{1,2,3}-*.jinja;
they are never copied into the repository. Conversations cover plain chat,
tools in the first user message, calls, tool/ipython results, several calls
over a conversation, trimming and non-ASCII text, with and without a
generation prompt. The template's date_string is given to both sides the same
way: absent (3.1/3.3 print their fixed default, 3.2 today's date) or passed
explicitly.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import subprocess
import sys
import tarfile

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from conftest import missing_fixture  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = pathlib.Path(os.environ.get("NEXTOK_GRAMMAR_FIXTURES", ROOT / "build" / "dev" / "fixtures"))
SDIST = "llama_cpp_python-0.3.36.tar.gz"
TEMPLATES = "vendor/llama.cpp/models/templates/"
VERSIONS = {
    "3.1": "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "3.2": "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "3.3": "meta-llama-Llama-3.3-70B-Instruct.jinja",
}
BOS, EOS = "<|begin_of_text|>", "<|eot_id|>"


def sdist_member(name: str) -> str:
    sdist = FIXTURES / SDIST
    if not sdist.exists():
        FIXTURES.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        "llama-cpp-python==0.3.36", "-d", str(FIXTURES)], capture_output=True, timeout=600)
    if not sdist.exists():
        missing_fixture(f"{sdist} (pip download llama-cpp-python==0.3.36 --no-binary :all:)")
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            if m.name.endswith(TEMPLATES + name):
                return tar.extractfile(m).read().decode("utf-8")
    missing_fixture(f"{TEMPLATES}{name} in {sdist}")
    raise AssertionError("unreachable")


@pytest.fixture(scope="module", params=sorted(VERSIONS))
def llama(request, tmp_path_factory) -> tuple[str, str, pathlib.Path]:
    """(version, template text, a tokenizer_config.json holding it)."""
    template = sdist_member(VERSIONS[request.param])
    path = tmp_path_factory.mktemp("llama" + request.param) / "tokenizer_config.json"
    path.write_text(json.dumps({"chat_template": template, "bos_token": BOS, "eos_token": EOS}),
                    encoding="utf-8")
    return request.param, template, path


def render(template: str, messages, **kw) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template
    out, _ = render_jinja_template(conversations=[messages], chat_template=template,
                                   bos_token=BOS, eos_token=EOS, **kw)
    return out[0]


def chat_format(cli, config, messages, tools=None, add_generation_prompt=True, date=None,
                tools_in_user_message=None, builtin_tools=None):
    args = [cli, "chat-format", "--tokenizer-config", str(config),
            "--messages-json", json.dumps(messages, ensure_ascii=False)]
    if builtin_tools is not None:
        args += ["--builtin-tools", ",".join(builtin_tools)]
    if tools_in_user_message is not None:
        args += ["--tools-in-user-message", "true" if tools_in_user_message else "false"]
    if tools is not None:
        args += ["--tools-json", json.dumps(tools, ensure_ascii=False)]
    if not add_generation_prompt:
        args.append("--no-generation-prompt")
    if date is not None:
        args += ["--date", date]
    return subprocess.run(args, capture_output=True)  # bytes: "\r\n" must survive


def _m(role, content, **extra):
    return {"role": role, "content": content, **extra}


def _call(name, arguments):
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather — for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. \"Paris\""},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "ratio": {"type": "number", "default": 0.5}, "extra": {}, "none": []},
        "required": ["city"], "additionalProperties": False}}}
SEARCH = {"type": "function", "function": {
    "name": "search_docs", "description": "Search.\nTwo lines, 日本語.",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string"},
        "filters": {"type": "object", "properties": {"year": {"type": "integer"}}},
        "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["query"]}}}
PING = {"type": "function", "function": {"name": "ping"}}
TOOLS = [WEATHER, SEARCH, PING]

CASES = {
    "single_user": ([_m("user", "Hello")], None),
    "system_user": ([_m("system", "  You are terse.\n"), _m("user", "Hi  ")], None),
    "multi_turn": ([_m("system", "Be kind."), _m("user", "2+2?"), _m("assistant", " 4 "),
                    _m("user", "And 3+3?")], None),
    "unicode_trim": ([_m("user", "\u3000Grüße 👋\n\n\"quoted\" <|eot_id|>\u00a0"),
                      _m("assistant", "日本語\u2028")], None),
    "late_system": ([_m("user", "Hi"), _m("system", "later"), _m("user", "Bye")], None),
    "tools_only": ([_m("user", "Weather in Paris?")], TOOLS),
    "tools_system": ([_m("system", "Be brief."), _m("user", "  Weather? ")], TOOLS),
    "call_and_result": ([_m("user", "Weather in Paris?"),
                         _m("assistant", "", tool_calls=[_call("get_weather", {"city": "Paris", "days": 2})]),
                         _m("tool", "{\"temp\": 21, \"sky\": \"clear — ☀\"}\nline 2")], TOOLS),
    "ipython_result": ([_m("system", "sys"), _m("user", "Search"),
                        _m("assistant", "ignored text",
                           tool_calls=[_call("search_docs", {"query": "q \"x\"", "tags": ["a", "b"],
                                                             "filters": {"year": 2024}})]),
                        _m("ipython", "3 hits\ttab")], TOOLS),
    "calls_over_turns": ([_m("user", "Up?"), _m("assistant", "", tool_calls=[_call("ping", {})]),
                          _m("tool", "pong"), _m("assistant", "It is up."), _m("user", "Weather?"),
                          _m("assistant", "", tool_calls=[_call("get_weather", {"city": "Oslo",
                                                                                "ratio": 1.5})]),
                          _m("tool", "rain"), _m("assistant", "Rain in Oslo.")], TOOLS),
    "history_without_tools": ([_m("user", "Up?"), _m("assistant", "", tool_calls=[_call("ping", {})]),
                               _m("tool", "pong")], None),
}
ERRORS = {
    "two_calls": ([_m("user", "Both?"),
                   _m("assistant", "", tool_calls=[_call("ping", {}), _call("get_weather", {"city": "X"})])],
                  TOOLS),
    "tools_without_user": ([_m("system", "only a system message")], TOOLS),
}


def _today() -> str:
    return datetime.datetime.now().strftime("%d %b %Y")


def test_rendering_matches_transformers(cli, llama):
    version, template, config = llama
    checked = 0
    for case, (messages, tools) in CASES.items():
        for gen in (True, False):
            kw = {"tools": tools} if tools else {}
            for _ in range(2):  # again if the date changed between the two renders (3.2)
                day = _today()
                want = render(template, messages, add_generation_prompt=gen, **kw)
                r = chat_format(cli, config, messages, tools=tools, add_generation_prompt=gen)
                if day == _today():
                    break
            assert r.returncode == 0, f"{version} {case}: {r.stderr.decode()}"
            expected_day = day if version == "3.2" else "26 Jul 2024"
            assert f"Today Date: {expected_day}\n\n" in want
            assert r.stdout.decode("utf-8") == want, f"{version} {case}"
            # The same conversation with date_string passed to both sides.
            want = render(template, messages, add_generation_prompt=gen, date_string="05 Dec 2026", **kw)
            r = chat_format(cli, config, messages, tools=tools, add_generation_prompt=gen, date="05 Dec 2026")
            assert r.returncode == 0, f"{version} {case}: {r.stderr.decode()}"
            assert "Today Date: 05 Dec 2026\n\n" in want
            assert r.stdout.decode("utf-8") == want, f"{version} {case} with date_string"
            checked += 2
            if tools:
                # The template's other tool section: the tools in the system turn.
                want = render(template, messages, add_generation_prompt=gen, date_string="05 Dec 2026",
                              tools_in_user_message=False, **kw)
                r = chat_format(cli, config, messages, tools=tools, add_generation_prompt=gen,
                                date="05 Dec 2026", tools_in_user_message=False)
                assert r.returncode == 0, f"{version} {case}: {r.stderr.decode()}"
                assert "You have access to the following functions" in want
                assert r.stdout.decode("utf-8") == want, f"{version} {case} tools_in_user_message=False"
                checked += 1
    assert checked == 4 * len(CASES) + 2 * sum(1 for _, tools in CASES.values() if tools)


def test_template_errors_are_invalid_argument(cli, llama):
    version, template, config = llama
    for case, (messages, tools) in ERRORS.items():
        with pytest.raises(Exception):
            render(template, messages, tools=tools, add_generation_prompt=True)
        r = chat_format(cli, config, messages, tools=tools)
        assert r.returncode == 2 and b"[invalid_argument]" in r.stderr, (version, case, r.stderr.decode())


def test_detection_names_the_family(cli, llama, tmp_path):
    """The long template is recognised; a near relative (its tool instructions
    removed) is refused rather than rendered wrongly."""
    version, template, config = llama
    r = chat_format(cli, config, [_m("user", "x")])
    assert r.returncode == 0 and b"Cutting Knowledge Date: December 2023" in r.stdout
    cut = template.replace("This model only supports single tool-calls at once!", "one call")
    bad = tmp_path / "tokenizer_config.json"
    bad.write_text(json.dumps({"chat_template": cut, "bos_token": BOS, "eos_token": EOS}), encoding="utf-8")
    r = chat_format(cli, bad, [_m("user", "x")])
    assert r.returncode != 0 and b"unsupported chat template" in r.stderr, r.stderr.decode()


# Builtin tools (brave_search, wolfram_alpha, code_interpreter): the 3.1 and
# 3.3 templates read them (a "Tools:" line without code_interpreter, calls to
# them as <|python_tag|>name.call(k="v"), call turns ended with <|eom_id|>);
# 3.2's ignores them. Each case is (messages, tools, builtin_tools).
BUILTIN_CASES = {
    "builtin_only": ([_m("system", "Be brief."), _m("user", "News?")], None,
                     ["brave_search", "wolfram_alpha"]),
    "interpreter_left_out": ([_m("user", "Run it")], None, ["code_interpreter", "brave_search"]),
    "interpreter_alone": ([_m("user", "Run it")], None, ["code_interpreter"]),
    "empty_list": ([_m("user", "Hi")], None, []),
    "builtin_call_and_result": ([_m("user", "Weather in SF?"),
                                 _m("assistant", "", tool_calls=[_call("brave_search",
                                                                       {"query": "weather \"SF\" 日本"})]),
                                 _m("ipython", "{\"temp\": 18}"), _m("assistant", "18 degrees.")],
                                None, ["brave_search", "wolfram_alpha"]),
    "two_arguments": ([_m("user", "Solve"),
                       _m("assistant", "", tool_calls=[_call("wolfram_alpha", {"query": "x^2=4", "units": "si"})]),
                       _m("tool", "x = 2")], None, ["wolfram_alpha"]),
    "with_custom_tools": ([_m("user", "Weather, then search"),
                           _m("assistant", "", tool_calls=[_call("get_weather", {"city": "Oslo"})]),
                           _m("tool", "rain"),
                           _m("assistant", "", tool_calls=[_call("brave_search", {"query": "oslo rain"})]),
                           _m("tool", "results")], TOOLS, ["brave_search"]),
    "custom_call_not_builtin": ([_m("user", "Up?"), _m("assistant", "", tool_calls=[_call("ping", {})]),
                                 _m("tool", "pong")], [PING], ["brave_search"]),
}


def test_builtin_tools_match_transformers(cli, llama):
    version, template, config = llama
    checked = 0
    for case, (messages, tools, builtin) in BUILTIN_CASES.items():
        for gen in (True, False):
            for in_user in ((True, False) if tools else (None,)):
                kw = {"tools": tools} if tools else {}
                if in_user is not None:
                    kw["tools_in_user_message"] = in_user
                want = render(template, messages, add_generation_prompt=gen, date_string="05 Dec 2026",
                              builtin_tools=builtin, **kw)
                r = chat_format(cli, config, messages, tools=tools, add_generation_prompt=gen,
                                date="05 Dec 2026", tools_in_user_message=in_user, builtin_tools=builtin)
                assert r.returncode == 0, f"{version} {case}: {r.stderr.decode()}"
                got = r.stdout.decode("utf-8")
                assert got == want, f"{version} {case} gen={gen} in_user={in_user}"
                if version != "3.2":
                    assert "Environment: ipython\n" in want
                    calls = any("tool_calls" in m for m in messages)
                    assert ("<|eom_id|>" in want) == calls, (version, case)
                else:
                    assert "<|python_tag|>" not in want and "<|eom_id|>" not in want
                checked += 1
    assert checked == 2 * sum(2 if tools else 1 for _, tools, _ in BUILTIN_CASES.values())


def test_builtin_call_arguments_must_be_strings(cli, llama):
    """The template joins a builtin call's arguments as strings: a number
    fails in transformers and is an invalid_argument here (3.1, 3.3); 3.2
    does not read builtin_tools and renders the call as JSON."""
    version, template, config = llama
    messages = [_m("user", "Solve"), _m("assistant", "", tool_calls=[_call("wolfram_alpha", {"query": 2})])]
    r = chat_format(cli, config, messages, builtin_tools=["wolfram_alpha"])
    if version == "3.2":
        assert r.returncode == 0
        assert r.stdout.decode("utf-8") == render(template, messages, add_generation_prompt=True,
                                                  builtin_tools=["wolfram_alpha"])
        return
    with pytest.raises(Exception):
        render(template, messages, add_generation_prompt=True, builtin_tools=["wolfram_alpha"])
    assert r.returncode == 2 and b"[invalid_argument]" in r.stderr and b"not a string" in r.stderr, \
        r.stderr.decode()
