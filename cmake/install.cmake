# `cmake --install` lays out headers, the shared library and a CMake package, so that
# find_package(opendml CONFIG) gives consumers opendml::opendml.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS opendml EXPORT opendmlTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/opendml DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT opendmlTargets NAMESPACE opendml:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/opendml)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/opendmlConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/opendmlConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/opendml)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/opendmlConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/opendmlConfig.cmake ${PROJECT_BINARY_DIR}/opendmlConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/opendml)
if(TARGET opendml-dispatch)
  install(TARGETS opendml-dispatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
