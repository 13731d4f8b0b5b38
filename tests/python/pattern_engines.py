"""Python `jsonschema` reads `pattern` and `patternProperties` with `re`,
which has no Unicode property classes (\\p{L}): such a schema raises
re.error there, though ECMA-262 (u mode), Rust and the `regex` module read
it. `use_regex_fallback()` makes jsonschema try `re` first and the `regex`
module where `re` refuses the syntax, so schemas with property classes can
be validated (the engine reads them as ECMA-262's u mode,
docs/constraint-engine.md)."""

from __future__ import annotations

import re
from typing import Any

import jsonschema._keywords
import jsonschema._legacy_keywords
import regex


class _ReThenRegex:
    """The slice of the `re` module jsonschema's keywords use."""

    error = re.error

    @staticmethod
    def search(pattern: str, text: str, *args: Any) -> Any:
        try:
            return re.search(pattern, text, *args)
        except re.error:
            return regex.search(pattern, text, *args)


def use_regex_fallback() -> None:
    jsonschema._keywords.re = _ReThenRegex  # type: ignore[assignment]
    jsonschema._legacy_keywords.re = _ReThenRegex  # type: ignore[assignment]
