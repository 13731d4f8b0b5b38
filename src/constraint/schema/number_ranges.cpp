#include "constraint/schema/number_ranges.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "nextok/error.hpp"

namespace nextok::constraint {

namespace {

// Bounds are kept exact up to these sizes and rounded inward past them, so a
// bound such as 1e100000 cannot produce a gigantic pattern.
constexpr size_t kMaxIntDigits = 400;
constexpr size_t kMaxFracDigits = 400;

// A pattern, or nullopt for the empty language.
using Re = std::optional<std::string>;

bool all_of(std::string_view s, char c) {
  return std::all_of(s.begin(), s.end(), [c](char x) { return x == c; });
}

// "(?:x)" spanning all of s: its content can join an enclosing alternation.
bool one_group(std::string_view s) {
  if (s.size() < 4 || s.substr(0, 3) != "(?:" || s.back() != ')') return false;
  int depth = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\\') {
      ++k;
    } else if (s[k] == '(') {
      ++depth;
    } else if (s[k] == ')' && --depth == 0 && k + 1 < s.size()) {
      return false;
    }
  }
  return true;
}

std::string grouped(const std::string& r) {
  return one_group(r) ? r : "(?:" + r + ")";
}

// Alternation of the non-empty languages; grouped so it can be concatenated.
Re alt(const std::vector<Re>& parts) {
  std::vector<std::string> live;
  for (const Re& p : parts) {
    if (p) live.push_back(*p);
  }
  if (live.size() <= 1) return live.empty() ? Re() : Re(live[0]);
  for (std::string& p : live) {
    if (one_group(p)) p = p.substr(3, p.size() - 4);
  }
  std::string out = "(?:" + live[0];
  for (size_t k = 1; k < live.size(); ++k) out += "|" + live[k];
  return out + ")";
}

