# cmake -DDOC=<page> -DSOURCE=<file> -P check_snippet.cmake
# Fails unless the code between "// example-begin" and "// example-end" is the same in both files,
# so that a page shows the code the tests compile and run.
foreach(file DOC SOURCE)
  file(READ "${${file}}" text)
  if(NOT text MATCHES "// example-begin\n(.*)// example-end")
    message(FATAL_ERROR "${${file}}: no example-begin/example-end region")
  endif()
  set(${file}_SNIPPET "${CMAKE_MATCH_1}")
endforeach()
if(NOT DOC_SNIPPET STREQUAL SOURCE_SNIPPET)
  message(FATAL_ERROR "${DOC} shows different code than ${SOURCE}; copy the example region over")
endif()
