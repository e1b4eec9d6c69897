// 08_descriptor_update: tensor maps edited on the device, and the fences that
// make the TMA see the edit, each part checked on every element. Parts:
// 1 fields (every field this step replaces, edited on the device and loaded
// through, against the host encoder's map with the same change), 2
// grouped_copy (64+ groups of different shapes, a persistent kernel that
// retargets its two maps in shared memory per group: cp_fenceproxy + acquire),
// 3 grouped_copy_global (the maps edited in place in global memory: release +
// acquire), 4 array_copy (same shape, a new base address per batch), 5
// cross_cta (one CTA builds a map, another uses it: st.release / ld.acquire
// + the proxy acquire), 6 host_maps (maps written by the host: acquire at
// .sys), 7 cost (an update on the device against the host's round trip).
// New since step 07: 08_descriptor_update/tensormap_edit.cuh.
// SASS: make sass-08. Lesson: 08_descriptor_update/README.md.
//
// Run: make run-08 [ARGS="--quick"], make check-08.
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "04_tma_store/tma_store.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"

#include <time.h>

// ===========================================================================
// Part 1: every field, edited on the device
// ===========================================================================
// A 3D f32 template (200 x 100 x 3 elements, rows 256 elements apart, boxes
// of 32 x 16 x 2) is copied into shared memory, ONE field is replaced, the
// warp publishes it to a global slot, and one thread acquires it and loads a
// box through it. The same box is loaded through a map the HOST encoded with
// the same change. The two boxes must agree word for word, and differ from
// the template's box (else the check could not fail).
enum Field {
    F_NONE,
    F_ADDRESS,
    F_DIM0,
    F_DIM1,
    F_STRIDE0,
    F_STRIDE1,
    F_BOX_DIM1,
    F_ELEMENT_STRIDE1,
    F_ELEMTYPE,
    F_SWIZZLE,
    F_FILL,
    F_RANK,
    NUM_FIELDS
};
#define PROBE_WORDS (32 * 16 * 2)  // the template's box: 4 KiB
#define TMPL_LD 256                // elements from one row to the next
#define TMPL_ROWS 100
#define TMPL_COLS 200
#define TMPL_LAYERS 3
#define TMPL_LAYER_ROWS 200  // rows from one layer to the next (room for the doubled strides)

typedef struct {
    int field;
    int32_t c[3];    // the box's coordinates
    uint32_t bytes;  // what one load delivers through either map
    const float* new_base;
    uint32_t new_value;  // dims, strides (bytes), box and element strides
} Probe;

// The replacement itself: one instruction, an immediate where PTX wants one.
static __device__ __forceinline__ void replace_field(CUtensorMap* m, const Probe* p) {
    switch (p->field) {
    case F_ADDRESS:
        tmap_replace_address(m, p->new_base);
        break;
    case F_DIM0:
        tmap_replace_dim<0>(m, p->new_value);
        break;
    case F_DIM1:
        tmap_replace_dim<1>(m, p->new_value);
        break;
    case F_STRIDE0:
        tmap_replace_stride<0>(m, p->new_value);
        break;
    case F_STRIDE1:
        tmap_replace_stride<1>(m, p->new_value);
        break;
    case F_BOX_DIM1:
        tmap_replace_box_dim<1>(m, p->new_value);
        break;
    case F_ELEMENT_STRIDE1:
        tmap_replace_element_stride<1>(m, p->new_value);
        break;
    case F_ELEMTYPE:
        tmap_replace_elemtype<6>(m);  // FLOAT16: the PTX number equals CU_TENSOR_MAP_DATA_TYPE_FLOAT16
        break;
    case F_SWIZZLE:
        tmap_replace_swizzle<3>(m);  // 128B
        break;
    case F_FILL:
        tmap_replace_fill<1>(m);  // NaN
        break;
    case F_RANK:
        tmap_replace_rank(m, 2);
        break;
    default:
        break;
    }
}

