#include "constraint/cfg/earley_walker.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

namespace {
bool inside(const TokenTrie::Bytes& a, const ByteSet& b) {
  return ((a[0] & ~b.w[0]) | (a[1] & ~b.w[1]) | (a[2] & ~b.w[2]) | (a[3] & ~b.w[3])) == 0;
}
uint32_t pos_of(uint64_t item) {
  return static_cast<uint32_t>(item >> 32);
}
uint64_t code_of(uint64_t item) {
  return item & 0xFFFFFFFFu;
}
// Order-free, so a set is looked up before (and unless new, without) sorting.
uint64_t hash_set(std::span<const uint64_t> items) {
  uint64_t h = items.size() * 0x9E3779B97F4A7C15ull;
  for (const uint64_t it : items) {
    uint64_t x = (it ^ (it >> 31)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    h += x ^ (x >> 31);
  }
  return h;
}
uint64_t hash_items(std::span<const uint64_t> items) {
  uint64_t h = items.size();
  for (const uint64_t it : items) {
    h = (h ^ it) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  return h;
}
ByteSet next_bytes(const EarleyTables& t, std::span<const uint64_t> items) {
  ByteSet out;
  for (const uint64_t it : items) {
    const Symbol s = t.syms[pos_of(it)];
    if (s < 0 && s != EarleyTables::kEnd) {
      const ByteSet& b = t.terminals[terminal_id(s)];
      for (size_t w = 0; w < 4; ++w) out.w[w] |= b.w[w];
    }
  }
  return out;
}
}  // namespace

void EarleyWalker::clear_tables() {
  states_.clear();
  state_by_hash_.clear();
  state_next_.clear();
  table_.clear();
  loops_.clear();
  looping_.clear();
  cores_.clear();
  state_arena_.clear();
  proj_arena_.clear();
  proj_spans_.clear();
  proj_by_hash_.clear();
  proj_next_.clear();
  sub_projs_.clear();
  lasting_codes_.clear();
  local_codes_.clear();
}

int32_t EarleyWalker::intern(bool in_seen) {
  const uint64_t h = hash_set(items_);
  const int32_t* found = state_by_hash_.find(h);
  const int32_t first = found == nullptr ? -1 : *found;
  for (int32_t id = first; id >= 0; id = state_next_[static_cast<size_t>(id)]) {
    const auto known = state_items(id);
    if (known.size() != items_.size()) continue;
    // The step's items are all in `seen` (with the completed ones it
    // dropped, which no state holds): a state of as many items, each of
    // them there, is the same set.
    if (in_seen ? std::ranges::all_of(known, [this](uint64_t it) { return in_set(it); })
                : std::ranges::equal(known, items_)) {
      return id;
    }
  }
  if (states_.size() >= max_states_ || table_.size() + classes_ > kMaxEntries) return kNoName;
  if (in_seen) std::sort(items_.begin(), items_.end());
  const auto id = static_cast<int32_t>(states_.size());
  state_next_.push_back(first);
  state_by_hash_.set(h, id);
  table_.resize(table_.size() + classes_, kUnknown);
  loops_.emplace_back();
  looping_.push_back(0);
  cores_.emplace_back();
  State& s = states_.emplace_back();
  s.begin = state_arena_.size();
  s.size = static_cast<uint32_t>(items_.size());
  state_arena_.insert(state_arena_.end(), items_.begin(), items_.end());
  s.next = next_bytes(*t_, items_);
  return id;
}

uint64_t EarleyWalker::project(std::span<const uint64_t> items, uint32_t a) {
  projector_.project(*t_, items, a, scratch_);
  return intern_projection(scratch_);
}

uint64_t EarleyWalker::intern_projection(std::span<const uint64_t> items) {
  const uint64_t h = hash_items(items);
  const int32_t* found = proj_by_hash_.find(h);
  const int32_t first = found == nullptr ? -1 : *found;
  for (int32_t id = first; id >= 0; id = proj_next_[static_cast<size_t>(id)]) {
    if (std::ranges::equal(proj_items(kRef | static_cast<uint64_t>(id)), items)) {
      return kRef | static_cast<uint64_t>(id);
    }
  }
  const auto id = static_cast<int32_t>(proj_spans_.size());
  proj_next_.push_back(first);
  proj_by_hash_.set(h, id);
  proj_spans_.emplace_back(proj_arena_.size(), items.size());
  proj_arena_.insert(proj_arena_.end(), items.begin(), items.end());
  return kRef | static_cast<uint64_t>(id);
}

uint64_t EarleyWalker::state_projection(int32_t s, size_t depth, uint32_t a) {
  if (s < 0) return project(depth_items_[depth], a);
  for (const auto& [x, code] : states_[static_cast<size_t>(s)].projs) {
    if (x == a) return code;
  }
  const uint64_t code = project(state_items(s), a);
  states_[static_cast<size_t>(s)].projs.emplace_back(a, code);
  return code;
}

// The walker's code for a lasting projection name (ChartNames): its items,
// their own lasting codes translated first, numbered as the walk numbers
// projections. So the next mask's root, named by the chart, holds the codes
// this walk gave the same projections, and meets the states it reached.
// Iterative: a chain of projections is as deep as the input's nesting.
uint64_t EarleyWalker::translate(uint64_t lasting) {
  auto& cache = codes_for(lasting);
  if (auto it = cache.find(lasting); it != cache.end()) return it->second;
  std::vector<uint64_t> todo = {lasting};
  while (!todo.empty()) {
    const uint64_t name = todo.back();
    auto& names = codes_for(name);
    if (names.count(name)) {
      todo.pop_back();
      continue;
    }
    const std::string_view key = names_->key(static_cast<int32_t>(name));
    std::vector<uint64_t> items((key.size() - 1) / sizeof(uint64_t));
    std::memcpy(items.data(), key.data(), items.size() * sizeof(uint64_t));
    bool ready = true;
    for (uint64_t& it : items) {
      const uint64_t code = code_of(it);
      if (code == kSelf) continue;
      auto& inner = codes_for(code);
      if (auto f = inner.find(code); f != inner.end()) {
        it = (it & ~uint64_t{0xFFFFFFFFu}) | f->second;
      } else {
        todo.push_back(code);
        ready = false;
      }
    }
    if (!ready) continue;
    todo.pop_back();
    std::sort(items.begin(), items.end());
    names.emplace(name, intern_projection(items));
  }
  return cache.at(lasting);
}

uint64_t EarleyWalker::sub_projection(uint64_t code, uint32_t a) {
  const uint64_t key = (code << 32) | a;
  if (const uint64_t* known = sub_projs_.find(key)) return *known;
  const uint64_t sub = project(proj_items(code), a);
  sub_projs_.set(key, sub);
  return sub;
}

bool EarleyWalker::in_set(uint64_t key) const {
  const size_t mask = seen_keys_.size() - 1;
  size_t h = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
  while (seen_gen_[h] == gen_) {
    if (seen_keys_[h] == key) return true;
    h = (h + 1) & mask;
  }
  return false;
}

bool EarleyWalker::seen(uint64_t key) {
  const size_t mask = seen_keys_.size() - 1;
  size_t h = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
  while (seen_gen_[h] == gen_) {
    if (seen_keys_[h] == key) return true;
    h = (h + 1) & mask;
  }
  seen_gen_[h] = gen_;
  seen_keys_[h] = key;
  return false;
}

void EarleyWalker::add(uint32_t pos, uint64_t code) {
  const uint64_t key = (uint64_t{pos} << 32) | code;
  if (seen(key)) return;
  if (items_.size() >= max_items_) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "an Earley set grew past " + std::to_string(max_items_) + " items after byte " +
                    std::to_string(base_) + " (ConstraintLimits::max_parse_items)");
  }
  items_.push_back(key);
  // The table stays at most half full and small enough for the cache: it
  // grows with the set, not with max_parse_items.
  if (items_.size() * 2 > seen_keys_.size()) {
    seen_keys_.assign(seen_keys_.size() * 2, 0);
    seen_gen_.assign(seen_gen_.size() * 2, 0);
    gen_ = 1;
    for (const uint64_t it : items_) seen(it);
  }
}

