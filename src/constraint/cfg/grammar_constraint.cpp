// Public grammar objects: Grammar (GBNF, Lark, regex, choice) and
// GrammarConstraint. Regular front-ends (regex, choice) run on one byte
// DFA, a table lookup per trie node; GBNF and Lark run the Earley
// recogniser, one item set per trie depth, with repeated sets named
// (earley_walker.hpp), and masks of states met before copied from the
// grammar's memo (mask_memo.hpp).
#include <algorithm>
#include <optional>

#include "constraint/cfg/chart_names.hpp"
#include "constraint/cfg/earley.hpp"
#include "constraint/cfg/earley_walker.hpp"
#include "constraint/cfg/gbnf.hpp"
#include "constraint/cfg/lark.hpp"
#include "constraint/cfg/mask_memo.hpp"
#include "constraint/cfg/regular_fragments.hpp"
#include "constraint/cfg/structural_tag_lark.hpp"
#include "constraint/cfg/walker_pool.hpp"
#include "constraint/engine/mask_bits.hpp"
#include "constraint/engine/token_index_impl.hpp"
#include "constraint/regex/compile_budget.hpp"
#include "constraint/regex/dfa.hpp"
#include "constraint/trie/dfa_walker.hpp"
#include "nextok/error.hpp"
#include "nextok/grammar.hpp"
#include "nextok/mask.hpp"

namespace nextok {

struct Grammar::Impl {
  std::shared_ptr<const TokenIndex> index;
  Kind kind = Kind::kGbnf;
  std::optional<constraint::Dfa> dfa;                  // regex, choice, regular grammars
  std::unique_ptr<constraint::cfg::EarleyTables> cfg;  // gbnf, lark
  size_t max_parse_items = 0;
  // Masks by state: the Earley set's name (gbnf, lark) or the DFA state.
  std::unique_ptr<constraint::cfg::MaskMemo> memo;
  std::unique_ptr<constraint::cfg::WalkerPool<constraint::cfg::EarleyWalker>> walkers =
      std::make_unique<constraint::cfg::WalkerPool<constraint::cfg::EarleyWalker>>();
  std::unique_ptr<constraint::cfg::WalkerPool<constraint::DfaWalker>> dfa_walkers =
      std::make_unique<constraint::cfg::WalkerPool<constraint::DfaWalker>>();
  size_t compile_bytes = 0;  // the compile budget's peak
  // Special tokens the grammar names (sorted; read as special_token_bytes),
  // and the text tokens holding the byte 0xFF, which no grammar reads as
  // text once special tokens use it (cleared from every walk's mask).
  std::vector<uint32_t> specials;
  std::vector<uint32_t> ff_tokens;
};

namespace {

std::shared_ptr<const TokenIndex> need_index(std::shared_ptr<const TokenIndex> index) {
  if (!index) throw Error(ErrorCode::kInvalidArgument, "index", "a Grammar needs a TokenIndex");
  return index;
}

}  // namespace

namespace {

// DFA sizes for regular grammars and for regular parts of the others
// (regular_fragments.hpp): a fragment's states are all predicted where it
// starts, so fragments stay small; past these, Earley reads them as written.
constexpr size_t kRegularGrammarStates = 20000;
constexpr size_t kRegularFragmentStates = 256;
// Steps of FragmentBudget::work per ms of max_compile_ms: steps take 4 to
// 12 ns here, so the rewriting stays within about a quarter of the budget.
constexpr size_t kFragmentWorkPerMs = 25'000;

// A regular grammar runs on its DFA, as regex and choice do; the others on
// the Earley tables of the pruned grammar, regular parts determinized.
void set_cfg(Grammar::Impl& impl, constraint::cfg::Cfg g, const ConstraintLimits& limits) {
  constraint::cfg::prune(g);
  impl.specials = g.special_tokens;
  if (!impl.specials.empty()) {
    const Vocabulary& v = impl.index->vocab();
    for (uint32_t id = 0; id < v.size(); ++id) {
      if (!v.is_special(id) && v.bytes(id).find('\xFF') != std::string_view::npos)
        impl.ff_tokens.push_back(id);
    }
  }
  impl.memo = std::make_unique<constraint::cfg::MaskMemo>(limits.grammar_mask_memo_bytes);
  // An optimisation with a counted amount of work, then Earley as written:
  // the same grammar and limits always give the same masks' costs.
  constraint::cfg::FragmentBudget budget;
  budget.max_symbols = limits.max_grammar_nodes;
  if (limits.max_compile_ms) {
    budget.work = std::min<size_t>(budget.work, size_t{limits.max_compile_ms} * kFragmentWorkPerMs);
  }
  budget.max_states = std::min(kRegularGrammarStates, limits.max_dfa_states);
  if (auto d = constraint::cfg::regular_grammar_dfa(g, budget)) {
    impl.dfa = std::move(*d);
    return;
  }
  budget.max_states = std::min(kRegularFragmentStates, limits.max_dfa_states);
  constraint::cfg::determinize_regular_fragments(g, budget);
  constraint::cfg::prune(g);  // the rewritten parts' old helpers are unreachable now
  impl.cfg = std::make_unique<constraint::cfg::EarleyTables>(g);
  impl.max_parse_items = limits.max_parse_items;
}

}  // namespace

std::shared_ptr<const Grammar> Grammar::gbnf(std::shared_ptr<const TokenIndex> index,
                                             std::string_view text,
                                             const ConstraintLimits& limits) {
  constraint::CompileBudget::Scope budget(limits);
  auto impl = std::make_unique<Impl>();
  impl->index = need_index(std::move(index));
  set_cfg(*impl, constraint::cfg::parse_gbnf(text, limits, &impl->index->vocab()), limits);
  return make(std::move(impl), budget.peak_bytes());
}

std::shared_ptr<const Grammar> Grammar::lark(std::shared_ptr<const TokenIndex> index,
                                             std::string_view text,
                                             const ConstraintLimits& limits) {
  constraint::CompileBudget::Scope budget(limits);
  auto impl = std::make_unique<Impl>();
  impl->index = need_index(std::move(index));
  impl->kind = Kind::kLark;
  set_cfg(*impl, constraint::cfg::parse_lark(text, limits, &impl->index->vocab()), limits);
  return make(std::move(impl), budget.peak_bytes());
}

std::shared_ptr<const Grammar> Grammar::structural_tag(std::shared_ptr<const TokenIndex> index,
                                                       std::string_view json_text,
                                                       const ConstraintLimits& limits) {
  if (json_text.size() > limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "structural_tag", "the structural tag is too long");
  }
  const std::string lark = constraint::cfg::structural_tag_to_lark(json_text);
  constraint::CompileBudget::Scope budget(limits);
  auto impl = std::make_unique<Impl>();
  impl->index = need_index(std::move(index));
  impl->kind = Kind::kStructuralTag;
  try {
    set_cfg(*impl, constraint::cfg::parse_lark(lark, limits, &impl->index->vocab()), limits);
  } catch (const Error& e) {
    // A schema or budget error inside the grammar it reads as.
    throw Error(e.code(), "structural_tag", e.what());
  }
  return make(std::move(impl), budget.peak_bytes());
}

