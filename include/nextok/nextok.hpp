// Umbrella header.
#pragma once

#include "nextok/chat.hpp"
#include "nextok/config.hpp"
#include "nextok/constraint.hpp"
#include "nextok/error.hpp"
#include "nextok/gguf.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/logits.hpp"
#include "nextok/logprobs.hpp"
#include "nextok/mask.hpp"
#include "nextok/rng.hpp"
#include "nextok/sampler.hpp"
#include "nextok/tokenizer.hpp"
#include "nextok/vocab.hpp"
#include "nextok/version.hpp"
