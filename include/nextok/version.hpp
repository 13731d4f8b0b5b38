#pragma once

namespace nextok {
inline constexpr const char* kVersion = "0.1.0";
}
