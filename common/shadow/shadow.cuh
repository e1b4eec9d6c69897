// shadow.cuh: the protocol checker on the GPU, the glue between what a kernel
// does and the rules (common/shadow/core.h). Two callers reach it:
//   - the checker's tool (common/shadow/tool/): CUDA's Sanitizer API patches
//     the program's kernels, and every shared load and store, barrier,
//     mbarrier operation, cp.async, bulk copy, wgmma and cluster barrier calls
//     a patch function (shadow_patches.cu), which calls the sh_on_* events
//     below. The kernels carry no annotation: a twin, raw PTX or a lab fill is
//     seen as the steps are;
//   - in a build with -DTUTORIAL_SHADOW, the wrappers' hooks (hooks.h), for
//     what the API cannot see (the probe's record, common/shadow/README.md):
//     the tensor TMA loads, stores and reduces, the bulk groups' commits and
//     waits, the proxy fences, an mbarrier's count, an expect_tx's bytes and a
//     wait's parity, bar.arrive, the tensor-map edits and fences, a wgmma's
//     descriptors and the threads' reads of its accumulators (the shadow_*
//     functions at the end).
// Both reach the same state: the tool allocates it (ShGlobal), hands it to
// every launch of a checked kernel as the patches' userdata (ShLaunch), and
// writes its address into g_shadow_state of a module built with the hooks.
//
// Each CTA's state is a slot of global memory, claimed when the CTA starts
// (the patch at its entry) and audited when its last thread ends (S3, C1). A
// rule broken fills one report (the first wins). A rule broken ends
// the waits of a kernel built with the hooks (shadow_stopped, mbarrier.cuh's
// bounded wait), so the kernel ends; the tool prints the report and fails
// the program.
#pragma once

#if defined(SHADOW_TOOL_PATCHES) || defined(TUTORIAL_SHADOW)

#include <cuda.h>  // CUtensorMap

#include "common/shadow/state.h"

// Where a patch-fed event happened (state.h: SH_PC_SITE).
static __device__ __forceinline__ ShSite sh_pc_site(uint64_t pc) {
    ShSite s;
    s.file = SH_PC_SITE;
    s.func = "";
    s.line = (int)(pc & 0x7FFFFFFFull);
    return s;
}

// ---- this CTA's slot -------------------------------------------------------------------
static __device__ __forceinline__ uint32_t sh_linear_cta(uint3 b) {
    return b.x + gridDim.x * (b.y + gridDim.y * b.z);
}
static __device__ __forceinline__ unsigned long long sh_owner_of(uint32_t cta) {
    unsigned long long grid;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    return ((grid & 0x3FFFFFFFull) << 32 | cta) + 1;
}
static __device__ __forceinline__ uint32_t sh_tid(void) {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// core.h's happens-before keeps the order of every sync object; the tool
// reports every bar.sync, __syncwarp and cluster barrier (feed SH_FEED_SYNC),
// so its rules run strict.
static __device__ __noinline__ void sh_reset(ShCta* s) {
    uint32_t smem, cx, cy, cz;
    asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(smem));
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cx));
    asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(cy));
    asm volatile("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(cz));
    const uint32_t nthreads = blockDim.x * blockDim.y * blockDim.z;
    const uint32_t nchunks = (smem + 1024 + 15) / 16;  // the window's reserved 1 KiB first
    const uint32_t blk[3] = {blockIdx.x, blockIdx.y, blockIdx.z};
    sh_cta_reset(s, nthreads, nchunks, cx * cy * cz, blk, SH_FEED_SYNC);
}

// Claims slot i for this CTA of launch `seq`: the previous holder (a CTA that
// ended, or this CTA's twin from an earlier replay of the same graph, which
// has the same grid id) is audited first (S3, C1), then the state is reset.
static __device__ __noinline__ ShCta* sh_claim(ShGlobal* g, uint32_t i, unsigned long long owner,
                                               uint32_t seq) {
    ShCta* s = g->slots + i;
    for (;;) {
        const unsigned long long cur = SH_LD(s->owner);
        if (cur == owner && SH_LD(g->slot_launch[i]) == seq) return s;
        if (cur & SH_CLAIMING) continue;  // another thread of this CTA claims it
        if (cur && cur != owner && ((cur - 1) >> 32) == ((owner - 1) >> 32)) {
            atomicAdd(&g->untracked, 1u);  // a live CTA of this grid holds it: this one goes unchecked
            return NULL;
        }
        if (SH_CAS64(&s->owner, cur, owner | SH_CLAIMING) != cur) continue;
        if (cur) sh_exit_audit(&g->report, s);
        sh_reset(s);
        SH_ST(s->generation, SH_LD(s->generation) + 1);
        SH_ST(g->slot_launch[i], seq);
        SH_ST(g->slot_ended[i], 0u);
        atomicAdd(&g->claims, 1u);
        __threadfence();
        SH_ST(s->owner, owner);
        return s;
    }
}

