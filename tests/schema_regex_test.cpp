// The JSON Schema regex generators: number ranges against an exact decimal
// oracle on enumerated and random texts (fixed and random bounds), and the
// format patterns against lists of valid and invalid values, a state budget,
// and random strings walked out of their DFAs checked by independent rules.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/schema/formats.hpp"
#include "constraint/schema/number_ranges.hpp"
#include "constraint/schema/schema_types.hpp"
#include "nextok/error.hpp"

namespace {

using nextok::constraint::Bound;
using nextok::constraint::Dfa;
using nextok::constraint::format_regex;
using nextok::constraint::integer_range_regex;
using nextok::constraint::number_range_regex;
__extension__ typedef __int128 i128;

// --- An exact decimal oracle -------------------------------------------------

constexpr size_t kWidth = 48;  // digits kept on each side of the point

// A JSON number as sign + fixed-point digits (kWidth integer, kWidth fraction).
struct Fixed {
  bool neg = false;
  std::string digits;
  bool zero() const { return digits.find_first_not_of('0') == std::string::npos; }
};

// Parses RFC 8259 number text; nullopt for anything else.
std::optional<Fixed> parse_json_number(const std::string& t, bool* has_exp = nullptr) {
  size_t k = 0;
  Fixed f;
  if (k < t.size() && t[k] == '-') f.neg = true, ++k;
  const size_t is = k;
  while (k < t.size() && isdigit(static_cast<unsigned char>(t[k]))) ++k;
  std::string ip = t.substr(is, k - is), fp;
  if (ip.empty() || (ip.size() > 1 && ip[0] == '0')) return std::nullopt;
  if (k < t.size() && t[k] == '.') {
    const size_t fs = ++k;
    while (k < t.size() && isdigit(static_cast<unsigned char>(t[k]))) ++k;
    fp = t.substr(fs, k - fs);
    if (fp.empty()) return std::nullopt;
  }
  long exp = 0;
  if (has_exp) *has_exp = false;
  if (k < t.size() && (t[k] == 'e' || t[k] == 'E')) {
    if (has_exp) *has_exp = true;
    ++k;
    bool en = false;
    if (k < t.size() && (t[k] == '+' || t[k] == '-')) en = t[k++] == '-';
    const size_t es = k;
    while (k < t.size() && isdigit(static_cast<unsigned char>(t[k])))
      exp = exp * 10 + (t[k++] - '0');
    if (k == es || exp > 40) return std::nullopt;
    if (en) exp = -exp;
  }
  if (k != t.size() || ip.size() + fp.size() > 40) return std::nullopt;
  // Shift the point by exp within a zero-padded field.
  const std::string all = std::string(2 * kWidth, '0') + ip + fp + std::string(2 * kWidth, '0');
  const long point = static_cast<long>(2 * kWidth + ip.size()) + exp;
  f.digits = all.substr(static_cast<size_t>(point) - kWidth, 2 * kWidth);
  return f;
}

int compare(const Fixed& a, const Fixed& b) {
  if (a.zero() && b.zero()) return 0;
  const bool an = a.neg && !a.zero(), bn = b.neg && !b.zero();
  if (an != bn) return an ? -1 : 1;
  const int c = a.digits.compare(b.digits);
  const int s = c < 0 ? -1 : c > 0 ? 1 : 0;
  return an ? -s : s;
}

// A range's bounds, parsed once.
struct Range {
  Bound lo, hi;
  std::optional<Fixed> lo_v, hi_v;
  Range(const Bound& l, const Bound& h) : lo(l), hi(h) {
    if (lo.value) lo_v = parse_json_number(*lo.value);
    if (hi.value) hi_v = parse_json_number(*hi.value);
  }
};

// One nonzero digit before the point, then an exponent: 1e-05, -2.5E+3.
bool normalized_scientific(const std::string& t) {
  const size_t k = t[0] == '-' ? 1 : 0;
  return t.size() > k + 1 && t[k] >= '1' && t[k] <= '9' &&
         (t[k + 1] == '.' || t[k + 1] == 'e' || t[k + 1] == 'E');
}

// What number_range_regex must match: texts in range, plain decimal or
// (not integer_only) normalized scientific; no "-0".
bool expected(const std::string& text, const Range& r, bool integer_only) {
  bool has_exp = false;
  const auto v = parse_json_number(text, &has_exp);
  if (!v || (has_exp && (integer_only || !normalized_scientific(text)))) return false;
  if (v->neg && v->zero()) return false;
  if (integer_only && v->digits.find_first_not_of('0', kWidth) != std::string::npos) return false;
  if (r.lo_v) {
    const int c = compare(*v, *r.lo_v);
    if (c < 0 || (c == 0 && r.lo.exclusive)) return false;
  }
  if (r.hi_v) {
    const int c = compare(*v, *r.hi_v);
    if (c > 0 || (c == 0 && r.hi.exclusive)) return false;
  }
  return true;
}

std::string to_string(i128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  std::string s;
  while (v != 0) {
    const int d = static_cast<int>(v % 10);
    s.insert(s.begin(), static_cast<char>('0' + (d < 0 ? -d : d)));
    v /= 10;
  }
  return neg ? "-" + s : s;
}

// The integer part of a (small) JSON number, truncated.
i128 integer_part(const std::string& t) {
  const Fixed f = *parse_json_number(t);
  i128 v = 0;
  for (size_t k = 0; k < kWidth; ++k) v = v * 10 + (f.digits[k] - '0');
  return f.neg ? -v : v;
}

// Texts around the bounds and zero: integers in windows, with fractions of
// several kinds, the bounds' own digits perturbed, random decimals, and
// strings that are not plain JSON numbers at all.
std::vector<std::string> candidates(const Bound& lo, const Bound& hi, std::mt19937& rng) {
  std::vector<i128> centers = {0};
  std::vector<std::string> exact;  // the bounds written without exponent
  for (const Bound* b : {&lo, &hi}) {
    if (!b->value) continue;
    centers.push_back(integer_part(*b->value));
    const Fixed f = *parse_json_number(*b->value);
    const size_t last = f.digits.find_last_not_of('0');
    const std::string frac = last == std::string::npos || last < kWidth
                                 ? ""
                                 : f.digits.substr(kWidth, last + 1 - kWidth);
    exact.push_back(to_string(integer_part(*b->value)) + (frac.empty() ? "" : "." + frac));
    if (f.neg && integer_part(*b->value) == 0 && !f.zero()) exact.back() = "-" + exact.back();
  }
  std::vector<std::string> out = {"-0",      "-0.0",  "0.0",    "0.00",   "-0.000", "01",    "-01",
                                  "00",      "1.",    ".5",     "+1",     "1e2",    "1E2",   "-",
                                  "",        "1.5e1", " 1",     "--1",    "0x1",    "1.0.0", "0e0",
                                  "-0.5e-1", "1e+2",  "1e-02",  "9.99e0", "1.0e1",  "-1e-0", "12e3",
                                  "1e",      "1e+",   "-9.5E-1"};
  // Scientific spellings near each bound: its digits perturbed, exponent ±1.
  for (const Bound* b : {&lo, &hi}) {
    if (!b->value) continue;
    const Fixed f = *parse_json_number(*b->value);
    const size_t first = f.digits.find_first_not_of('0');
    if (first == std::string::npos) continue;
    const size_t last = f.digits.find_last_not_of('0');
    const std::string sig = f.digits.substr(first, last + 1 - first);
    const long k = static_cast<long>(kWidth) - 1 - static_cast<long>(first);
    for (long e = k - 1; e <= k + 1; ++e) {
      for (const std::string& m : {sig, sig + "1", sig + "0",
                                   sig.size() > 1 ? sig.substr(0, sig.size() - 1) : sig + "9"}) {
        const std::string mant = m.size() > 1 ? m.substr(0, 1) + "." + m.substr(1) : m;
        for (const char* sign : {"", "-"}) {
          out.push_back(sign + mant + "e" + std::to_string(e));
          out.push_back(sign + mant + (e < 0 ? "E-0" : "E+0") + std::to_string(e < 0 ? -e : e));
        }
      }
    }
  }
  const std::vector<std::string> fracs = {"",     ".0",    ".00", ".5",  ".05", ".9",
                                          ".999", ".0001", ".1",  ".49", ".50", ".51"};
  for (i128 c : centers) {
    for (i128 v = c - 22; v <= c + 22; ++v) {
      for (const std::string& fr : fracs) {
        out.push_back(to_string(v) + fr);
        if (v == 0) out.push_back("-0" + fr);
      }
    }
  }
  for (const std::string& e : exact) {
    const bool has_point = e.find('.') != std::string::npos;
    for (const char* tail : {"0", "1", "9", "00001", "0000", "99999"}) {
      out.push_back(e + (has_point ? "" : ".") + tail);
    }
    out.push_back(e);
    if (has_point) {
      std::string shorter = e.substr(0, e.size() - 1);
      if (shorter.back() != '.') out.push_back(shorter);
      for (char d = '0'; d <= '9'; ++d) out.push_back(shorter + d + "5");
    }
  }
  for (int k = 0; k < 400; ++k) {
    const i128 c = centers[rng() % centers.size()] + static_cast<int>(rng() % 7) - 3;
    std::string t = to_string(c);
    if (c == 0 && rng() % 3 == 0) t = "-0";
    if (rng() % 4 != 0) {
      t += ".";
      if (!exact.empty() && rng() % 2 == 0) {
        const std::string& e = exact[rng() % exact.size()];
        const size_t dot = e.find('.');
        if (dot != std::string::npos) t += e.substr(dot + 1, rng() % (e.size() - dot));
      }
      const size_t n = 1 + rng() % 8;
      for (size_t i = 0; i < n; ++i) t += static_cast<char>('0' + rng() % 10);
    }
    out.push_back(t);
  }
  return out;
}

void check_range(const Bound& lo, const Bound& hi, bool integer_only, std::mt19937& rng) {
  const Range range(lo, hi);
  const auto re = number_range_regex(lo, hi, integer_only);
  const std::string what = "[" + lo.value.value_or("-inf") + (lo.exclusive ? " excl" : "") + ", " +
                           hi.value.value_or("inf") + (hi.exclusive ? " excl" : "") +
                           (integer_only ? "] integer" : "]");
  if (!re) {
    for (const std::string& t : candidates(lo, hi, rng)) {
      ASSERT_FALSE(expected(t, range, integer_only)) << what << " is empty but holds " << t;
    }
    return;
  }
  const Dfa dfa = Dfa::compile(*re);
  for (const std::string& t : candidates(lo, hi, rng)) {
    ASSERT_EQ(dfa.matches(t), expected(t, range, integer_only))
        << what << " text \"" << t << "\" pattern " << *re;
  }
}

Bound inc(const char* v) {
  return Bound{std::string(v), false};
}
Bound exc(const char* v) {
  return Bound{std::string(v), true};
}
const Bound kNone{};

TEST(SchemaRegexNumbers, FixedRangesEqualExactDecimalOracle) {
  std::mt19937 rng(11);
  const std::vector<std::pair<Bound, Bound>> ranges = {
      {inc("0"), inc("100")},
      {inc("-90"), inc("90")},
      {inc("1"), inc("65535")},
      {inc("0"), inc("1")},
      {inc("-180.0"), inc("180.0")},
      {exc("0"), kNone},
      {kNone, exc("0")},
      {inc("0.5"), kNone},
      {exc("-1.5"), exc("2.25")},
      {inc("1e3"), inc("1.5e3")},
      {inc("0.001"), inc("0.01")},
      {exc("-0.001"), inc("-0")},
      {inc("-3.75"), inc("-3.7")},
      {inc("2.5"), inc("2.5")},
      {exc("2.5"), inc("2.5")},
      {inc("7"), inc("3")},
      {kNone, kNone},
      {inc("-5"), kNone},
      {kNone, inc("-0.25")},
      {inc("0.099"), exc("0.1")},
      {inc("9.99"), inc("10.01")},
      {inc("99"), inc("1001")},
      {exc("1E-2"), exc("12E-1")},
      {inc("-1.5"), inc("1.5")},
      {inc("1234.5678"), kNone},
      {exc("-0.0"), exc("0.0")},
      {inc("-10"), exc("-9.5")},
  };
  for (const auto& [lo, hi] : ranges) {
    for (bool integer_only : {false, true}) check_range(lo, hi, integer_only, rng);
  }
}

// A random JSON number text with a few digits, sometimes with an exponent.
std::string random_bound(std::mt19937& rng) {
  std::string t = rng() % 3 == 0 ? "-" : "";
  const unsigned shape = rng() % 4;
  t += std::to_string(shape == 0 ? 0 : shape == 1 ? rng() % 10 : rng() % 2000);
  if (rng() % 2 == 0) {
    t += ".";
    const size_t n = 1 + rng() % 4;
    for (size_t i = 0; i < n; ++i) t += static_cast<char>('0' + rng() % 10);
  }
  if (rng() % 6 == 0) t += (rng() % 2 ? "e-" : "e") + std::to_string(rng() % 3);
  if (t == "-0" && rng() % 2 == 0) t = "0";
  return t;
}

TEST(SchemaRegexNumbers, RandomRangesEqualExactDecimalOracle) {
  std::mt19937 rng(2024);
  for (int k = 0; k < 400; ++k) {
    Bound lo, hi;
    if (rng() % 8 != 0) lo = Bound{random_bound(rng), rng() % 2 == 0};
    if (rng() % 8 != 0) hi = Bound{random_bound(rng), rng() % 2 == 0};
    // Mostly ordered bounds, so most ranges are non-empty.
    if (lo.value && hi.value && rng() % 5 != 0 &&
        compare(*parse_json_number(*lo.value), *parse_json_number(*hi.value)) > 0) {
      std::swap(lo.value, hi.value);
    }
    check_range(lo, hi, rng() % 3 == 0, rng);
  }
}

TEST(SchemaRegexNumbers, DocumentedExamples) {
  const Dfa half = Dfa::compile(*number_range_regex(inc("0.5"), kNone, false));
  for (const char* t :
       {"0.5000001", "0.50", "7.25", "0.5", "1", "1e3", "5e-1", "1.7976931348623157e+308"})
    EXPECT_TRUE(half.matches(t)) << t;
  // Exponent spellings only with one nonzero digit before the point.
  for (const char* t : {"0.4999", "0", "-1", "4.9e-1", "0.5e0", "50e-2", "5e-324"})
    EXPECT_FALSE(half.matches(t)) << t;
  const Dfa positive = Dfa::compile(*number_range_regex(exc("0"), kNone, false));
  for (const char* t : {"0", "0.0", "-0", "-0.0", "-1"}) EXPECT_FALSE(positive.matches(t)) << t;
  for (const char* t : {"0.0001", "1", "12.5", "5e-324", "1E+400"})
    EXPECT_TRUE(positive.matches(t)) << t;
  const Dfa ints = Dfa::compile(*number_range_regex(inc("-2.5"), inc("3"), true));
  for (const char* t : {"3.0", "3.00", "-2", "0", "0.000"}) EXPECT_TRUE(ints.matches(t)) << t;
  for (const char* t : {"3.01", "-3", "2.5", "4", "-0"}) EXPECT_FALSE(ints.matches(t)) << t;
  EXPECT_FALSE(number_range_regex(inc("2"), inc("1"), false).has_value());
  EXPECT_FALSE(number_range_regex(exc("1"), inc("1"), false).has_value());
  EXPECT_FALSE(number_range_regex(inc("1.2"), inc("1.8"), true).has_value());
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "abc", "", "- 1", "0x10"}) {
    try {
      number_range_regex(inc(bad), kNone, false);
      ADD_FAILURE() << bad << " was accepted as a bound";
    } catch (const nextok::Error& e) {
      EXPECT_EQ(e.code(), nextok::ErrorCode::kInvalidArgument);
      EXPECT_EQ(e.param(), "bound");
    }
  }
}

