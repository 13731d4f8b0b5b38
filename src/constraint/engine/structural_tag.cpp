// Structural tags (nextok/structural_tag.hpp). The output is read by a small
// outer automaton: free text (watching for the begin tag with a KMP
// matcher), the begin tag, the JSON value (the content grammar's machine),
// the end tag, whitespace between segments. A mask is the union of the
// tokens read within one phase (the JSON walker's mask inside a value; all
// tokens in free text) and of candidate tokens, listed when the grammar is
// built, that may cross into the next phase; each candidate is checked by
// reading its bytes through the automaton, so the mask is exact.
#include "nextok/structural_tag.hpp"
#include "constraint/engine/mask_bits.hpp"

#include <algorithm>
#include <array>
#include <mutex>

#include "constraint/engine/json_impl.hpp"
#include "constraint/engine/mask_walker.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"
#include "util/substring_matcher.hpp"

namespace nextok {

using constraint::ConfigSet;
using constraint::FrameKind;
using constraint::Machine;

namespace {

enum class Phase : uint8_t { kFree, kBegin, kContent, kEnd, kGap };

struct Outer {
  Phase phase = Phase::kFree;
  // kFree: bytes of the begin tag matched at the end of the text; kBegin,
  // kEnd: offset into the tag; kGap: length of the whitespace run.
  uint32_t k = 0;
  uint32_t done = 0;  // segments completed
  ConfigSet json;     // kContent: the value's configurations
  bool finished = false;
};

bool is_ws(uint8_t b) noexcept {
  return b == ' ' || b == '\t' || b == '\n' || b == '\r';
}

// Whether `bytes` read from offset k of `tag` stays inside it or runs past
// its end (the rest then belongs to the next phase).
bool fits_tag(std::string_view bytes, std::string_view tag, size_t k) {
  const size_t n = std::min(bytes.size(), tag.size() - k);
  return n > 0 && bytes.substr(0, n) == tag.substr(k, n);
}

}  // namespace

// The tokens that may leave a phase within one token, per vocabulary and
// pair of tags (they do not depend on the JSON grammar): listed once and
// shared by every grammar with the same tags.
struct TagCandidates {
  util::SubstringMatcher begin_match;              // how much of the begin tag the text ends with
  std::vector<uint32_t> base;                      // kFree: every token with bytes, EOS excluded
  std::vector<std::vector<uint32_t>> free_cands;   // per KMP state: tokens completing the begin tag
  std::vector<std::vector<uint32_t>> begin_cands;  // per offset
  std::vector<std::vector<uint32_t>> end_cands;    // per offset
  struct Boundary {
    uint32_t token;
    uint32_t closers;  // '}' and ']' before the last boundary byte
  };
  std::vector<Boundary> content_cands;
  std::vector<uint32_t> gap_cands;

  static std::shared_ptr<const TagCandidates> get(const std::shared_ptr<const TokenIndex>& index,
                                                  const std::string& begin, const std::string& end);
  void list(const Vocabulary& vocab, const std::string& B, const std::string& E);
};

std::shared_ptr<const TagCandidates> TagCandidates::get(
    const std::shared_ptr<const TokenIndex>& index, const std::string& begin,
    const std::string& end) {
  struct Entry {
    std::weak_ptr<const TokenIndex> index;
    std::string begin, end;
    std::shared_ptr<const TagCandidates> cands;
  };
  static std::mutex mu;
  static std::vector<Entry> entries;  // most recent last, a few at most
  {
    std::lock_guard lock(mu);
    for (const Entry& e : entries)
      if (e.index.lock() == index && e.begin == begin && e.end == end) return e.cands;
  }
  auto c = std::make_shared<TagCandidates>();
  c->list(index->vocab(), begin, end);
  std::lock_guard lock(mu);
  std::erase_if(entries, [](const Entry& e) { return e.index.expired(); });
  if (entries.size() >= 8) entries.erase(entries.begin());
  entries.push_back({index, begin, end, c});
  return c;
}

struct StructuralTagGrammar::Impl {
  std::shared_ptr<const TokenIndex> index;
  StructuralTagFormat f;
  const Machine* m = nullptr;
  std::shared_ptr<const TagCandidates> cands;

