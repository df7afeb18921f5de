# opgraph_add_layer(NAME SOURCES... [DEPS ...]): one static library per layer,
# public headers from include/, private headers from src/. Every layer is recorded
# in the global property OPGRAPH_LAYERS: the installed library (cmake/opgraph_install.cmake)
# is one archive of every layer's objects.
function(opgraph_add_layer name)
  cmake_parse_arguments(L "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${L_SOURCES})
  target_include_directories(${name}
    PUBLIC  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${L_DEPS})
  set_property(GLOBAL APPEND PROPERTY OPGRAPH_LAYERS ${name})
endfunction()
