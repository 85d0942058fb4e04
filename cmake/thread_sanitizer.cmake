# OPENDML_SANITIZE_THREAD: ThreadSanitizer over the host code (the tsan preset).
#
# TSan does not see the synchronisation inside an uninstrumented OpenMP runtime, so OpenMP's
# parallel loops would be reported falsely or not checked at all. LLVM's Archer, an OMPT tool for
# LLVM's OpenMP runtime (libomp), tells TSan about OpenMP's barriers and tasks: it is linked whole
# into every program, where libomp finds it as its tool without OMP_TOOL_LIBRARIES. Run the programs
# with TSAN_OPTIONS=ignore_noninstrumented_modules=1 (the tsan test preset sets it) so that libomp's
# own uninstrumented accesses are not reported. The preset also sets handle_segv=0: clang 14's TSan
# can deadlock in its own SIGSEGV report, which turns a crash into a hang until ctest's time-out.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "OPENDML_SANITIZE_THREAD needs clang (OpenMP through libomp and Archer), but the C++ compiler "
                      "is ${CMAKE_CXX_COMPILER_ID}: use the tsan preset or -DCMAKE_CXX_COMPILER=clang++")
endif()
if(OPENDML_SANITIZE OR OPENDML_FUZZ OR OPENDML_WITH_CUDA)
  message(FATAL_ERROR "OPENDML_SANITIZE_THREAD is a CPU-only build of its own: turn off OPENDML_SANITIZE, "
                      "OPENDML_FUZZ and OPENDML_WITH_CUDA")
endif()

get_filename_component(_omp_dir "${OpenMP_omp_LIBRARY}" DIRECTORY)
find_library(OPENDML_ARCHER_LIBRARY NAMES libarcher_static.a HINTS "${_omp_dir}")
if(NOT OPENDML_ARCHER_LIBRARY)
  message(FATAL_ERROR "OPENDML_SANITIZE_THREAD: LLVM's Archer (libarcher_static.a) was not found next to libomp "
                      "(${OpenMP_omp_LIBRARY}); install libomp-dev for this clang")
endif()

add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
add_link_options(-fsanitize=thread LINKER:--whole-archive "${OPENDML_ARCHER_LIBRARY}" LINKER:--no-whole-archive)