TEST(SchemaRegexNumbers, ExtremeBoundsStaySoundAndSmall) {
  // Past 40 integer digits or 400 fractional places bounds are rounded inward.
  const auto dbl_max = number_range_regex(kNone, inc("1.7976931348623157e308"), false);
  const Dfa big = Dfa::compile(*dbl_max);
  EXPECT_LT(big.states(), 3000u);
  EXPECT_TRUE(big.matches("1797" + std::string(305, '0')));
  EXPECT_FALSE(big.matches("1798" + std::string(305, '0')));
  EXPECT_FALSE(big.matches("2" + std::string(308, '0')));
  EXPECT_TRUE(big.matches("-1" + std::string(400, '0')));
  const Dfa tiny = Dfa::compile(*number_range_regex(exc("1e-500"), kNone, false));
  EXPECT_FALSE(tiny.matches("0"));
  EXPECT_FALSE(tiny.matches("0." + std::string(450, '0') + "1"));  // in range, rounded away
  EXPECT_TRUE(tiny.matches("0." + std::string(399, '0') + "1"));
  EXPECT_FALSE(number_range_regex(inc("1e999999999999"), kNone, false).has_value());
  const Dfa huge = Dfa::compile(*number_range_regex(inc("-1e999999999999"), inc("5"), true));
  EXPECT_TRUE(huge.matches("-" + std::string(60, '9')));
  EXPECT_FALSE(huge.matches("6"));
}

