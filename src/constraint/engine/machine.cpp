#include "constraint/engine/machine.hpp"

#include <algorithm>
#include <bit>
#include <map>

namespace nextok::constraint {

namespace {

enum RootPhase : int32_t { kRootValue, kRootDone };
enum ObjectPhase : int32_t { kObjFirst, kObjKey, kObjColon, kObjValue, kObjAfter };
enum ArrayPhase : int32_t { kArrFirst, kArrValue, kArrAfter };

constexpr uint64_t kOtherBit = Machine::kOtherKey;

uint64_t label_bit(const GrammarNode& obj, uint32_t label) {
  return label < obj.props.size() && label < 63 ? uint64_t{1} << label : kOtherBit;
}

}  // namespace

// The key_reach bits of a key ending with these labels: the declared
// property it names, else bit 63 when it resolves (patterns that agree
// across regex flavours, or any other name) to a value that can exist;
// none otherwise (a `false` pattern, say).
uint64_t resolvable_bits(const Grammar& g, const GrammarNode& obj,
                         std::span<const uint32_t> labels) {
  // A declared name keeps its bit even when its value cannot exist: the
  // object's available keys leave such names out, and the any-name mask
  // path follows declared spellings to refuse them.
  const auto np = static_cast<uint32_t>(obj.props.size());
  uint64_t bits = 0;
  for (uint32_t l : labels)
    if (l < np) bits |= label_bit(obj, l);
  if (bits) return bits;
  const uint32_t v = undeclared_key_value(obj, labels);
  return v != kNoNode && g.nodes[v].kind != NodeKind::kNever ? kOtherBit : 0;
}

bool is_json_whitespace(uint8_t b) noexcept {
  return b == ' ' || b == '\n' || b == '\t' || b == '\r';
}

// Each state's bits become the union of the bits of the states it reaches.
static void propagate_reach(const Dfa& d, std::vector<uint64_t>& r) {
  const size_t n = d.states();
  const DfaPredecessors& rev = d.predecessors();
  std::vector<int32_t> work;
  for (size_t s = 0; s < n; ++s)
    if (r[s]) work.push_back(static_cast<int32_t>(s));
  while (!work.empty()) {
    const auto t = static_cast<size_t>(work.back());
    work.pop_back();
    for (int32_t f : rev.of(t)) {
      const uint64_t merged = r[static_cast<size_t>(f)] | r[t];
      if (merged != r[static_cast<size_t>(f)]) {
        r[static_cast<size_t>(f)] = merged;
        work.push_back(f);
      }
    }
  }
}

// Per state: bit `flag` when it reaches (or is) a non-final state whose
// reach fails `keep`.
static void mark_stalls(const Dfa& d, const DfaPredecessors& rev, std::vector<uint8_t>& out,
                        uint8_t flag, auto keep) {
  std::vector<int32_t> work;
  for (size_t s = 0; s < d.states(); ++s) {
    if (!keep(s) && !d.final(static_cast<int32_t>(s))) {
      out[s] |= flag;
      work.push_back(static_cast<int32_t>(s));
    }
  }
  while (!work.empty()) {
    const auto t = static_cast<size_t>(work.back());
    work.pop_back();
    for (int32_t f : rev.of(t)) {
      const auto fs = static_cast<size_t>(f);
      if ((out[fs] & flag) || d.final(f)) continue;
      out[fs] |= flag;
      work.push_back(f);
    }
  }
}

Machine::Machine(const Grammar& g)
    : g_(g),
      key_reach_id_(g.nodes.size(), 0),
      value_reach_(g.dfas.size()),
      other_final_(g.dfas.size(), -1),
      lengths_(g.dfas.size()),
      info_(g.nodes.size()) {
  std::map<const Dfa*, std::shared_ptr<const LengthBounds>> by_dfa;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kObject) info_[i] = object_info(g, g.nodes[i]);
    const GrammarNode& n = g.nodes[i];
    if (n.kind != NodeKind::kLeaf || !n.counts_chars || lengths_[n.dfa]) continue;
    // The compiler's bounds where it computed them; one computation per DFA.
    auto& lb = by_dfa[g.dfas[n.dfa].get()];
    if (!lb)
      lb = n.dfa < g.lengths.size() && g.lengths[n.dfa] ? g.lengths[n.dfa]
                                                        : LengthBounds::shared_of(*g.dfas[n.dfa]);
    lengths_[n.dfa] = lb;
  }
  // Key reach depends on the key DFA and on which labels lead to a value
  // that cannot exist: objects alike in both share one table.
  std::map<std::pair<uint32_t, std::vector<uint64_t>>, uint32_t> shared;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GrammarNode& node = g.nodes[i];
    if (node.kind != NodeKind::kObject) continue;
    const Dfa& d = *g.dfas[node.key_dfa];
    std::vector<uint64_t> r(d.states(), 0);
    std::vector<uint64_t> sig;  // the accepting states' bits
    for (size_t s = 0; s < d.states(); ++s) {
      const auto st = static_cast<int32_t>(s);
      r[s] = resolvable_bits(g, node, d.labels(st));
      if (d.accepting(st)) sig.push_back(r[s]);
      if (d.final(st) && d.labels(st).size() == 1 && node.additional != kNoNode &&
          d.labels(st)[0] == node.props.size() + 2 * node.pattern_props.size()) {
        other_final_[node.key_dfa] = st;
      }
    }
    const auto [at, fresh] = shared.emplace(std::pair{node.key_dfa, std::move(sig)},
                                            static_cast<uint32_t>(reach_.size()));
    key_reach_id_[i] = at->second;
    if (!fresh) continue;
    propagate_reach(d, r);
    std::vector<uint8_t> st(d.states(), 0);
    const DfaPredecessors& rev = d.predecessors();
    mark_stalls(d, rev, st, kStallsEmpty, [&](size_t s) { return r[s] != 0; });
    mark_stalls(d, rev, st, kStallsOther, [&](size_t s) { return (r[s] & kOtherKey) != 0; });
    reach_.push_back(std::move(r));
    stall_.push_back(std::move(st));
  }
  for (const auto& node : g.nodes) {
    if (node.value_ids.empty() || !value_reach_[node.dfa].empty()) continue;
    const Dfa& d = *g.dfas[node.dfa];
    auto& r = value_reach_[node.dfa];
    r.assign(d.states(), 0);
    for (size_t s = 0; s < d.states(); ++s) {
      for (uint32_t l : d.labels(static_cast<int32_t>(s))) r[s] |= uint64_t{1} << node.value_ids[l];
    }
    propagate_reach(d, r);
  }
}

