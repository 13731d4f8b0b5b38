// Reading a harmony turn back (nextok/harmony.hpp): control tokens split
// headers from text by id, so text that spells a control token stays text.
#include <string_view>

#include "nextok/harmony.hpp"

namespace nextok {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// "ROLE to=R<|channel|>CH to=R CT…" (the role only after <|start|>): the
// channel is the word after <|channel|>, a word "to=R" names the recipient,
// the other words are the content type, in order.
void read_header(std::string_view h, bool with_role, HarmonyMessage& m) {
  constexpr std::string_view kChannel = "<|channel|>";
  std::string rest;
  if (with_role) {
    size_t n = 0;
    while (n < h.size() && !is_space(h[n]) && h[n] != '<') ++n;
    m.role = std::string(h.substr(0, n));
    h.remove_prefix(n);
  }
  if (const size_t c = h.find(kChannel); c != std::string_view::npos) {
    size_t e = c + kChannel.size();
    while (e < h.size() && !is_space(h[e]) && h[e] != '<') ++e;
    m.channel = std::string(h.substr(c + kChannel.size(), e - c - kChannel.size()));
    rest = std::string(h.substr(0, c)) + " " + std::string(h.substr(e));
  } else {
    rest = std::string(h);
  }
  std::string_view r = rest;
  while (!r.empty()) {
    while (!r.empty() && is_space(r.front())) r.remove_prefix(1);
    size_t n = 0;
    while (n < r.size() && !is_space(r[n])) ++n;
    if (n == 0) break;
    const std::string_view word = r.substr(0, n);
    r.remove_prefix(n);
    if (word.starts_with("to=") && m.recipient.empty()) {
      m.recipient = std::string(word.substr(3));
    } else {
      if (!m.content_type.empty()) m.content_type += ' ';
      m.content_type += word;
    }
  }
}

void join(std::optional<std::string>& into, const std::string& text) {
  if (into) {
    *into += '\n';
    *into += text;
  } else {
    into = text;
  }
}

}  // namespace

HarmonyTurn parse_harmony_turn(const Vocabulary& vocab, std::span<const uint32_t> ids) {
  const HarmonyTokens t = HarmonyTokens::find(vocab);
  HarmonyTurn turn;
  enum class Mode { kHeader, kText, kOutside } mode = Mode::kHeader;
  bool with_role = false;  // the first header's role is in the prompt
  std::string header;
  HarmonyMessage msg;
  auto open_header = [&](bool role) {
    mode = Mode::kHeader;
    with_role = role;
    header.clear();
  };
  for (const uint32_t id : ids) {
    const bool control = vocab.is_special(id) || vocab.is_eos(id);
    if (id == t.start) {
      if (mode == Mode::kText) turn.messages.push_back(std::move(msg));  // cut short
      open_header(true);
      continue;
    }
    switch (mode) {
      case Mode::kHeader:
        if (id == t.message) {
          msg = HarmonyMessage{};
          msg.role = "assistant";
          read_header(header, with_role, msg);
          mode = Mode::kText;
        } else if (id == t.end || id == t.call || id == t.return_ || vocab.is_eos(id)) {
          mode = Mode::kOutside;  // a header without a message: dropped
        } else {
          header += vocab.bytes(id);
        }
        break;
      case Mode::kText:
        if (id == t.end || id == t.call || id == t.return_) {
          msg.complete = true;
          turn.messages.push_back(std::move(msg));
          mode = Mode::kOutside;
        } else if (control && vocab.is_eos(id)) {
          turn.messages.push_back(std::move(msg));
          mode = Mode::kOutside;
        } else {
          msg.content += vocab.bytes(id);
        }
        break;
      case Mode::kOutside:
        break;
    }
  }
  if (mode == Mode::kText) turn.messages.push_back(std::move(msg));
  constexpr std::string_view kFunctions = "functions.";
  for (const HarmonyMessage& m : turn.messages) {
    if (m.role != "assistant") continue;
    if (!m.recipient.empty()) {
      if (m.complete && m.recipient.starts_with(kFunctions))
        turn.calls.push_back({m.recipient.substr(kFunctions.size()), m.content});
    } else if (m.channel == "analysis") {
      join(turn.reasoning, m.content);
    } else {
      join(turn.content, m.content);
    }
  }
  return turn;
}

}  // namespace nextok
