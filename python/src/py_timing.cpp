// nextok._nextok._native_timing: the same matcher calls timed inside C++,
// the baseline bench/python_overhead.py subtracts to get the per-call cost
// of the Python boundary. Not part of the public API.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"

namespace nextok::py {

namespace {

// Average ns per call over `blocks` blocks of `block` calls each.
template <class F>
std::vector<double> time_blocks(std::size_t blocks, std::size_t block, F&& f) {
  std::vector<double> out;
  out.reserve(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < block; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    out.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                  static_cast<double>(block));
  }
  return out;
}

nb::dict native_timing(Matcher& m, std::uint32_t token, const MutArray& bitmask,
                       std::size_t blocks, std::size_t block) {
  const BitmaskView v = bitmask_view(bitmask, "bitmask");
  if (v.words != m.words()) throw nb::value_error("bitmask width does not match the vocabulary");
  std::vector<double> accept, fill;
  {
    nb::gil_scoped_release release;
    accept = time_blocks(blocks, block, [&] {
      m.constraint.advance(token);
      m.constraint.rollback(1);
    });
    fill = time_blocks(blocks, block, [&] { m.constraint.step_mask(v.row(0)); });
  }
  nb::dict d;
  d["accept_rollback_ns"] = accept;
  d["fill_ns"] = fill;
  return d;
}

}  // namespace

void bind_timing(nb::module_& m) {
  m.def("_native_timing", &native_timing, nb::arg("matcher"), nb::arg("token"),
        nb::arg("bitmask"), nb::arg("blocks"), nb::arg("block"),
        "Benchmark baseline: per-call ns of accept_token+rollback(1) and of a bitmask fill, "
        "timed in C++ (one average per block).");
}

}  // namespace nextok::py
