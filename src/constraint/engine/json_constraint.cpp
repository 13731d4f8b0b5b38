// Public JSON constraint objects: TokenIndex, JsonGrammar, JsonConstraint.
#include <nlohmann/json.hpp>

#include "constraint/engine/json_impl.hpp"
#include "constraint/engine/leaf_cache.hpp"
#include "constraint/engine/machine.hpp"
#include "constraint/engine/mask_bits.hpp"
#include "constraint/engine/mask_walker.hpp"
#include "constraint/engine/token_index_impl.hpp"
#include "constraint/regex/compile_budget.hpp"
#include "constraint/schema/schema_compiler.hpp"
#include "constraint/trie/token_trie.hpp"
#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/mask.hpp"

namespace nextok {

using constraint::ConfigSet;

namespace {

// What a parsed schema holds: a value per node, the heap text of long
// strings and keys, a map node per member. Walked without recursion, since
// the parser accepts any depth.
size_t json_tree_bytes(const nlohmann::json& root) {
  constexpr size_t kMemberBytes = 96;  // map node, key string, links
  auto text = [](const std::string& t) { return t.size() > 15 ? t.capacity() + 1 : 0; };
  size_t bytes = 0;
  std::vector<const nlohmann::json*> todo = {&root};
  while (!todo.empty()) {
    const nlohmann::json* j = todo.back();
    todo.pop_back();
    bytes += sizeof(nlohmann::json);
    if (j->is_string()) {
      bytes += sizeof(std::string) + text(j->get_ref<const std::string&>());
    } else if (j->is_object()) {
      for (const auto& [k, v] : j->items()) {
        bytes += kMemberBytes + text(k);
        todo.push_back(&v);
      }
    } else if (j->is_array()) {
      bytes += j->size() * sizeof(nlohmann::json);
      for (const auto& v : *j) todo.push_back(&v);
    }
  }
  return bytes;
}

}  // namespace

std::shared_ptr<const TokenIndex> TokenIndex::build(std::shared_ptr<const Vocabulary> vocab) {
  if (!vocab) throw Error(ErrorCode::kInvalidArgument, "vocab", "TokenIndex needs a vocabulary");
  std::shared_ptr<TokenIndex> index(new TokenIndex());
  index->impl_ = std::make_unique<Impl>(std::move(vocab));
  return index;
}

TokenIndex::~TokenIndex() = default;
const Vocabulary& TokenIndex::vocab() const noexcept {
  return *impl_->vocab;
}

std::shared_ptr<const JsonGrammar> JsonGrammar::from_schema(std::shared_ptr<const TokenIndex> index,
                                                            std::string_view schema_json,
                                                            const JsonConstraintOptions& opt) {
  if (!index) throw Error(ErrorCode::kInvalidArgument, "index", "JsonGrammar needs a TokenIndex");
  if (schema_json.size() > opt.limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "schema",
                "schema is " + std::to_string(schema_json.size()) + " bytes; the limit is " +
                    std::to_string(opt.limits.max_schema_bytes));
  }
  constraint::CompileBudget::Scope budget(opt.limits);
  nlohmann::json schema;
  try {
    schema = nlohmann::json::parse(schema_json);
  } catch (const nlohmann::json::exception& e) {  // syntax, or numbers out of range
    throw Error(ErrorCode::kInvalidArgument, "schema",
                std::string("schema is not valid JSON: ") + e.what());
  }
  auto so = constraint::SchemaCompileOptions::limited_by(opt.limits);
  so.strict = opt.strict;
  so.max_whitespace = opt.max_whitespace;
  constraint::CompileBudget::charge(json_tree_bytes(schema));
  auto compiled = constraint::compile_json_schema(schema, so, constraint::StandardDfas::get());
  auto impl = std::make_unique<Impl>();
  impl->index = std::move(index);
  impl->grammar = std::move(compiled.grammar);
  impl->warnings = std::move(compiled.warnings);
  impl->compile_bytes = budget.peak_bytes();  // the matcher's setup charges nothing
  return make(std::move(impl));
}

std::shared_ptr<const JsonGrammar> JsonGrammar::any_object(std::shared_ptr<const TokenIndex> index,
                                                           const JsonConstraintOptions& opt) {
  if (!index) throw Error(ErrorCode::kInvalidArgument, "index", "JsonGrammar needs a TokenIndex");
  auto impl = std::make_unique<Impl>();
  impl->index = std::move(index);
  impl->grammar =
      constraint::any_json_grammar(true, opt.max_whitespace, constraint::StandardDfas::get());
  return make(std::move(impl));
}

std::shared_ptr<const JsonGrammar> JsonGrammar::make(std::unique_ptr<Impl> impl) {
  impl->machine = std::make_unique<constraint::Machine>(impl->grammar);
  std::shared_ptr<JsonGrammar> g(new JsonGrammar());
  g->impl_ = std::move(impl);
  return g;
}

JsonGrammar::~JsonGrammar() = default;
const std::vector<std::string>& JsonGrammar::warnings() const noexcept {
  return impl_->warnings;
}
size_t JsonGrammar::compile_bytes() const noexcept {
  return impl_->compile_bytes;
}

