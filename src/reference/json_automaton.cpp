#include "reference/json_automaton.hpp"

namespace nextok::reference {

namespace {

enum Lex : uint8_t {
  kValue,         // a value must start
  kValueOrClose,  // after '[': a value or ']'
  kKeyOrClose,    // after '{': a key or '}'
  kKey,           // after ',' in an object: a key
  kColon,         // after a key
  kAfterValue,    // a value ended: ',' or a closer (or the end at the top)
  kStr,
  kStrEsc,
  kStrHex,     // aux = hex digits left, aux2 = surrogate flags
  kStrUtf8,    // aux = continuation bytes left, aux2 = range of the next one
  kStrLowEsc,  // after a high surrogate escape: '\\' must follow
  kStrLowU,    // then 'u', then a low surrogate
  kNumMinus,
  kNumZero,
  kNumInt,
  kNumDot,
  kNumFrac,
  kNumExp,
  kNumExpSign,
  kNumExpDigits,
  kLiteral,  // aux2 = which literal, aux = bytes matched
};

constexpr const char* kLiterals[3] = {"true", "false", "null"};
constexpr uint8_t kLiteralLen[3] = {4, 5, 4};

// The allowed range of the next UTF-8 continuation byte.
enum Cont : uint8_t { k80BF, kA0BF, k809F, k90BF, k808F };
constexpr uint8_t kContLo[5] = {0x80, 0xA0, 0x80, 0x90, 0x80};
constexpr uint8_t kContHi[5] = {0xBF, 0xBF, 0x9F, 0xBF, 0x8F};

// \uXXXX flags: surrogates are valid only as a high-low pair (what
// nlohmann and the engine accept; a lone one is not Unicode text).
constexpr uint8_t kFirstD = 1, kHigh = 2, kMustLow = 4;

bool is_ws(uint8_t b) {
  return b == ' ' || b == '\n' || b == '\r' || b == '\t';
}
bool is_digit(uint8_t b) {
  return b >= '0' && b <= '9';
}
bool is_hex(uint8_t b) {
  return is_digit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
}
bool top_is_object(const JsonAutomatonState& s) {
  return (s.objects >> (s.depth - 1)) & 1u;
}

}  // namespace

bool JsonAutomaton::whitespace(JsonAutomatonState& o, uint8_t b) const noexcept {
  if (!is_ws(b) || o.ws >= opt_.max_whitespace) return false;
  ++o.ws;
  return true;
}

bool JsonAutomaton::value_start(JsonAutomatonState& o, uint8_t b) const noexcept {
  if (o.depth == 0 && opt_.object_only && b != '{') return false;
  switch (b) {
    case '{':
    case '[':
      if (o.depth >= kMaxDepth) return false;
      if (b == '{') {
        o.objects |= uint64_t{1} << o.depth;
      } else {
        o.objects &= ~(uint64_t{1} << o.depth);
      }
      ++o.depth;
      o.lex = b == '{' ? kKeyOrClose : kValueOrClose;
      return true;
    case '"':
      o.lex = kStr;
      o.key = false;
      return true;
    case '-':
      o.lex = kNumMinus;
      return true;
    case '0':
      o.lex = kNumZero;
      return true;
    case 't':
    case 'f':
    case 'n':
      o.lex = kLiteral;
      o.aux2 = b == 't' ? 0 : b == 'f' ? 1 : 2;
      o.aux = 1;
      return true;
    default:
      if (b >= '1' && b <= '9') {
        o.lex = kNumInt;
        return true;
      }
      return false;
  }
}

bool JsonAutomaton::after_value(JsonAutomatonState& o, uint8_t b) const noexcept {
  o.lex = kAfterValue;
  if (is_ws(b)) return whitespace(o, b);
  o.ws = 0;
  if (o.depth == 0) return false;  // only whitespace after the top-level value
  const bool object = top_is_object(o);
  if (b == ',') {
    o.lex = object ? kKey : kValue;
    return true;
  }
  if (b == (object ? '}' : ']')) {
    --o.depth;
    o.lex = kAfterValue;
    return true;
  }
  return false;
}

bool JsonAutomaton::step(const JsonAutomatonState& s, uint8_t b,
                         JsonAutomatonState& o) const noexcept {
  o = s;
  switch (s.lex) {
    case kValue:
      if (is_ws(b)) return whitespace(o, b);
      o.ws = 0;
      return value_start(o, b);
    case kValueOrClose:
      if (is_ws(b)) return whitespace(o, b);
      o.ws = 0;
      if (b == ']') {
        --o.depth;
        o.lex = kAfterValue;
        return true;
      }
      return value_start(o, b);
    case kKeyOrClose:
    case kKey:
      if (is_ws(b)) return whitespace(o, b);
      o.ws = 0;
      if (b == '}' && s.lex == kKeyOrClose) {
        --o.depth;
        o.lex = kAfterValue;
        return true;
      }
      if (b != '"') return false;
      o.lex = kStr;
      o.key = true;
      return true;
    case kColon:
      if (is_ws(b)) return whitespace(o, b);
      o.ws = 0;
      if (b != ':') return false;
      o.lex = kValue;
      return true;
    case kAfterValue:
      return after_value(o, b);
    case kStr:
      if (b == '"') {
        o.lex = s.key ? kColon : kAfterValue;
        o.key = false;
        return true;
      }
      if (b == '\\') {
        o.lex = kStrEsc;
        return true;
      }
      if (b < 0x20) return false;
      if (b < 0x80) return true;
      o.lex = kStrUtf8;
      if (b >= 0xC2 && b <= 0xDF) {
        o.aux = 1, o.aux2 = k80BF;
      } else if (b == 0xE0) {
        o.aux = 2, o.aux2 = kA0BF;
      } else if (b == 0xED) {
        o.aux = 2, o.aux2 = k809F;
      } else if (b >= 0xE1 && b <= 0xEF) {
        o.aux = 2, o.aux2 = k80BF;
      } else if (b == 0xF0) {
        o.aux = 3, o.aux2 = k90BF;
      } else if (b >= 0xF1 && b <= 0xF3) {
        o.aux = 3, o.aux2 = k80BF;
      } else if (b == 0xF4) {
        o.aux = 3, o.aux2 = k808F;
      } else {
        return false;
      }
      return true;
    case kStrUtf8:
      if (b < kContLo[s.aux2] || b > kContHi[s.aux2]) return false;
      o.aux2 = k80BF;
      if (--o.aux == 0) o.lex = kStr;
      return true;
    case kStrEsc:
      switch (b) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          o.lex = kStr;
          return true;
        case 'u':
          o.lex = kStrHex;
          o.aux = 4;
          o.aux2 = 0;
          return true;
        default:
          return false;
      }
    case kStrHex: {
      if (!is_hex(b)) return false;
      const uint8_t lower = static_cast<uint8_t>(b | 0x20);
      if (s.aux == 4) {
        if (lower == 'd')
          o.aux2 |= kFirstD;
        else if (s.aux2 & kMustLow)
          return false;
      } else if (s.aux == 3 && (s.aux2 & kFirstD)) {
        const bool low = lower >= 'c' && lower <= 'f';
        if (low != ((s.aux2 & kMustLow) != 0)) return false;  // lone low, or high then not low
        if (!low && lower >= '8') o.aux2 |= kHigh;
      }
      if (--o.aux == 0) o.lex = (o.aux2 & kHigh) ? kStrLowEsc : kStr;
      return true;
    }
    case kStrLowEsc:
      if (b != '\\') return false;
      o.lex = kStrLowU;
      return true;
    case kStrLowU:
      if (b != 'u') return false;
      o.lex = kStrHex;
      o.aux = 4;
      o.aux2 = kMustLow;
      return true;
    case kNumMinus:
      if (b == '0') {
        o.lex = kNumZero;
        return true;
      }
      if (b >= '1' && b <= '9') {
        o.lex = kNumInt;
        return true;
      }
      return false;
    case kNumZero:
    case kNumInt:
      if (is_digit(b) && s.lex == kNumInt) return true;
      if (b == '.') {
        o.lex = kNumDot;
        return true;
      }
      if (b == 'e' || b == 'E') {
        o.lex = kNumExp;
        return true;
      }
      return after_value(o, b);
    case kNumDot:
      if (!is_digit(b)) return false;
      o.lex = kNumFrac;
      return true;
    case kNumFrac:
      if (is_digit(b)) return true;
      if (b == 'e' || b == 'E') {
        o.lex = kNumExp;
        return true;
      }
      return after_value(o, b);
    case kNumExp:
      if (b == '+' || b == '-') {
        o.lex = kNumExpSign;
        return true;
      }
      if (!is_digit(b)) return false;
      o.lex = kNumExpDigits;
      return true;
    case kNumExpSign:
      if (!is_digit(b)) return false;
      o.lex = kNumExpDigits;
      return true;
    case kNumExpDigits:
      if (is_digit(b)) return true;
      return after_value(o, b);
    case kLiteral:
      if (b != static_cast<uint8_t>(kLiterals[s.aux2][s.aux])) return false;
      if (++o.aux == kLiteralLen[s.aux2]) o.lex = kAfterValue;
      return true;
    default:
      return false;
  }
}

bool JsonAutomaton::complete(const JsonAutomatonState& s) const noexcept {
  if (s.depth != 0) return false;
  switch (s.lex) {
    case kAfterValue:
      return true;
    case kNumZero:
    case kNumInt:
    case kNumFrac:
    case kNumExpDigits:
      return !opt_.object_only;
    default:
      return false;
  }
}

bool JsonAutomaton::can_continue(const JsonAutomatonState& s) const noexcept {
  // After the top-level value only whitespace may follow, up to the bound.
  if (s.depth == 0 && s.lex == kAfterValue) return s.ws < opt_.max_whitespace;
  return true;
}

}  // namespace nextok::reference
