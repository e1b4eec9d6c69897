// shadow.cuh: the shadow build's protocol checker, on the GPU (compiled only
// with -DTUTORIAL_SHADOW, i.e. make SHADOW=1; common/tutorial.cuh includes it).
//
// Every wrapper of the steps (cp_async.cuh, mbarrier.cuh, tma_load.cuh,
// tma_store.cuh, tma_reduce.cuh, cluster.cuh, tensormap_edit.cuh, wgmma.cuh)
// calls one of the shadow_* functions below before its instruction, with the
// caller's file, line and function (common/shadow/hooks.h). They find this
// CTA's state (a slot of global memory, claimed by its first call), apply the
// event to it (common/shadow/core.h: the rules) and, when a rule breaks, fill
// the report; from then on every bounded wait gives up, so the kernel ends,
// and the host prints the report under the part's failing check line.
//
// What the shadow cannot see, it does not judge: ordinary loads and stores
// (except where a kernel says SHADOW_WROTE / SHADOW_READ), the order of a
// fence and a barrier in one thread (make test's SASS order checks do), a
// release or acquire that is not a wrapper (the fence pins do).
#pragma once

#ifdef TUTORIAL_SHADOW

#include <cuda.h>  // CUtensorMap

#include "common/shadow/core.h"

// ---- the global state ----------------------------------------------------------
#define SH_MAP_ENTRIES (1 << 18)  // content hash -> props, per table; every edited state of every map goes in
#define SH_GMAPS 4096             // tensor maps the device wrote into global memory
#define SH_CLAIMING (1ull << 63)

typedef struct {
    unsigned int state;  // 0 free, 1 being written, 2 ready
    unsigned long long hash;
    ShProps props;
} ShMapEntry;

typedef struct {
    ShCta* slots;
    unsigned int nslots;
    ShMapEntry* host_maps;    // made by the host's encoder (tensor_map.h)
    ShMapEntry* device_maps;  // derived by an edit on the device
    ShGlobalMap* gmaps;
    unsigned int untracked;  // CTAs the shadow could not track (their slot was in use)
    ShReport report;
} ShGlobal;

__device__ ShGlobal g_shadow;  // not static: each program is one translation unit

// ---- this CTA's slot -------------------------------------------------------------
static __device__ __forceinline__ uint32_t sh_linear_cta(uint3 b) {
    return b.x + gridDim.x * (b.y + gridDim.y * b.z);
}
static __device__ __forceinline__ unsigned long long sh_owner_of(uint32_t cta) {
    unsigned long long grid;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    return ((grid & 0x3FFFFFFFull) << 32 | cta) + 1;
}
static __device__ __forceinline__ ShCta* sh_slot(uint32_t i) {
    return g_shadow.slots + i;
}

static __device__ __noinline__ void sh_reset(ShCta* s) {
    uint32_t smem, cx, cy, cz;
    asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(smem));
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cx));
    asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(cy));
    asm volatile("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(cz));
    const uint32_t blk[3] = {blockIdx.x, blockIdx.y, blockIdx.z};
    // the window's reserved 1 KiB first; the wrappers' hooks see no named barrier nor __syncwarp (feed 0)
    sh_cta_reset(s, blockDim.x * blockDim.y * blockDim.z, (smem + 1024 + 15) / 16, cx * cy * cz, blk, 0u);
}

// This CTA's state, claimed by the first of its threads to get here (its
// predecessor in the slot has ended: its leftovers are audited first), or
// NULL if the shadow is off or another live CTA holds the slot.
static __device__ __noinline__ ShCta* sh_this_cta(void) {
    if (!g_shadow.slots) return NULL;
    const uint32_t cta = sh_linear_cta(blockIdx);
    const unsigned long long owner = sh_owner_of(cta);
    ShCta* s = sh_slot(cta % g_shadow.nslots);
    unsigned long long cur = SH_LD(s->owner);
    if (cur == owner) return s;
    if (cur != (owner | SH_CLAIMING) && SH_CAS64(&s->owner, cur, owner | SH_CLAIMING) == cur) {
        if (cur && !(cur & SH_CLAIMING)) sh_exit_audit(&g_shadow.report, s);
        sh_reset(s);
        SH_ST(s->generation, SH_LD(s->generation) + 1);
        __threadfence();
        SH_ST(s->owner, owner);
        return s;
    }
    while ((cur = SH_LD(s->owner)) == (owner | SH_CLAIMING)) {
    }
    if (cur == owner) return s;
    atomicAdd(&g_shadow.untracked, 1u);
    return NULL;
}

