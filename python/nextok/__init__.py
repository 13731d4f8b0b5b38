"""nextok: next-token selection for LLM engines.

Token bitmasks that keep generation inside a JSON Schema, and a sampling
pipeline (penalties, top-k/top-p/min-p, logprobs, seeded draws), over the
nextok C++ libraries. docs/python.md describes the API.

Typical constrained step::

    info = nextok.TokenizerInfo.from_path("Llama-3.1-8B/")       # or from_huggingface(tok)
    grammar = nextok.Grammar.json_schema(schema, info)            # compile once, share
    matcher = nextok.Matcher(grammar)                             # one per sequence
    bitmask = nextok.allocate_token_bitmask(1, info.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)
    nextok.apply_token_bitmask_inplace(logits, bitmask)
    token = sampler.sample(logits[0])
    matcher.accept_token(token)
"""

from __future__ import annotations

from ._bitmask import allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_words
from ._nextok import (
    Grammar,
    Matcher,
    NextokError,
    SampleOutput,
    Sampler,
    SampleStep,
    TokenizerInfo,
    __version__,
    fill_next_token_bitmasks,
)
from ._sample import sample

__all__ = [
    "Grammar",
    "Matcher",
    "NextokError",
    "SampleOutput",
    "SampleStep",
    "Sampler",
    "TokenizerInfo",
    "__version__",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bitmask_words",
    "fill_next_token_bitmasks",
    "sample",
]
