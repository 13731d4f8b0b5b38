"""vLLM integration: nextok as a structured-output backend.

::

    import nextok.vllm
    nextok.vllm.enable()                      # once, before building the engine
    llm = vllm.LLM(model, structured_outputs_config={"backend": "nextok"})
    params = vllm.SamplingParams(
        structured_outputs=vllm.sampling_params.StructuredOutputsParams(json=schema)
    )

vLLM picks its structured-output backend from a fixed list, so ``enable()``
adds ``"nextok"`` to it on the installed vLLM: the accepted values of
``StructuredOutputsConfig.backend``, the request validation in
``SamplingParams`` and the backend construction in
``StructuredOutputManager.grammar_init``. The package also declares a
``vllm.general_plugins`` entry point that calls ``enable()`` in every
process vLLM starts (engine core, workers), so a spawned engine core knows
the backend too; ``NEXTOK_VLLM_PLUGIN=0`` turns that off. docs/vllm.md has
the equivalent upstream patch.

``NextokBackend`` / ``NextokGrammar`` implement vLLM's
``StructuredOutputBackend`` / ``StructuredOutputGrammar``: JSON Schema and
JSON-object requests (other request kinds are refused when the request is
validated). The bitmask is vLLM's int32 ``[rows, ceil(V/32)]`` tensor, so
vLLM's own bitmask application masks the logits.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import torch
from vllm.v1.structured_output.backend_types import (
    StructuredOutputBackend,
    StructuredOutputGrammar,
    StructuredOutputOptions,
)

from . import _nextok
from ._bitmask import bitmask_words
from ._grammar_text import compile_grammar_text
from ._hf_vocab import huggingface_token_bytes

__all__ = [
    "BACKEND_NAME",
    "NextokBackend",
    "NextokGrammar",
    "enable",
    "is_enabled",
    "settings",
    "validate_request",
]

BACKEND_NAME = "nextok"
logger = logging.getLogger(__name__)

# Options for grammars the backend compiles (enable() sets them).
settings: dict[str, Any] = {"strict": False, "max_whitespace": 20}

_enable_lock = threading.Lock()
_enabled = False


@dataclass
class NextokGrammar(StructuredOutputGrammar):
    """One request's grammar state: a ``nextok.Matcher``."""

    matcher: _nextok.Matcher
    eos_ids: frozenset[int]
    num_processed_tokens: int = field(default=0, init=False)
    _terminated: bool = field(default=False, init=False)

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Advances by each token; False (state kept up to the refusal) on a refused one.

        Tokens after the one that terminates the grammar (EOS) are ignored.
        """
        if self._terminated:
            return True
        for token in tokens:
            try:
                self.matcher.accept_token(token)
            except _nextok.NextokError as e:
                logger.error("nextok refused token %s for request %s: %s", token, request_id, e)
                return False
            self.num_processed_tokens += 1
            if self.matcher.is_terminated():
                self._terminated = True
                break
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest accepted prefix of tokens (up to the first EOS); state unchanged."""
        if self._terminated:
            return []
        prefix = list(tokens[: self.matcher.validate_tokens(tokens)])
        for i, token in enumerate(prefix):
            if token in self.eos_ids:
                return prefix[: i + 1]
        return prefix

    def rollback(self, num_tokens: int) -> None:
        """Undoes the last num_tokens accepted tokens."""
        if num_tokens < 0:
            raise ValueError("num_tokens must be >= 0")
        self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens
        self._terminated = self.matcher.is_terminated()

    def fill_bitmask(self, bitmask: torch.Tensor, batch_index: int) -> None:
        """Writes the allowed next tokens into row batch_index (GIL released)."""
        self.matcher.fill_next_token_bitmask(bitmask, batch_index)

    def is_terminated(self) -> bool:
        return self._terminated

    def reset(self) -> None:
        self.matcher.reset()
        self.num_processed_tokens = 0
        self._terminated = False


