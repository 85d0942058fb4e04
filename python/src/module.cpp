// opendml._opendml: the extension behind the Python package opendml (python/opendml).
#include <typeinfo>

#include "common.h"

namespace opendml::python {
namespace {

// The Python classes of opendml's statuses, created at import.
PyObject* g_error = nullptr;        // INVALID_ARGUMENT: opendml.Error(ValueError)
PyObject* g_unsupported = nullptr;  // UNSUPPORTED: opendml.UnsupportedError(NotImplementedError)
PyObject* g_out_of_memory = nullptr;
PyObject* g_device_error = nullptr;

PyObject* new_class(nb::module_& m, const char* name, PyObject* base, const char* doc) {
  PyObject* cls = PyErr_NewExceptionWithDoc((std::string("opendml.") + name).c_str(), doc, base, nullptr);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

// The instance carries the status's name as .status ("INVALID_ARGUMENT", ...).
void raise(const Error& e) {
  PyObject* cls = e.status() == ODML_STATUS_INVALID_ARGUMENT ? g_error
                  : e.status() == ODML_STATUS_UNSUPPORTED    ? g_unsupported
                  : e.status() == ODML_STATUS_OUT_OF_MEMORY  ? g_out_of_memory
                                                             : g_device_error;
  nb::object instance = nb::steal(PyObject_CallOneArg(cls, nb::str(e.what()).ptr()));
  if (!instance.is_valid()) return;  // the call set an exception
  instance.attr("status") = nb::str(odml_status_name(e.status()));
  PyErr_SetObject(cls, instance.ptr());
}

}  // namespace
}  // namespace opendml::python

NB_MODULE(_opendml, m) {
  using namespace opendml::python;
  m.doc() = "DirectML's JOIN, SPLIT and NONZERO_COORDINATES on the CPU and CUDA (the C++ API's vocabulary)";
  g_error = new_class(m, "Error", PyExc_ValueError,
                      "Invalid input: a descriptor, binding or argument breaks a rule; the message says which.");
  g_unsupported = new_class(m, "UnsupportedError", PyExc_NotImplementedError,
                            "A valid request that this build, this device or DirectML's model cannot carry out.");
  g_out_of_memory = new_class(m, "OutOfMemoryError", PyExc_MemoryError, "A device allocation failed.");
  g_device_error = new_class(m, "DeviceError", PyExc_RuntimeError, "The device or its driver failed (a CUDA error).");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const opendml::Error& e) {
      raise(e);
    } catch (const std::bad_cast&) {  // nanobind's cast_error: a value of a type the code does not take
      raise(opendml::Error(ODML_STATUS_INVALID_ARGUMENT,
                           "an argument, or a value an array library returned for it, has a type opendml does not "
                           "take here"));
    }
  });
#ifdef OPENDML_WITH_CUDA
  m.attr("built_with_cuda") = true;
#else
  m.attr("built_with_cuda") = false;
#endif
  bind_descriptors(m);
  bind_arrays(m);
#ifdef OPENDML_WITH_XLA_FFI
  bind_jax(m);
#endif
}