// This CTA's state, or NULL if it is not tracked. The patch at a CTA's entry
// claims the slot (sh_on_enter); a hook or a patch later only finds it.
static __device__ __forceinline__ ShCta* sh_this_cta(ShGlobal* g) {
    if (!g || !g->slots) return NULL;
    const uint32_t cta = sh_linear_cta(blockIdx);
    ShCta* s = g->slots + cta % g->nslots;
    return SH_LD(s->owner) == sh_owner_of(cta) ? s : NULL;
}

// The state of the CTA of rank `rank` in this CTA's cluster, or NULL if that
// CTA has not started.
static __device__ __noinline__ ShCta* sh_peer_cta(ShGlobal* g, uint32_t rank) {
    uint32_t cx, cy, ix, iy, iz;
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cx));
    asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(cy));
    asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(ix));
    asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(iy));
    asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(iz));
    const uint3 peer = make_uint3(blockIdx.x - ix + rank % cx, blockIdx.y - iy + rank / cx % cy,
                                  blockIdx.z - iz + rank / (cx * cy));
    const uint32_t cta = sh_linear_cta(peer);
    ShCta* s = g->slots + cta % g->nslots;
    return SH_LD(s->owner) == sh_owner_of(cta) ? s : NULL;
}

static __device__ __forceinline__ int sh_ctx(ShGlobal* g, ShCtx* c, const ShSite* site) {
    c->cta = sh_this_cta(g);
    if (!c->cta) return 0;
    c->tid = sh_tid();
    c->site = *site;
    c->report = &g->report;
    return 1;
}

// This CTA's offset of a shared address (core.h's sh_smem_offset). In a
// cluster launch the shared window's address of a
// CTA's own shared memory carries its rank above bit 24 (on the H200: rank
// 1's offset 0x400 reads 0x1000400); the state of every CTA is kept by
// offset, so that a peer's barrier is found at the same one.
static __device__ __forceinline__ uint32_t sh_smem(const void* p) {
    return sh_smem_offset((uint32_t)__cvta_generic_to_shared(p));
}
// The cluster rank a shared::cluster address names (mapa's result, a DSMEM operand).
static __device__ __forceinline__ uint32_t sh_rank_of(uint32_t window_address) {
    return window_address >> 24;
}

// A rule broken stops the waits of the launch that broke it.
static __device__ __forceinline__ int sh_stopped(const ShGlobal* g) {
    return g && SH_LD(g->report.reported);
}

// A peer's state for a remote operation; a missing one is rule B1.
static __device__ ShCta* sh_target(ShGlobal* g, const ShCtx* c, uint32_t rank, uint32_t bar,
                                   const char* what) {
    uint32_t mine;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(mine));
    if (rank == mine) return c->cta;
    ShCta* to = sh_peer_cta(g, rank);
    if (!to) {
        ShMsg m;
        sh_init_msg(&m);
        sh_s(&m, what);
        sh_s(&m, " the barrier at shared ");
        sh_x(&m, bar);
        sh_s(&m, " of cluster rank ");
        sh_u(&m, rank);
        sh_s(&m,
             ", which has not started: its init must be published (fence.mbarrier_init, then a cluster "
             "barrier) before peers use it");
        sh_report(c, SH_B1, &m);
    }
    return to;
}

// ---- tensor maps: what a map moves, from its 128 bytes ------------------------------------
// Props another SM wrote: read past this SM's L1 (volatile, word by word). A plain copy may hit a
// line cached before the entry was filled (a neighbour's lookup brought it in) and read zeros: a map
// of unknown size, whose loads the checker can no longer count (a false M1 later, seen once in three
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

