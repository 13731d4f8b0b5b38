// A code-point class as a grammar: the UTF-8 sequences of its ranges as a
// tree of byte sets, equal subtrees shared (the minimal automaton of a
// finite language). Python's \w is ~700 ranges and ~1,500 sequences:
// spelled flat, one alternative a sequence, every use of the class put
// that many alternatives into an Earley prediction or a subset
// construction; shared, its automaton has a few dozen states.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "constraint/cfg/gbnf.hpp"
#include "constraint/regex/utf8_ranges.hpp"

namespace nextok::constraint::cfg {

namespace {

using Seq = std::span<const ByteRange>;

class ClassTree {
 public:
  static constexpr int32_t kEnd = -1;
  struct Node {
    std::vector<std::pair<ByteSet, int32_t>> edges;  // to a node, or kEnd
    bool operator<(const Node& o) const {
      return std::lexicographical_compare(edges.begin(), edges.end(), o.edges.begin(),
                                          o.edges.end(), [](const auto& a, const auto& b) {
                                            return a.first.w != b.first.w ? a.first.w < b.first.w
                                                                          : a.second < b.second;
                                          });
    }
  };

  // The node reading exactly `seqs` (suffixes, all non-empty), or nullopt
  // when two first ranges overlap without being equal (then the suffixes
  // after them cannot be told apart by the byte: the caller spells it flat).
  std::optional<int32_t> build(std::vector<Seq> seqs) {
    std::sort(seqs.begin(), seqs.end(), [](Seq a, Seq b) {
      return a[0].lo != b[0].lo ? a[0].lo < b[0].lo : a[0].hi < b[0].hi;
    });
    std::map<int32_t, ByteSet> by_child;
    for (size_t i = 0; i < seqs.size();) {
      const ByteRange r = seqs[i][0];
      size_t j = i;
      std::vector<Seq> rest;
      size_t ends = 0;
      for (; j < seqs.size() && seqs[j][0].lo == r.lo && seqs[j][0].hi == r.hi; ++j) {
        if (seqs[j].size() == 1) {
          ++ends;
        } else {
          rest.push_back(seqs[j].subspan(1));
        }
      }
      if (j < seqs.size() && seqs[j][0].lo <= r.hi) return std::nullopt;
      if (ends > 0 && !rest.empty()) return std::nullopt;  // a sequence a prefix of another
      int32_t child = kEnd;
      if (!rest.empty()) {
        const auto c = build(std::move(rest));
        if (!c) return std::nullopt;
        child = *c;
      }
      by_child[child].add_range(r.lo, r.hi);
      i = j;
    }
    Node n;
    for (const auto& [child, set] : by_child) n.edges.emplace_back(set, child);
    const auto [it, added] = ids_.emplace(std::move(n), static_cast<int32_t>(nodes_.size()));
    if (added) nodes_.push_back(&it->first);
    return it->second;
  }

  size_t size() const noexcept { return nodes_.size(); }
  const Node& node(int32_t k) const { return *nodes_[static_cast<size_t>(k)]; }

 private:
  std::map<Node, int32_t> ids_;
  std::vector<const Node*> nodes_;  // by id (map nodes do not move)
};

}  // namespace

uint32_t add_code_point_class(Cfg& g, const std::vector<std::pair<uint32_t, uint32_t>>& set,
                              std::string name) {
  std::vector<std::vector<ByteRange>> seqs;
  for (auto [lo, hi] : set) utf8_sequences(lo, hi, seqs);
  const uint32_t nt = g.add_nonterminal(name);
  ClassTree tree;
  const auto root = tree.build(std::vector<Seq>(seqs.begin(), seqs.end()));
  if (!root) {  // not a tree by ranges: one alternative a sequence
    for (const auto& seq : seqs) {
      std::vector<Symbol> body;
      for (ByteRange r : seq) {
        ByteSet s;
        s.add_range(r.lo, r.hi);
        body.push_back(g.terminal(s));
      }
      g.rules[nt].push_back(std::move(body));
    }
    return nt;
  }
  // Node ids are children first, the root last.
  std::vector<uint32_t> nts(tree.size());
  for (size_t k = 0; k < tree.size(); ++k) {
    nts[k] =
        static_cast<int32_t>(k) == *root ? nt : g.add_nonterminal(name + "~" + std::to_string(k));
  }
  for (size_t k = 0; k < tree.size(); ++k) {
    for (const auto& [bytes, child] : tree.node(static_cast<int32_t>(k)).edges) {
      std::vector<Symbol> body = {g.terminal(bytes)};
      if (child != ClassTree::kEnd)
        body.push_back(static_cast<Symbol>(nts[static_cast<size_t>(child)]));
      g.rules[nts[k]].push_back(std::move(body));
    }
  }
  return nt;
}

}  // namespace nextok::constraint::cfg
