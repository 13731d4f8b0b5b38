// `nextok harmony-generate`: gpt-oss harmony end to end without a model.
// Renders the prompt for --messages-json and --tools-json (ChatFormat::
// kHarmony), builds the call constraint for --tool-choice, and draws
// random-logit generations under it: one JSON line per generation with its
// token ids, text and the turn read back (reasoning, content, tool_calls,
// messages). Tests check the calls against the tools' schemas and the
// parse against an independent harmony parser.
#include <bit>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "mask_bits.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"
#include "nextok/harmony.hpp"
#include "nextok/mask.hpp"
#include "nextok/rng.hpp"
#include "nextok/tokenizer.hpp"
#include "server/tools.hpp"

namespace nextok::tools {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string tokenizer, messages_json, tools_json, tool_choice = "auto", reasoning_effort, date;
  std::string walk;  // token-id sequences to walk, one JSON array a line
  size_t count = 0;
  size_t max_tokens = 256;
  uint64_t seed = 0;
  // Random logits end messages rarely over 200k tokens: now and then pick
  // among the allowed control tokens, or among tokens that close JSON.
  float control_p = 0.08f;
  float close_p = 0.5f;
  bool timing = false;
};

void print(const json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}

// The tools and the choice as the server parses them, into a call format.
HarmonyCallFormat call_format(const Args& a, const std::shared_ptr<const TokenIndex>& index) {
  ojson body = {{"tools", ojson::parse(a.tools_json.empty() ? "[]" : a.tools_json)}};
  if (a.tool_choice == "auto" || a.tool_choice == "required" || a.tool_choice == "none")
    body["tool_choice"] = a.tool_choice;
  else
    body["tool_choice"] = {{"type", "function"}, {"function", {{"name", a.tool_choice}}}};
  const server::ToolRequest req = server::parse_tools(body);
  // tool_choice none (or no tools): a turn that may not call.
  HarmonyCallFormat f;
  f.allow_final = req.choice == server::ToolChoice::kAuto || !req.active();
  for (const server::ToolSpec& t : req.tools) {
    if (!req.active()) break;
    if (req.choice == server::ToolChoice::kNamed && t.name != req.named) continue;
    JsonConstraintOptions opt;
    opt.strict = t.strict;
    f.tools.push_back({t.name, JsonGrammar::from_schema(index, t.parameters, opt)});
  }
  return f;
}

json turn_json(const HarmonyTurn& turn) {
  json calls = json::array(), messages = json::array();
  for (const HarmonyCall& c : turn.calls)
    calls.push_back({{"name", c.name}, {"arguments", c.arguments}});
  for (const HarmonyMessage& m : turn.messages)
    messages.push_back({{"role", m.role},
                        {"channel", m.channel},
                        {"recipient", m.recipient},
                        {"content_type", m.content_type},
                        {"content", m.content},
                        {"complete", m.complete}});
  return {{"reasoning", turn.reasoning ? json(*turn.reasoning) : json()},
          {"content", turn.content ? json(*turn.content) : json()},
          {"tool_calls", calls},
          {"messages", messages}};
}

// Completeness: each line's ids are stepped through the masks; a refused id
// is reported with its position.
void walk(const std::shared_ptr<const HarmonyCallGrammar>& grammar, const Vocabulary& vocab,
          const std::string& lines) {
  std::vector<uint32_t> mask(bitmask_words(vocab.size()));
  size_t k = 0;
  for (size_t at = 0; at < lines.size(); ++k) {
    const size_t eol = std::min(lines.find('\n', at), lines.size());
    const std::string line = lines.substr(at, eol - at);
    at = eol + 1;
    if (line.empty()) continue;
    const auto ids = json::parse(line).get<std::vector<uint32_t>>();
    HarmonyCallConstraint c(grammar);
    json out = {{"walk", k}, {"tokens", ids.size()}};
    bool ok = true;
    for (size_t i = 0; i < ids.size() && ok; ++i) {
      c.step_mask(mask);
      if (ids[i] >= vocab.size() || !((mask[ids[i] >> 5] >> (ids[i] & 31)) & 1u)) {
        ok = false;
        out["refused_at"] = i;
      } else {
        c.advance(ids[i]);
      }
    }
    out["accepted"] = ok;
    out["ended"] = c.turn_ended();
    print(out);
  }
}

