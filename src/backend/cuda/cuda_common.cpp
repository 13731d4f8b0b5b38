// The parts of the CUDA API that need no CUDA toolkit: parameter packing,
// status mapping and DLPack import.
#include <cstring>
#include <string>

#include "backend/cuda/launch.hpp"
#include "nextok/cuda.hpp"
#include "nextok/error.hpp"

namespace nextok {
namespace {

// DLPack's C ABI (dlpack.h, stable since v0.5): only the fields read here.
struct DLDevice {
  std::int32_t device_type;  // kDLCPU = 1, kDLCUDA = 2
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // kDLFloat = 2, kDLBfloat = 4
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;
  std::uint64_t byte_offset;
};

}  // namespace

LogitsView logits_from_dlpack(const void* dl_tensor, void* stream) {
  if (dl_tensor == nullptr) throw Error(ErrorCode::kShapeMismatch, "logits", "null DLTensor");
  DLTensor t;
  std::memcpy(&t, dl_tensor, sizeof t);
  LogitsView v;
  if (t.dtype.lanes != 1)
    throw Error(ErrorCode::kUnsupported, "dtype", "vector dtypes are not supported");
  if (t.dtype.code == 2 && t.dtype.bits == 32) {
    v.dtype = DType::kF32;
  } else if (t.dtype.code == 4 && t.dtype.bits == 16) {
    v.dtype = DType::kBF16;
  } else {
    throw Error(ErrorCode::kUnsupported, "dtype", "DLPack logits must be float32 or bfloat16");
  }
  if (t.device.device_type == 1) {
    v.device = Device::kCPU;
  } else if (t.device.device_type == 2) {
    v.device = Device::kCUDA;
  } else {
    throw Error(ErrorCode::kUnsupported, "device", "DLPack logits must be on CPU or CUDA");
  }
  if (t.ndim != 1 && t.ndim != 2)
    throw Error(ErrorCode::kShapeMismatch, "logits",
                "DLPack logits must be [V] or [B, V], got ndim " + std::to_string(t.ndim));
  v.rows = t.ndim == 2 ? t.shape[0] : 1;
  v.vocab = t.shape[t.ndim - 1];
  if (t.strides != nullptr) {
    const bool inner = t.strides[t.ndim - 1] == 1;
    const bool outer = t.ndim == 1 || t.strides[0] == v.vocab || v.rows == 1;
    if (!inner || !outer)
      throw Error(ErrorCode::kUnsupported, "strides", "DLPack logits must be contiguous");
  }
  v.data = static_cast<const char*>(t.data) + t.byte_offset;
  v.stream = stream;
  return v;
}

namespace cuda {

ErrorCode row_status_error(RowStatus s) noexcept {
  switch (s) {
    case RowStatus::kNanLogits:
      return ErrorCode::kNanLogits;
    case RowStatus::kNoViableToken:
      return ErrorCode::kNoViableToken;
    case RowStatus::kNonFiniteLogits:
      return ErrorCode::kNonFiniteLogits;
    case RowStatus::kBadHistory:
    case RowStatus::kInvalidParams:
    case RowStatus::kOk:
      break;
  }
  return ErrorCode::kInvalidArgument;
}

namespace detail {
void require_gpu_filter_order(FilterOrder order) {
  if (order == FilterOrder::kMlxLm)
    throw Error(ErrorCode::kUnsupported, "filter_order",
                "the CUDA pipeline implements the spec and top_k_first filter orders only");
  if (order != FilterOrder::kSpec && order != FilterOrder::kTopKFirst)
    throw Error(ErrorCode::kInvalidArgument, "filter_order", "unknown filter order");
}
}  // namespace detail

RowParams RowParams::from(const SamplerConfig& c, const PenaltyConfig& p) {
  detail::require_gpu_filter_order(c.filter_order);
  RowParams r;
  // The kernels sample for any temperature > 0: pass the greedy range
  // (0, kGreedyTemperature) as 0, as the host path treats it.
  r.temperature = c.sampling_active() ? c.temperature : 0.0f;
  r.top_p = c.top_p;
  r.top_k = c.top_k;
  r.min_p = c.min_p;
  r.repetition_penalty = p.repetition_penalty;
  r.presence_penalty = p.presence_penalty;
  r.frequency_penalty = p.frequency_penalty;
  r.window = p.window;
  r.filter_order = c.filter_order;
  return r;
}

}  // namespace cuda
}  // namespace nextok
