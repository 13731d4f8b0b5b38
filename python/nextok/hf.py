"""transformers integration: logits processors for ``model.generate``.

::

    from nextok.hf import JsonSchemaLogitsProcessor
    proc = JsonSchemaLogitsProcessor(schema, tokenizer)
    out = model.generate(**inputs, logits_processor=[proc], max_new_tokens=256)

Each batch row gets its own ``Matcher``; each call accepts the previous
step's token of every row, fills the rows' bitmasks together
(``fill_next_token_bitmasks``, GIL released) and masks the scores in
place. Rows whose matcher accepted EOS are left unmasked (generate pads
them). Beam search (``num_beams > 1``) reorders rows between steps and is
not supported: it is detected and raises ``NotImplementedError``.

Imports neither torch nor transformers at module load; the processor only
needs the ``scores`` tensor generate passes in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _nextok
from ._bitmask import allocate_token_bitmask, apply_token_bitmask_inplace


class _GrammarLogitsProcessor:
    """Shared machinery; use JsonSchemaLogitsProcessor or JsonObjectLogitsProcessor."""

    def __init__(self, tokenizer: Any, vocab_size: int | None, max_whitespace: int) -> None:
        if max_whitespace < 0:
            raise ValueError("max_whitespace must be >= 0")
        self._tokenizer = tokenizer
        self._vocab_size = vocab_size
        self._max_whitespace = max_whitespace
        self._grammar: _nextok.Grammar | None = None
        self._matchers: list[_nextok.Matcher] = []
        self._fed: list[list[int]] = []
        self._prompt_len = 0
        self._prompt = np.zeros((0, 0), dtype=np.int64)
        self._bitmask: np.ndarray | None = None
        if vocab_size is not None:
            self._compile(vocab_size)

    def _build(self, info: _nextok.TokenizerInfo) -> _nextok.Grammar:
        raise NotImplementedError  # overridden by each processor

    def _compile(self, width: int) -> None:
        info = _nextok.TokenizerInfo.from_huggingface(self._tokenizer, vocab_size=width)
        self._grammar = self._build(info)
        self._vocab_size = width

    @property
    def grammar(self) -> _nextok.Grammar | None:
        """The compiled grammar (None until the first call when vocab_size was not given)."""
        return self._grammar

    @property
    def matchers(self) -> list[_nextok.Matcher]:
        """One matcher per batch row of the current generation."""
        return self._matchers

    def reset(self) -> None:
        """Forgets the current generation; the next call starts new matchers."""
        self._matchers = []
        self._fed = []

    def _start(self, ids: np.ndarray, width: int) -> None:
        if self._grammar is None or self._vocab_size != width:
            self._compile(width)
        assert self._grammar is not None
        batch = int(ids.shape[0])
        self._matchers = [_nextok.Matcher(self._grammar) for _ in range(batch)]
        self._fed = [[] for _ in range(batch)]
        self._prompt_len = int(ids.shape[1])
        self._prompt = ids.copy()
        self._bitmask = allocate_token_bitmask(batch, width)

    def _continues(self, ids: np.ndarray) -> bool:
        """Whether ids extend the generation in progress by one token per row."""
        return (
            bool(self._matchers)
            and len(self._matchers) == ids.shape[0]
            and ids.shape[1] == self._prompt_len + len(self._fed[0]) + 1
            and np.array_equal(ids[:, : self._prompt_len], self._prompt)
        )

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        ids = np.asarray(input_ids.detach().cpu() if hasattr(input_ids, "detach") else input_ids)
        if ids.ndim != 2:
            raise ValueError("input_ids must be [batch, length]")
        width = int(scores.shape[-1])
        if not self._continues(ids):
            self._start(ids, width)
        else:
            length = ids.shape[1]
            for row, (matcher, fed) in enumerate(zip(self._matchers, self._fed)):
                if ids[row, self._prompt_len : length - 1].tolist() != fed:
                    raise NotImplementedError(
                        "the batch rows were reordered between steps (beam search?); "
                        "nextok.hf processors support greedy and sampled generation only"
                    )
                token = int(ids[row, length - 1])
                fed.append(token)
                if not matcher.is_terminated():
                    matcher.accept_token(token)
        assert self._bitmask is not None
        _nextok.fill_next_token_bitmasks(self._matchers, self._bitmask)
        for row, matcher in enumerate(self._matchers):
            if matcher.is_terminated():
                self._bitmask[row, :] = -1  # finished rows are padded by generate
        apply_token_bitmask_inplace(scores, self._bitmask)
        return scores


class JsonSchemaLogitsProcessor(_GrammarLogitsProcessor):
    """Keeps ``model.generate`` output inside a JSON Schema.

    ``schema``: a dict, or JSON text. ``tokenizer``: the transformers
    tokenizer (or ``tokenizers.Tokenizer`` with an EOS). ``vocab_size``: the
    model's logits width; by default it is taken from the first ``scores``
    tensor. ``strict``: unsupported constraining keywords are an error.
    """

    def __init__(
        self,
        schema: dict[str, Any] | str,
        tokenizer: Any,
        *,
        vocab_size: int | None = None,
        strict: bool = True,
        max_whitespace: int = 20,
    ) -> None:
        self._schema = schema
        self._strict = strict
        super().__init__(tokenizer, vocab_size, max_whitespace)

    def _build(self, info: _nextok.TokenizerInfo) -> _nextok.Grammar:
        return _nextok.Grammar.json_schema(
            self._schema, info, strict=self._strict, max_whitespace=self._max_whitespace
        )


class JsonObjectLogitsProcessor(_GrammarLogitsProcessor):
    """Keeps ``model.generate`` output a JSON object (response_format json_object)."""

    def __init__(
        self, tokenizer: Any, *, vocab_size: int | None = None, max_whitespace: int = 20
    ) -> None:
        super().__init__(tokenizer, vocab_size, max_whitespace)

    def _build(self, info: _nextok.TokenizerInfo) -> _nextok.Grammar:
        return _nextok.Grammar.json_object(info, max_whitespace=self._max_whitespace)