int run(const Args& a) {
  const Tokenizer tok = Tokenizer::from_path(a.tokenizer);
  const Vocabulary& vocab = tok.vocab();
  if (!a.messages_json.empty()) {
    ChatOptions opt;
    if (!a.tools_json.empty())
      for (const ojson& t : ojson::parse(a.tools_json)) opt.tools.push_back(server::python_json(t));
    if (!a.reasoning_effort.empty()) opt.reasoning_effort = a.reasoning_effort;
    if (!a.date.empty()) opt.current_date = a.date;
    const auto tmpl =
        ChatTemplate::of_format(ChatFormat::kHarmony, tok.bos_token(), tok.eos_token());
    const std::string prompt = tmpl.apply(parse_messages(a.messages_json), opt);
    print({{"prompt", prompt}, {"prompt_tokens", tok.encode(prompt).size()}});
  }
  if (a.count == 0 && a.walk.empty()) return 0;
  const auto index = TokenIndex::build(tok.shared_vocab());
  const auto c0 = Clock::now();
  const auto grammar = HarmonyCallGrammar::build(index, call_format(a, index));
  print({{"compiled_ms", std::chrono::duration<double, std::milli>(Clock::now() - c0).count()}});
  std::vector<uint32_t> mask(bitmask_words(vocab.size())), control(mask.size()),
      closes(mask.size()), pick_from(mask.size());
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    if (vocab.is_special(id) || vocab.is_eos(id)) control[id >> 5] |= 1u << (id & 31);
    // Led by a closing byte: inside a string the quote ends it, outside
    // a bracket ends a container.
    const std::string_view b = vocab.bytes(id);
    if (!b.empty() && std::string_view("\"}]").find(b[0]) != std::string_view::npos)
      closes[id >> 5] |= 1u << (id & 31);
  }
  for (size_t k = 0; k < a.count; ++k) {
    Pcg32 rng = Pcg32::for_seed(a.seed + k);
    HarmonyCallConstraint c(grammar);
    std::vector<uint32_t> ids;
    std::vector<double> times;
    bool dead_end = false;
    while (!c.turn_ended() && ids.size() < a.max_tokens) {
      const auto m0 = Clock::now();
      c.step_mask(mask);
      if (a.timing)
        times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - m0).count());
      const size_t n = count_bits(mask);
      if (n == 0) {
        dead_end = true;
        break;
      }
      // Uniform over the allowed tokens, or over a preferred subset of them.
      const std::vector<uint32_t>* from = &mask;
      size_t m = n;
      const float r = rng.next_f32();
      for (const auto& [prefer, p] :
           {std::pair{&control, a.control_p}, std::pair{&closes, a.close_p}}) {
        if (r >= p || from != &mask) continue;
        for (size_t w = 0; w < mask.size(); ++w) pick_from[w] = mask[w] & (*prefer)[w];
        if (const size_t np = count_bits(pick_from); np > 0) {
          from = &pick_from;
          m = np;
        }
      }
      const size_t pick =
          std::min(m - 1, static_cast<size_t>(rng.next_f32() * static_cast<float>(m)));
      const uint32_t id = nth_bit(*from, pick);
      c.advance(id);
      ids.push_back(id);
    }
    std::string text;
    for (const uint32_t id : ids) text += vocab.bytes(id);
    json line = {{"i", k},
                 {"ended", c.turn_ended()},
                 {"ids", ids},
                 {"text", text},
                 {"turn", turn_json(parse_harmony_turn(vocab, ids))}};
    if (dead_end) line["dead_end"] = true;
    if (a.timing) line["mask_us"] = times;
    print(line);
  }
  if (!a.walk.empty()) walk(grammar, vocab, read_file(a.walk));
  std::fflush(stdout);
  return 0;
}

}  // namespace

std::function<int()> add_harmony_generate(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "harmony-generate",
      "gpt-oss harmony: render a prompt, and random generations under the tool-call constraint");
  cmd->add_option("--tokenizer", a->tokenizer, "gpt-oss tokenizer directory (or .gguf)")
      ->required();
  cmd->add_option("--messages-json", a->messages_json, "Conversation to render (JSON array)");
  cmd->add_option("--tools-json", a->tools_json, "OpenAI tools (JSON array)");
  cmd->add_option("--tool-choice", a->tool_choice, "auto, required, none or a function name");
  cmd->add_option("--reasoning-effort", a->reasoning_effort, "low, medium (default) or high");
  cmd->add_option("--date", a->date, "The system message's current date (default today)");
  cmd->add_option("--count", a->count, "Random generations");
  cmd->add_option("--max-tokens", a->max_tokens, "Token limit per generation");
  cmd->add_option("--seed", a->seed, "Base seed (generation k uses seed + k)");
  cmd->add_option("--control-p", a->control_p, "Chance of picking among allowed control tokens");
  cmd->add_option("--close-p", a->close_p,
                  "Chance of picking among allowed tokens led by \" } or ]");
  cmd->add_option("--walk", a->walk, "Token-id sequences to walk (a JSON array a line)");
  cmd->add_flag("--timing", a->timing, "Report every mask's time (microseconds)");
  return [=]() { return cmd->parsed() ? run(*a) : -1; };
}

}  // namespace nextok::tools