std::shared_ptr<const Grammar> Grammar::regex(std::shared_ptr<const TokenIndex> index,
                                              std::string_view pattern,
                                              const ConstraintLimits& limits) {
  constraint::CompileBudget::Scope budget(limits);
  auto impl = std::make_unique<Impl>();
  impl->index = need_index(std::move(index));
  impl->kind = Kind::kRegex;
  if (pattern.size() > limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "pattern", "the pattern is too long");
  }
  constraint::RegexOptions opt;
  opt.full_match = true;
  opt.max_states = limits.max_dfa_states;
  impl->dfa = constraint::Dfa::compile(pattern, opt);
  impl->memo = std::make_unique<constraint::cfg::MaskMemo>(limits.grammar_mask_memo_bytes);
  if (impl->dfa->empty()) {
    throw Error(ErrorCode::kInvalidArgument, "pattern", "the pattern matches no string");
  }
  return make(std::move(impl), budget.peak_bytes());
}

std::shared_ptr<const Grammar> Grammar::choice(std::shared_ptr<const TokenIndex> index,
                                               std::span<const std::string> strings,
                                               const ConstraintLimits& limits) {
  constraint::CompileBudget::Scope budget(limits);
  auto impl = std::make_unique<Impl>();
  impl->index = need_index(std::move(index));
  impl->kind = Kind::kChoice;
  if (strings.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "choice", "a choice needs at least one string");
  }
  if (strings.size() > limits.max_enum_values) {
    throw Error(ErrorCode::kInvalidArgument, "choice",
                std::to_string(strings.size()) + " strings; the limit is " +
                    std::to_string(limits.max_enum_values));
  }
  std::vector<constraint::RegexAlternative> alts;
  for (const auto& s : strings) alts.push_back({s, true, false});
  constraint::RegexOptions opt;
  opt.full_match = true;
  opt.max_states = limits.max_dfa_states;
  impl->dfa = constraint::Dfa::compile_labeled(alts, opt);
  impl->memo = std::make_unique<constraint::cfg::MaskMemo>(limits.grammar_mask_memo_bytes);
  return make(std::move(impl), budget.peak_bytes());
}