ObjectInfo Machine::object_info(const Grammar& g, const GrammarNode& obj) {
  ObjectInfo info;
  for (size_t i = 0; i < obj.props.size(); ++i) {
    if (g.nodes[obj.props[i].node].kind == NodeKind::kNever) continue;
    if (i < 63)
      info.declared_ok |= uint64_t{1} << i;
    else
      info.other = true;
  }
  // Some name that is no declared property can be read: an accepting key
  // state without a declared label whose value can exist. (Patterns that
  // only match declared names, as ^[a-d]$ beside a..d, add none; counting
  // them let a ',' lead to a dead end.)
  const Dfa& keys = *g.dfas[obj.key_dfa];
  for (size_t q = 0; q < keys.states() && !info.other; ++q) {
    const auto labels = keys.labels(static_cast<int32_t>(q));
    if (labels.empty() ||
        std::any_of(labels.begin(), labels.end(), [&](uint32_t l) { return l < obj.props.size(); }))
      continue;
    const uint32_t v = undeclared_key_value(obj, labels);
    info.other = v != kNoNode && g.nodes[v].kind != NodeKind::kNever;
  }
  const auto bits_of = [](const std::vector<uint32_t>& props) {
    uint64_t bits = 0;
    for (uint32_t r : props) bits |= uint64_t{1} << r;
    return bits;
  };
  info.required = bits_of(obj.required);
  for (const auto& [trigger, needs] : obj.dependent)
    info.dependent.push_back({uint64_t{1} << trigger, bits_of(needs)});
  for (const auto& set : obj.forbidden) info.forbidden.push_back(bits_of(set));
  info.some_key = obj.some_key;
  info.marked = std::any_of(obj.some_key_markers.begin(), obj.some_key_markers.end(),
                            [](const auto& m) { return !m.empty(); });
  if (!obj.some_key_valued.empty()) {
    info.marked = true;  // a claim meets one set: slots are counted one each
    info.claim_props.assign(obj.some_key.size(), 0);
    info.claim_undeclared.assign(obj.some_key.size(), 0);
    for (const auto& c : obj.key_claims) {
      if (c.prop == kNoNode)
        info.claim_undeclared[c.set] = 1;
      else if (c.prop < 63)
        info.claim_props[c.set] |= uint64_t{1} << c.prop;
    }
  }
  if (info.marked && obj.some_key.size() <= 8) {
    info.one_key_meets.assign(size_t{1} << obj.some_key.size(), 0);
    for (size_t set = 1; set < info.one_key_meets.size(); ++set) {
      std::vector<uint32_t> markers;
      bool undeclared = true;
      for (size_t e = 0; e < obj.some_key.size(); ++e) {
        if (((set >> e) & 1U) == 0) continue;
        undeclared &= (obj.some_key[e] & some_key_bit(e)) != 0 &&
                      (e >= obj.some_key_valued.size() || obj.some_key_valued[e] == 0);
        markers.insert(markers.end(), obj.some_key_markers[e].begin(),
                       obj.some_key_markers[e].end());
      }
      info.one_key_meets[set] =
          undeclared && undeclared_key_possible(keys, obj, markers, [&](uint32_t v) {
            return g.nodes[v].kind != NodeKind::kNever;
          });
    }
  }
  return info;
}