  uint32_t kmp_next(uint32_t k, uint8_t b) const noexcept { return cands->begin_match.next(k, b); }

  void enter_content(Outer& s) const {
    s.phase = Phase::kContent;
    s.k = 0;
    m->start(s.json);
  }

  void after_segment(Outer& s) const {
    ++s.done;
    s.phase = Phase::kGap;
    s.k = 0;
    s.json.clear();
  }

  bool step(Outer& s, uint8_t b, bool special, ConfigSet& scratch) const {
    switch (s.phase) {
      case Phase::kFree:
        s.k = kmp_next(s.k, b);
        if (s.k == f.begin.size()) enter_content(s);
        return true;
      case Phase::kBegin:
        if (static_cast<uint8_t>(f.begin[s.k]) != b) return false;
        if (++s.k == f.begin.size()) enter_content(s);
        return true;
      case Phase::kContent:
        if (special) return false;
        if (m->step(s.json, b, scratch)) {
          std::swap(s.json, scratch);
          return true;
        }
        if (!m->complete(s.json)) return false;
        if (f.end.empty()) {
          after_segment(s);
          return step(s, b, special, scratch);
        }
        if (static_cast<uint8_t>(f.end[0]) != b) return false;
        s.phase = Phase::kEnd;
        s.k = 1;
        if (f.end.size() == 1) after_segment(s);
        return true;
      case Phase::kEnd:
        if (static_cast<uint8_t>(f.end[s.k]) != b) return false;
        if (++s.k == f.end.size()) after_segment(s);
        return true;
      case Phase::kGap:
        if (is_ws(b)) {
          if (s.k >= f.max_gap_whitespace) return false;
          ++s.k;
          return true;
        }
        if (s.done >= f.max_segments || static_cast<uint8_t>(f.begin[0]) != b) return false;
        s.phase = Phase::kBegin;
        s.k = 1;
        if (f.begin.size() == 1) enter_content(s);
        return true;
    }
    return false;
  }

  bool feed(Outer& s, std::string_view bytes, bool special) const {
    ConfigSet scratch;
    for (const unsigned char b : bytes)
      if (!step(s, b, special, scratch)) return false;
    return true;
  }

  bool complete(const Outer& s) const noexcept {
    switch (s.phase) {
      case Phase::kFree:
      case Phase::kGap:
        return s.done >= f.min_segments;
      case Phase::kContent:
        return f.end.empty() && s.done + 1 >= f.min_segments && m->complete(s.json);
      default:
        return false;
    }
  }

  Outer start() const {
    Outer s;
    s.phase = f.text_before ? Phase::kFree : Phase::kGap;
    return s;
  }
};

void TagCandidates::list(const Vocabulary& vocab, const std::string& B, const std::string& E) {
  begin_match = util::SubstringMatcher(B);
  base.assign(bitmask_words(vocab.size()), 0);
  free_cands.assign(B.size(), {});
  begin_cands.assign(B.size(), {});
  end_cands.assign(E.size(), {});
  const char boundary = E.empty() ? B[0] : E[0];
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view bytes = vocab.bytes(id);
    if (bytes.empty() || vocab.is_eos(id)) continue;
    bitmask_set(base, id, true);
    if (bytes.find(B.back()) != std::string_view::npos) {
      for (uint32_t k0 = 0; k0 < B.size(); ++k0) {
        uint32_t k = k0;
        for (const unsigned char b : bytes) {
          k = begin_match.next(k, b);
          if (k == B.size()) {
            free_cands[k0].push_back(id);
            break;
          }
        }
      }
    }
    for (size_t k = 0; k < B.size(); ++k)
      if (fits_tag(bytes, B, k)) begin_cands[k].push_back(id);
    for (size_t k = 0; k < E.size(); ++k)
      if (fits_tag(bytes, E, k)) end_cands[k].push_back(id);
    if (const size_t last = bytes.rfind(boundary); last != std::string_view::npos) {
      const auto closers = static_cast<uint32_t>(
          std::count_if(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(last),
                        [](char c) { return c == '}' || c == ']'; }));
      content_cands.push_back({id, closers});
    }
    const size_t lead = bytes.find_first_not_of(" \t\n\r");
    if (lead == std::string_view::npos || fits_tag(bytes.substr(lead), B, 0))
      gap_cands.push_back(id);
  }
}

