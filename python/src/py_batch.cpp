// Batch bitmask work: fill_next_token_bitmasks on the worker pool with the
// GIL released, and applying a bitmask to CPU logits in place.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "worker_pool.hpp"

namespace nextok::py {

namespace {

std::vector<std::size_t> rows_of(const std::optional<std::vector<std::int64_t>>& indices,
                                 std::size_t n, std::size_t rows, const char* what) {
  std::vector<std::size_t> out;
  if (!indices) {
    if (n > rows) {
      throw nb::value_error((std::string(what) + ": " + std::to_string(n) +
                             " entries but the bitmask has " + std::to_string(rows) + " rows")
                                .c_str());
    }
    out.resize(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = i;
    return out;
  }
  if (indices->size() != n) {
    throw nb::value_error((std::string(what) + ": indices has " + std::to_string(indices->size()) +
                           " entries for " + std::to_string(n))
                              .c_str());
  }
  for (std::int64_t i : *indices) {
    if (i < 0 || static_cast<std::size_t>(i) >= rows)
      throw nb::index_error(("index " + std::to_string(i) + " outside the bitmask's " +
                             std::to_string(rows) + " rows")
                                .c_str());
    out.push_back(static_cast<std::size_t>(i));
  }
  std::vector<std::size_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw nb::value_error("indices must be distinct (two fills would race on one row)");
  return out;
}

void fill_batch(const std::vector<nb::object>& matchers, const MutArray& bitmask,
                const std::optional<std::vector<std::int64_t>>& indices,
                std::optional<std::size_t> threads) {
  const BitmaskView v = bitmask_view(bitmask, "bitmask");
  std::vector<Matcher*> ms;
  ms.reserve(matchers.size());
  for (const auto& o : matchers) {
    if (!nb::isinstance<Matcher>(o)) throw nb::type_error("matchers must all be nextok.Matcher");
    Matcher* m = nb::inst_ptr<Matcher>(o);
    if (m->words() != v.words) {
      throw nb::value_error(("bitmask rows have " + std::to_string(v.words) +
                             " words; a matcher's vocabulary needs " + std::to_string(m->words()))
                                .c_str());
    }
    ms.push_back(m);
  }
  std::vector<Matcher*> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw nb::value_error("a matcher appears twice (its state would race)");
  const auto rows = rows_of(indices, ms.size(), v.rows, "matchers");
  if (threads && *threads == 0) throw nb::value_error("threads must be >= 1");
  const std::size_t n_threads = threads.value_or(std::min<std::size_t>(hardware_threads(), 8));
  nb::gil_scoped_release release;
  parallel_for(ms.size(), n_threads,
               [&](std::size_t i) { ms[i]->constraint.step_mask(v.row(rows[i])); });
}

template <class T>
void mask_row(T* row, std::size_t vocab, std::span<const std::uint32_t> words, T masked) {
  const std::size_t covered = std::min(vocab, words.size() * 32);
  for (std::size_t w = 0; w * 32 < covered; ++w) {
    const std::uint32_t bits = words[w];
    if (bits == 0xFFFFFFFFu) continue;
    const std::size_t end = std::min(covered, w * 32 + 32);
    for (std::size_t t = w * 32; t < end; ++t)
      if (((bits >> (t & 31)) & 1u) == 0) row[t] = masked;
  }
  for (std::size_t t = covered; t < vocab; ++t) row[t] = masked;  // past the bitmask
}

void apply_bitmask(const MutArray& logits, const MutArray& bitmask,
                   const std::optional<std::vector<std::int64_t>>& indices) {
  const MutLogits l = mutable_logits(logits, "logits");
  const BitmaskView v = bitmask_view(bitmask, "bitmask");
  std::vector<std::size_t> rows;
  if (indices) {
    rows = rows_of(indices, indices->size(), std::min(l.rows, v.rows), "indices");
  } else {
    if (l.rows != v.rows) {
      throw nb::value_error(("logits has " + std::to_string(l.rows) + " rows, bitmask " +
                             std::to_string(v.rows))
                                .c_str());
    }
    rows.resize(l.rows);
    for (std::size_t i = 0; i < l.rows; ++i) rows[i] = i;
  }
  nb::gil_scoped_release release;
  for (std::size_t r : rows) {
    if (l.dtype == DType::kF32) {
      mask_row(static_cast<float*>(l.data) + r * l.vocab, l.vocab, v.row(r),
               -std::numeric_limits<float>::infinity());
    } else {
      mask_row(static_cast<std::uint16_t*>(l.data) + r * l.vocab, l.vocab, v.row(r),
               static_cast<std::uint16_t>(0xFF80u));  // bfloat16 -inf
    }
  }
}

}  // namespace

void bind_batch(nb::module_& m) {
  m.def("fill_next_token_bitmasks", &fill_batch, nb::arg("matchers"), nb::arg("bitmask"),
        nb::arg("indices") = nb::none(), nb::arg("threads") = nb::none(),
        "Fills bitmask row indices[i] (default: row i) for matchers[i], on up to `threads` "
        "threads (default: min(cores, 8)) with the GIL released. Matchers must be distinct.");
  m.def("_apply_token_bitmask_inplace", &apply_bitmask, nb::arg("logits"), nb::arg("bitmask"),
        nb::arg("indices") = nb::none(),
        "CPU float32/bfloat16 logits: sets every token whose bit is clear to -inf.");
}

}  // namespace nextok::py
