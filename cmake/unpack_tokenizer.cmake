# cmake -DSRC=<dir with tokenizer.json.xz> -DDST=<dir> -P unpack_tokenizer.cmake
# Decompresses tokenizer.json.xz and copies the JSON configs beside it.
file(MAKE_DIRECTORY "${DST}")
execute_process(COMMAND xz -dc "${SRC}/tokenizer.json.xz"
                OUTPUT_FILE "${DST}/tokenizer.json.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xz failed on ${SRC}/tokenizer.json.xz")
endif()
file(GLOB configs "${SRC}/*.json")
file(COPY ${configs} DESTINATION "${DST}" NO_SOURCE_PERMISSIONS)
file(RENAME "${DST}/tokenizer.json.tmp" "${DST}/tokenizer.json")
