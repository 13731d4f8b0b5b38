// `nextok chat-format`: formats a conversation with the chat template of a
// tokenizer_config.json, tokenizer directory or GGUF file, and writes the
// prompt to stdout, byte for byte.
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"
#include "nextok/tokenizer.hpp"
#include "server/tools.hpp"
#include "vocab/config_json.hpp"

namespace nextok::tools {
namespace {

using json = nlohmann::ordered_json;  // key order matters: tools render as written

struct ChatArgs {
  std::string tokenizer_config;
  std::string tokenizer;
  std::string messages_file;
  std::string messages_json;
  std::string tools_json;
  bool no_generation_prompt = false;
  std::string enable_thinking;
  std::string tools_in_user_message;
  std::optional<std::string> builtin_tools;
  std::string reasoning_effort;
  std::string date;
};

json parse_json(const std::string& text, const std::string& what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kMalformedFile, what, what + ": invalid JSON: " + e.what());
  }
}

// The chat template with its bos/eos spellings, through the library's
// loaders: a tokenizer_config.json, or a tokenizer directory / GGUF file.
ChatTemplate load_chat_template(const ChatArgs& a) {
  std::optional<std::string> source;
  std::string bos, eos, where;
  if (!a.tokenizer.empty()) {
    const Tokenizer tok = Tokenizer::from_path(a.tokenizer);
    source = tok.chat_template();
    bos = tok.bos_token();
    eos = tok.eos_token();
    where = a.tokenizer;
  } else {
    vocab::TokenizerConfig cfg;
    vocab::read_tokenizer_config(read_file(a.tokenizer_config), a.tokenizer_config, cfg);
    source = cfg.chat_template;
    bos = cfg.bos_token;
    eos = cfg.eos_token;
    where = a.tokenizer_config;
  }
  if (!source) throw Error(ErrorCode::kUnsupported, "chat_template", where + ": no chat template");
  return ChatTemplate::detect(*source, bos, eos);
}

std::string field(const json& m, const char* key, std::size_t i) {
  const auto it = m.find(key);
  if (it == m.end() || !it->is_string()) {
    throw Error(ErrorCode::kInvalidArgument, key,
                "message " + std::to_string(i) + ": \"" + key + "\" must be a string");
  }
  return it->get<std::string>();
}

}  // namespace

std::vector<ChatMessage> parse_messages(const std::string& text) {
  const json arr = parse_json(text, "messages");
  if (!arr.is_array()) {
    throw Error(ErrorCode::kInvalidArgument, "messages", "messages must be a JSON array");
  }
  std::vector<ChatMessage> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const json& m = arr[i];
    if (!m.is_object()) {
      throw Error(ErrorCode::kInvalidArgument, "messages",
                  "message " + std::to_string(i) + " is not an object");
    }
    ChatMessage msg{field(m, "role", i), field(m, "content", i), std::nullopt, {}};
    // transformers takes the first non-null of these names as reasoning_content.
    for (const char* key : {"reasoning_content", "thinking", "reasoning"}) {
      const auto r = m.find(key);
      if (r == m.end() || r->is_null()) continue;
      if (!r->is_string()) {
        throw Error(ErrorCode::kInvalidArgument, key,
                    "message " + std::to_string(i) + ": \"" + key + "\" must be a string");
      }
      msg.reasoning_content = r->get<std::string>();
      break;
    }
    if (const auto tc = m.find("tool_calls"); tc != m.end() && tc->is_array()) {
      for (const json& c : *tc) {
        // {function: {name, arguments}} or the bare {name, arguments}, as the template takes.
        const json& fn = c.contains("function") ? c["function"] : c;
        ChatToolCall call{field(fn, "name", i), "{}"};
        if (const auto args = fn.find("arguments"); args != fn.end())
          call.arguments =
              args->is_string() ? args->get<std::string>() : server::python_json(*args);
        msg.tool_calls.push_back(std::move(call));
      }
    }
    out.push_back(std::move(msg));
  }
  return out;
}

