// 10_grouped_gemm/parts/maps.cuh: where an expert's tensor maps come from,
// four ways (SOURCE, config.cuh): step 10's MapSource for 09's loader and
// consumers (09_gemm/parts/maps.cuh says what a map source provides). The
// producer switches A's and B's maps when its next unit is another expert's,
// each consumer warpgroup its C map, each side alone; build_maps makes the
// array of DEVICE_MAPS, and retarget_alone times EDIT's switches by themselves.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "04_tma_store/tma_store.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"
#include "09_gemm/parts/epilogue.cuh"
#include "10_grouped_gemm/parts/schedule.cuh"

// The maps a CTA edits (EDIT): A_g, B_g for the producer, C_g for each consumer.
typedef struct {
    alignas(128) CUtensorMap a, b, c[2];
} EditMaps;

// EDIT: the maps start as the templates, 4 x 128 bytes, one 16-byte piece per
// thread of threads 0..31 (the callers' first warp).
static __device__ __forceinline__ void edit_maps_from_templates(EditMaps* edit, const CUtensorMap& a_tmpl,
                                                                const CUtensorMap& b_tmpl,
                                                                const CUtensorMap& c_tmpl) {
    const uint32_t lane = threadIdx.x;
    const CUtensorMap* from = lane < 8 ? &a_tmpl : lane < 16 ? &b_tmpl : &c_tmpl;
    uint4* to = lane < 8    ? (uint4*)&edit->a
                : lane < 16 ? (uint4*)&edit->b
                            : (uint4*)&edit->c[(lane - 16) / 8];
    to[lane % 8] = ((const uint4*)from)[lane % 8];
}

// The producer's warp, all 32 lanes (cp_fenceproxy is .sync.aligned): lane 0
// issues the loads. `last` is the last ring position loaded through the pair
// of maps of slot `switches % 2` (EDIT); before the pair is rewritten, every load through
// it must have landed [M1]: a position at least STAGES back has (its stage was
// handed back, so its consumers waited for it), a later one is waited for here.
template <int SOURCE>
static __device__ __forceinline__ bool producer_maps(const GroupArgs& p, const CUtensorMap& a_tmpl,
                                                     const CUtensorMap& b_tmpl, EditMaps* edit,
                                                     const uint32_t* first_row, uint32_t g, uint32_t pos,
                                                     uint32_t switches, uint32_t last, uint64_t* full,
                                                     const CUtensorMap** a_map, const CUtensorMap** b_map) {
    const uint32_t lane = threadIdx.x % 32;
    if (SOURCE == ONE_MAP) {
        *a_map = &a_tmpl, *b_map = &b_tmpl;
    } else if (SOURCE == HOST_MAPS || SOURCE == DEVICE_MAPS) {
        *a_map = p.maps + 3 * g, *b_map = p.maps + 3 * g + 1;
        if (lane == 0) {
            if (SOURCE == HOST_MAPS) {
                tmap_acquire_sys(*a_map);  // the host wrote these maps: acquire at system scope
                tmap_acquire_sys(*b_map);
            } else {
                tmap_acquire_gpu(*a_map);  // build_maps released them at gpu scope
                tmap_acquire_gpu(*b_map);
            }
        }
    } else {
        const uint32_t slot = switches % 2;
        CUtensorMap* pair = p.slots + 6 * blockIdx.x + 2 * slot;
        bool landed = true;
        // LAB-BEGIN: retarget the pair: first every load still in flight through it landed (the full barrier of each of the last STAGES positions up to `last`); then lane 0 points the A map at expert g's rows (address, and dimension 1: its M_g rows) and the B map at its B_g; the warp publishes both to the slot, and lane 0 acquires them
        if (lane == 0 && last != 0xFFFFFFFFu)
            for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
                landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
        __syncwarp();  // every lane's copy-out of the last switch has read the shared copy
        if (lane == 0) {
            tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
            tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
            tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
        }
        __syncwarp();  // lane 0's edits, visible to the warp
        tmap_cp_fenceproxy(&pair[0], &edit->a);
        tmap_cp_fenceproxy(&pair[1], &edit->b);
        if (lane == 0) {
            tmap_acquire_gpu(&pair[0]);
            tmap_acquire_gpu(&pair[1]);
        }
        // LAB-STUB: (void)pos, (void)last, (void)full, (void)first_row, (void)g;
        // LAB-END
        *a_map = &pair[0], *b_map = &pair[1];
        return __shfl_sync(0xFFFFFFFFu, landed, 0);
    }
    return true;
}