std::shared_ptr<const StructuralTagGrammar> StructuralTagGrammar::build(
    std::shared_ptr<const TokenIndex> index, StructuralTagFormat format) {
  if (!index)
    throw Error(ErrorCode::kInvalidArgument, "index", "StructuralTagGrammar needs a TokenIndex");
  if (format.begin.empty())
    throw Error(ErrorCode::kInvalidArgument, "begin", "the begin tag must not be empty");
  if (!format.content)
    throw Error(ErrorCode::kInvalidArgument, "content", "a structural tag needs a JSON grammar");
  if (&format.content->impl().index->vocab() != &index->vocab())
    throw Error(ErrorCode::kInvalidArgument, "content",
                "the content grammar was built for another vocabulary");
  if (format.min_segments > format.max_segments)
    throw Error(ErrorCode::kInvalidArgument, "min_segments",
                "min_segments is larger than max_segments");
  // A value's trailing whitespace and an end tag's leading whitespace could
  // not be told apart.
  if (!format.end.empty() && is_ws(static_cast<uint8_t>(format.end[0])))
    throw Error(ErrorCode::kInvalidArgument, "end", "the end tag must not start with whitespace");
  if (is_ws(static_cast<uint8_t>(format.begin[0])))
    throw Error(ErrorCode::kInvalidArgument, "begin",
                "the begin tag must not start with whitespace");
  std::shared_ptr<StructuralTagGrammar> g(new StructuralTagGrammar());
  g->impl_ = std::make_unique<Impl>();
  Impl& im = *g->impl_;
  im.index = std::move(index);
  im.f = std::move(format);
  im.m = im.f.content->impl().machine.get();
  im.cands = TagCandidates::get(im.index, im.f.begin, im.f.end);
  return g;
}

StructuralTagGrammar::~StructuralTagGrammar() = default;

// --- StructuralTagConstraint --------------------------------------------------

struct StructuralTagConstraint::State {
  std::vector<Outer> history;  // [0] = start
  std::unique_ptr<constraint::MaskWalker> walker;
};

StructuralTagConstraint::StructuralTagConstraint(
    std::shared_ptr<const StructuralTagGrammar> grammar)
    : grammar_(std::move(grammar)), state_(std::make_unique<State>()) {
  if (!grammar_)
    throw Error(ErrorCode::kInvalidArgument, "grammar", "StructuralTagConstraint needs a grammar");
  reset();
}

StructuralTagConstraint::StructuralTagConstraint(const StructuralTagConstraint& other)
    : grammar_(other.grammar_),
      state_(std::make_unique<State>()),
      finished_(other.finished_),
      think_open_(other.think_open_) {
  state_->history = other.state_->history;
}

StructuralTagConstraint::~StructuralTagConstraint() = default;

std::unique_ptr<ConstraintEngine> StructuralTagConstraint::clone() const {
  return std::make_unique<StructuralTagConstraint>(*this);
}

void StructuralTagConstraint::reset() {
  state_->history.assign(1, grammar_->impl().start());
  finished_ = false;
}

size_t StructuralTagConstraint::steps() const noexcept {
  return state_->history.size() - 1;
}

uint32_t StructuralTagConstraint::segments() const noexcept {
  return state_->history.back().done;
}

bool StructuralTagConstraint::is_complete() const noexcept {
  return grammar_->impl().complete(state_->history.back());
}

bool StructuralTagConstraint::can_continue() const {
  if (finished_) return false;
  const auto& g = grammar_->impl();
  const Outer& s = state_->history.back();
  switch (s.phase) {
    case Phase::kContent:
      return g.m->can_continue(s.json) || g.m->complete(s.json);
    case Phase::kGap:
      return s.done < g.f.max_segments || s.k < g.f.max_gap_whitespace;
    default:
      return true;
  }
}