@dataclass
class NextokBackend(StructuredOutputBackend):
    """Engine-level backend: the vocabulary once, a compiled grammar per distinct request."""

    def __post_init__(self) -> None:
        self._tokens, self._eos, self._special = huggingface_token_bytes(self.tokenizer)
        if len(self._tokens) > self.vocab_size:
            # Ids past the logits width can never be sampled.
            self._tokens = self._tokens[: self.vocab_size]
        self._lock = threading.Lock()
        self._infos: dict[frozenset[int], _nextok.TokenizerInfo] = {}
        self._grammars: dict[tuple[Any, ...], _nextok.Grammar] = {}
        self._max_cached = 256

    def tokenizer_info(self, stop_token_ids: set[int] | None = None) -> _nextok.TokenizerInfo:
        """The vocabulary with these ids ending a sequence (default: the tokenizer's EOS)."""
        stops = frozenset(int(t) for t in stop_token_ids) if stop_token_ids else frozenset()
        stops = frozenset(t for t in stops if 0 <= t < self.vocab_size) or frozenset(self._eos)
        with self._lock:
            info = self._infos.get(stops)
        if info is None:
            info = _nextok.TokenizerInfo.from_token_bytes(
                self._tokens,
                eos_ids=sorted(stops),
                special_ids=sorted(set(self._special) | stops),
                vocab_size=self.vocab_size,
            )
            with self._lock:
                info = self._infos.setdefault(stops, info)
        return info

    def _grammar(
        self, request_type: StructuredOutputOptions, spec: str, info: _nextok.TokenizerInfo
    ) -> _nextok.Grammar:
        strict = bool(settings["strict"])
        ws = int(settings["max_whitespace"])
        key = (request_type, spec, id(info), strict, ws)
        with self._lock:
            cached = self._grammars.get(key)
        if cached is not None:
            return cached
        if request_type == StructuredOutputOptions.JSON:
            grammar = _nextok.Grammar.json_schema(spec, info, strict=strict, max_whitespace=ws)
            for warning in grammar.warnings:
                logger.warning("nextok ignores a keyword of this schema: %s", warning)
        elif request_type == StructuredOutputOptions.JSON_OBJECT:
            grammar = _nextok.Grammar.json_object(info, max_whitespace=ws)
        elif request_type == StructuredOutputOptions.REGEX:
            grammar = _nextok.Grammar.regex(spec, info)
        elif request_type == StructuredOutputOptions.CHOICE:
            grammar = _nextok.Grammar.choice([str(c) for c in json.loads(spec)], info)
        elif request_type == StructuredOutputOptions.GRAMMAR:
            grammar = compile_grammar_text(spec, info)
        elif request_type == StructuredOutputOptions.STRUCTURAL_TAG:
            grammar = _nextok.Grammar.structural_tag(spec, info)
        else:
            raise ValueError(
                f"the nextok backend supports JSON Schema, JSON object, regex, choice, "
                f"grammar (GBNF or Lark) and structural-tag requests, not {request_type.name}"
            )
        with self._lock:
            if len(self._grammars) >= self._max_cached:
                self._grammars.pop(next(iter(self._grammars)))
            self._grammars[key] = grammar
        return grammar

    def compile_grammar(
        self,
        request_type: StructuredOutputOptions,
        grammar_spec: str,
        stop_token_ids: set[int] | None = None,
    ) -> StructuredOutputGrammar:
        info = self.tokenizer_info(stop_token_ids)
        grammar = self._grammar(request_type, grammar_spec, info)
        return NextokGrammar(matcher=_nextok.Matcher(grammar), eos_ids=frozenset(info.eos_ids))

    def allocate_token_bitmask(self, max_num_seqs: int) -> torch.Tensor:
        if max_num_seqs < 1:
            raise ValueError("max_num_seqs must be >= 1")
        return torch.full((max_num_seqs, bitmask_words(self.vocab_size)), -1, dtype=torch.int32)

    def destroy(self) -> None:
        with self._lock:
            self._grammars.clear()
            self._infos.clear()


# ---------------------------------------------------------------------------
# Registration on an unmodified vLLM.


def _validation_error(message: str) -> Exception:
    from vllm.exceptions import VLLMValidationError

    return VLLMValidationError(message)


def validate_request(params: Any, tokenizer: Any = None) -> None:
    """Raises VLLMValidationError unless the nextok backend can serve this request.

    ``params``: a ``vllm.SamplingParams`` with ``structured_outputs`` set.
    JSON Schema (valid JSON text or an object), JSON-object, regex, choice,
    grammar (GBNF or Lark) and structural-tag (XGrammar's JSON) requests are
    served; JSON that does not parse is refused here, a grammar that does not
    compile fails its request when it compiles.
    """
    so = params.structured_outputs
    if so.json is not None:
        if isinstance(so.json, str):
            if not so.json.strip():
                raise _validation_error("structured_outputs.json cannot be an empty string")
            try:
                json.loads(so.json)
            except json.JSONDecodeError as e:
                raise _validation_error(f"Invalid JSON grammar specification: {e}") from e
    elif so.json_object is not None:
        if so.json_object is False:
            raise _validation_error(
                "structured_outputs.json_object must be True if set; omit "
                "structured_outputs to disable structured outputs"
            )
    elif so.regex is not None or so.grammar is not None:
        # Syntax errors surface when the grammar compiles (a failed request).
        text = so.regex if so.regex is not None else so.grammar
        if not isinstance(text, str) or not text.strip():
            raise _validation_error("structured_outputs regex/grammar must be a non-empty string")
    elif so.choice is not None:
        if not isinstance(so.choice, list) or not so.choice:
            raise _validation_error("structured_outputs.choice must be a non-empty list")
    elif getattr(so, "structural_tag", None) is not None:
        try:
            json.loads(so.structural_tag)
        except (TypeError, json.JSONDecodeError) as e:
            raise _validation_error(f"Invalid structural_tag JSON for nextok: {e}") from e
    else:
        raise _validation_error(
            "the nextok structured output backend supports json, json_object, regex, "
            "choice, grammar and structural_tag requests; this one has no constraint"
        )


