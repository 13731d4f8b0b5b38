// The pre-tokenizer stage of the HF pipeline: a normalized segment split
// into the pieces BPE encodes one by one (Split, ByteLevel's prefix space,
// Metaspace), with HF's delimiter behaviours.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vocab/regex.hpp"
#include "vocab/spec.hpp"

namespace nextok::vocab {

class PreTokenizer {
 public:
  PreTokenizer() = default;
  // Compiles the Split regexes; throws Error{kUnsupported} as Regex does.
  explicit PreTokenizer(const std::vector<PreTokenizerStep>& steps);

  struct Scratch {
    std::vector<std::string_view> pieces, next;
    std::deque<std::string> owned;  // pieces that are not views of the text
    std::vector<std::pair<size_t, size_t>> spans, merged;
    std::vector<uint8_t> matched;
  };
  // Splits `text` into s.pieces (views into text or s.owned; s.owned is the
  // caller's to clear). `at_start`: the text begins the input (Metaspace's
  // prepend_scheme "first" prepends only there).
  void run(std::string_view text, bool at_start, Scratch& s) const;

 private:
  struct Step {
    PreTokenizerStep spec;
    std::unique_ptr<Regex> regex;  // null for a literal split
  };
  // Partitions p into matched and unmatched spans, as HF's find_matches.
  void partition(const Step& step, std::string_view p, Scratch& s) const;
  // One Split step on piece p; returns whether the first piece emitted starts p.
  bool split(const Step& step, std::string_view p, Scratch& s) const;
  bool metaspace(const Step& step, std::string_view p, bool first, Scratch& s) const;

  std::vector<Step> steps_;
};

}  // namespace nextok::vocab
