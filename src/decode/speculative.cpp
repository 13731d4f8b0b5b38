// The n-gram drafter and the stochastic acceptance rule.
#include "nextok/speculative.hpp"

#include <algorithm>

#include "nextok/error.hpp"

namespace nextok {

namespace {

float prob_of(const Distribution& d, std::int32_t id) {
  const auto it = std::lower_bound(d.ids.begin(), d.ids.end(), id);
  return it != d.ids.end() && *it == id ? d.probs[static_cast<size_t>(it - d.ids.begin())] : 0.0f;
}

}  // namespace

NgramDrafter::NgramDrafter(std::size_t max_ngram, std::size_t min_ngram)
    : max_ngram_(max_ngram), min_ngram_(min_ngram) {
  if (min_ngram < 1 || min_ngram > max_ngram || max_ngram > 64) {
    throw Error(ErrorCode::kInvalidArgument, "ngram", "n-gram sizes need 1 <= min <= max <= 64");
  }
}

void NgramDrafter::propose(std::span<const std::int32_t> context, std::size_t k, Draft& out) {
  out.clear();
  const size_t n_ctx = context.size();
  if (k == 0) return;
  for (size_t n = std::min(max_ngram_, n_ctx > 0 ? n_ctx - 1 : 0); n >= min_ngram_ && n > 0; --n) {
    const auto tail = context.subspan(n_ctx - n);
    // Most recent earlier occurrence: the match must end before the tail does.
    for (size_t end = n_ctx - 1; end >= n; --end) {
      if (!std::equal(tail.begin(), tail.end(), context.begin() + static_cast<long>(end - n))) {
        continue;
      }
      const size_t take = std::min(k, n_ctx - end);
      out.tokens.assign(context.begin() + static_cast<long>(end),
                        context.begin() + static_cast<long>(end + take));
      return;
    }
  }
}

Acceptance accept_draft_token(const Distribution& p, const Distribution* q, std::int32_t draft,
                              Pcg32& rng) {
  const double pd = prob_of(p, draft);
  const double qd = q != nullptr ? prob_of(*q, draft) : 1.0;
  const float u = rng.next_f32();
  if (qd > 0.0 && static_cast<double>(u) * qd < pd) return {draft, true};
  // Rejected: the residual max(0, p − q) lives on p's support.
  double total = 0.0;
  auto residual = [&](size_t i) {
    const double qi = q != nullptr ? prob_of(*q, p.ids[i]) : (p.ids[i] == draft ? 1.0 : 0.0);
    return std::max(0.0, static_cast<double>(p.probs[i]) - qi);
  };
  for (size_t i = 0; i < p.ids.size(); ++i) total += residual(i);
  const double target = static_cast<double>(rng.next_f32()) * total;
  if (total <= 0.0) {
    // p == q to float precision: any draw from p is exact enough.
    double acc = 0.0, t = static_cast<double>(u);
    for (size_t i = 0; i < p.ids.size(); ++i) {
      acc += p.probs[i];
      if (acc > t) return {p.ids[i], p.ids[i] == draft};
    }
    return {p.ids.back(), p.ids.back() == draft};
  }
  double acc = 0.0;
  std::int32_t last = draft;
  for (size_t i = 0; i < p.ids.size(); ++i) {
    const double r = residual(i);
    if (r <= 0.0) continue;
    acc += r;
    last = p.ids[i];
    if (acc > target) return {last, false};
  }
  return {last, last == draft};
}

}  // namespace nextok
