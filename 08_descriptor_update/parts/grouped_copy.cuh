// A part of 08_descriptor_update/descriptor_update.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"
#include "08_descriptor_update/parts/problem.cuh"

// ---- Parts 2-6: the kernels ----------------------------------------------------
// wait_group.read N takes N as an immediate: "all but the newest N bulk
// groups have read their source". `later` stores were committed after the
// last one that read a map; waiting for all but min(later, 2) covers it.
static __device__ __forceinline__ void wait_stores_read_but(uint32_t later) {
    if (later == 0)
        bulk_wait_group_read<0>();
    else if (later == 1)
        bulk_wait_group_read<1>();
    else
        bulk_wait_group_read<2>();
}

// The smem path, run by the whole warp (cp_fenceproxy is .sync.aligned).
// Before a pair of maps is overwritten, nothing in flight may still read
// it: every load through it has completed (its box was waited for before
// its store), and wait_group.read says every store through it has read it
// (`later` stores were committed after the last of those).
static __device__ __forceinline__ void retarget_smem(const CUtensorMap* src_tmpl, const CUtensorMap* dst_tmpl,
                                                     CUtensorMap* edit, CUtensorMap* slots,
                                                     const GroupedCopy* p, const Group* g, uint32_t lane,
                                                     uint32_t later) {
    if (lane == 0) wait_stores_read_but(later);
    if (lane < 8) ((uint4*)&edit[0])[lane] = ((const uint4*)src_tmpl)[lane];
    if (lane >= 8 && lane < 16) ((uint4*)&edit[1])[lane - 8] = ((const uint4*)dst_tmpl)[lane - 8];
    __syncwarp();
    // LAB-BEGIN: one lane retargets both maps in edit[] to group g: base address (src/dst + offset) and, unless address_only, dims 0 and 1 and the row stride in bytes
    if (lane == 0) {
        tmap_replace_address(&edit[0], p->src + g->offset);
        tmap_replace_address(&edit[1], p->dst + g->offset);
        if (!p->address_only)
            for (int k = 0; k < 2; ++k) {
                tmap_replace_dim<0>(&edit[k], g->cols);
                tmap_replace_dim<1>(&edit[k], g->rows);
                tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld * 4);
            }
    }
    // LAB-STUB: (void)g;
    // LAB-END
    __syncwarp();  // the edits, visible to the whole warp
    tmap_cp_fenceproxy(&slots[0], &edit[0]);
    tmap_cp_fenceproxy(&slots[1], &edit[1]);
    if (lane == 0) {
        tmap_acquire_gpu(&slots[0]);
        tmap_acquire_gpu(&slots[1]);
    }
}

// The global path: the pair is edited where it is, then released, all by
// one thread (the one whose writes the release orders). The same wait first.
static __device__ __forceinline__ void retarget_global(CUtensorMap* slots, const GroupedCopy* p,
                                                       const Group* g, uint32_t later) {
    wait_stores_read_but(later);
    // LAB-BEGIN: retarget both maps in slots[] (global memory) to group g: base address, dims 0 and 1, row stride in bytes; then the release that makes the edits visible to the TMA, and each map's acquire
    tmap_replace_address_global(&slots[0], p->src + g->offset);
    tmap_replace_address_global(&slots[1], p->dst + g->offset);
    for (int k = 0; k < 2; ++k) {
        tmap_replace_dim_global<0>(&slots[k], g->cols);
        tmap_replace_dim_global<1>(&slots[k], g->rows);
        tmap_replace_stride_global<0>(&slots[k], (uint64_t)g->ld * 4);
    }
    tmap_release_gpu();
    tmap_acquire_gpu(&slots[0]);
    tmap_acquire_gpu(&slots[1]);
    // LAB-STUB: (void)slots, (void)p, (void)g;
    // LAB-END
}

// Box i of an item: load and store coordinates in its group.
static __device__ __forceinline__ void box_coords(const Group* g, uint32_t box, int32_t* c0, int32_t* c1) {
    *c0 = (int32_t)(box % g->boxes_c * BOX_COLS);
    *c1 = (int32_t)(box / g->boxes_c * BOX_ROWS);
}

