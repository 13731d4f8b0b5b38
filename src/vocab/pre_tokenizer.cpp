#include "vocab/pre_tokenizer.hpp"

#include <algorithm>

#include "vocab/utf8.hpp"

namespace nextok::vocab {

PreTokenizer::PreTokenizer(const std::vector<PreTokenizerStep>& steps) {
  for (const auto& s : steps) {
    Step step{s, nullptr};
    if (s.kind == PreTokenizerStep::Kind::kSplit && !s.literal) {
      step.regex = std::make_unique<Regex>(s.regex);
    }
    steps_.push_back(std::move(step));
  }
}

void PreTokenizer::partition(const Step& step, std::string_view p, Scratch& s) const {
  s.spans.clear();
  s.matched.clear();
  size_t prev = 0, pos = 0, b = 0, e = 0;
  const std::string& lit = step.spec.regex;
  while (pos < p.size()) {
    bool hit;
    if (step.regex) {
      hit = step.regex->find(p, pos, b, e);
    } else {
      b = lit.empty() ? std::string_view::npos : p.find(lit, pos);
      hit = b != std::string_view::npos;
      e = hit ? b + lit.size() : 0;
    }
    if (!hit) break;
    if (b != prev) {
      s.spans.emplace_back(prev, b);
      s.matched.push_back(0);
    }
    s.spans.emplace_back(b, e);
    s.matched.push_back(1);
    prev = e;
    // After an empty match the search goes on one character later.
    pos = e > b ? e : b + std::max<size_t>(1, utf8_sequence_length(p, b));
  }
  if (prev != p.size()) {
    s.spans.emplace_back(prev, p.size());
    s.matched.push_back(0);
  }
  if (step.spec.invert) {
    for (auto& m : s.matched) m = !m;
  }
}

bool PreTokenizer::split(const Step& step, std::string_view p, Scratch& s) const {
  partition(step, p, s);
  const size_t before = s.next.size();
  bool starts = false;
  // Merged spans are built in `out` and emitted when complete.
  auto& out = s.merged;
  out.clear();
  const size_t n = s.spans.size();
  switch (step.spec.behavior) {
    case SplitBehavior::kIsolated:
      out.assign(s.spans.begin(), s.spans.end());
      break;
    case SplitBehavior::kRemoved:
      for (size_t k = 0; k < n; ++k) {
        if (!s.matched[k]) out.push_back(s.spans[k]);
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (size_t k = 0; k < n; ++k) {
        if (s.matched[k] && k > 0 && !s.matched[k - 1]) {
          out.back().second = s.spans[k].second;
        } else {
          out.push_back(s.spans[k]);
        }
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (size_t k = n; k-- > 0;) {
        if (s.matched[k] && k + 1 < n && !s.matched[k + 1]) {
          out.back().first = s.spans[k].first;
        } else {
          out.push_back(s.spans[k]);
        }
      }
      std::reverse(out.begin(), out.end());
      break;
    case SplitBehavior::kContiguous:
      for (size_t k = 0; k < n; ++k) {
        if (k > 0 && s.matched[k] == s.matched[k - 1]) {
          out.back().second = s.spans[k].second;
        } else {
          out.push_back(s.spans[k]);
        }
      }
      break;
  }
  for (const auto& [from, to] : out) {
    if (to <= from) continue;  // HF drops empty pieces
    if (s.next.size() == before) starts = from == 0;
    s.next.push_back(p.substr(from, to - from));
  }
  return starts;
}

bool PreTokenizer::metaspace(const Step& step, std::string_view p, bool first, Scratch& s) const {
  const std::string& rep = step.spec.replacement;
  std::string& o = s.owned.emplace_back();
  o.reserve(p.size() + rep.size());
  const bool prepend =
      step.spec.prepend == Prepend::kAlways || (step.spec.prepend == Prepend::kFirst && first);
  if (prepend && !p.starts_with(" ") && !p.starts_with(rep)) o += rep;
  for (char c : p) {
    if (c == ' ') {
      o += rep;
    } else {
      o += c;
    }
  }
  if (!step.spec.split) {
    if (!o.empty()) s.next.push_back(o);
    return true;
  }
  // Each replacement starts a piece (HF: split on it, merged with next).
  const std::string_view v = o;
  size_t start = 0;
  for (size_t at = v.find(rep); at != std::string_view::npos; at = v.find(rep, at + rep.size())) {
    if (at > start) s.next.push_back(v.substr(start, at - start));
    start = at;
  }
  if (start < v.size()) s.next.push_back(v.substr(start));
  return true;
}

void PreTokenizer::run(std::string_view text, bool at_start, Scratch& s) const {
  s.pieces.clear();
  s.pieces.push_back(text);
  // Whether pieces[0] begins where the text begins.
  bool origin = at_start;
  for (const Step& step : steps_) {
    s.next.clear();
    bool next_origin = false;
    for (size_t k = 0; k < s.pieces.size(); ++k) {
      const std::string_view p = s.pieces[k];
      const size_t before = s.next.size();
      bool starts = true;
      switch (step.spec.kind) {
        case PreTokenizerStep::Kind::kByteLevel:
          if (step.spec.add_prefix_space && !p.empty() && p.front() != ' ') {
            s.owned.emplace_back(" ").append(p);
            s.next.push_back(s.owned.back());
          } else if (!p.empty()) {
            s.next.push_back(p);
          }
          break;
        case PreTokenizerStep::Kind::kSplit:
          starts = split(step, p, s);
          break;
        case PreTokenizerStep::Kind::kMetaspace:
          starts = metaspace(step, p, origin && k == 0, s);
          break;
      }
      if (before == 0 && s.next.size() > 0) next_origin = origin && k == 0 && starts;
    }
    origin = next_origin;
    s.pieces.swap(s.next);
  }
}

}  // namespace nextok::vocab