std::shared_ptr<const Grammar> Grammar::make(std::unique_ptr<Impl> impl, size_t compile_bytes) {
  impl->compile_bytes = compile_bytes;
  std::shared_ptr<Grammar> out(new Grammar());
  out->impl_ = std::move(impl);
  // The start state's mask is made here, into the memo, as XGrammar makes its
  // masks at compile time: engines compile off the decode path (vLLM's
  // compile threads, the server's background pool), so every request's first
  // mask is then a copy, and the walker it used starts warm. A grammar whose
  // first mask fails (max_parse_items) compiles; its first step_mask reports
  // the error, as it did before.
  if (out->impl_->memo->enabled()) {
    try {
      GrammarConstraint first(out);
      std::vector<uint32_t> mask(bitmask_words(out->impl_->index->vocab().size()));
      first.step_mask(mask);
    } catch (const Error&) {
    }
  }
  return out;
}

Grammar::~Grammar() = default;
size_t Grammar::compile_bytes() const noexcept {
  return impl_->compile_bytes;
}
Grammar::Kind Grammar::kind() const noexcept {
  return impl_->kind;
}
const TokenIndex& Grammar::index() const noexcept {
  return *impl_->index;
}

// --- GrammarConstraint --------------------------------------------------------

struct GrammarConstraint::State {
  struct Step {
    int32_t q = 0;      // DFA state
    uint32_t sets = 0;  // Earley: chart sets after this step
    bool finished = false;
  };
  std::vector<Step> history;  // [0] = start
  constraint::cfg::Chart chart;
  constraint::cfg::ChartNames names;                // the chart's sets' lasting names
  std::unique_ptr<constraint::cfg::Earley> earley;  // its dedupe table; made on first use

  constraint::cfg::Earley& parser(const Grammar::Impl& g) {
    if (!earley) earley = std::make_unique<constraint::cfg::Earley>(*g.cfg, g.max_parse_items);
    return *earley;
  }
  // Names the chart's sets from names.sets() on.
  void name_sets(const Grammar::Impl& g) { names.name_sets(*g.cfg, chart, *g.memo); }
};

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)), state_(std::make_unique<State>()) {
  if (!grammar_) {
    throw Error(ErrorCode::kInvalidArgument, "grammar", "GrammarConstraint needs a grammar");
  }
  reset();
}

GrammarConstraint::GrammarConstraint(const GrammarConstraint& other)
    : grammar_(other.grammar_),
      state_(std::make_unique<State>()),
      finished_(other.finished_),
      think_open_(other.think_open_) {
  state_->history = other.state_->history;
  state_->chart = other.state_->chart;
  state_->names = other.state_->names;
}

GrammarConstraint::~GrammarConstraint() = default;

std::unique_ptr<ConstraintEngine> GrammarConstraint::clone() const {
  return std::make_unique<GrammarConstraint>(*this);
}

void GrammarConstraint::reset() {
  const auto& g = grammar_->impl();
  state_->history.assign(1, {});
  if (g.dfa) {
    state_->history[0].q = g.dfa->start();
  } else {
    state_->parser(g).start(state_->chart);
    state_->names.clear();
    state_->name_sets(g);
    state_->history[0].sets = static_cast<uint32_t>(state_->chart.sets());
  }
  finished_ = false;
}

size_t GrammarConstraint::steps() const noexcept {
  return state_->history.size() - 1;
}

bool GrammarConstraint::is_complete() const noexcept {
  const auto& g = grammar_->impl();
  if (g.dfa) return g.dfa->accepting(state_->history.back().q);
  return state_->chart.accepting.back() != 0;
}

bool GrammarConstraint::can_continue() const {
  if (finished_) return false;
  const auto& g = grammar_->impl();
  if (g.dfa) {
    const int32_t q = state_->history.back().q;
    return q >= 0 && !g.dfa->final(q);
  }
  return !state_->parser(g).next_bytes(state_->chart).empty();
}

void GrammarConstraint::step_mask(std::span<uint32_t> mask) {
  const auto& g = grammar_->impl();
  const auto& ix = g.index->impl();
  const size_t words = constraint::clear_mask(mask, *ix.vocab);
  if (!finished_) {
    if (g.dfa) {
      const int32_t q = state_->history.back().q;
      if (!g.memo->find(q, mask.first(words))) {
        g.dfa_walkers->borrow()->allow(ix.trie, *g.dfa, q, mask.first(words));
        allow_specials(mask.first(words));
        g.memo->store(q, mask.first(words));
      }
    } else {
      // A matcher's own names (past the memo's budget) have no memoised mask.
      const int32_t lasting = state_->names.state(state_->names.sets() - 1);
      const int32_t name = lasting < constraint::cfg::kLocalNames ? lasting : -1;
      if (!g.memo->find(name, mask.first(words))) {
        g.walkers->borrow()->allow(ix.trie, *g.cfg, g.max_parse_items, state_->chart.sets(),
                                   state_->names, mask.first(words));
        allow_specials(mask.first(words));
        g.memo->store(name, mask.first(words));
      }
    }
  }
  if (finished_ || is_complete()) {
    constraint::allow_eos(mask, *ix.vocab);
  }
}

