"""SGLang integration: nextok as a grammar backend.

::

    import nextok.sglang
    nextok.sglang.register()          # before the server starts: --grammar-backend nextok

``register()`` adds ``"nextok"`` to SGLang's grammar-backend choices and
registers ``NextokGrammarBackend`` with ``register_grammar_backend``, which
``create_grammar_backend`` consults before its built-in backends. The
backend serves JSON Schema requests (``"$$ANY$$"``, SGLang's key for any
JSON value, compiles the empty schema), regexes, EBNF grammars (GBNF, or
Lark) and structural tags (XGrammar's JSON, both shapes).

``NextokGrammar`` is SGLang's ``BaseGrammarObject`` over a
``nextok.Matcher``: the vocab mask is the int32 ``[B, ceil(V/32)]`` bitmask
SGLang's XGrammar and llguidance backends use; a batch fill goes through
``nextok.fill_next_token_bitmasks`` (GIL released). Jump-forward returns the
tokens the grammar forces (only one token allowed, not EOS), or None.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from sglang.srt.constrained.base_grammar_backend import (
    BaseGrammarBackend,
    BaseGrammarObject,
    GrammarRow,
    InvalidGrammarObject,
    register_grammar_backend,
)

from . import _nextok
from ._bitmask import apply_token_bitmask_inplace, bitmask_words
from ._grammar_text import compile_grammar_text
from ._hf_vocab import huggingface_token_bytes

__all__ = ["BACKEND_NAME", "NextokGrammar", "NextokGrammarBackend", "register"]

BACKEND_NAME = "nextok"
ANY_JSON_KEY = "$$ANY$$"
MAX_JUMP_FORWARD_TOKENS = 32
logger = logging.getLogger(__name__)


class NextokGrammar(BaseGrammarObject):
    """One request's grammar state."""

    def __init__(self, grammar: _nextok.Grammar, matcher: _nextok.Matcher | None = None) -> None:
        super().__init__()
        self.grammar = grammar
        self.matcher = matcher if matcher is not None else _nextok.Matcher(grammar)
        self.eos_ids = frozenset(grammar.tokenizer_info.eos_ids)

    def accept_token(self, token: int) -> None:
        """Moves on by one token; ValueError for a token the grammar refuses."""
        if self.matcher.is_terminated():
            return
        self.current_token = token
        try:
            self.matcher.accept_token(token)
        except _nextok.NextokError as e:
            raise ValueError(f"nextok refused token {token}: {e}") from e

    def rollback(self, k: int) -> None:
        if k < 0:
            raise ValueError("k must be >= 0")
        self.matcher.rollback(k)

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
        """An all-allowed int32 bitmask for the grammar's vocabulary, on the CPU
        (move_vocab_mask sends it to the device)."""
        return torch.full(
            (batch_size, bitmask_words(self.grammar.vocab_size)), -1, dtype=torch.int32
        )

    def fill_vocab_mask(self, vocab_mask: torch.Tensor, idx: int) -> None:
        self.matcher.fill_next_token_bitmask(vocab_mask, idx)

    @staticmethod
    def fill_vocab_mask_batched(entries: list[GrammarRow], vocab_mask: torch.Tensor) -> None:
        """All rows in one call on nextok's worker pool, the GIL released."""
        if not entries:
            return
        if not all(isinstance(e.grammar, NextokGrammar) for e in entries):
            BaseGrammarObject.fill_vocab_mask_batched(entries, vocab_mask)
            return
        _nextok.fill_next_token_bitmasks(
            [e.grammar.matcher for e in entries],  # type: ignore[attr-defined]
            vocab_mask,
            indices=[e.row for e in entries],
        )

    @staticmethod
    def reset_vocab_mask(vocab_mask: torch.Tensor) -> None:
        if vocab_mask.dtype != torch.int32:
            raise TypeError(f"nextok vocab masks are int32 bitmasks, got {vocab_mask.dtype}")
        vocab_mask.fill_(-1)

    @staticmethod
    def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
        apply_token_bitmask_inplace(logits, vocab_mask)

    def copy(self) -> NextokGrammar:
        return NextokGrammar(self.grammar, self.matcher.fork())

    def try_jump_forward(self, tokenizer: Any) -> tuple[list[int], str] | None:
        """The tokens the grammar forces from here (one allowed token each), or None."""
        probe = self.matcher.fork()
        forced: list[int] = []
        while len(forced) < MAX_JUMP_FORWARD_TOKENS and not probe.is_terminated():
            allowed = probe.allowed_token_ids()
            if len(allowed) != 1 or allowed[0] in self.eos_ids:
                break
            probe.accept_token(allowed[0])
            forced.append(int(allowed[0]))
        return (forced, "") if forced else None

    def jump_forward_str_state(self, helper: tuple[list[int], str]) -> tuple[str, int]:
        return "", -1

    def jump_and_retokenize(
        self, old_output_ids: list[int], new_output_ids: list[int], next_state: int
    ) -> None:
        """Rolls back to the common prefix and accepts the retokenized rest."""
        common = 0
        for old, new in zip(old_output_ids, new_output_ids):
            if old != new:
                break
            common += 1
        self.matcher.rollback(len(old_output_ids) - common)
        for token in new_output_ids[common:]:
            self.accept_token(token)