// The state of the CTA of rank `rank` in this CTA's cluster, or NULL if that
// CTA has not started using the shadow (no barrier of it initialized).
static __device__ __noinline__ ShCta* sh_peer_cta(uint32_t rank) {
    uint32_t cx, cy, ix, iy, iz;
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cx));
    asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(cy));
    asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(ix));
    asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(iy));
    asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(iz));
    const uint3 peer = make_uint3(blockIdx.x - ix + rank % cx, blockIdx.y - iy + rank / cx % cy,
                                  blockIdx.z - iz + rank / (cx * cy));
    const uint32_t cta = sh_linear_cta(peer);
    ShCta* s = sh_slot(cta % g_shadow.nslots);
    return SH_LD(s->owner) == sh_owner_of(cta) ? s : NULL;
}

static __device__ __forceinline__ uint32_t sh_tid(void) {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static __device__ __forceinline__ int sh_ctx(ShCtx* c, const char* file, int line, const char* func) {
    c->cta = sh_this_cta();
    if (!c->cta) return 0;
    c->tid = sh_tid();
    c->site.file = file;
    c->site.line = line;
    c->site.func = func;
    c->report = &g_shadow.report;
    return 1;
}
#define SH_CTX(file, line, func) \
    ShCtx c;                     \
    if (!sh_ctx(&c, file, line, func)) return
#define SH_SITE_ARGS const char *file, int line, const char *func

// This CTA's offset of a shared address. In a cluster launch the shared
// window's address of a CTA's own shared memory carries its rank above bit
// 24 (on the H200: rank 1's offset 0x400 reads 0x1000400); the state of every
// CTA is kept by offset, so that a peer's barrier is found at the same one.
static __device__ __forceinline__ uint32_t sh_smem(const void* p) {
    return sh_smem_offset((uint32_t)__cvta_generic_to_shared(p));
}

// Once a rule is broken the program's bounded waits give up (mbarrier.cuh).
static __device__ __forceinline__ int shadow_stopped(void) {
    return (int)SH_LD(g_shadow.report.reported);
}

// A peer's state for a remote operation; a missing one is rule B1.
static __device__ ShCta* sh_target(const ShCtx* c, uint32_t rank, uint32_t bar, const char* what) {
    uint32_t mine;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(mine));
    if (rank == mine) return c->cta;
    ShCta* to = sh_peer_cta(rank);
    if (!to) {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, what);
        sh_s(&m, " the barrier at shared ");
        sh_x(&m, bar);
        sh_s(&m, " of cluster rank ");
        sh_u(&m, rank);
        sh_s(&m,
             ", which has not initialized any barrier yet: its init must be published (fence.mbarrier_init, "
             "then a cluster barrier) before peers use it");
        sh_report(c, SH_B1, &m);
    }
    return to;
}

