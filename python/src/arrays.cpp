// Array checks for the extension (arrays.hpp).
#include "arrays.hpp"

#include <string>

namespace nextok::py {

namespace {

std::string dtype_str(nb::dlpack::dtype d) {
  const char* code = "?";
  switch (static_cast<nb::dlpack::dtype_code>(d.code)) {
    case nb::dlpack::dtype_code::Int:
      code = "int";
      break;
    case nb::dlpack::dtype_code::UInt:
      code = "uint";
      break;
    case nb::dlpack::dtype_code::Float:
      code = "float";
      break;
    case nb::dlpack::dtype_code::Bfloat:
      code = "bfloat";
      break;
    case nb::dlpack::dtype_code::Complex:
      code = "complex";
      break;
    case nb::dlpack::dtype_code::Bool:
      code = "bool";
      break;
    default:
      code = "float8/other ";
      break;
  }
  return code + std::to_string(d.bits);
}

template <class A>
void require_cpu_2d(const A& a, const char* name) {
  if (a.device_type() != nb::device::cpu::value) {
    throw nb::value_error((std::string(name) + " must be on the CPU (got a device array)").c_str());
  }
  if (a.ndim() != 1 && a.ndim() != 2) {
    throw nb::value_error((std::string(name) + " must be 1-D [N] or 2-D [B, N], got " +
                           std::to_string(a.ndim()) + " dimensions")
                              .c_str());
  }
  const bool contiguous =
      a.ndim() == 1 ? (a.shape(0) <= 1 || a.stride(0) == 1)
                    : ((a.shape(1) <= 1 || a.stride(1) == 1) &&
                       (a.shape(0) <= 1 || a.stride(0) == static_cast<std::int64_t>(a.shape(1))));
  if (!contiguous) {
    throw nb::value_error(
        (std::string(name) + " must be C-contiguous (numpy.ascontiguousarray / .contiguous())")
            .c_str());
  }
}

template <class A>
std::size_t rows_of(const A& a) {
  return a.ndim() == 1 ? 1 : a.shape(0);
}
template <class A>
std::size_t cols_of(const A& a) {
  return a.ndim() == 1 ? a.shape(0) : a.shape(1);
}

template <class A>
DType logits_dtype(const A& a, const char* name) {
  if (a.dtype() == kF32) return DType::kF32;
  if (a.dtype() == kBF16) return DType::kBF16;
  throw nb::type_error(
      (std::string(name) + " must be float32 or bfloat16, got " + dtype_str(a.dtype())).c_str());
}

}  // namespace

LogitsView logits_view(const AnyArray& a, const char* name) {
  require_cpu_2d(a, name);
  LogitsView v;
  v.dtype = logits_dtype(a, name);
  v.data = a.data();
  v.rows = static_cast<std::int64_t>(rows_of(a));
  v.vocab = static_cast<std::int64_t>(cols_of(a));
  if (v.vocab == 0) throw nb::value_error((std::string(name) + " has no columns").c_str());
  return v;
}

MutLogits mutable_logits(const MutArray& a, const char* name) {
  require_cpu_2d(a, name);
  return {a.data(), logits_dtype(a, name), rows_of(a), cols_of(a)};
}

namespace {

template <class A>
BitmaskView any_bitmask(const A& a, const char* name) {
  require_cpu_2d(a, name);
  if (a.dtype() != kI32 && a.dtype() != kU32) {
    throw nb::type_error(
        (std::string(name) + " must be int32 (or uint32), got " + dtype_str(a.dtype())).c_str());
  }
  return {static_cast<std::uint32_t*>(const_cast<void*>(static_cast<const void*>(a.data()))),
          rows_of(a), cols_of(a)};
}

}  // namespace

BitmaskView bitmask_view(const MutArray& a, const char* name) {
  return any_bitmask(a, name);
}
BitmaskView bitmask_view_ro(const AnyArray& a, const char* name) {
  return any_bitmask(a, name);
}

std::span<const std::uint32_t> bitmask_row(const AnyArray& a, const char* name) {
  require_cpu_2d(a, name);
  if (a.dtype() != kI32 && a.dtype() != kU32) {
    throw nb::type_error(
        (std::string(name) + " must be int32 (or uint32), got " + dtype_str(a.dtype())).c_str());
  }
  if (rows_of(a) != 1) throw nb::value_error((std::string(name) + " must be one row").c_str());
  return {static_cast<const std::uint32_t*>(a.data()), cols_of(a)};
}

}  // namespace nextok::py
