// nextok._nextok: the extension module. Errors: nextok::Error becomes
// nextok.NextokError (a ValueError) carrying the message, .code and .param.
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "nextok/error.hpp"
#include "nextok/version.hpp"  // nextok::kVersion

namespace nextok::py {

namespace {
PyObject* g_error_type = nullptr;
}

void bind_errors(nb::module_& m) {
  g_error_type = PyErr_NewExceptionWithDoc(
      "nextok.NextokError",
      "An error reported by the nextok library (a bad configuration, a token the grammar "
      "refuses, a malformed file). `code` names the nextok::ErrorCode (\"invalid_argument\", "
      "\"no_viable_token\", ...) and `param` the offending parameter, or \"\".",
      PyExc_ValueError, nullptr);
  m.attr("NextokError") = nb::handle(g_error_type);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      nb::object type = nb::borrow(g_error_type);
      nb::object exc = type(nb::str(e.what()));
      exc.attr("code") = nb::str(error_code_name(e.code()));
      exc.attr("param") = nb::str(e.param().c_str());
      PyErr_SetObject(g_error_type, exc.ptr());
    }
  });
}

}  // namespace nextok::py

NB_MODULE(_nextok, m) {
  m.doc() = "nextok's C++ core: tokenizer vocabularies, JSON-Schema token bitmasks, sampling.";
  m.attr("__version__") = nextok::kVersion;
  nextok::py::bind_errors(m);
  nextok::py::bind_vocab(m);
  nextok::py::bind_matcher(m);
  nextok::py::bind_batch(m);
  nextok::py::bind_sampler(m);
  nextok::py::bind_timing(m);
  nextok::py::bind_cuda(m);
}
