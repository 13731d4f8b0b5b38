// The context-free grammar IR every grammar front-end (GBNF, regex, choice)
// compiles to: nonterminals with alternatives, each a sequence of symbols.
// Terminals are byte sets, so the matcher reads the same alphabet as the
// token trie; code-point classes are spelled as UTF-8 byte sequences.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace nextok::constraint::cfg {

// 256 bits, bit b set = byte b is in the set.
struct ByteSet {
  std::array<uint64_t, 4> w{};
  bool has(uint8_t b) const noexcept { return (w[b >> 6] >> (b & 63)) & 1u; }
  void add(uint8_t b) noexcept { w[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) noexcept {
    for (unsigned b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  bool empty() const noexcept { return (w[0] | w[1] | w[2] | w[3]) == 0; }
  bool operator==(const ByteSet&) const = default;
};
struct ByteSetHash {
  size_t operator()(const ByteSet& s) const noexcept {
    uint64_t h = 0;
    for (uint64_t x : s.w) h = (h ^ x) * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// Bytes that every one of some sets holds alike share a class; classes are
// numbered in the order of their lowest byte.
struct ByteClasses {
  std::array<uint32_t, 256> of{};  // per byte
  std::vector<uint8_t> rep;        // per class: its lowest byte
};
ByteClasses byte_classes(std::vector<ByteSet> sets);

// A symbol: >= 0 is a nonterminal id, < 0 the terminal ~symbol.
using Symbol = int32_t;
inline Symbol terminal_symbol(uint32_t t) {
  return ~static_cast<int32_t>(t);
}
inline bool is_terminal(Symbol s) {
  return s < 0;
}
inline uint32_t terminal_id(Symbol s) {
  return static_cast<uint32_t>(~s);
}

// A special token (a control token with no text, such as <|eot_id|>) as a
// grammar reads it: 0xFF, which no UTF-8 text holds, then its id in four
// continuation bytes, six bits each. The matcher feeds these bytes when the
// token is sampled and allows the token where they are readable.
inline std::string special_token_bytes(uint32_t id) {
  std::string out(1, '\xFF');
  for (int shift = 18; shift >= 0; shift -= 6)
    out.push_back(static_cast<char>(0x80 | ((id >> shift) & 63)));
  return out;
}
inline constexpr uint32_t kMaxSpecialTokenId = (1u << 24) - 1;

struct Cfg {
  // Special tokens the grammar names (sorted, each once): read as
  // special_token_bytes.
  std::vector<uint32_t> special_tokens;
  std::vector<ByteSet> terminals;
  std::vector<std::string> names;                       // per nonterminal
  std::vector<std::vector<std::vector<Symbol>>> rules;  // per nonterminal: alternatives
  uint32_t root = 0;

  uint32_t add_nonterminal(std::string name) {
    names.push_back(std::move(name));
    rules.emplace_back();
    return static_cast<uint32_t>(names.size() - 1);
  }
  // Per nonterminal (shorter: the rest 0): its repetitions are delimited
  // within it (an embedded JSON object or array, `{` ... `}`), so none is
  // open where it begins or ends and no two are open at once inside it.
  // The regular-fragment pass skips a part whose only loops are in these.
  std::vector<uint8_t> settled;
  bool is_settled(uint32_t n) const noexcept { return n < settled.size() && settled[n] != 0; }
  void settle(uint32_t n) {
    if (settled.size() <= n) settled.resize(n + 1, 0);
    settled[n] = 1;
  }

  // The same set twice gives the same terminal.
  Symbol terminal(const ByteSet& s);
  // terminal()'s index of `terminals` (rebuilt when it is out of step).
  std::unordered_map<ByteSet, uint32_t, ByteSetHash> terminal_ids;
  Symbol byte(uint8_t b) {
    ByteSet s;
    s.add(b);
    return terminal(s);
  }
  size_t size() const noexcept;  // symbols in all alternatives
};

// Removes what cannot derive a byte string (non-productive nonterminals,
// empty terminals) and what the root cannot reach. Throws
// Error{kInvalidArgument, "grammar"} when the root itself derives nothing.
void prune(Cfg& g);

}  // namespace nextok::constraint::cfg
