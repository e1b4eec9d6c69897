// A part of 08_descriptor_update/descriptor_update.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"
#include "08_descriptor_update/parts/grouped_copy.cuh"  // retarget_smem, box_coords, the copies
#include "08_descriptor_update/parts/problem.cuh"

// ---- Part 5: one CTA builds the maps, another uses them -----------------------
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
