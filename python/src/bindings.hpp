// Shared declarations of the nextok._nextok extension: the bound C++ types
// and one registration function per concept (one source file each).
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "nextok/config.hpp"
#include "nextok/grammar.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/vocab.hpp"

namespace nextok::py {

namespace nb = nanobind;

// A vocabulary plus the logits width it is used with (>= vocab->size();
// the ids past the tokenizer are absent and never allowed). The token index
// is built on first use and then shared by every grammar.
struct TokenizerInfo {
  std::shared_ptr<const Vocabulary> vocab;
  std::size_t vocab_size = 0;

  std::shared_ptr<const TokenIndex> index() const;

 private:
  mutable std::once_flag index_once_;
  mutable std::shared_ptr<const TokenIndex> index_;
};

// One compiled grammar; immutable, so any number of threads share it. A
// JSON schema (grammar) or a GBNF / regex / choice grammar (cfg).
struct Grammar {
  std::shared_ptr<const JsonGrammar> grammar;
  std::shared_ptr<const TokenizerInfo> info;
  std::shared_ptr<const ::nextok::Grammar> cfg;
};

// The matcher state of either kind of grammar behind one set of calls.
class AnyConstraint {
 public:
  explicit AnyConstraint(const Grammar& g)
      : v_(g.cfg ? Variant(std::in_place_type<GrammarConstraint>, g.cfg)
                 : Variant(std::in_place_type<JsonConstraint>, g.grammar)) {}
  ConstraintEngine& engine() {
    return std::visit([](auto& c) -> ConstraintEngine& { return c; }, v_);
  }
  const ConstraintEngine& engine() const {
    return std::visit([](const auto& c) -> const ConstraintEngine& { return c; }, v_);
  }
  void step_mask(std::span<uint32_t> mask) { engine().step_mask(mask); }
  void advance(uint32_t token) { engine().advance(token); }
  void rollback(std::size_t n) { engine().rollback(n); }
  void reset() { engine().reset(); }
  bool finished() const { return engine().finished(); }
  bool is_complete() const { return engine().is_complete(); }
  bool can_continue() const { return engine().can_continue(); }
  std::size_t steps() const {
    return std::visit([](const auto& c) { return c.steps(); }, v_);
  }
  bool accepts_bytes(std::string_view b) const {
    return std::visit([&](const auto& c) { return c.accepts_bytes(b); }, v_);
  }

 private:
  using Variant = std::variant<JsonConstraint, GrammarConstraint>;
  Variant v_;
};

// One sequence's position in a grammar. One thread at a time.
struct Matcher {
  explicit Matcher(const Grammar& g) : constraint(g), info(g.info) {}
  Matcher(const Matcher& other) = default;
  AnyConstraint constraint;
  std::shared_ptr<const TokenizerInfo> info;
  std::size_t words() const noexcept { return (info->vocab_size + 31) / 32; }
};

// One request's sampling parameters as the Python calls take them, checked
// (NextokError naming the bad one).
struct Configs {
  SamplerConfig sampler;
  PenaltyConfig penalties;
};
Configs make_configs(float temperature, float top_p, std::int32_t top_k, float min_p,
                     std::optional<std::uint64_t> seed, std::uint32_t top_logprobs,
                     const std::string& filter_order, float repetition_penalty,
                     float presence_penalty, float frequency_penalty,
                     const std::optional<std::unordered_map<std::int32_t, float>>& logit_bias,
                     std::uint32_t penalty_window);

void bind_errors(nb::module_& m);
void bind_vocab(nb::module_& m);
void bind_matcher(nb::module_& m);
void bind_batch(nb::module_& m);
void bind_sampler(nb::module_& m);
void bind_timing(nb::module_& m);
void bind_cuda(nb::module_& m);

}  // namespace nextok::py
