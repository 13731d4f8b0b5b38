"""`nextok gguf-info --json` against the official gguf package.

Files are written with gguf.GGUFWriter and read back two ways: our CLI dump
and gguf.GGUFReader (the oracle). A real model (SmolLM2-135M, Q4_1) is also
compared when NEXTOK_SMOLLM2_GGUF names its .gguf file; see docs/gguf.md.
"""

import json
import math
import os

import pytest

from conftest import run_cli, missing_fixture

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

VT = gguf.GGUFValueType
QT = gguf.GGMLQuantizationType

TYPE_NAMES = {
    VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16",
    VT.UINT32: "u32", VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool",
    VT.STRING: "string", VT.ARRAY: "array", VT.UINT64: "u64", VT.INT64: "i64",
    VT.FLOAT64: "f64",
}

TOKENS = ["<s>", "</s>", "héllo", "Ġworld", "日本語", "\U0001F600", "", "a b", "\n", "ü" * 40]

SCALARS = [
    ("t.u8", 255, VT.UINT8), ("t.i8", -128, VT.INT8), ("t.u16", 65535, VT.UINT16),
    ("t.i16", -32768, VT.INT16), ("t.u32", 4294967295, VT.UINT32), ("t.i32", -2147483648, VT.INT32),
    ("t.u64", 2**64 - 1, VT.UINT64), ("t.i64", -(2**63), VT.INT64), ("t.f32", 0.1, VT.FLOAT32),
    ("t.f64", 1e-300, VT.FLOAT64), ("t.true", True, VT.BOOL), ("t.false", False, VT.BOOL),
    ("t.str", "naïve — ✓ 漢字", VT.STRING), ("t.empty_str", "", VT.STRING),
]

ARRAYS = [
    ("tokenizer.ggml.tokens", TOKENS, VT.STRING),
    ("tokenizer.ggml.token_type", [3, 3, 1, 1, 1, 1, 1, 1, 4, 1], VT.INT32),
    ("tokenizer.ggml.scores", [0.0, -1.5, 2.25, -1e30, 3.4e38, 1e-40, 0.1, 0.2, 0.3, 0.4], VT.FLOAT32),
    ("t.u8s", list(range(0, 256, 7)), VT.UINT8),
    ("t.i64s", [-(2**63), 0, 2**63 - 1], VT.INT64),
    ("t.u64s", [0, 2**64 - 1], VT.UINT64),
    ("t.f64s", [math.pi, -math.e, 1e308], VT.FLOAT64),
    ("t.bools", [True, False, True], VT.BOOL),
    ("t.long", list(range(1000)), VT.UINT32),
]