Re cat(const Re& a, const Re& b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

std::string digit_class(char lo, char hi) {
  if (lo == hi) return std::string(1, lo);
  if (lo == '0' && hi == '9') return "\\d";
  if (hi == lo + 1) return std::string("[") + lo + hi + "]";
  return std::string("[") + lo + "-" + hi + "]";
}

// \d repeated min..max times (max < 0: unbounded).
std::string digits(size_t min, long max) {
  if (max >= 0 && static_cast<size_t>(max) == min) {
    if (min == 0) return "";
    return min == 1 ? "\\d" : "\\d{" + std::to_string(min) + "}";
  }
  if (max < 0) return min == 0 ? "\\d*" : min == 1 ? "\\d+" : "\\d{" + std::to_string(min) + ",}";
  if (min == 0 && max == 1) return "\\d?";
  return "\\d{" + std::to_string(min) + "," + std::to_string(max) + "}";
}
std::string digits(size_t n) {
  return digits(n, static_cast<long>(n));
}

// --- Integer digit strings --------------------------------------------------

// Compares digit strings without leading zeros by value.
int compare_uint(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : a == b ? 0 : 1;
}

std::string increment(std::string s) {
  size_t k = s.size();
  while (k > 0 && s[k - 1] == '9') s[--k] = '0';
  if (k == 0) return "1" + s;
  ++s[k - 1];
  return s;
}

// s > 0.
std::string decrement(std::string s) {
  size_t k = s.size();
  while (s[k - 1] == '0') s[--k] = '9';
  --s[k - 1];
  if (s.size() > 1 && s[0] == '0') s.erase(0, 1);
  return s;
}

// Digit strings of a's length between a and b (a <= b, same length).
std::string same_length(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  std::string prefix(a.substr(0, i));
  if (i == a.size()) return prefix;
  const size_t m = a.size() - i - 1;
  const std::string_view ra = a.substr(i + 1), rb = b.substr(i + 1);
  // A side whose rest spans every string folds into the middle class.
  const bool a_full = all_of(ra, '0'), b_full = all_of(rb, '9');
  const char mid_lo = a_full ? a[i] : static_cast<char>(a[i] + 1);
  const char mid_hi = b_full ? b[i] : static_cast<char>(b[i] - 1);
  std::vector<Re> parts;
  if (!a_full) parts.push_back(a[i] + same_length(ra, std::string(m, '9')));
  if (mid_lo <= mid_hi) parts.push_back(digit_class(mid_lo, mid_hi) + digits(m));
  if (!b_full) parts.push_back(b[i] + same_length(std::string(m, '0'), rb));
  return prefix + *alt(parts);
}

bool power_of_ten(std::string_view s) {
  return s[0] == '1' && all_of(s.substr(1), '0');
}

// Decimal texts without leading zeros of the integers a..b (b: unbounded).
Re uint_range(const std::string& a, const std::optional<std::string>& b) {
  if (b && compare_uint(a, *b) > 0) return std::nullopt;
  if (b && a.size() == b->size()) return same_length(a, *b);
  const size_t la = a.size();
  // Lengths filled completely: [1-9] then first_full-1 .. last_full-1 digits.
  size_t first_full = power_of_ten(a) ? la : la + 1;
  long last_full = -1;
  std::vector<Re> parts;
  if (first_full > la) parts.push_back(same_length(a, std::string(la, '9')));
  Re upper;
  if (b) {
    const bool b_full = all_of(*b, '9');
    last_full = static_cast<long>(b_full ? b->size() : b->size() - 1);
    if (!b_full) upper = same_length("1" + std::string(b->size() - 1, '0'), *b);
  }
  if (last_full < 0 || static_cast<long>(first_full) <= last_full) {
    parts.push_back("[1-9]" + digits(first_full - 1, last_full < 0 ? -1 : last_full - 1));
  }
  parts.push_back(upper);
  return alt(parts);
}

// --- Decimal magnitudes -----------------------------------------------------

// A non-negative decimal bound: i without leading zeros ("0" for none), f
// without trailing zeros. huge: the integer part was longer than
// kMaxIntDigits; tail: nonzero digits past kMaxFracDigits were dropped.
struct Mag {
  std::string i = "0";
  std::string f;
  bool inclusive = true;
  bool huge = false;
  bool tail = false;
};

bool is_zero(const Mag& m) {
  return m.i == "0" && m.f.empty() && !m.tail && !m.huge;
}

int compare(const Mag& a, const Mag& b) {
  const int c = compare_uint(a.i, b.i);
  if (c != 0) return c;
  // Without trailing zeros, string order is the order of the fractions.
  return a.f < b.f ? -1 : a.f == b.f ? 0 : 1;
}

std::string strip_trailing_zeros(std::string f) {
  while (!f.empty() && f.back() == '0') f.pop_back();
  return f;
}

// Past kExactIntDigits integer digits, a bound keeps kKeptSignificant
// significant digits: every significant digit of a long bound costs a chain
// of DFA states as long as the number, and such magnitudes are never tight.
constexpr size_t kExactIntDigits = 40;
constexpr size_t kKeptSignificant = 4;

// Rounds a lower bound up to the kept precision; false when it exceeds every
// value this generator can spell (the range is then treated as empty).
// A rounded bound lo' > lo is inclusive: v >= lo' implies v > lo.
bool round_lower(Mag& m) {
  if (m.huge) return false;
  if (m.tail) {
    const std::string f = m.f + std::string(kMaxFracDigits - m.f.size(), '0');
    const std::string all = increment(m.i + f);
    m.i = all.substr(0, all.size() - kMaxFracDigits);
    m.f = strip_trailing_zeros(all.substr(all.size() - kMaxFracDigits));
    m.tail = false;
    m.inclusive = true;
  }
  if (m.i.size() > kExactIntDigits &&
      (!all_of(std::string_view(m.i).substr(kKeptSignificant), '0') || !m.f.empty())) {
    const size_t zeros = m.i.size() - kKeptSignificant;
    m.i = increment(m.i.substr(0, kKeptSignificant)) + std::string(zeros, '0');
    m.f.clear();
    m.inclusive = true;
  }
  return true;
}

// Rounds an upper bound down: truncation, or the largest kept integer.
void round_upper(Mag& m) {
  if (m.huge) m = Mag{std::string(kMaxIntDigits, '9'), "", true, false, false};
  if (m.tail) m.tail = false, m.inclusive = true;
  if (m.i.size() > kExactIntDigits &&
      (!all_of(std::string_view(m.i).substr(kKeptSignificant), '0') || !m.f.empty())) {
    const size_t zeros = m.i.size() - kKeptSignificant;
    m.i = m.i.substr(0, kKeptSignificant) + std::string(zeros, '0');
    m.f.clear();
    m.inclusive = true;
  }
}

// Fractions (the digit strings after '.') allowed by the bounds still tight
// at place j: eps says whether the fraction may end here, plus is the
// pattern of the non-empty continuations.
struct Frac {
  bool eps;
  Re plus;
};

Re optional_of(const Frac& fr) {
  if (fr.plus && fr.eps && *fr.plus == "\\d+") return std::string("\\d*");
  if (fr.plus && fr.eps) return "(?:" + *fr.plus + ")?";
  if (fr.plus) return fr.plus;
  if (fr.eps) return std::string();
  return std::nullopt;
}

Frac fraction(const Mag* lo, const Mag* hi, size_t j) {
  const bool lo_end = lo && j >= lo->f.size();
  const bool hi_end = hi && j >= hi->f.size();
  if (!lo && !hi) return {true, "\\d+"};
  if (lo_end && !hi) {
    return lo->inclusive ? Frac{true, "\\d+"} : Frac{false, "0*[1-9]\\d*"};
  }
  if (hi_end) {
    // Only zeros keep the value at hi; that needs lo to end here too.
    const bool ok = hi->inclusive && (!lo || (lo_end && lo->inclusive));
    return ok ? Frac{true, "0+"} : Frac{false, std::nullopt};
  }
  // Ending here leaves the value at the prefix: below lo unless lo ended.
  const bool eps = !lo || (lo_end && lo->inclusive);
  const char a = lo ? (lo_end ? '0' : lo->f[j]) : '0';
  const char b = hi ? hi->f[j] : '9';
  std::vector<Re> parts;
  if (lo && hi && a == b) {
    parts.push_back(cat(std::string(1, a), optional_of(fraction(lo, hi, j + 1))));
  } else {
    if (lo) parts.push_back(cat(std::string(1, a), optional_of(fraction(lo, nullptr, j + 1))));
    const char mid_lo = lo ? static_cast<char>(a + 1) : a;
    const char mid_hi = hi ? static_cast<char>(b - 1) : b;
    if (mid_lo <= mid_hi) parts.push_back(digit_class(mid_lo, mid_hi) + "\\d*");
    if (hi) parts.push_back(cat(std::string(1, b), optional_of(fraction(nullptr, hi, j + 1))));
  }
  return {eps, alt(parts)};
}

// The optional "." fraction of a number whose integer part is fixed.
Re fraction_suffix(const Frac& fr) {
  if (fr.plus && fr.eps) return "(?:\\." + *fr.plus + ")?";
  if (fr.plus) return "\\." + *fr.plus;
  if (fr.eps) return std::string();
  return std::nullopt;
}

bool empty_interval(const Mag& lo, const std::optional<Mag>& hi) {
  if (!hi) return false;
  const int c = compare(lo, *hi);
  return c > 0 || (c == 0 && (!lo.inclusive || !hi->inclusive));
}

// Unsigned number texts (no exponent) with lo ⊲ v ⊲ hi.
Re decimal_magnitudes(const Mag& lo, const std::optional<Mag>& hi) {
  if (empty_interval(lo, hi)) return std::nullopt;
  if (hi && lo.i == hi->i) return cat(lo.i, fraction_suffix(fraction(&lo, &*hi, 0)));
  std::vector<Re> parts;
  parts.push_back(cat(lo.i, fraction_suffix(fraction(&lo, nullptr, 0))));
  std::optional<std::string> mid_hi;
  if (hi) mid_hi = decrement(hi->i);
  parts.push_back(cat(uint_range(increment(lo.i), mid_hi), "(?:\\.\\d+)?"));
  if (hi) parts.push_back(cat(hi->i, fraction_suffix(fraction(nullptr, &*hi, 0))));
  return alt(parts);
}

// Unsigned integer texts with lo ⊲ n ⊲ hi, through ceil(lo) .. floor(hi).
Re integer_magnitudes(const Mag& lo, const std::optional<Mag>& hi) {
  const std::string a = lo.f.empty() && lo.inclusive ? lo.i : increment(lo.i);
  std::optional<std::string> b;
  if (hi) {
    if (!hi->f.empty() || hi->inclusive) {
      b = hi->i;
    } else if (hi->i == "0") {
      return std::nullopt;
    } else {
      b = decrement(hi->i);
    }
  }
  return uint_range(a, b);
}

// --- Signed ranges ----------------------------------------------------------

struct Signed {
  bool neg = false;
  Mag m;
  // Exact scientific form of the magnitude: significant digits (no leading
  // or trailing zeros; empty for 0) times 10^k, with one digit before the point.
  std::string sig;
  int64_t k = 0;
};

enum class Mode { kInteger, kIntegerValued, kDecimal };

[[noreturn]] void bad_bound(std::string_view text) {
  throw Error(ErrorCode::kInvalidArgument, "bound",
              "range bound \"" + std::string(text) + "\" is not a JSON number");
}

// Parses a JSON number text exactly (exponents saturate; see kMax*Digits).
Signed parse_bound(std::string_view t, bool exclusive) {
  size_t k = 0;
  Signed s;
  s.m.inclusive = !exclusive;
  if (k < t.size() && t[k] == '-') s.neg = true, ++k;
  const size_t int_start = k;
  while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k;
  const std::string_view int_digits = t.substr(int_start, k - int_start);
  if (int_digits.empty() || (int_digits.size() > 1 && int_digits[0] == '0')) bad_bound(t);
  std::string_view frac_digits;
  if (k < t.size() && t[k] == '.') {
    const size_t fs = ++k;
    while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k;
    frac_digits = t.substr(fs, k - fs);
    if (frac_digits.empty()) bad_bound(t);
  }
  int64_t exp = 0;
  if (k < t.size() && (t[k] == 'e' || t[k] == 'E')) {
    ++k;
    bool exp_neg = false;
    if (k < t.size() && (t[k] == '+' || t[k] == '-')) exp_neg = t[k++] == '-';
    const size_t es = k;
    for (; k < t.size() && t[k] >= '0' && t[k] <= '9'; ++k) {
      exp = std::min<int64_t>(exp * 10 + (t[k] - '0'), 1'000'000'000);
    }
    if (k == es) bad_bound(t);
    if (exp_neg) exp = -exp;
  }
  if (k != t.size()) bad_bound(t);
  // value = D × 10^scale with D the digits without leading or trailing zeros.
  std::string d = std::string(int_digits) + std::string(frac_digits);
  int64_t scale = exp - static_cast<int64_t>(frac_digits.size());
  d.erase(0, std::min(d.find_first_not_of('0'), d.size()));
  while (!d.empty() && d.back() == '0') d.pop_back(), ++scale;
  if (d.empty()) {
    s.neg = false;  // -0 is 0
    return s;
  }
  const int64_t len = static_cast<int64_t>(d.size());
  s.sig = d;
  s.k = len + scale - 1;
  if (len + scale > static_cast<int64_t>(kMaxIntDigits)) {
    s.m.huge = true;
  } else if (scale >= 0) {
    s.m.i = d + std::string(static_cast<size_t>(scale), '0');
  } else if (-scale <= len) {
    s.m.i = d.substr(0, static_cast<size_t>(len + scale));
    s.m.f = d.substr(static_cast<size_t>(len + scale));
    if (s.m.i.empty()) s.m.i = "0";
  } else {
    const int64_t zeros = -scale - len;  // zeros between the point and d
    if (zeros >= static_cast<int64_t>(kMaxFracDigits)) {
      s.m.tail = true;
    } else {
      s.m.f = std::string(static_cast<size_t>(zeros), '0') + d;
    }
  }
  if (s.m.f.size() > kMaxFracDigits) {
    s.m.f = strip_trailing_zeros(s.m.f.substr(0, kMaxFracDigits));
    s.m.tail = true;
  }
  return s;
}

// Exponent texts (sign optional, leading zeros allowed, as RFC 8259 has
// them) of the integers a..b; nullopt ends are unbounded.
Re exponent_range(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (a && b && *a > *b) return std::nullopt;
  std::vector<Re> parts;
  if ((!a || *a <= 0) && (!b || *b >= 0)) parts.push_back(std::string("[+-]?0+"));
  const auto text = [](std::optional<int64_t> v) {
    return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
  };
  if (!b || *b >= 1) {
    parts.push_back(cat(std::string("\\+?0*"),
                        uint_range(std::to_string(a ? std::max<int64_t>(*a, 1) : 1), text(b))));
  }
  if (!a || *a <= -1) {
    const std::optional<int64_t> most = a ? std::optional<int64_t>(-*a) : std::nullopt;
    parts.push_back(cat(std::string("-0*"),
                        uint_range(std::to_string(b ? std::max<int64_t>(-*b, 1) : 1), text(most))));
  }
  return alt(parts);
}

// Normalized scientific texts d(.ddd)[eE]x (d in 1-9) of the positive
// values with lo ⊲ v ⊲ hi: such values order by exponent first and then by
// mantissa, so the language stays regular (spellings such as 12e3 or
// 0.5e1 would need counting and are left out: a sound subset that holds
// what serializers write, e.g. Python's 1e-05 and JavaScript's 1.5e+300).
Re scientific_magnitudes(const std::optional<Signed>& lo, const std::optional<Signed>& hi) {
  if (hi && (hi->neg || hi->sig.empty())) return std::nullopt;
  const Signed* l = lo && !lo->neg && !lo->sig.empty() ? &*lo : nullptr;
  const Signed* h = hi ? &*hi : nullptr;
  if (l && h && l->k > h->k) return std::nullopt;
  const auto mantissa = [](const Signed& b) {
    Mag m;
    m.i = b.sig.substr(0, 1);
    m.f = b.sig.substr(1);
    m.inclusive = b.m.inclusive;
    return m;
  };
  Mag one;
  one.i = "1";
  Mag ten;
  ten.i = "10";
  ten.inclusive = false;
  std::vector<Re> parts;
  const auto piece = [&](const Mag& a, const Mag& b, std::optional<int64_t> e_lo,
                         std::optional<int64_t> e_hi) {
    parts.push_back(
        cat(cat(decimal_magnitudes(a, b), std::string("[eE]")), exponent_range(e_lo, e_hi)));
  };
  if (l && h && l->k == h->k) {
    piece(mantissa(*l), mantissa(*h), l->k, l->k);
  } else {
    if (l) piece(mantissa(*l), ten, l->k, l->k);
    if (h) piece(one, mantissa(*h), h->k, h->k);
    const std::optional<int64_t> e_lo = l ? std::optional<int64_t>(l->k + 1) : std::nullopt;
    const std::optional<int64_t> e_hi = h ? std::optional<int64_t>(h->k - 1) : std::nullopt;
    piece(one, ten, e_lo, e_hi);
  }
  return alt(parts);
}

// The non-negative side: texts t (no sign) with lo ⊲ t ⊲ hi and t >= 0 (t > 0
// without zero). The negative side is the same question with the bounds
// negated and swapped.
Re non_negative_part(const std::optional<Signed>& lo, const std::optional<Signed>& hi, Mode mode,
                     bool zero) {
  Mag lower;  // 0
  lower.inclusive = zero;
  if (lo && !lo->neg) lower = lo->m;
  if (!zero && is_zero(lower)) lower.inclusive = false;
  std::optional<Mag> upper;
  if (hi) {
    if (hi->neg) return std::nullopt;
    upper = hi->m;
    round_upper(*upper);
  }
  if (!round_lower(lower)) return std::nullopt;
  if (mode == Mode::kDecimal)
    return alt({decimal_magnitudes(lower, upper), scientific_magnitudes(lo, hi)});
  const Re ints = integer_magnitudes(lower, upper);
  return mode == Mode::kInteger ? ints : cat(ints, "(?:\\.0+)?");
}

std::optional<Signed> negated(const std::optional<Signed>& b) {
  if (!b) return std::nullopt;
  Signed n = *b;
  n.neg = !n.neg && !is_zero(n.m);
  return n;
}

// "-0" is never produced: it is a valid spelling of 0, but allowing it would
// let '-' start a number in a range without negative values.
Re signed_range(const std::optional<Signed>& lo, const std::optional<Signed>& hi, Mode mode) {
  const Re neg = non_negative_part(negated(hi), negated(lo), mode, false);
  const Re pos_nz = non_negative_part(lo, hi, mode, false);
  if (neg && pos_nz && *neg == *pos_nz) {
    // Symmetric: one pattern for both signs, plus zero when it is in range.
    const Re pos = non_negative_part(lo, hi, mode, true);
    const Re zero = mode == Mode::kInteger ? "0" : "0(?:\\.0+)?";
    return alt({*pos != *pos_nz ? zero : std::nullopt, "-?" + grouped(*neg)});
  }
  return alt({non_negative_part(lo, hi, mode, true), neg ? Re("-" + grouped(*neg)) : Re()});
}

std::optional<Signed> bound_of(const Bound& b) {
  if (!b.value) return std::nullopt;
  return parse_bound(*b.value, b.exclusive);
}

}  // namespace

std::optional<std::string> integer_range_regex(std::optional<int64_t> lo,
                                               std::optional<int64_t> hi) {
  std::optional<Signed> l, h;
  if (lo) l = parse_bound(std::to_string(*lo), false);
  if (hi) h = parse_bound(std::to_string(*hi), false);
  return signed_range(l, h, Mode::kInteger);
}

std::optional<std::string> number_range_regex(const Bound& lo, const Bound& hi, bool integer_only) {
  return signed_range(bound_of(lo), bound_of(hi),
                      integer_only ? Mode::kIntegerValued : Mode::kDecimal);
}

}  // namespace nextok::constraint
