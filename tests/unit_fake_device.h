// The device memory a program's host-side checks touch, faked in host memory,
// for the unit tests that feed those checks wrong answers on the CPU. Include
// it BEFORE the program's source: the CUDA runtime calls that poison, copy
// back, synchronize and check a launch (poison_device, read_back, check_device,
// CHECK_LAUNCH, the parts' macros) then act on host buffers that stand in for
// device ones, so a part's statements can be a host function that writes its
// "output". Kernel launches are not faked: call unit_no_device() first in main
// (no device is visible then, so a launch the code under test makes fails and
// runs nothing, even on a GPU machine, and the faked cudaGetLastError ignores it).
// unit_on_poison, if set, runs after every poison: the work of a kernel the code
// under test launches right after poisoning its output (09's reference).
// UNIT_FAKE_PARTS, defined before this header: a whole part (allocate, poison,
// launch, check) runs on the CPU. Device allocations are host memory, and the
// launches a part makes through the runtime API (cudaLaunchKernelEx,
// cudaLaunchCooperativeKernel) return success and run nothing, as a <<<>>>
// launch runs nothing here: unit_on_poison does the kernel's work (07's
// broadcast, 08's cross_cta).
#pragma once
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_poisons = 0;                                  // cudaMemsetAsync calls so far
static void (*unit_on_poison)(void* p, size_t bytes) = NULL;  // a launch's work, after its output's poison

static inline void unit_no_device(void) {
    setenv("CUDA_VISIBLE_DEVICES", "", 1);  // before the first CUDA call: the runtime reads it then
}
static inline cudaError_t unit_memset_async(void* p, int value, size_t bytes, cudaStream_t = 0) {
    memset(p, value, bytes);
    ++unit_poisons;
    if (unit_on_poison) unit_on_poison(p, bytes);
    return cudaSuccess;
}
static inline cudaError_t unit_memcpy_async(void* dst, const void* src, size_t bytes, cudaMemcpyKind,
                                            cudaStream_t = 0) {
    memmove(dst, src, bytes);
    return cudaSuccess;
}
template <class T>
static inline cudaError_t unit_malloc_host(T** p, size_t bytes, unsigned int = 0) {
    *p = (T*)malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t unit_free_host(void* p) {
    free(p);
    return cudaSuccess;
}
static inline cudaError_t unit_stream_synchronize(cudaStream_t) {
    return cudaSuccess;
}
static inline cudaError_t unit_get_last_error(void) {
    return cudaSuccess;
}
#define cudaMemsetAsync unit_memset_async
#define cudaMemcpyAsync unit_memcpy_async
#define cudaMallocHost unit_malloc_host
#define cudaFreeHost unit_free_host
#define cudaStreamSynchronize unit_stream_synchronize
#define cudaGetLastError unit_get_last_error
#ifdef UNIT_FAKE_PARTS
template <class T>
static inline cudaError_t unit_malloc(T** p, size_t bytes) {
    *p = (T*)malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
template <class... Args>
static inline cudaError_t unit_launch(Args...) {
    return cudaSuccess;
}
#define cudaMalloc unit_malloc
#define cudaFree unit_free_host
#define cudaLaunchKernelEx unit_launch
#define cudaLaunchCooperativeKernel unit_launch
#endif

// What the statements print, kept (and printed too): a check's explanation
// lines are part of what it must get right. glibc lets stdout be reassigned.
static char* unit_printed = NULL;
#define UNIT_CAPTURE(...)                                \
    do {                                                 \
        fflush(stdout);                                  \
        FILE* real_ = stdout;                            \
        size_t len_ = 0;                                 \
        free(unit_printed);                              \
        unit_printed = NULL;                             \
        stdout = open_memstream(&unit_printed, &len_);   \
        __VA_ARGS__;                                     \
        fclose(stdout);                                  \
        stdout = real_;                                  \
        fputs(unit_printed ? unit_printed : "", stdout); \
    } while (0)
static inline int unit_printed_has(const char* text) {
    return unit_printed && strstr(unit_printed, text) != NULL;
}
