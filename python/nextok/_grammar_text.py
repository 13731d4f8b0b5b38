"""Grammar text whose format a request does not name (vLLM's and SGLang's
``grammar`` / ``ebnf`` fields): GBNF or Lark, told apart by GBNF's ``::=``."""

from __future__ import annotations

import re

from . import _nextok

_GBNF_RULE = re.compile(r"^\s*[A-Za-z0-9_-]+\s*::=", re.MULTILINE)


def is_gbnf(text: str) -> bool:
    """True when some line defines a rule with ``::=`` (Lark uses ``:``)."""
    return _GBNF_RULE.search(text) is not None


def compile_grammar_text(text: str, info: _nextok.TokenizerInfo) -> _nextok.Grammar:
    """A GBNF grammar (``root``) or a Lark grammar (``start``)."""
    if is_gbnf(text):
        return _nextok.Grammar.gbnf(text, info)
    return _nextok.Grammar.lark(text, info)