void EarleyWalker::make_closure(uint32_t a, std::vector<uint32_t>& pos,
                                std::vector<uint32_t>& nts) {
  const EarleyTables& t = *t_;
  if (++closure_gen_ == 0) {
    std::fill(pos_stamp_.begin(), pos_stamp_.end(), 0);
    std::fill(nt_stamp_.begin(), nt_stamp_.end(), 0);
    closure_gen_ = 1;
  }
  pos.clear();
  nts.clear();
  todo_.clear();
  const auto visit = [&](uint32_t n) {
    if (nt_stamp_[n] == closure_gen_) return;
    nt_stamp_[n] = closure_gen_;
    nts.push_back(n);
    for (uint32_t k = t.prod_begin[n]; k < t.prod_begin[n + 1]; ++k) todo_.push_back(t.prods[k]);
  };
  visit(a);
  while (!todo_.empty()) {
    const uint32_t p = todo_.back();
    todo_.pop_back();
    if (pos_stamp_[p] == closure_gen_) continue;
    pos_stamp_[p] = closure_gen_;
    const Symbol sym = t.syms[p];
    if (sym == EarleyTables::kEnd) continue;
    pos.push_back(p);
    if (sym >= 0) {
      visit(static_cast<uint32_t>(sym));
      if (t.nullable[static_cast<size_t>(sym)]) todo_.push_back(p + 1);
    }
  }
}