std::function<int()> add_chat(CLI::App& app) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* sub = app.add_subcommand(
      "chat-format", "Format a conversation with a tokenizer_config.json chat template");
  auto* cfg = sub->add_option("--tokenizer-config", a->tokenizer_config, "tokenizer_config.json")
                  ->check(CLI::ExistingFile);
  auto* tok = sub->add_option("--tokenizer", a->tokenizer,
                              "Tokenizer directory or .gguf file (instead of --tokenizer-config)");
  cfg->excludes(tok);
  auto* file = sub->add_option("--messages", a->messages_file,
                               "JSON file: array of {role, content, reasoning_content?}");
  auto* text = sub->add_option("--messages-json", a->messages_json, "The same array, inline");
  file->excludes(text);
  sub->add_option("--tools-json", a->tools_json,
                  "JSON array of tools ({type: function, function: {...}}) to render");
  sub->add_flag("--no-generation-prompt", a->no_generation_prompt,
                "Do not open an assistant turn at the end");
  sub->add_option("--tools-in-user-message", a->tools_in_user_message,
                  "Llama 3.1: true (the template's default) or false (tools in the system turn)")
      ->check(CLI::IsMember({"true", "false"}));
  sub->add_option("--builtin-tools", a->builtin_tools,
                  "Llama 3.1: the template's builtin_tools, comma-separated (brave_search, "
                  "wolfram_alpha, code_interpreter; \"\" passes an empty list)");
  sub->add_option("--enable-thinking", a->enable_thinking, "Qwen3: true or false")
      ->check(CLI::IsMember({"true", "false"}));
  sub->add_option("--reasoning-effort", a->reasoning_effort,
                  "gpt-oss harmony: the system message's reasoning effort (default medium)");
  sub->add_option("--date", a->date,
                  "gpt-oss harmony: the system message's current date (default today, local); "
                  "Llama 3.1: the template's date_string");
  return [a, sub, file, text, cfg, tok]() {
    if (!sub->parsed()) return -1;
    if (cfg->count() == 0 && tok->count() == 0) {
      throw Error(ErrorCode::kInvalidArgument, "tokenizer",
                  "give --tokenizer-config FILE or --tokenizer DIR|GGUF");
    }
    if (file->count() == 0 && text->count() == 0) {
      throw Error(ErrorCode::kInvalidArgument, "messages",
                  "give --messages FILE or --messages-json TEXT");
    }
    const ChatTemplate tmpl = load_chat_template(*a);
    const auto messages =
        parse_messages(file->count() ? read_file(a->messages_file) : a->messages_json);
    ChatOptions opt;
    opt.add_generation_prompt = !a->no_generation_prompt;
    if (!a->enable_thinking.empty()) opt.enable_thinking = a->enable_thinking == "true";
    if (!a->tools_in_user_message.empty())
      opt.tools_in_user_message = a->tools_in_user_message == "true";
    if (a->builtin_tools) {
      opt.builtin_tools =
          a->builtin_tools->empty() ? std::vector<std::string>{} : split_commas(*a->builtin_tools);
    }
    if (!a->reasoning_effort.empty()) opt.reasoning_effort = a->reasoning_effort;
    if (!a->date.empty()) opt.current_date = a->date;
    if (!a->tools_json.empty()) {
      const json tools = parse_json(a->tools_json, "tools");
      if (!tools.is_array())
        throw Error(ErrorCode::kInvalidArgument, "tools", "tools must be a JSON array");
      for (const json& t : tools) opt.tools.push_back(server::python_json(t));
    }
    const std::string prompt = tmpl.apply(messages, opt);
    if (std::fwrite(prompt.data(), 1, prompt.size(), stdout) != prompt.size() ||
        std::fflush(stdout) != 0) {
      throw Error(ErrorCode::kIo, "stdout", "cannot write the prompt");
    }
    return 0;
  };
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> fields;
  for (size_t at = 0;;) {
    const size_t comma = text.find(',', at);
    fields.emplace_back(text.substr(at, comma == std::string_view::npos ? comma : comma - at));
    if (comma == std::string_view::npos) return fields;
    at = comma + 1;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "path", "cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace nextok::tools
