// Normalizers: Unicode normal forms (utf8proc), literal Replace and Prepend.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vocab/spec.hpp"

namespace nextok::vocab {

// Applies the steps in order to one segment of valid UTF-8 text. Returns a
// view of `in` when nothing changes; otherwise fills `buf` and views it.
std::string_view normalize(const std::vector<NormalizerStep>& steps, std::string_view in,
                           std::string& buf);

}  // namespace nextok::vocab
