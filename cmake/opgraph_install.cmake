# The installed package (`cmake --install BUILD --prefix P`):
#   P/include/opgraph/                   the public headers
#   P/lib/libopgraph.a                   ONE static library: every layer's objects in one archive
#   P/bin/opgraph                        the command-line tool (when OPGRAPH_BUILD_TOOLS)
#   P/lib/cmake/opgraph/                 opgraphConfig.cmake + version file, target opgraph::opgraph
# so that find_package(opgraph) + target_link_libraries(app opgraph::opgraph) is all a
# user writes. The layers stay separate targets inside the build (they enforce the
# layering); the archive reuses their objects, nothing is compiled twice.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(_opgraph_layers GLOBAL PROPERTY OPGRAPH_LAYERS)
set(_opgraph_objects "")
foreach(layer IN LISTS _opgraph_layers)
  list(APPEND _opgraph_objects $<TARGET_OBJECTS:${layer}>)
endforeach()
add_library(opgraph_package STATIC ${_opgraph_objects})
set_target_properties(opgraph_package PROPERTIES
  OUTPUT_NAME opgraph
  EXPORT_NAME opgraph
  LINKER_LANGUAGE CXX
  # src/libopgraph.a is the API layer's own archive; the combined one lives apart.
  ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/package)
target_include_directories(opgraph_package INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# The public headers use C++20 (std::span, designated initializers).
target_compile_features(opgraph_package INTERFACE cxx_std_20)
# What the layers' objects need at link time: the runtime dlopens CUDA / NVRTC /
# cuDNN (${CMAKE_DL_LIBS}); the reference engine and the caches use threads.
# nlohmann_json is header-only and private to the objects.
target_link_libraries(opgraph_package INTERFACE Threads::Threads ${CMAKE_DL_LIBS})
add_library(opgraph::opgraph ALIAS opgraph_package)

install(TARGETS opgraph_package EXPORT opgraphTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/opgraph DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(_opgraph_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/opgraph)
install(EXPORT opgraphTargets NAMESPACE opgraph:: DESTINATION ${_opgraph_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/opgraphConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/opgraphConfig.cmake INSTALL_DESTINATION ${_opgraph_cmake_dir})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/opgraphConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/opgraphConfig.cmake ${PROJECT_BINARY_DIR}/package/opgraphConfigVersion.cmake
  DESTINATION ${_opgraph_cmake_dir})

if(TARGET opgraph_tool)
  install(TARGETS opgraph_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
