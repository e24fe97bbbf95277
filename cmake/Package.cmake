# The installed layout, the CMake package and the Debian package.
#
#   <prefix>/bin/flashproof
#   <prefix>/share/flashproof/runtime/   runtime data (src/runtime/data/*.json)
#   <prefix>/share/flashproof/prompts/   the prompt sets flashproof ships (fixtures/prompts/)
#   <prefix>/share/flashproof/models/    model recipes (fixtures/models/*.json)
#   <prefix>/share/flashproof/suite/     what `flashproof init` writes (templates/suite/)
#   <prefix>/lib/flashproof/libflashproof_probe.so   the CUPTI probe, where it is built
#   <prefix>/lib/cmake/flashproof/       find_package(flashproof): flashproof::flashproof, flashproof_add_cases()
#
# The binary finds share/flashproof beside itself (src/util/shipped_data.h); the build tree gets the
# same folder as links to the sources, so a build runs from the checkout unchanged.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FP_SHARED_DATA
  "runtime=src/runtime/data"
  "prompts=fixtures/prompts"
  "models=fixtures/models"
  "suite=templates/suite")
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/flashproof)
foreach(entry ${FP_SHARED_DATA})
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 name)
  list(GET pair 1 source)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${source} ${CMAKE_BINARY_DIR}/share/flashproof/${name} SYMBOLIC)
endforeach()

install(TARGETS flashproof EXPORT flashproof-targets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET flashproof_probe)
  # lib/flashproof literally: where the binary looks (src/util/shipped_data.h), whatever the libdir.
  install(TARGETS flashproof_probe LIBRARY DESTINATION lib/flashproof)
endif()
set(FP_SHARE ${CMAKE_INSTALL_DATADIR}/flashproof)
install(DIRECTORY src/runtime/data/ DESTINATION ${FP_SHARE}/runtime FILES_MATCHING PATTERN "*.json")
install(DIRECTORY fixtures/prompts/ DESTINATION ${FP_SHARE}/prompts)
install(DIRECTORY fixtures/models/ DESTINATION ${FP_SHARE}/models FILES_MATCHING PATTERN "*.json" PATTERN generated EXCLUDE)
install(DIRECTORY templates/suite/ DESTINATION ${FP_SHARE}/suite)

set(FP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flashproof)
install(EXPORT flashproof-targets NAMESPACE flashproof:: DESTINATION ${FP_CMAKE_DIR})
configure_package_config_file(cmake/flashproof-config.cmake.in ${CMAKE_BINARY_DIR}/flashproof-config.cmake
  INSTALL_DESTINATION ${FP_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/flashproof-config-version.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/flashproof-config.cmake ${CMAKE_BINARY_DIR}/flashproof-config-version.cmake
  cmake/FlashproofCases.cmake DESTINATION ${FP_CMAKE_DIR})
install(FILES tests/expect_failure.cmake DESTINATION ${FP_CMAKE_DIR} RENAME flashproof_expect_failure.cmake)

# cpack -G DEB (in the build folder): flashproof_<version>_<arch>.deb. Depends come from
# dpkg-shlibdeps (the libraries the binary links: libcurl, zlib, libpcre2-8, libstdc++, libc); cmake (recommended)
# configures a suite; llama-server (or another runtime) is the operator's own.
# Boost.Math (libboost-math-dev) is header-only: a build dependency (ci/setup.sh), compiled in, none at run time.
set(CPACK_PACKAGE_NAME flashproof)
set(CPACK_PACKAGE_VENDOR flashproof)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "prove that fused attention really ran, time the job, diff the answers")
set(CPACK_PACKAGE_CONTACT "flashproof maintainers <flashproof@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cmake (>= 3.20)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "llama.cpp-tools")
include(CPack)
