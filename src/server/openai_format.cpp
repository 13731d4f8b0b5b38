#include "openai_format.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace nextok::server {

namespace {

using nlohmann::json;

const char* finish_name(FinishReason f, bool calls = false) {
  if (f == FinishReason::kLength) return "length";
  return calls ? "tool_calls" : "stop";
}

json tool_calls_json(const std::vector<ParsedCall>& calls) {
  json out = json::array();
  for (const ParsedCall& c : calls) {
    out.push_back({{"id", tool_call_id()},
                   {"type", "function"},
                   {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  return out;
}

json byte_list(std::string_view s) {
  json out = json::array();
  for (const unsigned char c : s) out.push_back(static_cast<int>(c));
  return out;
}

// Chat: {"token", "logprob", "bytes", "top_logprobs": [...]}.
json chat_entry(const Vocabulary& vocab, const TokenLogprobs& lp, std::uint32_t top_n) {
  const auto piece = vocab.bytes(static_cast<std::uint32_t>(lp.token_id));
  json top = json::array();
  for (std::size_t i = 0; i < lp.top.size() && i < top_n; ++i) {
    const auto p = vocab.bytes(static_cast<std::uint32_t>(lp.top[i].token_id));
    top.push_back(
        {{"token", std::string(p)}, {"logprob", lp.top[i].logprob}, {"bytes", byte_list(p)}});
  }
  return {{"token", std::string(piece)},
          {"logprob", lp.token_logprob},
          {"bytes", byte_list(piece)},
          {"top_logprobs", std::move(top)}};
}

// Completions (legacy): parallel arrays.
struct LegacyLogprobs {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(),
       offsets = json::array();
  void add(const Vocabulary& vocab, const TokenLogprobs& lp, std::uint32_t top_n,
           std::size_t& offset) {
    const auto piece = vocab.bytes(static_cast<std::uint32_t>(lp.token_id));
    tokens.push_back(std::string(piece));
    token_logprobs.push_back(lp.token_logprob);
    json t = json::object();
    for (std::size_t i = 0; i < lp.top.size() && i < top_n; ++i)
      t[std::string(vocab.bytes(static_cast<std::uint32_t>(lp.top[i].token_id)))] =
          lp.top[i].logprob;
    top.push_back(std::move(t));
    offsets.push_back(offset);
    offset += piece.size();
  }
  json to_json() && {
    return {{"tokens", std::move(tokens)},
            {"token_logprobs", std::move(token_logprobs)},
            {"top_logprobs", std::move(top)},
            {"text_offset", std::move(offsets)}};
  }
};

// Tokens whose logprobs are reported: content tokens that were sampled, not
// the end-of-sequence token.
bool reported(const Vocabulary& vocab, Channel channel, bool forced, std::int32_t token) {
  return channel == Channel::kContent && !forced &&
         !vocab.is_eos(static_cast<std::uint32_t>(token));
}

}  // namespace

ResponseMeta ResponseMeta::make(const ApiRequest& r, const std::string& model,
                                const std::string& fingerprint) {
  ResponseMeta m;
  m.endpoint = r.endpoint;
  m.id = random_id(r.endpoint == Endpoint::kChat ? "chatcmpl" : "cmpl");
  m.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  m.model = model;
  m.fingerprint = fingerprint;
  m.logprobs = r.logprobs;
  m.top_logprobs = r.top_logprobs;
  m.include_usage = r.include_usage;
  m.tools = r.tools.active();
  m.tool_format = r.tools.format;
  return m;
}

json usage_json(std::size_t prompt_tokens, std::size_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json response_json(const ResponseMeta& meta, const Job& job, const Vocabulary& vocab) {
  const GenerateResult& r = job.result;
  json logprobs;  // null unless asked
  if (meta.logprobs) {
    json content = json::array();
    LegacyLogprobs legacy;
    std::size_t offset = 0;
    for (std::size_t i = 0; i < r.tokens.size() && i < r.logprobs.size(); ++i) {
      const Channel ch = i < job.channels.size() ? job.channels[i] : Channel::kContent;
      if (!r.logprobs[i] || !reported(vocab, ch, false, r.tokens[i])) continue;
      if (meta.endpoint == Endpoint::kChat)
        content.push_back(chat_entry(vocab, *r.logprobs[i], meta.top_logprobs));
      else
        legacy.add(vocab, *r.logprobs[i], meta.top_logprobs, offset);
    }
    logprobs = meta.endpoint == Endpoint::kChat
                   ? json{{"content", std::move(content)}, {"refusal", nullptr}}
                   : std::move(legacy).to_json();
  }
  json choice;
  if (meta.endpoint == Endpoint::kChat) {
    json message = {{"role", "assistant"}, {"content", r.content}};
    bool calls = false;
    if (meta.tools) {
      ParsedOutput parsed = parse_tool_output(r.content, meta.tool_format);
      calls = !parsed.calls.empty();
      message["content"] = parsed.content ? json(*parsed.content) : json(nullptr);
      if (calls) message["tool_calls"] = tool_calls_json(parsed.calls);
    }
    if (!r.reasoning.empty()) message["reasoning_content"] = r.reasoning;
    choice = {{"index", 0},
              {"message", std::move(message)},
              {"logprobs", std::move(logprobs)},
              {"finish_reason", finish_name(r.finish, calls)}};
  } else {
    choice = {{"index", 0},
              {"text", r.content},
              {"logprobs", std::move(logprobs)},
              {"finish_reason", finish_name(r.finish)}};
  }
  return {{"id", meta.id},
          {"object", meta.endpoint == Endpoint::kChat ? "chat.completion" : "text_completion"},
          {"created", meta.created},
          {"model", meta.model},
          {"system_fingerprint", meta.fingerprint},
          {"choices", json::array({std::move(choice)})},
          {"usage", usage_json(job.prompt.size(), r.tokens.size())}};
}

json ChunkWriter::chunk(json choice) const {
  json c = {
      {"id", meta_.id},
      {"object", meta_.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
      {"created", meta_.created},
      {"model", meta_.model},
      {"system_fingerprint", meta_.fingerprint},
      {"choices", choice.is_null() ? json::array() : json::array({std::move(choice)})}};
  if (meta_.include_usage) c["usage"] = nullptr;
  return c;
}

std::optional<json> ChunkWriter::opening() const {
  if (meta_.endpoint != Endpoint::kChat) return std::nullopt;
  return chunk({{"index", 0},
                {"delta", {{"role", "assistant"}, {"content", ""}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}});
}

std::optional<json> ChunkWriter::token(const JobEvent& ev) {
  const bool show_lp =
      meta_.logprobs && ev.logprobs && reported(vocab_, ev.channel, ev.forced, ev.token);
  if (ev.content.empty() && ev.reasoning.empty() && !show_lp) return std::nullopt;
  json logprobs;
  if (meta_.endpoint == Endpoint::kChat) {
    if (show_lp) {
      logprobs = {{"content", json::array({chat_entry(vocab_, *ev.logprobs, meta_.top_logprobs)})},
                  {"refusal", nullptr}};
    }
    json delta = json::object();
    if (!ev.reasoning.empty()) delta["reasoning_content"] = ev.reasoning;
    if (meta_.tools) {
      // Text goes out until a call may begin; then each call as OpenAI
      // streams one: id, type and name first, then the arguments in pieces.
      text_ += ev.content;
      if (!stream_.begun()) {
        const std::size_t safe = tool_text_safe_end(text_, meta_.tool_format);
        if (safe > shown_) {
          delta["content"] = text_.substr(shown_, safe - shown_);
          shown_ = safe;
        }
      }
      std::vector<CallStream::Event> events;
      stream_.feed(text_, events);
      json calls = json::array();
      for (auto& e : events) {
        if (e.kind == CallStream::Event::Kind::kStart) {
          calls_ = true;
          calls.push_back({{"index", e.index},
                           {"id", tool_call_id()},
                           {"type", "function"},
                           {"function", {{"name", std::move(e.text)}, {"arguments", ""}}}});
        } else if (e.kind == CallStream::Event::Kind::kArguments) {
          calls.push_back({{"index", e.index}, {"function", {{"arguments", std::move(e.text)}}}});
        }
      }
      if (!calls.empty()) delta["tool_calls"] = std::move(calls);
      if (delta.empty() && !show_lp) return std::nullopt;
    } else if (!ev.content.empty()) {
      delta["content"] = ev.content;
    }
    return chunk({{"index", 0},
                  {"delta", std::move(delta)},
                  {"logprobs", std::move(logprobs)},
                  {"finish_reason", nullptr}});
  }
  if (show_lp) {
    LegacyLogprobs legacy;
    legacy.add(vocab_, *ev.logprobs, meta_.top_logprobs, text_offset_);
    logprobs = std::move(legacy).to_json();
  }
  return chunk({{"index", 0},
                {"text", ev.content},
                {"logprobs", std::move(logprobs)},
                {"finish_reason", nullptr}});
}

std::vector<json> ChunkWriter::tool_tail() {
  std::vector<json> out;
  if (!meta_.tools) return out;
  if (calls_) return out;  // the calls went out as they were written
  auto delta_chunk = [&](json delta) {
    return chunk({{"index", 0},
                  {"delta", std::move(delta)},
                  {"logprobs", nullptr},
                  {"finish_reason", nullptr}});
  };
  const ParsedOutput parsed = parse_tool_output(text_, meta_.tool_format);
  calls_ = !parsed.calls.empty();
  if (!calls_) {
    // No call after all: the held-back text is content.
    if (text_.size() > shown_) out.push_back(delta_chunk({{"content", text_.substr(shown_)}}));
    shown_ = text_.size();
    return out;
  }
  // As OpenAI streams a call: id, type and name first, then the arguments.
  const json calls = tool_calls_json(parsed.calls);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    json head = {{"index", i},
                 {"id", calls[i]["id"]},
                 {"type", "function"},
                 {"function", {{"name", calls[i]["function"]["name"]}, {"arguments", ""}}}};
    out.push_back(delta_chunk({{"tool_calls", json::array({std::move(head)})}}));
    json args = {{"index", i}, {"function", {{"arguments", calls[i]["function"]["arguments"]}}}};
    out.push_back(delta_chunk({{"tool_calls", json::array({std::move(args)})}}));
  }
  return out;
}

json ChunkWriter::closing(FinishReason finish) const {
  if (meta_.endpoint == Endpoint::kChat) {
    return chunk({{"index", 0},
                  {"delta", json::object()},
                  {"logprobs", nullptr},
                  {"finish_reason", finish_name(finish, calls_)}});
  }
  return chunk(
      {{"index", 0}, {"text", ""}, {"logprobs", nullptr}, {"finish_reason", finish_name(finish)}});
}

json ChunkWriter::usage(std::size_t prompt_tokens, std::size_t completion_tokens) const {
  json c = chunk(nullptr);
  c["usage"] = usage_json(prompt_tokens, completion_tokens);
  return c;
}

}  // namespace nextok::server
