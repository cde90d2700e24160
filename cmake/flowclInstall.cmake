# install(): library, headers, CMake package (find_package(flowcl)) and pkg-config file.
install(TARGETS flowcl EXPORT flowclTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flowcl ${PROJECT_BINARY_DIR}/include/flowcl
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
set(FLOWCL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flowcl)
install(EXPORT flowclTargets NAMESPACE flowcl:: DESTINATION ${FLOWCL_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/flowclConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/flowclConfig.cmake
                              INSTALL_DESTINATION ${FLOWCL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flowclConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flowclConfig.cmake ${PROJECT_BINARY_DIR}/flowclConfigVersion.cmake
        DESTINATION ${FLOWCL_CMAKE_DIR})
# pkg-config: the MPI module of the system when the field layer is built (Debian: mpi-c).
set(FLOWCL_PC_REQUIRES "")
if(FLOWCL_ENABLE_MPI)
  find_program(FLOWCL_PKG_CONFIG NAMES pkg-config pkgconf)
  foreach(module mpi-c ompi-c mpich)
    if(FLOWCL_PKG_CONFIG AND NOT FLOWCL_PC_REQUIRES)
      execute_process(COMMAND ${FLOWCL_PKG_CONFIG} --exists ${module} RESULT_VARIABLE rc)
      if(rc EQUAL 0)
        set(FLOWCL_PC_REQUIRES ${module})
      endif()
    endif()
  endforeach()
endif()
if(FLOWCL_ENABLE_HDF5 AND FLOWCL_PKG_CONFIG)
  foreach(module hdf5-mpi hdf5-openmpi hdf5)
    execute_process(COMMAND ${FLOWCL_PKG_CONFIG} --exists ${module} RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND NOT FLOWCL_PC_HDF5)
      set(FLOWCL_PC_HDF5 ${module})
      string(APPEND FLOWCL_PC_REQUIRES " ${module}")
    endif()
  endforeach()
endif()
string(APPEND FLOWCL_PC_REQUIRES " nettle")
# FFTW: the two precisions through their .pc files, threads and MPI (which have none) by name.
set(FLOWCL_PC_LIBS "")
if(FLOWCL_ENABLE_FFTW)
  string(APPEND FLOWCL_PC_REQUIRES " fftw3 fftw3f")
  set(FLOWCL_PC_LIBS " -lfftw3_mpi -lfftw3f_mpi -lfftw3_threads -lfftw3f_threads")
endif()
# the CUDA backend's NVRTC, from the toolkit's folder (no .pc file)
if(FLOWCL_ENABLE_CUDA)
  string(APPEND FLOWCL_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lnvrtc -lcudart")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/flowcl.pc.in ${PROJECT_BINARY_DIR}/flowcl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/flowcl.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
