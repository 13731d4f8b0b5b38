"""The Responses API (POST /v1/responses, stateless) through the official
openai client on the default model: text, `responses.parse` with a pydantic
model (the output validates), function tools with a tool result fed back,
the streamed event sequence in order and equal to the non-streamed output,
and 400s for what a stateless server cannot do."""

import json

import jsonschema
import openai
import pydantic
import pytest
from server_util import Server
from test_server_tools import SCHEMAS, TOOLS

FLAT_TOOLS = [{"type": "function", **t["function"]} for t in TOOLS]


class Person(pydantic.BaseModel):
    name: str
    age: int
    tags: list[str]


@pytest.fixture(scope="module")
def client(cli):
    server = Server(cli, "--parallel", 2)
    yield openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=120)
    assert server.stop() == 0


def test_text(client):
    r = client.responses.create(
        model="default",
        input="Say hello.",
        instructions="Be brief.",
        max_output_tokens=20,
        temperature=0,
    )
    assert r.object == "response" and r.id.startswith("resp_")
    assert r.status in ("completed", "incomplete")
    assert isinstance(r.output_text, str) and r.output_text
    assert r.usage.input_tokens > 0 and 0 < r.usage.output_tokens <= 20
    if r.status == "incomplete":
        assert r.incomplete_details.reason == "max_output_tokens"


def test_parse_with_pydantic(client):
    for seed in range(3):
        r = client.responses.parse(
            model="default",
            input="Make up a person.",
            text_format=Person,
            max_output_tokens=200,
            temperature=1.0,
            extra_body={"seed": seed},
        )
        assert r.status == "completed", r
        assert isinstance(r.output_parsed, Person)
        jsonschema.validate(json.loads(r.output_text), Person.model_json_schema())


def test_function_tools_and_results(client):
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    r = client.responses.create(
        model="default",
        input=ask,
        tools=FLAT_TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        max_output_tokens=200,
        temperature=0,
    )
    calls = [o for o in r.output if o.type == "function_call"]
    assert len(calls) == 1
    jsonschema.validate(json.loads(calls[0].arguments), SCHEMAS[calls[0].name])
    named = client.responses.create(
        model="default",
        input=ask,
        tools=FLAT_TOOLS,
        tool_choice={"type": "function", "name": "get_time"},
        parallel_tool_calls=False,
        max_output_tokens=200,
    )
    assert [o.name for o in named.output if o.type == "function_call"] == ["get_time"]
    follow = ask + [
        {
            "type": "function_call",
            "call_id": calls[0].call_id,
            "name": calls[0].name,
            "arguments": calls[0].arguments,
        },
        {
            "type": "function_call_output",
            "call_id": calls[0].call_id,
            "output": json.dumps({"temperature": 21}),
        },
    ]
    r2 = client.responses.create(
        model="default",
        input=follow,
        tools=FLAT_TOOLS,
        tool_choice="none",
        max_output_tokens=20,
        temperature=0,
    )
    assert r2.output_text and r2.usage.input_tokens > r.usage.input_tokens


def test_stream_events_in_order(client):
    args = {
        "model": "default",
        "input": "Count to five.",
        "max_output_tokens": 30,
        "temperature": 0,
    }
    whole = client.responses.create(**args)
    events = list(client.responses.create(stream=True, **args))
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] in ("response.completed", "response.incomplete")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    for t in (
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ):
        assert t in types, t
    assert types.index("response.output_item.added") < types.index("response.output_text.delta")
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == whole.output_text == events[-1].response.output_text


def test_stream_function_call(client):
    args = {
        "model": "default",
        "input": "Weather in Paris?",
        "tools": FLAT_TOOLS,
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_output_tokens": 200,
        "temperature": 0,
    }
    whole = client.responses.create(**args)
    events = list(client.responses.create(stream=True, **args))
    done = [e.arguments for e in events if e.type == "response.function_call_arguments.done"]
    pieces = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(done) == 1 and "".join(pieces) == done[0]
    # The arguments go out as they are written, after the item that names the call.
    assert len(pieces) > 1, pieces
    types = [e.type for e in events]
    assert types.index("response.output_item.added") < types.index(
        "response.function_call_arguments.delta"
    )
    final = [o for o in events[-1].response.output if o.type == "function_call"]
    assert final[0].arguments == done[0]
    assert [(o.name, o.arguments) for o in whole.output if o.type == "function_call"] == [
        (final[0].name, done[0])
    ]


@pytest.mark.parametrize(
    "body,param",
    [
        ({"input": "x", "previous_response_id": "resp_1"}, "previous_response_id"),
        ({"input": [{"type": "web_search_call"}]}, "input[0].type"),
        ({"input": "x", "tools": [{"type": "web_search"}]}, "tools[0].type"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
            "input[0].content[0].type",
        ),
        ({"input": "x", "max_output_tokens": 0}, "max_output_tokens"),
        (
            {"input": "x", "text": {"format": {"type": "json_schema", "name": "x"}}},
            "text.format.schema",
        ),
        ({"input": "x", "tools": [{"type": "function", "name": "bad name"}]}, "tools[0].name"),
        ({}, "input"),
    ],
)
def test_bad_requests_are_400s(client, body, param):
    with pytest.raises(openai.BadRequestError) as e:
        client.post("/responses", cast_to=object, body={"model": "default", **body})
    assert e.value.body["param"] == param, e.value.body
