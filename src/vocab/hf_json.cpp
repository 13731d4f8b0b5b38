#include "vocab/hf_json.hpp"

#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nextok/error.hpp"
#include "vocab/json_scan.hpp"
#include "vocab/normalize.hpp"
#include "vocab/regex.hpp"
#include "vocab/utf8.hpp"

namespace nextok::vocab {
namespace {

namespace od = simdjson::dom;

// model.merges read ahead on a second thread. Where the array starts is a
// guess (the first `"merges": [` in the file); the main scan adopts the
// result only if it reaches the key at exactly that offset, so a wrong guess
// costs time, never correctness.
struct MergesAhead {
  size_t key_at = std::string_view::npos;
  std::vector<std::pair<std::string_view, std::string_view>> merges;
  size_t end = 0;
  bool ok = false;
  std::jthread worker;
  bool take() {
    if (worker.joinable()) worker.join();
    return ok;
  }
};

class Parse {
 public:
  explicit Parse(std::string_view name) : name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::kMalformedFile, "tokenizer", std::string(name_) + ": " + what);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(ErrorCode::kUnsupported, "tokenizer", std::string(name_) + ": " + what);
  }
  template <class T>
  T check(simdjson::simdjson_result<T>&& r, const char* where) const {
    T v;
    if (auto err = std::move(r).get(v); err) {
      fail(std::string(where) + ": " + simdjson::error_message(err));
    }
    return v;
  }

  std::string_view str(od::element v, const char* where) const {
    return check(v.get_string(), where);
  }
  bool boolean(od::element v, const char* where) const { return check(v.get_bool(), where); }
  uint32_t id(od::element v, const char* where) const {
    const uint64_t x = check(v.get_uint64(), where);
    if (x > 0x7FFFFFFFu) fail(std::string(where) + ": id " + std::to_string(x) + " is too large");
    return static_cast<uint32_t>(x);
  }
  bool is_null(od::element v) const { return v.is_null(); }

  void model(JsonScanner& sc, std::deque<std::string>& arena, od::parser& small,
             TokenizerSpec& spec, bool with_merges, MergesAhead* ahead) const;
  void vocab(JsonScanner& sc, std::deque<std::string>& arena, TokenizerSpec& spec) const;
  void merges(JsonScanner& sc, std::deque<std::string>& arena, TokenizerSpec& spec) const;
  void added_tokens(od::array arr, TokenizerSpec& spec) const;
  void normalizer(od::object obj, TokenizerSpec& spec) const;
  void pre_tokenizer(od::object obj, TokenizerSpec& spec) const;
  void decoder(od::object obj, TokenizerSpec& spec, bool& saw_byte_level, bool& saw_fuse) const;

 private:
  std::string_view name_;
};

void Parse::vocab(JsonScanner& sc, std::deque<std::string>& arena, TokenizerSpec& spec) const {
  if (sc.peek() != '{' && !sc.at_end())
    unsupported("model.vocab is not an object of token → id (not a BPE vocabulary)");
  sc.expect('{');
  spec.vocab.reserve(1 << 16);
  if (sc.consume('}')) return;
  do {
    const std::string_view key = sc.string(arena);
    sc.expect(':');
    spec.vocab.emplace_back(key, sc.id());
  } while (sc.consume(','));
  sc.expect('}');
}

