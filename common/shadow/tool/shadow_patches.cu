// shadow_patches.cu: the protocol checker's patch functions. CUDA's Sanitizer
// API calls one of these before each patched instruction of a checked kernel
// (the host library, shadow_tool.c, chooses the points and the modules), with
// the instruction's operands; each turns them into an event of the checker
// (common/shadow/shadow.cuh), which applies the rules (core.h). userdata is
// the launch's ShLaunch: the state and the launch's number.
//
// Every patch returns success: a rule broken is a report, and the waits of a
// kernel built with the hooks give up on it (shadow.cuh); a patch ending its
// warp could leave a barrier its warps never reach.
//
// Built with nvcc --fatbin --compile-as-tools-patch (the Makefile's shadow
// tool rules), as NVIDIA's compute-sanitizer-samples build theirs.
#define SHADOW_TOOL_PATCHES
#include <sanitizer_patching.h>

#include "common/shadow/shadow.cuh"

#define PATCH extern "C" __device__ __noinline__ SanitizerPatchResult
#define OK SANITIZER_PATCH_SUCCESS
#define LAUNCH(ud)                                         \
    const ShLaunch* l = (const ShLaunch*)(ud);             \
    ShGlobal* g = l ? l->g : NULL;                         \
    if (!g) return OK;                                     \
    const int hooked = (int)(l->flags & SH_LAUNCH_HOOKED); \
    const ShSite site = sh_pc_site(pc);                    \
    (void)hooked, (void)site

// The API names an mbarrier by its shared window address (a peer's: a
// shared::cluster one, its rank above bit 24).
static __device__ __forceinline__ uint32_t sh_bar_address(const void* bar) {
    return (uint32_t)(uintptr_t)bar;
}

PATCH shadow_block_enter(void* ud, uint64_t pc) {
    LAUNCH(ud);
    sh_on_enter(l);
    return OK;
}
PATCH shadow_block_exit(void* ud, uint64_t pc) {
    LAUNCH(ud);
    sh_on_exit(g);
    return OK;
}

// Every load and store of shared memory, by any code: ptr is its shared
// window address; an atomic (read and write) orders, it does not race.
PATCH shadow_shared_access(void* ud, uint64_t pc, void* ptr, uint32_t bytes, uint32_t flags,
                           const void* data) {
    LAUNCH(ud);
    (void)data;
    const uint32_t rw = flags & (SANITIZER_MEMORY_DEVICE_FLAG_READ | SANITIZER_MEMORY_DEVICE_FLAG_WRITE);
    if (rw == SANITIZER_MEMORY_DEVICE_FLAG_WRITE)
        sh_on_store(g, &site, (uint32_t)(uintptr_t)ptr, bytes, hooked);
    if (rw == SANITIZER_MEMORY_DEVICE_FLAG_READ) sh_on_load(g, &site, (uint32_t)(uintptr_t)ptr, bytes);
    return OK;
}
// ldmatrix / stmatrix: one 16-byte row per thread per matrix.
PATCH shadow_matrix_access(void* ud, uint64_t pc, uint32_t address, uint32_t bytes, uint32_t flags,
                           uint32_t count, const void* value) {
    LAUNCH(ud);
    (void)value, (void)count;
    if (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE)
        sh_on_store(g, &site, address, bytes, hooked);
    else
        sh_on_load(g, &site, address, bytes);
    return OK;
}
PATCH shadow_remote_shared_access(void* ud, uint64_t pc, void* ptr, uint32_t bytes, uint32_t flags,
                                  const void* data) {
    LAUNCH(ud);
    (void)data;
    sh_on_remote_access(g, &site, (uint32_t)(uintptr_t)ptr, bytes,
                        (flags & SANITIZER_MEMORY_DEVICE_FLAG_WRITE) != 0);
    return OK;
}

