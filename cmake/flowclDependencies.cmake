# Dependencies. OpenCL (ICD loader) is required; the others are found here so that the layers
# that use them can be switched with FLOWCL_ENABLE_<NAME> (default: on when found).
find_package(OpenCL 1.2 REQUIRED)
find_package(Threads REQUIRED)

find_package(MPI COMPONENTS C QUIET)
option(FLOWCL_ENABLE_MPI "Distributed fields over MPI" ${MPI_C_FOUND})

set(HDF5_PREFER_PARALLEL ON)
find_package(HDF5 COMPONENTS C QUIET)
set(FLOWCL_HDF5_USABLE OFF)
if(HDF5_FOUND AND HDF5_IS_PARALLEL AND MPI_C_FOUND)
  set(FLOWCL_HDF5_USABLE ON)
endif()
option(FLOWCL_ENABLE_HDF5 "HDF5 + XDMF output and checkpoints (parallel HDF5)" ${FLOWCL_HDF5_USABLE})
if(FLOWCL_ENABLE_HDF5 AND NOT FLOWCL_HDF5_USABLE)
  message(FATAL_ERROR "FLOWCL_ENABLE_HDF5 needs a parallel (MPI) HDF5 and MPI; found HDF5: "
                      "${HDF5_FOUND}, parallel: ${HDF5_IS_PARALLEL} (Debian: libhdf5-openmpi-dev)")
endif()

find_library(FFTW3_LIBRARY fftw3)
find_library(FFTW3_MPI_LIBRARY fftw3_mpi)
find_path(FFTW3_INCLUDE_DIR fftw3.h)
if(FFTW3_LIBRARY AND FFTW3_INCLUDE_DIR)
  set(FLOWCL_FFTW_FOUND ON)
else()
  set(FLOWCL_FFTW_FOUND OFF)
endif()
option(FLOWCL_ENABLE_FFTW "Host FFTs with FFTW (and fftw-mpi)" ${FLOWCL_FFTW_FOUND})

find_path(VKFFT_INCLUDE_DIR vkFFT.h PATH_SUFFIXES vkfft)
if(VKFFT_INCLUDE_DIR)
  set(FLOWCL_VKFFT_FOUND ON)
else()
  set(FLOWCL_VKFFT_FOUND OFF)
endif()
option(FLOWCL_ENABLE_VKFFT "Device FFTs with VkFFT's OpenCL backend" ${FLOWCL_VKFFT_FOUND})
