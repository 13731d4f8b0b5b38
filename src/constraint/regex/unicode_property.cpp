#include "constraint/regex/unicode_property.hpp"

#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <utility>

#include <utf8proc.h>

namespace nextok::constraint::regex {

namespace {

constexpr int kCategories = 30;  // utf8proc's, Cn (0) to Co (29)

// Every code point's general category, as ranges per category, from one
// scan (surrogates are Cs here; UTF-8 never spells them, see utf8_ranges).
const std::array<CodeSet, kCategories>& category_sets() {
  static const auto sets = [] {
    std::array<CodeSet, kCategories> out;
    uint32_t start = 0;
    int current = utf8proc_category(0);
    for (uint32_t cp = 1; cp <= kMaxCodePoint + 1; ++cp) {
      const int c = cp <= kMaxCodePoint ? utf8proc_category(static_cast<utf8proc_int32_t>(cp)) : -1;
      if (c == current) continue;
      out[static_cast<size_t>(current)].emplace_back(start, cp - 1);
      start = cp;
      current = c;
    }
    return out;
  }();
  return sets;
}

constexpr uint32_t bit(utf8proc_category_t c) {
  return 1u << static_cast<int>(c);
}

// Which categories a general-category name stands for (0: not a name).
uint32_t category_mask(const std::string& name) {
  using C = utf8proc_category_t;
  const uint32_t lc =
      bit(UTF8PROC_CATEGORY_LU) | bit(UTF8PROC_CATEGORY_LL) | bit(UTF8PROC_CATEGORY_LT);
  const uint32_t letter = lc | bit(UTF8PROC_CATEGORY_LM) | bit(UTF8PROC_CATEGORY_LO);
  const uint32_t mark =
      bit(UTF8PROC_CATEGORY_MN) | bit(UTF8PROC_CATEGORY_MC) | bit(UTF8PROC_CATEGORY_ME);
  const uint32_t number =
      bit(UTF8PROC_CATEGORY_ND) | bit(UTF8PROC_CATEGORY_NL) | bit(UTF8PROC_CATEGORY_NO);
  uint32_t punct = 0;
  for (C c :
       {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS, UTF8PROC_CATEGORY_PE,
        UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF, UTF8PROC_CATEGORY_PO})
    punct |= bit(c);
  const uint32_t symbol = bit(UTF8PROC_CATEGORY_SM) | bit(UTF8PROC_CATEGORY_SC) |
                          bit(UTF8PROC_CATEGORY_SK) | bit(UTF8PROC_CATEGORY_SO);
  const uint32_t separator =
      bit(UTF8PROC_CATEGORY_ZS) | bit(UTF8PROC_CATEGORY_ZL) | bit(UTF8PROC_CATEGORY_ZP);
  const uint32_t other = bit(UTF8PROC_CATEGORY_CC) | bit(UTF8PROC_CATEGORY_CF) |
                         bit(UTF8PROC_CATEGORY_CS) | bit(UTF8PROC_CATEGORY_CO) |
                         bit(UTF8PROC_CATEGORY_CN);
  // PropertyValueAliases.txt, general categories; names in loose form.
  static const std::pair<const char*, uint32_t> kNames[] = {
      {"l", letter},
      {"letter", letter},
      {"lc", lc},
      {"casedletter", lc},
      {"lu", bit(UTF8PROC_CATEGORY_LU)},
      {"uppercaseletter", bit(UTF8PROC_CATEGORY_LU)},
      {"ll", bit(UTF8PROC_CATEGORY_LL)},
      {"lowercaseletter", bit(UTF8PROC_CATEGORY_LL)},
      {"lt", bit(UTF8PROC_CATEGORY_LT)},
      {"titlecaseletter", bit(UTF8PROC_CATEGORY_LT)},
      {"lm", bit(UTF8PROC_CATEGORY_LM)},
      {"modifierletter", bit(UTF8PROC_CATEGORY_LM)},
      {"lo", bit(UTF8PROC_CATEGORY_LO)},
      {"otherletter", bit(UTF8PROC_CATEGORY_LO)},
      {"m", mark},
      {"mark", mark},
      {"combiningmark", mark},
      {"mn", bit(UTF8PROC_CATEGORY_MN)},
      {"nonspacingmark", bit(UTF8PROC_CATEGORY_MN)},
      {"mc", bit(UTF8PROC_CATEGORY_MC)},
      {"spacingmark", bit(UTF8PROC_CATEGORY_MC)},
      {"me", bit(UTF8PROC_CATEGORY_ME)},
      {"enclosingmark", bit(UTF8PROC_CATEGORY_ME)},
      {"n", number},
      {"number", number},
      {"nd", bit(UTF8PROC_CATEGORY_ND)},
      {"decimalnumber", bit(UTF8PROC_CATEGORY_ND)},
      {"digit", bit(UTF8PROC_CATEGORY_ND)},
      {"nl", bit(UTF8PROC_CATEGORY_NL)},
      {"letternumber", bit(UTF8PROC_CATEGORY_NL)},
      {"no", bit(UTF8PROC_CATEGORY_NO)},
      {"othernumber", bit(UTF8PROC_CATEGORY_NO)},
      {"p", punct},
      {"punctuation", punct},
      {"punct", punct},
      {"pc", bit(UTF8PROC_CATEGORY_PC)},
      {"connectorpunctuation", bit(UTF8PROC_CATEGORY_PC)},
      {"pd", bit(UTF8PROC_CATEGORY_PD)},
      {"dashpunctuation", bit(UTF8PROC_CATEGORY_PD)},
      {"ps", bit(UTF8PROC_CATEGORY_PS)},
      {"openpunctuation", bit(UTF8PROC_CATEGORY_PS)},
      {"pe", bit(UTF8PROC_CATEGORY_PE)},
      {"closepunctuation", bit(UTF8PROC_CATEGORY_PE)},
      {"pi", bit(UTF8PROC_CATEGORY_PI)},
      {"initialpunctuation", bit(UTF8PROC_CATEGORY_PI)},
      {"pf", bit(UTF8PROC_CATEGORY_PF)},
      {"finalpunctuation", bit(UTF8PROC_CATEGORY_PF)},
      {"po", bit(UTF8PROC_CATEGORY_PO)},
      {"otherpunctuation", bit(UTF8PROC_CATEGORY_PO)},
      {"s", symbol},
      {"symbol", symbol},
      {"sm", bit(UTF8PROC_CATEGORY_SM)},
      {"mathsymbol", bit(UTF8PROC_CATEGORY_SM)},
      {"sc", bit(UTF8PROC_CATEGORY_SC)},
      {"currencysymbol", bit(UTF8PROC_CATEGORY_SC)},
      {"sk", bit(UTF8PROC_CATEGORY_SK)},
      {"modifiersymbol", bit(UTF8PROC_CATEGORY_SK)},
      {"so", bit(UTF8PROC_CATEGORY_SO)},
      {"othersymbol", bit(UTF8PROC_CATEGORY_SO)},
      {"z", separator},
      {"separator", separator},
      {"zs", bit(UTF8PROC_CATEGORY_ZS)},
      {"spaceseparator", bit(UTF8PROC_CATEGORY_ZS)},
      {"zl", bit(UTF8PROC_CATEGORY_ZL)},
      {"lineseparator", bit(UTF8PROC_CATEGORY_ZL)},
      {"zp", bit(UTF8PROC_CATEGORY_ZP)},
      {"paragraphseparator", bit(UTF8PROC_CATEGORY_ZP)},
      {"c", other},
      {"other", other},
      {"cc", bit(UTF8PROC_CATEGORY_CC)},
      {"control", bit(UTF8PROC_CATEGORY_CC)},
      {"cntrl", bit(UTF8PROC_CATEGORY_CC)},
      {"cf", bit(UTF8PROC_CATEGORY_CF)},
      {"format", bit(UTF8PROC_CATEGORY_CF)},
      {"cs", bit(UTF8PROC_CATEGORY_CS)},
      {"surrogate", bit(UTF8PROC_CATEGORY_CS)},
      {"co", bit(UTF8PROC_CATEGORY_CO)},
      {"privateuse", bit(UTF8PROC_CATEGORY_CO)},
      {"cn", bit(UTF8PROC_CATEGORY_CN)},
      {"unassigned", bit(UTF8PROC_CATEGORY_CN)},
  };
  for (const auto& [n, mask] : kNames) {
    if (name == n) return mask;
  }
  return 0;
}

std::string loose(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '_' || c == '-') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

CodeSet sets_of(uint32_t mask) {
  CodeSet out;
  for (int c = 0; c < kCategories; ++c) {
    if (!(mask & (1u << c))) continue;
    const CodeSet& s = category_sets()[static_cast<size_t>(c)];
    out.insert(out.end(), s.begin(), s.end());
  }
  return normalized(std::move(out));
}

}  // namespace

std::optional<CodeSet> unicode_property(std::string_view name) {
  const auto eq = name.find('=');
  if (eq != std::string_view::npos) {
    const std::string key = loose(name.substr(0, eq));
    if (key != "gc" && key != "generalcategory") return std::nullopt;  // scripts and others
    const uint32_t mask = category_mask(loose(name.substr(eq + 1)));
    if (mask == 0) return std::nullopt;
    return sets_of(mask);
  }
  const std::string n = loose(name);
  if (n == "any") return CodeSet{{0, kMaxCodePoint}};
  if (n == "ascii") return CodeSet{{0, 0x7F}};
  if (n == "assigned") return sets_of(((1u << kCategories) - 1) & ~1u);
  const uint32_t mask = category_mask(n);
  if (mask == 0) return std::nullopt;
  return sets_of(mask);
}

}  // namespace nextok::constraint::regex
