// `nextok chat-format`: formats a conversation with a tokenizer_config.json's
// chat template and writes the prompt to stdout, byte for byte.
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"

namespace nextok::tools {
namespace {

using nlohmann::json;

struct ChatArgs {
  std::string tokenizer_config;
  std::string messages_file;
  std::string messages_json;
  bool no_generation_prompt = false;
  std::string enable_thinking;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "path", "cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json parse_json(const std::string& text, const std::string& what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kMalformedFile, what, what + ": invalid JSON: " + e.what());
  }
}

// A special token in tokenizer_config.json: a string, null, or an
// AddedToken object {"content": …}.
std::string special_token(const json& cfg, const char* key) {
  const auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  throw Error(ErrorCode::kMalformedFile, key, std::string(key) + ": not a string or token object");
}

// The one place that reads a tokenizer_config.json for chat; to be replaced
// by the Tokenizer loader.
ChatTemplate load_chat_template(const std::string& path) {
  const json cfg = parse_json(read_file(path), path);
  if (!cfg.is_object()) throw Error(ErrorCode::kMalformedFile, "path", path + ": not an object");
  const auto it = cfg.find("chat_template");
  std::string source;
  if (it == cfg.end() || it->is_null()) {
    throw Error(ErrorCode::kUnsupported, "chat_template", path + ": no chat template");
  } else if (it->is_string()) {
    source = it->get<std::string>();
  } else if (it->is_array()) {
    // Named templates, as transformers writes them: use "default".
    bool found = false;
    for (const json& t : *it) {
      if (t.is_object() && t.value("name", "") == "default" && t.contains("template") &&
          t["template"].is_string()) {
        source = t["template"].get<std::string>();
        found = true;
      }
    }
    if (!found) {
      throw Error(ErrorCode::kUnsupported, "chat_template",
                  path + ": no \"default\" chat template");
    }
  } else {
    throw Error(ErrorCode::kMalformedFile, "chat_template",
                path + ": chat_template is neither a string nor a list");
  }
  return ChatTemplate::detect(source, special_token(cfg, "bos_token"),
                              special_token(cfg, "eos_token"));
}

std::string field(const json& m, const char* key, std::size_t i) {
  const auto it = m.find(key);
  if (it == m.end() || !it->is_string()) {
    throw Error(ErrorCode::kInvalidArgument, key,
                "message " + std::to_string(i) + ": \"" + key + "\" must be a string");
  }
  return it->get<std::string>();
}

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
    ChatMessage msg{field(m, "role", i), field(m, "content", i), std::nullopt};
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
    out.push_back(std::move(msg));
  }
  return out;
}

}  // namespace

std::function<int()> add_chat(CLI::App& app) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* sub = app.add_subcommand(
      "chat-format", "Format a conversation with a tokenizer_config.json chat template");
  sub->add_option("--tokenizer-config", a->tokenizer_config, "tokenizer_config.json")
      ->required()
      ->check(CLI::ExistingFile);
  auto* file = sub->add_option("--messages", a->messages_file,
                               "JSON file: array of {role, content, reasoning_content?}");
  auto* text = sub->add_option("--messages-json", a->messages_json, "The same array, inline");
  file->excludes(text);
  sub->add_flag("--no-generation-prompt", a->no_generation_prompt,
                "Do not open an assistant turn at the end");
  sub->add_option("--enable-thinking", a->enable_thinking, "Qwen3: true or false")
      ->check(CLI::IsMember({"true", "false"}));
  return [a, sub, file, text]() {
    if (!sub->parsed()) return -1;
    if (file->count() == 0 && text->count() == 0) {
      throw Error(ErrorCode::kInvalidArgument, "messages",
                  "give --messages FILE or --messages-json TEXT");
    }
    const ChatTemplate tmpl = load_chat_template(a->tokenizer_config);
    const auto messages =
        parse_messages(file->count() ? read_file(a->messages_file) : a->messages_json);
    ChatOptions opt;
    opt.add_generation_prompt = !a->no_generation_prompt;
    if (!a->enable_thinking.empty()) opt.enable_thinking = a->enable_thinking == "true";
    const std::string prompt = tmpl.apply(messages, opt);
    if (std::fwrite(prompt.data(), 1, prompt.size(), stdout) != prompt.size() ||
        std::fflush(stdout) != 0) {
      throw Error(ErrorCode::kIo, "stdout", "cannot write the prompt");
    }
    return 0;
  };
}

}  // namespace nextok::tools