// ---- tensor maps: what a map moves, from its 128 bytes ------------------------------
static __host__ __device__ inline unsigned long long sh_map_hash(const void* map) {
    const unsigned long long* w = (const unsigned long long*)map;
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < 16; ++i) {
        h ^= w[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

// Props another SM wrote: read past this SM's L1 (volatile, word by word). A plain copy may hit a
// line cached before the entry was filled (a neighbour's lookup brought it in) and read zeros: a map
// of unknown size, whose loads the shadow can no longer count (a false M1 later, seen once in three
// full-size runs of 10_grouped_gemm on the H200).
static __device__ void sh_props_load(ShProps* out, const ShProps* from) {
    const volatile uint32_t* w = (const volatile uint32_t*)from;
    for (uint32_t i = 0; i < sizeof(ShProps) / 4; ++i) ((uint32_t*)out)[i] = w[i];
}
static_assert(sizeof(ShProps) % 4 == 0, "ShProps is whole 32-bit words");

static __device__ int sh_table_find(const ShMapEntry* t, unsigned long long h, ShProps* out) {
    for (uint32_t i = 0; i < 64; ++i) {
        const ShMapEntry* e = &t[(h + i) % SH_MAP_ENTRIES];
        const unsigned int st = SH_LD(e->state);
        if (st == 0) return 0;
        if (st == 2 && SH_LD(e->hash) == h) {
            sh_props_load(out, &e->props);
            return 1;
        }
    }
    return 0;
}

static __device__ void sh_table_insert(ShMapEntry* t, unsigned long long h, const ShProps* p) {
    ShProps have;
    if (sh_table_find(t, h, &have)) return;
    for (uint32_t i = 0; i < 64; ++i) {
        ShMapEntry* e = &t[(h + i) % SH_MAP_ENTRIES];
        if (SH_CAS32(&e->state, 0u, 1u) != 0u) continue;
        e->hash = h;
        e->props = *p;
        __threadfence();
        SH_ST(e->state, 2u);
        return;
    }
}

static __device__ ShGlobalMap* sh_gmap(unsigned long long addr, int create) {
    const uint32_t h = (uint32_t)(addr >> 7) % SH_GMAPS;
    for (uint32_t i = 0; i < SH_GMAPS; ++i) {
        ShGlobalMap* g = &g_shadow.gmaps[(h + i) % SH_GMAPS];
        const unsigned long long a = SH_LD(g->addr);
        if (a == addr) return g;
        if (a == 0) {
            if (!create) return NULL;
            if (SH_CAS64(&g->addr, 0ull, addr) == 0ull) return g;
            if (SH_LD(g->addr) == addr) return g;
        }
    }
    return NULL;
}

// A tensor map in global memory (a workspace the device or the host wrote),
// not a __grid_constant__ kernel parameter (whose generic address __isGlobal
// also accepts): only the former has a release and an acquire to keep.
static __device__ __forceinline__ int sh_map_in_global(const void* map) {
    return __isGlobal(map) && !__isGridConstant(map);
}

static __device__ ShProps sh_props_of(const void* map) {
    ShProps p;
    memset(&p, 0, sizeof p);
    if (sh_map_in_global(map)) {
        const ShGlobalMap* g = sh_gmap((unsigned long long)map, 0);
        if (g && SH_LD(g->device_written)) {
            sh_props_load(&p, &g->props);
            if (p.known) return p;
            memset(&p, 0, sizeof p);
        }
    }
    const unsigned long long h = sh_map_hash(map);
    if (!sh_table_find(g_shadow.host_maps, h, &p)) sh_table_find(g_shadow.device_maps, h, &p);
    return p;
}

// M2, M3 for a map in global memory; the use remembered for M1.
static __device__ int sh_map_use(const ShCtx* c, const void* map, uint32_t kind, uint32_t seq, uint32_t bar) {
    if (!sh_map_in_global(map))
        return 1;  // a __grid_constant__ parameter: the launch made it, nothing to order
    const unsigned long long addr = (unsigned long long)map;
    ShGlobalMap* g = sh_gmap(addr, 0);
    if (!sh_map_check_use(c, g, addr)) return 0;
    if (!g) g = sh_gmap(addr, 1);
    if (g) sh_map_note_use(c, g, kind, seq, bar);
    return 1;
}

// ---- the hooks, one per wrapper -------------------------------------------------------
static __device__ __noinline__ void shadow_mbar_init(const void* bar, uint32_t count, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_mbar_init(&c, sh_smem(bar), count);
}
static __device__ __noinline__ void shadow_mbar_fence_init(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_mbar_fence_init(&c);
}
static __device__ __noinline__ void shadow_arrive(const void* bar, uint32_t bytes, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_arrive(&c, c.cta, sh_smem(bar), bytes);
}
static __device__ __noinline__ void shadow_arrive_remote(const void* bar, uint32_t rank, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    ShCta* to = sh_target(&c, rank, sh_smem(bar), "arrive on");
    if (to) sh_arrive(&c, to, sh_smem(bar), 0);
}
static __device__ __noinline__ void shadow_wait_end(const void* bar, uint32_t parity, bool ok, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    // One thread per warp keeps the barrier's record; each keeps its own learning.
    if (ok)
        sh_wait_done(&c, sh_smem(bar), parity);
    else if (!shadow_stopped())
        sh_wait_gave_up(&c, c.cta, sh_smem(bar), parity);
}
// SHADOW_WAITED: hands a bounded wait's result on, after telling the shadow.
static __device__ __forceinline__ bool shadow_waited(const void* bar, uint32_t parity,
                                                     bool done SHADOW_SITE) {
    shadow_wait_end(bar, parity, done SHADOW_PASS);
    return done;
}

static __device__ __noinline__ void shadow_tma_load(void* dst, const void* map, const void* bar,
                                                    uint32_t mask, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    const ShProps p = sh_props_of(map);
    const uint32_t b = sh_smem(bar);
    ShBar* own = sh_bar_find(c.cta, b);
    if (!sh_map_use(&c, map, 2, own ? sh_done(SH_LD(own->st)) : 0u, own ? (uint32_t)(own - c.cta->bars) : 0u))
        return;
    const char* what = mask ? "a multicast TMA load writes" : "a TMA load writes";
    if (!mask) {
        sh_load_into(&c, c.cta, sh_smem(dst), p.load_bytes, p.load_bytes, b, p.swizzle, what);
        return;
    }
    for (uint32_t r = 0; r < 16; ++r)
        if (mask >> r & 1) {
            ShCta* to = sh_target(&c, r, b, "a multicast into");
            if (!to) return;
            sh_load_into(&c, to, sh_smem(dst), p.load_bytes, p.load_bytes, b, p.swizzle, what);
        }
}
static __device__ __noinline__ void shadow_bulk_load(void* dst, uint32_t bytes, const void* bar,
                                                     SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_load_into(&c, c.cta, sh_smem(dst), bytes, bytes, sh_smem(bar), 0, "a bulk load writes");
}
static __device__ __noinline__ void shadow_tma_store(const void* map, const void* src, const char* what,
                                                     SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    const ShProps p = sh_props_of(map);
    if (!sh_map_use(&c, map, 1, SH_LD(c.cta->threads[c.tid].bk_committed) + 1, 0)) return;
    sh_bulk_read(&c, sh_smem(src), p.known ? p.box_bytes : 16u, what);
}
static __device__ __noinline__ void shadow_bulk_store(const void* src, uint32_t bytes, const char* what,
                                                      SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_bulk_read(&c, sh_smem(src), bytes, what);
}
static __device__ __noinline__ void shadow_copy_to_peer(void* dst, const void* src, uint32_t bytes,
                                                        const void* bar, uint32_t rank, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    // No bulk group: the copy completes on the receiver's barrier, and the
    // sender learns of it only through a cluster barrier (cluster.cuh).
    if (!sh_check_fenced(&c, c.cta, sh_smem(src), sh_smem(src) + bytes, "a bulk copy to a peer reads"))
        return;
    ShCta* to = sh_target(&c, rank, sh_smem(bar), "a bulk copy into");
    if (to)
        sh_load_into(&c, to, sh_smem(dst), bytes, bytes, sh_smem(bar), 0, "a bulk copy from a peer writes");
}
static __device__ __noinline__ void shadow_bulk_commit(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_bulk_commit(&c);
}
static __device__ __noinline__ void shadow_bulk_wait(uint32_t n, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_bulk_wait(&c, n);
}
static __device__ __noinline__ void shadow_fence_proxy_async(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_fence_proxy_async(&c);
}
static __device__ __noinline__ void shadow_wrote(const void* p, uint32_t bytes, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_wrote(&c, sh_smem(p), bytes);
}
static __device__ __noinline__ void shadow_read(const void* p, uint32_t bytes, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_read(&c, sh_smem(p), bytes);
}
static __device__ __noinline__ void shadow_epoch(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_syncthreads(&c);
}
static __device__ __noinline__ void shadow_cp_async(const void* dst, uint32_t bytes, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_cp_async(&c, sh_smem(dst), bytes);
}
static __device__ __noinline__ void shadow_cp_commit(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_cp_commit(&c);
}
static __device__ __noinline__ void shadow_cp_wait(uint32_t n, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_cp_wait(&c, n);
}
static __device__ __noinline__ void shadow_cp_wait_all(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_cp_commit(&c);  // cp.async.wait_all: commit, then wait for none pending
    sh_cp_wait(&c, 0);
}
static __device__ __noinline__ void shadow_wgmma_fence(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_wg_fence(&c);
}
static __device__ __noinline__ void shadow_wgmma(unsigned long long desc_a, unsigned long long desc_b,
                                                 uint32_t a_rows, uint32_t b_rows, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_mma(&c, desc_a, desc_b, a_rows, b_rows);
}
static __device__ __noinline__ void shadow_wgmma_commit(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_wg_commit(&c);
}
static __device__ __noinline__ void shadow_wgmma_wait(uint32_t n, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_wg_wait(&c, n);
}
static __device__ __noinline__ void shadow_wgmma_operands(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_wg_operands(&c);
}
static __device__ __noinline__ void shadow_cluster_arrive(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_cluster_arrive(&c);
}
static __device__ __noinline__ void shadow_cluster_wait(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_cluster_wait(&c);
}

// tensormap.replace, in shared or global memory: the props before the edit
// (from the map's bytes), then, after it, the new bytes' props remembered.
static __device__ __noinline__ void shadow_map_edit_begin(const void* map, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    sh_edit_slot(&c, (unsigned long long)map)->props = sh_props_of(map);
}
static __device__ __noinline__ void shadow_map_edit_end(void* map, int field, uint32_t ord, uint32_t value,
                                                        SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    ShProps p = sh_edit_slot(&c, (unsigned long long)map)->props;
    sh_props_edit(&p, field, ord, value);
    if (p.known) sh_table_insert(g_shadow.device_maps, sh_map_hash(map), &p);
    if (!sh_map_in_global(map)) return;
    ShGlobalMap* g = sh_gmap((unsigned long long)map, 1);
    if (g) sh_map_edit_global(&c, g, &p);
}
static __device__ __noinline__ void shadow_map_publish(void* slot, const void* smem_map, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    // The whole warp executes cp_fenceproxy (.sync.aligned): lane 0 records it, and no lane goes on
    // before it has (a lane that acquires the slot next must find the new version released).
    __syncwarp();
    if (sh_tid() % 32 == 0) {
        ShGlobalMap* g = sh_gmap((unsigned long long)slot, 1);
        const ShProps p = sh_props_of(smem_map);
        if (g) sh_map_publish(&c, g, &p);
    }
    __syncwarp();
}
static __device__ __noinline__ void shadow_map_release(SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    for (uint32_t i = 0; i < SH_GMAPS; ++i) sh_map_release(&c, &g_shadow.gmaps[i]);
    __threadfence();
}
static __device__ __noinline__ void shadow_map_acquire(const void* map, uint32_t sys, SH_SITE_ARGS) {
    SH_CTX(file, line, func);
    ShGlobalMap* g = sh_gmap((unsigned long long)map, 0);
    // An acquire at system scope says the host wrote the map there (a copy the shadow cannot see): what the
    // device once wrote at that address is gone, and the map's sizes are the host encoder's.
    if (sys && g) SH_ST(g->device_written, 0u);
    sh_map_acquire(&c, (unsigned long long)map, g && SH_LD(g->device_written) ? g : NULL, sys);
}

// ---- __syncthreads(), counted: the race rules need "a barrier since" ---------------
static __device__ __forceinline__ void shadow_syncthreads(const char* file, int line, const char* func) {
    shadow_epoch(file, line, func);  // a release is reported before its barrier (core.h)
    asm volatile("bar.sync 0;" : : : "memory");
}
#define __syncthreads() shadow_syncthreads(__FILE__, __LINE__, __func__)

// ---- the host ---------------------------------------------------------------------
// At the end of a check: every CTA's leftovers audited (S3, C1), then the
// report, if any, as one line into `text`; everything cleared for what comes
// next. Returns 1 if a rule was broken.
__global__ void shadow_audit_kernel(void) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g_shadow.nslots) return;
    ShCta* s = sh_slot(i);
    const unsigned long long owner = SH_LD(s->owner);
    if (!owner) return;
    if (!(owner & SH_CLAIMING)) sh_exit_audit(&g_shadow.report, s);
    SH_ST(s->owner, 0ull);
}