__global__ void __launch_bounds__(32)
    field_probe(const __grid_constant__ CUtensorMap tmpl, const __grid_constant__ CUtensorMap host_map,
                Probe p, CUtensorMap* slot, float* out) {
    __shared__ alignas(128) CUtensorMap m;
    __shared__ uint64_t bar[2];
    float* boxes = (float*)tma_smem_base<1024>();  // [2][PROBE_WORDS]: device-edited map, host map
    const uint32_t lane = threadIdx.x;
    for (uint32_t i = lane; i < 2 * PROBE_WORDS; i += 32) boxes[i] = __uint_as_float(POISON_WORD);
    SHADOW_WROTE(boxes, 2 * PROBE_WORDS * 4);
    fence_proxy_async_shared();  // the poison before the TMA's writes
    if (lane < 8) ((uint4*)&m)[lane] = ((const uint4*)&tmpl)[lane];
    if (lane == 0) {
        mbar_init(&bar[0], 1);
        mbar_init(&bar[1], 1);
        mbar_fence_init();
    }
    __syncwarp();
    if (lane == 0) replace_field(&m, &p);
    __syncwarp();                  // the edit, visible to the warp
    tmap_cp_fenceproxy(slot, &m);  // the warp: copy to global, release to the tensormap proxy
    if (lane == 0) {
        tmap_acquire_gpu(slot);  // before the first TMA through the slot
        mbar_arrive_expect_tx(&bar[0], p.bytes);
        mbar_arrive_expect_tx(&bar[1], p.bytes);
        if (p.field == F_RANK) {
            tma_load_2d(boxes, slot, p.c[0], p.c[1], &bar[0]);
            tma_load_2d(boxes + PROBE_WORDS, &host_map, p.c[0], p.c[1], &bar[1]);
        } else {
            tma_load_3d(boxes, slot, p.c[0], p.c[1], p.c[2], &bar[0]);
            tma_load_3d(boxes + PROBE_WORDS, &host_map, p.c[0], p.c[1], p.c[2], &bar[1]);
        }
        MBAR_WAIT(&bar[0], 0);
        MBAR_WAIT(&bar[1], 0);
    }
    __syncwarp();
    for (uint32_t i = lane; i < 2 * PROBE_WORDS; i += 32) out[i] = boxes[i];
}

// ---- Part 1 (host): the template, the probes, the check ----------------------
static TensorMapSpec template_spec(const float* base) {
    TensorMapSpec s;
    memset(&s, 0, sizeof s);
    s.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    s.rank = 3;
    s.address = base;
    s.dim[0] = TMPL_COLS, s.dim[1] = TMPL_ROWS, s.dim[2] = TMPL_LAYERS;
    s.stride[0] = TMPL_LD * 4, s.stride[1] = (uint64_t)TMPL_LAYER_ROWS * TMPL_LD * 4;
    s.box[0] = 32, s.box[1] = 16, s.box[2] = 2;
    s.elem_stride[0] = s.elem_stride[1] = s.elem_stride[2] = 1;
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    s.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;  // as tensor_spec_2d (step 03, part 9)
    return s;
}

static const char* const kFieldName[NUM_FIELDS] = {
    "template",       "field_global_address", "field_global_dim0", "field_global_dim1",
    "field_stride0",  "field_stride1",        "field_box_dim1",    "field_element_stride1",
    "field_elemtype", "field_swizzle_mode",   "field_fill_mode",   "field_rank"};