// --- Integer ranges ------------------------------------------------------

void check_int_range(std::optional<int64_t> lo, std::optional<int64_t> hi, std::mt19937& rng) {
  const auto re = integer_range_regex(lo, hi);
  const i128 l = lo ? *lo : static_cast<i128>(INT64_MIN) - 1000;
  const i128 h = hi ? *hi : static_cast<i128>(INT64_MAX) + 1000;
  std::vector<i128> values;
  for (i128 c :
       {l, h, static_cast<i128>(0), static_cast<i128>(INT64_MIN), static_cast<i128>(INT64_MAX)}) {
    for (i128 v = c - 25; v <= c + 25; ++v) values.push_back(v);
  }
  for (int k = 0; k < 300; ++k)
    values.push_back(l + static_cast<i128>(rng() % 1000000) * ((h - l) / 1000000 + 1));
  if (!re) {
    ASSERT_TRUE(lo && hi && *lo > *hi);
    return;
  }
  const Dfa dfa = Dfa::compile(*re);
  for (i128 v : values) {
    const std::string t = to_string(v);
    ASSERT_EQ(dfa.matches(t), (!lo || v >= *lo) && (!hi || v <= *hi)) << t << " pattern " << *re;
    ASSERT_FALSE(dfa.matches(t + ".0")) << t;
  }
  for (const char* t : {"-0", "00", "01", "-01", "", "-", "1e2", "+1"}) {
    ASSERT_FALSE(dfa.matches(t)) << t << " pattern " << *re;
  }
}