void Machine::start(ConfigSet& out) const {
  out.clear();
  Frame root;
  root.kind = FrameKind::kRoot;
  root.node = g_.root;
  root.q = kRootValue;
  out.frames.push_back(root);
  out.ends.push_back(1);
}

bool Machine::whitespace(Frame& f, uint8_t b) const noexcept {
  if (!is_json_whitespace(b) || f.ws >= g_.max_whitespace) return false;
  ++f.ws;
  return true;
}

bool Machine::key_available(const Frame& obj) const noexcept {
  if (obj.n >= g_.nodes[obj.node].max_props) return false;
  const ObjectInfo& info = info_[obj.node];
  return info.other || (info.declared_ok & ~obj.seen & ~info.blocked(obj.seen)) != 0;
}

uint64_t Machine::available_keys(const Frame& obj) const noexcept {
  const ObjectInfo& info = info_[obj.node];
  const uint64_t keys =
      (info.declared_ok & ~obj.seen & ~info.blocked(obj.seen)) | (info.other ? kOtherBit : 0);
  const GrammarNode& node = g_.nodes[obj.node];
  return node.max_props == kUnbounded ? keys : keys & within_slots(info, node, obj, keys);
}

// Of `keys`, those that leave slots under maxProperties for what the object
// still needs, as the key's end checks it (an undeclared key counted as
// meeting every mask it can: an upper bound, as the end check decides).
uint64_t Machine::within_slots(const ObjectInfo& info, const GrammarNode& node, const Frame& obj,
                               uint64_t keys) const noexcept {
  if (obj.n >= node.max_props) return 0;
  const uint32_t slots = node.max_props - obj.n - 1;  // after this key
  auto fits = [&](uint64_t seen, uint64_t claimable) {
    return info.keys_needed(seen, claimable) <= slots;
  };
  uint64_t out = 0;
  for (uint64_t rest = keys & ~kOtherBit; rest != 0; rest &= rest - 1) {
    const uint64_t bit = rest & (~rest + 1);
    if (fits(obj.seen | bit, info.claimable_by(bit))) out |= bit;
  }
  if ((keys & kOtherBit) != 0) {
    uint64_t undeclared = 0;  // the masks and sets some undeclared key may meet
    for (size_t e = 0; e < node.some_key.size(); ++e)
      if ((node.some_key[e] & some_key_bit(e)) != 0 ||
          (e < info.claim_undeclared.size() && info.claim_undeclared[e] != 0))
        undeclared |= some_key_bit(e);
    if (fits(obj.seen | undeclared, 0)) out |= kOtherBit;
  }
  return out;
}