// What each probe changes, on the host side (the spec the driver encodes) and
// on the device side (the Probe), and where its box lies.
static void make_probe(int f, const float* base, TensorMapSpec* spec, Probe* p) {
    *spec = template_spec(base);
    memset(p, 0, sizeof *p);
    p->field = f;
    switch (f) {
    case F_ADDRESS:  // 16 rows further on
        p->new_base = base + 16 * TMPL_LD;
        spec->address = p->new_base;
        break;
    case F_DIM0:  // the box at columns 32..63 crosses the new edge at 40
        spec->dim[0] = p->new_value = 40;
        p->c[0] = 32;
        break;
    case F_DIM1:  // rows 16..31 cross the new edge at 20
        spec->dim[1] = p->new_value = 20;
        p->c[1] = 16;
        break;
    case F_STRIDE0:  // rows twice as far apart
        spec->stride[0] = p->new_value = 2 * TMPL_LD * 4;
        break;
    case F_STRIDE1:  // layers twice as far apart
        spec->stride[1] = p->new_value = 2 * TMPL_LAYER_ROWS * TMPL_LD * 4;
        break;
    case F_BOX_DIM1:  // 8 rows per box instead of 16
        spec->box[1] = p->new_value = 8;
        break;
    case F_ELEMENT_STRIDE1:  // every other row
        spec->elem_stride[1] = p->new_value = 2;
        break;
    case F_ELEMTYPE:  // the same bytes read as f16: 32 elements are 64 bytes
        spec->dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        break;
    case F_SWIZZLE:
        spec->swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
        break;
    case F_FILL:  // columns 192..223 cross the edge at 200: NaN instead of zeros
        spec->oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
        p->c[0] = 192;
        break;
    case F_RANK:  // 3 -> 2: one 32 x 16 layer
        spec->rank = 2;
        break;
    default:
        break;
    }
    p->bytes = tensor_box_bytes(spec);
}

// Part 1: for each field, the box through the device-edited map against the
// box through the host's map; and the template's box at the same place,
// which must differ (or the check could not fail).
static void part_fields(cudaStream_t s) {
    const size_t words = (size_t)2 * TMPL_LAYERS * TMPL_LAYER_ROWS * TMPL_LD;  // room for the doubled strides
    float *base = NULL, *out = NULL;
    CUtensorMap* slot = NULL;
    CUDA_CHECK(cudaMalloc(&base, words * 4));
    CUDA_CHECK(cudaMalloc(&out, 2 * PROBE_WORDS * 4));
    CUDA_CHECK(cudaMalloc(&slot, sizeof(CUtensorMap)));
    uint32_t* fill = (uint32_t*)xmalloc(words * 4, "the probe tensor");
    for (size_t i = 0; i < words; ++i) fill[i] = seeded_word(7, i) | 0x3F000000u;  // normal floats, no NaN
    CUDA_CHECK(cudaMemcpyAsync(base, fill, words * 4, cudaMemcpyHostToDevice, s));
    if (ptx_elemtype(CU_TENSOR_MAP_DATA_TYPE_FLOAT16) != 6)
        die_internal("FLOAT16's PTX element type is not 6");
    const TensorMapSpec tspec = template_spec(base);
    const CUtensorMap tmpl = make_tensor_map(&tspec, "the field template");
    const size_t smem = tma_smem_bytes(2 * PROBE_WORDS * 4, 1024);
    uint32_t want[PROBE_WORDS], tbox[PROBE_WORDS];
    for (int f = F_ADDRESS; f < NUM_FIELDS; ++f) {
        TensorMapSpec spec;
        Probe p;
        make_probe(f, base, &spec, &p);
        const CUtensorMap host_map = make_tensor_map(&spec, kFieldName[f]);
        // the template's box at the probe's place (no edit, through the template)
        Probe none = p;
        none.field = F_NONE;
        none.bytes = tensor_box_bytes(&tspec);
        field_probe<<<1, 32, smem, s>>>(tmpl, tmpl, none, slot, out);
        CHECK_LAUNCH();
        memcpy(tbox, read_back(out, PROBE_WORDS, s), sizeof tbox);
        field_probe<<<1, 32, smem, s>>>(tmpl, host_map, p, slot, out);
        CHECK_LAUNCH();
        const uint32_t* got = read_back(out, 2 * PROBE_WORDS, s);
        memcpy(want, got + PROBE_WORDS, sizeof want);
        if (!memcmp(want, tbox, sizeof want))
            die_internal("%s: the host's map loads the same box as the template: this check could not fail",
                         kFieldName[f]);
        check_words(kFieldName[f], got, want, PROBE_WORDS);
    }
    free(fill);
    CUDA_CHECK(cudaFree(base));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(slot));
}

