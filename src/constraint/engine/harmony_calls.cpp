// The harmony call constraint (nextok/harmony.hpp). A turn is read token by
// token: headers are matched against a list of allowed spellings (text
// pieces between control tokens; a cursor per spelling still alive),
// message text is free until its terminator, and a call's arguments are a
// JsonConstraint of the named function. Every phase boundary is a control
// token, which no text token can be, so the mask of a phase never has to
// look into the next one: it is exact by construction.
#include <algorithm>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "constraint/engine/json_impl.hpp"
#include "constraint/engine/mask_bits.hpp"
#include "nextok/error.hpp"
#include "nextok/harmony.hpp"
#include "nextok/mask.hpp"

namespace nextok {

namespace {

enum class Kind : uint8_t { kAnalysis, kPreamble, kFinal, kCall };
enum class Phase : uint8_t { kHeader, kText, kAfterEnd, kArgs, kDone };

struct Piece {
  bool special = false;
  uint32_t token = 0;  // special
  std::string text;    // otherwise; never empty
};

struct Pattern {
  std::vector<Piece> pieces;  // always ends with <|message|>
  Kind kind = Kind::kAnalysis;
  uint32_t tool = 0;  // kCall
};

struct Cursor {
  uint32_t pattern;
  uint16_t piece;
  uint16_t offset;  // into a text piece
};

struct Outer {
  Phase phase = Phase::kHeader;
  bool first = true;  // the header of the first message (its role is in the prompt)
  Kind kind = Kind::kAnalysis;
  uint32_t tool = 0;
  std::vector<Cursor> alive;  // kHeader
  bool has_args = false;      // kArgs, and kDone after a call
  uint32_t arg_steps = 0;     // tokens the arguments took
  bool finished = false;
};

bool header_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ' ' || c == '=';
}

// Per vocabulary: the text tokens (free message text) and, for headers,
// the text tokens made only of header bytes, by their bytes.
struct HarmonyVocab {
  std::vector<uint32_t> text_mask;
  std::unordered_map<std::string_view, std::vector<uint32_t>> header_tokens;
  size_t longest = 0;

  explicit HarmonyVocab(const Vocabulary& v) : text_mask(bitmask_words(v.size()), 0) {
    for (uint32_t id = 0; id < v.size(); ++id) {
      const std::string_view b = v.bytes(id);
      if (b.empty() || v.is_special(id) || v.is_eos(id)) continue;
      bitmask_set(text_mask, id, true);
      if (std::all_of(b.begin(), b.end(), header_byte)) {
        header_tokens[b].push_back(id);
        longest = std::max(longest, b.size());
      }
    }
  }

  static std::shared_ptr<const HarmonyVocab> get(const std::shared_ptr<const TokenIndex>& index) {
    static std::mutex mu;
    static std::vector<std::pair<std::weak_ptr<const TokenIndex>, std::shared_ptr<HarmonyVocab>>>
        cache;
    std::lock_guard lock(mu);
    std::erase_if(cache, [](const auto& e) { return e.first.expired(); });
    for (const auto& [ix, hv] : cache)
      if (ix.lock() == index) return hv;
    auto hv = std::make_shared<HarmonyVocab>(index->vocab());
    cache.emplace_back(index, hv);
    return hv;
  }
};

}  // namespace

struct HarmonyCallGrammar::Impl {
  std::shared_ptr<const TokenIndex> index;
  HarmonyCallFormat f;
  HarmonyTokens t{};
  std::shared_ptr<const HarmonyVocab> hv;
  std::vector<Pattern> first, later;  // header spellings without / with the role
  std::vector<uint32_t> final_ends;   // <|return|> and EOS ids other than <|call|>
  bool call_is_eos = false;

  const std::vector<Pattern>& patterns(bool is_first) const { return is_first ? first : later; }

  void add(std::vector<Piece> pieces, Kind kind, uint32_t tool) {
    first.push_back({pieces, kind, tool});
    // After <|start|> the header names its role first.
    if (pieces.front().special)
      pieces.insert(pieces.begin(), Piece{false, 0, "assistant"});
    else
      pieces.front().text.insert(0, "assistant");
    later.push_back({std::move(pieces), kind, tool});
  }