void EarleyWalker::predict(uint32_t a) {
  if (predicted_[a] == predict_gen_) return;
  Closure& c = closures_[a];
  std::span<const uint32_t> pos, nts;
  if (c.kept == 1) {
    pos = std::span<const uint32_t>(closure_pos_).subspan(c.begin, c.size);
    nts = std::span<const uint32_t>(closure_nts_).subspan(c.nts_begin, c.nts_size);
  } else {
    // Made on the spot: the first time, and every time for one too large to keep.
    make_closure(a, spill_pos_, spill_nts_);
    if (c.kept < 0) {
      c.kept = spill_pos_.size() <= kMaxClosure ? 1 : 0;
      if (c.kept == 1) {
        c.begin = static_cast<uint32_t>(closure_pos_.size());
        c.size = static_cast<uint32_t>(spill_pos_.size());
        c.nts_begin = static_cast<uint32_t>(closure_nts_.size());
        c.nts_size = static_cast<uint32_t>(spill_nts_.size());
        closure_pos_.insert(closure_pos_.end(), spill_pos_.begin(), spill_pos_.end());
        closure_nts_.insert(closure_nts_.end(), spill_nts_.begin(), spill_nts_.end());
      }
    }
    pos = spill_pos_;
    nts = spill_nts_;
  }
  for (const uint32_t n : nts) predicted_[n] = predict_gen_;
  for (const uint32_t p : pos) add(p, kSelf);
}

// Earley's scan and close (earley.cpp), with origins as projection codes:
// an item that began in the set stepped from now points to that set's
// projection on its left-hand side, and completing A through an origin
// code reads that projection's items waiting for A.
int32_t EarleyWalker::step(int32_t s, uint8_t b, size_t depth) {
  const EarleyTables& t = *t_;
  if (++gen_ == 0) {
    std::fill(seen_gen_.begin(), seen_gen_.end(), 0);
    gen_ = 1;
  }
  if (++predict_gen_ == 0) {
    std::fill(predicted_.begin(), predicted_.end(), 0);
    predict_gen_ = 1;
  }
  items_.clear();
  // A view into the arena: nothing is added to it before the loop ends.
  const std::span<const uint64_t> from = items_of(s, depth);
  for (size_t i = 0; i < from.size(); ++i) {
    const uint64_t it = from[i];
    const uint32_t pos = pos_of(it);
    const Symbol sym = t.syms[pos];
    if (sym >= 0 || sym == EarleyTables::kEnd || !t.terminals[terminal_id(sym)].has(b)) continue;
    uint64_t code = code_of(it);
    if (code == kSelf) code = state_projection(s, depth, t.lhs[pos]);
    add(pos + 1, code);
  }
  if (items_.empty()) return kDead;
  // Items that began in this set came from predict(), closed already; one
  // of them complete derived the empty string, and predicting its nullable
  // left-hand side stepped every item waiting for it (Aycock and Horspool).
  // So only the others predict, and complete through their origin's
  // projection.
  for (size_t i = 0; i < items_.size(); ++i) {
    const uint64_t code = code_of(items_[i]);
    if (code == kSelf) continue;
    const uint32_t pos = pos_of(items_[i]);
    const Symbol sym = t.syms[pos];
    if (sym == EarleyTables::kEnd) {
      const auto a = static_cast<Symbol>(t.lhs[pos]);
      // By index: sub_projection may grow the arena.
      const auto [begin, size] = proj_spans_[static_cast<size_t>(code - kRef)];
      for (size_t j = 0; j < size; ++j) {
        const uint64_t w = proj_arena_[begin + j];
        if (t.syms[pos_of(w)] != a) continue;
        const uint64_t wc = code_of(w);
        add(pos_of(w) + 1, wc == kSelf ? sub_projection(code, t.lhs[pos_of(w)]) : wc);
      }
    } else if (sym >= 0) {
      const auto a = static_cast<uint32_t>(sym);
      predict(a);
      if (t.nullable[a]) add(pos + 1, code);
    }
  }
  // Completed items have done their work; the rest name the state.
  std::erase_if(items_, [&](uint64_t it) { return t.syms[pos_of(it)] == EarleyTables::kEnd; });
  const int32_t id = intern(/*in_seen=*/true);
  if (id == kNoName) {
    std::sort(items_.begin(), items_.end());
    depth_items_[depth + 1] = items_;
  }
  return id;
}