// The consumer's C map for expert g (its thread 0 stores through it). EDIT:
// warp 0 of the warpgroup rewrites its own map, once every store through it
// is complete (wait_group 0) [M1].
template <int SOURCE>
static __device__ __forceinline__ const CUtensorMap* consumer_map(const GroupArgs& p, EditMaps* edit,
                                                                  const uint32_t* first_row, uint32_t g,
                                                                  uint32_t wg, uint32_t tid) {
    if (SOURCE == HOST_MAPS || SOURCE == DEVICE_MAPS) {
        const CUtensorMap* m = p.maps + 3 * g + 2;
        if (tid == 0) {
            if (SOURCE == HOST_MAPS)
                tmap_acquire_sys(m);
            else
                tmap_acquire_gpu(m);
        }
        return m;
    }
    CUtensorMap* slot = p.slots + 6 * blockIdx.x + 4 + wg;
    if (tid < 32) {
        __syncwarp();  // every lane's copy-out of the last switch has read the shared copy
        if (tid == 0) {
            // Every store through the map COMPLETE, not only its shared source read (.read promises
            // that much; whether the map itself was read by then, the PTX ISA does not say): the
            // rewrite cannot reach a store still on its way (CUTLASS waits likewise).
            bulk_wait_group<0>();
            tmap_replace_address(&edit->c[wg], p.batch->c + (size_t)first_row[g] * p.ldc);
            tmap_replace_dim<1>(&edit->c[wg], first_row[g + 1] - first_row[g]);
        }
        __syncwarp();
        tmap_cp_fenceproxy(slot, &edit->c[wg]);
        if (tid == 0) tmap_acquire_gpu(slot);
    }
    return slot;
}

// The MapSource: the producer's switch of A and B (all 32 lanes of its warp,
// WarpWide, for EDIT's cp_fenceproxy), and a consumer warpgroup's of C, each
// when its next unit belongs to another expert. Each side has its own copy
// and keeps its own state. ONE_MAP finds an expert's rows by offsetting into
// the maps over every expert; its C is stored from registers, masked at the
// expert's rows (09's EPI_DIRECT).
template <int SOURCE>
struct ExpertMaps {
    const GroupArgs* p;
    const CUtensorMap *a_tmpl, *b_tmpl;  // the kernel's parameters (ONE_MAP: its maps)
    EditMaps* edit;                      // EDIT: the CTA's maps in shared memory
    const uint32_t* first_row;           // the batch's
    // The producer's: the expert its maps are for, the switches so far, and
    // the last ring position loaded through each pair of slots (EDIT).
    const CUtensorMap *a_map = nullptr, *b_map = nullptr;
    uint32_t expert = 0xFFFFFFFFu, switches = 0, last0 = 0xFFFFFFFFu, last1 = 0xFFFFFFFFu;
    // A consumer warpgroup's: its C map and the expert it is for.
    const CUtensorMap* c_map = nullptr;
    uint32_t c_expert = 0xFFFFFFFFu;
    static constexpr bool Switches = true, WarpWide = true;