static ShGlobal g_shadow_host;  // the host's copy of the pointers

static inline void shadow_host_init(void) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    ShGlobal g;
    memset(&g, 0, sizeof g);
    g.nslots = free_b / 4 > 8192 * sizeof(ShCta) ? 8192 : 4096;
    CUDA_CHECK(cudaMalloc((void**)&g.slots, (size_t)g.nslots * sizeof(ShCta)));
    CUDA_CHECK(cudaMalloc((void**)&g.host_maps, SH_MAP_ENTRIES * sizeof(ShMapEntry)));
    CUDA_CHECK(cudaMalloc((void**)&g.device_maps, SH_MAP_ENTRIES * sizeof(ShMapEntry)));
    CUDA_CHECK(cudaMalloc((void**)&g.gmaps, SH_GMAPS * sizeof(ShGlobalMap)));
    for (unsigned i = 0; i < g.nslots; ++i)  // only the owner words: a slot is reset when claimed
        CUDA_CHECK(cudaMemset(&g.slots[i].owner, 0, sizeof g.slots[i].owner));
    CUDA_CHECK(cudaMemset(g.host_maps, 0, SH_MAP_ENTRIES * sizeof(ShMapEntry)));
    CUDA_CHECK(cudaMemset(g.device_maps, 0, SH_MAP_ENTRIES * sizeof(ShMapEntry)));
    CUDA_CHECK(cudaMemset(g.gmaps, 0, SH_GMAPS * sizeof(ShGlobalMap)));
    CUDA_CHECK(cudaMemcpyToSymbol(g_shadow, &g, sizeof g));
    CUDA_CHECK(cudaDeviceSynchronize());
    g_shadow_host = g;
    fprintf(stderr,
            "shadow build: every wrapper's protocol is checked as it runs (common/shadow, %u CTA slots of "
            "%zu KiB); its timings mean nothing\n",
            g.nslots, sizeof(ShCta) >> 10);
}

