# Writes the manual page and the shell completions by asking the built binary (BIN), so that
# they are made from the same command table and parser as the binary's own --help.
#   cmake -DBIN=… -DOUT=dir -P generate_docs.cmake
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${BIN} help --man OUTPUT_FILE ${OUT}/cudoctor.1 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cudoctor help --man failed (${rc})")
endif()
# Debian installs manual pages compressed; -n keeps the file free of a time stamp.
find_program(GZIP gzip REQUIRED)
execute_process(COMMAND ${GZIP} -9nf ${OUT}/cudoctor.1 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip cudoctor.1 failed (${rc})")
endif()
foreach(shell bash zsh fish)
  execute_process(COMMAND ${BIN} completion ${shell} OUTPUT_FILE ${OUT}/completion.${shell} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cudoctor completion ${shell} failed (${rc})")
  endif()
endforeach()