def write_gguf(path, alignment=None):
    w = gguf.GGUFWriter(str(path), "llama")
    if alignment is not None:
        w.add_custom_alignment(alignment)
    for key, val, vt in SCALARS:
        w.add_key_value(key, val, vt)
    for key, val, vt in ARRAYS:
        w.add_key_value(key, val, VT.ARRAY, sub_type=vt)
    w.add_string("tokenizer.chat_template", "{% for m in messages %}{{ m['content'] }}{% endfor %}")
    rng = np.random.default_rng(0)
    w.add_tensor("token_embd.weight", rng.standard_normal((10, 64)).astype(np.float32))
    w.add_tensor("blk.0.attn_norm.weight", rng.standard_normal((64,)).astype(np.float16))
    w.add_tensor("blk.0.ffn_up.weight", rng.integers(0, 255, (3, 2 * 34), dtype=np.uint8),
                 raw_dtype=QT.Q8_0)
    w.add_tensor("blk.0.ffn_down.weight", rng.integers(0, 255, (2, 210), dtype=np.uint8),
                 raw_dtype=QT.Q6_K)
    w.add_tensor("output.weight", rng.integers(0, 255, (4, 2, 16), dtype=np.uint8),
                 raw_dtype=QT.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def dump(cli, path, *flags):
    return json.loads(run_cli(cli, "gguf-info", path, "--json", *flags).stdout)


def same_number(got, want, vtype):
    if vtype == VT.FLOAT32:
        return np.float32(got) == np.float32(want) or (math.isnan(got) and math.isnan(want))
    if vtype == VT.FLOAT64:
        return got == want
    return got == want and type(got) is type(want)


def check_against_reader(ours, path):
    """Every field and tensor GGUFReader sees, our dump reports identically."""
    r = gguf.GGUFReader(str(path))
    fields = {k: f for k, f in r.fields.items() if not k.startswith("GGUF.")}
    assert list(ours["metadata"]) == list(fields)
    assert ours["version"] == int(r.fields["GGUF.version"].contents())
    assert ours["alignment"] == r.alignment
    assert ours["data_offset"] == r.data_offset
    for key, f in fields.items():
        got = ours["metadata"][key]
        assert got["type"] == TYPE_NAMES[f.types[0]], key
        want = f.contents()
        if f.types[0] == VT.ARRAY:
            et = f.types[-1]
            assert got["element_type"] == TYPE_NAMES[et], key
            assert got["count"] == len(want), key
            assert len(got["value"]) == len(want), key
            for g, w in zip(got["value"], want):
                assert same_number(g, w, et) if et != VT.STRING else g == w, (key, g, w)
        elif f.types[0] == VT.STRING:
            assert got["value"] == want, key
        else:
            assert same_number(got["value"], want, f.types[0]), (key, got, want)
    assert len(ours["tensors"]) == len(r.tensors)
    for got, t in zip(ours["tensors"], r.tensors):
        assert got["name"] == t.name
        assert got["type_id"] == int(t.tensor_type)
        assert got["type"] == t.tensor_type.name
        assert got["dims"] == [int(x) for x in t.shape]
        assert got["n_elements"] == int(t.n_elements)
        assert got["n_bytes"] == int(t.n_bytes)
        assert got["file_offset"] == int(t.data_offset)
        assert got["offset"] == int(t.data_offset) - r.data_offset


@pytest.mark.parametrize("alignment", [None, 64])
def test_dump_matches_writer_and_reader(cli, tmp_path, alignment):
    path = tmp_path / "t.gguf"
    write_gguf(path, alignment)
    ours = dump(cli, path, "--full")
    check_against_reader(ours, path)
    md = ours["metadata"]
    # And against what we wrote, literally.
    for key, val, vt in SCALARS:
        assert md[key]["type"] == TYPE_NAMES[vt]
        assert same_number(md[key]["value"], val, vt) if vt != VT.STRING else md[key]["value"] == val
    for key, val, vt in ARRAYS:
        assert md[key]["element_type"] == TYPE_NAMES[vt]
        assert md[key]["count"] == len(val)
        for g, w in zip(md[key]["value"], val):
            assert g == w if vt != VT.FLOAT32 else np.float32(g) == np.float32(w)
    assert md["tokenizer.ggml.tokens"]["value"] == TOKENS
    assert ours["alignment"] == (alignment or 32)
    t = {x["name"]: x for x in ours["tensors"]}
    assert t["token_embd.weight"]["dims"] == [64, 10] and t["token_embd.weight"]["type"] == "F32"
    assert t["blk.0.ffn_up.weight"]["dims"] == [64, 3] and t["blk.0.ffn_up.weight"]["n_bytes"] == 204
    assert t["blk.0.ffn_down.weight"]["dims"] == [256, 2]
    assert t["output.weight"]["dims"] == [8, 2, 4]


def test_long_arrays_are_summarised(cli, tmp_path):
    path = tmp_path / "t.gguf"
    write_gguf(path)
    md = dump(cli, path)["metadata"]
    long = md["t.long"]
    assert long["count"] == 1000 and long["truncated"] is True
    assert long["head"] == list(range(8)) and "value" not in long
    assert md["tokenizer.ggml.tokens"]["value"] == TOKENS  # 10 <= 16: shown in full
    text = run_cli(cli, "gguf-info", path).stdout
    assert "tokenizer.ggml.tokens" in text and "array<u32>[1000]" in text


def test_corrupt_file_is_reported(cli, tmp_path):
    path = tmp_path / "t.gguf"
    write_gguf(path)
    data = path.read_bytes()
    (tmp_path / "trunc.gguf").write_bytes(data[: len(data) // 2])
    r = run_cli(cli, "gguf-info", tmp_path / "trunc.gguf", "--json", check=False)
    assert r.returncode != 0
    assert "malformed" in r.stderr.lower() and "trunc.gguf" in r.stderr and "at offset" in r.stderr
    (tmp_path / "v1.gguf").write_bytes(data[:4] + (1).to_bytes(4, "little") + data[8:])
    r = run_cli(cli, "gguf-info", tmp_path / "v1.gguf", check=False)
    assert r.returncode != 0 and "version 1 is not supported" in r.stderr
    r = run_cli(cli, "gguf-info", tmp_path / "missing.gguf", check=False)
    assert r.returncode != 0 and "missing.gguf" in r.stderr


def test_real_smollm2_matches_reader(cli):
    path = os.environ.get("NEXTOK_SMOLLM2_GGUF")
    if not path or not os.path.exists(path):
        missing_fixture("NEXTOK_SMOLLM2_GGUF does not name the SmolLM2 .gguf "
                    "(run scripts/fetch_smollm2.sh, which prints its path)")
    ours = dump(cli, path, "--full")
    check_against_reader(ours, path)
    md = ours["metadata"]
    assert md["tokenizer.ggml.model"]["value"] == "gpt2"
    assert md["tokenizer.ggml.tokens"]["count"] == 49152
    assert len(ours["tensors"]) == 272