bool Machine::leaf_advance(const Frame* below, Frame& top, uint8_t b, int32_t q2) const noexcept {
  const GrammarNode& node = g_.nodes[top.node];
  if (top.kind == FrameKind::kKey) {
    if ((key_reach(top.node, q2) & available_keys(*below)) == 0) return false;
    top.n = static_cast<uint32_t>(g_.dfas[7]->next(static_cast<int32_t>(top.n), b));
  } else if (!value_available(below, node, q2)) {
    return false;
  } else if (node.counts_chars) {
    count_byte(top, b);
    top.q = q2;
    return length_ok(node, top);
  }
  top.q = q2;
  return true;
}

bool Machine::length_ok(const GrammarNode& leaf, const Frame& f) const noexcept {
  const LengthBounds& lb = *lengths_[leaf.dfa];
  const uint32_t lo = lb.min_at(f.q, f.esc), hi = lb.max_at(f.q, f.esc);
  if (lo == kUnbounded || f.n + static_cast<uint64_t>(lo) > leaf.max_chars) return false;
  return hi == kUnbounded || f.n + static_cast<uint64_t>(hi) >= leaf.min_chars;
}

// The value that just ended moves its parent on.
static void after_value(Frame& parent) {
  switch (parent.kind) {
    case FrameKind::kRoot:
      parent.q = kRootDone;
      break;
    case FrameKind::kObject:
      parent.q = kObjAfter;
      break;
    case FrameKind::kArray:
      parent.q = kArrAfter;
      ++parent.n;
      break;
    default:
      break;
  }
  parent.ws = 0;
}

bool Machine::pop(std::vector<Frame>& frames, size_t base) const {
  const Frame top = frames.back();
  if (frames.size() - base < 2) return false;
  Frame& parent = frames[frames.size() - 2];
  if (top.kind == FrameKind::kLeaf) {
    const GrammarNode& leaf = g_.nodes[top.node];
    if (leaf.counts_chars && top.n < leaf.min_chars) return false;
    if (!leaf.value_ids.empty() && parent.kind == FrameKind::kArray) {
      // The value this spelling names; one the array holds already is refused.
      uint64_t bit = 0;
      for (uint32_t l : g_.dfas[leaf.dfa]->labels(top.q)) bit |= uint64_t{1} << leaf.value_ids[l];
      if (bit == 0 || (parent.seen & bit)) return false;
      parent.seen |= bit;
    }
    frames.pop_back();
    after_value(frames.back());
    return true;
  }
  // A key: which property it names decides the value's schema.
  const GrammarNode& obj = g_.nodes[parent.node];
  const Dfa& d = *g_.dfas[obj.key_dfa];
  const auto labels = d.labels(top.q);
  const auto np = static_cast<uint32_t>(obj.props.size());
  uint32_t declared = kNoNode;
  for (uint32_t l : labels)
    if (l < np) declared = std::min(declared, l);
  uint32_t value = kNoNode;
  uint64_t bit = 0, met = 0;  // met: some_key masks an undeclared key meets
  if (declared != kNoNode) {
    value = obj.props[declared].node;
    if (declared < 63) bit = uint64_t{1} << declared;
  } else {
    value = undeclared_key_value(obj, labels);
    for (size_t e = 0; e < obj.some_key.size(); ++e) {
      const bool valued = e < obj.some_key_valued.size() && obj.some_key_valued[e] != 0;
      if (!valued && (obj.some_key[e] & some_key_bit(e)) != 0 &&
          !matches_marker(obj, labels, obj.some_key_markers[e]))
        met |= some_key_bit(e);
    }
  }
  // Value-conditioned sets this key may claim (at its value).
  uint8_t claim = 0;
  for (const auto& c : obj.key_claims) {
    const bool mine = c.prop == kNoNode
                          ? declared == kNoNode && c.value == value &&
                                matches_marker_both(obj, labels, obj.some_key_markers[c.set][0])
                          : c.prop == declared;
    if (mine && (parent.seen & some_key_bit(c.set)) == 0) claim |= uint8_t(1U << c.set);
  }
  parent.claim = claim;
  if (value == kNoNode || g_.nodes[value].kind == NodeKind::kNever || (parent.seen & bit))
    return false;
  if (bit & info_[parent.node].blocked(parent.seen)) return false;
  parent.seen |= bit | met;
  ++parent.n;
  if (parent.n > obj.max_props) return false;
  if (obj.max_props != kUnbounded) {
    // Some-key masks the required ones leave open take more keys: one
    // undeclared key meets them all unless markers tell them apart (then
    // one each, an upper bound); this key's value may meet its claims itself.
    if (info_[parent.node].keys_needed(parent.seen, some_key_bits(claim)) >
        obj.max_props - parent.n)
      return false;
  }
  parent.cur = value;
  if (claim != 0) {  // some reading of the value must leave the object closable
    std::vector<std::pair<uint32_t, uint64_t>> ways;
    claim_ways(parent, ways);
    if (ways.empty()) return false;
  }
  parent.q = kObjColon;
  parent.ws = 0;
  frames.pop_back();
  return true;
}