  void build_patterns() {
    auto S = [](uint32_t id) { return Piece{true, id, {}}; };
    auto T = [](std::string s) { return Piece{false, 0, std::move(s)}; };
    add({S(t.channel), T("analysis"), S(t.message)}, Kind::kAnalysis, 0);
    add({S(t.channel), T("commentary"), S(t.message)}, Kind::kPreamble, 0);
    if (f.allow_final) add({S(t.channel), T("final"), S(t.message)}, Kind::kFinal, 0);
    for (uint32_t i = 0; i < f.tools.size(); ++i) {
      const std::string to = "to=functions." + f.tools[i].name;
      // The recipient in the channel header, as gpt-oss writes calls...
      add({S(t.channel), T("commentary " + to + " "), S(t.constrain), T("json"), S(t.message)},
          Kind::kCall, i);
      add({S(t.channel), T("commentary " + to + " json"), S(t.message)}, Kind::kCall, i);
      // ...or in the role header, as the chat template renders past calls.
      add({T(" " + to), S(t.channel), T("commentary json"), S(t.message)}, Kind::kCall, i);
      add({T(" " + to), S(t.channel), T("commentary "), S(t.constrain), T("json"), S(t.message)},
          Kind::kCall, i);
    }
  }

  std::vector<Cursor> start_cursors(bool is_first) const {
    std::vector<Cursor> c(patterns(is_first).size());
    for (uint32_t i = 0; i < c.size(); ++i) c[i] = {i, 0, 0};
    return c;
  }

  bool ends_final(uint32_t id) const {
    return std::find(final_ends.begin(), final_ends.end(), id) != final_ends.end();
  }
};

HarmonyTokens HarmonyTokens::find(const Vocabulary& vocab) {
  auto id = [&](const char* text) {
    const auto found = vocab.find(text);
    if (!found || !vocab.is_special(*found))
      throw Error(ErrorCode::kUnsupported, "vocabulary",
                  std::string("this vocabulary has no harmony control token ") + text +
                      " (gpt-oss's o200k_harmony has them)");
    return *found;
  };
  return {id("<|start|>"),     id("<|end|>"),  id("<|message|>"), id("<|channel|>"),
          id("<|constrain|>"), id("<|call|>"), id("<|return|>")};
}