// ===========================================================================
// Parts 2-6: a grouped copy
// ===========================================================================
// Group g is a rows_g x cols_g f32 matrix, rows ld_g elements apart, in a
// source pool, copied to the same place in a destination pool. Shapes differ
// from group to group, and few are multiples of the box (32 x 128 elements,
// 16 KiB): the loads fill what lies outside the group with zeros and the
// stores write only what lies inside, both by the group's OWN dims, so a
// map that kept another group's dims or address writes where the check sees it.
// Work items are runs of up to ITEM_BOXES boxes of one group, listed group
// by group; a persistent CTA takes the next item from a counter (consecutive
// items of one CTA are about a grid apart, so usually of different groups).
// One thread drives the copy as step 04's tma_copy does: loads run STAGES
// boxes ahead of the stores, each box is stored from the stage it landed in,
// and a stage is reloaded once wait_group.read 1 says the store before the
// newest has read it. The pipeline never drains between items: while the
// stores of one item still read their maps, the loads of the next item
// already run, through the CTA's OTHER pair of maps. So each CTA has two map
// pairs (source, destination) and retargets the one not in use when the
// group changes.
#define BOX_ROWS 32
#ifndef BOX_COLS
#define BOX_COLS 128
#endif
#define BOX_BYTES (BOX_ROWS * BOX_COLS * 4)
// 8 stages (128 KiB: one CTA per SM) beat 4 (three CTAs per SM) and 12 on the
// H200; items of 8 boxes beat 4 and 16; 4 boxes in flight per thread beat 1
// and 2 for the plain baseline (results/experiments/grouped_copy_tuning_NVIDIA_H200.txt).
#ifndef STAGES
#define STAGES 8
#endif
#define CROSS_STAGES 4  // cross_cta: 2 CTAs per group must fit at once, so less shared memory each
#ifndef ITEM_BOXES
#define ITEM_BOXES 8
#endif

typedef struct {
    uint64_t offset;  // elements from the pool's start (the same in both pools)
    uint32_t rows, cols, ld, boxes_c, boxes;
} Group;

typedef struct {
    uint32_t group, first_box, nboxes;
} Item;

enum { PATH_SMEM, PATH_GLOBAL, PATH_HOST_MAPS, PATH_LDG };

typedef struct {
    const float* src;
    float* dst;
    const Group* groups;
    const Item* items;
    uint32_t nitems;
    unsigned int* counter;       // the next item (dynamic: a CTA that finishes early takes more)
    CUtensorMap* ws;             // 4 maps per CTA (2 pairs of source, destination): the workspace
    const CUtensorMap* host_ws;  // PATH_HOST_MAPS: 2 maps per GROUP, written by the host
    int address_only;            // the array case: only the base address changes
} GroupedCopy;

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

// One whole item through one pair of maps, by one thread, the pipeline
// drained at its end (cross_cta copies one group per CTA: nothing follows).
template <uint32_t NSTAGES>
static __device__ __forceinline__ bool copy_item(const CUtensorMap* in, const CUtensorMap* out,
                                                 const Group* g, const Item* it, float* stage,
                                                 uint64_t* full) {
    uint32_t issued = 0;
    for (; issued < it->nboxes && issued < NSTAGES; ++issued) {
        int32_t c0, c1;
        box_coords(g, it->first_box + issued, &c0, &c1);
        mbar_arrive_expect_tx(&full[issued], BOX_BYTES);
        tma_load_2d(stage + issued * BOX_ROWS * BOX_COLS, in, c0, c1, &full[issued]);
    }
    for (uint32_t i = 0; i < it->nboxes; ++i) {
        const uint32_t s = i % NSTAGES;
        if (!MBAR_WAIT(&full[s], i / NSTAGES & 1)) return false;
        int32_t c0, c1;
        box_coords(g, it->first_box + i, &c0, &c1);
        tma_store_2d(out, c0, c1, stage + s * BOX_ROWS * BOX_COLS);
        bulk_commit_group();
        if (i >= 1 && issued == i - 1 + NSTAGES && issued < it->nboxes) {
            const uint32_t r = issued % NSTAGES;  // the stage store i - 1 read
            bulk_wait_group_read<1>();
            box_coords(g, it->first_box + issued, &c0, &c1);
            mbar_arrive_expect_tx(&full[r], BOX_BYTES);
            tma_load_2d(stage + r * BOX_ROWS * BOX_COLS, in, c0, c1, &full[r]);
            ++issued;
        }
    }
    return true;
}