bool Machine::push_value(std::vector<Frame>& frames, size_t base, uint32_t node, uint8_t b) const {
  if (frames.size() - base >= kMaxStack) return false;
  const GrammarNode& n = g_.nodes[node];
  Frame f;
  f.node = node;
  switch (n.kind) {
    case NodeKind::kObject:
      if (b != '{') return false;
      f.kind = FrameKind::kObject;
      f.q = kObjFirst;
      frames.push_back(f);
      return true;
    case NodeKind::kArray:
      if (b != '[') return false;
      f.kind = FrameKind::kArray;
      f.q = kArrFirst;
      frames.push_back(f);
      return true;
    case NodeKind::kLeaf: {
      const Dfa& d = *g_.dfas[n.dfa];
      f.kind = FrameKind::kLeaf;
      f.q = d.next(d.start(), b);
      if (f.q < 0 || !value_available(frames.size() > base ? &frames.back() : nullptr, n, f.q))
        return false;
      if (n.counts_chars) {
        count_byte(f, b);
        if (!length_ok(n, f)) return false;
      }
      frames.push_back(f);
      return d.final(f.q) ? pop(frames, base) : true;
    }
    default:
      return false;
  }
}

// Leaf, object and array options of a node, through nested anyOf.
static void flat_options(const Grammar& g, uint32_t node, std::vector<uint32_t>& out, int depth) {
  const GrammarNode& n = g.nodes[node];
  if (n.kind == NodeKind::kAnyOf) {
    if (depth > 64) return;
    for (uint32_t o : n.options) flat_options(g, o, out, depth + 1);
  } else if (n.kind != NodeKind::kNever) {
    if (std::find(out.begin(), out.end(), node) == out.end()) out.push_back(node);
  }
}

bool Machine::value_start(std::vector<Frame>& frames, size_t base, uint32_t node, uint8_t b,
                          ConfigSet& out) const {
  if (g_.nodes[node].kind != NodeKind::kAnyOf) return push_value(frames, base, node, b);
  thread_local std::vector<uint32_t> options;
  options.clear();
  flat_options(g_, node, options, 0);
  // Each option that takes b becomes its own configuration.
  thread_local std::vector<Frame> saved;
  saved.assign(frames.begin() + static_cast<ptrdiff_t>(base), frames.end());
  const std::vector<uint32_t> opts = options;
  frames.resize(base);
  for (uint32_t o : opts) {
    const size_t at = frames.size();
    frames.insert(frames.end(), saved.begin(), saved.end());
    if (push_value(frames, at, o, b) && out.ends.size() < kMaxConfigs) {
      out.ends.push_back(static_cast<uint32_t>(frames.size()));
    } else {
      frames.resize(at);
    }
  }
  return false;  // the forks are committed (or none survived)
}

