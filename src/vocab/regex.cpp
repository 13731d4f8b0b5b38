#define PCRE2_CODE_UNIT_WIDTH 8
#include "vocab/regex.hpp"

#include <pcre2.h>

#include <cstdio>

#include "nextok/error.hpp"
#include "vocab/unicode_compat.hpp"

namespace nextok::vocab {

namespace {

// Oniguruma's \s is the Unicode White_Space property; PCRE2's \s under UCP
// differs on U+0085 and a few others, so spell the set out.
constexpr std::string_view kSpaceSet =
    "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

// Oniguruma's \p{N} also holds the Unicode 15/16 numbers PCRE2 10.42 lacks.
std::string extra_numbers() {
  std::string out;
  char buf[48];
  for (const CodeRange& r : kNumbersNewerThanPcre2) {
    std::snprintf(buf, sizeof buf, "\\x{%X}-\\x{%X}", r.lo, r.hi);
    out += buf;
  }
  return out;
}

// One match-data block per thread and pattern size class.
struct MatchData {
  pcre2_match_data* md = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* ctx = nullptr;
  MatchData() {
    md = pcre2_match_data_create(4, nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
    ctx = pcre2_match_context_create(nullptr);
    pcre2_jit_stack_assign(ctx, nullptr, stack);
  }
  ~MatchData() {
    pcre2_match_context_free(ctx);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(md);
  }
};

MatchData& thread_match_data() {
  thread_local MatchData data;
  return data;
}

}  // namespace

struct Regex::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Impl() { pcre2_code_free(code); }
};

std::string Regex::translate(std::string_view p) {
  std::string out;
  out.reserve(p.size() * 2);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[i + 1];
      if (n == 's') {
        if (in_class) {
          out.append(kSpaceSet);
        } else {
          out.append("[").append(kSpaceSet).append("]");
        }
        ++i;
        continue;
      }
      if (n == 'p' && p.substr(i, 5) == "\\p{N}") {
        const std::string extra = extra_numbers();
        if (in_class) {
          out.append("\\p{N}").append(extra);
        } else {
          out.append("[\\p{N}").append(extra).append("]");
        }
        i += 4;
        continue;
      }
      if (n == 'S' && !in_class) {
        out.append("[^").append(kSpaceSet).append("]");
        ++i;
        continue;
      }
      out.push_back(c);
      out.push_back(n);
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out.push_back(c);
      // A leading ^ or ] is literal syntax, not the end of the class.
      if (i + 1 < p.size() && p[i + 1] == '^') out.push_back(p[++i]);
      if (i + 1 < p.size() && p[i + 1] == ']') out.push_back(p[++i]);
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out.push_back(c);
  }
  return out;
}

Regex::Regex(const std::string& pattern) : impl_(std::make_unique<Impl>()) {
  const std::string translated = translate(pattern);
  int err = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &offset, nullptr);
  if (impl_->code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error(ErrorCode::kUnsupported, "pre_tokenizer",
                "pre-tokenizer regex \"" + pattern + "\" cannot be compiled at offset " +
                    std::to_string(offset) + ": " + reinterpret_cast<const char*>(msg));
  }
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

bool Regex::find(std::string_view subject, size_t from, size_t& begin, size_t& end) const {
  MatchData& m = thread_match_data();
  const auto* s = reinterpret_cast<PCRE2_SPTR>(subject.data());
  const int rc =
      impl_->jit
          ? pcre2_jit_match(impl_->code, s, subject.size(), from, PCRE2_NO_UTF_CHECK, m.md, m.ctx)
          : pcre2_match(impl_->code, s, subject.size(), from, PCRE2_NO_UTF_CHECK, m.md, m.ctx);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw Error(ErrorCode::kInvalidArgument, "text",
                std::string("pre-tokenizer regex failed: ") + reinterpret_cast<const char*>(msg));
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(m.md);
  begin = ov[0];
  end = ov[1];
  return true;
}

}  // namespace nextok::vocab