// A map the host's encoder made: what one copy through it moves.
static inline void shadow_register_map(const CUtensorMap* map, uint32_t elem_bytes, uint32_t rank,
                                       const uint32_t* box, const uint32_t* estride, uint32_t swizzle) {
    static unsigned char used[SH_MAP_ENTRIES];
    if (!g_shadow_host.host_maps) return;
    ShMapEntry e;
    memset(&e, 0, sizeof e);
    e.hash = sh_map_hash(map);
    e.props.known = 1;
    e.props.rank = rank;
    e.props.elem_bytes = elem_bytes;
    e.props.swizzle = swizzle;
    for (uint32_t d = 0; d < 5; ++d) {
        e.props.box[d] = d < rank ? box[d] : 1u;
        e.props.estride[d] = d < rank ? estride[d] : 1u;
    }
    sh_props_sizes(&e.props);
    for (uint32_t i = 0; i < 64; ++i) {
        const uint32_t k = (uint32_t)((e.hash + i) % SH_MAP_ENTRIES);
        if (used[k] == 2) {
            ShMapEntry have;
            CUDA_CHECK(cudaMemcpy(&have, &g_shadow_host.host_maps[k], sizeof have, cudaMemcpyDeviceToHost));
            if (have.hash == e.hash) return;
            continue;
        }
        // the body first, then the state word that makes it visible to the device's lookups
        e.state = 0;
        CUDA_CHECK(cudaMemcpy(&g_shadow_host.host_maps[k], &e, sizeof e, cudaMemcpyHostToDevice));
        const unsigned int ready = 2;
        CUDA_CHECK(
            cudaMemcpy(&g_shadow_host.host_maps[k].state, &ready, sizeof ready, cudaMemcpyHostToDevice));
        used[k] = 2;
        return;
    }
}