TEST(SchemaRegexIntegers, FixedAndRandomRangesEqualIntegerComparison) {
  std::mt19937 rng(7);
  using O = std::optional<int64_t>;
  const std::vector<std::pair<O, O>> ranges = {{0, 100},        {-90, 90},
                                               {1, 65535},      {INT64_MIN, INT64_MAX},
                                               {0, {}},         {{}, 0},
                                               {{}, {}},        {-1, -1},
                                               {5, 4},          {INT64_MIN, INT64_MIN},
                                               {INT64_MAX, {}}, {{}, -10},
                                               {-1000, 999},    {99, 1000},
                                               {10, 99},        {-7, 7}};
  for (const auto& [lo, hi] : ranges) check_int_range(lo, hi, rng);
  for (int k = 0; k < 300; ++k) {
    auto pick = [&]() -> O {
      switch (rng() % 5) {
        case 0:
          return std::nullopt;
        case 1:
          return static_cast<int64_t>(rng() % 2001) - 1000;
        case 2:
          return static_cast<int64_t>((static_cast<uint64_t>(rng()) << 32) | rng());
        case 3:
          return INT64_MAX - static_cast<int64_t>(rng() % 50);
        default:
          return INT64_MIN + static_cast<int64_t>(rng() % 50);
      }
    };
    O lo = pick(), hi = pick();
    if (lo && hi && *lo > *hi && rng() % 4 != 0) std::swap(lo, hi);
    check_int_range(lo, hi, rng);
  }
  EXPECT_TRUE(
      Dfa::compile(*integer_range_regex(INT64_MIN, INT64_MAX)).matches("-9223372036854775808"));
  EXPECT_FALSE(Dfa::compile(*integer_range_regex(0, 100)).matches("-0"));
}