static __device__ ShGlobalMap* sh_gmap(ShGlobal* g, unsigned long long addr, int create) {
    const uint32_t h = (uint32_t)(addr >> 7) % SH_GMAPS;
    for (uint32_t i = 0; i < SH_GMAPS; ++i) {
        ShGlobalMap* m = &g->gmaps[(h + i) % SH_GMAPS];
        const unsigned long long a = SH_LD(m->addr);
        if (a == addr) return m;
        if (a == 0) {
            if (!create) return NULL;
            if (SH_CAS64(&m->addr, 0ull, addr) == 0ull) return m;
            if (SH_LD(m->addr) == addr) return m;
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

static __device__ ShProps sh_props_of(ShGlobal* g, const void* map) {
    ShProps p;
    memset(&p, 0, sizeof p);
    if (sh_map_in_global(map)) {
        const ShGlobalMap* m = sh_gmap(g, (unsigned long long)map, 0);
        if (m && SH_LD(m->device_written)) {
            sh_props_load(&p, &m->props);
            if (p.known) return p;
            memset(&p, 0, sizeof p);
        }
    }
    const unsigned long long h = sh_map_hash(map);
    if (!sh_table_find(g->host_maps, h, &p)) sh_table_find(g->device_maps, h, &p);
    return p;
}

// M2, M3 for a map in global memory; the use remembered for M1.
static __device__ int sh_map_use(ShGlobal* g, const ShCtx* c, const void* map, uint32_t kind, uint32_t seq,
                                 uint32_t bar) {
    if (!sh_map_in_global(map))
        return 1;  // a __grid_constant__ parameter: the launch made it, nothing to order
    const unsigned long long addr = (unsigned long long)map;
    ShGlobalMap* m = sh_gmap(g, addr, 0);
    if (!sh_map_check_use(c, m, addr)) return 0;
    if (!m) m = sh_gmap(g, addr, 1);
    if (m) sh_map_note_use(c, m, kind, seq, bar);
    return 1;
}

// ---- the events, one per thing a kernel does -------------------------------------------
// Each takes the state, the site (a pc, or a hook's file and line) and what
// the instruction names; shared addresses are window addresses (sh_smem_offset).
#define SH_EVENT static __device__ __noinline__
#define SH_ENTER(g, site) \
    ShCtx c;              \
    if (!sh_ctx((g), &c, (site))) return

// A CTA's thread starts: the first one of the CTA claims its slot for this launch.
SH_EVENT void sh_on_enter(const ShLaunch* l) {
    ShGlobal* g = l->g;
    if (!g || !g->slots) return;
    const uint32_t cta = sh_linear_cta(blockIdx);
    sh_claim(g, cta % g->nslots, sh_owner_of(cta), l->seq);
}

// A thread ends; the CTA's last one audits what it leaves behind and frees the slot.
SH_EVENT void sh_on_exit(ShGlobal* g) {
    ShCta* s = sh_this_cta(g);
    if (!s) return;
    const uint32_t i = (uint32_t)(s - g->slots);
    if (atomicAdd(&g->slot_ended[i], 1u) + 1 != SH_LD(s->nthreads)) return;
    const unsigned long long owner = SH_LD(s->owner);
    if (SH_CAS64(&s->owner, owner, owner | SH_CLAIMING) != owner) return;
    sh_exit_audit(&g->report, s);
    __threadfence();
    SH_ST(s->owner, 0ull);
}

// A store by the threads. Without the hooks the proxy fences are unseen: the
// store is taken as fenced (S1 is judged only in a build with the hooks).
SH_EVENT void sh_on_store(ShGlobal* g, const ShSite* site, uint32_t addr, uint32_t bytes, int hooked) {
    SH_ENTER(g, site);
    sh_wrote(&c, sh_smem_offset(addr), bytes);
    if (!hooked) sh_fence_proxy_async(&c);
}
SH_EVENT void sh_on_load(ShGlobal* g, const ShSite* site, uint32_t addr, uint32_t bytes) {
    SH_ENTER(g, site);
    sh_read(&c, sh_smem_offset(addr), bytes);
}
// bar.sync (wait 1) or bar.arrive (wait 0) at barrier `id` for `count`
// threads (0: all of the CTA), and __syncwarp: reported before the
// instruction (a release must be in place when a partner passes).
SH_EVENT void sh_on_barrier(ShGlobal* g, const ShSite* site, uint32_t id, uint32_t count, int wait) {
    SH_ENTER(g, site);
    sh_bar(&c, id, count, wait);
}
SH_EVENT void sh_on_syncwarp(ShGlobal* g, const ShSite* site, uint32_t mask) {
    SH_ENTER(g, site);
    sh_syncwarp(&c, mask);
}

// A load or store of a peer's shared memory (a shared::cluster address):
// the peer must not end before it (C1), and a store must be released to it
// at cluster scope (X1).
SH_EVENT void sh_on_remote_access(ShGlobal* g, const ShSite* site, uint32_t addr, uint32_t bytes, int write) {
    SH_ENTER(g, site);
    uint32_t mine;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(mine));
    if (sh_rank_of(addr) == mine) return;
    ShCta* to = sh_peer_cta(g, sh_rank_of(addr));
    if (!to) return;
    sh_note_remote(&c, to);
    if (write) sh_remote_wrote(&c, to, sh_smem_offset(addr), bytes);
}

// An mbarrier's init: from the hook, with its count; from the API, which
// reports no count: after the hook's, nothing to add; alone (a kernel with no
// hooks), the barrier is kept with its bytes unknown (state.h, SH_BAR_HOOKED).
SH_EVENT void sh_on_mbar_init(ShGlobal* g, const ShSite* site, uint32_t bar, uint32_t count, int hooked) {
    SH_ENTER(g, site);
    const uint32_t at = sh_smem_offset(bar);
    ShBar* b = sh_bar_find(c.cta, at);
    if (!hooked && b && (SH_LD(b->flags) & SH_BAR_HOOK_FRESH)) {
        SH_ST(b->flags, SH_LD(b->flags) & ~(uint32_t)SH_BAR_HOOK_FRESH);
        return;
    }
    sh_mbar_init(&c, at, count);
    if (!(b = sh_bar_find(c.cta, at))) return;
    SH_ST(b->flags, hooked ? (uint32_t)(SH_BAR_HOOKED | SH_BAR_HOOK_FRESH)
                           : (uint32_t)(SH_BAR_UNKNOWN | SH_BAR_FENCED));
}
SH_EVENT void sh_on_mbar_fence_init(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_mbar_fence_init(&c);
}
// `count` arrivals on this CTA's barrier or (a shared::cluster address of
// another rank) a peer's. The API does not say an arrive's scope: a remote
// one is taken as released to the cluster (X1 is not judged on it).
SH_EVENT void sh_on_arrive(ShGlobal* g, const ShSite* site, uint32_t bar, uint32_t count) {
    SH_ENTER(g, site);
    ShCta* to = sh_target(g, &c, sh_rank_of(bar), sh_smem_offset(bar), "arrive on");
    if (!to) return;
    sh_arrive_n(&c, to, sh_smem_offset(bar), 0u, count, to == c.cta ? SH_SCOPE_CTA : SH_SCOPE_CLUSTER);
}
// mbarrier.inval: the barrier's life ends (B5: not while a copy toward it may be in flight).
SH_EVENT void sh_on_mbar_inval(ShGlobal* g, const ShSite* site, uint32_t bar) {
    SH_ENTER(g, site);
    sh_mbar_inval(&c, sh_smem_offset(bar));
}
// The bytes of an mbarrier.arrive.expect_tx, without its arrival: the API
// reports the arrival and no bytes, the wrapper's hook the bytes, first (the
// instruction's expect-tx comes before its arrive-on).
SH_EVENT void sh_on_expect_tx(ShGlobal* g, const ShSite* site, uint32_t bar, uint32_t bytes) {
    SH_ENTER(g, site);
    sh_arrive_n(&c, c.cta, sh_smem_offset(bar), bytes, 0u, SH_SCOPE_CTA);
}
SH_EVENT void sh_on_wait_done(ShGlobal* g, const ShSite* site, uint32_t bar, uint32_t parity) {
    SH_ENTER(g, site);
    sh_wait_done(&c, sh_smem_offset(bar), parity);
}
SH_EVENT void sh_on_wait_gave_up(ShGlobal* g, const ShSite* site, uint32_t bar, uint32_t parity) {
    SH_ENTER(g, site);
    if (!sh_stopped(g)) sh_wait_gave_up(&c, c.cta, sh_smem_offset(bar), parity);
}

// A copy into shared memory: `dst` and `bar` window addresses (of a peer for a
// copy from a peer); `mask` the ranks a multicast writes into, 0 for one CTA.
// bar SH_NO_BARRIER: a module without hooks, whose barriers are not followed:
// the write is checked against the readers still in flight (S2) and kept as
// the TMA's region; no phase is credited.
#define SH_NO_BARRIER 0xFFFFFFFFu
static __device__ void sh_copy_unbarriered(const ShCtx* c, ShCta* to, uint32_t dst, uint32_t bytes,
                                           uint32_t swizzle, const char* what) {
    const uint32_t hi = dst + (bytes ? bytes : 16u);
    if (!sh_check_rewrite(c, to, dst, hi, what)) return;
    sh_region_note(to, dst, hi, swizzle, 0u, 0u);
}
SH_EVENT void sh_on_copy_in(ShGlobal* g, const ShSite* site, uint32_t dst, uint32_t bytes, uint32_t bar,
                            uint32_t mask, uint32_t region_bytes, uint32_t swizzle, const char* what) {
    SH_ENTER(g, site);
    const uint32_t at = sh_smem_offset(dst);
    if (bar == SH_NO_BARRIER) {
        for (uint32_t r = 0; mask && r < 16; ++r) {
            ShCta* to = mask >> r & 1 ? sh_peer_cta(g, r) : NULL;
            if (to) sh_copy_unbarriered(&c, to, at, region_bytes, swizzle, what);
        }
        ShCta* to = mask ? NULL : sh_target(g, &c, sh_rank_of(dst), 0u, "a copy into");
        if (to) sh_copy_unbarriered(&c, to, at, region_bytes, swizzle, what);
        return;
    }
    const uint32_t on = sh_smem_offset(bar);
    if (!mask) {
        ShCta* to = sh_target(g, &c, sh_rank_of(dst), on, "a copy into");
        if (to) sh_load_into(&c, to, at, bytes, region_bytes, on, swizzle, what);
        return;
    }
    for (uint32_t r = 0; r < 16; ++r)
        if (mask >> r & 1) {
            ShCta* to = sh_target(g, &c, r, on, "a multicast into");
            if (!to) return;
            sh_load_into(&c, to, at, bytes, region_bytes, on, swizzle, what);
        }
}
// A bulk copy from this CTA's shared memory into a peer's: no bulk group; the
// copy completes on the receiver's barrier.
SH_EVENT void sh_on_copy_to_peer(ShGlobal* g, const ShSite* site, uint32_t src, uint32_t dst, uint32_t bytes,
                                 uint32_t bar) {
    SH_ENTER(g, site);
    const uint32_t from = sh_smem_offset(src), at = sh_smem_offset(dst);
    if (!sh_check_fenced(&c, c.cta, from, from + bytes, "a bulk copy to a peer reads")) return;
    const int barred = bar != SH_NO_BARRIER;
    ShCta* to = sh_target(g, &c, sh_rank_of(dst), barred ? sh_smem_offset(bar) : 0u, "a bulk copy into");
    if (to && !barred)
        sh_copy_unbarriered(&c, to, at, bytes, 0, "a bulk copy from a peer writes");
    else if (to)
        sh_load_into(&c, to, at, bytes, bytes, sh_smem_offset(bar), 0, "a bulk copy from a peer writes");
}
// A bulk store or reduce reading [src, src + bytes) of this CTA, in the thread's open bulk group.
SH_EVENT void sh_on_bulk_read(ShGlobal* g, const ShSite* site, uint32_t src, uint32_t bytes,
                              const char* what) {
    SH_ENTER(g, site);
    sh_bulk_read(&c, sh_smem_offset(src), bytes, what);
}
SH_EVENT void sh_on_bulk_commit(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_bulk_commit(&c);
}
SH_EVENT void sh_on_bulk_wait(ShGlobal* g, const ShSite* site, uint32_t n) {
    SH_ENTER(g, site);
    sh_bulk_wait(&c, n);
}
SH_EVENT void sh_on_fence_proxy_async(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_fence_proxy_async(&c);
}

SH_EVENT void sh_on_cp_async(ShGlobal* g, const ShSite* site, uint32_t dst, uint32_t bytes) {
    SH_ENTER(g, site);
    sh_cp_async(&c, sh_smem_offset(dst), bytes);
}
SH_EVENT void sh_on_cp_commit(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_cp_commit(&c);
}
SH_EVENT void sh_on_cp_wait(ShGlobal* g, const ShSite* site, uint32_t n) {
    SH_ENTER(g, site);
    sh_cp_wait(&c, n);
}
// cp.async.wait_all: a commit, then a wait that leaves none pending.
SH_EVENT void sh_on_cp_wait_all(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_cp_commit(&c);
    sh_cp_wait(&c, 0);
}

SH_EVENT void sh_on_wgmma_fence(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_wg_fence(&c);
}
// The MMA's hook (its descriptors), in the PTX's order with the fence's,
// commit's and wait's hooks.
SH_EVENT void sh_on_wgmma(ShGlobal* g, const ShSite* site, unsigned long long desc_a,
                          unsigned long long desc_b, uint32_t a_rows, uint32_t b_rows) {
    SH_ENTER(g, site);
    sh_mma(&c, desc_a, desc_b, a_rows, b_rows);
}
// The API's form of an MMA: the shared range each operand reads, not its
// descriptor. The rules take it as a descriptor naming that range (8 rows of
// `bytes` / 8 each: the span core.h computes) and the swizzle the TMA wrote
// there: W1, S2, P1 are judged, W3 is not (the layout is not reported).
static __device__ unsigned long long sh_desc_of_range(const ShCta* cta, uint32_t at, uint32_t bytes) {
    uint32_t layout = 0;
    for (int i = 0; i < SH_REGIONS; ++i) {
        const unsigned long long span = SH_LD(cta->regions[i].span);
        if (!SH_LD(cta->regions[i].seq) || at < sh_lo(span) || at >= sh_hi(span)) continue;
        const uint32_t sw = SH_LD(cta->regions[i].swizzle);  // CUtensorMapSwizzle -> the descriptor's layout
        layout = sw == 3 ? 1u : sw == 2 ? 2u : sw == 1 ? 3u : 0u;
        break;
    }
    return (unsigned long long)(at >> 4 & 0x3FFFu) | (unsigned long long)(bytes >> 4 & 0x3FFFu) << 32 |
           (unsigned long long)layout << 62;
}
SH_EVENT void sh_on_wgmma_ranges(ShGlobal* g, const ShSite* site, uint32_t a, uint32_t a_bytes, uint32_t b,
                                 uint32_t b_bytes) {
    SH_ENTER(g, site);
    const unsigned long long db = sh_desc_of_range(c.cta, sh_smem_offset(b), b_bytes);
    sh_mma(&c, a_bytes ? sh_desc_of_range(c.cta, sh_smem_offset(a), a_bytes) : db, db, 8, 8);
}
SH_EVENT void sh_on_wgmma_commit(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_wg_commit(&c);
}
SH_EVENT void sh_on_wgmma_wait(ShGlobal* g, const ShSite* site, uint32_t n) {
    SH_ENTER(g, site);
    sh_wg_wait(&c, n);
}
SH_EVENT void sh_on_wgmma_operands(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_wg_operands(&c);
}
SH_EVENT void sh_on_cluster_arrive(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_cluster_arrive(&c);
}
SH_EVENT void sh_on_cluster_wait(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    sh_cluster_wait(&c);
}

// A TMA load through a tensor map: what it moves comes from the map's bytes.
SH_EVENT void sh_on_tma_load(ShGlobal* g, const ShSite* site, uint32_t dst, const void* map, uint32_t bar,
                             uint32_t mask) {
    SH_ENTER(g, site);
    const ShProps p = sh_props_of(g, map);
    const uint32_t at = sh_smem_offset(dst), on = sh_smem_offset(bar);
    ShBar* own = sh_bar_find(c.cta, on);
    if (!sh_map_use(g, &c, map, 2, own ? sh_done(SH_LD(own->st)) : 0u,
                    own ? (uint32_t)(own - c.cta->bars) : 0u))
        return;
    const char* what = mask ? "a multicast TMA load writes" : "a TMA load writes";
    if (!mask) {
        sh_load_into(&c, c.cta, at, p.load_bytes, p.load_bytes, on, p.swizzle, what);
        return;
    }
    for (uint32_t r = 0; r < 16; ++r)
        if (mask >> r & 1) {
            ShCta* to = sh_target(g, &c, r, on, "a multicast into");
            if (!to) return;
            sh_load_into(&c, to, at, p.load_bytes, p.load_bytes, on, p.swizzle, what);
        }
}
SH_EVENT void sh_on_tma_store(ShGlobal* g, const ShSite* site, const void* map, uint32_t src,
                              const char* what) {
    SH_ENTER(g, site);
    const ShProps p = sh_props_of(g, map);
    if (!sh_map_use(g, &c, map, 1, SH_LD(c.cta->threads[c.tid].bk_committed) + 1, 0)) return;
    sh_bulk_read(&c, sh_smem_offset(src), p.known ? p.box_bytes : 16u, what);
}

// tensormap.replace, in shared or global memory: the props before the edit
// (from the map's bytes), then, after it, the new bytes' props remembered.
SH_EVENT void sh_on_map_edit_begin(ShGlobal* g, const ShSite* site, const void* map) {
    SH_ENTER(g, site);
    sh_edit_slot(&c, (unsigned long long)map)->props = sh_props_of(g, map);
}
SH_EVENT void sh_on_map_edit_end(ShGlobal* g, const ShSite* site, const void* map, int field, uint32_t ord,
                                 uint32_t value) {
    SH_ENTER(g, site);
    ShProps p = sh_edit_slot(&c, (unsigned long long)map)->props;
    sh_props_edit(&p, field, ord, value);
    if (p.known) sh_table_insert(g->device_maps, sh_map_hash(map), &p);
    if (!sh_map_in_global(map)) return;
    ShGlobalMap* m = sh_gmap(g, (unsigned long long)map, 1);
    if (m) sh_map_edit_global(&c, m, &p);
}
// tensormap.cp_fenceproxy (the whole warp): lane 0 records it, and no lane
// goes on before it has (a lane that acquires the slot next must find the
// new version released).
SH_EVENT void sh_on_map_publish(ShGlobal* g, const ShSite* site, const void* slot, const void* smem_map) {
    SH_ENTER(g, site);
    __syncwarp();
    if (c.tid % 32 == 0) {
        ShGlobalMap* m = sh_gmap(g, (unsigned long long)slot, 1);
        const ShProps p = sh_props_of(g, smem_map);
        if (m) sh_map_publish(&c, m, &p);
    }
    __syncwarp();
}
SH_EVENT void sh_on_map_release(ShGlobal* g, const ShSite* site) {
    SH_ENTER(g, site);
    for (uint32_t i = 0; i < SH_GMAPS; ++i) sh_map_release(&c, &g->gmaps[i]);
    __threadfence();
}
SH_EVENT void sh_on_map_acquire(ShGlobal* g, const ShSite* site, const void* map, uint32_t sys) {
    SH_ENTER(g, site);
    ShGlobalMap* m = sh_gmap(g, (unsigned long long)map, 0);
    // An acquire at system scope says the host wrote the map there (a copy the checker cannot see): what the
    // device once wrote at that address is gone, and the map's sizes are the host encoder's.
    if (sys && m) SH_ST(m->device_written, 0u);
    sh_map_acquire(&c, (unsigned long long)map, m && SH_LD(m->device_written) ? m : NULL, sys);
}

// ---- the wrappers' hooks (a build with -DTUTORIAL_SHADOW; hooks.h) -----------------------
// Only for what the Sanitizer API cannot see (the list at the top). Each hands
// its caller's file, line and function to the event; with no tool attached
// (g_shadow_state 0) they do nothing.
#ifdef TUTORIAL_SHADOW
__device__ ShGlobal* g_shadow_state;  // not static: the tool finds it by name (cuModuleGetGlobal)

#define SH_SITE_ARGS const char *file, int line, const char *func
#define SH_HOOK       \
    ShSite site;      \
    site.file = file; \
    site.line = line; \
    site.func = func; \
    ShGlobal* g = (ShGlobal*)SH_LD(g_shadow_state)
// A hook's shared address as a window address, the form the events take: the
// CTA's rank above bit 24 (how cvta shows a CTA's own shared memory in a
// cluster launch), its offset below.
static __device__ __forceinline__ uint32_t sh_window(const void* p) {
    uint32_t rank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank << 24 | sh_smem_offset((uint32_t)__cvta_generic_to_shared(p));
}
#define sh_window(p) sh_window(p)

// Once a rule is broken the program's bounded waits give up (mbarrier.cuh), so the kernel ends.
static __device__ __forceinline__ int shadow_stopped(void) {
    return sh_stopped((const ShGlobal*)SH_LD(g_shadow_state));
}

static __device__ __noinline__ void shadow_mbar_init(const void* bar, uint32_t count, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_mbar_init(g, &site, sh_window(bar), count, 1);
}
static __device__ __noinline__ void shadow_mbar_fence_init(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_mbar_fence_init(g, &site);
}
static __device__ __noinline__ void shadow_expect_tx(const void* bar, uint32_t bytes, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_expect_tx(g, &site, sh_window(bar), bytes);
}
static __device__ __noinline__ void shadow_wait_end(const void* bar, uint32_t parity, bool ok, SH_SITE_ARGS) {
    SH_HOOK;
    if (ok)
        sh_on_wait_done(g, &site, sh_window(bar), parity);
    else
        sh_on_wait_gave_up(g, &site, sh_window(bar), parity);
}
// SHADOW_WAITED: hands a bounded wait's result on, after telling the checker its parity.
static __device__ __forceinline__ bool shadow_waited(const void* bar, uint32_t parity,
                                                     bool done SHADOW_SITE) {
    shadow_wait_end(bar, parity, done SHADOW_PASS);
    return done;
}
static __device__ __noinline__ void shadow_bar_arrive(uint32_t id, uint32_t count, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_barrier(g, &site, id, count, 0);
}
static __device__ __noinline__ void shadow_tma_load(void* dst, const void* map, const void* bar,
                                                    uint32_t mask, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_tma_load(g, &site, sh_window(dst), map, sh_window(bar), mask);
}
static __device__ __noinline__ void shadow_tma_store(const void* map, const void* src, const char* what,
                                                     SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_tma_store(g, &site, map, sh_window(src), what);
}
static __device__ __noinline__ void shadow_bulk_commit(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_bulk_commit(g, &site);
}
static __device__ __noinline__ void shadow_bulk_wait(uint32_t n, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_bulk_wait(g, &site, n);
}
static __device__ __noinline__ void shadow_fence_proxy_async(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_fence_proxy_async(g, &site);
}
static __device__ __noinline__ void shadow_wgmma(unsigned long long desc_a, unsigned long long desc_b,
                                                 uint32_t a_rows, uint32_t b_rows, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_wgmma(g, &site, desc_a, desc_b, a_rows, b_rows);
}
// The group's fence, commit and wait as the PTX has them: in a build with the hooks, ptxas
// reorders the machine's (the fence after the MMA's hook call, a wait after every MMA), so
// the tool judges a hooked kernel's wgmma protocol from these, not from the patches.
static __device__ __noinline__ void shadow_wgmma_fence_ptx(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_wgmma_fence(g, &site);
}
static __device__ __noinline__ void shadow_wgmma_commit_ptx(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_wgmma_commit(g, &site);
}
static __device__ __noinline__ void shadow_wgmma_wait_ptx(uint32_t n, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_wgmma_wait(g, &site, n);
}
static __device__ __noinline__ void shadow_wgmma_operands(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_wgmma_operands(g, &site);
}
static __device__ __noinline__ void shadow_map_edit_begin(const void* map, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_map_edit_begin(g, &site, map);
}
static __device__ __noinline__ void shadow_map_edit_end(void* map, int field, uint32_t ord, uint32_t value,
                                                        SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_map_edit_end(g, &site, map, field, ord, value);
}
static __device__ __noinline__ void shadow_map_publish(void* slot, const void* smem_map, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_map_publish(g, &site, slot, smem_map);
}
static __device__ __noinline__ void shadow_map_release(SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_map_release(g, &site);
}
static __device__ __noinline__ void shadow_map_acquire(const void* map, uint32_t sys, SH_SITE_ARGS) {
    SH_HOOK;
    sh_on_map_acquire(g, &site, map, sys);
}
#endif  // TUTORIAL_SHADOW

#endif  // SHADOW_TOOL_PATCHES || TUTORIAL_SHADOW
