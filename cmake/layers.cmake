# One static library per source folder, and the check that the link graph between them
# follows the layers (docs/ARCHITECTURE.md).

# tgw_folder_library(<folder> [SOURCES extra...] [EXCLUDE file...] [EXCLUDE_FOLDERS sub...]
#                    [PUBLIC dep...] [PRIVATE dep...])
# Builds every .cpp under <folder> (relative to the source root) into the static library
# tgw_<last path component>: infra/net is tgw_net, actors is tgw_actors. A subfolder that
# is a library of its own (actors/ports) is named in EXCLUDE_FOLDERS. A dependency is
# PUBLIC when the folder's headers include it, PRIVATE when only its sources do.
function(tgw_folder_library folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;EXCLUDE;EXCLUDE_FOLDERS;PUBLIC;PRIVATE")
  get_filename_component(name ${folder} NAME)
  set(target tgw_${name})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cpp)
  foreach(excluded IN LISTS arg_EXCLUDE)
    list(REMOVE_ITEM sources ${PROJECT_SOURCE_DIR}/${folder}/${excluded})
  endforeach()
  foreach(excluded IN LISTS arg_EXCLUDE_FOLDERS)
    list(FILTER sources EXCLUDE REGEX "^${PROJECT_SOURCE_DIR}/${folder}/${excluded}/")
  endforeach()
  add_library(${target} STATIC ${sources} ${arg_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE} tgw_warnings)
  set_target_properties(${target} PROPERTIES COMPILE_WARNING_AS_ERROR ON TGW_FOLDER ${folder})
  set_property(GLOBAL APPEND PROPERTY TGW_FOLDER_TARGETS ${target})
endfunction()

# Writes the graph of the folder libraries, one line per target: its name, its folder,
# then the folder libraries it links (PUBLIC or PRIVATE). scripts/check-layers reads it
# (--targets) and fails on a target that links a higher layer, a cycle, a folder
# included without being linked, or one linked without being included. Run here, at
# configure time, a wrong-way link stops the build before anything compiles; the suite
# runs the same check (lint.layers).
function(tgw_check_layer_targets)
  get_property(targets GLOBAL PROPERTY TGW_FOLDER_TARGETS)
  set(graph "")
  foreach(target IN LISTS targets)
    get_target_property(folder ${target} TGW_FOLDER)
    get_target_property(links ${target} LINK_LIBRARIES)
    set(line "${target} ${folder}")
    foreach(link IN LISTS links)
      if(link IN_LIST targets)
        string(APPEND line " ${link}")
      endif()
    endforeach()
    string(APPEND graph "${line}\n")
  endforeach()
  set(file ${PROJECT_BINARY_DIR}/layer_targets.txt)
  file(WRITE ${file} "${graph}")
  find_program(PYTHON3 python3)
  if(NOT PYTHON3)
    message(WARNING "python3 not found: the link graph is not checked against the layers")
    return()
  endif()
  execute_process(COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/check-layers
                          ${PROJECT_SOURCE_DIR} --targets ${file}
                  RESULT_VARIABLE failed OUTPUT_VARIABLE found ERROR_VARIABLE found)
  if(failed)
    message(FATAL_ERROR "The targets do not follow the layers (docs/ARCHITECTURE.md):\n${found}")
  endif()
endfunction()