TEST(SchemaRegexNumbers, TypicalRangesCompileSmall) {
  struct Case {
    Bound lo, hi;
    bool integer_only;
    size_t max_states;
  };
  const std::vector<Case> cases = {
      // Decimal ranges carry normalized scientific spellings too.
      {inc("0"), inc("100"), true, 20},         {inc("-90"), inc("90"), false, 64},
      {inc("1"), inc("65535"), true, 40},       {inc("0"), inc("1"), false, 40},
      {inc("-180.0"), inc("180.0"), false, 64}, {exc("0"), kNone, false, 40},
  };
  for (const Case& c : cases) {
    const std::string re = *number_range_regex(c.lo, c.hi, c.integer_only);
    const auto t0 = std::chrono::steady_clock::now();
    const Dfa dfa = Dfa::compile(re);
    const auto us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0);
    EXPECT_LE(dfa.states(), c.max_states) << re;
    EXPECT_LT(us.count(), 50000.0) << re;  // generous: debug and sanitizer builds
  }
}

// --- Formats -----------------------------------------------------------------

// Shortest distance from each state to acceptance, for walks that must end.
std::vector<int> distances(const Dfa& d) {
  const size_t n = d.states();
  std::vector<std::vector<int32_t>> rev(n);
  for (size_t s = 0; s < n; ++s) {
    for (int b = 0; b < 256; ++b) {
      const int32_t t = d.next(static_cast<int32_t>(s), static_cast<uint8_t>(b));
      if (t >= 0) rev[static_cast<size_t>(t)].push_back(static_cast<int32_t>(s));
    }
  }
  std::vector<int> dist(n, -1);
  std::vector<int32_t> queue;
  for (size_t s = 0; s < n; ++s) {
    if (d.accepting(static_cast<int32_t>(s))) dist[s] = 0, queue.push_back(static_cast<int32_t>(s));
  }
  for (size_t k = 0; k < queue.size(); ++k) {
    for (int32_t f : rev[static_cast<size_t>(queue[k])]) {
      if (dist[static_cast<size_t>(f)] < 0) {
        dist[static_cast<size_t>(f)] = dist[static_cast<size_t>(queue[k])] + 1;
        queue.push_back(f);
      }
    }
  }
  return dist;
}

// A random accepted string: random live bytes up to a random length, then
// the way down to acceptance.
std::string random_match(const Dfa& d, const std::vector<int>& dist, std::mt19937& rng) {
  const size_t target = rng() % 120;
  std::string out;
  int32_t s = d.start();
  std::vector<uint8_t> options;
  while (true) {
    if (d.accepting(s) && (out.size() >= target || rng() % 16 == 0)) return out;
    options.clear();
    for (int b = 0; b < 256; ++b) {
      const int32_t t = d.next(s, static_cast<uint8_t>(b));
      if (t < 0) continue;
      if (out.size() < target || dist[static_cast<size_t>(t)] < dist[static_cast<size_t>(s)]) {
        options.push_back(static_cast<uint8_t>(b));
      }
    }
    if (options.empty()) return out;  // accepting with no way on
    const uint8_t b = options[rng() % options.size()];
    out += static_cast<char>(b);
    s = d.next(s, b);
  }
}