void StructuralTagConstraint::step_mask(std::span<uint32_t> mask) {
  const auto& g = grammar_->impl();
  const Vocabulary& vocab = g.index->vocab();
  const size_t words = constraint::clear_mask(mask, vocab);
  const Outer& s = state_->history.back();
  auto check = [&](uint32_t id) {
    Outer t = s;
    return g.feed(t, vocab.bytes(id), vocab.is_special(id));
  };
  auto allow_checked = [&](const std::vector<uint32_t>& ids) {
    for (const uint32_t id : ids)
      if (check(id)) bitmask_set(mask, id, true);
  };
  if (!finished_) {
    switch (s.phase) {
      case Phase::kFree:
        std::copy(g.cands->base.begin(), g.cands->base.end(), mask.begin());
        for (const uint32_t id : g.cands->free_cands[s.k])
          if (!check(id)) mask[id >> 5] &= ~(1u << (id & 31));
        break;
      case Phase::kBegin:
        allow_checked(g.cands->begin_cands[s.k]);
        break;
      case Phase::kEnd:
        allow_checked(g.cands->end_cands[s.k]);
        break;
      case Phase::kGap:
        allow_checked(g.cands->gap_cands);
        break;
      case Phase::kContent: {
        if (!state_->walker) {
          const auto& jg = g.f.content->impl();
          const auto& ix = g.index->impl();
          state_->walker = std::make_unique<constraint::MaskWalker>(
              ix.trie, *jg.machine,
              constraint::MaskCaches{&ix.standard_cache, &jg.cache, &jg.configs, ix.standard_dfas});
        }
        state_->walker->allow(s.json, mask.first(words));
        // A token that leaves the value must close every open container first.
        uint32_t open = ~0u;
        for (size_t c = 0; c < s.json.size(); ++c) {
          uint32_t n = 0;
          for (const auto& fr : s.json.config(c))
            n += fr.kind == FrameKind::kObject || fr.kind == FrameKind::kArray;
          open = std::min(open, n);
        }
        // A candidate's first byte must be readable here: found once per
        // distinct first byte, it rules out most candidates cheaply.
        std::array<int8_t, 256> first{};
        first.fill(-1);
        for (const auto& c : g.cands->content_cands) {
          if (c.closers < open) continue;
          const std::string_view bytes = vocab.bytes(c.token);
          const auto b0 = static_cast<uint8_t>(bytes[0]);
          if (first[b0] < 0) {
            Outer t = s;
            first[b0] = g.feed(t, bytes.substr(0, 1), false) ? 1 : 0;
          }
          if (first[b0] == 1 && check(c.token)) bitmask_set(mask, c.token, true);
        }
        break;
      }
    }
  }
  if (finished_ || g.complete(s)) constraint::allow_eos(mask, vocab);
}

void StructuralTagConstraint::advance(uint32_t token) {
  const auto& g = grammar_->impl();
  const Vocabulary& vocab = g.index->vocab();
  Outer next = state_->history.back();
  if (think_open_) {
    // Reasoning is not constrained; the state does not move.
  } else if (vocab.is_eos(token)) {
    if (!finished_ && !g.complete(next))
      throw Error(ErrorCode::kInvalidArgument, "token",
                  "EOS before the structured output is complete");
    next.finished = true;
  } else {
    if (finished_) throw Error(ErrorCode::kInvalidArgument, "token", "token after EOS");
    const std::string_view bytes = vocab.bytes(token);
    if (token >= vocab.size() || bytes.empty() || !g.feed(next, bytes, vocab.is_special(token))) {
      throw Error(ErrorCode::kInvalidArgument, "token",
                  "token " + std::to_string(token) +
                      " is not allowed by the structural-tag constraint here");
    }
  }
  state_->history.push_back(std::move(next));
  finished_ = state_->history.back().finished;
}

void StructuralTagConstraint::rollback(size_t n) {
  if (n > steps()) {
    throw Error(ErrorCode::kInvalidArgument, "n",
                "cannot roll back " + std::to_string(n) + " steps; only " +
                    std::to_string(steps()) + " taken");
  }
  state_->history.resize(state_->history.size() - n);
  finished_ = state_->history.back().finished;
}

bool StructuralTagConstraint::accepts_bytes(std::string_view bytes) const {
  Outer t = state_->history.back();
  return !finished_ && grammar_->impl().feed(t, bytes, false);
}

}  // namespace nextok