    __device__ __forceinline__ bool load_switch(const Work& w, uint32_t pos, uint64_t* full) {
        if (w.group == expert) return true;
        if (switches > 0)
            ((switches - 1) % 2 ? last1 : last0) = pos - 1;  // the last position through the pair
        const bool landed =
            producer_maps<SOURCE>(*p, *a_tmpl, *b_tmpl, edit, first_row, w.group, pos, switches,
                                  switches % 2 ? last1 : last0, full, &a_map, &b_map);
        expert = w.group, ++switches;
        return landed;
    }
    __device__ __forceinline__ const CUtensorMap* a() const { return a_map; }
    __device__ __forceinline__ const CUtensorMap* b() const { return b_map; }
    // ONE_MAP's maps span every expert: A's rows start at the expert's first
    // row, B's at its g N-th.
    __device__ __forceinline__ uint32_t a_row(const Work& w) const {
        return w.row0 + (SOURCE == ONE_MAP ? first_row[w.group] : 0);
    }
    __device__ __forceinline__ uint32_t b_row(const Work& w) const {
        return w.col0 + (SOURCE == ONE_MAP ? w.group * p->n : 0);
    }
    // The expert's rows of C (stores from registers stop at its last row), and
    // its map, switched when the expert changes.
    __device__ __forceinline__ Output output(const Work& w, uint32_t wg, uint32_t tid) {
        if (SOURCE != ONE_MAP && w.group != c_expert)
            c_map = consumer_map<SOURCE>(*p, edit, first_row, w.group, wg, tid), c_expert = w.group;
        return {p->batch->c + (size_t)first_row[w.group] * p->ldc, w.rows, p->n, p->ldc};
    }
    __device__ __forceinline__ const CUtensorMap* c() const { return c_map; }
};

// DEVICE_MAPS: one thread per map builds it from its template into the array:
// address and rows edited in place in global memory, then released to the
// tensormap proxy by the same thread (08's global path). Experts without rows
// get no maps (no tile uses them, and a dimension of 0 is not a valid map).
__global__ void build_maps(const __grid_constant__ CUtensorMap a_tmpl,
                           const __grid_constant__ CUtensorMap b_tmpl,
                           const __grid_constant__ CUtensorMap c_tmpl, const __grid_constant__ GroupArgs p,
                           CUtensorMap* maps) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, g = i / 3, which = i % 3;
    if (g >= p.experts) return;
    const Batch* b = p.batch;
    const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
    if (rows == 0) return;
    CUtensorMap* m = &maps[i];
    const CUtensorMap* from = which == 0 ? &a_tmpl : which == 1 ? &b_tmpl : &c_tmpl;
    for (int q = 0; q < 8; ++q) ((uint4*)m)[q] = ((const uint4*)from)[q];
    if (which == 0) {
        tmap_replace_address_global(m, b->a + (size_t)b->first_row[g] * p.ld_ab);
        tmap_replace_dim_global<1>(m, rows);
    } else if (which == 1) {
        tmap_replace_address_global(m, p.b + (size_t)g * p.n * p.ld_ab);
    } else {
        tmap_replace_address_global(m, b->c + (size_t)b->first_row[g] * p.ldc);
        tmap_replace_dim_global<1>(m, rows);
    }
    tmap_release_gpu();
}

// The device's share of an expert switch (EDIT), alone: one warp does for every
// expert with rows, in turn, what the kernel does when a CTA's next tile is
// another expert's: the producer's retarget of A and B (producer_maps) and a
// consumer's of C (consumer_map). No load or store is in flight, so neither
// waits. Its %globaltimer span, in ns, goes to *ns.
__global__ void __launch_bounds__(32)
    retarget_alone(const __grid_constant__ CUtensorMap a_tmpl, const __grid_constant__ CUtensorMap b_tmpl,
                   const __grid_constant__ CUtensorMap c_tmpl, const __grid_constant__ GroupArgs p,
                   unsigned long long* ns) {
    __shared__ EditMaps edit;
    edit_maps_from_templates(&edit, a_tmpl, b_tmpl, c_tmpl);
    __syncwarp();
    const uint32_t* first_row = p.batch->first_row;
    const CUtensorMap *a_map, *b_map;
    uint32_t switches = 0;
    const uint64_t start = globaltimer_ns();
#pragma unroll 1
    for (uint32_t g = 0; g < p.experts; ++g) {
        if (first_row[g + 1] == first_row[g]) continue;  // no tile, no switch
        producer_maps<EDIT>(p, a_tmpl, b_tmpl, &edit, first_row, g, 0, switches++, 0xFFFFFFFFu, NULL, &a_map,
                            &b_map);
        consumer_map<EDIT>(p, &edit, first_row, g, 0, threadIdx.x);
    }
    __syncwarp();
    if (threadIdx.x == 0) *ns = globaltimer_ns() - start;
}