// The remainder automaton against integer arithmetic, every integer in a
// range (plain and with ".0"), for divisors small and at the limit.
TEST(SchemaMultipleOf, DfaMatchesDivisibility) {
  for (int64_t k : {2, 3, 7, 16, 999, 1000}) {
    const auto d = nextok::constraint::multiple_of_dfa(nlohmann::json(k));
    ASSERT_TRUE(d.has_value()) << k;
    for (int64_t i = -2100; i <= 2100; ++i) {
      const std::string text = std::to_string(i);
      EXPECT_EQ(d->matches(text), i % k == 0) << k << " " << text;
      EXPECT_EQ(d->matches(text + ".00"), i % k == 0) << k << " " << text;
      EXPECT_FALSE(d->matches(text + ".5")) << k << " " << text;
    }
    EXPECT_FALSE(d->matches("01"));
    EXPECT_FALSE(d->matches(""));
    EXPECT_FALSE(d->matches("0."));
  }
  EXPECT_FALSE(nextok::constraint::multiple_of_dfa(nlohmann::json(1)).has_value());
  EXPECT_FALSE(nextok::constraint::multiple_of_dfa(nlohmann::json(1001)).has_value());
  EXPECT_FALSE(nextok::constraint::multiple_of_dfa(nlohmann::json(1001.5)).has_value());
  EXPECT_FALSE(nextok::constraint::multiple_of_dfa(nlohmann::json(0.00001)).has_value());
  EXPECT_TRUE(nextok::constraint::multiple_of_dfa(nlohmann::json(6.0)).has_value());
}

// Decimal divisors p / 10^k against exact rational arithmetic: every
// spelling i / 10^f of a range, with trailing zeros too.
TEST(SchemaMultipleOf, DecimalDivisorsMatchExactArithmetic) {
  for (const auto& [m, p, k] :
       {std::tuple{2.5, 25, 1}, std::tuple{0.25, 25, 2}, std::tuple{6.75, 675, 2},
        std::tuple{0.1, 1, 1}, std::tuple{0.003, 3, 3}}) {
    const auto d = nextok::constraint::multiple_of_dfa(nlohmann::json(m));
    ASSERT_TRUE(d.has_value()) << m;
    for (int f = 0; f <= 4; ++f) {
      int64_t scale = 1;
      for (int i = 0; i < f; ++i) scale *= 10;
      for (int64_t i = -3000; i <= 3000; i += 7) {
        // i / 10^f is a multiple of p / 10^k when i * 10^k is one of p * 10^f.
        int64_t lhs = i, rhs = p * scale;
        for (int j = 0; j < k; ++j) lhs *= 10;
        const bool multiple = lhs % rhs == 0;
        const int64_t a = i < 0 ? -i : i;
        std::string text = (i < 0 ? "-" : "") + std::to_string(a / scale);
        if (f > 0) {
          std::string frac = std::to_string(a % scale);
          text += "." + std::string(static_cast<size_t>(f) - frac.size(), '0') + frac;
        }
        EXPECT_EQ(d->matches(text), multiple) << m << " " << text;
        if (f > 0) {
          EXPECT_EQ(d->matches(text + "00"), multiple) << m << " " << text;
        }
      }
    }
    EXPECT_FALSE(d->matches("1."));
    EXPECT_FALSE(d->matches("01"));
    EXPECT_TRUE(d->matches("0")) << m;
    EXPECT_TRUE(d->matches("-0.0")) << m;
  }
}