void Parse::merges(JsonScanner& sc, std::deque<std::string>& arena, TokenizerSpec& spec) const {
  sc.expect('[');
  spec.merges.reserve(1 << 16);
  if (sc.consume(']')) return;
  do {
    if (sc.peek() == '"') {
      // Legacy form "left right": the single space separates the pair.
      const std::string_view s = sc.string(arena);
      const size_t sp = s.find(' ');
      if (sp == std::string_view::npos || s.find(' ', sp + 1) != std::string_view::npos) {
        fail("model.merges entry \"" + std::string(s) +
             "\" is not two tokens separated by one space");
      }
      spec.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (sc.peek() == '[') {
      sc.expect('[');
      const std::string_view left = sc.string(arena);
      sc.expect(',');
      const std::string_view right = sc.string(arena);
      if (!sc.consume(']')) fail("model.merges entry is not a [left, right] pair");
      spec.merges.emplace_back(left, right);
    } else {
      fail("model.merges entries must be strings or [left, right] pairs");
    }
  } while (sc.consume(','));
  sc.expect(']');
}

void Parse::model(JsonScanner& sc, std::deque<std::string>& arena, od::parser& small,
                  TokenizerSpec& spec, bool with_merges, MergesAhead* ahead) const {
  bool saw_type = false, saw_vocab = false;
  sc.expect('{');
  if (!sc.consume('}')) {
    do {
      sc.skip_ws();
      const size_t key_at = sc.offset();
      const std::string_view key = sc.string(arena);
      sc.expect(':');
      if (key == "merges" && ahead != nullptr && ahead->key_at == key_at && ahead->take()) {
        // The second thread read exactly this array: adopt its result.
        spec.merges = std::move(ahead->merges);
        sc.seek(ahead->end);
        continue;
      }
      if (key == "vocab") {
        vocab(sc, arena, spec);
        saw_vocab = true;
        continue;
      }
      if (key == "merges" && with_merges) {
        merges(sc, arena, spec);
        continue;
      }
      if (key == "merges") {
        if (sc.peek() != '[' && !sc.at_end()) fail("model.merges must be an array");
        sc.value();
        continue;
      }
      const std::string_view raw = sc.value();
      const simdjson::padded_string padded(raw);
      const od::element v = check(small.parse(padded), "model");
      if (key == "type") {
        const std::string_view type = str(v, "model.type");
        saw_type = true;
        if (type != "BPE") {
          unsupported("model type \"" + std::string(type) +
                      "\" is not supported (supported: BPE, byte-level or SentencePiece-style)");
        }
      } else if (key == "byte_fallback") {
        spec.byte_fallback = boolean(v, "model.byte_fallback");
      } else if (key == "ignore_merges") {
        spec.ignore_merges = boolean(v, "model.ignore_merges");
      } else if (key == "fuse_unk") {
        spec.fuse_unk = boolean(v, "model.fuse_unk");
      } else if (key == "unk_token") {
        if (!is_null(v)) spec.unk_token = std::string(str(v, "model.unk_token"));
      } else if (key == "dropout") {
        if (!is_null(v) && check(v.get_double(), "model.dropout") != 0.0) {
          unsupported("BPE dropout is random at encode time; only null or 0 is supported");
        }
      } else if (key == "continuing_subword_prefix" || key == "end_of_word_suffix") {
        if (!is_null(v) && !str(v, "model").empty()) {
          unsupported("model." + std::string(key) + " (word-piece style BPE) is not supported");
        }
      }
    } while (sc.consume(','));
    sc.expect('}');
  }
  if (!saw_type && !saw_vocab) fail("model has neither a type nor a vocab");
  if (!saw_vocab) fail("model.vocab is missing");
}

void Parse::added_tokens(od::array arr, TokenizerSpec& spec) const {
  for (od::element item : arr) {
    od::object obj = check(item.get_object(), "added_tokens");
    AddedTokenSpec t;
    bool has_id = false, has_content = false;
    for (auto [key, v] : obj) {
      if (key == "id") {
        t.id = id(v, "added_tokens.id");
        has_id = true;
      } else if (key == "content") {
        t.content = std::string(str(v, "added_tokens.content"));
        has_content = true;
      } else if (key == "special") {
        t.special = boolean(v, "added_tokens.special");
      } else if (key == "normalized") {
        t.normalized = boolean(v, "added_tokens.normalized");
      } else if (key == "lstrip") {
        t.lstrip = boolean(v, "added_tokens.lstrip");
      } else if (key == "rstrip") {
        t.rstrip = boolean(v, "added_tokens.rstrip");
      } else if (key == "single_word") {
        t.single_word = boolean(v, "added_tokens.single_word");
      }
    }
    if (!has_id || !has_content) fail("an added_tokens entry lacks id or content");
    if (t.content.empty()) fail("added token " + std::to_string(t.id) + " has empty content");
    spec.added.push_back(std::move(t));
  }
}

void Parse::normalizer(od::object obj, TokenizerSpec& spec) const {
  std::string type;
  std::string pattern, content;
  bool pattern_is_regex = false;
  for (auto [key, v] : obj) {
    if (key == "type") {
      type = std::string(str(v, "normalizer.type"));
    } else if (key == "normalizers") {
      for (od::element item : check(v.get_array(), "normalizer.normalizers")) {
        normalizer(check(item.get_object(), "normalizers"), spec);
      }
    } else if (key == "pattern") {
      for (auto [pk, pv] : check(v.get_object(), "normalizer.pattern")) {
        pattern = std::string(str(pv, "pattern"));
        pattern_is_regex = pk == "Regex";
      }
    } else if (key == "content" || key == "prepend") {
      content = std::string(str(v, "normalizer.content"));
    }
  }
  using K = NormalizerStep::Kind;
  if (type == "Sequence") return;
  if (type == "NFC") {
    spec.normalizer.push_back({K::kNfc, {}, {}});
  } else if (type == "NFD") {
    spec.normalizer.push_back({K::kNfd, {}, {}});
  } else if (type == "NFKC") {
    spec.normalizer.push_back({K::kNfkc, {}, {}});
  } else if (type == "NFKD") {
    spec.normalizer.push_back({K::kNfkd, {}, {}});
  } else if (type == "Replace" && !pattern_is_regex && !pattern.empty()) {
    spec.normalizer.push_back({K::kReplace, pattern, content});
  } else if (type == "Prepend") {
    spec.normalizer.push_back({K::kPrepend, {}, content});
  } else {
    unsupported("normalizer \"" + type + (pattern_is_regex ? " (regex)" : "") +
                "\" is not supported (supported: NFC, NFD, NFKC, NFKD, Replace of a string, "
                "Prepend, Sequence)");
  }
}

SplitBehavior split_behavior(const Parse& p, std::string_view s) {
  if (s == "Isolated") return SplitBehavior::kIsolated;
  if (s == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (s == "Removed") return SplitBehavior::kRemoved;
  if (s == "Contiguous") return SplitBehavior::kContiguous;
  p.unsupported("Split behavior \"" + std::string(s) + "\" is not supported");
}

// Metaspace's prepend_scheme; files from before it existed say
// add_prefix_space instead (true: always, false: never).
Prepend metaspace_prepend(const Parse& p, const std::string& scheme,
                          std::optional<bool> legacy_prefix_space) {
  if (scheme.empty())
    return legacy_prefix_space.value_or(true) ? Prepend::kAlways : Prepend::kNever;
  if (scheme == "always") return Prepend::kAlways;
  if (scheme == "first") return Prepend::kFirst;
  if (scheme == "never") return Prepend::kNever;
  p.unsupported("Metaspace prepend_scheme \"" + scheme + "\" is not supported");
}

// One punctuation character as HF's Punctuation and BertPreTokenizer read
// it: ASCII punctuation or a Unicode P* category.
constexpr const char* kPunctuation = R"([!-/:-@\[-`{-~]|\p{P})";

// The GPT-2 pre-tokenizer regex that ByteLevel applies when use_regex is set.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

void Parse::pre_tokenizer(od::object obj, TokenizerSpec& spec) const {
  std::string type;
  PreTokenizerStep step{.kind = PreTokenizerStep::Kind::kSplit};
  bool use_regex = true, individual_digits = false;
  std::string prepend_scheme;
  std::optional<bool> legacy_prefix_space;  // Metaspace before prepend_scheme existed
  for (auto [key, v] : obj) {
    if (key == "type") {
      type = std::string(str(v, "pre_tokenizer.type"));
    } else if (key == "pretokenizers") {
      for (od::element item : check(v.get_array(), "pre_tokenizer.pretokenizers")) {
        pre_tokenizer(check(item.get_object(), "pretokenizers"), spec);
      }
    } else if (key == "pattern") {
      for (auto [pk, pv] : check(v.get_object(), "pre_tokenizer.pattern")) {
        step.regex = std::string(str(pv, "pattern"));
        step.literal = pk != "Regex";
      }
    } else if (key == "behavior") {
      step.behavior = split_behavior(*this, str(v, "pre_tokenizer.behavior"));
    } else if (key == "invert") {
      step.invert = boolean(v, "pre_tokenizer.invert");
    } else if (key == "add_prefix_space") {
      step.add_prefix_space = boolean(v, "pre_tokenizer.add_prefix_space");
      legacy_prefix_space = step.add_prefix_space;
    } else if (key == "replacement") {
      step.replacement = std::string(str(v, "pre_tokenizer.replacement"));
    } else if (key == "prepend_scheme") {
      prepend_scheme = std::string(str(v, "pre_tokenizer.prepend_scheme"));
    } else if (key == "split") {
      step.split = boolean(v, "pre_tokenizer.split");
    } else if (key == "use_regex") {
      use_regex = boolean(v, "pre_tokenizer.use_regex");
    } else if (key == "individual_digits") {
      individual_digits = boolean(v, "pre_tokenizer.individual_digits");
    }
  }
  if (type == "Sequence") return;
  if (type == "Split") {
    if (step.regex.empty()) fail("Split pre-tokenizer has no pattern");
    spec.pre_tokenizer.push_back(std::move(step));
  } else if (type == "Metaspace") {
    step.kind = PreTokenizerStep::Kind::kMetaspace;
    step.add_prefix_space = false;
    if (vocab::utf8_sequence_length(step.replacement, 0) != step.replacement.size() ||
        step.replacement.empty()) {
      fail("Metaspace replacement must be one character");
    }
    step.prepend = metaspace_prepend(*this, prepend_scheme, legacy_prefix_space);
    spec.pre_tokenizer.push_back(std::move(step));
  } else if (type == "Whitespace") {
    // HF: the runs of Rust's regex `\w+|[^\w\s]+` are the pieces.
    const std::string w(kRustWordChars);
    spec.pre_tokenizer.push_back({.kind = PreTokenizerStep::Kind::kSplit,
                                  .regex = "[" + w + "]+|[^" + w + R"(\s]+)",
                                  .behavior = SplitBehavior::kRemoved,
                                  .invert = true});
  } else if (type == "WhitespaceSplit" || type == "BertPreTokenizer") {
    spec.pre_tokenizer.push_back({.kind = PreTokenizerStep::Kind::kSplit,
                                  .regex = R"(\s+)",
                                  .behavior = SplitBehavior::kRemoved});
    if (type == "BertPreTokenizer") {
      spec.pre_tokenizer.push_back({.kind = PreTokenizerStep::Kind::kSplit, .regex = kPunctuation});
    }
  } else if (type == "Punctuation") {
    step.regex = kPunctuation;
    spec.pre_tokenizer.push_back(std::move(step));
  } else if (type == "Digits") {
    // HF splits on char::is_numeric, i.e. \p{N}.
    spec.pre_tokenizer.push_back({.kind = PreTokenizerStep::Kind::kSplit,
                                  .regex = individual_digits ? R"(\p{N})" : R"(\p{N}+)"});
  } else if (type == "ByteLevel") {
    if (use_regex) {
      PreTokenizerStep split{.kind = PreTokenizerStep::Kind::kSplit, .regex = kGpt2Pattern};
      // add_prefix_space runs before the regex split in ByteLevel.
      if (step.add_prefix_space) {
        spec.pre_tokenizer.push_back(
            {.kind = PreTokenizerStep::Kind::kByteLevel, .add_prefix_space = true});
      }
      spec.pre_tokenizer.push_back(std::move(split));
    } else {
      step.kind = PreTokenizerStep::Kind::kByteLevel;
      spec.pre_tokenizer.push_back(std::move(step));
    }
  } else {
    unsupported("pre_tokenizer \"" + type +
                "\" is not supported (supported: Split, ByteLevel, Digits, Metaspace, Whitespace, "
                "WhitespaceSplit, Punctuation, BertPreTokenizer, Sequence)");
  }
}

void Parse::decoder(od::object obj, TokenizerSpec& spec, bool& saw_byte_level,
                    bool& saw_fuse) const {
  std::string type;
  std::string pattern, content, replacement, prepend_scheme;
  std::optional<bool> legacy_prefix_space;
  int64_t start = 0, stop = 0;
  for (auto [key, v] : obj) {
    if (key == "type") {
      type = std::string(str(v, "decoder.type"));
    } else if (key == "replacement") {
      replacement = std::string(str(v, "decoder.replacement"));
    } else if (key == "prepend_scheme") {
      prepend_scheme = std::string(str(v, "decoder.prepend_scheme"));
    } else if (key == "add_prefix_space") {
      legacy_prefix_space = boolean(v, "decoder.add_prefix_space");
    } else if (key == "decoders") {
      for (od::element item : check(v.get_array(), "decoder.decoders")) {
        decoder(check(item.get_object(), "decoders"), spec, saw_byte_level, saw_fuse);
      }
    } else if (key == "pattern") {
      for (auto [pk, pv] : check(v.get_object(), "decoder.pattern")) {
        (void)pk;
        pattern = std::string(str(pv, "pattern"));
      }
    } else if (key == "content") {
      content = std::string(str(v, "decoder.content"));
    } else if (key == "start") {
      start = check(v.get_int64(), "decoder.start");
    } else if (key == "stop") {
      stop = check(v.get_int64(), "decoder.stop");
    }
  }
  if (type == "Sequence") return;
  if (type == "ByteLevel") {
    saw_byte_level = true;
  } else if (type == "Replace" && pattern == "\xE2\x96\x81" && content == " ") {
    spec.spelling = Spelling::kSentencePiece;
  } else if (type == "ByteFallback") {
    spec.spelling = Spelling::kSentencePiece;
    spec.decode_byte_fallback = true;
  } else if (type == "Fuse") {
    saw_fuse = true;
  } else if (type == "Strip" && saw_fuse && content == " " && start == 1 && stop == 0) {
    spec.decode_first = FirstToken::kStripOneSpace;
  } else if (type == "Metaspace" && replacement == "\xE2\x96\x81" && !saw_fuse) {
    // Its per-token rule (the first token loses its replacements) runs
    // before any Fuse joins the tokens.
    spec.spelling = Spelling::kSentencePiece;
    if (metaspace_prepend(*this, prepend_scheme, legacy_prefix_space) != Prepend::kNever) {
      spec.decode_first = FirstToken::kDropReplacements;
    }
  } else {
    unsupported("decoder \"" + type +
                "\" is not supported (supported: ByteLevel; Metaspace with ▁ before any Fuse, "
                "Replace ▁→space, ByteFallback, Fuse, Strip)");
  }
}

}  // namespace

TokenizerSpec parse_tokenizer_json(std::string_view json, std::string_view name,
                                   JsonStrings& strings, bool with_merges) {
  Parse p(name);
  TokenizerSpec spec;
  std::deque<std::string>& arena = strings.main;
  JsonScanner sc(json, name);  // validates UTF-8 before the worker starts
  MergesAhead ahead;
  for (size_t at = json.find("\"merges\""); at != std::string_view::npos;
       at = json.find("\"merges\"", at + 1)) {
    size_t q = at + 8;
    auto ws = [&] {
      while (q < json.size() &&
             (json[q] == ' ' || json[q] == '\n' || json[q] == '\r' || json[q] == '\t')) {
        ++q;
      }
    };
    ws();
    if (q >= json.size() || json[q] != ':') continue;
    ++q;
    ws();
    if (q >= json.size() || json[q] != '[') continue;
    ahead.key_at = at;
    ahead.worker = std::jthread([&ahead, &p, &strings, json, name, q, with_merges] {
      try {
        JsonScanner sc2(json, name, q);
        if (with_merges) {
          TokenizerSpec tmp;
          p.merges(sc2, strings.merges, tmp);
          ahead.merges = std::move(tmp.merges);
        } else {
          sc2.value();
        }
        ahead.end = sc2.offset();
        ahead.ok = true;
      } catch (const Error&) {
        // The main scan reads the array itself and reports the error.
      }
    });
    break;
  }
  od::parser small;  // for the small members, one at a time
  bool saw_model = false, saw_byte_level = false, saw_fuse = false;
  spec.decode_byte_fallback = false;  // until the decoder names ByteFallback
  if (sc.peek() != '{') sc.fail("the top level is not a JSON object");
  sc.expect('{');
  if (!sc.consume('}')) {
    do {
      const std::string_view key = sc.string(arena);
      sc.expect(':');
      if (key == "model") {
        p.model(sc, arena, small, spec, with_merges, &ahead);
        saw_model = true;
        continue;
      }
      const std::string_view raw = sc.value();
      if (key != "added_tokens" && key != "normalizer" && key != "pre_tokenizer" &&
          key != "decoder") {
        continue;
      }
      const simdjson::padded_string padded(raw);
      const od::element v = p.check(small.parse(padded), std::string(key).c_str());
      if (p.is_null(v)) continue;
      if (key == "added_tokens") {
        p.added_tokens(p.check(v.get_array(), "added_tokens"), spec);
      } else if (key == "normalizer") {
        p.normalizer(p.check(v.get_object(), "normalizer"), spec);
      } else if (key == "pre_tokenizer") {
        p.pre_tokenizer(p.check(v.get_object(), "pre_tokenizer"), spec);
      } else {
        p.decoder(p.check(v.get_object(), "decoder"), spec, saw_byte_level, saw_fuse);
      }
    } while (sc.consume(','));
    sc.expect('}');
  }
  if (!sc.at_end()) sc.fail("trailing content after the JSON value");
  if (!saw_model) p.fail("no \"model\" section");
  for (auto& a : spec.added) {
    if (!a.normalized || spec.normalizer.empty()) continue;
    std::string buf;
    const std::string_view n = normalize(spec.normalizer, a.content, buf);
    if (n != a.content) a.spelling = std::string(n);
  }
  bool pre_byte_level = false;
  for (const auto& s : spec.pre_tokenizer) {
    pre_byte_level |= s.kind == PreTokenizerStep::Kind::kByteLevel;
  }
  if (saw_byte_level || pre_byte_level) {
    if (spec.spelling == Spelling::kSentencePiece) {
      p.unsupported("the decoder mixes byte-level and SentencePiece spellings");
    }
    spec.spelling = Spelling::kByteLevel;
  } else if (spec.spelling != Spelling::kSentencePiece) {
    p.unsupported(
        "neither a ByteLevel nor a SentencePiece (▁, byte fallback) decoder: the "
        "token bytes cannot be known");
  }
  return spec;
}

}  // namespace nextok::vocab
