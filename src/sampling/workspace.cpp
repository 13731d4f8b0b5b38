#include "sampling/workspace.hpp"

#include "backend/cpu/kernels.hpp"

namespace nextok {

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;

void Workspace::Impl::reserve(std::size_t vocab) {
  if (w.size() == vocab) return;
  w.resize(vocab);
  e.resize(vocab);
  block_sums.resize((vocab + cpu::kSumBlock - 1) / cpu::kSumBlock);
  indices.resize(vocab);
  cand.reserve(vocab);
}

void Distribution::to_dense(std::span<float> dense) const {
  std::fill(dense.begin(), dense.end(), 0.0f);
  for (std::size_t i = 0; i < ids.size(); ++i) dense[static_cast<std::size_t>(ids[i])] = probs[i];
}

}  // namespace nextok
