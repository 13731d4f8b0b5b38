// nextok.Sampler (one request's sampling state) and nextok.sample (a
// stateless batch draw over [B, V] logits with per-row seeds).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unordered_map.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "nextok/batch_sampler.hpp"
#include "nextok/error.hpp"
#include "nextok/sampler.hpp"

namespace nextok::py {

namespace {

LogitsView one_row(const AnyArray& logits) {
  const LogitsView v = logits_view(logits, "logits");
  if (v.rows != 1)
    throw nb::value_error("logits must be one row [V] (use nextok.sample for [B, V])");
  return v;
}

std::span<const std::uint32_t> mask_of(const std::optional<AnyArray>& mask) {
  return mask ? bitmask_row(*mask, "mask") : std::span<const std::uint32_t>{};
}

struct Step {
  std::int32_t token = 0;
  std::optional<float> logprob;
  std::vector<std::pair<std::int32_t, float>> top_logprobs;
};

Step to_step(const StepResult& r) {
  Step s;
  s.token = r.token;
  if (r.logprobs) {
    s.logprob = r.logprobs->token_logprob;
    for (const auto& t : r.logprobs->top) s.top_logprobs.emplace_back(t.token_id, t.logprob);
  }
  return s;
}

struct PySampler {
  Configs configs;
  Sampler sampler;
  explicit PySampler(Configs c) : configs(c), sampler(c.sampler, c.penalties) {}
};

// One pool for every nextok.sample call, never destroyed: its threads must
// not be joined during interpreter shutdown.
RowPool& row_pool() {
  static RowPool* pool = new RowPool();
  return *pool;
}

struct SampleOutput {
  nb::object tokens, logprobs, top_ids, top_logprobs, distribution, status;
};

// Row b's first draw equals Sampler(seed=seeds[b]).sample(row b).
SampleOutput sample_batch(const AnyArray& logits, const std::optional<AnyArray>& mask,
                          const Configs& c, nb::handle seed,
                          const std::optional<std::vector<std::vector<std::int32_t>>>& histories,
                          bool return_distribution) {
  const LogitsView view = logits_view(logits, "logits");
  const auto rows = static_cast<std::size_t>(view.rows);
  const auto vocab = static_cast<std::size_t>(view.vocab);
  std::vector<std::uint64_t> seeds(rows, c.sampler.seed_or_default());
  if (!seed.is_none()) {
    if (nb::isinstance<nb::int_>(seed)) {
      seeds.assign(rows, nb::cast<std::uint64_t>(seed));
    } else {
      seeds = nb::cast<std::vector<std::uint64_t>>(seed);
      if (seeds.size() != rows)
        throw nb::value_error(("seed has " + std::to_string(seeds.size()) + " entries for " +
                               std::to_string(rows) + " rows")
                                  .c_str());
    }
  }
  if (histories && histories->size() != rows)
    throw nb::value_error("histories must have one list per row");
  BitmaskView masks;
  if (mask) {
    masks = bitmask_view_ro(*mask, "mask");
    if (masks.rows != rows)
      throw nb::value_error(("mask has " + std::to_string(masks.rows) + " rows for " +
                             std::to_string(rows) + " logits rows")
                                .c_str());
  }
  const std::uint32_t k = c.sampler.top_logprobs_k;
  std::vector<std::int32_t> tokens(rows);
  std::vector<float> chosen(k > 0 ? rows : 0);
  std::vector<std::int32_t> top_ids(rows * k);
  std::vector<float> top_lp(rows * k);
  std::vector<float> dist(return_distribution ? rows * vocab : 0);
  {
    nb::gil_scoped_release release;
    // Rows are independent: they run on the shared pool (every core; a row
    // each at a time), each exactly as it would alone.
    row_pool().run(rows, [&](std::size_t b, Workspace& ws) {
      const LogitsView row = view.row(static_cast<std::int64_t>(b));
      const std::span<const std::uint32_t> mrow =
          mask ? std::span<const std::uint32_t>(masks.row(b)) : std::span<const std::uint32_t>{};
      const std::span<const std::int32_t> hist =
          histories ? std::span<const std::int32_t>((*histories)[b])
                    : std::span<const std::int32_t>{};
      const StepInput in{row, mrow, hist};
      Pcg32 rng = Pcg32::for_seed(seeds[b]);
      if (!c.sampler.sampling_active() && !c.penalties.penalties_active())
        tokens[b] = mrow.empty() ? argmax(row) : apply_mask_argmax(row, mrow);
      else if (c.sampler.sampling_active())
        tokens[b] = sample_token(in, c.sampler, c.penalties, rng, ws);
      else
        tokens[b] = argmax_with_penalties(in, c.penalties, ws);
      if (k > 0) {
        const auto lp = compute_top_logprobs(row, tokens[b], k);
        chosen[b] = lp->token_logprob;
        for (std::size_t j = 0; j < lp->top.size() && j < k; ++j) {
          top_ids[b * k + j] = lp->top[j].token_id;
          top_lp[b * k + j] = lp->top[j].logprob;
        }
      }
      if (return_distribution) {
        sampling_distribution(in, c.sampler, c.penalties, ws)
            .to_dense(std::span<float>(dist.data() + b * vocab, vocab));
      }
    });
  }
  SampleOutput out;
  out.tokens = nb::cast(to_numpy(std::move(tokens), {rows}));
  out.logprobs = k > 0 ? nb::cast(to_numpy(std::move(chosen), {rows})) : nb::none();
  out.top_ids = k > 0 ? nb::cast(to_numpy(std::move(top_ids), {rows, k})) : nb::none();
  out.top_logprobs = k > 0 ? nb::cast(to_numpy(std::move(top_lp), {rows, k})) : nb::none();
  out.distribution =
      return_distribution ? nb::cast(to_numpy(std::move(dist), {rows, vocab})) : nb::none();
  out.status = nb::none();
  return out;
}

}  // namespace

Configs make_configs(float temperature, float top_p, std::int32_t top_k, float min_p,
                     std::optional<std::uint64_t> seed, std::uint32_t top_logprobs,
                     const std::string& filter_order, float repetition_penalty,
                     float presence_penalty, float frequency_penalty,
                     const std::optional<std::unordered_map<std::int32_t, float>>& logit_bias,
                     std::uint32_t penalty_window) {
  Configs c;
  c.sampler.temperature = temperature;
  c.sampler.top_p = top_p;
  c.sampler.top_k = top_k;
  c.sampler.min_p = min_p;
  c.sampler.seed = seed;
  c.sampler.top_logprobs_k = top_logprobs;
  c.sampler.filter_order = parse_filter_order(filter_order.c_str());
  c.penalties.repetition_penalty = repetition_penalty;
  c.penalties.presence_penalty = presence_penalty;
  c.penalties.frequency_penalty = frequency_penalty;
  if (logit_bias) {
    for (const auto& [id, bias] : *logit_bias) c.penalties.logit_bias.emplace_back(id, bias);
    std::sort(c.penalties.logit_bias.begin(), c.penalties.logit_bias.end());
  }
  c.penalties.window = penalty_window;
  c.sampler.validate();
  c.penalties.validate();
  return c;
}

void bind_sampler(nb::module_& m) {
  nb::class_<Step>(m, "SampleStep", "One Sampler.step result.")
      .def_ro("token", &Step::token, "The chosen token id.")
      .def_ro("logprob", &Step::logprob, "Its log-probability under the raw logits, if asked.")
      .def_ro("top_logprobs", &Step::top_logprobs,
              "The top_logprobs most likely (id, logprob) pairs, descending.")
      .def("__repr__",
           [](const Step& s) { return "SampleStep(token=" + std::to_string(s.token) + ")"; });

  nb::class_<SampleOutput>(m, "SampleOutput", "The result of nextok.sample.")
      .def_ro("tokens", &SampleOutput::tokens, "int32 [B] token ids.")
      .def_ro("logprobs", &SampleOutput::logprobs, "float32 [B] chosen logprobs, or None.")
      .def_ro("top_ids", &SampleOutput::top_ids, "int32 [B, k] top ids, or None.")
      .def_ro("top_logprobs", &SampleOutput::top_logprobs, "float32 [B, k], or None.")
      .def_ro("distribution", &SampleOutput::distribution,
              "float32 [B, V] post-filter sampling distribution, or None.")
      .def_ro("status", &SampleOutput::status,
              "CUDA logits only: int32 [B] per-row status (0 ok, 1 NaN, 2 nothing viable, 3 "
              "+inf, 4 bad history; failed rows have token -1); None on the CPU, which raises.")
      .def(
          "__init__",
          [](SampleOutput* self, nb::object tokens, nb::object logprobs, nb::object top_ids,
             nb::object top_logprobs, nb::object distribution, nb::object status) {
            new (self)
                SampleOutput{std::move(tokens),       std::move(logprobs),     std::move(top_ids),
                             std::move(top_logprobs), std::move(distribution), std::move(status)};
          },
          nb::arg("tokens"), nb::arg("logprobs").none(), nb::arg("top_ids").none(),
          nb::arg("top_logprobs").none(), nb::arg("distribution").none(), nb::arg("status").none());

#define NEXTOK_SAMPLING_ARGS                                                          \
  nb::arg("temperature") = 0.0f, nb::arg("top_p") = 1.0f, nb::arg("top_k") = 0,       \
  nb::arg("min_p") = 0.0f, nb::arg("seed") = nb::none(), nb::arg("top_logprobs") = 0, \
  nb::arg("filter_order") = "spec", nb::arg("repetition_penalty") = 1.0f,             \
  nb::arg("presence_penalty") = 0.0f, nb::arg("frequency_penalty") = 0.0f,            \
  nb::arg("logit_bias") = nb::none(), nb::arg("penalty_window") = kDefaultPenaltyWindow

  nb::class_<PySampler>(m, "Sampler",
                        "One request's sampler: the configuration, a seeded PCG32 stream, the "
                        "penalty window and scratch memory. temperature 0 is greedy. A bad "
                        "parameter raises NextokError naming it.")
      .def(
          "__init__",
          [](PySampler* self, float temperature, float top_p, std::int32_t top_k, float min_p,
             std::optional<std::uint64_t> seed, std::uint32_t top_logprobs,
             const std::string& filter_order, float repetition_penalty, float presence_penalty,
             float frequency_penalty,
             const std::optional<std::unordered_map<std::int32_t, float>>& logit_bias,
             std::uint32_t penalty_window) {
            new (self) PySampler(make_configs(temperature, top_p, top_k, min_p, seed, top_logprobs,
                                              filter_order, repetition_penalty, presence_penalty,
                                              frequency_penalty, logit_bias, penalty_window));
          },
          nb::kw_only(), NEXTOK_SAMPLING_ARGS)
      .def(
          "sample",
          [](PySampler& s, const AnyArray& logits, const std::optional<AnyArray>& mask) {
            const LogitsView row = one_row(logits);
            const auto words = mask_of(mask);
            nb::gil_scoped_release release;
            return s.sampler.next(row, words).token;
          },
          nb::arg("logits"), nb::arg("mask") = nb::none(),
          "Chooses the next token from one float32/bfloat16 row [V] (zero-copy), optionally "
          "restricted by an int32 bitmask row, and records it in the penalty window.")
      .def(
          "step",
          [](PySampler& s, const AnyArray& logits, const std::optional<AnyArray>& mask) {
            const LogitsView row = one_row(logits);
            const auto words = mask_of(mask);
            nb::gil_scoped_release release;
            return to_step(s.sampler.next(row, words));
          },
          nb::arg("logits"), nb::arg("mask") = nb::none(),
          "As sample(), returning a SampleStep with the logprobs asked for by top_logprobs.")
      .def(
          "distribution",
          [](PySampler& s, const AnyArray& logits, const std::optional<AnyArray>& mask) {
            const LogitsView row = one_row(logits);
            const auto words = mask_of(mask);
            Distribution d;
            {
              nb::gil_scoped_release release;
              d = s.sampler.distribution(row, words);
            }
            const std::size_t n = d.ids.size();
            return std::make_pair(to_numpy(std::move(d.ids), {n}),
                                  to_numpy(std::move(d.probs), {n}));
          },
          nb::arg("logits"), nb::arg("mask") = nb::none(),
          "The (ids, probs) distribution sample() would draw from now; records nothing.")
      .def(
          "accept", [](PySampler& s, std::int32_t token) { s.sampler.accept(token); },
          nb::arg("token"), "Records a token chosen elsewhere in the penalty window.")
      .def(
          "reset",
          [](PySampler& s) { s.sampler = Sampler(s.configs.sampler, s.configs.penalties); },
          "Restarts the random stream and clears the penalty window.")
      .def_prop_ro(
          "history",
          [](const PySampler& s) {
            auto h = s.sampler.history();
            return std::vector<std::int32_t>(h.begin(), h.end());
          },
          "The penalty window, oldest first.");

  m.def(
      "_sample_cpu",
      [](const AnyArray& logits, const std::optional<AnyArray>& mask, float temperature,
         float top_p, std::int32_t top_k, float min_p, nb::object seed, std::uint32_t top_logprobs,
         const std::string& filter_order, float repetition_penalty, float presence_penalty,
         float frequency_penalty,
         const std::optional<std::unordered_map<std::int32_t, float>>& logit_bias,
         std::uint32_t penalty_window,
         const std::optional<std::vector<std::vector<std::int32_t>>>& histories,
         bool return_distribution) {
        const Configs c = make_configs(temperature, top_p, top_k, min_p, std::nullopt, top_logprobs,
                                       filter_order, repetition_penalty, presence_penalty,
                                       frequency_penalty, logit_bias, penalty_window);
        return sample_batch(logits, mask, c, seed, histories, return_distribution);
      },
      nb::arg("logits"), nb::arg("mask") = nb::none(), nb::kw_only(), NEXTOK_SAMPLING_ARGS,
      nb::arg("histories") = nb::none(), nb::arg("return_distribution") = false,
      "Draws one token per row of float32/bfloat16 logits [B, V] (or [V]). seed: None (the "
      "default seed), an int for every row, or one int per row; row b's token equals "
      "Sampler(seed=seed[b], ...).sample(logits[b]). mask: int32 bitmask [B, ceil(V/32)]. "
      "histories: each row's generated tokens for the penalties. Returns a SampleOutput.");
#undef NEXTOK_SAMPLING_ARGS
}

}  // namespace nextok::py