// ---- Parts 2-6 (host): the groups, the copies, the check ---------------------
typedef struct {
    uint32_t ngroups, nitems;
    Group* groups;  // host
    Item* items;    // host
    size_t pool_words;
    uint64_t data_bytes;  // the groups' elements, read once and written once
} GroupSet;

// Shapes from a hash of (seed, g): rows in [max / 2, max], columns a multiple
// of 4 (rows of whole 16-byte chunks: a TMA store writes whole chunks) in
// [max / 2, max], 4 to 32 elements of row padding, and a gap of 64 elements
// between groups. same_shape (the array case): every group rows_max x cols_max
// with 16 elements of padding: only the base address differs.
static void make_groups(GroupSet* gs, uint32_t ngroups, uint32_t rows_max, uint32_t cols_max, uint32_t seed,
                        bool same_shape) {
    memset(gs, 0, sizeof *gs);
    gs->ngroups = ngroups;
    gs->groups = (Group*)xmalloc(ngroups * sizeof(Group), "the groups");
    uint64_t offset = 0;
    uint32_t nitems = 0;
    for (uint32_t g = 0; g < ngroups; ++g) {
        Group* gr = &gs->groups[g];
        const uint32_t h = seeded_word(seed ^ 0x6A09E667u, g);
        gr->rows = same_shape ? rows_max : rows_max / 2 + h % (rows_max / 2 + 1);
        gr->cols = same_shape ? cols_max : (cols_max / 2 + (h >> 12) % (cols_max / 2 + 1)) / 4 * 4;
        if (gr->cols == 0) gr->cols = 4;
        gr->ld = gr->cols + (same_shape ? 16 : 4 * (1 + (h >> 24) % 8));  // the array case: one stride too
        gr->offset = offset;
        gr->boxes_c = (gr->cols + BOX_COLS - 1) / BOX_COLS;
        gr->boxes = gr->boxes_c * ((gr->rows + BOX_ROWS - 1) / BOX_ROWS);
        offset += ((uint64_t)gr->rows * gr->ld + 63) / 64 * 64 + 64;
        nitems += (gr->boxes + ITEM_BOXES - 1) / ITEM_BOXES;
        gs->data_bytes += (uint64_t)gr->rows * gr->cols * 4;
    }
    gs->pool_words = offset;
    gs->nitems = nitems;
    gs->items = (Item*)xmalloc(nitems * sizeof(Item), "the items");
    uint32_t i = 0;
    for (uint32_t g = 0; g < ngroups; ++g)
        for (uint32_t b = 0; b < gs->groups[g].boxes; b += ITEM_BOXES) {
            const uint32_t n = gs->groups[g].boxes - b;
            gs->items[i++] = (Item){g, b, n < ITEM_BOXES ? n : ITEM_BOXES};
        }
}

typedef struct {
    const GroupSet* gs;
    float *src, *dst;
    uint32_t* want;  // host: the destination pool after a correct copy
    Group* groups_dev;
    Item* items_dev;
    unsigned int* counter;
    CUtensorMap *ws, *host_maps, *host_maps_pinned;
    CUtensorMap src_tmpl, dst_tmpl;
    int grid;
    size_t smem;
    cudaStream_t s;
} Copy;

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

