"""A second, independent instance generator for the schema oracle.

hypothesis-jsonschema canonicalises a schema before drawing from it and gives
up on much of what real schemas hold (deep unions, `$ref` cycles, patterns it
cannot merge, draft-04 documents): on SchemaStore it finds instances for a
fraction of the schemas. This sampler instead walks the schema as written and
draws the way a model writes: every branch of an anyOf/oneOf, optional
properties, pattern-property keys drawn from their regexes, realistic values
for formats (URIs with queries, offsets in date-times, compressed IPv6),
numbers near their bounds, strings that need escapes. It knows nothing of the
engine; Python `jsonschema` decides afterwards which draws are valid, so a
draw may be wrong without harm.

    sample_instances(schema, count=8, seed=1) -> list of JSON values
"""

from __future__ import annotations

import copy
import json
import math
import random
import string
import time
import urllib.parse
from typing import Any

try:  # Python 3.11+
    import re._constants as sre_c  # type: ignore[import-not-found]
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]


class _GiveUp(Exception):
    """This draw cannot go on (an unresolvable reference, a false schema)."""


# --- regular expressions ----------------------------------------------------

_CATEGORY = {
    sre_c.CATEGORY_DIGIT: "0123456789",
    sre_c.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre_c.CATEGORY_SPACE: " \t\n",
    sre_c.CATEGORY_NOT_DIGIT: string.ascii_letters + "-_ .é",
    sre_c.CATEGORY_NOT_WORD: " -.:/@#é",
    sre_c.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits + "-_.é",
}
_ANY_CHARS = string.ascii_letters + string.digits + " -_./:@#é€"


def _class_chars(items: list[Any], rng: random.Random) -> str:
    """A character of a [...] set (negated sets draw from a pool and check)."""
    negate = any(op is sre_c.NEGATE for op, _ in items)
    pool: list[str] = []
    for op, av in items:
        if op is sre_c.LITERAL:
            pool.append(chr(av))
        elif op is sre_c.RANGE:
            lo, hi = av
            pool.append(chr(rng.randint(lo, min(hi, lo + 2000))))
            pool.append(chr(lo))
            pool.append(chr(hi))
        elif op is sre_c.CATEGORY:
            pool.extend(_CATEGORY.get(av, "a"))
    if not negate:
        return rng.choice(pool) if pool else "a"
    banned = set(pool)
    for _ in range(50):
        c = rng.choice(_ANY_CHARS)
        if c not in banned:
            return c
    raise _GiveUp("negated class")


def _from_parsed(seq: Any, rng: random.Random, groups: dict[int, str], budget: list[int]) -> str:
    out: list[str] = []
    for op, av in seq:
        budget[0] -= 1
        if budget[0] < 0:
            raise _GiveUp("regex too deep")
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.NOT_LITERAL:
            c = rng.choice(_ANY_CHARS)
            out.append(c if ord(c) != av else "x")
        elif op is sre_c.ANY:
            out.append(rng.choice(_ANY_CHARS))
        elif op is sre_c.IN:
            out.append(_class_chars(av, rng))
        elif op is sre_c.BRANCH:
            out.append(_from_parsed(rng.choice(av[1]), rng, groups, budget))
        elif op is sre_c.SUBPATTERN:
            gid, _add, _del, sub = av
            text = _from_parsed(sub, rng, groups, budget)
            if gid is not None:
                groups[gid] = text
            out.append(text)
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            hi = lo + 4 if hi is sre_c.MAXREPEAT else hi
            n = rng.choice([lo, lo, min(hi, lo + 1), rng.randint(lo, min(hi, lo + 6))])
            out.extend(_from_parsed(sub, rng, groups, budget) for _ in range(n))
        elif op is sre_c.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is sre_c.AT or op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue  # anchors and lookaround: the validity check judges
        elif op is getattr(sre_c, "ATOMIC_GROUP", None):
            out.append(_from_parsed(av, rng, groups, budget))
        else:
            raise _GiveUp(f"regex op {op}")
    return "".join(out)


