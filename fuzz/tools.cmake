# The fuzzers of opendml-dispatch (tools/dispatch), included by fuzz/CMakeLists.txt.
opendml_add_fuzzer(model_fuzzer SOURCES model_fuzzer.cpp LIBRARIES opendml_dispatch_core)
opendml_add_fuzzer(npy_fuzzer SOURCES npy_fuzzer.cpp LIBRARIES opendml_dispatch_core)
