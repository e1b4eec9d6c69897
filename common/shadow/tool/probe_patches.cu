// probe_patches.cu: the probe's device side. One patch function per
// instrumentation point of CUDA's Sanitizer API (sanitizer_patching.h), each
// counting, per kernel, the threads that reach a patched instruction, which
// instructions (their pc) and the arguments of the first few calls. The host
// library (probe_inject.c) loads this fatbin, asks the API to patch every point
// of every module, gives each kernel its ProbeRecord as userdata, and writes
// the records out. Nothing here judges anything: the probe only asks what the
// API sees on sm_90a.
//
// Built with nvcc --fatbin --compile-as-tools-patch (the Makefile's shadow
// tool rules), as NVIDIA's compute-sanitizer-samples build theirs.
#include <sanitizer_patching.h>

#include "common/shadow/tool/probe_record.h"

static __device__ __forceinline__ unsigned probe_block(void) {
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
static __device__ __forceinline__ unsigned probe_thread(void) {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static __device__ __noinline__ void probe_hit(void* userdata, unsigned cls, uint64_t pc, uint64_t a0,
                                              uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                                              uint64_t a5) {
    ProbeRecord* r = (ProbeRecord*)userdata;
    if (!r) return;  // a kernel launched before the host library gave it a record
    atomicAdd(&r->calls[cls], 1ull);
    const unsigned h = (unsigned)(pc >> 4) % PROBE_PCS;
    for (unsigned i = 0; i < PROBE_PCS; ++i) {
        const unsigned k = (h + i) % PROBE_PCS;
        unsigned long long have = *(volatile unsigned long long*)&r->pcs[cls][k];
        if (have == 0) have = atomicCAS(&r->pcs[cls][k], 0ull, (unsigned long long)pc);
        if (have == 0 || have == pc) {
            atomicAdd(&r->pc_calls[cls][k], 1ull);
            break;
        }
    }
    if (*(volatile unsigned*)&r->nsamples[cls] >= PROBE_SAMPLES) return;
    const unsigned s = atomicAdd(&r->nsamples[cls], 1u);
    if (s >= PROBE_SAMPLES) return;
    ProbeSample* p = &r->samples[cls][s];
    p->pc = pc;
    p->block = probe_block();
    p->thread = probe_thread();
    p->arg[0] = a0, p->arg[1] = a1, p->arg[2] = a2, p->arg[3] = a3, p->arg[4] = a4, p->arg[5] = a5;
}

// The first 4 bytes a patch's value pointer shows (a store's new value, a
// load's mask of used bytes), or all ones where there is none.
static __device__ __forceinline__ uint64_t probe_value(const void* p, uint32_t size) {
    if (!p) return ~0ull;
    return size >= 4 ? *(const uint32_t*)p : size == 2 ? *(const uint16_t*)p : *(const uint8_t*)p;
}

#define PATCH extern "C" __device__ __noinline__ SanitizerPatchResult
#define HIT(cls, ...) probe_hit(ud, cls, pc, __VA_ARGS__)

// clang-format off
PATCH probe_block_enter(void* ud, uint64_t pc) { HIT(1, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_block_exit(void* ud, uint64_t pc) { HIT(2, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
#define MEMORY_PATCH(name, cls)                                                                          \
    PATCH name(void* ud, uint64_t pc, void* ptr, uint32_t size, uint32_t flags, const void* data) {      \
        HIT(cls, (uint64_t)ptr, size, flags, data != 0, probe_value(data, size), 0);                      \
        return SANITIZER_PATCH_SUCCESS;                                                                   \
    }
MEMORY_PATCH(probe_global_access, 3)
MEMORY_PATCH(probe_shared_access, 4)
MEMORY_PATCH(probe_local_access, 5)
MEMORY_PATCH(probe_remote_shared_access, 17)
PATCH probe_barrier(void* ud, uint64_t pc, uint32_t index, uint32_t count, uint32_t flags) { HIT(6, index, count, flags, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_syncwarp(void* ud, uint64_t pc, uint32_t mask) { HIT(7, mask, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_shfl(void* ud, uint64_t pc) { HIT(8, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_call(void* ud, uint64_t pc, uint64_t target, uint32_t flags) { HIT(9, target, flags, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_ret(void* ud, uint64_t pc) { HIT(10, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_malloc(void* ud, uint64_t pc, void* p, uint64_t size) { HIT(11, (uint64_t)p, size, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_free(void* ud, uint64_t pc, void* p) { HIT(12, (uint64_t)p, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_cuda_barrier(void* ud, uint64_t pc, void* bar, uint32_t kind, uint32_t data) { HIT(13, (uint64_t)bar, kind, data, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_memcpy_async(void* ud, uint64_t pc, void* src, uint32_t dst, uint32_t size) { HIT(14, (uint64_t)src, dst, size, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_pipeline_commit(void* ud, uint64_t pc) { HIT(15, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_pipeline_wait(void* ud, uint64_t pc, uint32_t groups) { HIT(16, groups, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_aligned_malloc(void* ud, uint64_t pc, void* p, uint64_t size) { HIT(18, (uint64_t)p, size, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_matrix_access(void* ud, uint64_t pc, uint32_t addr, uint32_t size, uint32_t flags, uint32_t count, const void* value) { HIT(19, addr, size, flags, count, value != 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_cache_control(void* ud, uint64_t pc, void* addr, Sanitizer_CacheControlInstructionKind kind) { HIT(20, (uint64_t)addr, (uint64_t)kind, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_cluster_arrive(void* ud, uint64_t pc) { HIT(21, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_cluster_wait(void* ud, uint64_t pc) { HIT(22, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_wgmma(void* ud, uint64_t pc, uint32_t a, uint32_t a_size, uint32_t b, uint32_t b_size, uint32_t flags, uint32_t warps) { HIT(23, a, a_size, b, b_size, flags, warps); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_wgmma_wait(void* ud, uint64_t pc, uint32_t groups, uint32_t warps) { HIT(24, groups, warps, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_wgmma_fence(void* ud, uint64_t pc, uint32_t warps) { HIT(25, warps, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_async_store(void* ud, uint64_t pc, uint32_t addr, uint32_t bar, void* value, uint32_t size) { HIT(26, addr, bar, probe_value(value, size), size, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_async_reduction(void* ud, uint64_t pc, uint32_t addr, uint32_t bar, uint32_t size) { HIT(27, addr, bar, size, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_set_smem_size(void* ud, uint64_t pc, uint32_t size) { HIT(28, size, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_barrier_release(void* ud, uint64_t pc, uint32_t index, uint32_t count, uint32_t flags) { HIT(29, index, count, flags, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_bulk_g2s(void* ud, uint64_t pc, uint64_t src, uint32_t dst, uint32_t bar, uint32_t data, uint32_t multicast) { HIT(30, src, dst, bar, data, multicast, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_tensor_core_barrier(void* ud, uint64_t pc, uint32_t bar, uint32_t multicast, uint32_t mask) { HIT(31, bar, multicast, mask, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_memset_shared(void* ud, uint64_t pc, uint32_t dst, uint32_t blocks) { HIT(32, dst, blocks, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_syncwarp_release(void* ud, uint64_t pc, uint32_t mask) { HIT(33, mask, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_memcpy_async_barrier(void* ud, uint64_t pc, uint32_t bar) { HIT(34, bar, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_bulk_s2g(void* ud, uint64_t pc, uint64_t dst, uint32_t src, uint32_t blocks) { HIT(35, dst, src, blocks, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_bulk_s2s(void* ud, uint64_t pc, uint32_t src, uint32_t dst, uint32_t bar, uint32_t blocks) { HIT(36, src, dst, bar, blocks, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_bulk_reduce_s2g(void* ud, uint64_t pc, uint64_t dst, uint32_t src, uint32_t blocks) { HIT(37, dst, src, blocks, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_bulk_reduce_s2s(void* ud, uint64_t pc, uint32_t src, uint32_t dst, uint32_t bar, uint32_t blocks) { HIT(38, src, dst, bar, blocks, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_cuda_barrier_attempt(void* ud, uint64_t pc, void* bar, uint32_t kind, uint32_t data, uint32_t result) { HIT(39, (uint64_t)bar, kind, data, result, 0, 0); return SANITIZER_PATCH_SUCCESS; }
PATCH probe_cluster_wait_entry(void* ud, uint64_t pc) { HIT(40, 0, 0, 0, 0, 0, 0); return SANITIZER_PATCH_SUCCESS; }
// clang-format on
