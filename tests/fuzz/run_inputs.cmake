# Runs a libFuzzer binary once over every file in INPUT_DIRS (a list; missing
# directories are skipped) and fails if any input crashes it. Used by ctest:
#   cmake -DFUZZER=path/to/fuzz_x "-DINPUT_DIRS=dir1;dir2" -P run_inputs.cmake
# Files are passed one by one rather than as corpus directories: libFuzzer then only
# executes them and never writes into the source tree.
if(NOT FUZZER OR NOT INPUT_DIRS)
  message(FATAL_ERROR "usage: cmake -DFUZZER=<binary> -DINPUT_DIRS=<dir;...> -P run_inputs.cmake")
endif()

set(inputs "")
foreach(dir IN LISTS INPUT_DIRS)
  if(IS_DIRECTORY "${dir}")
    file(GLOB files LIST_DIRECTORIES false "${dir}/*")
    list(FILTER files EXCLUDE REGEX "/(\\.[^/]*|README[^/]*)$")
    list(APPEND inputs ${files})
  endif()
endforeach()
list(SORT inputs)
list(LENGTH inputs count)
if(count EQUAL 0)
  message(FATAL_ERROR "no inputs found in ${INPUT_DIRS}")
endif()

execute_process(COMMAND "${FUZZER}" ${inputs} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${rc}) on one of ${count} inputs")
endif()
message(STATUS "${count} inputs ran clean")
