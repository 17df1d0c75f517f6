# shepherd_embed(<target> <symbol> <files...>): compiles the files' bytes into a C++
# source that defines `std::string_view <symbol>()` returning their concatenation, so
# data such as the OpenAPI schema ships inside the binary.
function(shepherd_embed target symbol)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${symbol}_embed.cc")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} "-DFILES=${ARGN}"
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedWrite.cmake"
    DEPENDS ${ARGN} "${PROJECT_SOURCE_DIR}/cmake/EmbedWrite.cmake"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