int32_t EarleyWalker::step_from(int32_t from, uint8_t b, size_t depth) {
  if (from < 0) return step(from, b, depth);
  const uint8_t cls = t_->byte_class[b];
  const size_t slot = static_cast<size_t>(from) * classes_ + cls;
  if (table_[slot] != kUnknown) return table_[slot];
  if (!states_[static_cast<size_t>(from)].next.has(b)) {
    table_[slot] = kDead;
    return kDead;
  }
  const int32_t child = step(from, b, depth);
  if (child == kNoName) return kNoName;
  table_[slot] = child;
  if (child == from) {
    // Every byte of the class reads back into this state.
    ByteSet& loop = loops_[static_cast<size_t>(from)];
    for (size_t w = 0; w < 4; ++w) loop.w[w] |= t_->class_bytes[cls].w[w];
    looping_[static_cast<size_t>(from)] = 1;
  }
  return child;
}

// Whether every token below a trie node (state s) fits: every byte below
// reads back into s, or the subtree is well-formed UTF-8 from a character
// boundary, its ASCII bytes read back into s and s reads every longer
// character back into itself.
bool EarleyWalker::fits_below(int32_t s, const TokenTrie::Bytes& below, uint8_t utf8,
                              size_t subtree_nodes, size_t depth) {
  const ByteSet& loop = loops_[static_cast<size_t>(s)];
  if (inside(below, loop)) return true;
  const TokenTrie::Bytes ascii = {below[0], below[1], 0, 0};
  if ((utf8 & 1) == 0 || !inside(ascii, loop)) return false;
  const int8_t verdict = states_[static_cast<size_t>(s)].closed;
  if (verdict >= 0) return verdict == 1;
  // The check costs a few dozen steps once per state: worth it only where
  // it may save walking a large subtree.
  if (subtree_nodes < kUtf8CheckNodes) return false;
  return utf8_closed(s, depth);
}

void EarleyWalker::index_loop_positions() {
  const EarleyTables& t = *t_;
  loop_of_pos_.assign(t.syms.size(), -1);
  loop_bytes_.clear();
  // The bytes x reads alone: a terminal's, or a nonterminal's one-terminal alternatives.
  const auto alone = [&t](Symbol x) {
    ByteSet out;
    if (x < 0) return x == EarleyTables::kEnd ? out : t.terminals[terminal_id(x)];
    const auto b = static_cast<size_t>(x);
    for (uint32_t k = t.prod_begin[b]; k < t.prod_begin[b + 1]; ++k) {
      const uint32_t q = t.prods[k];
      if (t.syms[q] < 0 && t.syms[q] != EarleyTables::kEnd && t.syms[q + 1] == EarleyTables::kEnd) {
        const ByteSet& bytes = t.terminals[terminal_id(t.syms[q])];
        for (size_t w = 0; w < 4; ++w) out.w[w] |= bytes.w[w];
      }
    }
    return out;
  };
  for (const uint32_t q : t.prods) {
    // A ::= A X, and nothing after X.
    if (t.syms[q] != static_cast<Symbol>(t.lhs[q]) || t.syms[q + 1] == EarleyTables::kEnd ||
        t.syms[q + 2] != EarleyTables::kEnd) {
      continue;
    }
    const ByteSet bytes = alone(t.syms[q + 1]);
    if (bytes.empty()) continue;
    auto it = std::find(loop_bytes_.begin(), loop_bytes_.end(), bytes);
    if (it == loop_bytes_.end()) it = loop_bytes_.insert(loop_bytes_.end(), bytes);
    loop_of_pos_[q + 1] = static_cast<int32_t>(it - loop_bytes_.begin());
  }
}