TEST(SchemaRegexFormats, ValidAndInvalidExamples) {
  const std::vector<std::tuple<const char*, std::vector<const char*>, std::vector<const char*>>>
      cases = {
          {"date-time",
           {"2024-01-15T10:30:00Z", "2024-01-15T10:30:00.123+05:30", "2000-02-29T00:00:00z",
            "1999-12-31t23:59:59-23:59", "0001-01-01T00:00:00.0Z"},
           {"2024-01-15 10:30:00Z", "2024-01-15T10:30:00", "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z", "2024-01-15T24:00:00Z", "2024-01-15T10:60:00Z",
            "2024-01-15T10:30:60Z", "2024-01-15T10:30:00+24:00", "0000-01-01T00:00:00Z",
            "2024-04-31T00:00:00Z", "2024-01-15T10:30:00.Z"}},
          {"date",
           {"2024-01-15", "2024-02-29", "2000-02-29", "1600-02-29", "2023-12-31", "0004-02-29"},
           {"2023-02-29", "2100-02-29", "2024-13-01", "2024-00-10", "2024-01-32", "24-01-15",
            "2024-1-15", "0000-01-01", "2024-06-31"}},
          {"time",
           {"10:30:00Z", "23:59:59.999999+14:00", "00:00:00-00:00", "12:00:00z"},
           {"10:30:00", "10:30Z", "24:00:00Z", "23:59:60Z", "1:00:00Z", "10:30:00+5:30"}},
          {"email",
           {"user.name+tag@example.com", "a@b", "x_y@sub.example.co.uk", "o'neil@example.org",
            "first.last@xn-a.example", "joe@[127.0.0.1]", "joe@[IPv6:2001:db8::1]",
            "\"joe bloggs\"@example.com", "\"joe..bloggs\"@example.com", "\"a@b\"@example.com",
            "\"a\\\"b\"@example.com", "\"\"@example.com"},
           {"user@", "@example.com", ".user@example.com", "user.@example.com", "a..b@example.com",
            "user@-example.com", "user name@example.com", "user@exa_mple.com", "user@example..com",
            "\"quoted@example.com", "\"a\"b\"@example.com", "\"a\\\"@example.com",
            "joe@[127.0.0.300]", "joe@[2001:db8::1]", "joe@[IPv6:1.2.3.4]"}},
          {"hostname",
           {"example.com", "a", "host-name", "1host", "www.example.com", "a.b.c.d.e.f.g",
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk.com"},
           {"", "-a", "a-", "a_b", "a..b", ".a", "a.", "xn--4gbwdl.xn--wgbh1c", "ab--cd",
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl.com"}},
          {"ipv4",
           {"192.168.0.1", "0.0.0.0", "255.255.255.255", "10.0.0.10"},
           {"256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.04", "a.b.c.d", "1.2.3.4 "}},
          {"ipv6",
           {"2001:db8::1", "::1", "::", "1::", "1:2:3:4:5:6:7:8", "::ffff:192.168.0.1",
            "1:2:3:4:5:6:1.2.3.4", "fe80::1:2", "1:2:3:4:5:6:7::", "ABCD:ef01::"},
           {"1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", ":1", "1:", "1:2:3:4:5:6:7", "::1.2.3.04",
            "1:2:3:4:5:6:7:1.2.3.4", "fe80::1%eth0", "g::1"}},
          {"uri",
           {"https://example.com/a/b?x=1#f", "urn:isbn:0451450523", "mailto:user@example.com",
            "http://[::1]:8080/", "file:///etc/hosts", "http://user:pw@host:80/p%20q",
            "a:", "tag:example.com,2024:x", "http://[v1.test]/", "http://[vF.a:b]"},
           {"example.com", "/relative/path", "1http://x", "http://exa mple.com",
            "http://example.com/%zz", "http://[::1", "http://ex<ample>.com", "", "http://[v1.]/",
            "http://[vx.a]/", "http://[v1.a/b]/"}},
          {"uri-reference",
           {"https://example.com/a?b#c", "/relative/path", "a/b", "../x", "?q=1", "#frag", "",
            "//host/p", "a:b", "p%20q"},
           {"1http://x", ":a", "a b", "http://exa mple.com", "%zz", "x<y"}},
          {"json-pointer",
           {"", "/", "/a", "/a/b~0c/~1d", "/0/1", "//", "/é"},
           {"a", "/a~", "/a~2", "~0", "#/a"}},
          {"relative-json-pointer",
           {"0#", "1/a", "10/b~1c", "0/", "120#", "0", "1234"},
           {"", "01/a", "/a", "a", "1~", "-1/a", "1#/a", "100/a", "01"}},
          {"uri-template",
           {"http://example.com/{id}", "/users/{user_id}/posts{?page,per_page}", "{+path}/here",
            "{var:3}", "{list*}", "plain", "", "{a.b}", "%20{x}"},
           {"{", "}", "{}", "{a b}", "{a:0}", "{a:10000}", "{=x}", "a b", "{a,}", "%zz", "a|b"}},
          {"uuid",
           {"550e8400-e29b-41d4-a716-446655440000", "00000000-0000-0000-0000-000000000000",
            "550E8400-E29B-41D4-A716-446655440000"},
           {"550e8400e29b41d4a716446655440000", "550e8400-e29b-41d4-a716-44665544000",
            "{550e8400-e29b-41d4-a716-446655440000}", "550e8400-e29b-41d4-a716-44665544000g"}},
          {"duration",
           {"P3Y6M4DT12H30M5S", "PT1H", "P1W", "P1D", "P2M", "P1Y", "PT5M", "PT0S", "P1DT2H",
            "P1Y2M", "PT1H30M", "P10Y10M10DT10H10M10S"},
           {"", "P", "PT", "P1", "1D", "P1H", "PT1D", "P1D2M", "P1W2D", "PT1S2M", "PT0.5S", "p1d",
            "P1DT", "P-1D", "PT1H5S", "P1Y3D"}},
          {"regex",
           {"", "^[a-z]+$", "(a|b)*?c{2,}", "[^\\s]+\\.x", "^$|^\\d{1,15}$", "\\u00e9\\/"},
           {"a(b", "[z-a]", "a**", "(?<n>a)", "\\-", "a{2,1}", "[]", "x{", "((((a))))"}},
      };
  for (const auto& [format, valid, invalid] : cases) {
    const auto re = format_regex(format);
    ASSERT_TRUE(re.has_value()) << format;
    const Dfa dfa = Dfa::compile(*re);
    EXPECT_LT(dfa.states(), 3000u) << format;
    for (const char* v : valid) EXPECT_TRUE(dfa.matches(v)) << format << " " << v;
    for (const char* v : invalid) EXPECT_FALSE(dfa.matches(v)) << format << " " << v;
  }
  EXPECT_EQ(format_regex("idn-hostname"), format_regex("hostname"));
  // idn-email: RFC 6531's non-ASCII local parts, an ASCII domain.
  const Dfa idn_email = Dfa::compile(*format_regex("idn-email"));
  for (const char* v : {"\u03b4\u03bf\u03ba\u03b9\u03bc\u03ae@example.com",
                        "\"\u03b4\u03bf\"@example.com", "caf\u00e9@example.com",
                        "\u0085@example.com", "\U0001D54F@example.com", "joe@example.com"}) {
    EXPECT_TRUE(idn_email.matches(v)) << v;
  }
  for (const char* v : {"\u00e9.@example.com", "a@caf\u00e9.com", "\u00e9 a@example.com"}) {
    EXPECT_FALSE(idn_email.matches(v)) << v;
  }
  const Dfa email = Dfa::compile(*format_regex("email"));
  EXPECT_FALSE(email.matches("caf\u00e9@example.com"));
  for (const char* f : {"iri", "iri-reference", "Date", "", "byte"}) {
    EXPECT_FALSE(format_regex(f).has_value()) << f;
  }
}

bool leap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// Calendar check of "YYYY-MM-DD" at the start of s.
bool real_date(const std::string& s) {
  const int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)),
            d = std::stoi(s.substr(8, 2));
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1] + (m == 2 && leap(y));
}

