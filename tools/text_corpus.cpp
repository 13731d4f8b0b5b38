#include "text_corpus.hpp"

#include <array>
#include <string_view>

#include "nextok/rng.hpp"

namespace nextok::tools {

namespace {

constexpr std::array<std::string_view, 24> kFragments = {
    "The quick brown fox jumps over the lazy dog, and it's not the first time they've met.",
    "We'll see what the results say; I'd rather measure than guess.",
    "Die Straße ist naß, aber Jürgen fährt trotzdem Fahrrad nach München.",
    "Le café est très chaud, n'est-ce pas ? Où est l'hôtel ?",
    "El niño comió paella en la playa con su abuela.",
    "Москва — столица России, а Київ — столиця України.",
    "東京は日本の首都です。今日はいい天気ですね。",
    "北京是中国的首都，上海是最大的城市。",
    "서울은 대한민국의 수도입니다.",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "שלום עולם, מה שלומך?",
    "नमस्ते दुनिया, आप कैसे हैं?",
    "สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่าง",
    "Ελληνικά: Καλημέρα κόσμε!",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
    "{\"name\": \"nextok\", \"version\": [0, 1, 0], \"ok\": true, \"pi\": 3.14159}",
    "Prices: $1,234.56 or €99.99; call 555-0123 at 10:30am on 2024-07-26.",
    "Emoji: 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️‍🔥 🇯🇵 and plain "
    "😀!",
    "   leading spaces, trailing spaces   \n\n\n  indented\n\t\ttabs\r\n",
    "<|im_start|>user\nHello<|im_end|> <think>hmm</think> <start_of_turn>model",
    "CONTRACTIONS: I'M, YOU'RE, HE'S, WE'LL, THEY'D, IT'S, DON'T",
    "1234567890 3.14159265358979 0xDEADBEEF 1e-10 -42 +7",
    "https://example.com/path?query=value&x=1#frag user@example.org",
};

}  // namespace

std::vector<std::string> text_corpus(std::size_t bytes, std::uint64_t seed) {
  Pcg32 rng = Pcg32::for_seed(seed);
  std::vector<std::string> docs;
  std::size_t total = 0;
  while (total < bytes) {
    std::string doc;
    const uint32_t parts = 3 + rng.next_u32() % 12;
    for (uint32_t i = 0; i < parts; ++i) {
      doc.append(kFragments[rng.next_u32() % kFragments.size()]);
      const uint32_t sep = rng.next_u32() % 8;
      doc.append(sep < 5 ? " " : sep < 7 ? "\n" : "  \n\n");
    }
    total += doc.size();
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace nextok::tools
