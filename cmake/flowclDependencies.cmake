# Dependencies. OpenCL (ICD loader) is required; the others are found here so that the layers
# that use them can be switched with FLOWCL_ENABLE_<NAME> (default: on when found).
find_package(OpenCL 1.2 REQUIRED)
find_package(Threads REQUIRED)
# SHA-256 of the kernel binary cache's keys and entries: Nettle.
find_path(NETTLE_INCLUDE_DIR nettle/sha2.h)
find_library(NETTLE_LIBRARY nettle)
if(NOT NETTLE_INCLUDE_DIR OR NOT NETTLE_LIBRARY)
  message(FATAL_ERROR "flowcl needs Nettle's SHA-256 (Debian: nettle-dev); found header: "
                      "${NETTLE_INCLUDE_DIR}, library: ${NETTLE_LIBRARY}")
endif()

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

# FFTW in both precisions, with threads and MPI (the field layer is distributed).
set(FLOWCL_FFTW_FOUND ON)
foreach(lib fftw3 fftw3f fftw3_threads fftw3f_threads fftw3_mpi fftw3f_mpi)
  string(TOUPPER ${lib} var)
  find_library(${var}_LIBRARY ${lib})
  if(NOT ${var}_LIBRARY)
    set(FLOWCL_FFTW_FOUND OFF)
  endif()
  list(APPEND FLOWCL_FFTW_LIBRARIES ${${var}_LIBRARY})
endforeach()
find_path(FFTW3_INCLUDE_DIR fftw3-mpi.h)
if(NOT FFTW3_INCLUDE_DIR OR NOT MPI_C_FOUND)
  set(FLOWCL_FFTW_FOUND OFF)
endif()
option(FLOWCL_ENABLE_FFTW "Host FFTs with FFTW (threads, and fftw-mpi)" ${FLOWCL_FFTW_FOUND})
if(FLOWCL_ENABLE_FFTW AND NOT FLOWCL_FFTW_FOUND)
  message(FATAL_ERROR "FLOWCL_ENABLE_FFTW needs FFTW 3 in float and double with threads and MPI "
                      "(Debian: libfftw3-dev libfftw3-mpi-dev) and MPI")
endif()

find_path(VKFFT_INCLUDE_DIR vkFFT.h PATH_SUFFIXES vkfft)
if(VKFFT_INCLUDE_DIR)
  set(FLOWCL_VKFFT_FOUND ON)
else()
  set(FLOWCL_VKFFT_FOUND OFF)
endif()
option(FLOWCL_ENABLE_VKFFT "Device FFTs with VkFFT's OpenCL backend" ${FLOWCL_VKFFT_FOUND})
if(FLOWCL_ENABLE_VKFFT AND NOT FLOWCL_VKFFT_FOUND)
  message(FATAL_ERROR "FLOWCL_ENABLE_VKFFT needs vkFFT.h (Debian: libvkfft-dev); set "
                      "VKFFT_INCLUDE_DIR to its folder")
endif()
# The FFT layer and the spectral operators sit on distributed fields.
if(NOT FLOWCL_ENABLE_MPI)
  set(FLOWCL_ENABLE_FFTW OFF CACHE BOOL "" FORCE)
  set(FLOWCL_ENABLE_VKFFT OFF CACHE BOOL "" FORCE)
endif()

# Optional, GPU-side: the CUDA toolkit and NCCL give benchmarks/exchange its device-direct
# figures (NCCL between the ranks' GPUs). Compiled and linked where found; without a GPU the
# benchmark says so and reports the rest.
find_package(CUDAToolkit QUIET)
# The CUDA backend of the runtime (src/runtime/cuda/): NVRTC compiles the kernels through
# kernels/prelude_cuda.h. Built where the toolkit's NVRTC is found, also without a GPU (CI
# compiles every kernel family with it); the driver API is loaded at run time, so a machine
# without NVIDIA's driver simply has no CUDA platform.
if(TARGET CUDA::nvrtc)
  set(FLOWCL_CUDA_FOUND ON)
else()
  set(FLOWCL_CUDA_FOUND OFF)
endif()
option(FLOWCL_ENABLE_CUDA "The CUDA backend (NVRTC; the driver API loaded at run time)"
       ${FLOWCL_CUDA_FOUND})
if(FLOWCL_ENABLE_CUDA AND NOT FLOWCL_CUDA_FOUND)
  message(FATAL_ERROR "FLOWCL_ENABLE_CUDA needs the CUDA toolkit's NVRTC (nvrtc.h, libnvrtc); "
                      "set CUDAToolkit_ROOT to the toolkit")
endif()
find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(CUDAToolkit_FOUND AND NCCL_LIBRARY AND NCCL_INCLUDE_DIR AND FLOWCL_ENABLE_MPI)
  set(FLOWCL_NCCL_FOUND ON)
else()
  set(FLOWCL_NCCL_FOUND OFF)
endif()
option(FLOWCL_WITH_NCCL "NCCL figures in benchmarks/exchange (CUDA toolkit, NCCL, MPI)"
       ${FLOWCL_NCCL_FOUND})
if(FLOWCL_WITH_NCCL AND NOT FLOWCL_NCCL_FOUND)
  message(FATAL_ERROR "FLOWCL_WITH_NCCL needs the CUDA toolkit (nvcc, cudart), NCCL (nccl.h, "
                      "libnccl) and MPI; set NCCL_LIBRARY and NCCL_INCLUDE_DIR if NCCL is elsewhere")
endif()