def sample_regex(pattern: str, rng: random.Random) -> str:
    """A string the pattern matches in full (when the draw works out), sometimes
    with text around it where the pattern is not anchored."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception as e:  # ECMA syntax Python lacks: let the caller try another way
        raise _GiveUp(f"regex syntax: {e}") from e
    text = _from_parsed(parsed, rng, {}, [2000])
    if rng.random() < 0.2:
        text = rng.choice(["", "x", "A1 "]) + text + rng.choice(["", "z", " 9"])
    return text


# --- formats ----------------------------------------------------------------


def _pick(rng: random.Random, *xs: Any) -> Any:
    return rng.choice(xs)


def _host(rng: random.Random) -> str:
    labels = [
        _pick(rng, "example", "api", "my-app", "a1", "www", "docs", "x")
        for _ in range(rng.randint(1, 3))
    ]
    return ".".join(labels + [_pick(rng, "com", "org", "io", "co.uk", "dev")])


def _datetime_parts(rng: random.Random) -> tuple[str, str]:
    y, mo = rng.randint(1970, 2035), rng.randint(1, 12)
    d = rng.randint(1, 28)
    date = f"{y:04d}-{mo:02d}-{d:02d}"
    t = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    if rng.random() < 0.4:
        t += "." + "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 6)))
    off = _pick(rng, "Z", "z", "+00:00", "-05:00", "+05:30", "+14:00", "-00:00")
    return date, t + off


def sample_format(fmt: str, rng: random.Random) -> str | None:
    """A realistic string of the format, or None for a format this does not know."""
    if fmt == "date-time":
        d, t = _datetime_parts(rng)
        return d + _pick(rng, "T", "T", "t") + t
    if fmt == "date":
        return _datetime_parts(rng)[0]
    if fmt == "time":
        return _datetime_parts(rng)[1]
    if fmt in ("email", "idn-email"):
        local = _pick(rng, "john.doe", "a+b", "x_y-z", "user", "first.last+tag", "A1")
        return f"{local}@{_host(rng)}"
    if fmt in ("hostname", "idn-hostname"):
        return _host(rng)
    if fmt == "ipv4":
        return ".".join(
            str(rng.choice([0, 1, 10, 127, 192, 255, rng.randint(0, 255)])) for _ in range(4)
        )
    if fmt == "ipv6":
        return _pick(
            rng,
            "::1",
            "::",
            "2001:db8::8a2e:370:7334",
            "fe80::1",
            "::ffff:192.0.2.128",
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
            "2001:DB8:0:0:8:800:200C:417A",
            "1::",
            "1:2:3:4:5:6:7::",
        )
    if fmt == "uuid":
        a, b, c, d, e = (rng.getrandbits(n) for n in (32, 16, 16, 16, 48))
        u = f"{a:08x}-{b:04x}-{c:04x}-{d:04x}-{e:012x}"
        return u.upper() if rng.random() < 0.2 else u
    if fmt in ("uri", "iri", "url"):
        scheme = _pick(rng, "https", "http", "ftp", "urn", "mailto", "file", "s3")
        if scheme == "urn":
            return "urn:" + _pick(
                rng, "isbn:0451450523", "uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66", "ietf:rfc:2648"
            )
        if scheme == "mailto":
            return f"mailto:user@{_host(rng)}"
        host = _pick(rng, _host(rng), "localhost", "127.0.0.1", "[2001:db8::1]")
        port = _pick(rng, "", "", ":8080", ":443")
        path = _pick(
            rng, "", "/", "/a/b.json", "/path%20with%20space", "/~user/x_y-z", "/v1/items/42"
        )
        query = _pick(rng, "", "", "?q=1", "?a=1&b=two", "?redirect=https%3A%2F%2Fx.org")
        frag = _pick(rng, "", "", "#top", "#/definitions/x")
        return f"{scheme}://{host}{port}{path}{query}{frag}"
    if fmt in ("uri-reference", "iri-reference"):
        return _pick(
            rng,
            sample_format("uri", rng),
            "/a/b?c=d",
            "../x.json",
            "#frag",
            "x.json#/a",
            "",
            "//host/p",
        )
    if fmt == "uri-template":
        return _pick(
            rng, "https://api.example.com/users/{id}", "/search{?q,lang}", "{+path}/here", "/x"
        )
    if fmt == "json-pointer":
        return _pick(rng, "", "/a", "/a/0", "/a~1b/c~0d", "/")
    if fmt == "relative-json-pointer":
        return _pick(rng, "0", "1/a", "2#", "0/x/1")
    if fmt == "regex":
        return _pick(rng, "^[a-z]+$", "\\d{3}-\\d{4}", "(a|b)*c", ".*", "[^/]+")
    if fmt == "duration":
        return _pick(rng, "P3Y6M4DT12H30M5S", "PT1H", "P1W", "P1DT12H", "P1D")
    return None


# --- values -----------------------------------------------------------------

_TEXTS = [
    "",
    "a",
    "hello",
    "Hello, world!",
    "x y z",
    "é ü ß",
    "日本語",
    "emoji 🙂",
    'quote " and \\ backslash',
    "line\nbreak\ttab",
    "path/to/file.txt",
    "snake_case_name",
    "CamelCase",
    "1234",
    "-",
    "a/b",
    "null",
    "true",
    "http://x.org",
    "ABC-123",
]


def _pointer(doc: Any, frag: str) -> Any:
    frag = urllib.parse.unquote(frag)
    if frag in ("", "/"):
        return doc if frag == "" else doc.get("", doc)
    x = doc
    for part in frag.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(x, list):
            x = x[int(part)]
        elif isinstance(x, dict) and part in x:
            x = x[part]
        else:
            raise _GiveUp(f"unresolved pointer {frag}")
    return x


class SchemaSampler:
    def __init__(self, root: Any, rng: random.Random, max_depth: int = 7) -> None:
        self.root = root
        self.rng = rng
        self.max_depth = max_depth
        self.ids: dict[str, Any] = {}
        self.budget = 0
        self._index(root, "")

    def _index(self, s: Any, base: str) -> None:
        if isinstance(s, dict):
            for kw in ("$id", "id"):
                v = s.get(kw)
                if isinstance(v, str):
                    base = urllib.parse.urljoin(base, v)
                    self.ids[base.split("#")[0]] = s
                    if "#" in v and not v.endswith("#"):
                        self.ids[base] = s
            if isinstance(s.get("$anchor"), str):
                self.ids[base.split("#")[0] + "#" + s["$anchor"]] = s
            for k, x in s.items():
                if k in ("enum", "const", "examples", "default"):
                    continue
                self._index(x, base)
        elif isinstance(s, list):
            for x in s:
                self._index(x, base)

    def resolve(self, ref: str) -> Any:
        if ref.startswith("#"):
            if ref[1:2] in ("", "/"):
                return _pointer(self.root, ref[1:])
            for k, v in self.ids.items():
                if k.endswith(ref):
                    return v
            raise _GiveUp(f"anchor {ref}")
        doc_uri, _, frag = ref.partition("#")
        for k, v in self.ids.items():
            if (
                k == ref
                or k.split("#")[0] == doc_uri
                or (doc_uri and k.endswith("/" + doc_uri.lstrip("./")))
            ):
                return _pointer(v, frag) if frag.startswith("/") or frag == "" else v
        raise _GiveUp(f"remote ref {ref}")

    # Conjunctions are drawn from the first part whose structure shows, with
    # the others' constraints merged in where cheap; the check decides.
    def merge(self, parts: list[Any]) -> Any:
        out: dict[str, Any] = {}
        for p in parts:
            if p is True or p == {}:
                continue
            if p is False:
                raise _GiveUp("false schema")
            if not isinstance(p, dict):
                continue
            for k, v in p.items():
                if k == "properties" and isinstance(v, dict):
                    props = dict(out.get("properties", {}))
                    for name, sub in v.items():
                        props[name] = {"allOf": [props[name], sub]} if name in props else sub
                    out["properties"] = props
                elif k == "required" and isinstance(v, list):
                    out["required"] = list(dict.fromkeys(out.get("required", []) + v))
                elif k == "type":
                    mine = out.get("type")
                    a = set(v if isinstance(v, list) else [v])
                    if mine is not None:
                        b = set(mine if isinstance(mine, list) else [mine])
                        if "number" in a and "integer" in b or "number" in b and "integer" in a:
                            a |= {"integer"}
                        a &= b | ({"integer"} if "number" in b else set())
                        if not a:
                            raise _GiveUp("types disjoint")
                    out["type"] = sorted(a)
                elif k in ("allOf", "anyOf", "oneOf") and k in out:
                    out["allOf"] = out.get("allOf", []) + [{k: v}]
                else:
                    out[k] = v
        return out

    def expand(self, s: Any, depth: int) -> Any:
        """Refs, allOf and one chosen branch of anyOf/oneOf/if folded into one dict."""
        for _ in range(40):
            if not isinstance(s, dict):
                return s
            if "$ref" in s and isinstance(s["$ref"], str):
                rest = {k: v for k, v in s.items() if k != "$ref"}
                target = self.resolve(s["$ref"])
                s = (
                    self.merge([target, rest])
                    if any(k not in ("description", "title", "$comment") for k in rest)
                    else target
                )
                continue
            if "allOf" in s and isinstance(s["allOf"], list):
                rest = {k: v for k, v in s.items() if k != "allOf"}
                s = self.merge([self.expand(p, depth) for p in s["allOf"]] + [rest])
                continue
            for kw in ("anyOf", "oneOf"):
                if kw in s and isinstance(s[kw], list) and s[kw]:
                    rest = {k: v for k, v in s.items() if k != kw}
                    s = self.merge([rest, self.expand(self.rng.choice(s[kw]), depth)])
                    break
            else:
                if "if" in s and ("then" in s or "else" in s):
                    rest = {k: v for k, v in s.items() if k not in ("if", "then", "else")}
                    branch = s.get("then" if self.rng.random() < 0.5 else "else", True)
                    extra = [s["if"]] if branch is s.get("then") else []
                    s = self.merge([rest, *extra, self.expand(branch, depth)])
                    continue
                return s
        raise _GiveUp("expansion too deep")

    def value(self, s: Any, depth: int = 0) -> Any:
        rng = self.rng
        self.budget -= 1  # draws stay small: optional parts stop once it runs out
        if self.budget < -2000:
            raise _GiveUp("draw too large")
        if s is False:
            raise _GiveUp("false schema")
        if s is True or s is None:
            s = {}
        s = self.expand(s, depth)
        if not isinstance(s, dict):
            raise _GiveUp("not a schema")
        if "const" in s:
            return copy.deepcopy(s["const"])
        if isinstance(s.get("enum"), list) and s["enum"]:
            return copy.deepcopy(rng.choice(s["enum"]))
        t = s.get("type")
        types = t if isinstance(t, list) else [t] if isinstance(t, str) else None
        if not types:
            hinted = [
                name
                for name, kws in (
                    (
                        "object",
                        (
                            "properties",
                            "required",
                            "additionalProperties",
                            "patternProperties",
                            "minProperties",
                        ),
                    ),
                    ("array", ("items", "prefixItems", "minItems", "maxItems", "contains")),
                    ("string", ("pattern", "format", "minLength", "maxLength")),
                    (
                        "number",
                        (
                            "minimum",
                            "maximum",
                            "exclusiveMinimum",
                            "exclusiveMaximum",
                            "multipleOf",
                        ),
                    ),
                )
                if any(k in s for k in kws)
            ]
            types = hinted or ["object", "array", "string", "number", "integer", "boolean", "null"]
        if depth >= self.max_depth:
            shallow = [x for x in types if x not in ("object", "array")]
            types = shallow or types
        kind = rng.choice(types)
        if kind == "object":
            return self.object(s, depth)
        if kind == "array":
            return self.array(s, depth)
        if kind == "string":
            return self.string(s)
        if kind in ("number", "integer"):
            return self.number(s, kind == "integer")
        if kind == "boolean":
            return rng.random() < 0.5
        return None

    def key(self, rng: random.Random) -> str:
        return rng.choice(
            ["name", "x-extra", "key1", "my_key", "Ünïcode", "a b", "/path", "k", "id", "$schema"]
        )

    def object(self, s: dict[str, Any], depth: int) -> dict[str, Any]:
        rng = self.rng
        props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
        required = (
            [r for r in s.get("required", []) if isinstance(r, str)]
            if isinstance(s.get("required"), list)
            else []
        )
        out: dict[str, Any] = {}
        p_opt = rng.choice([0.2, 0.5, 0.9]) if self.budget > 0 else 0.0
        names = list(dict.fromkeys(required + [n for n in props if rng.random() < p_opt]))
        dep = s.get("dependentRequired") or s.get("dependencies")
        for n in names:
            out[n] = self.value(props.get(n, s.get("additionalProperties", True)), depth + 1)
            if isinstance(dep, dict) and isinstance(dep.get(n), list):
                for m in dep[n]:
                    if isinstance(m, str) and m not in out and m not in names:
                        out[m] = self.value(props.get(m, True), depth + 1)
        pats = s.get("patternProperties") if isinstance(s.get("patternProperties"), dict) else {}
        for pat, sub in pats.items():
            for _ in range(rng.choice([0, 1, 1, 2]) if self.budget > 0 else 0):
                try:
                    k = sample_regex(pat, rng)
                except _GiveUp:
                    continue
                out[k] = self.value(sub, depth + 1)
        add = s.get("additionalProperties", True)
        if add is not False and self.budget > 0 and rng.random() < 0.3:
            names_schema = s.get("propertyNames")
            k = self.string(names_schema) if isinstance(names_schema, dict) else self.key(rng)
            if k not in out:
                out[k] = self.value(add, depth + 1)
        lo = s.get("minProperties", 0)
        if isinstance(lo, int):
            for n in props:
                if len(out) >= lo:
                    break
                out.setdefault(n, self.value(props[n], depth + 1))
        return out

    def array(self, s: dict[str, Any], depth: int) -> list[Any]:
        rng = self.rng
        lo = s.get("minItems", 0) if isinstance(s.get("minItems"), int) else 0
        hi = s.get("maxItems", lo + 4) if isinstance(s.get("maxItems"), int) else lo + 4
        n = rng.randint(lo, max(lo, min(hi, lo + 4))) if self.budget > 0 else lo
        prefix = s.get("prefixItems")
        items = s.get("items", True)
        if isinstance(items, list):  # draft-04..2019 tuple form
            prefix, items = items, s.get("additionalItems", True)
        prefix = prefix if isinstance(prefix, list) else []
        out = []
        for i in range(n):
            sub = prefix[i] if i < len(prefix) else items
            if sub is False:
                break
            out.append(self.value(sub, depth + 1))
        if "contains" in s and rng.random() < 0.9:
            out.insert(rng.randint(0, len(out)), self.value(s["contains"], depth + 1))
        if s.get("uniqueItems") is True:
            seen, uniq = set(), []
            for x in out:
                k = json.dumps(x, sort_keys=True)
                if k not in seen:
                    seen.add(k)
                    uniq.append(x)
            out = uniq
        return out

    def string(self, s: dict[str, Any]) -> str:
        rng = self.rng
        text: str | None = None
        fmt = s.get("format")
        if isinstance(fmt, str) and rng.random() < 0.9:
            text = sample_format(fmt, rng)
        pat = s.get("pattern")
        if text is None and isinstance(pat, str):
            try:
                text = sample_regex(pat, rng)
            except _GiveUp:
                text = None
        if text is None:
            text = rng.choice(_TEXTS)
            lo = s.get("minLength", 0) if isinstance(s.get("minLength"), int) else 0
            hi = s.get("maxLength") if isinstance(s.get("maxLength"), int) else None
            while len(text) < lo:
                text += rng.choice(_TEXTS) or "x"
            if hi is not None and len(text) > hi:
                text = text[: rng.randint(max(lo, 0), hi)] if hi >= lo else text[:hi]
        return text

    def number(self, s: dict[str, Any], integer: bool) -> int | float:
        rng = self.rng
        lo, hi = s.get("minimum"), s.get("maximum")
        xlo, xhi = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
        if isinstance(xlo, (int, float)) and not isinstance(xlo, bool):
            lo = xlo if lo is None else max(lo, xlo)
        if isinstance(xhi, (int, float)) and not isinstance(xhi, bool):
            hi = xhi if hi is None else min(hi, xhi)
        lo = lo if isinstance(lo, (int, float)) and not isinstance(lo, bool) else None
        hi = hi if isinstance(hi, (int, float)) and not isinstance(hi, bool) else None
        a = lo if lo is not None else (hi - 1000 if hi is not None else -1000)
        b = hi if hi is not None else a + 1000
        if a > b:
            raise _GiveUp("empty range")
        mult = s.get("multipleOf")
        if isinstance(mult, (int, float)) and not isinstance(mult, bool) and mult > 0:
            k_lo, k_hi = math.ceil(a / mult), math.floor(b / mult)
            if k_lo > k_hi:
                raise _GiveUp("no multiple in range")
            v = rng.randint(k_lo, min(k_hi, k_lo + 1000)) * mult
            if integer or isinstance(mult, int):
                return int(v)
            # The decimal a writer means (3 * 0.1 is 0.30000000000000004 in floats).
            return round(v, max(0, -int(math.floor(math.log10(mult)))) + 6)
        choice = rng.random()
        if integer:
            ia, ib = math.ceil(a), math.floor(b)
            if ia > ib:
                raise _GiveUp("no integer in range")
            if choice < 0.2:
                return ia
            if choice < 0.4:
                return ib
            return rng.randint(ia, min(ib, ia + 10 ** rng.randint(1, 12)))
        if choice < 0.15:
            return a
        if choice < 0.3:
            return b
        if choice < 0.5:
            return round(rng.uniform(a, b), rng.randint(0, 4))
        v = rng.uniform(a, b)
        return int(v) if rng.random() < 0.3 else v


def sample_instances(
    schema: Any, count: int, seed: int, timeout_s: float = 2.0, tries: int = 60
) -> list[Any]:
    """Up to `tries` draws (or `timeout_s`), distinct; validity is for the caller."""
    rng = random.Random(seed)
    out: list[Any] = []
    seen: set[str] = set()
    deadline = time.monotonic() + timeout_s
    sampler = SchemaSampler(schema, rng)
    for _ in range(tries):
        if time.monotonic() > deadline or len(out) >= 4 * count:
            break
        sampler.budget = rng.choice([20, 60, 200])
        try:
            v = sampler.value(schema)
        except (
            _GiveUp,
            RecursionError,
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            OverflowError,
        ):
            continue
        key = json.dumps(v, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out
