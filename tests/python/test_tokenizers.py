"""nextok's tokenizers against HF `tokenizers`, on the four real tokenizer.json
files (Qwen3, Llama-3.1, Gemma-3, gpt-oss):

1. every id's bytes and kind (`nextok vocab --dump`) equal a reference built
   from HF's vocabulary, cross-checked with `Tokenizer.decode([id])`;
2. `nextok tokenize` equals `Tokenizer.encode(text, add_special_tokens=False)`
   on a large hand-written and seeded-random corpus, with and without special
   token matching (`--no-special` vs `encode_special_tokens = True`);
3. every Unicode scalar value goes through the pre-tokenizer regex in a few
   contexts (Oniguruma in HF vs nextok's engine: Unicode class differences);
4. `nextok detokenize` of HF's ids gives back the text's bytes;
5. the vocab summary's eos/bos/pad ids are the ids transformers resolves from
   tokenizer_config.json.

The tokenizer directories come from NEXTOK_TOKENIZERS (default
build/dev/tokenizers, where the build decompresses them)."""
import functools
import json
import os
import pathlib
import random
import re
import subprocess
import tempfile
import time
import unicodedata

import pytest

from conftest import ROOT, byte_level_inverse, run_cli, missing_fixture

tokenizers = pytest.importorskip("tokenizers")

TOKENIZERS = ["qwen3", "llama3.1", "gemma3", "gpt-oss"]
BYTE_LEVEL = {"qwen3", "llama3.1", "gpt-oss"}
REGEX_TOKENIZERS = ["qwen3", "llama3.1", "gpt-oss"]  # their Split regexes differ
NFC = {"qwen3"}  # the only normalizer besides Gemma's " " -> "▁"


# ---------------------------------------------------------------- helpers

def _tok_root():
    env = os.environ.get("NEXTOK_TOKENIZERS")
    return pathlib.Path(env) if env else ROOT / "build" / "dev" / "tokenizers"


def _tok_dir(name):
    d = _tok_root() / name
    if not (d / "tokenizer.json").is_file():
        missing_fixture(f"tokenizer {name!r} not found at {d} (build the dev preset, "
                    f"which decompresses them, or set NEXTOK_TOKENIZERS)")
    return d


@functools.lru_cache(maxsize=None)
def _hf(name, encode_special_tokens=False):
    tok = tokenizers.Tokenizer.from_file(str(_tok_dir(name) / "tokenizer.json"))
    tok.encode_special_tokens = encode_special_tokens
    return tok


def _popen(args, stdout, stderr):
    """Popen that waits out a rebuild of the binary (briefly missing/busy)."""
    for attempt in range(30):
        try:
            return subprocess.Popen(args, stdout=stdout, stderr=stderr)
        except OSError:  # ENOENT, ETXTBSY while the lead relinks
            if attempt == 29:
                raise
            time.sleep(2)


class _CliJob:
    """A nextok call running in the background (the HF side runs meanwhile)."""

    def __init__(self, cli, *args):
        self.args = [cli, *map(str, args)]
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.proc = _popen(self.args, self.out, self.err)

    def result(self):
        rc = self.proc.wait()
        self.out.seek(0)
        self.err.seek(0)
        out, err = self.out.read(), self.err.read()
        self.out.close()
        self.err.close()
        if rc != 0:
            raise AssertionError(f"{' '.join(self.args[:6])} ... failed (rc {rc}): "
                                 f"{err.decode(errors='replace')[:2000]}")
        return out


def _write_jsonl(texts):
    f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8", delete=False)
    with f:
        for t in texts:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    return f.name


