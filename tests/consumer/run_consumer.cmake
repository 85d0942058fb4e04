# ctest's install_consumer: cmake --install of the build tree into a fresh prefix, then configure,
# build and run tests/consumer against that prefix with the build's generator and compiler.
# Variables: BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR MAKE_PROGRAM CXX_COMPILER CONFIG FLAGS.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${step} failed (${rc})")
  endif()
endfunction()

run(install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" --config "${CONFIG}")
run(configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${CONFIG}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DEXPECTED_PREFIX=${prefix}" "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"
    "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
run(build "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --config "${CONFIG}")
if(EXISTS "${WORK_DIR}/build/${CONFIG}/opendml_consumer")
  run(run "${WORK_DIR}/build/${CONFIG}/opendml_consumer")
else()
  run(run "${WORK_DIR}/build/opendml_consumer")
endif()