// An item between the load and the store cursor, and the maps it goes through.
typedef struct {
    Item it;
    Group g;
    const CUtensorMap* maps;  // [0] source, [1] destination
} Queued;
// Loads run at most STAGES - 1 boxes ahead of the next store, so at most
// STAGES items (one box each) lie between the cursors, plus the one taken next.
#define QUEUE (STAGES + 1)
#define NO_GROUP 0xFFFFFFFFu
#define NO_BOX 0xFFFFFFFFu

// The whole warp runs the loop, so that the smem path's cp_fenceproxy has
// all 32 lanes; lane 0 issues every copy and every bulk wait. Every lane
// keeps the same copy of the loop's state. Box b (numbered in this CTA's
// order) goes through stage b % STAGES. Step i first issues the loads the
// stages allow (box b once store b - STAGES has read its stage), then stores
// box i. A new item whose group no pair holds retargets the pair the
// previous item does not use, once the last store through that pair has been
// issued (until then the new item's loads wait: after an item of n boxes,
// n < STAGES - 2, for STAGES - 2 - n steps).
// The queue: lane 0 writes a slot, and the __syncwarp after it orders the
// write before every lane's read. A slot is rewritten only when its item is
// stored in full, and the lanes' last reads of it came before the
// __syncwarp of the item taken before (at most STAGES - 1 items are queued).
template <int PATH>
__global__ void __launch_bounds__(32)
    grouped_copy(const __grid_constant__ CUtensorMap src_tmpl, const __grid_constant__ CUtensorMap dst_tmpl,
                 GroupedCopy p) {
    __shared__ alignas(128) CUtensorMap edit[2];
    __shared__ uint64_t full[STAGES];
    __shared__ Queued queue[QUEUE];
    float* stage = (float*)tma_smem_base<128>();  // [STAGES][BOX_ROWS][BOX_COLS] f32
    CUtensorMap* slots = p.ws + 4 * blockIdx.x;   // this CTA's workspace: 2 pairs, 128-byte aligned
    const uint32_t lane = threadIdx.x;
    uint32_t upcoming = 0;  // lane 0: the item after the one taken last, asked for a step ahead
    if (lane == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
        mbar_fence_init();
        upcoming = atomicAdd(p.counter, 1u);
        if (PATH == PATH_GLOBAL)  // the global path edits valid maps in place: start from the templates
            for (int m = 0; m < 4; ++m)
                for (int q = 0; q < 8; ++q)
                    ((uint4*)&slots[m])[q] = ((const uint4*)(m % 2 ? &dst_tmpl : &src_tmpl))[q];
    }
    __syncwarp();
    // Per pair (0, 1; scalars, so that they stay in registers): the group it
    // holds, and the last box that goes through it (NO_BOX: none yet).
    uint32_t group0 = NO_GROUP, group1 = NO_GROUP, last0 = NO_BOX, last1 = NO_BOX;
    uint32_t last_pair = 1, last_group = NO_GROUP;  // the pair and group of the item loaded last
    uint32_t taken = 0, stored_items = 0;           // items queued, items whose boxes are all stored
    uint32_t loaded = 0, load_box = 0;              // boxes loaded; the next box of the newest item
    uint32_t store_box = 0;                         // the next box to store of the oldest item
    bool pending = false, ok = true;                // pending: an item taken, its maps not ready yet
    for (uint32_t i = 0; ok; ++i) {
        // Loads: box `loaded` may go while its stage is free.
        const uint32_t limit = i == 0 ? STAGES : i + STAGES - 1;
        while (loaded < limit) {
            if (taken == 0 ||
                load_box == queue[(taken - 1) % QUEUE].it.nboxes) {  // the newest item is loaded
                if (!pending) {
                    const uint32_t item = __shfl_sync(0xFFFFFFFFu, upcoming, 0);
                    if (item >= p.nitems) break;  // no more items
                    if (lane == 0) upcoming = atomicAdd(p.counter, 1u);
                    Queued q;
                    q.it = p.items[item];
                    q.g = p.groups[q.it.group];
                    q.maps = NULL;
                    if (lane == 0) queue[taken % QUEUE] = q;
                    __syncwarp();
                    pending = true;
                }
                Queued* q = &queue[taken % QUEUE];
                const uint32_t group = q->it.group;
                const CUtensorMap* maps;
                if (PATH == PATH_HOST_MAPS) {
                    maps = p.host_ws + 2 * group;
                    if (lane == 0 && group != last_group) {
                        tmap_acquire_sys(maps);  // the host wrote these maps: acquire at system scope
                        tmap_acquire_sys(maps + 1);
                    }
                } else {
                    uint32_t pr = group0 == group ? 0 : group1 == group ? 1 : 2;
                    if (pr == 2) {  // no pair holds the group: retarget the other one
                        pr = last_pair ^ 1;
                        const uint32_t last = pr ? last1 : last0;
                        if (last != NO_BOX && last >= i) break;  // its last store is not issued yet
                        const uint32_t later = last == NO_BOX ? 0 : i - 1 - last;  // stores issued since
                        if (PATH == PATH_SMEM)
                            retarget_smem(&src_tmpl, &dst_tmpl, edit, slots + 2 * pr, &p, &q->g, lane, later);
                        else if (lane == 0)
                            retarget_global(slots + 2 * pr, &p, &q->g, later);
                        __syncwarp();
                        (pr ? group1 : group0) = group;
                    }
                    maps = slots + 2 * pr;
                    last_pair = pr;
                }
                if (lane == 0) q->maps = maps;
                last_group = group;
                pending = false;
                ++taken;
                load_box = 0;
                __syncwarp();
            }
            const Queued* q = &queue[(taken - 1) % QUEUE];
            const uint32_t s = loaded % STAGES;
            if (lane == 0) {
                if (loaded >= STAGES) bulk_wait_group_read<1>();  // the store before the newest has read it
                int32_t c0, c1;
                box_coords(&q->g, q->it.first_box + load_box, &c0, &c1);
                mbar_arrive_expect_tx(&full[s], BOX_BYTES);  // the whole box, out-of-bounds fill included
                tma_load_2d(stage + s * BOX_ROWS * BOX_COLS, &q->maps[0], c0, c1, &full[s]);
            }
            if (PATH != PATH_HOST_MAPS) (last_pair ? last1 : last0) = loaded;  // stored in this order too
            ++loaded, ++load_box;
        }
        if (i == loaded) break;  // every box loaded has been stored, and no more come
        // The store of box i, from the oldest item with boxes left.
        const Queued* q = &queue[stored_items % QUEUE];
        const uint32_t s = i % STAGES;
        bool landed = true;
        if (lane == 0) {
            landed = MBAR_WAIT(&full[s], i / STAGES & 1);
            if (landed) {
                int32_t c0, c1;
                box_coords(&q->g, q->it.first_box + store_box, &c0, &c1);
                tma_store_2d(&q->maps[1], c0, c1, stage + s * BOX_ROWS * BOX_COLS);
                bulk_commit_group();
            }
        }
        ok = __shfl_sync(0xFFFFFFFFu, landed, 0);
        if (++store_box == q->it.nboxes) ++stored_items, store_box = 0;
    }
    if (lane == 0) bulk_wait_group<0>();
}

