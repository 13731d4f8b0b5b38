"""Llama 3.1 JSON tool calls through the official openai client
(docs/tool-calls.md): `nextok serve` on the default model (SmolLM2) with
`--chat-template-file` set to the real Llama 3.1 template, read from the
llama-cpp-python sdist at test time. The prompt is the template's (its token
count equals that of transformers' rendering, also with
chat_template_kwargs tools_in_user_message and builtin_tools, and with a
history holding a builtin call); required and named choices
give exactly one call, even with parallel_tool_calls, whose arguments
validate with jsonschema; auto gives text or a valid call, and a turn pushed
to open with '{' is a valid call; streamed deltas
reassemble to the non-streamed call, as do the Responses API's items and
events; a history with a call and its result is accepted, two calls in one
message are a 400; an unsupported template file
stops the server with a clear error."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import jsonschema
import openai
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server_util import GGUF, Server, stream_calls  # noqa: E402
from test_llama31_chat import VERSIONS, sdist_member  # noqa: E402
from tool_fixtures import ASK, SCHEMAS, TOOLS  # noqa: E402


@pytest.fixture(scope="module")
def template_file(tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("llama31") / "llama-3.1.jinja"
    path.write_text(sdist_member(VERSIONS["3.1"]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def client(cli, template_file):
    server = Server(cli, "--parallel", 2, "--chat-template-file", template_file)
    yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=120)
    assert server.stop() == 0


def check_call(calls, names=None) -> None:
    assert calls and len(calls) == 1, calls
    c = calls[0]
    assert c.type == "function" and c.id.startswith("call_")
    assert c.function.name in (names or SCHEMAS)
    jsonschema.validate(json.loads(c.function.arguments), SCHEMAS[c.function.name])


BUILTIN_HISTORY = [
    {"role": "user", "content": "Find the news."},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "brave_search", "arguments": {"query": "news \"today\""}}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "three stories"},
]


def wire(messages):
    """The messages as the client sends them: arguments as JSON text."""
    out = json.loads(json.dumps(messages))
    for m in out:
        for c in m.get("tool_calls", []):
            c["function"]["arguments"] = json.dumps(c["function"]["arguments"])
    return out


@pytest.mark.parametrize("kwargs,messages", [
    ({}, ASK),
    ({"tools_in_user_message": False}, ASK),
    ({"builtin_tools": ["brave_search", "wolfram_alpha", "code_interpreter"]}, ASK),
    ({"builtin_tools": ["brave_search"]}, ASK + BUILTIN_HISTORY),
], ids=["default", "tools_in_system", "builtin_tools", "builtin_call_history"])
def test_prompt_is_the_llama31_template(cli, client, template_file, kwargs, messages):
    from transformers.utils.chat_template_utils import render_jinja_template

    r = client.chat.completions.create(
        model="default",
        messages=wire(messages),
        tools=TOOLS,
        tool_choice="none",
        max_tokens=1,
        extra_body={"chat_template_kwargs": kwargs} if kwargs else None,
    )
    counts = set()
    for bos in ("", "<|endoftext|>", "<|im_start|>"):
        out, _ = render_jinja_template(
            conversations=[messages],
            chat_template=template_file.read_text(),
            tools=TOOLS,
            add_generation_prompt=True,
            bos_token=bos,
            eos_token="",
            **kwargs,
        )
        ids = subprocess.run(
            [cli, "tokenize", "--tokenizer", GGUF, "--json", out[0]],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        counts.add(len(json.loads(ids)["ids"]))
    assert r.usage.prompt_tokens in counts, (r.usage.prompt_tokens, counts)


@pytest.mark.parametrize("seed", [None, 1, 2])
@pytest.mark.parametrize("parallel", [False, True])
def test_required_gives_one_valid_call(client, seed, parallel):
    sampled = {} if seed is None else {"temperature": 1.0, "seed": seed}
    r = client.chat.completions.create(
        model="default",
        messages=ASK,
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=parallel,
        max_tokens=200,
        **sampled,
    )
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content is None
    check_call(choice.message.tool_calls)


def test_named_choice_calls_that_function(client):
    for seed in range(3):
        r = client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=TOOLS,
            max_tokens=200,
            temperature=1.0,
            seed=seed,
            tool_choice={"type": "function", "function": {"name": "get_time"}},
        )
        check_call(r.choices[0].message.tool_calls, names={"get_time"})


def test_auto_gives_text_or_a_valid_call(client):
    kinds = set()
    for seed in range(6):
        r = client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=TOOLS,
            tool_choice="auto",
            max_tokens=80,
            temperature=1.0,
            seed=seed,
        )
        choice = r.choices[0]
        if choice.message.tool_calls:
            kinds.add("call")
            check_call(choice.message.tool_calls)
            assert choice.finish_reason == "tool_calls"
        else:
            kinds.add("text")
            assert isinstance(choice.message.content, str)
            if choice.finish_reason == "stop":
                # A finished turn that opens with '{' is a call, never text.
                assert not choice.message.content.lstrip().startswith("{"), choice.message.content
    assert kinds


def test_auto_constrains_a_call_once_it_opens(cli, client):
    """Pushed to open with '{', an auto turn becomes a call, and the schema
    holds from there on (the bias stays on '{' all along)."""
    brace = json.loads(
        subprocess.run(
            [cli, "tokenize", "--tokenizer", GGUF, "--json", "{"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )["ids"]
    assert len(brace) == 1
    for seed in (None, 1):
        sampled = {} if seed is None else {"temperature": 1.0, "seed": seed}
        r = client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=TOOLS,
            tool_choice="auto",
            max_tokens=200,
            logit_bias={str(brace[0]): 100},
            **sampled,
        )
        choice = r.choices[0]
        assert choice.finish_reason == "tool_calls", choice
        check_call(choice.message.tool_calls)


def test_stream_reassembles_to_the_same_call(client):
    args = {
        "model": "default",
        "messages": ASK,
        "tools": TOOLS,
        "tool_choice": "required",
        "max_tokens": 200,
        "temperature": 0,
    }
    whole = client.chat.completions.create(**args).choices[0].message.tool_calls
    calls, content, finish = stream_calls(client.chat.completions.create(stream=True, **args))
    assert finish == "tool_calls"
    assert content == ""  # the call's JSON is never streamed as text
    # The pieces add up to exactly the unstreamed arguments, sent as written.
    got = [(c["name"], c["arguments"]) for _, c in sorted(calls.items())]
    assert got == [(c.function.name, c.function.arguments) for c in whole]
    assert all(c["id"] and c["pieces"] > 1 for c in calls.values()), calls


def test_history_with_a_call_and_its_result(client):
    first = client.chat.completions.create(
        model="default",
        messages=ASK,
        tools=TOOLS,
        tool_choice="required",
        max_tokens=200,
        temperature=0,
    )
    m = first.choices[0].message
    history = ASK + [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [c.model_dump() for c in m.tool_calls],
        },
        {
            "role": "tool",
            "tool_call_id": m.tool_calls[0].id,
            "content": json.dumps({"temperature": 21}),
        },
    ]
    r = client.chat.completions.create(
        model="default",
        messages=history,
        tools=TOOLS,
        tool_choice="auto",
        max_tokens=30,
        temperature=0,
    )
    assert r.usage.prompt_tokens > first.usage.prompt_tokens
    c = r.choices[0]
    assert c.message.tool_calls or isinstance(c.message.content, str)
    two = history[:1] + [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [c.model_dump() for c in m.tool_calls] * 2,
        }
    ]
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="default", messages=two, tools=TOOLS, max_tokens=5)
    assert "single tool-calls" in e.value.body["message"], e.value.body


def test_unsupported_template_file_stops_the_server(cli, tmp_path):
    bad = tmp_path / "bad.jinja"
    bad.write_text("{{ '[INST] ' + messages[0]['content'] + ' [/INST]' }}", encoding="utf-8")
    r = subprocess.run(
        [cli, "serve", "--model", GGUF, "--port", "0", "--chat-template-file", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert "unsupported chat template" in r.stderr, r.stderr


def test_responses_api_function_call(client):
    """The Responses API reads the same format: one function_call item,
    streamed arguments equal to the final ones, no text streamed."""
    flat = [{"type": "function", **t["function"]} for t in TOOLS]
    args = {
        "model": "default",
        "input": ASK,
        "tools": flat,
        "tool_choice": "required",
        "max_output_tokens": 200,
        "temperature": 0,
    }
    r = client.responses.create(**args)
    calls = [o for o in r.output if o.type == "function_call"]
    assert len(calls) == 1 and not [o for o in r.output if o.type == "message"], r.output
    jsonschema.validate(json.loads(calls[0].arguments), SCHEMAS[calls[0].name])
    events = list(client.responses.create(stream=True, **args))
    assert not [e for e in events if e.type == "response.output_text.delta"]
    done = [e.arguments for e in events if e.type == "response.function_call_arguments.done"]
    assert done == [calls[0].arguments]