// Item (p, c) of A ::= A . X: reading a byte X reads alone completes A
// through c, whose projection holds (A ::= . A X, this set) and so gives
// (p, c's projection on A) back; when that is c, the item is back.
bool EarleyWalker::loop_item_fits(int32_t s, const TokenTrie::Bytes& below) {
  Cores& cores = cores_[static_cast<size_t>(s)];
  if (cores.count < 0) {
    cores.count = 0;
    const auto items = state_items(s);
    for (size_t i = 0; i < items.size(); ++i) {
      const uint64_t it = items[i];
      const uint32_t p = pos_of(it);
      const int32_t kind = loop_of_pos_[p];
      const uint64_t c = code_of(it);
      if (kind < 0 || c == kSelf) continue;
      const ByteSet& bytes = loop_bytes_[static_cast<size_t>(kind)];
      const auto known = std::span(cores.bytes).first(static_cast<size_t>(cores.count));
      if (std::ranges::find(known, bytes) != known.end()) continue;
      const auto proj = proj_items(c);
      if (!std::binary_search(proj.begin(), proj.end(), (uint64_t{p - 1} << 32) | kSelf) ||
          sub_projection(c, t_->lhs[p]) != c) {
        continue;
      }
      cores.bytes[static_cast<size_t>(cores.count++)] = bytes;
      if (static_cast<size_t>(cores.count) == kCores) break;
    }
  }
  for (int8_t k = 0; k < cores.count; ++k) {
    if (inside(below, cores.bytes[static_cast<size_t>(k)])) return true;
  }
  return false;
}

// Reads on from state x with the UTF-8 reader in state `reader`, one byte
// of each class the reader allows; true when every way is live and each
// character ends back in `home`.
bool EarleyWalker::utf8_rest(int32_t x, int reader, int32_t home, size_t depth) {
  if (reader == 0) return x == home;
  if (x < 0 || depth + 1 >= depth_items_.size()) return false;
  std::vector<uint8_t> seen(classes_, 0);
  for (unsigned b = 0x80; b <= 0xBF; ++b) {
    const int next = constraint::Utf8Reader::next(reader, static_cast<uint8_t>(b));
    const uint8_t cls = t_->byte_class[b];
    if (next < 0 || seen[cls]) continue;
    seen[cls] = 1;
    const int32_t y = step_from(x, static_cast<uint8_t>(b), depth);
    if (y < 0 || !utf8_rest(y, next, home, depth + 1)) return false;
  }
  return true;
}

bool EarleyWalker::utf8_leads(int32_t from, int32_t home, size_t depth) {
  // Lead bytes alike when their class and their reader state agree.
  std::vector<uint8_t> seen(static_cast<size_t>(classes_) * constraint::Utf8Reader::kStates, 0);
  for (unsigned b = 0xC2; b <= 0xF4; ++b) {
    const int reader = constraint::Utf8Reader::next(0, static_cast<uint8_t>(b));
    const size_t key =
        t_->byte_class[b] * size_t{constraint::Utf8Reader::kStates} + static_cast<size_t>(reader);
    if (seen[key]) continue;
    seen[key] = 1;
    const int32_t x = step_from(from, static_cast<uint8_t>(b), depth);
    if (x < 0 || !utf8_rest(x, reader, home, depth + 1)) return false;
  }
  return true;
}

bool EarleyWalker::utf8_closed(int32_t s, size_t depth) {
  const bool ok = utf8_leads(s, s, depth);
  states_[static_cast<size_t>(s)].closed = ok ? 1 : 0;
  return ok;
}