// The baseline: the same items copied without the TMA, one block per item,
// with plain 16-byte loads and stores (coalesced: a warp reads 512
// consecutive bytes of a box row), all four of a thread's loads issued
// before its first store. No maps, so nothing to retarget: what this layout
// costs a plain copy, and the bar every TMA version of the part is held to.
#define LDG_THREADS 256
#define LDG_CHUNKS (BOX_ROWS * BOX_COLS / 4 / LDG_THREADS)  // float4 per thread per box: 4
#ifndef LDG_BOXES
#define LDG_BOXES 4  // boxes whose loads are all issued before the first of their stores
#endif
__global__ void __launch_bounds__(LDG_THREADS) grouped_copy_ldg(GroupedCopy p) {
    const Item it = p.items[blockIdx.x];
    const Group g = p.groups[it.group];
    for (uint32_t b = 0; b < it.nboxes; b += LDG_BOXES) {
        float4 v[LDG_BOXES][LDG_CHUNKS];
        uint64_t at[LDG_BOXES][LDG_CHUNKS];  // element offset in the pools, ~0: outside the group
#pragma unroll
        for (int k = 0; k < LDG_BOXES; ++k) {
            int32_t c0, c1;
            box_coords(&g, it.first_box + b + k, &c0, &c1);
#pragma unroll
            for (int j = 0; j < LDG_CHUNKS; ++j) {
                const uint32_t q = j * LDG_THREADS + threadIdx.x;  // float4 q of the box
                const uint32_t r = c1 + q / (BOX_COLS / 4), c = c0 + q % (BOX_COLS / 4) * 4;
                const bool in = b + k < it.nboxes && r < g.rows && c < g.cols;
                at[k][j] = in ? g.offset + (uint64_t)r * g.ld + c : ~0ull;
                if (in) v[k][j] = *(const float4*)(p.src + at[k][j]);
            }
        }
#pragma unroll
        for (int k = 0; k < LDG_BOXES; ++k)
#pragma unroll
            for (int j = 0; j < LDG_CHUNKS; ++j)
                if (at[k][j] != ~0ull) *(float4*)(p.dst + at[k][j]) = v[k][j];
    }
}