// ---- Part 5: one CTA builds the maps, another uses them -----------------------
// CTA g < groups builds group g's two maps in the table (smem edit +
// cp_fenceproxy, which releases them to the tensormap proxy at gpu scope)
// and then raises flag g with st.release.gpu. CTA groups + g waits for the
// flag with ld.acquire.gpu (a bounded wait), acquires the maps in the
// tensormap proxy, and copies group g. A consumer may wait only for a
// producer that runs at the same time: the kernel is launched cooperatively,
// which guarantees that all 2 x groups CTAs are resident at once (or fails
// the launch), and the host checks that they fit before any allocation.
__global__ void __launch_bounds__(32)
    cross_cta(const __grid_constant__ CUtensorMap src_tmpl, const __grid_constant__ CUtensorMap dst_tmpl,
              GroupedCopy p, uint32_t ngroups, uint32_t* flags) {
    __shared__ alignas(128) CUtensorMap edit[2];
    __shared__ uint64_t full[CROSS_STAGES];
    float* stage = (float*)tma_smem_base<128>();
    const uint32_t lane = threadIdx.x;
    if (blockIdx.x < ngroups) {
        const uint32_t gi = blockIdx.x;
        const Group g = p.groups[gi];
        retarget_smem(&src_tmpl, &dst_tmpl, edit, p.ws + 2 * gi, &p, &g, lane, 0);
        __syncwarp();
        if (lane == 0) st_release_gpu(&flags[gi], 1);
        return;
    }
    const uint32_t gi = blockIdx.x - ngroups;
    const Group g = p.groups[gi];
    if (lane != 0) return;
    for (int s = 0; s < CROSS_STAGES; ++s) mbar_init(&full[s], 1);
    mbar_fence_init();
    if (!bounded_wait([&] { return ld_acquire_gpu(&flags[gi]) != 0; }, "flags[gi]", __FILE__, __LINE__,
                      "group", gi))
        return;
    tmap_acquire_gpu(p.ws +
                     2 * gi);  // the flag ordered the map's release before this; now the proxy's acquire
    tmap_acquire_gpu(p.ws + 2 * gi + 1);
    Item it = {gi, 0, g.boxes};
    copy_item<CROSS_STAGES>(p.ws + 2 * gi, p.ws + 2 * gi + 1, &g, &it, stage, full);
    bulk_wait_group<0>();
}

// cross_cta runs 2 x groups CTAs that wait for each other: all must be
// resident at once. Checked right after the GPU guard, before any allocation.
static void require_cross_cta_fits(uint32_t ng) {
    int cooperative = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0));
    if (!cooperative) cannot_run("cross_cta needs cooperative launches, which this device does not support");
    const size_t smem = tma_smem_bytes(CROSS_STAGES * BOX_BYTES);
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)cross_cta, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const int fit = blocks_per_sm((const void*)cross_cta, 32, smem) * sm_count();
    if ((int)(2 * ng) > fit)
        die_usage(
            "--groups %u: cross_cta needs all %u of its CTAs resident at once and this GPU holds %d; use at "
            "most %d groups",
            ng, 2 * ng, fit, fit / 2);
}

// Part 5: 2 x groups CTAs, producers first; checked, not timed.
static void part_cross_cta(const Copy* c) {
    const uint32_t ng = c->gs->ngroups;
    uint32_t* flags = NULL;
    CUDA_CHECK(cudaMalloc(&flags, ng * 4));
    CUDA_CHECK(cudaMemsetAsync(flags, 0, ng * 4, c->s));
    poison_device(c->dst, c->gs->pool_words * 4, c->s);
    GroupedCopy p = copy_params(c, 0);
    CUtensorMap src_tmpl = c->src_tmpl, dst_tmpl = c->dst_tmpl;
    uint32_t ngroups = ng;
    void* args[] = {&src_tmpl, &dst_tmpl, &p, &ngroups, &flags};
    const size_t smem = tma_smem_bytes(CROSS_STAGES * BOX_BYTES);  // its attribute: require_cross_cta_fits
    CUDA_CHECK(cudaLaunchCooperativeKernel((const void*)cross_cta, dim3(2 * ng), dim3(32), args, smem, c->s));
    check_copy("cross_cta", c);
    CUDA_CHECK(cudaFree(flags));
}

// ===========================================================================
// Part 7: what an update costs
// ===========================================================================
// One warp retargets one map ITERS times between two tensors (the smem path:
// copy the template, replace the address, cp_fenceproxy, acquire), timed
// with %globaltimer. With `load`, each update is followed by a load through
// the new map (and, with `prefetch`, a prefetch.tensormap before it), and
// the box's first word tells which tensor it came from.
#define COST_ITERS 1000

