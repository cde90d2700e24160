/* CUDA's driver API, loaded at run time from libcuda.so.1 (not installed): the library links
 * on machines without NVIDIA's driver (CI), where the CUDA backend then has no platform. The
 * entries keep the driver API's names, bound to the symbols of the versions cuda.h names. */
#ifndef FLOWCL_SRC_RUNTIME_CUDA_DRIVER_H
#define FLOWCL_SRC_RUNTIME_CUDA_DRIVER_H

#include <cuda.h>
#include <stdbool.h>

#include "flowcl/error.h"

/* X(name, symbol, parameters) for every entry used. */
#define FCL__CU_ENTRIES(X)                                                                         \
  X(Init, "cuInit", (unsigned flags))                                                              \
  X(DriverGetVersion, "cuDriverGetVersion", (int *version))                                        \
  X(GetErrorName, "cuGetErrorName", (CUresult r, const char **name))                               \
  X(GetErrorString, "cuGetErrorString", (CUresult r, const char **text))                           \
  X(DeviceGetCount, "cuDeviceGetCount", (int *count))                                              \
  X(DeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                                    \
  X(DeviceGetName, "cuDeviceGetName", (char *name, int size, CUdevice device))                     \
  X(DeviceGetAttribute, "cuDeviceGetAttribute", (int *value, CUdevice_attribute a, CUdevice d))    \
  X(DeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice device))                      \
  X(DeviceGetPCIBusId, "cuDeviceGetPCIBusId", (char *id, int size, CUdevice device))               \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice device))        \
  X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice device))                    \
  X(CtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                             \
  X(CtxSynchronize, "cuCtxSynchronize", (void))                                                    \
  X(StreamCreate, "cuStreamCreate", (CUstream * stream, unsigned flags))                           \
  X(StreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                        \
  X(StreamSynchronize, "cuStreamSynchronize", (CUstream stream))                                   \
  X(StreamWaitEvent, "cuStreamWaitEvent", (CUstream stream, CUevent event, unsigned flags))        \
  X(LaunchHostFunc, "cuLaunchHostFunc", (CUstream stream, CUhostFn fn, void *user))                \
  X(StreamWaitValue32, "cuStreamWaitValue32_v2",                                                   \
    (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned flags))                         \
  X(EventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                               \
  X(EventDestroy, "cuEventDestroy_v2", (CUevent event))                                            \
  X(EventRecord, "cuEventRecord", (CUevent event, CUstream stream))                                \
  X(EventQuery, "cuEventQuery", (CUevent event))                                                   \
  X(EventSynchronize, "cuEventSynchronize", (CUevent event))                                       \
  X(EventElapsedTime, "cuEventElapsedTime_v2", (float *ms, CUevent start, CUevent end))            \
  X(MemAlloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t bytes))                                  \
  X(MemFree, "cuMemFree_v2", (CUdeviceptr ptr))                                                    \
  X(MemGetInfo, "cuMemGetInfo_v2", (size_t * free, size_t * total))                                \
  X(MemHostAlloc, "cuMemHostAlloc", (void **host, size_t bytes, unsigned flags))                   \
  X(MemFreeHost, "cuMemFreeHost", (void *host))                                                    \
  X(MemHostRegister, "cuMemHostRegister_v2", (void *host, size_t bytes, unsigned flags))           \
  X(MemHostUnregister, "cuMemHostUnregister", (void *host))                                        \
  X(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",                                       \
    (CUdeviceptr * ptr, void *host, unsigned flags))                                               \
  X(IpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle * handle, CUdeviceptr ptr))              \
  X(IpcOpenMemHandle, "cuIpcOpenMemHandle_v2",                                                     \
    (CUdeviceptr * ptr, CUipcMemHandle handle, unsigned flags))                                    \
  X(IpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr ptr))                                   \
  X(MemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void *src, size_t bytes))               \
  X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                       \
    (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))                                  \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                                       \
    (void *dst, CUdeviceptr src, size_t bytes, CUstream s))                                        \
  X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                       \
    (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))                                  \
  X(Memcpy3DAsync, "cuMemcpy3DAsync_v2", (const CUDA_MEMCPY3D *copy, CUstream s))                  \
  X(MemsetD8Async, "cuMemsetD8Async", (CUdeviceptr dst, unsigned char v, size_t n, CUstream s))    \
  X(MemsetD16Async, "cuMemsetD16Async", (CUdeviceptr dst, unsigned short v, size_t n, CUstream s)) \
  X(MemsetD32Async, "cuMemsetD32Async", (CUdeviceptr dst, unsigned v, size_t n, CUstream s))       \
  X(PointerGetAttributes, "cuPointerGetAttributes",                                                \
    (unsigned n, CUpointer_attribute *a, void **data, CUdeviceptr ptr))                            \
  X(MemsetD2D32Async, "cuMemsetD2D32Async",                                                        \
    (CUdeviceptr dst, size_t pitch, unsigned v, size_t width, size_t height, CUstream s))          \
  X(ModuleLoadData, "cuModuleLoadData", (CUmodule * module, const void *image))                    \
  X(ModuleLoadDataEx, "cuModuleLoadDataEx",                                                        \
    (CUmodule * module, const void *image, unsigned n, CUjit_option *options, void **values))      \
  X(ModuleGetFunction, "cuModuleGetFunction", (CUfunction * f, CUmodule module, const char *name)) \
  X(ModuleGetGlobal, "cuModuleGetGlobal_v2",                                                       \
    (CUdeviceptr * ptr, size_t * bytes, CUmodule module, const char *name))                        \
  X(ModuleUnload, "cuModuleUnload", (CUmodule module))                                             \
  X(ModuleGetFunctionCount, "cuModuleGetFunctionCount", (unsigned *count, CUmodule module))        \
  X(ModuleEnumerateFunctions, "cuModuleEnumerateFunctions",                                        \
    (CUfunction * functions, unsigned count, CUmodule module))                                     \
  X(FuncGetName, "cuFuncGetName", (const char **name, CUfunction f))                               \
  X(FuncLoad, "cuFuncLoad", (CUfunction f))                                                        \
  X(FuncGetParamInfo, "cuFuncGetParamInfo",                                                        \
    (CUfunction f, size_t index, size_t * offset, size_t * size))                                  \
  X(FuncGetAttribute, "cuFuncGetAttribute", (int *value, CUfunction_attribute a, CUfunction f))    \
  X(FuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, CUfunction_attribute a, int value))     \
  X(LaunchKernel, "cuLaunchKernel",                                                                \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,   \
     unsigned shared, CUstream s, void **params, void **extra))

typedef struct {
#define FCL__CU_POINTER(name, symbol, params) CUresult(*name) params;
  FCL__CU_ENTRIES(FCL__CU_POINTER)
#undef FCL__CU_POINTER
} fcl__cu_api;

/* The driver API, loaded and initialised once (thread-safe): NULL when libcuda.so.1 is missing,
 * lacks an entry (a driver older than CUDA 12.4) or cuInit fails; why tells which (static). */
const fcl__cu_api *fcl__cu(const char **why);

/* r as FCL_ERR_CUDA (CUDA_ERROR_OUT_OF_MEMORY: FCL_ERR_OUT_OF_MEMORY) naming the call, with
 * CUDA's name and text of the error. */
fcl_status fcl__cu_error(CUresult r, const char *call, const char *func, const char *file,
                         int line);
#define FCL_CU_ERROR(r, call) fcl__cu_error((r), (call), __func__, __FILE__, __LINE__)
/* Evaluates expr (a CUresult), returning its error from the enclosing function. */
#define FCL_CU_TRY(expr, call)                                                                     \
  do {                                                                                             \
    CUresult fcl__r = (expr);                                                                      \
    if (fcl__r != CUDA_SUCCESS) return FCL_CU_ERROR(fcl__r, (call));                               \
  } while (0)

#endif