// Between two runs of one timed part: the CTAs of the run before are audited and their slots freed, in
// stream order. A graph's kernel keeps its grid id from one replay to the next, so without this a replay's
// CTAs would take the slots of the last replay's as their own, with its barriers, uses and acquires.
static inline void shadow_between_runs(cudaStream_t stream) {
    if (!g_shadow_host.slots) return;
    shadow_audit_kernel<<<(g_shadow_host.nslots + 255) / 256, 256, 0, stream>>>();
    CUDA_CHECK(cudaGetLastError());
}

static inline int shadow_take_report(char* text, size_t cap) {
    if (!g_shadow_host.slots) return 0;
    CUDA_CHECK(cudaDeviceSynchronize());
    shadow_audit_kernel<<<(g_shadow_host.nslots + 255) / 256, 256>>>();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    ShGlobal g;
    CUDA_CHECK(cudaMemcpyFromSymbol(&g, g_shadow, sizeof g));
    if (g.untracked) {
        fprintf(stderr, "shadow: %u CTAs went unchecked (their slot was in use)\n", g.untracked);
        g.untracked = 0;
    }
    const int broken = g.report.reported != 0;
    if (broken) sh_format_report(&g.report, text, cap);
    memset(&g.report, 0, sizeof g.report);
    CUDA_CHECK(cudaMemcpyToSymbol(g_shadow, &g, sizeof g));
    return broken;
}

#endif  // TUTORIAL_SHADOW