int32_t EarleyWalker::full_row(int32_t s) {
  for (uint32_t c = 0; c < classes_; ++c) {
    if (table_[static_cast<size_t>(s) * classes_ + c] != kUnknown) continue;
    const ByteSet& bytes = t_->class_bytes[c];
    unsigned b = 0;
    while (b < 256 && !bytes.has(static_cast<uint8_t>(b))) ++b;
    if (b < 256 && step_from(s, static_cast<uint8_t>(b), 0) == kNoName) return kNoName;
  }
  return s;
}

int32_t EarleyWalker::free_text_start(const TokenTrie& trie, std::span<uint32_t> mask) {
  const int32_t root = ids_[0];
  if (root < 0 || full_row(root) < 0) return -1;
  // The child most ASCII first bytes lead to (the root itself inside a
  // string, the string's inside right after its quote): votes per child,
  // the ASCII bytes of each class that leads there.
  FreeTextVotes votes;
  for (uint32_t c = 0; c < classes_; ++c) {
    const int32_t child = table_[static_cast<size_t>(root) * classes_ + c];
    if (child >= 0) votes.add(child, t_->class_ascii[c]);
  }
  const auto [star, best] = votes.best();
  if (best < FreeText::kMinAscii) return -1;
  const auto few_ascii = [](const ByteSet& b) {
    return std::popcount(b.w[0]) + std::popcount(b.w[1]) < FreeText::kMinAscii;
  };
  // Its loop bytes are among those it reads: too few of those, and its
  // row (a step per byte class) need not be made to know.
  if (few_ascii(states_[static_cast<size_t>(star)].next) || full_row(star) < 0) return -1;
  // Copies, not references: the UTF-8 checks below step, and a step may
  // grow the tables. Every class was stepped from star already, so its
  // loop set is complete.
  const ByteSet loop = loops_[static_cast<size_t>(star)];
  if (few_ascii(loop)) return -1;
  const int8_t verdict = states_[static_cast<size_t>(star)].closed;
  const bool closed = verdict >= 0 ? verdict == 1 : utf8_closed(star, 1);
  FreeText& f = free_;
  f.loop = {loop.w[0], loop.w[1], loop.w[2], loop.w[3]};
  f.first = {};
  for (unsigned b = 0; b < 256; ++b) {
    if (table_[static_cast<size_t>(root) * classes_ + t_->byte_class[b]] == star) {
      f.first[b >> 6] |= uint64_t{1} << (b & 63);
    }
  }
  f.closed = closed;
  f.first_wide = root == star ? closed : utf8_leads(root, star, 0);
  const ByteSet next = states_[static_cast<size_t>(star)].next;
  for (size_t w = 0; w < 4; ++w) free_loop_or_dead_[w] = f.loop[w] | ~next.w[w];
  trie.free_text_masks().add_to(trie, f, mask);
  return star;
}

void EarleyWalker::allow(const TokenTrie& trie, const EarleyTables& t, size_t max_items,
                         size_t chart_sets, ChartNames& names, std::span<uint32_t> mask) {
  // Past half the room, start afresh: a walk that ran out of names midway
  // goes on with nameless states, which are stepped every time.
  if (t_ != &t || states_.size() * 2 >= max_states_ || table_.size() * 2 >= kMaxEntries) {
    const bool new_tables = t_ != &t;
    if (new_tables) {
      closures_.assign(t.prod_begin.size() - 1, Closure{});
      closure_pos_.clear();
      closure_nts_.clear();
      pos_stamp_.assign(t.syms.size(), 0);
      nt_stamp_.assign(t.prod_begin.size() - 1, 0);
      predicted_.assign(t.prod_begin.size() - 1, 0);
      closure_gen_ = predict_gen_ = 0;
    }
    clear_tables();
    t_ = &t;
    classes_ = t.classes;
    if (new_tables) index_loop_positions();
  }
  // A matcher's own names (chart_names.hpp: past the memo's budget) mean
  // nothing to another matcher; the grammar's names hold for all.
  if (names_serial_ != names.serial()) local_codes_.clear();
  names_ = &names;
  names_serial_ = names.serial();
  max_items_ = max_items;
  if (seen_keys_.empty()) {
    seen_keys_.assign(256, 0);
    seen_gen_.assign(256, 0);
    gen_ = 0;
  }
  base_ = chart_sets - 1;
  // A UTF-8 exploration (utf8_closed) reads up to four bytes past a node.
  const size_t depth_max = trie.max_depth() + 6;
  ids_.assign(depth_max, kNoName);
  depth_items_.resize(depth_max);
  items_ = names.items(base_);
  for (uint64_t& it : items_) {
    if (code_of(it) != kSelf) it = (it & ~uint64_t{0xFFFFFFFFu}) | translate(code_of(it));
  }
  std::sort(items_.begin(), items_.end());
  items_.erase(std::unique(items_.begin(), items_.end()), items_.end());
  ids_[0] = intern(/*in_seen=*/false);
  if (ids_[0] == kNoName) depth_items_[0] = items_;
  // Free text from the root: the tokens that stay in the free-text state
  // come from the kept mask, and the walk sets only what leaves it
  // (kept_ per depth: where the path is, FreeText::next).
  const int32_t star = free_text_start(trie, mask);
  if (star >= 0) {
    kept_.assign(depth_max, -1);
    kept_[0] = 0;
    walk<true>(trie, mask, star);
  } else {
    walk<false>(trie, mask, -1);
  }
}

