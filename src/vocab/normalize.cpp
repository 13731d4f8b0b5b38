#include "vocab/normalize.hpp"

#include <utf8proc.h>

#include <cstdlib>

#include "nextok/error.hpp"
#include "vocab/unicode_compat.hpp"
#include "vocab/utf8.hpp"

namespace nextok::vocab {

namespace {

bool is_ascii(std::string_view s) noexcept {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

std::string unicode_form(std::string_view s, NormalizerStep::Kind kind) {
  int options = UTF8PROC_STABLE;
  switch (kind) {
    case NormalizerStep::Kind::kNfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormalizerStep::Kind::kNfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormalizerStep::Kind::kNfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormalizerStep::Kind::kNfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
    default:
      break;
  }
  if (s.empty()) return {};
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                          static_cast<utf8proc_ssize_t>(s.size()), &out,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) {
    throw Error(ErrorCode::kInvalidArgument, "text",
                std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
  }
  std::string r(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return r;
}

// HF's normal forms treat kMarksWithoutClassInHf as plain starters: split
// there and normalize the pieces on either side separately.
std::string unicode_form_as_hf(std::string_view s, NormalizerStep::Kind kind) {
  std::string out;
  size_t piece = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    const uint32_t cp = utf8_next(s, i);
    if (cp < 0x7FD || !in_ranges(kMarksWithoutClassInHf, cp)) continue;
    out += unicode_form(s.substr(piece, at - piece), kind);
    out.append(s.substr(at, i - at));
    piece = i;
  }
  if (piece == 0) return unicode_form(s, kind);
  out += unicode_form(s.substr(piece), kind);
  return out;
}

}  // namespace

std::string_view normalize(const std::vector<NormalizerStep>& steps, std::string_view in,
                           std::string& buf) {
  std::string_view cur = in;
  std::string tmp;
  for (const auto& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::kNfc:
      case NormalizerStep::Kind::kNfd:
      case NormalizerStep::Kind::kNfkc:
      case NormalizerStep::Kind::kNfkd:
        // ASCII is invariant under every normal form.
        if (is_ascii(cur)) break;
        tmp = unicode_form_as_hf(cur, step.kind);
        buf.swap(tmp);
        cur = buf;
        break;
      case NormalizerStep::Kind::kReplace: {
        if (cur.find(step.pattern) == std::string_view::npos) break;
        tmp.clear();
        size_t i = 0;
        for (size_t j; (j = cur.find(step.pattern, i)) != std::string_view::npos;
             i = j + step.pattern.size()) {
          tmp.append(cur.substr(i, j - i)).append(step.content);
        }
        tmp.append(cur.substr(i));
        buf.swap(tmp);
        cur = buf;
        break;
      }
      case NormalizerStep::Kind::kPrepend:
        if (cur.empty()) break;
        tmp = step.content;
        tmp.append(cur);
        buf.swap(tmp);
        cur = buf;
        break;
    }
  }
  return cur;
}

}  // namespace nextok::vocab