// bar.sync and barrier.sync (not bar.arrive: the probe saw no point fire at
// BAR.ARV; 06's named_barrier_arrive has a hook).
PATCH shadow_barrier(void* ud, uint64_t pc, uint32_t index, uint32_t count, uint32_t flags) {
    LAUNCH(ud);
    (void)flags;
    sh_on_barrier(g, &site, index, count, 1);
    return OK;
}
PATCH shadow_syncwarp(void* ud, uint64_t pc, uint32_t mask) {
    LAUNCH(ud);
    sh_on_syncwarp(g, &site, mask);
    return OK;
}

// Every mbarrier operation, with its result (the probe: CUDA_BARRIER_ATTEMPT
// fires at each, a superset of CUDA_BARRIER). data is an arrive's count; an
// init's count, an expect_tx's bytes and a wait's parity are not reported:
// the hooks give them (state.h: SH_BAR_HOOKED). A module without hooks (a
// twin, raw PTX) has its mbarriers unjudged: without the count and the
// parity no phase can be followed, and a rule on a phase guessed at would
// be a false alarm.
PATCH shadow_cuda_barrier(void* ud, uint64_t pc, void* bar, uint32_t kind, uint32_t data, uint32_t result) {
    LAUNCH(ud);
    (void)result;
    if (!hooked) return OK;
    const uint32_t b = sh_bar_address(bar);
    if (kind == SANITIZER_CUDA_BARRIER_INIT) sh_on_mbar_init(g, &site, b, 0u, 0);
    if (kind >= SANITIZER_CUDA_BARRIER_ARRIVE && kind <= SANITIZER_CUDA_BARRIER_ARRIVE_DROP_NOCOMPLETE)
        sh_on_arrive(g, &site, b, data ? data : 1u);
    if (kind == SANITIZER_CUDA_BARRIER_INVALIDATE) sh_on_mbar_inval(g, &site, b);
    return OK;
}

PATCH shadow_memcpy_async(void* ud, uint64_t pc, void* src, uint32_t dst, uint32_t bytes) {
    LAUNCH(ud);
    (void)src;
    sh_on_cp_async(g, &site, dst, bytes);
    return OK;
}
PATCH shadow_pipeline_commit(void* ud, uint64_t pc) {
    LAUNCH(ud);
    sh_on_cp_commit(g, &site);
    return OK;
}
// DEPBAR.LE SB0, N: a cp.async.wait_group N or (the same machine code) a
// cp.async.bulk.wait_group N; groups 0 is also cp.async.wait_all, which
// commits first. With the hooks, the bulk waits come from them (which also
// tell .read from a full wait); without, this wait covers the thread's bulk
// copies too: the commits of bulk groups are not reported either.
PATCH shadow_pipeline_wait(void* ud, uint64_t pc, uint32_t groups) {
    LAUNCH(ud);
    if (groups)
        sh_on_cp_wait(g, &site, groups);
    else
        sh_on_cp_wait_all(g, &site);
    if (!hooked) {
        sh_on_bulk_commit(g, &site);
        sh_on_bulk_wait(g, &site, groups);
    }
    return OK;
}
// cp.async.mbarrier.arrive: the thread's copies so far complete with an
// arrival on the barrier. Counted as what it promises the thread: its copies
// covered, one arrival.
PATCH shadow_memcpy_async_barrier(void* ud, uint64_t pc, uint32_t bar) {
    LAUNCH(ud);
    sh_on_cp_wait_all(g, &site);
    if (hooked) sh_on_arrive(g, &site, bar, 1u);
    return OK;
}

// cp.async.bulk global -> shared: data = 16-byte blocks [15:0], multicast mask [31:16].
PATCH shadow_bulk_g2s(void* ud, uint64_t pc, uint64_t src, uint32_t dst, uint32_t bar, uint32_t data,
                      uint32_t multicast) {
    LAUNCH(ud);
    (void)src;
    const uint32_t bytes = (data & 0xFFFFu) * 16u;
    sh_on_copy_in(g, &site, dst, bytes, hooked ? bar : SH_NO_BARRIER, multicast ? data >> 16 : 0u, bytes, 0,
                  "a bulk load writes");
    return OK;
}
// A bulk store or reduce from this CTA's shared memory into global: it reads
// `blocks` 16-byte blocks, in the thread's open bulk group.
#define BULK_READ_PATCH(name, what)                                                  \
    PATCH name(void* ud, uint64_t pc, uint64_t dst, uint32_t src, uint32_t blocks) { \
        LAUNCH(ud);                                                                  \
        (void)dst;                                                                   \
        sh_on_bulk_read(g, &site, src, blocks * 16u, what);                          \
        return OK;                                                                   \
    }
