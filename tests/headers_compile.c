/* The C ABI's headers as C99 and as C++11 code includes them (tests/CMakeLists.txt compiles this
 * file both ways): DirectML's structs and opendml's C functions ask for nothing newer. */
#include <opendml/directml.h>
#include <opendml/opendml.h>

int main(void) {
  DML_TENSOR_FLAGS flags = DML_TENSOR_FLAG_OWNED_BY_DML;
#ifdef __cplusplus
  flags |= DML_TENSOR_FLAG_NONE; /* DirectML.h's flag operators, in C++ */
#endif
  return flags == DML_TENSOR_FLAG_OWNED_BY_DML ? 0 : 1;
}