class _Encode:
    """`nextok tokenize --input-jsonl` over many texts, started at once; with
    procs > 1 the texts are split over that many processes."""

    def __init__(self, cli, name, texts, no_special=False, procs=1):
        self.n = len(texts)
        extra = ["--no-special"] if no_special else []
        step = max(1, -(-len(texts) // procs))
        self.parts = []
        for a in range(0, max(1, len(texts)), step):
            path = _write_jsonl(texts[a:a + step])
            self.parts.append((path, _CliJob(cli, "tokenize", "--tokenizer", _tok_dir(name),
                                             "--input-jsonl", path, "--json", *extra)))

    def result(self):
        out = []
        try:
            for _, job in self.parts:
                out += job.result().decode("utf-8").splitlines()
        finally:
            for path, _ in self.parts:
                os.unlink(path)
        assert len(out) == self.n, f"nextok tokenize gave {len(out)} lines for {self.n} inputs"
        return [json.loads(line)["ids"] for line in out]


def _cli_encode(cli, name, texts, no_special=False):
    return _Encode(cli, name, texts, no_special).result()


def _hf_encode(name, texts, encode_special_tokens=False):
    tok = _hf(name, encode_special_tokens)
    return [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]


def _diff(name, text, want, got, label=""):
    tok = _hf(name)
    i = next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    lo, hi = max(0, i - 3), i + 6

    def show(ids):
        return ", ".join(f"{x}:{tok.id_to_token(x)!r}" for x in ids[lo:hi])

    return (f"[{name}{label}] text ({len(text)} chars) = {text[:300]!r}{'...' if len(text) > 300 else ''}\n"
            f"  first mismatch at index {i} (HF {len(want)} ids, nextok {len(got)} ids)\n"
            f"  HF     [{lo}:{hi}] {show(want)}\n"
            f"  nextok [{lo}:{hi}] {show(got)}")


def _compare(name, texts, want, got, label=""):
    assert len(want) == len(got) == len(texts)
    bad = [k for k in range(len(texts)) if want[k] != got[k]]
    if bad:
        msgs = [_diff(name, texts[k], want[k], got[k], label) for k in bad[:8]]
        pytest.fail(f"{len(bad)} of {len(texts)} texts encode differently from HF "
                    f"(first {len(msgs)} shown):\n" + "\n".join(msgs), pytrace=False)


@functools.lru_cache(maxsize=None)
def _dump(cli, name):
    r = run_cli(cli, "vocab", "--tokenizer", _tok_dir(name), "--dump")
    return [json.loads(line) for line in r.stdout.splitlines()]


@functools.lru_cache(maxsize=None)
def _summary(cli, name):
    return json.loads(run_cli(cli, "vocab", "--tokenizer", _tok_dir(name)).stdout)


# ------------------------------------------------ 1. every id's bytes, kind

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _reference_vocab(name):
    """id -> (bytes, kind) from HF's vocabulary alone."""
    tok = _hf(name)
    added = tok.get_added_tokens_decoder()
    size = max(tok.get_vocab_size(with_added_tokens=True), max(added) + 1 if added else 0)
    inv = byte_level_inverse()
    ref = {}
    for i in range(size):
        if i in added:
            content = added[i].content
            kind = "special" if added[i].special else "added"
            # HF runs every token, added ones included, through the decoder:
            # for Gemma that turns "▁" into " " (ids 138.. are "▁▁", "▁▁▁", ...).
            if name not in BYTE_LEVEL:
                content = content.replace("\u2581", " ")
            ref[i] = (content.encode("utf-8"), kind)
            continue
        s = tok.id_to_token(i)
        if s is None:
            ref[i] = (b"", "absent")
        elif name in BYTE_LEVEL:
            if all(ch in inv for ch in s):
                ref[i] = (bytes(inv[ch] for ch in s), "normal")
            else:
                ref[i] = (s.encode("utf-8"), "normal")
        else:
            m = _BYTE_TOKEN.fullmatch(s)
            if m:
                ref[i] = (bytes([int(m.group(1), 16)]), "byte")
            else:
                ref[i] = (s.replace("\u2581", " ").encode("utf-8"), "normal")
    return ref


@pytest.mark.parametrize("name", TOKENIZERS)
def test_every_id_bytes_and_kind_match_hf(cli, name):
    tok = _hf(name)
    dump = _dump(cli, name)
    ref = _reference_vocab(name)
    assert len(dump) == len(ref), f"nextok has {len(dump)} ids, HF {len(ref)}"
    assert len(dump) == tok.get_vocab_size(with_added_tokens=True)
    assert [e["id"] for e in dump] == list(range(len(dump))), "dump ids are not 0..size-1 in order"

    bad, bad_decode, decoded = [], [], 0
    for e in dump:
        i = e["id"]
        got = bytes.fromhex(e["hex"])
        want, kind = ref[i]
        if got != want or e["kind"] != kind:
            bad.append(f"  id {i} {tok.id_to_token(i)!r}: HF {want!r} ({kind}), "
                       f"nextok {got!r} ({e['kind']})")
        d = tok.decode([i], skip_special_tokens=False)
        if "\ufffd" not in d:
            decoded += 1
            if d.encode("utf-8") != got:
                bad_decode.append(f"  id {i} {tok.id_to_token(i)!r}: HF decode {d!r}, nextok {got!r}")
    assert not bad, f"{len(bad)} ids differ from the HF vocabulary:\n" + "\n".join(bad[:20])
    assert not bad_decode, (f"{len(bad_decode)} ids differ from HF decode([id]):\n"
                            + "\n".join(bad_decode[:20]))
    # The cross-check must have had something to check: most ids decode to valid UTF-8.
    assert decoded > 0.5 * len(dump), f"only {decoded} of {len(dump)} ids decoded without U+FFFD"

    kinds = {}
    for e in dump:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    if name not in BYTE_LEVEL:
        assert kinds.get("byte") == 256, f"Gemma should have 256 <0xNN> byte tokens, got {kinds}"
    assert kinds.get("special", 0) == sum(a.special for a in tok.get_added_tokens_decoder().values())


# ---------------------------------------------------------- the corpus

SPECIAL_STRINGS = [
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>",
    "</tool_call>", "<|vision_start|>", "<|fim_prefix|>",
    "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|reserved_special_token_0|>", "<|reserved_special_token_247|>", "<|python_tag|>",
    "<bos>", "<eos>", "<pad>", "<start_of_turn>", "<end_of_turn>", "<mask>", "[multimodal]",
    "<start_of_image>", "<unused0>", "<unused99>",
    "<|startoftext|>", "<|return|>", "<|start|>", "<|end|>", "<|message|>", "<|channel|>",
    "<|constrain|>", "<|call|>",
]
PARTIAL_SPECIALS = [
    "<|im_", "<|im_end", "im_end|>", "|im_end|>", "<|im end|>", "<|IM_END|>", "<<|im_end|>>",
    "<|eot_id", "<|eot_id|", "<start_of_turn", "start_of_turn>", "<|endoftext", "<think",
    "think>", "</think", "< think>", "<|", "|>", "<", ">", "<||>", "<|return", "<unused",
    "<|reserved_special_token_", "<0x41>", "<0xZZ>", "<0x0A><0x0A>",
]

PROSE = [
    "The quick brown fox jumps over the lazy dog. Isn't it?",
    "Größere Äpfel schmecken süßer, sagte Jürgen zögerlich über die Straße.",
    "Ça alors ! L'été dernier, à Noël, où étiez-vous ? Être ou ne pas être.",
    "Él soñó con una cigüeña en el año 2019; ¿qué más daba? ¡Olé!",
    "Żółć gęślą jaźń. Příliš žluťoučký kůň úpěl ďábelské ódy. Ærø og Ødegaard.",
    "Türkçe: ığdır, İstanbul, ISPARTA, ıIiİ. Română: școală, țară, ȘȚ.",
    "Tiếng Việt có dấu: Người ta bảo rằng mỗi ngày đều là một món quà.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. ЁЛКА ёлка.",
    "Українська мова: ґанок, їжак, єнот. Беларуская: ў, і.",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Ἀρχὴ ἥμισυ παντός. ΣΊΣΥΦΟΣ σίσυφος.",
    "我们今天下午三点在图书馆见面，然后一起去吃饭。繁體字：學習、語言、電腦。",
    "日本語の文章：東京は大きな都市です。カタカナ、ひらがな、ｶﾀｶﾅ、漢字。",
    "한국어 문장입니다. 오늘 날씨가 정말 좋네요! 서울특별시 강남구.",
    "اللغة العربية جميلة جداً، وهي لغة القرآن الكريم. مرحباً بالعالم!",
    "עברית: שלום עולם, מה שלומך היום? בְּרֵאשִׁית בָּרָא",
    "हिन्दी भाषा: नमस्ते दुनिया, आप कैसे हैं? क्षत्रिय, द्वार, श्री।",
    "ภาษาไทย: สวัสดีชาวโลก วันนี้อากาศดีมาก ไม่มีช่องว่างระหว่างคำ",
    "ქართული ენა, Հայերեն լեզու, አማርኛ ቋንቋ, ᏣᎳᎩ, ꯃꯤꯇꯩ, ᠮᠣᠩᠭᠣᠯ",
    "தமிழ் மொழி, తెలుగు భాష, ಕನ್ನಡ, മലയാളം, বাংলা ভাষা, ગુજરાતી, ਪੰਜਾਬੀ, සිංහල",
    "Mixed: English日本語Русский123عربي한국어 ελληνικά!",
    "𝐁𝐨𝐥𝐝 𝑖𝑡𝑎𝑙𝑖𝑐 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝕕𝕠𝕦𝕓𝕝𝕖 ｆｕｌｌｗｉｄｔｈ ＡＢＣ ﬁﬂ ǅǈǋ ꝺ",
]

CODE = [
    'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n'
    '    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
    '#include <vector>\n\ntemplate <typename T>\nT sum(const std::vector<T>& v) {\n'
    '\tT s{};\n\tfor (auto x : v) s += x;  // accumulate\n\treturn s;\n}\n',
    'fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n'
    '    println!("{:?}", v);\n}\n',
    "const f = async (x) => { await fetch(`/api/${x}?q=1&r=2`); return x ?? null; };\n",
    "SELECT u.id, COUNT(*) AS n\nFROM users u\nJOIN orders o ON o.user_id = u.id\n"
    "WHERE o.created_at >= '2024-01-01'\nGROUP BY u.id\nHAVING n > 3;\n",
    '#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.txt; do\n  echo "${f%.txt}" >> out.log\ndone\n',
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tch := make(chan int, 3)\n"
    "\tgo func() { ch <- 42 }()\n\tfmt.Println(<-ch)\n}\n",
    "main :: IO ()\nmain = mapM_ print [x | x <- [1..100], x `mod` 7 == 0]\n",
    "<html>\r\n  <body class=\"x\">\r\n    <p>Hello &amp; welcome&nbsp;!</p>\r\n  </body>\r\n</html>\r\n",
    "x = [1,2,3]; y = x[::-1]  # comment with tabs\t\t\tand spaces    \n\n\n",
    "if (a != b && c <= d || e >= f) { g <<= 2; h >>>= 1; i **= 3; }",
    "    \n        \n\t\n  x  \n",
    "%{\n#define MAX 100\n%}\n%%\n[0-9]+ { return NUM; }\n",
    "matrix = [[0.5, -1.25e-3], [3.14159, 2.71828]]\nprint(f\"{matrix!r:>20}\")\n",
]

JSON_TEXTS = [
    json.dumps({"name": "Zoë", "age": 31, "tags": ["a", "b"], "nested": {"x": None, "y": True}}),
    json.dumps({"name": "Zoë", "emoji": "😀", "cjk": "漢字"}, ensure_ascii=True),
    json.dumps([{"id": i, "v": i * 1.5} for i in range(12)], indent=2),
    '{"a":1,"b":[1,2,{"c":"d\\n\\t\\"e\\""}],"f":-0.000123,"g":1e+300}',
    '{\n    "key": "value",\n    "list": [\n        1,\n        2\n    ]\n}',
]

EMOJI = [
    "👍 👍🏻 👍🏼 👍🏽 👍🏾 👍🏿 ✋🏽 🤝🏿",
    "🇩🇪🇫🇷🇯🇵🇺🇸🇧🇷 🇺🇳 🇦 lone regional indicator",
    "👩‍👩‍👧‍👦 👨🏽‍💻 🧑‍🚀 🏳️‍🌈 🏴‍☠️ ❤️‍🔥 👁️‍🗨️",
    "1️⃣ #️⃣ *️⃣ ©️ ®️ ™️ ☺️ ☺︎ ⚠ ⚠️",
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿 🏴󠁧󠁢󠁷󠁬󠁳󠁿 tag sequences",
    "😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩😘",
    "I ❤ NY 🗽, 🍕🍕🍕 and ☕ at 7:00 a.m. 🎉🎉",
    "🫠🫢🫣🫤🫥🪿🫎🪼 newer emoji",
]

CONTRACTIONS = []
for w in ["don't", "I'm", "we've", "they're", "she'll", "he'd", "it's", "can't", "y'all"]:
    CONTRACTIONS += [w, w.upper(), w.title(), "".join(
        ch.upper() if k % 2 else ch for k, ch in enumerate(w))]
CONTRACTIONS += [
    "it'S IT's iT'S", "the cat'ſ hat", "'ſ 'ſt 'ſ's", "dog’s dog‘s dog＇s dogʼs", "'s's's's",
    "'S'T'RE'VE'M'LL'D", "'Re 'rE 'Ve 'vE 'Ll 'lL", "''s ' s 's' ''", "\u2019s \u2019S \u02bcs",
    "'K 'k 'K 'ß 'İ 'ı 'ſs 'ﬆ", "rock'n'roll o'clock ma'am", "I'd've y'all'd've",
]

WHITESPACE = []
for n in [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 199, 200]:
    for ws in [" " * n, "\t" * n, "\n" * n, "\r\n" * n, (" \t" * n)[:n], (" \n" * n)[:n],
               ("\t \r\n" * n)[: max(1, n)], " " * n + "\n", "\n" + " " * n, " " * n + "\t"]:
        WHITESPACE.append(f"a{ws}b")
        WHITESPACE.append(ws)
        WHITESPACE.append(f"x{ws}")
WHITESPACE += [
    "\u00a0\u00a0nbsp", "a\u2003b\u2009c\u3000d", "\u200b\u200bzw", "x\u2028y\u2029z", "\x0b\x0c\x85",
    "   leading", "trailing   ", "  \n  \n  ", "\r\r\r\n\n\r", "\r", "\n", " ", "\t",
    "end with space ", "a \u3000 b", " \u1680 \u180e \u202f \u205f ",
]

NUMBERS = []
for n in range(1, 41):
    digits = "".join(str((k * 7 + n) % 10) for k in range(n))
    NUMBERS += [digits, f"x{digits}y", f" {digits} ", f"-{digits}.{digits[::-1]}"]
NUMBERS += [
    "1,234,567.89", "3.14159265358979323846", "1e-10 2E+5 0x1F 0b1010 0o777", "$1,000,000",
    "٣١٤ ١٢٣٤٥", "४२ १२३४५६", "１２３４５", "²³¹ ₀₁₂", "ⅠⅡⅢⅫ ⅰⅱ", "½ ¾ ⅓", "①②③",
    "2024-12-31T23:59:59Z", "192.168.0.1", "+1 (555) 123-4567", "๑๒๓", "𝟘𝟙𝟚𝟛", "🄀🄁",
]

NORMALIZATION = [
    "é e\u0301 É E\u0301", "Å A\u030a \u212b", "ñ n\u0303", "Ω \u2126", "ḍ̇ d\u0323\u0307 d\u0307\u0323",
    "\u1100\u1161\u11a8 각", "ệ e\u0323\u0302 e\u0302\u0323", "\u0301 leading combining mark",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f"
    "\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358"
    "\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O",
    "\u0915\u094d\u0937 \u0915\u093c \u0958", "\uac00\u11a8 \u1100\u1161", "ﬃ ﬀ ǆ Ǆ",
    "a\u0308\u0301 a\u0301\u0308", "\u00c5\u0301 A\u030a\u0301", "\u0f73 \u0f71\u0f72",
    "x\u0327\u0300 x\u0300\u0327", "\u0344 \u0308\u0301", "\u2000 \u2001 \u1e9b\u0323",
    "Café résumé naïve coöperate façade", "Cafe\u0301 re\u0301sume\u0301 nai\u0308ve",
    "\u05e9\u05c1\u05bc \u05e9\u05bc\u05c1", "\u0627\u0653 \u0622",
]

ODD = [
    "", "\x00", "\x00a\x00", "\x01\x02\x03\x04\x05\x06\x07\x08", "\x0e\x0f\x10\x1b[31mred\x1b[0m",
    "\x7f\x80\x81\x9f", "a\x1fb\x1ec", "\ufeffBOM", "\u00ad soft\u00adhyphen", "\u200e\u200f\u202a\u202e",
    "\ufffd", "bad \ufffd\ufffd byte", "\ue000\uf8ff private", "\U000f0000\U0010fffd plane 15/16",
    "\u0378\u0379 unassigned", "\U0002ffff\U0003134a\U00031350 \U0001fae9", "\U000e0001\U000e007f",
    "\ufffe\uffff\ufdd0\ufdef noncharacters", "\U0001ffff\U0010ffff", "\u2581 lower one eighth block",
    "\u2581\u2581\u2581 ▁x▁", "_▁_ ▁ ▁▁▁ ", "Ġ Ċ ĉ", "\u0100\u0120\u0143", "¡¬®­°",
    "\U0001d11e\U0001f600\U00020000", "𠀀𠀁 𪚥 𰀀",
]

LONG = [
    "a" * 3000, "ab" * 1500, "Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichen" * 20,
    "x" * 1000 + "'s", "7" * 2000, "漢" * 2000, "😀" * 500, "\u0301" * 500, "-" * 1000,
    "=" * 300 + "\n" + "#" * 300, "https://example.com/" + "a/b-c_d.e?f=g&" * 100,
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 60, "ą" * 1500, "\t" * 500 + "x", " " * 1000 + "x",
    "ก" * 1000, "ÄÖÜ" * 700,
]


def _specials_corpus():
    out = []
    for s in SPECIAL_STRINGS + PARTIAL_SPECIALS:
        out += [s, f"a{s}b", f" {s} ", f"\n{s}\n", f"{s}{s}", f"Hello{s}world", f"{s}user\nhi",
                f"x {s}y", f"{s} {s}\n\n{s}"]
    out += [
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>",
        "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
        "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|>",
        "<think>\nreasoning here\n</think>\n\nanswer", "<|im_end|<|im_end|>|>",
        "<|im_<|im_end|>", "text<|endoftext|>more<|endoftext|>", "<think><think></think></think>",
    ]
    return out


def _random_corpus(seed=20240607):
    rng = random.Random(seed)
    scalars = (0x110000 - 0x800)

    def any_scalar():
        c = rng.randrange(scalars)
        return chr(c + 0x800 if c >= 0xD800 else c)

    bmp_blocks = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x52F), (0x590, 0x6FF),
                  (0x900, 0xDFF), (0xE00, 0xEFF), (0x1100, 0x11FF), (0x1E00, 0x1FFF),
                  (0x2000, 0x2BFF), (0x3000, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3),
                  (0xE000, 0xE0FF), (0xF900, 0xFFFD), (0x1F300, 0x1FAFF), (0x20000, 0x2A6DF)]
    pool = (list("aAbzZ09 \t\n\r'’ſKk.,;:!?-_/\\\"()[]{}<>|#@$%^&*+=~`") +
            ["\u0301", "\u0308", "\u200d", "\ufe0f", "\u00a0", "\u3000", "\u2581", "é", "ß",
             "İ", "ı", "Σ", "ς", "漢", "か", "カ", "한", "ا", "ש", "क", "ि", "ก", "😀", "🏽", "🇩",
             "١", "٣", "४", "½", "Ⅻ", "²", "\x00", "\x1b", "\ufffd", "\ue000", "\U00010000",
             "\U000e0020", "'s", "'RE", "'ll", "123", "  ", "\r\n", "<|", "|>", "im_end",
             "<|im_end|>", "<|eot_id|>", "<start_of_turn>", "<|endoftext|>", "<think>", "<eos>",
             "<|return|>", "<0x41>"])
    out = []
    for _ in range(2000):  # uniform over every plane (mostly unassigned)
        out.append("".join(any_scalar() for _ in range(rng.randint(1, 24))))
    for _ in range(1500):  # BMP-ish blocks, mixed
        s = []
        for _ in range(rng.randint(1, 40)):
            lo, hi = rng.choice(bmp_blocks)
            c = rng.randint(lo, hi)
            s.append(chr(c) if not 0xD800 <= c <= 0xDFFF else "x")
        out.append("".join(s))
    for _ in range(2000):  # pieces that stress the regexes and the special matcher
        out.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 60))))
    return out


