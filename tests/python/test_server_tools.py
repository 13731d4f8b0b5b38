"""Tool calling through the official openai client (docs/tool-calls.md), on
the default model (SmolLM2, ChatML rendered Hermes-style): required and named
choices give calls whose arguments validate with jsonschema, for greedy and
for sampled outputs; auto gives text or valid calls; streamed deltas
reassemble to the non-streamed calls; a history with tool results is
accepted; malformed tools are 400s naming the field."""

import json

import jsonschema
import openai
import pytest
from server_util import Server, stream_calls

from tool_fixtures import ASK, SCHEMAS, TOOLS, WEATHER


@pytest.fixture(scope="module")
def client(cli):
    server = Server(cli, "--parallel", 2)
    yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=120)
    assert server.stop() == 0


def check_calls(calls, names=None):
    assert calls, "no tool calls"
    for c in calls:
        assert c.type == "function" and c.id.startswith("call_")
        assert c.function.name in (names or SCHEMAS)
        jsonschema.validate(json.loads(c.function.arguments), SCHEMAS[c.function.name])


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_required_gives_valid_calls(client, seed):
    sampled = {} if seed is None else {"temperature": 1.0, "seed": seed}
    r = client.chat.completions.create(
        model="default",
        messages=ASK,
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        max_tokens=200,
        **sampled,
    )
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert len(choice.message.tool_calls) == 1
    check_calls(choice.message.tool_calls)


def test_parallel_calls_are_each_valid(client):
    # The model may go on calling until max_tokens; every complete call counts.
    for seed in range(2):
        r = client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=TOOLS,
            tool_choice="required",
            max_tokens=100,
            temperature=1.0,
            seed=seed,
        )
        check_calls(r.choices[0].message.tool_calls)
        assert r.choices[0].finish_reason in ("tool_calls", "length")


def test_named_choice_calls_that_function(client):
    for seed in range(3):
        r = client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=TOOLS,
            max_tokens=200,
            temperature=1.0,
            seed=seed,
            parallel_tool_calls=False,
            tool_choice={"type": "function", "function": {"name": "get_time"}},
        )
        calls = r.choices[0].message.tool_calls
        assert len(calls) == 1
        check_calls(calls, names={"get_time"})


def test_auto_gives_text_or_valid_calls(client):
    kinds = set()
    for seed in range(3):
        r = client.chat.completions.create(
            model="default",
            messages=ASK,
            tools=TOOLS,
            tool_choice="auto",
            max_tokens=60,
            temperature=1.0,
            seed=seed,
        )
        m = r.choices[0].message
        if m.tool_calls:
            kinds.add("calls")
            check_calls(m.tool_calls)
            assert r.choices[0].finish_reason == "tool_calls"
        else:
            kinds.add("text")
            assert isinstance(m.content, str)
    assert kinds, "no responses"


def test_stream_reassembles_to_the_same_calls(client):
    args = {
        "model": "default",
        "messages": ASK,
        "tools": TOOLS,
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_tokens": 200,
        "temperature": 0,
    }
    whole = client.chat.completions.create(**args).choices[0].message.tool_calls
    calls, _, finish = stream_calls(client.chat.completions.create(stream=True, **args))
    assert finish == "tool_calls"
    # The pieces add up to exactly the arguments of the same call unstreamed.
    got = [(c["name"], c["arguments"]) for _, c in sorted(calls.items())]
    assert got == [(c.function.name, c.function.arguments) for c in whole]
    for _, c in sorted(calls.items()):
        json.loads(c["arguments"])
        # Arguments go out as the model writes them, not in one piece at the end.
        assert c["pieces"] > 1, c


def test_history_with_tool_results(client):
    first = client.chat.completions.create(
        model="default",
        messages=ASK,
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        max_tokens=200,
        temperature=0,
    )
    m = first.choices[0].message
    history = (
        ASK
        + [
            {
                "role": "assistant",
                "content": m.content,
                "tool_calls": [c.model_dump() for c in m.tool_calls],
            },
        ]
        + [
            {"role": "tool", "tool_call_id": c.id, "content": json.dumps({"temperature": 21})}
            for c in m.tool_calls
        ]
    )
    r = client.chat.completions.create(
        model="default",
        messages=history,
        tools=TOOLS,
        tool_choice="none",
        max_tokens=30,
        temperature=0,
    )
    assert isinstance(r.choices[0].message.content, str)
    assert r.choices[0].message.tool_calls is None
    assert r.usage.prompt_tokens > first.usage.prompt_tokens


@pytest.mark.parametrize(
    "tools,choice,param",
    [
        ([{"type": "function"}], "auto", "tools[0].function"),
        ([{"type": "retrieval", "function": {"name": "x"}}], "auto", "tools[0].type"),
        (
            [{"type": "function", "function": {"name": "bad name"}}],
            "auto",
            "tools[0].function.name",
        ),
        (
            [{"type": "function", "function": {"name": "f", "parameters": []}}],
            "auto",
            "tools[0].function.parameters",
        ),
        (
            [{"type": "function", "function": {"name": "f", "parameters": {"type": "nope"}}}],
            "required",
            "tools",
        ),
        ([WEATHER, WEATHER], "auto", "tools[1].function.name"),
        (TOOLS, {"type": "function", "function": {"name": "missing"}}, "tool_choice.function.name"),
        (TOOLS, "sometimes", "tool_choice"),
    ],
)
def test_malformed_tools_are_400s(client, tools, choice, param):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model="default", messages=ASK, tools=tools, tool_choice=choice, max_tokens=5
        )
    assert e.value.body["param"] == param, e.value.body