// --- JsonConstraint -----------------------------------------------------------

struct JsonConstraint::State {
  struct Step {
    ConfigSet set;
    bool finished = false;
  };
  std::vector<Step> history;  // state after each advance; [0] = start
  std::unique_ptr<constraint::MaskWalker> walker;
  ConfigSet scratch_a, scratch_b;
};

JsonConstraint::JsonConstraint(std::shared_ptr<const JsonGrammar> grammar)
    : grammar_(std::move(grammar)), state_(std::make_unique<State>()) {
  if (!grammar_)
    throw Error(ErrorCode::kInvalidArgument, "grammar", "JsonConstraint needs a grammar");
  reset();
}

JsonConstraint::JsonConstraint(const JsonConstraint& other)
    : grammar_(other.grammar_),
      state_(std::make_unique<State>()),
      finished_(other.finished_),
      think_open_(other.think_open_) {
  state_->history = other.state_->history;
}

JsonConstraint::~JsonConstraint() = default;

std::unique_ptr<ConstraintEngine> JsonConstraint::clone() const {
  return std::make_unique<JsonConstraint>(*this);
}

void JsonConstraint::reset() {
  state_->history.assign(1, {});
  grammar_->impl().machine->start(state_->history[0].set);
  finished_ = false;
}

size_t JsonConstraint::steps() const noexcept {
  return state_->history.size() - 1;
}

bool JsonConstraint::is_complete() const noexcept {
  return grammar_->impl().machine->complete(state_->history.back().set);
}

bool JsonConstraint::can_continue() const {
  return !finished_ && grammar_->impl().machine->can_continue(state_->history.back().set);
}

void JsonConstraint::step_mask(std::span<uint32_t> mask) {
  const auto& g = grammar_->impl();
  const auto& ix = g.index->impl();
  const size_t words = constraint::clear_mask(mask, *ix.vocab);
  if (!finished_) {
    if (!state_->walker) {
      state_->walker = std::make_unique<constraint::MaskWalker>(
          ix.trie, *g.machine,
          constraint::MaskCaches{&ix.standard_cache, &g.cache, &g.configs, ix.standard_dfas});
    }
    state_->walker->allow(state_->history.back().set, mask.first(words));
  }
  if (finished_ || is_complete()) {
    constraint::allow_eos(mask, *ix.vocab);
  }
}

void JsonConstraint::advance(uint32_t token) {
  const auto& g = grammar_->impl();
  const Vocabulary& vocab = *g.index->impl().vocab;
  State::Step next;
  if (think_open_) {
    next = state_->history.back();
  } else if (vocab.is_eos(token)) {
    if (!finished_ && !is_complete()) {
      throw Error(ErrorCode::kInvalidArgument, "token", "EOS before the JSON value is complete");
    }
    next.set = state_->history.back().set;
    next.finished = true;
  } else {
    if (finished_) throw Error(ErrorCode::kInvalidArgument, "token", "token after EOS");
    const std::string_view bytes = vocab.bytes(token);
    if (token >= vocab.size() || vocab.is_special(token) || bytes.empty()) {
      throw Error(ErrorCode::kInvalidArgument, "token",
                  "token " + std::to_string(token) + " is not allowed by the JSON constraint");
    }
    ConfigSet* cur = &state_->history.back().set;
    ConfigSet* out = &state_->scratch_a;
    ConfigSet* spare = &state_->scratch_b;
    for (unsigned char b : bytes) {
      if (!g.machine->step(*cur, b, *out)) {
        throw Error(
            ErrorCode::kInvalidArgument, "token",
            "token " + std::to_string(token) + " is not allowed by the JSON constraint here");
      }
      cur = out;
      std::swap(out, spare);
    }
    next.set = *cur;
  }
  state_->history.push_back(std::move(next));
  finished_ = state_->history.back().finished;
}

void JsonConstraint::rollback(size_t n) {
  if (n > steps()) {
    throw Error(ErrorCode::kInvalidArgument, "n",
                "cannot roll back " + std::to_string(n) + " steps; only " +
                    std::to_string(steps()) + " taken");
  }
  state_->history.resize(state_->history.size() - n);
  finished_ = state_->history.back().finished;
}

namespace {

bool read_bytes(const constraint::Machine& m, ConfigSet& cur, std::string_view bytes) {
  ConfigSet out;
  for (unsigned char b : bytes) {
    if (!m.step(cur, b, out)) return false;
    std::swap(cur, out);
  }
  return true;
}

}  // namespace

bool JsonConstraint::accepts_bytes(std::string_view bytes) const {
  ConfigSet cur = state_->history.back().set;
  return read_bytes(*grammar_->impl().machine, cur, bytes);
}

bool JsonConstraint::completes_with(std::string_view bytes) const {
  ConfigSet cur = state_->history.back().set;
  const auto& m = *grammar_->impl().machine;
  return read_bytes(m, cur, bytes) && m.complete(cur);
}

}  // namespace nextok