@functools.lru_cache(maxsize=None)
def _corpus():
    texts = (PROSE + CODE + JSON_TEXTS + EMOJI + CONTRACTIONS + WHITESPACE + NUMBERS +
             NORMALIZATION + ODD + LONG + _specials_corpus())
    # Every hand-written piece also in a few contexts and joined with others.
    hand = list(texts)
    for k, t in enumerate(hand):
        texts += [f" {t}", f"{t}\n", f"«{t}»"]
        texts.append(t + " " + hand[(k * 7 + 3) % len(hand)])
    texts += ["\n\n".join(PROSE), "\n".join(CODE), " ".join(EMOJI), "".join(CONTRACTIONS)]
    texts += _random_corpus()
    for t in texts:
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in t)
    return tuple(texts)


def test_corpus_is_large_and_varied():
    texts = _corpus()
    assert len(texts) > 6000
    joined = "".join(texts)
    for probe in ["<|im_end|>", "<|eot_id|>", "<start_of_turn>", "<|endoftext|>", "<think>", "<|im_",
                  "'ſ", "\ufffd", "\ue000", "\r\n", " " * 200, "\t" * 200, "👩‍👩‍👧‍👦", "🇯🇵", "👍🏽", "e\u0301"]:
        assert probe in joined, probe
    assert "" in texts