class NextokGrammarBackend(BaseGrammarBackend):
    """Compiles request grammars for one vocabulary (SGLang caches them per key)."""

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int | None = None,
        eos_token_ids: Any = None,
        *,
        strict: bool = False,
        max_whitespace: int = 20,
    ) -> None:
        super().__init__()
        eos = None
        if eos_token_ids is not None:
            eos = [eos_token_ids] if isinstance(eos_token_ids, int) else sorted(eos_token_ids)
        tokens, eos_ids, special = huggingface_token_bytes(tokenizer, eos)
        width = max(int(vocab_size or 0), len(tokens))
        self.tokenizer_info = _nextok.TokenizerInfo.from_token_bytes(
            tokens,
            eos_ids=eos_ids,
            special_ids=sorted(set(special) | set(eos_ids)),
            vocab_size=width,
        )
        self.strict = strict
        self.max_whitespace = max_whitespace

    def dispatch_json(self, key_string: str) -> BaseGrammarObject:
        schema = "{}" if key_string == ANY_JSON_KEY else key_string
        try:
            grammar = _nextok.Grammar.json_schema(
                schema, self.tokenizer_info, strict=self.strict, max_whitespace=self.max_whitespace
            )
        except (_nextok.NextokError, ValueError) as e:
            logger.error("nextok: invalid json_schema %r: %s", key_string, e)
            return InvalidGrammarObject(str(e))
        for warning in grammar.warnings:
            logger.warning("nextok ignores a keyword of this schema: %s", warning)
        return NextokGrammar(grammar)

    def dispatch_regex(self, key_string: str) -> BaseGrammarObject:
        try:
            return NextokGrammar(_nextok.Grammar.regex(key_string, self.tokenizer_info))
        except (_nextok.NextokError, ValueError) as e:
            logger.error("nextok: invalid regex %r: %s", key_string, e)
            return InvalidGrammarObject(str(e))

    def dispatch_ebnf(self, key_string: str) -> BaseGrammarObject:
        # SGLang's EBNF is XGrammar's, which reads GBNF; a Lark grammar
        # (no ``::=`` rule) is compiled as Lark.
        try:
            return NextokGrammar(compile_grammar_text(key_string, self.tokenizer_info))
        except (_nextok.NextokError, ValueError) as e:
            logger.error("nextok: invalid grammar: %s", e)
            return InvalidGrammarObject(str(e))

    def dispatch_structural_tag(self, key_string: str) -> BaseGrammarObject:
        try:
            return NextokGrammar(_nextok.Grammar.structural_tag(key_string, self.tokenizer_info))
        except (_nextok.NextokError, ValueError) as e:
            logger.error("nextok: invalid structural tag: %s", e)
            return InvalidGrammarObject(str(e))


def _create(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Any) -> Any:
    compact = bool(getattr(server_args, "constrained_json_disable_any_whitespace", False))
    return NextokGrammarBackend(
        tokenizer, vocab_size, eos_token_ids, max_whitespace=0 if compact else 20
    )


def register(name: str = BACKEND_NAME) -> None:
    """Makes ``--grammar-backend <name>`` select nextok (idempotent)."""
    from sglang.srt.arg_groups import choices

    if name not in choices.GRAMMAR_BACKEND_CHOICES:
        choices.add_grammar_backend_choices([name])
    register_grammar_backend(name, _create)