void GrammarConstraint::allow_specials(std::span<uint32_t> mask) const {
  const auto& g = grammar_->impl();
  if (g.specials.empty()) return;
  for (uint32_t id : g.ff_tokens) bitmask_set(mask, id, false);
  const bool ff = g.dfa ? g.dfa->next(state_->history.back().q, 0xFF) >= 0
                        : state_->parser(g).next_bytes(state_->chart).has(0xFF);
  if (!ff) return;
  for (uint32_t id : g.specials) {
    if (accepts_bytes(constraint::cfg::special_token_bytes(id))) bitmask_set(mask, id, true);
  }
}

bool GrammarConstraint::reads_special(uint32_t token) const {
  const auto& specials = grammar_->impl().specials;
  return std::binary_search(specials.begin(), specials.end(), token) &&
         accepts_bytes(constraint::cfg::special_token_bytes(token));
}

void GrammarConstraint::advance(uint32_t token) {
  const auto& g = grammar_->impl();
  const Vocabulary& vocab = *g.index->impl().vocab;
  State::Step next = state_->history.back();
  if (think_open_) {
    // Reasoning is not constrained: the state stays, one step is recorded.
  } else if (vocab.is_eos(token) && (finished_ || !reads_special(token))) {
    if (!finished_ && !is_complete()) {
      throw Error(ErrorCode::kInvalidArgument, "token", "EOS before the grammar is complete");
    }
    next.finished = true;
  } else {
    if (finished_) throw Error(ErrorCode::kInvalidArgument, "token", "token after EOS");
    std::string_view bytes = token < vocab.size() ? vocab.bytes(token) : std::string_view{};
    std::string special;
    if (token < vocab.size() && vocab.is_special(token) &&
        std::binary_search(g.specials.begin(), g.specials.end(), token)) {
      special = constraint::cfg::special_token_bytes(token);
      bytes = special;
    }
    const auto refuse = [&]() {
      return Error(ErrorCode::kInvalidArgument, "token",
                   "token " + std::to_string(token) + " is not allowed by the grammar here");
    };
    if (token >= vocab.size() || (vocab.is_special(token) && special.empty()) || bytes.empty())
      throw refuse();
    if (g.dfa) {
      int32_t q = next.q;
      for (unsigned char b : bytes) q = g.dfa->next(q, b);
      if (q < 0) throw refuse();
      next.q = q;
    } else {
      auto& chart = state_->chart;
      const size_t before = chart.sets();
      for (unsigned char b : bytes) {
        bool ok = false;
        try {
          ok = state_->parser(g).step(chart, b);
        } catch (...) {
          chart.truncate(before);
          throw;
        }
        if (!ok) {
          chart.truncate(before);
          throw refuse();
        }
      }
      state_->name_sets(g);
      next.sets = static_cast<uint32_t>(chart.sets());
    }
  }
  state_->history.push_back(next);
  finished_ = next.finished;
}

void GrammarConstraint::rollback(size_t n) {
  if (n > steps()) {
    throw Error(ErrorCode::kInvalidArgument, "n",
                "cannot roll back " + std::to_string(n) + " steps; only " +
                    std::to_string(steps()) + " taken");
  }
  state_->history.resize(state_->history.size() - n);
  if (!grammar_->impl().dfa) {
    state_->chart.truncate(state_->history.back().sets);
    state_->names.truncate(state_->history.back().sets);
  }
  finished_ = state_->history.back().finished;
}

bool GrammarConstraint::accepts_bytes(std::string_view bytes) const {
  const auto& g = grammar_->impl();
  if (g.dfa) {
    int32_t q = state_->history.back().q;
    for (unsigned char b : bytes) q = g.dfa->next(q, b);
    return q >= 0;
  }
  auto& chart = state_->chart;
  const size_t before = chart.sets();
  bool ok = true;
  for (unsigned char b : bytes) {
    if (!(ok = state_->parser(g).step(chart, b))) break;
  }
  chart.truncate(before);
  return ok;
}

bool GrammarConstraint::completes_with(std::string_view bytes) const {
  const auto& g = grammar_->impl();
  if (g.dfa) {
    int32_t q = state_->history.back().q;
    for (unsigned char b : bytes) q = g.dfa->next(q, b);
    return g.dfa->accepting(q);
  }
  auto& chart = state_->chart;
  const size_t before = chart.sets();
  bool ok = true;
  for (unsigned char b : bytes) {
    if (!(ok = state_->parser(g).step(chart, b))) break;
  }
  ok = ok && chart.accepting.back();
  chart.truncate(before);
  return ok;
}

}  // namespace nextok