// An item of an array that still needs contains items: it is read as one
// (counted now; its schema then holds contains too) or as a plain item,
// each where the positions left can still supply the rest.
bool Machine::item_start(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const {
  const Frame& t = frames.back();
  const GrammarNode& arr = g_.nodes[t.node];
  const uint32_t i = t.n;
  const uint32_t plain = i < arr.prefix.size() ? arr.prefix[i] : arr.items;
  uint32_t with = i < arr.prefix.size() ? arr.prefix_contains[i] : arr.items_contains;
  const auto usable = [&](uint32_t v) {
    return v != kNoNode && g_.nodes[v].kind != NodeKind::kNever;
  };
  const uint32_t after = contains_supply(arr, i + 1, arr.min_contains, usable);
  if (!usable(with) || after + 1 < arr.min_contains - t.cur) with = kNoNode;
  const bool plain_ok = after >= arr.min_contains - t.cur;
  if (with == kNoNode) return plain_ok && value_start(frames, base, plain, b, out);
  if (!plain_ok) {
    ++frames.back().cur;
    return value_start(frames, base, with, b, out);
  }
  return fork_values(frames, base, b, out, 2, [&](size_t counted, Frame& top) {
    if (counted != 0) ++top.cur;
    return counted != 0 ? with : plain;
  });
}

template <class Prepare>
bool Machine::fork_values(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out,
                          size_t ways, Prepare prepare) const {
  const std::vector<Frame> cfg(frames.begin() + static_cast<ptrdiff_t>(base), frames.end());
  frames.resize(base);
  for (size_t k = 0; k < ways; ++k) {
    const size_t at = frames.size();
    frames.insert(frames.end(), cfg.begin(), cfg.end());
    const uint32_t node = prepare(k, frames.back());
    if (value_start(frames, at, node, b, out)) {
      if (out.ends.size() < kMaxConfigs) {
        out.ends.push_back(static_cast<uint32_t>(frames.size()));
        continue;
      }
      frames.resize(at);
      continue;
    }
    const size_t committed = out.ends.empty() ? 0 : out.ends.back();
    frames.resize(std::max(at, committed));
  }
  return false;  // the forks are committed (or none survived)
}

void Machine::claim_ways(const Frame& t, std::vector<std::pair<uint32_t, uint64_t>>& out) const {
  const GrammarNode& obj = g_.nodes[t.node];
  const ObjectInfo& info = info_[t.node];
  // (value node, seen bits it sets): the plain reading and each claim,
  // each while the sets it leaves open can still be claimed by a key not
  // read yet, within the slots maxProperties leaves.
  const uint64_t available = info.declared_ok & ~t.seen & ~info.blocked(t.seen);
  auto live = [&](uint64_t seen) {
    if (!info.claims_live(seen, available)) return false;
    return obj.max_props == kUnbounded || info.keys_needed(seen, 0) <= obj.max_props - t.n;
  };
  if (live(t.seen)) out.push_back({t.cur, 0});
  for (const auto& c : obj.key_claims) {
    if (((t.claim >> c.set) & 1U) == 0 || c.value != t.cur) continue;
    if (g_.nodes[c.claimed].kind == NodeKind::kNever) continue;
    if (live(t.seen | some_key_bit(c.set))) out.push_back({c.claimed, some_key_bit(c.set)});
  }
  for (const auto& c : obj.claim_combos) {
    if ((c.sets & ~t.claim) != 0 || c.value != t.cur) continue;
    if (g_.nodes[c.claimed].kind == NodeKind::kNever) continue;
    const uint64_t bits = some_key_bits(c.sets);
    if (live(t.seen | bits)) out.push_back({c.claimed, bits});
  }
}

bool Machine::claim_start(std::vector<Frame>& frames, size_t base, uint8_t b,
                          ConfigSet& out) const {
  std::vector<std::pair<uint32_t, uint64_t>> ways;
  claim_ways(frames.back(), ways);
  return fork_values(frames, base, b, out, ways.size(), [&](size_t k, Frame& top) {
    top.claim = 0;
    top.seen |= ways[k].second;
    top.cur = ways[k].first;
    return ways[k].first;
  });
}

bool Machine::container_byte(std::vector<Frame>& frames, size_t base, uint8_t b,
                             ConfigSet& out) const {
  Frame& t = frames.back();
  if (is_json_whitespace(b)) return whitespace(t, b);
  t.ws = 0;
  switch (t.kind) {
    case FrameKind::kRoot:
      return t.q == kRootValue && value_start(frames, base, t.node, b, out);
    case FrameKind::kObject: {
      const GrammarNode& obj = g_.nodes[t.node];
      const bool closable = (t.q == kObjFirst || t.q == kObjAfter) && t.n >= obj.min_props &&
                            (info_[t.node].required_with(t.seen) & ~t.seen) == 0 &&
                            !info_[t.node].unmet(t.seen);
      if (b == '}') {
        if (!closable) return false;
        frames.pop_back();
        after_value(frames.back());
        return true;
      }
      if (b == '"' && (t.q == kObjFirst || t.q == kObjKey)) {
        if (!key_available(t)) return false;
        const Dfa& d = *g_.dfas[obj.key_dfa];
        Frame k;
        k.kind = FrameKind::kKey;
        k.node = t.node;
        k.q = d.next(d.start(), b);
        const Dfa& any_string = *g_.dfas[7];  // StandardDfas::key
        k.n = static_cast<uint32_t>(any_string.next(any_string.start(), b));
        if (k.q < 0) return false;
        if ((key_reach(t.node, k.q) & available_keys(t)) == 0) return false;
        frames.push_back(k);
        return true;
      }
      if (b == ':' && t.q == kObjColon) {
        t.q = kObjValue;
        return true;
      }
      if (b == ',' && t.q == kObjAfter) {
        if (!key_available(t)) return false;
        t.q = kObjKey;
        return true;
      }
      if (t.q == kObjValue) {
        if (t.claim != 0) return claim_start(frames, base, b, out);
        const uint32_t v = t.cur;
        return value_start(frames, base, v, b, out);
      }
      return false;
    }
    case FrameKind::kArray: {
      const GrammarNode& arr = g_.nodes[t.node];
      auto item = [&](uint32_t i) { return i < arr.prefix.size() ? arr.prefix[i] : arr.items; };
      if (b == ']') {
        if (t.q == kArrValue || t.n < arr.min_items || t.cur < arr.min_contains) return false;
        frames.pop_back();
        after_value(frames.back());
        return true;
      }
      if (b == ',' && t.q == kArrAfter) {
        if (t.n >= arr.max_items || item(t.n) == kNoNode) return false;
        if (g_.nodes[item(t.n)].kind == NodeKind::kNever) return false;
        t.q = kArrValue;
        return true;
      }
      if (t.q == kArrFirst || t.q == kArrValue) {
        if (t.n >= arr.max_items || item(t.n) == kNoNode) return false;
        if (t.cur < arr.min_contains) return item_start(frames, base, b, out);
        return value_start(frames, base, item(t.n), b, out);
      }
      return false;
    }
    default:
      return false;
  }
}

bool Machine::leaf_byte(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const {
  Frame& t = frames.back();
  const Dfa& d = leaf_dfa(t);
  const int32_t q2 = d.next(t.q, b);
  if (q2 >= 0) {
    if (!leaf_advance(frames.size() >= 2 ? &frames[frames.size() - 2] : nullptr, t, b, q2))
      return false;
    return d.final(q2) ? pop(frames, base) : true;
  }
  // The lexeme ends before b (numbers); the parent reads b.
  if (!d.accepting(t.q) || !pop(frames, base)) return false;
  return container_byte(frames, base, b, out);
}

bool Machine::feed(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const {
  const FrameKind k = frames.back().kind;
  if (k == FrameKind::kLeaf || k == FrameKind::kKey) return leaf_byte(frames, base, b, out);
  return container_byte(frames, base, b, out);
}

void Machine::step_one(std::span<const Frame> cfg, uint8_t b, ConfigSet& out) const {
  const size_t base = out.frames.size();
  out.frames.insert(out.frames.end(), cfg.begin(), cfg.end());
  if (feed(out.frames, base, b, out)) {
    if (out.ends.size() < kMaxConfigs) {
      out.ends.push_back(static_cast<uint32_t>(out.frames.size()));
      return;
    }
    out.frames.resize(base);
    return;
  }
  // Dead, or forked: forks were committed past `base` already.
  const size_t committed = out.ends.empty() ? 0 : out.ends.back();
  out.frames.resize(std::max(base, committed));
}

static uint64_t config_hash(std::span<const Frame> c) noexcept {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (const Frame& f : c) {
    mix(f.node);
    mix(static_cast<uint32_t>(f.q));
    mix(f.n);
    mix(f.cur);
    mix(f.seen);
    mix(static_cast<uint64_t>(f.ws) | static_cast<uint64_t>(f.esc) << 8 |
        static_cast<uint64_t>(f.kind) << 16);
  }
  return h;
}

void Machine::finish(ConfigSet& out, size_t begin) const {
  // Drop duplicate configurations (alternatives that have merged).
  if (out.size() - begin < 2) return;
  ConfigSet uniq;
  // Small sets compare pairwise; large ones (many object alternatives side
  // by side) compare only configurations whose hashes agree.
  const bool hashed = out.size() > 16;
  thread_local std::vector<std::pair<uint64_t, uint32_t>> kept;  // (hash, index in uniq)
  kept.clear();
  for (size_t k = 0; k < out.size(); ++k) {
    const auto c = out.config(k);
    bool dup = false;
    if (hashed) {
      const uint64_t h = config_hash(c);
      auto it = std::lower_bound(kept.begin(), kept.end(), std::pair{h, uint32_t{0}});
      for (auto j = it; j != kept.end() && j->first == h && !dup; ++j) {
        const auto u = uniq.config(j->second);
        dup = u.size() == c.size() && std::equal(u.begin(), u.end(), c.begin());
      }
      if (!dup) kept.insert(it, {h, static_cast<uint32_t>(uniq.size())});
    } else {
      for (size_t j = 0; j < uniq.size() && !dup; ++j) {
        const auto u = uniq.config(j);
        dup = u.size() == c.size() && std::equal(u.begin(), u.end(), c.begin());
      }
    }
    if (dup) continue;
    uniq.frames.insert(uniq.frames.end(), c.begin(), c.end());
    uniq.ends.push_back(static_cast<uint32_t>(uniq.frames.size()));
  }
  if (uniq.size() != out.size()) out = std::move(uniq);
}

bool Machine::step(const ConfigSet& in, uint8_t b, ConfigSet& out) const {
  out.clear();
  for (size_t k = 0; k < in.size(); ++k) step_one(in.config(k), b, out);
  finish(out, 0);
  return !out.empty();
}

bool Machine::complete_one(std::span<const Frame> cfg) const noexcept {
  const Frame& top = cfg.back();
  if (top.kind == FrameKind::kRoot) return top.q == kRootDone;
  if (top.kind != FrameKind::kLeaf || cfg.size() != 2) return false;
  const GrammarNode& leaf = g_.nodes[top.node];
  return g_.dfas[leaf.dfa]->accepting(top.q) && (!leaf.counts_chars || top.n >= leaf.min_chars);
}

bool Machine::complete(const ConfigSet& s) const noexcept {
  for (size_t k = 0; k < s.size(); ++k)
    if (complete_one(s.config(k))) return true;
  return false;
}

bool Machine::can_continue(const ConfigSet& s) const {
  ConfigSet out;
  for (int b = 0; b < 256; ++b) {
    out.clear();
    for (size_t k = 0; k < s.size(); ++k) step_one(s.config(k), static_cast<uint8_t>(b), out);
    if (!out.empty()) return true;
  }
  return false;
}

}  // namespace nextok::constraint