// The trie walk. kFree: it begins in free-text state `star`, and a path
// that stays there (kept_ per depth) sets nothing, its tokens being in
// the kept mask already.
template <bool kFree>
void EarleyWalker::walk(const TokenTrie& trie, std::span<uint32_t> mask, int32_t star) {
  const auto below = trie.bytes_below();
  const auto utf8 = trie.utf8_below();
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  // The hot loop reads through raw pointers, refreshed after a step (which
  // may grow the tables), so stores into the mask do not force reloads.
  const uint8_t* byte_class = t_->byte_class.data();
  const int32_t* table = table_.data();
  const uint8_t* looping = looping_.data();
  int32_t* ids = ids_.data();
  int8_t* kept = kept_.data();
  uint32_t* m = mask.data();
  const auto* node = nodes.data();
  const size_t node_count = nodes.size();
  const size_t classes = classes_;
  for (size_t i = 1; i < node_count;) {
    const auto& n = node[i];
    __builtin_prefetch(node + n.end);  // the next sibling (dfa_walker.cpp says why)
    const size_t d = n.depth;
    int kept_here = -1;
    if constexpr (kFree) {
      // A path that has stayed in the free-text state: its tokens are in
      // the kept mask, and so are all a subtree gives whose bytes below
      // stay there or die there. In the state itself no table is needed.
      const int k = kept[d - 1];
      if (k == 0 && FreeText::has(d == 1 ? free_.first : free_.loop, n.byte)) {
        ids[d] = star;
        kept[d] = 0;
        const auto& under = below[i];
        i = FreeText::inside(under, free_loop_or_dead_) || free_.all_below(0, under, utf8[i])
                ? n.end
                : i + 1;
        continue;
      }
      if (k >= 0) kept_here = free_.next(k, n.byte, d == 1);
      kept[d] = static_cast<int8_t>(kept_here);
    }
    const int32_t parent = ids[d - 1];
    int32_t child;
    if (parent >= 0) {
      // The table answers most nodes; a dead byte is noted there too.
      child = table[static_cast<size_t>(parent) * classes + byte_class[n.byte]];
      if (child == kUnknown) {
        child = step_from(parent, n.byte, d - 1);
        table = table_.data();
        looping = looping_.data();
      }
    } else {
      child = step(parent, n.byte, d - 1);
      table = table_.data();
      looping = looping_.data();
    }
    if (child == kDead) {
      i = n.end;
      continue;
    }
    ids[d] = child;
    if constexpr (kFree) {
      if (kept_here >= 0) {
        // Inside a character of the free text, or back in it after one.
        i = free_.all_below(kept_here, below[i], utf8[i]) ? n.end : i + 1;
        continue;
      }
    }
    // A leaf's subtree is its own tokens: nothing to skip.
    if (n.end > i + 1 && child >= 0) {
      bool fits = false;
      if (looping[static_cast<size_t>(child)] != 0) {
        fits = fits_below(child, below[i], utf8[i], n.end - i, d);
        table = table_.data();
        looping = looping_.data();
      }
      if (!fits) fits = loop_item_fits(child, below[i]);
      if (fits) {
        set_token_bits(trie.subtree_tokens(i), m);
        i = n.end;
        continue;
      }
    }
    set_token_bits(tokens.subspan(n.first_token, n.token_count), m);
    ++i;
  }
}

}  // namespace nextok::constraint::cfg