std::shared_ptr<const HarmonyCallGrammar> HarmonyCallGrammar::build(
    std::shared_ptr<const TokenIndex> index, HarmonyCallFormat format) {
  if (!index)
    throw Error(ErrorCode::kInvalidArgument, "index", "HarmonyCallGrammar needs a TokenIndex");
  if (format.tools.empty() && !format.allow_final)
    throw Error(ErrorCode::kInvalidArgument, "tools",
                "a harmony turn without tools must be allowed a final answer");
  for (size_t i = 0; i < format.tools.size(); ++i) {
    const HarmonyTool& tool = format.tools[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (tool.name.empty() || tool.name.size() > 128 ||
        !std::all_of(tool.name.begin(), tool.name.end(),
                     [](char c) { return header_byte(c) && c != ' ' && c != '='; }))
      throw Error(ErrorCode::kInvalidArgument, at + ".name",
                  "a harmony function name is 1 to 128 bytes of A-Z a-z 0-9 _ - .");
    for (size_t k = 0; k < i; ++k)
      if (format.tools[k].name == tool.name)
        throw Error(ErrorCode::kInvalidArgument, at + ".name", "two tools are named " + tool.name);
    if (!tool.arguments)
      throw Error(ErrorCode::kInvalidArgument, at + ".arguments", "a tool needs a JSON grammar");
    if (&tool.arguments->impl().index->vocab() != &index->vocab())
      throw Error(ErrorCode::kInvalidArgument, at + ".arguments",
                  "the arguments grammar was built for another vocabulary");
  }
  const HarmonyTokens tokens = HarmonyTokens::find(index->vocab());
  std::shared_ptr<HarmonyCallGrammar> g(new HarmonyCallGrammar());
  g->impl_ = std::make_unique<Impl>();
  Impl& im = *g->impl_;
  im.index = std::move(index);
  im.f = std::move(format);
  im.t = tokens;
  im.hv = HarmonyVocab::get(im.index);
  im.build_patterns();
  const Vocabulary& v = im.index->vocab();
  im.call_is_eos = v.is_eos(tokens.call);
  im.final_ends.push_back(tokens.return_);
  for (const uint32_t e : v.eos_ids())
    if (e != tokens.call && e != tokens.return_) im.final_ends.push_back(e);
  return g;
}

HarmonyCallGrammar::~HarmonyCallGrammar() = default;

// --- HarmonyCallConstraint ------------------------------------------------------

struct HarmonyCallConstraint::State {
  std::vector<Outer> history;            // [0] = start
  std::unique_ptr<JsonConstraint> args;  // the call's arguments, while history has them
};

HarmonyCallConstraint::HarmonyCallConstraint(std::shared_ptr<const HarmonyCallGrammar> grammar)
    : grammar_(std::move(grammar)), state_(std::make_unique<State>()) {
  if (!grammar_)
    throw Error(ErrorCode::kInvalidArgument, "grammar", "HarmonyCallConstraint needs a grammar");
  reset();
}

HarmonyCallConstraint::HarmonyCallConstraint(const HarmonyCallConstraint& other)
    : grammar_(other.grammar_), state_(std::make_unique<State>()), finished_(other.finished_) {
  state_->history = other.state_->history;
  if (other.state_->args) state_->args = std::make_unique<JsonConstraint>(*other.state_->args);
}

HarmonyCallConstraint::~HarmonyCallConstraint() = default;

std::unique_ptr<ConstraintEngine> HarmonyCallConstraint::clone() const {
  return std::make_unique<HarmonyCallConstraint>(*this);
}

void HarmonyCallConstraint::reset() {
  Outer s;
  s.alive = grammar_->impl().start_cursors(true);
  state_->history.assign(1, std::move(s));
  state_->args.reset();
  finished_ = false;
}

size_t HarmonyCallConstraint::steps() const noexcept {
  return state_->history.size() - 1;
}

bool HarmonyCallConstraint::turn_ended() const noexcept {
  return state_->history.back().phase == Phase::kDone;
}

bool HarmonyCallConstraint::is_complete() const noexcept {
  const auto& g = grammar_->impl();
  const Outer& s = state_->history.back();
  if (finished_ || s.phase == Phase::kDone) return true;
  if (s.phase == Phase::kText && s.kind == Kind::kFinal)
    return std::any_of(g.final_ends.begin(), g.final_ends.end(),
                       [&](uint32_t id) { return g.index->vocab().is_eos(id); });
  if (s.phase == Phase::kArgs) return g.call_is_eos && state_->args->is_complete();
  return false;
}

bool HarmonyCallConstraint::can_continue() const {
  const auto& g = grammar_->impl();
  const Outer& s = state_->history.back();
  if (finished_ || s.phase == Phase::kDone) return false;
  if (s.phase == Phase::kArgs)
    return state_->args->can_continue() || (!g.call_is_eos && state_->args->is_complete());
  return true;
}

void HarmonyCallConstraint::step_mask(std::span<uint32_t> mask) {
  const auto& g = grammar_->impl();
  const Vocabulary& vocab = g.index->vocab();
  const size_t words = constraint::clear_mask(mask, vocab);
  const Outer& s = state_->history.back();
  if (finished_) {
    constraint::allow_eos(mask, vocab);
    return;
  }
  switch (s.phase) {
    case Phase::kHeader: {
      const auto& pats = g.patterns(s.first);
      for (const Cursor& c : s.alive) {
        const Piece& p = pats[c.pattern].pieces[c.piece];
        if (p.special) {
          bitmask_set(mask, p.token, true);
          continue;
        }
        const std::string_view rest = std::string_view(p.text).substr(c.offset);
        for (size_t n = 1; n <= std::min(rest.size(), g.hv->longest); ++n) {
          const auto it = g.hv->header_tokens.find(rest.substr(0, n));
          if (it == g.hv->header_tokens.end()) continue;
          for (const uint32_t id : it->second) bitmask_set(mask, id, true);
        }
      }
      break;
    }
    case Phase::kText:
      std::copy_n(g.hv->text_mask.begin(), words, mask.begin());
      if (s.kind == Kind::kFinal) {
        for (const uint32_t id : g.final_ends) bitmask_set(mask, id, true);
      } else {
        bitmask_set(mask, g.t.end, true);
      }
      break;
    case Phase::kAfterEnd:
      bitmask_set(mask, g.t.start, true);
      break;
    case Phase::kArgs:
      // The JSON mask holds text tokens only, and EOS when the value is
      // complete: the call ends with <|call|> instead.
      state_->args->step_mask(mask);
      for (const uint32_t e : vocab.eos_ids()) mask[e >> 5] &= ~(1u << (e & 31));
      if (state_->args->is_complete()) bitmask_set(mask, g.t.call, true);
      break;
    case Phase::kDone:
      constraint::allow_eos(mask, vocab);
      break;
  }
}

void HarmonyCallConstraint::advance(uint32_t token) {
  const auto& g = grammar_->impl();
  const Vocabulary& vocab = g.index->vocab();
  auto refuse = [&](const char* why) {
    throw Error(
        ErrorCode::kInvalidArgument, "token",
        "token " + std::to_string(token) + " is not allowed by the harmony call format " + why);
  };
  if (finished_) refuse("after EOS");
  if (token >= vocab.size() || vocab.bytes(token).empty()) refuse("(no such token)");
  Outer next = state_->history.back();
  const bool eos = vocab.is_eos(token);
  bool args_step = false;
  switch (next.phase) {
    case Phase::kHeader: {
      const auto& pats = g.patterns(next.first);
      std::vector<Cursor> alive;
      const Pattern* done = nullptr;
      const bool special = vocab.is_special(token) || eos;
      const std::string_view bytes = vocab.bytes(token);
      for (Cursor c : next.alive) {
        const Pattern& pat = pats[c.pattern];
        const Piece& p = pat.pieces[c.piece];
        if (p.special) {
          if (!special || p.token != token) continue;
          if (++c.piece == pat.pieces.size()) {
            done = &pat;
            continue;
          }
        } else {
          if (special || std::string_view(p.text).substr(c.offset).substr(0, bytes.size()) != bytes)
            continue;
          c.offset = static_cast<uint16_t>(c.offset + bytes.size());
          if (c.offset == p.text.size()) {
            ++c.piece;
            c.offset = 0;
          }
        }
        alive.push_back(c);
      }
      if (done) {
        next.alive.clear();
        next.kind = done->kind;
        next.tool = done->tool;
        if (done->kind == Kind::kCall) {
          next.phase = Phase::kArgs;
          next.has_args = true;
          next.arg_steps = 0;
        } else {
          next.phase = Phase::kText;
        }
      } else {
        if (alive.empty()) refuse("in a message header");
        next.alive = std::move(alive);
      }
      break;
    }
    case Phase::kText:
      if (next.kind == Kind::kFinal && g.ends_final(token)) {
        next.phase = Phase::kDone;
      } else if (next.kind != Kind::kFinal && token == g.t.end) {
        next.phase = Phase::kAfterEnd;
      } else if (!((g.hv->text_mask[token >> 5] >> (token & 31)) & 1u)) {
        refuse("in message text (control tokens end a message)");
      }
      break;
    case Phase::kAfterEnd:
      if (token != g.t.start) refuse("after <|end|> (expected <|start|>)");
      next.phase = Phase::kHeader;
      next.first = false;
      next.alive = g.start_cursors(false);
      break;
    case Phase::kArgs:
      if (token == g.t.call) {
        if (!state_->args->is_complete()) refuse("before the arguments are complete");
        next.phase = Phase::kDone;
      } else if (vocab.is_special(token) || eos) {
        refuse("inside the arguments");
      } else {
        args_step = true;
        ++next.arg_steps;
      }
      break;
    case Phase::kDone:
      if (!eos) refuse("after the turn ended");
      break;
  }
  // Only now is the step certain, apart from the arguments' own check.
  const bool entering_args =
      next.phase == Phase::kArgs && state_->history.back().phase != Phase::kArgs;
  if (entering_args)
    state_->args = std::make_unique<JsonConstraint>(g.f.tools[next.tool].arguments);
  if (args_step) state_->args->advance(token);  // throws, unchanged, if not allowed
  next.finished = eos;
  state_->history.push_back(std::move(next));
  finished_ = eos;
}

void HarmonyCallConstraint::rollback(size_t n) {
  if (n > steps()) {
    throw Error(ErrorCode::kInvalidArgument, "n",
                "cannot roll back " + std::to_string(n) + " steps; only " +
                    std::to_string(steps()) + " taken");
  }
  const uint32_t was = state_->history.back().arg_steps;
  state_->history.resize(state_->history.size() - n);
  const Outer& s = state_->history.back();
  if (!s.has_args) {
    state_->args.reset();
  } else if (state_->args) {
    state_->args->rollback(was - s.arg_steps);
  }
  finished_ = s.finished;
}

}  // namespace nextok
