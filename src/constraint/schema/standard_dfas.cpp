#include "constraint/schema/standard_dfas.hpp"

namespace nextok::constraint {

namespace {

std::shared_ptr<const Dfa> make(const char* pattern, bool json_string, bool canonical = false) {
  RegexOptions opt;
  opt.json_string = json_string;
  opt.canonical_escapes = canonical;
  return std::make_shared<const Dfa>(Dfa::compile(pattern, opt));
}

}  // namespace

const StandardDfas& StandardDfas::get() {
  static const StandardDfas dfas = [] {
    StandardDfas d;
    d.string = make("[^]*", true);
    d.number = make(kNumberRegex, false);
    d.integer = make(kIntegerRegexText, false);
    d.true_ = make("true", false);
    d.false_ = make("false", false);
    d.null_ = make("null", false);
    d.integer_strict = make(kStrictIntegerRegexText, false);
    d.key = make("[^]*", true, true);
    return d;
  }();
  return dfas;
}

int StandardDfas::id_of(const Dfa* d) const noexcept {
  const Dfa* all[] = {string.get(), number.get(), integer.get(),        true_.get(),
                      false_.get(), null_.get(),  integer_strict.get(), key.get()};
  for (int k = 0; k < kCount; ++k)
    if (all[k] == d) return k;
  return -1;
}

}  // namespace nextok::constraint