def _validate_request(params: Any, model_config: Any, tokenizer: Any) -> None:
    """What SamplingParams validation does for a request to the nextok backend."""
    so = params.structured_outputs
    if model_config.is_diffusion:
        raise _validation_error(
            "Structured outputs are not supported for diffusion language models."
        )
    if tokenizer is None:
        raise _validation_error(
            "Structured outputs requires a tokenizer so it can't be used with 'skip_tokenizer_init'"
        )
    if so._backend and so._backend != BACKEND_NAME:
        raise _validation_error(
            f"Request-level structured output backend selection is not supported: the "
            f"request specified '{so._backend}', but vLLM was initialised with "
            f"'{BACKEND_NAME}'."
        )
    so._backend = BACKEND_NAME
    validate_request(params, tokenizer)
    so.__post_init__()


def _extend_backend_literal() -> None:
    from pydantic.dataclasses import rebuild_dataclass
    from vllm.config import structured_outputs as so_config

    cls = so_config.StructuredOutputsConfig
    names = get_args(cls.__annotations__["backend"])
    if BACKEND_NAME in names:
        return
    extended = Literal[(*names, BACKEND_NAME)]  # type: ignore[valid-type]
    so_config.StructuredOutputsBackend = extended  # type: ignore[misc]
    cls.__annotations__["backend"] = extended
    cls.__dataclass_fields__["backend"].type = extended
    cls.__pydantic_fields__["backend"].annotation = extended  # type: ignore[attr-defined]
    rebuild_dataclass(cls, force=True)
    # VllmConfig validates a nested dict against its own copy of the schema.
    from vllm.config import VllmConfig

    rebuild_dataclass(VllmConfig, force=True)


def enable(*, strict: bool | None = None, max_whitespace: int | None = None) -> None:
    """Makes ``"nextok"`` a structured-output backend of the installed vLLM.

    Idempotent; call it before building the engine (``LLM(...)``) with
    ``structured_outputs_config={"backend": "nextok"}``. ``strict``: a schema
    keyword nextok cannot enforce fails the request (default False: it is
    ignored and logged). ``max_whitespace``: longest whitespace run between
    JSON tokens (default 20; 0 = compact output).
    """
    global _enabled
    if strict is not None:
        settings["strict"] = bool(strict)
    if max_whitespace is not None:
        if not 0 <= max_whitespace <= 255:
            raise ValueError("max_whitespace must be in [0, 255]")
        settings["max_whitespace"] = int(max_whitespace)
    with _enable_lock:
        if _enabled:
            return
        from vllm.sampling_params import SamplingParams
        from vllm.v1.structured_output import StructuredOutputManager

        _extend_backend_literal()

        validate = SamplingParams._validate_structured_outputs

        def _validate_structured_outputs(
            self: Any, model_config: Any, structured_outputs_config: Any, tokenizer: Any
        ) -> None:
            if (
                structured_outputs_config is not None
                and self.structured_outputs is not None
                and structured_outputs_config.backend == BACKEND_NAME
            ):
                _validate_request(self, model_config, tokenizer)
                return
            validate(self, model_config, structured_outputs_config, tokenizer)

        grammar_init = StructuredOutputManager.grammar_init

        def _grammar_init(self: Any, request: Any) -> None:
            so_request = request.structured_output_request
            if (
                self.backend is None
                and so_request is not None
                and request.sampling_params.structured_outputs._backend == BACKEND_NAME
            ):
                self.backend = NextokBackend(
                    self.vllm_config,
                    tokenizer=self.tokenizer,
                    vocab_size=self.vllm_config.model_config.get_vocab_size(),
                )
            grammar_init(self, request)

        fill_bitmasks = StructuredOutputManager._fill_bitmasks

        def _fill_bitmasks(self: Any, batch: Any) -> None:
            # The threaded path hands over chunks of (grammar, row, apply):
            # nextok's rows are filled in one batch call (GIL released).
            rows = list(batch)
            ours = [
                (g, i)
                for g, i, apply in rows
                if apply and isinstance(g, NextokGrammar) and not g.is_terminated()
            ]
            if len(ours) < 2:
                fill_bitmasks(self, rows)
                return
            _nextok.fill_next_token_bitmasks(
                [g.matcher for g, _ in ours], self._grammar_bitmask, indices=[i for _, i in ours]
            )
            done = {i for _, i in ours}
            fill_bitmasks(self, [r for r in rows if r[1] not in done])

        SamplingParams._validate_structured_outputs = _validate_structured_outputs
        StructuredOutputManager.grammar_init = _grammar_init
        StructuredOutputManager._fill_bitmasks = _fill_bitmasks
        _enabled = True


def is_enabled() -> bool:
    """Whether enable() has run in this process."""
    return _enabled


def _vllm_plugin() -> None:
    """The ``vllm.general_plugins`` entry point: enable() unless NEXTOK_VLLM_PLUGIN=0."""
    if os.environ.get("NEXTOK_VLLM_PLUGIN", "1") in ("0", ""):
        return
    try:
        enable()
    except Exception:  # a vLLM this adapter does not know must still start
        logger.exception("nextok: could not register the vLLM structured-output backend")