__global__ void __launch_bounds__(32)
    update_cost(const __grid_constant__ CUtensorMap tmpl, CUtensorMap* slot, const float* a, const float* b,
                int load, int prefetch, unsigned long long* out) {
    __shared__ alignas(128) CUtensorMap m;
    __shared__ alignas(128) float box[BOX_ROWS * BOX_COLS];
    __shared__ uint64_t bar;
    const uint32_t lane = threadIdx.x;
    if (lane == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    if (lane < 8) ((uint4*)&m)[lane] = ((const uint4*)&tmpl)[lane];
    __syncwarp();
    uint32_t wrong = 0;
    const uint64_t t0 = globaltimer_ns();
    for (int i = 0; i < COST_ITERS; ++i) {
        if (lane == 0) tmap_replace_address(&m, (i & 1) ? b : a);
        __syncwarp();
        tmap_cp_fenceproxy(slot, &m);
        if (lane == 0) {
            tmap_acquire_gpu(slot);
            if (prefetch) tmap_prefetch(slot);
            if (load) {
                mbar_arrive_expect_tx(&bar, BOX_BYTES);
                tma_load_2d(box, slot, 0, 0, &bar);
                const bool landed = MBAR_WAIT(&bar, i & 1);  // no break: the warp must stay together
                wrong += !landed || __float_as_uint(box[0]) != __float_as_uint(((i & 1) ? b : a)[0]);
            }
        }
        __syncwarp();
    }
    if (lane == 0) {
        out[0] = globaltimer_ns() - t0;
        out[1] = wrong;
    }
}

// ---- Part 7 (host): the cost table -------------------------------------------
static double host_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__global__ void empty_kernel(const __grid_constant__ CUtensorMap m, int never) {
    if (never) tmap_prefetch(&m);
}

// Device: ns per update (alone, then followed by a load, with and without a
// prefetch). Host: what one update replaces: an encode, a copy of the map to
// the device, a launch. Machine-dependent: TIME lines; the check is on the
// loads' data (every one from the tensor the update named).
static void part_cost(const Copy* c) {
    const Group* g0 = &c->gs->groups[0];
    unsigned long long* out = NULL;
    CUtensorMap* slot = NULL;
    CUDA_CHECK(cudaMalloc(&out, 16));
    CUDA_CHECK(cudaMalloc(&slot, sizeof(CUtensorMap)));
    const float* a = c->src;
    const float* b = c->src + g0->offset + 64;  // another place, other words
    double ns[3];
    unsigned long long stale = 0;
    for (int v = 0; v < 3; ++v) {
        update_cost<<<1, 32, 0, c->s>>>(c->src_tmpl, slot, a, b, v > 0, v == 2, out);
        CHECK_LAUNCH();
        unsigned long long r[2];
        CUDA_CHECK(cudaMemcpyAsync(r, out, 16, cudaMemcpyDeviceToHost, c->s));  // on the kernel's stream
        CUDA_CHECK(cudaStreamSynchronize(c->s));
        ns[v] = (double)r[0] / COST_ITERS;
        stale += r[1];
    }
    check_value("cost_loads_saw_each_update", stale, 0);
    // The host round trip.
    TensorMapSpec sp = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a, g0->rows, g0->cols,
                                      (uint64_t)g0->ld * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    CUtensorMap m;
    const int reps = 2000;
    double t0 = host_seconds();
    for (int i = 0; i < reps; ++i) {
        sp.address = (i & 1) ? (const void*)b : (const void*)a;
        if (encode_tensor_map(&sp, &m) != CUDA_SUCCESS) die_internal("the encoder refused a valid map");
    }
    const double encode_us = (host_seconds() - t0) / reps * 1e6;
    t0 = host_seconds();
    for (int i = 0; i < reps; ++i)
        CUDA_CHECK(cudaMemcpyAsync(slot, c->host_maps_pinned, sizeof m, cudaMemcpyHostToDevice, c->s));
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    const double h2d_us = (host_seconds() - t0) / reps * 1e6;
    t0 = host_seconds();
    for (int i = 0; i < reps; ++i) empty_kernel<<<1, 32, 0, c->s>>>(m, 0);
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    const double launch_us = (host_seconds() - t0) / reps * 1e6;
    const double host_us = encode_us + h2d_us + launch_us;
    record_time_line(
        "device update (smem edit + cp_fenceproxy + acquire): %.0f ns; with a load through it: %.0f "
        "ns; with prefetch.tensormap before the load: %.0f ns",
        ns[0], ns[1], ns[2]);
    record_time_line(
        "host round trip per update: encode %.2f us + 128-byte H2D %.2f us + launch %.2f us = %.2f us: "
        "%.0fx the device update",
        encode_us, h2d_us, launch_us, host_us, host_us * 1e3 / ns[0]);
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(slot));
}

