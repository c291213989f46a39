# Runs CMD ARGS in WORKDIR and checks: exit code == EXIT, output matches REGEX, for a
# failure (EXIT != 0) stderr is exactly one line (a clear message, never a crash trace),
# and each of FILES (removed before the run) exists after it.
if(TRUNCATE_SRC)
  execute_process(COMMAND head -c ${TRUNCATE_BYTES} ${TRUNCATE_SRC} OUTPUT_FILE ${TRUNCATE_DST}
                  COMMAND_ERROR_IS_FATAL ANY)
endif()
foreach(f IN LISTS FILES)
  file(REMOVE ${f})
endforeach()
execute_process(COMMAND ${CMD} ${ARGS}
  WORKING_DIRECTORY ${WORKDIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
message("exit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT "${rc}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "expected exit code ${EXIT}, got '${rc}'")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'")
endif()
if(NOT EXIT EQUAL 0)
  string(STRIP "${err}" e)
  string(FIND "${e}" "\n" nl)
  if(NOT nl EQUAL -1 OR e STREQUAL "")
    message(FATAL_ERROR "expected exactly one line on stderr")
  endif()
endif()
foreach(f IN LISTS FILES)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "expected the run to write '${f}'")
  endif()
endforeach()
