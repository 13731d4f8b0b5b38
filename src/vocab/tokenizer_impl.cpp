#include "vocab/tokenizer_impl.hpp"

#include <algorithm>
#include <deque>
#include <span>
#include <thread>

#include "nextok/error.hpp"
#include "vocab/bpe.hpp"
#include "vocab/builder.hpp"
#include "vocab/byte_level.hpp"
#include "vocab/normalize.hpp"
#include "vocab/utf8.hpp"

namespace nextok {

using vocab::PreTokenizerStep;
using vocab::Spelling;
using vocab::SplitBehavior;

namespace {
constexpr uint32_t kNoId = ~0u;
}

struct TokenizerImpl::Scratch {
  vocab::PreTokenizer::Scratch pre;
  std::string spell;
  std::vector<uint32_t> ids;
};

std::shared_ptr<const TokenizerImpl> TokenizerImpl::build(const vocab::TokenizerSpec& spec,
                                                          std::shared_ptr<const Vocabulary> vocab,
                                                          const std::string& name) {
  auto t = std::make_shared<TokenizerImpl>();
  const Vocabulary& v = *vocab;
  t->vocab_ = std::move(vocab);
  t->spelling_ = spec.spelling;
  t->byte_fallback_ = spec.byte_fallback;
  t->ignore_merges_ = spec.ignore_merges;
  t->fuse_unk_ = spec.fuse_unk;
  t->decode_first_ = spec.decode_first;
  if (spec.unk_token) {
    if (auto id = VocabularyBuilder::find_model(v, *spec.unk_token)) t->unk_id_ = *id;
  }

  // Merges: resolve (left, right, left+right) spellings to ids, half on a
  // second thread, then insert in rank order.
  const size_t n_merges = spec.merges.size();
  std::vector<uint32_t> merge_ids(3 * n_merges);
  auto resolve = [&](size_t from, size_t to) {
    constexpr size_t kBlock = 256;
    std::string_view texts[3 * kBlock];
    std::string joined;
    for (size_t base = from; base < to; base += kBlock) {
      const size_t n = std::min(kBlock, to - base);
      joined.clear();
      size_t total = 0;
      for (size_t k = 0; k < n; ++k) {
        total += spec.merges[base + k].first.size() + spec.merges[base + k].second.size();
      }
      joined.reserve(total);
      for (size_t k = 0; k < n; ++k) {
        const auto& [a, b] = spec.merges[base + k];
        texts[3 * k] = a;
        texts[3 * k + 1] = b;
        const size_t at = joined.size();
        joined.append(a).append(b);
        texts[3 * k + 2] = std::string_view(joined).substr(at, a.size() + b.size());
      }
      VocabularyBuilder::find_model_batch(v, std::span(texts, 3 * n),
                                          std::span(merge_ids).subspan(3 * base, 3 * n));
    }
  };
  const size_t half = n_merges / 2;
  {
    std::thread second([&] { resolve(half, n_merges); });
    resolve(0, half);
    second.join();
  }
  t->merges_.reserve(n_merges);
  for (size_t r = 0; r < n_merges; ++r) {
    const uint32_t* m = &merge_ids[3 * r];
    for (int k = 0; k < 3; ++k) {
      if (m[k] != kNoId) continue;
      const auto& [a, b] = spec.merges[r];
      const std::string text = k == 0   ? std::string(a)
                               : k == 1 ? std::string(b)
                                        : std::string(a) + std::string(b);
      throw Error(ErrorCode::kMalformedFile, "tokenizer",
                  name + ": merge " + std::to_string(r) + " uses \"" + text +
                      "\", which is not in model.vocab");
    }
    t->merges_.insert(m[0], m[1], static_cast<uint32_t>(r), m[2]);
  }

  if (spec.spelling == Spelling::kByteLevel) {
    for (int b = 0; b < 256; ++b) {
      const auto& u = vocab::kByteLevel.utf8[static_cast<size_t>(b)];
      auto id = VocabularyBuilder::find_model(
          v, std::string_view(u.data(), vocab::kByteLevel.utf8_size[static_cast<size_t>(b)]));
      t->byte_ids_[static_cast<size_t>(b)] = id ? *id : kNoId;
    }
  } else {
    static const char* hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const char name6[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
      auto id = VocabularyBuilder::find_model(v, std::string_view(name6, 6));
      t->byte_ids_[static_cast<size_t>(b)] = id ? *id : kNoId;
    }
    t->bmp_ids_.assign(0x10000, kNoId);
    for (const auto& [text, id] : spec.vocab) {
      if (text.empty() || text.size() > 4) continue;
      if (v.kind(id) != TokenKind::kNormal && v.text(id) != text) continue;
      if (vocab::utf8_sequence_length(text, 0) != text.size()) continue;
      size_t i = 0;
      const uint32_t cp = vocab::utf8_next(text, i);
      if (cp < 0x10000) t->bmp_ids_[cp] = id;
    }
  }

  t->normalizer_ = spec.normalizer;
  t->pre_ = vocab::PreTokenizer(spec.pre_tokenizer);
  for (const auto& a : spec.added) {
    const vocab::AddedTokenMatcher::Rules rules{
        .special = a.special, .lstrip = a.lstrip, .rstrip = a.rstrip, .single_word = a.single_word};
    if (!a.normalized) {
      t->raw_added_.add(a.content, a.id, rules);
      continue;
    }
    // HF matches a normalized token by its content run through the
    // normalizer (a Prepend makes "<x>" match "▁<x>").
    t->normalized_added_.add(a.spelling.empty() ? a.content : a.spelling, a.id, rules);
  }
  t->raw_added_.finish();
  t->normalized_added_.finish();
  return t;
}

uint32_t TokenizerImpl::char_id(std::string_view ch) const noexcept {
  size_t i = 0;
  const uint32_t cp = vocab::utf8_next(ch, i);
  if (cp < 0x10000) return bmp_ids_[cp];
  auto id = VocabularyBuilder::find_model(*vocab_, ch);
  return id ? *id : kNoId;
}

void TokenizerImpl::encode_word(std::string_view word, std::vector<uint32_t>& out,
                                Scratch& s) const {
  if (word.empty()) return;
  auto& ids = s.ids;
  ids.clear();
  if (spelling_ == Spelling::kByteLevel) {
    if (ignore_merges_) {
      s.spell.clear();
      vocab::to_byte_level(word, s.spell);
      if (auto id = VocabularyBuilder::find_model(*vocab_, s.spell)) {
        out.push_back(*id);
        return;
      }
    }
    for (unsigned char c : word) {
      if (byte_ids_[c] != kNoId) ids.push_back(byte_ids_[c]);
    }
  } else {
    if (ignore_merges_) {
      if (auto id = VocabularyBuilder::find_model(*vocab_, word)) {
        out.push_back(*id);
        return;
      }
    }
    bool last_unk = false;
    for (size_t i = 0; i < word.size();) {
      const size_t n = vocab::utf8_sequence_length(word, i);
      const std::string_view ch = word.substr(i, n);
      i += n;
      const uint32_t id = char_id(ch);
      if (id != kNoId) {
        ids.push_back(id);
        last_unk = false;
        continue;
      }
      if (byte_fallback_) {
        bool all = true;
        for (unsigned char c : ch) all &= byte_ids_[c] != kNoId;
        if (all) {
          for (unsigned char c : ch) ids.push_back(byte_ids_[c]);
          last_unk = false;
          continue;
        }
      }
      if (unk_id_ != kNoId) {
        if (!(fuse_unk_ && last_unk)) ids.push_back(unk_id_);
        last_unk = true;
      }
    }
  }
  vocab::bpe_merge(merges_, ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

void TokenizerImpl::encode_segment(std::string_view segment, bool at_start,
                                   std::vector<uint32_t>& out, Scratch& s) const {
  if (segment.empty()) return;
  pre_.run(segment, at_start, s.pre);
  for (std::string_view w : s.pre.pieces) encode_word(w, out, s);
  s.pre.owned.clear();
}

void TokenizerImpl::encode(std::string_view text, std::vector<uint32_t>& out,
                           const EncodeOptions& opt) const {
  if (const size_t bad = vocab::utf8_first_invalid(text); bad != std::string_view::npos) {
    throw Error(ErrorCode::kInvalidArgument, "text",
                "text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  thread_local Scratch s;
  auto normalized_part = [&](std::string_view seg, bool at_start) {
    if (seg.empty()) return;
    std::string norm_buf;
    const std::string_view norm = vocab::normalize(normalizer_, seg, norm_buf);
    if (normalized_added_.empty()) {
      encode_segment(norm, at_start, out, s);
      return;
    }
    vocab::AddedTokenMatcher::Match m;
    size_t at = 0;
    while (normalized_added_.find(norm, at, opt.parse_special, m)) {
      encode_segment(norm.substr(at, m.begin - at), at_start && at == 0, out, s);
      out.push_back(m.id);
      at = m.end;
    }
    encode_segment(norm.substr(at), at_start && at == 0, out, s);
  };
  vocab::AddedTokenMatcher::Match m;
  size_t at = 0;
  while (raw_added_.find(text, at, opt.parse_special, m)) {
    normalized_part(text.substr(at, m.begin - at), at == 0);
    out.push_back(m.id);
    at = m.end;
  }
  normalized_part(text.substr(at), at == 0);
}

}  // namespace nextok
