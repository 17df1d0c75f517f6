# shepherd_component(<library> SOURCES <files...> [DEPS <targets...>])
#
# One component of the layer graph (docs/architecture.md) as one static library with
# its own include root: <build>/include/<library>/<folder> links to the component's
# folder, so `#include "<folder>/x.h"` resolves only for targets that link the library
# (directly or through DEPS, which are public). A header of a component a target does not
# depend on fails to compile; scripts/check_layers.py checks the direction of each
# dependency against the allowed graph.
function(shepherd_component name)
  cmake_parse_arguments(C "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${C_SOURCES})
  shepherd_include_root(${name} ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE ${SHEPHERD_WARNINGS})
  target_link_libraries(${name} PUBLIC ${C_DEPS})
endfunction()

# Gives <target> an include root holding only <folder> (at its path in the repository).
function(shepherd_include_root target folder)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${folder})
  set(root ${PROJECT_BINARY_DIR}/include/${target})
  get_filename_component(parent ${root}/${rel} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT EXISTS ${root}/${rel})
    file(CREATE_LINK ${folder} ${root}/${rel} SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC ${root})
endfunction()