BULK_READ_PATCH(shadow_bulk_s2g, "a bulk store reads")
BULK_READ_PATCH(shadow_bulk_reduce_s2g, "a bulk reduce reads")
// A bulk copy or reduce into a peer's shared memory, completing on its barrier.
#define PEER_COPY_PATCH(name)                                                                      \
    PATCH name(void* ud, uint64_t pc, uint32_t src, uint32_t dst, uint32_t bar, uint32_t blocks) { \
        LAUNCH(ud);                                                                                \
        sh_on_copy_to_peer(g, &site, src, dst, blocks * 16u, hooked ? bar : SH_NO_BARRIER);        \
        return OK;                                                                                 \
    }
PEER_COPY_PATCH(shadow_bulk_s2s)
PEER_COPY_PATCH(shadow_bulk_reduce_s2s)
// st.async / red.async into a peer's shared memory, completing on its barrier.
PATCH shadow_async_store(void* ud, uint64_t pc, uint32_t addr, uint32_t bar, void* value, uint32_t bytes) {
    LAUNCH(ud);
    (void)value;
    sh_on_copy_in(g, &site, addr, bytes, hooked ? bar : SH_NO_BARRIER, 0, 0, 0, "st.async writes");
    return OK;
}
PATCH shadow_async_reduction(void* ud, uint64_t pc, uint32_t addr, uint32_t bar, uint32_t bytes) {
    LAUNCH(ud);
    sh_on_copy_in(g, &site, addr, bytes, hooked ? bar : SH_NO_BARRIER, 0, 0, 0, "red.async writes");
    return OK;
}

// wgmma: warps is 0 or all lanes; the MMA flagged COMMIT_GROUP closes its
// group (wgmma.commit_group itself is not reported). In a build with the
// hooks the whole protocol comes from the hooks, in the PTX's order: a hook
// is a call, and ptxas moves the machine's fence after the MMA's hook call
// and serializes the MMAs (a wait after each), which would hide a missing
// fence or an early hand-back.
PATCH shadow_wgmma(void* ud, uint64_t pc, uint32_t a, uint32_t a_bytes, uint32_t b, uint32_t b_bytes,
                   uint32_t flags, uint32_t warps) {
    LAUNCH(ud);
    if (hooked) return OK;
    if (warps) sh_on_wgmma_ranges(g, &site, a, a_bytes, b, b_bytes);
    if (flags & SANITIZER_WARPGROUP_MMA_ASYNC_FLAG_COMMIT_GROUP) sh_on_wgmma_commit(g, &site);
    return OK;
}
PATCH shadow_wgmma_wait(void* ud, uint64_t pc, uint32_t groups, uint32_t warps) {
    LAUNCH(ud);
    (void)warps;
    if (!hooked) sh_on_wgmma_wait(g, &site, groups);
    return OK;
}
PATCH shadow_wgmma_fence(void* ud, uint64_t pc, uint32_t warps) {
    LAUNCH(ud);
    (void)warps;
    if (!hooked) sh_on_wgmma_fence(g, &site);
    return OK;
}

PATCH shadow_cluster_arrive(void* ud, uint64_t pc) {
    LAUNCH(ud);
    sh_on_cluster_arrive(g, &site);
    return OK;
}
PATCH shadow_cluster_wait(void* ud, uint64_t pc) {
    LAUNCH(ud);
    sh_on_cluster_wait(g, &site);
    return OK;
}