# ---------------------------------------------------------------- 2. encode

@pytest.mark.parametrize("name", TOKENIZERS)
def test_encode_equals_hf(cli, name):
    texts = list(_corpus())
    job = _Encode(cli, name, texts)
    want = _hf_encode(name, texts)
    got = job.result()
    _compare(name, texts, want, got)
    # The corpus must really contain this tokenizer's special tokens as specials.
    specials = {i for i, a in _hf(name).get_added_tokens_decoder().items() if a.special}
    assert any(i in specials for ids in want for i in ids)


@pytest.mark.parametrize("name", TOKENIZERS)
def test_encode_no_special_equals_hf_encode_special_tokens(cli, name):
    texts = list(_corpus())
    job = _Encode(cli, name, texts, no_special=True)
    want = _hf_encode(name, texts, encode_special_tokens=True)
    got = job.result()
    _compare(name, texts, want, got, label=" --no-special")
    # And it is not the same as the default: specials are now plain text.
    assert want != _hf_encode(name, texts)


# -------------------------------------- 3. every code point through the regex

def _scalars():
    return [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


# Each context tells some of the regexes' classes apart:
#   " cx"   L / N / \s / other (Qwen3, Llama: marks are "other"); gpt-oss:
#           letters and marks / N / \s / other
#   "'cx"   case-insensitive contractions ('ſ)
# gpt-oss's classes split letters further (Lu/Lt vs Ll vs Lm/Lo vs M):
#   "'cAa"  Ll vs Lm/Lo/Lu/M (and the contractions), then "acA" (the "a" of
#           "Aa" before c) Lu/Lt vs Ll/Lm/Lo, "..c" M (not \p{L}) vs Lm/Lo
# Qwen3 normalizes NFC: "\u0345c\u0334" reorders unless c's combining class
# is 0 or lies in 1..240 the same way in both (Unicode data versions), and c
# itself may decompose or compose.
CONTEXTS = {
    "qwen3": {"space-x": lambda ch: f" {ch}x", "apostrophe": lambda ch: f"'{ch}x",
              "nfc": lambda ch: f"\u0345{ch}\u0334"},
    "llama3.1": {"space-x": lambda ch: f" {ch}x", "apostrophe": lambda ch: f"'{ch}x"},
    "gpt-oss": {"space-x": lambda ch: f" {ch}x", "apostrophe+case": lambda ch: f"'{ch}Aa",
                "case": lambda ch: f"{ch}A", "marks": lambda ch: f"..{ch}"},
}


def _contexts(name, c):
    """Planes 4-13 are unassigned and 15-16 private use in every Unicode
    version: there one context is enough to see any class difference."""
    if 0x40000 <= c < 0xE0000 or c >= 0xF0000:
        return {"space-x": CONTEXTS[name]["space-x"]}
    return CONTEXTS[name]


def _cp_text(name, c):
    ch = chr(c)
    return "".join(f(ch) for f in _contexts(name, c).values())


_PACK = 64


@pytest.mark.parametrize("name", REGEX_TOKENIZERS)
def test_every_code_point_through_pretokenizer(cli, name):
    cps = _scalars()
    assert len(cps) == 0x110000 - 0x800
    groups = [cps[i:i + _PACK] for i in range(0, len(cps), _PACK)]
    lines = ["".join(_cp_text(name, c) for c in g) for g in groups]
    # Debug builds are slow: two CLI processes first (2 cores), then HF.
    got = _Encode(cli, name, lines, procs=2).result()
    want = _hf_encode(name, lines)
    bad = [k for k in range(len(lines)) if want[k] != got[k]]
    if not bad:
        return
    # Narrow down to single code points and single contexts.
    suspects = [c for k in bad for c in groups[k]]
    singles = [(c, ctx, f(chr(c))) for c in suspects for ctx, f in _contexts(name, c).items()]
    texts = [t for _, _, t in singles]
    w1, g1 = _hf_encode(name, texts), _cli_encode(cli, name, texts)
    by_cp = {}
    for (c, ctx, t), a, b in zip(singles, w1, g1):
        if a != b:
            by_cp.setdefault(c, []).append((ctx, t, a, b))
    report = [f"U+{c:04X} {unicodedata.category(chr(c))} {unicodedata.name(chr(c), '<unnamed>')}"
              f" [{', '.join(ctx for ctx, *_ in v)}]" for c, v in by_cp.items()]
    detail = [_diff(name, t, a, b) for v in list(by_cp.values())[:6] for _, t, a, b in v[:1]]
    if not by_cp:  # only in context: show the packed lines
        detail = [_diff(name, lines[k], want[k], got[k]) for k in bad[:3]]
    pytest.fail(f"{len(bad)} packed lines of {len(lines)} differ; {len(by_cp)} code points differ on "
                f"their own (categories from Python's Unicode {unicodedata.unidata_version}; "
                f"[contexts that differ]):\n  "
                + "\n  ".join(report[:300]) + ("\n  ..." if len(report) > 300 else "")
                + "\n" + "\n".join(detail), pytrace=False)


# ----------------------------------------------------------- 4. round trip

def _expected_bytes(name, text):
    if name in NFC:  # NFC as HF does it (its Unicode data, not Python's)
        text = _hf(name).normalizer.normalize_str(text)
    if name not in BYTE_LEVEL:  # Gemma: a literal "▁" is a space once encoded
        text = text.replace("\u2581", " ")
    return text.encode("utf-8")


def _detok_hex(cli, name, ids, *flags):
    out = _CliJob(cli, "detokenize", "--tokenizer", _tok_dir(name), "--hex", *flags,
                  *ids).result()
    return bytes.fromhex(out.decode("ascii").strip())


def _chunks(seqs, max_ids=120000):
    """Consecutive runs of sequences with at most max_ids ids in all (argv
    limit: 2 MiB, ids are at most 7 bytes with the NUL)."""
    start, n = 0, 0
    for k, s in enumerate(seqs):
        if n and n + len(s) > max_ids:
            yield start, k
            start, n = k, 0
        n += len(s)
    if start < len(seqs):
        yield start, len(seqs)


@pytest.mark.parametrize("name", TOKENIZERS)
def test_detokenize_round_trip(cli, name):
    texts = list(_corpus())
    ids = _hf_encode(name, texts)
    expected = [_expected_bytes(name, t) for t in texts]
    checked = 0
    for a, b in _chunks(ids):
        flat = [i for s in ids[a:b] for i in s]
        if not flat:
            continue
        got = _detok_hex(cli, name, flat)
        want = b"".join(expected[a:b])
        if got != want:
            # Find the text: the first differing byte offset.
            off = next((k for k, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
            pos = 0
            for k in range(a, b):
                if pos + len(expected[k]) > off or k == b - 1:
                    break
                pos += len(expected[k])
            single = _detok_hex(cli, name, ids[k]) if ids[k] else b""
            pytest.fail(f"[{name}] detokenize(HF ids) != text bytes, text {k}: {texts[k][:200]!r}\n"
                        f"  HF ids {ids[k][:40]}\n  want {expected[k][:200]!r}\n  got  {single[:200]!r}",
                        pytrace=False)
        checked += b - a
    assert checked > 6000


@pytest.mark.parametrize("name", TOKENIZERS)
def test_detokenize_skip_special_drops_exactly_specials(cli, name):
    dump = _dump(cli, name)
    kind = [e["kind"] for e in dump]
    raw = [bytes.fromhex(e["hex"]) for e in dump]
    texts = _specials_corpus()
    ids = [i for s in _hf_encode(name, texts) for i in s]
    assert any(kind[i] == "special" for i in ids)
    got = _detok_hex(cli, name, ids, "--skip-special")
    want = b"".join(raw[i] for i in ids if kind[i] != "special")
    assert got == want
    hf = _hf(name).decode(ids, skip_special_tokens=True)
    if name not in NFC and "\ufffd" not in hf:
        assert got.decode("utf-8") == hf, "differs from HF decode(skip_special_tokens=True)"


# --------------------------------------------------------- 5. summary facts

@pytest.mark.parametrize("name", TOKENIZERS)
def test_summary_ids_match_transformers(cli, name):
    transformers = pytest.importorskip("transformers")
    d = _tok_dir(name)
    hf = transformers.AutoTokenizer.from_pretrained(str(d))
    s = _summary(cli, name)
    assert s["eos_ids"] == [hf.eos_token_id], (s["eos_ids"], hf.eos_token, hf.eos_token_id)
    assert s["bos_id"] == hf.bos_token_id, (s["bos_id"], hf.bos_token, hf.bos_token_id)
    assert s["pad_id"] == hf.pad_token_id, (s["pad_id"], hf.pad_token, hf.pad_token_id)
    assert s["size"] == _hf(name).get_vocab_size(with_added_tokens=True)
    counts = {}
    for e in _dump(cli, name):
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    assert {k: v for k, v in s["kinds"].items() if v} == counts