bool host_lengths_ok(const std::string& h, size_t max_total) {
  if (h.size() > max_total) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = h.find('.', start);
    const std::string l =
        h.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (l.empty() || l.size() > 63 || l.front() == '-' || l.back() == '-') return false;
    if (l.size() >= 4 && l[2] == '-' && l[3] == '-') return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

TEST(SchemaRegexFormats, RandomMatchesPassIndependentChecks) {
  std::mt19937 rng(5);
  auto walk = [&](const char* format, auto check) {
    const Dfa dfa = Dfa::compile(*format_regex(format));
    const std::vector<int> dist = distances(dfa);
    for (int k = 0; k < 2000; ++k) {
      const std::string s = random_match(dfa, dist, rng);
      ASSERT_TRUE(dfa.matches(s));
      ASSERT_TRUE(check(s)) << format << " " << s;
    }
  };
  walk("date", real_date);
  walk("date-time", real_date);
  walk("ipv4", [](const std::string& s) {
    in_addr a;
    return inet_pton(AF_INET, s.c_str(), &a) == 1;
  });
  walk("ipv6", [](const std::string& s) {
    in6_addr a;
    return inet_pton(AF_INET6, s.c_str(), &a) == 1;
  });
  walk("hostname", [](const std::string& s) { return host_lengths_ok(s, 253); });
  walk("email", [](const std::string& s) {
    const size_t at = s.rfind('@');
    const std::string domain = s.substr(at + 1);
    bool domain_ok = host_lengths_ok(domain, 253);
    if (domain.starts_with('[') && domain.ends_with(']')) {  // an address literal
      const std::string ip = domain.substr(1, domain.size() - 2);
      in_addr a4;
      in6_addr a6;
      domain_ok = ip.starts_with("IPv6:") ? inet_pton(AF_INET6, ip.c_str() + 5, &a6) == 1
                                          : inet_pton(AF_INET, ip.c_str(), &a4) == 1;
    }
    if (s[0] == '"') {  // a quoted local part: printable pairs, '"' and '\\' escaped
      const size_t close = s.rfind('"', s.rfind('@'));
      size_t k = 1;
      while (k < close && s[k] >= ' ' && s[k] <= '~' && s[k] != '"') k += s[k] == '\\' ? 2 : 1;
      return k == close && close <= 63 && s[close + 1] == '@' && domain_ok;  // <= 64 octets
    }
    return s.size() <= 254 && at <= 64 && domain_ok && s[0] != '.' && s[at - 1] != '.' &&
           s.substr(0, at).find("..") == std::string::npos;
  });
}

}  // namespace