// ---------------------------------------------------------------------------
enum { OPT_GROUPS, OPT_ROWS, OPT_COLS, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--groups", "G",
     "groups in the grouped copy (each its own shape; cross_cta runs 2 CTAs per group at once)", 2, 192, 64,
     8},
    {"--rows", "R", "largest group's rows (f32)", 2, 8192, 2048, 200},
    {"--cols", "C", "largest group's columns (a multiple of 4)", 4, 8192, 2048, 256},
};
static void check_arguments(const Cli* cli) {
    const long long cols = cli->value[OPT_COLS], rows = cli->value[OPT_ROWS], groups = cli->value[OPT_GROUPS];
    if (cols % 4)
        die_usage(
            "--cols %lld is not a multiple of 4: a group's rows must be whole 16-byte chunks (a TMA store "
            "writes whole chunks)",
            cols);
    // The largest group, and the row stride it gets, must keep the TMA's rules.
    const TensorMapSpec s =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, (const void*)256, (uint64_t)rows, (uint64_t)cols,
                       (uint64_t)(cols + 32) * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    require_tensor_rules(&s, "--rows, --cols");
    require_host_memory("--groups, --rows, --cols", (size_t)groups * rows * (cols + 96) * 4 * 3);
}

static const CliSpec kCli = {
    "08_descriptor_update: tensor maps edited on the device (every field, the smem and the global\n"
    "path, a grouped copy, across CTAs, from the host), with the fences that make the TMA see them.",
    CLI_REPS, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const GroupSet* gs, const GroupSet* as) {
    print_header("08_descriptor_update", "tensor maps edited on the device, and their fences");
    printf(
        "problem: %u groups, %llu MiB of elements, %u items of up to %d boxes of 32 x 128 f32; array case %u "
        "batches of %u x %u\n",
        gs->ngroups, (unsigned long long)(gs->data_bytes >> 20), gs->nitems, ITEM_BOXES, as->ngroups,
        as->groups[0].rows, as->groups[0].cols);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint32_t ng = (uint32_t)cli.value[OPT_GROUPS], rows = (uint32_t)cli.value[OPT_ROWS];
    const uint32_t cols = (uint32_t)cli.value[OPT_COLS];
    require_hopper();
    require_cross_cta_fits(ng);
    GroupSet gs, as;
    make_groups(&gs, ng, rows, cols, 1, false);
    make_groups(&as, ng, rows / 2, cols / 2 / 4 * 4, 2, true);
    // The reference copies as many bytes as the grouped copy moves: a smaller
    // cudaMemcpy runs at a lower rate and would flatter every fraction.
    const size_t ref_bytes = gs.data_bytes;
    require_device_memory("--groups, --rows, --cols", 8 * (gs.pool_words + as.pool_words) + 2 * ref_bytes);
    print_problem(&gs, &as);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    memcpy_reference_of(ref_bytes, &cli, s);
    part_fields(s);
    Copy c, a;
    copy_setup(&c, &gs, s);
    part_grouped(&c, &cli);
    part_cross_cta(&c);
    part_cost(&c);
    copy_free(&c);
    copy_setup(&a, &as, s);
    COPY_PART("array_copy_ldg", &a, &cli, launch_copy(&a, PATH_LDG, 1));
    COPY_PART("array_copy", &a, &cli, launch_copy(&a, PATH_SMEM, 1));
    copy_free(&a);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
