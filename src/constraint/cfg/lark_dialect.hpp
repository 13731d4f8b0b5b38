// What llguidance's Lark dialect adds to lark's syntax, read apart from the
// rest (docs/constraint-engine.md, "llguidance's dialect").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "constraint/regex/dfa.hpp"

namespace nextok::constraint::cfg::lark {

// Whether the '{' at src[pos] opens a count ({m,n}, {m,}, {,n}, {n}):
// digits, spaces and at most one comma, where a template's arguments would
// hold names or strings.
bool is_count_brace(std::string_view src, size_t pos);

// One past the '}' that closes the JSON object whose '{' is at src[pos]
// (strings and nested brackets skipped), or npos when it never closes.
size_t json_object_end(std::string_view src, size_t pos);

// `%llguidance {options}` as far as they change the language.
struct LlguidanceOptions {
  bool ignore_once = false;  // at most one %ignore'd token between two lexemes
};

// Reads `%llguidance {options}` into `out`; returns why they cannot be
// honoured here, or "". Its boolean options must be booleans (as
// llguidance checks); unknown ones are ignored, as llguidance does.
std::string read_llguidance_options(std::string_view options, LlguidanceOptions& out);

// The ids of <[1,5-9]> (inside the brackets): ids and inclusive ranges,
// at most 65,536 ids. Negations and * would take text tokens, which a
// grammar reads as text: `error` is set for those and for bad syntax.
std::vector<uint32_t> token_ids(std::string_view body, std::string& error);

// %regex {"substring_words": s} | {"substring_chars": s} |
// {"substring_chunks": [...]}: the chunks whose consecutive runs the
// pattern matches (words: maximal runs of word characters, of whitespace,
// and of everything else, as llguidance splits them). Sets `error` instead
// when the object is none of these.
std::vector<std::string> substring_chunks(std::string_view json, std::string& error);

// The strings chunks[i..j) for 0 <= i <= j <= size, as a DFA (subset
// construction over byte positions; throws past max_states).
Dfa substring_dfa(const std::vector<std::string>& chunks, size_t max_states);

}  // namespace nextok::constraint::cfg::lark
