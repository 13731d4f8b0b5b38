// Umbrella header.
#pragma once

#include "nextok/config.hpp"
#include "nextok/error.hpp"
#include "nextok/logits.hpp"
#include "nextok/logprobs.hpp"
#include "nextok/mask.hpp"
#include "nextok/rng.hpp"
#include "nextok/sampler.hpp"
#include "nextok/version.hpp"