// ---- Parts 2-6 (host): the copies, set up, launched and checked --------------
// The source pool holds position-coded words everywhere (groups, padding,
// gaps), so a box read from a wrong place cannot pass; the destination pool
// is poisoned before each part, so a write to a wrong place cannot pass.
static void copy_setup(Copy* c, const GroupSet* gs, cudaStream_t s) {
    memset(c, 0, sizeof *c);
    c->gs = gs, c->s = s;
    const size_t n = gs->pool_words;
    CUDA_CHECK(cudaMalloc(&c->src, n * 4));
    CUDA_CHECK(cudaMalloc(&c->dst, n * 4));
    uint32_t* host = (uint32_t*)xmalloc(n * 4, "the source pool");
    c->want = (uint32_t*)xmalloc(n * 4, "the expected destination pool");
    for (size_t i = 0; i < n; ++i) {
        host[i] = seeded_word(11, i);
        c->want[i] = POISON_WORD;
    }
    for (uint32_t g = 0; g < gs->ngroups; ++g) {
        const Group* gr = &gs->groups[g];
        for (uint32_t r = 0; r < gr->rows; ++r)
            memcpy(c->want + gr->offset + (size_t)r * gr->ld, host + gr->offset + (size_t)r * gr->ld,
                   gr->cols * 4);
    }
    CUDA_CHECK(cudaMemcpyAsync(c->src, host, n * 4, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    free(host);
    CUDA_CHECK(cudaMalloc(&c->groups_dev, gs->ngroups * sizeof(Group)));
    CUDA_CHECK(cudaMalloc(&c->items_dev, gs->nitems * sizeof(Item)));
    CUDA_CHECK(cudaMemcpy(c->groups_dev, gs->groups, gs->ngroups * sizeof(Group), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(c->items_dev, gs->items, gs->nitems * sizeof(Item), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&c->counter, 4));
    // The templates: group 0's shape at each pool's start (any valid map would do).
    const Group* g0 = &gs->groups[0];
    TensorMapSpec ss = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c->src, g0->rows, g0->cols,
                                      (uint64_t)g0->ld * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    c->src_tmpl = make_tensor_map(&ss, "the source template");
    ss.address = c->dst;
    c->dst_tmpl = make_tensor_map(&ss, "the destination template");
    c->smem = tma_smem_bytes(STAGES * BOX_BYTES);
    const void* kernels[] = {(const void*)grouped_copy<PATH_SMEM>, (const void*)grouped_copy<PATH_GLOBAL>,
                             (const void*)grouped_copy<PATH_HOST_MAPS>};
    for (const void* k : kernels)  // above 48 KiB of dynamic shared memory a kernel must opt in
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c->smem));
    c->grid = persistent_grid((const void*)grouped_copy<PATH_SMEM>, 32, c->smem);
    // The grouped copies use 4 maps per CTA, cross_cta 2 per group.
    const size_t slots =
        4 * (size_t)c->grid > 2 * (size_t)gs->ngroups ? 4 * (size_t)c->grid : 2 * gs->ngroups;
    CUDA_CHECK(cudaMalloc(&c->ws, slots * sizeof(CUtensorMap)));  // cudaMalloc: 256-byte aligned
    // Every group's two maps encoded by the host (part 6), in pinned memory.
    CUDA_CHECK(cudaMallocHost(&c->host_maps_pinned, 2 * gs->ngroups * sizeof(CUtensorMap)));
    CUDA_CHECK(cudaMalloc(&c->host_maps, 2 * gs->ngroups * sizeof(CUtensorMap)));
    for (uint32_t g = 0; g < gs->ngroups; ++g) {
        const Group* gr = &gs->groups[g];
        TensorMapSpec m =
            tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c->src + gr->offset, gr->rows, gr->cols,
                           (uint64_t)gr->ld * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
        c->host_maps_pinned[2 * g] = make_tensor_map(&m, "a group's source");
        m.address = c->dst + gr->offset;
        c->host_maps_pinned[2 * g + 1] = make_tensor_map(&m, "a group's destination");
    }
}

static void copy_free(Copy* c) {
    free(c->want);
    CUDA_CHECK(cudaFree(c->src));
    CUDA_CHECK(cudaFree(c->dst));
    CUDA_CHECK(cudaFree(c->groups_dev));
    CUDA_CHECK(cudaFree(c->items_dev));
    CUDA_CHECK(cudaFree(c->counter));
    CUDA_CHECK(cudaFree(c->ws));
    CUDA_CHECK(cudaFree(c->host_maps));
    CUDA_CHECK(cudaFreeHost(c->host_maps_pinned));
}

static GroupedCopy copy_params(const Copy* c, int address_only) {
    GroupedCopy p;
    memset(&p, 0, sizeof p);
    p.src = c->src, p.dst = c->dst, p.groups = c->groups_dev, p.items = c->items_dev;
    p.nitems = c->gs->nitems, p.counter = c->counter, p.ws = c->ws, p.host_ws = c->host_maps;
    p.address_only = address_only;
    return p;
}

// One launch of a path. The host-maps path copies the maps to the device
// first, as part of its work (that is its price).
static void launch_copy(const Copy* c, int path, int address_only) {
    const GroupedCopy p = copy_params(c, address_only);
    CUDA_CHECK(cudaMemsetAsync(c->counter, 0, 4, c->s));
    if (path == PATH_SMEM)
        grouped_copy<PATH_SMEM><<<c->grid, 32, c->smem, c->s>>>(c->src_tmpl, c->dst_tmpl, p);
    if (path == PATH_GLOBAL)
        grouped_copy<PATH_GLOBAL><<<c->grid, 32, c->smem, c->s>>>(c->src_tmpl, c->dst_tmpl, p);
    if (path == PATH_LDG) grouped_copy_ldg<<<c->gs->nitems, LDG_THREADS, 0, c->s>>>(p);
    if (path == PATH_HOST_MAPS) {
        CUDA_CHECK(cudaMemcpyAsync(c->host_maps, c->host_maps_pinned,
                                   2 * c->gs->ngroups * sizeof(CUtensorMap), cudaMemcpyHostToDevice, c->s));
        grouped_copy<PATH_HOST_MAPS><<<c->grid, 32, c->smem, c->s>>>(c->src_tmpl, c->dst_tmpl, p);
    }
}

static size_t check_copy(const char* name, const Copy* c) {
    return check_device(name, c->dst, c->want, c->gs->pool_words, c->s);
}

#define COPY_PART(name, c, cli, ...)                                                                     \
    do {                                                                                                 \
        poison_device((c)->dst, (c)->gs->pool_words * 4, (c)->s);                                        \
        CHECK_THEN_TIME(name, cli, (c)->s, 2.0 * (c)->gs->data_bytes, check_copy(name, c), __VA_ARGS__); \
    } while (0)

// The cudaMemcpy reference, in buffers of its own.
static void memcpy_reference_of(size_t bytes, const Cli* cli, cudaStream_t s) {
    void *src = NULL, *dst = NULL;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    measure_memcpy_reference(dst, src, bytes, cli, s);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
}

// Parts 2, 3 and 6, after their baseline: the same groups copied four ways.
static void part_grouped(const Copy* c, const Cli* cli) {
    record_gpu_line(
        "grouped_copy: 1 warp per CTA, %d CTAs (%d per SM), %d stages of %d KiB; "
        "grouped_copy_ldg: a block of %d threads per item, %d boxes of loads in flight",
        c->grid, c->grid / sm_count(), STAGES, BOX_BYTES >> 10, LDG_THREADS, LDG_BOXES);
    COPY_PART("grouped_copy_ldg", c, cli, launch_copy(c, PATH_LDG, 0));
    COPY_PART("grouped_copy", c, cli, launch_copy(c, PATH_SMEM, 0));
    COPY_PART("grouped_copy_global", c, cli, launch_copy(c, PATH_GLOBAL, 0));
    COPY_PART("host_maps", c, cli, launch_copy(c, PATH_HOST_MAPS, 0));
}
