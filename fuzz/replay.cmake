# ctest's fuzz.<name>.replay: runs FUZZER once on every file in REGRESSIONS and CORPUS (libFuzzer
# runs the files it is given once each, then exits). Fails when the fuzzer fails on any of them, or
# when there is nothing to replay.
foreach(dir IN ITEMS "${REGRESSIONS}" "${CORPUS}")
  file(GLOB found LIST_DIRECTORIES false "${dir}/*")
  list(FILTER found EXCLUDE REGEX "/(\\.[^/]*|README[^/]*)$")
  list(SORT found)
  list(APPEND inputs ${found})
  list(LENGTH found n)
  message("${dir}: ${n} inputs")
endforeach()
list(LENGTH inputs total)
if(total EQUAL 0)
  message(FATAL_ERROR "no inputs to replay in ${REGRESSIONS} or ${CORPUS}")
endif()

# In batches, to stay far below the command-line limit.
set(batch_size 256)
math(EXPR last "(${total} - 1) / ${batch_size}")
foreach(b RANGE ${last})
  math(EXPR first "${b} * ${batch_size}")
  list(SUBLIST inputs ${first} ${batch_size} batch)
  execute_process(COMMAND "${FUZZER}" -timeout=60 -rss_limit_mb=4096 ${batch}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "${FUZZER} failed (exit status ${rc}) on one of the inputs above")
  endif()
endforeach()
message("replayed ${total} inputs: all passed")
