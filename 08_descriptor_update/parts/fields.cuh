// A part of 08_descriptor_update/descriptor_update.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"

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

// One probe's check: the box through the device-edited map (the first half
// of `got`) against the box through the host's map (its second half). The
// template's box at the same place (`tbox`) must differ from the host's, or
// the check could not fail.
static void check_field(const char* name, const uint32_t* got, const uint32_t* tbox) {
    uint32_t want[PROBE_WORDS];
    memcpy(want, got + PROBE_WORDS, sizeof want);
    if (!memcmp(want, tbox, sizeof want))
        die_internal("%s: the host's map loads the same box as the template: this check could not fail",
                     name);
    check_words(name, got, want, PROBE_WORDS);
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
    uint32_t tbox[PROBE_WORDS];
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
        check_field(kFieldName[f], read_back(out, 2 * PROBE_WORDS, s), tbox);
    }
    free(fill);
    CUDA_CHECK(cudaFree(base));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(slot));
}
