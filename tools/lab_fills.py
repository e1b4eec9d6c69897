"""The sample fills of every lab hole (tools/lab_samples.py writes them into a class to grade): answers, so the
student bundle never ships this file (the leak test checks, and compares every correct fill with every file of
the bundle as it does the solution).

FILLS["NN.k"] holds fills of hole NN.k by name; the name's first word is its kind, which says the verdict it
must get (lab_samples.EXPECTED):

    correct   PASS         the hole done another way: a helper lambda, a loop the compiler does not unroll,
                           raw PTX for a wrapper, a different but sufficient wait
    bypass    MECHANISM    the right output without what the hole teaches (or FAIL, where the output shows it)
    mistake   MECHANISM    what the hole teaches, done wrong in a way its own code shows
    race      RACE         a race the output may hide: a sanitizer names it
    protocol  PROTOCOL     an asynchronous protocol broken in a way the output may hide: the shadow build names it
    paste     (recorded)   the neighbouring code a student would paste into the hole, as it stands: never PASS

Each fill replaces the hole's lines (its stubs too), indented as the hole.
"""

FILLS: dict[str, dict[str, str]] = {}

FILLS["01.1"] = {
    # a helper lambda and two tiles used in turn: a tile is stored again two tiles later, after the barrier of the
    # tile between, which every thread reaches only after its reads: one barrier per tile is enough
    "correct_two_tiles": """\
__shared__ float4 tiles[2][B * THREADS];
const unsigned partner = threadIdx.x ^ 32;
auto stage = [&](float4* tile, size_t base) {
    float4 r[B];
#pragma unroll
    for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = r[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + partner];
};
int which = 0;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    stage(tiles[which], base);
    which ^= 1;
}""",
    # each element stored into the slot of the thread that writes it out, read back from the thread's own slot
    # (the data cross threads on the way in), the reads in a loop the compiler does not unroll
    "correct_scatter": """\
__shared__ float4 tile[B * THREADS];
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    float4 mine[B];
#pragma unroll
    for (int k = 0; k < B; ++k) mine[k] = in[base + k * THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + (threadIdx.x ^ 32)] = mine[k];
    __syncthreads();
#pragma unroll 1
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + threadIdx.x];
    __syncthreads();
}""",
    # other barriers that wait as __syncthreads() does: __syncthreads_count and __syncthreads_or (bar.red)
    "correct_counting_barriers": """\
__shared__ float4 tile[B * THREADS];
const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    float4 r[B];
#pragma unroll
    for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = r[k];
    (void)__syncthreads_count(1);
#pragma unroll
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + partner];
    (void)__syncthreads_or(0);
}""",
    # straight from global memory: the right output, and nothing staged
    "bypass_global": """\
const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS)
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = in[base + k * THREADS + partner];""",
    # the partner's element loaded from global memory into the thread's own slot and read back from there: the
    # right output, staged between two barriers, and no data crossing threads
    "bypass_own_slot": """\
__shared__ float4 tile[B * THREADS];
const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    float4 r[B];
#pragma unroll
    for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + partner];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = r[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + threadIdx.x];
    __syncthreads();
}""",
    # the fill of the issue that closed the old copy's gap: each thread its own element, through its own slot
    "bypass_issue_own_element": """\
__shared__ float4 tile[B * THREADS];
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    float4 r[B];
#pragma unroll
    for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = r[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + threadIdx.x];
    __syncthreads();
}""",
    # no barrier between the stores and the partner's loads: its own code shows it
    "mistake_no_first_barrier": """\
__shared__ float4 tile[B * THREADS];
const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    float4 r[B];
#pragma unroll
    for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = r[k];
#pragma unroll
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + partner];
    __syncthreads();
}""",
    # the first barrier alone: nothing orders a tile's reads before the next tile's stores (a fast warp must lap
    # a slow one for the data to show it; racecheck names the hazard on any run)
    "race_first_barrier_alone": """\
__shared__ float4 tile[B * THREADS];
const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    float4 r[B];
#pragma unroll
    for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + threadIdx.x];
#pragma unroll
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = r[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < B; ++k) out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + partner];
}""",
    # copy_gridstride's body, the nearest neighbour: a copy, not a staged one
    "paste": """\
size_t stride = (size_t)gridDim.x * blockDim.x;
for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) out[i] = in[i];""",
}

FILLS["02.1"] = {
    # a helper lambda issuing a tile into its stage
    "correct_helper": """\
auto issue = [&](size_t tile) {
    const float4* src = in + (first + tile) * TILE4;
    float4* dst = stage + (tile % STAGES) * TILE4;
#pragma unroll
    for (int j = 0; j < VEC; ++j) cp_async_cg16(dst + j * THREADS + t, src + j * THREADS + t);
};
if (i + STAGES - 1 < mine) issue(i + STAGES - 1);""",
    # cp.async in raw PTX, with running pointers
    "correct_raw_ptx": """\
if (i + (STAGES - 1) < mine) {
    const float4* src = in + (first + i + STAGES - 1) * TILE4 + t;
    uint32_t dst = smem_u32(stage + (i + STAGES - 1) % STAGES * TILE4 + t);
#pragma unroll
    for (int j = 0; j < VEC; ++j, src += THREADS, dst += THREADS * sizeof(float4))
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : "r"(dst), "l"(gmem_u64(src)) : "memory");
}""",
    # the tile through registers: LDG + STS, no cp.async
    "bypass_registers": """\
const size_t ahead = i + STAGES - 1;
if (ahead < mine) {
    const float4* src = in + (first + ahead) * TILE4;
    float4* dst = stage + (ahead % STAGES) * TILE4;
#pragma unroll
    for (int j = 0; j < VEC; ++j) dst[j * THREADS + t] = src[j * THREADS + t];
}""",
    # half the tile with cp.async, half through registers: the copy this step replaces, in part
    "bypass_half_registers": """\
const size_t ahead = i + STAGES - 1;
if (ahead < mine) {
    const float4* src = in + (first + ahead) * TILE4;
    float4* dst = stage + (ahead % STAGES) * TILE4;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        if (j < VEC / 2)
            cp_async_cg16(&dst[j * THREADS + t], &src[j * THREADS + t]);
        else
            dst[j * THREADS + t] = src[j * THREADS + t];
    }
}""",
    # the prologue's lines, s renamed: every tile into its own slot, past the STAGES the buffer holds
    "paste": """\
const size_t ahead = i + STAGES - 1;
if ((size_t)ahead < mine) {
    const float4* src = in + (first + ahead) * TILE4;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
        cp_async_cg16(&stage[ahead * TILE4 + j * THREADS + t], &src[j * THREADS + t]);
}""",
}

FILLS["03.1"] = {
    # a helper lambda
    "correct_helper": """\
auto arm_then_load = [=](int32_t x, int32_t y) {
    mbar_arrive_expect_tx(bar, bytes);  // the whole box, out-of-bounds part included
    tma_load_2d(dst, map, x, y, bar);
};
arm_then_load(col0, row0);""",
    # the box's place named first, the wrappers called through their own names for each operand
    "correct_named_operands": """\
uint64_t* const full = bar;
const int32_t column = col0, row = row0;  // a tensor map's coordinates: the contiguous dimension first
const uint32_t box_bytes = bytes;         // the whole box, out-of-bounds part included
mbar_arrive_expect_tx(full, box_bytes);
tma_load_2d(dst, map, column, row, full);""",
    # the byte count announced without an arrival (mbarrier.expect_tx), the load, then the arrival: the phase
    # cannot complete before the arrival, which comes after the count
    "correct_expect_then_arrive": """\
const uint32_t b = smem_u32(bar);
asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" : : "r"(b), "r"(bytes) : "memory");
tma_load_2d(dst, map, col0, row0, bar);
asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" : : "r"(b) : "memory");""",
    # the load issued before the barrier is armed: its bytes may land first (the tx-count goes below zero, which
    # the PTX ISA allows), and the phase still completes only with the arrival, after the count (a multicast into
    # a peer that has not yet armed its barrier relies on the same rule: step 07)
    "correct_load_then_arm": """\
tma_load_2d(dst, map, col0, row0, bar);
mbar_arrive_expect_tx(bar, bytes);""",
    # a plain arrive: the barrier no longer counts the box's bytes
    "bypass_plain_arrive": """\
mbar_arrive(bar);
tma_load_2d(dst, map, col0, row0, bar);
(void)bytes;""",
    # the barrier armed, the box never loaded: its own code shows it (and the wait would hang)
    "mistake_arm_only": """\
mbar_arrive_expect_tx(bar, bytes);
(void)dst, (void)map, (void)col0, (void)row0;""",
    # 16 bytes fewer than the box delivers: the phase may complete before the last of them land
    "protocol_bytes_short": """\
mbar_arrive_expect_tx(bar, bytes - 16);
tma_load_2d(dst, map, col0, row0, bar);""",
    # reuse_one_barrier's two lines, as they stand there
    "paste": """\
mbar_arrive_expect_tx(&bar, bytes);
tma_load_2d(box, &map, reuse_col0(t, tiles_x), reuse_row0(t, tiles_x), &bar);""",
}

FILLS["04.1"] = {
    "correct_named_coordinates": """\
const int32_t column = 0, row = (int32_t)box * COPY_BOX_ROWS;  // a box is COPY_BOX_ROWS full rows
const uint32_t* src = &stage[s * COPY_BOX_WORDS];
tma_store_2d(out_map, column, row, src);""",
    "correct_raw_ptx": """\
asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
             : : "l"(out_map), "r"(0), "r"((int32_t)(box * COPY_BOX_ROWS)), "r"(smem_u32(stage + s * COPY_BOX_WORDS))
             : "memory");""",
    # copy_ring<false>'s store before it went through store_box
    "paste": """\
tma_store_2d(&out_map, 0, (int32_t)(box * COPY_BOX_ROWS), stage + s * COPY_BOX_WORDS);""",
}

FILLS["05.1"] = {
    # the formula by hand on the absolute address: bits 7-9 (the 128-byte line) XOR into bits 4-6 (the chunk)
    "correct_xor_by_hand": """\
const uint32_t logical = swz_base + (t * 32 + k) * 4;
const uint32_t physical = logical ^ (((logical >> 7) & 7) << 4);
return swz[(physical - swz_base) / 4];""",
    # the same as chunk and line: the 16-byte chunk k / 4 XOR the 128-byte line of row t (counted from the
    # absolute base), word k % 4 in it
    "correct_chunk_and_line": """\
const uint32_t line = (swz_base / 128 + t) % 8;
const uint32_t chunk = (k / 4) ^ line;
return swz[t * 32 + chunk * 4 + k % 4];""",
    # the tile is position-coded: its value computed, nothing read where the TMA put it
    "bypass_computed": """\
(void)swz;
(void)swz_base;
return (float)(t * 32 + k);""",
    # the unswizzled index of part 5's plain tile: the row-major place, not where the TMA put it
    "paste": """\
return swz[t * 32 + k];
(void)swz_base;""",
}

FILLS["06.1"] = {
    "correct_named_coordinates": """\
const int32_t out_col = r0, out_row = c0;  // the output's dimensions are the input's swapped
tma_store_2d(out_map, out_col, out_row, t);""",
    "correct_raw_ptx": """\
asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
             : : "l"(out_map), "r"(r0), "r"(c0), "r"(smem_u32(t)) : "memory");""",
    # tma_swizzle_batched's store before it went through store_transposed, b = 0
    "paste": """\
tma_store_2d(&out_map, r0, c0 + 0 * TILE, t + 0 * TILE * TILE);""",
}

FILLS["07.1"] = {
    "correct_named_coordinates": """\
const CUtensorMap* out_map = &map;
const int32_t x = (int32_t)c0, y = (int32_t)r0;  // a load's coordinates: column first
tma_reduce_2d<OP>(out_map, x, y, box);""",
    # the tile's place computed again from the block index
    "correct_from_the_block": """\
const uint32_t per_row = OPS_COLS / RT_COLS;
tma_reduce_2d<OP>(&map, (int32_t)(blockIdx.x % per_row * RT_COLS), (int32_t)(blockIdx.x / per_row * RT_ROWS), box);""",
    # the split-K reduce's line, as it stands there
    "paste": """\
tma_reduce_2d<SPLITK_OP>(&map, (int32_t)(tile % tiles_c * RT_COLS), (int32_t)(tile / tiles_c * RT_ROWS), box);""",
}

FILLS["07.2"] = {
    "correct_if_constexpr": """\
if constexpr (MULTICAST) {
    const uint16_t everyone = (uint16_t)(0xFFFFu >> (16 - S));  // the cluster's S CTAs
    tma_load_2d_multicast(dst, &map, 0, (int32_t)(row0 + slice * slice_rows), &full[s], everyone);
} else {
    tma_load_2d(dst, &map, 0, (int32_t)row0, &full[s]);
}""",
    # CTA 0 of the cluster multicasts every slice, the others none: each CTA still receives the whole tile on its
    # own barrier (armed for all S slices), and CTA 0 refills a stage only after every CTA's consumers released it
    "correct_one_issuer": """\
if (MULTICAST) {
    if (rank == 0)
        for (uint32_t j = 0; j < S; ++j)
            tma_load_2d_multicast(dst + j * slice_rows * BT_COLS, &map, 0, (int32_t)(row0 + j * slice_rows),
                                  &full[s], (uint16_t)((1u << S) - 1));
} else {
    tma_load_2d(dst, &map, 0, (int32_t)row0, &full[s]);
}
(void)slice;""",
    # a multicast without a cluster too: broadcast<false> must load plainly
    "mistake_multicast_always": """\
tma_load_2d_multicast(dst, &map, 0, (int32_t)(row0 + slice * slice_rows), &full[s], (uint16_t)((1u << S) - 1));""",
    # every CTA loads the whole tile itself: the right sums, and no multicast
    "bypass_every_cta_loads": """\
(void)slice;
tma_load_2d(dst - rank * slice_rows * BT_COLS, &map, 0, (int32_t)row0, &full[s]);""",
}

FILLS["08.1"] = {
    # one map at a time, in a loop the compiler does not unroll
    "correct_rolled": """\
if (lane == 0) {
#pragma unroll 1
    for (int k = 0; k < 2; ++k) {
        tmap_replace_address(&edit[k], (k == 0 ? p->src : p->dst) + g->offset);
        if (!p->address_only) {
            tmap_replace_dim<0>(&edit[k], g->cols);
            tmap_replace_dim<1>(&edit[k], g->rows);
            tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld * sizeof(float));
        }
    }
}""",
    # two lanes, one map each (the __syncwarp after the hole shows both edits to the warp)
    "correct_two_lanes": """\
if (lane < 2) {
    CUtensorMap* m = &edit[lane];
    tmap_replace_address(m, (lane == 0 ? p->src : p->dst) + g->offset);
    if (!p->address_only) {
        tmap_replace_dim<0>(m, g->cols);
        tmap_replace_dim<1>(m, g->rows);
        tmap_replace_stride<0>(m, (uint64_t)g->ld * 4);
    }
}""",
    # the row stride never edited: its own code shows it (and the copies land at the template's stride)
    "mistake_no_stride": """\
if (lane == 0) {
    tmap_replace_address(&edit[0], p->src + g->offset);
    tmap_replace_address(&edit[1], p->dst + g->offset);
    if (!p->address_only)
        for (int k = 0; k < 2; ++k) {
            tmap_replace_dim<0>(&edit[k], g->cols);
            tmap_replace_dim<1>(&edit[k], g->rows);
        }
}""",
    # field_probe's edits, names as they stand there
    "paste": """\
tmap_replace_address(m, p->new_base);
tmap_replace_dim<0>(m, p->new_value);""",
}

FILLS["08.2"] = {
    # the edits of both maps in a loop the compiler does not unroll, the release once, the acquires in another
    "correct_rolled": """\
#pragma unroll 1
for (int k = 0; k < 2; ++k) {
    tmap_replace_address_global(&slots[k], (k == 0 ? p->src : p->dst) + g->offset);
    tmap_replace_dim_global<0>(&slots[k], g->cols);
    tmap_replace_dim_global<1>(&slots[k], g->rows);
    tmap_replace_stride_global<0>(&slots[k], (uint64_t)g->ld * 4);
}
tmap_release_gpu();
#pragma unroll 1
for (int k = 0; k < 2; ++k) tmap_acquire_gpu(&slots[k]);""",
    # a helper lambda per map, and a release after each map's edits (one would do; two are as good)
    "correct_release_per_map": """\
auto retarget = [&](CUtensorMap* m, const float* base) {
    tmap_replace_address_global(m, base + g->offset);
    tmap_replace_dim_global<0>(m, g->cols);
    tmap_replace_dim_global<1>(m, g->rows);
    tmap_replace_stride_global<0>(m, (uint64_t)g->ld * 4);
    tmap_release_gpu();
};
retarget(&slots[0], p->src);
retarget(&slots[1], p->dst);
tmap_acquire_gpu(&slots[0]);
tmap_acquire_gpu(&slots[1]);""",
    # every edit and both acquires, no release: its own code shows it
    "mistake_no_release": """\
tmap_replace_address_global(&slots[0], p->src + g->offset);
tmap_replace_address_global(&slots[1], p->dst + g->offset);
for (int k = 0; k < 2; ++k) {
    tmap_replace_dim_global<0>(&slots[k], g->cols);
    tmap_replace_dim_global<1>(&slots[k], g->rows);
    tmap_replace_stride_global<0>(&slots[k], (uint64_t)g->ld * 4);
}
tmap_acquire_gpu(&slots[0]);
tmap_acquire_gpu(&slots[1]);""",
    # the global path with its acquires before its release: every instruction there, the order wrong
    "protocol_acquire_before_release": """\
tmap_replace_address_global(&slots[0], p->src + g->offset);
tmap_replace_address_global(&slots[1], p->dst + g->offset);
for (int k = 0; k < 2; ++k) {
    tmap_replace_dim_global<0>(&slots[k], g->cols);
    tmap_replace_dim_global<1>(&slots[k], g->rows);
    tmap_replace_stride_global<0>(&slots[k], (uint64_t)g->ld * 4);
}
tmap_acquire_gpu(&slots[0]);
tmap_acquire_gpu(&slots[1]);
tmap_release_gpu();""",
    # the destination map never acquired: the TMA may store through its cached old copy
    "protocol_one_acquire": """\
tmap_replace_address_global(&slots[0], p->src + g->offset);
tmap_replace_address_global(&slots[1], p->dst + g->offset);
for (int k = 0; k < 2; ++k) {
    tmap_replace_dim_global<0>(&slots[k], g->cols);
    tmap_replace_dim_global<1>(&slots[k], g->rows);
    tmap_replace_stride_global<0>(&slots[k], (uint64_t)g->ld * 4);
}
tmap_release_gpu();
tmap_acquire_gpu(&slots[0]);""",
}

FILLS["09.1"] = {
    # the four MMAs written out, through a helper lambda, and a fence before each (one would do: the
    # accumulators are not touched between them)
    "correct_fence_each": """\
const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
auto mma = [&](uint32_t s) {
    wgmma_fence();
    wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s != 0);
};
mma(0);
mma(1);
mma(2);
mma(3);
wgmma_commit_group();""",
    # the MMAs in a loop the compiler does not unroll: ptxas must then serialize them, and says so
    "mistake_rolled": """\
const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
wgmma_fence();
#pragma unroll 1
for (uint32_t s = 0; s < BK / K_STEP; ++s) wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);
wgmma_commit_group();""",
    # each MMA's descriptors made from its own 32-byte step into the rows (the start field is address >> 4)
    "correct_descriptor_per_mma": """\
wgmma_fence();
#pragma unroll
for (uint32_t s = 0; s < BK / K_STEP; ++s) {
    const uint32_t bytes = s * K_STEP * 2;  // K_STEP bf16 of K per MMA
    wgmma_m64n256k16_bf16(d, smem_desc_sw128(a_rows + bytes), smem_desc_sw128(b_rows + bytes), accumulate || s != 0);
}
wgmma_commit_group();""",
    # no wgmma.fence: the output is right (ptxas inserts one), and ptxas says so
    "bypass_no_fence": """\
const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
#pragma unroll
for (uint32_t s = 0; s < BK / K_STEP; ++s) wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);
wgmma_commit_group();""",
    # the commit left out: the consumer's wait_group has no group to wait for
    "protocol_no_commit": """\
const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
wgmma_fence();
#pragma unroll
for (uint32_t s = 0; s < BK / K_STEP; ++s) wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);""",
}

FILLS["10.1"] = {
    # the waits newest first, from a helper lambda, in a loop the compiler does not unroll
    "correct_newest_first": """\
auto landed_at = [&](uint32_t q) { return MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1); };
if (lane == 0 && last != 0xFFFFFFFFu) {
    const uint32_t oldest = pos > STAGES ? pos - STAGES : 0;
#pragma unroll 1
    for (uint32_t q = last + 1; q-- > oldest && landed;) landed = landed_at(q);
}
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
    tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
tmap_cp_fenceproxy(&pair[1], &edit->b);
if (lane == 0) {
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}""",
    # lane 0 waits and edits A, lane 1 edits B once the warp has synchronised after the waits
    "correct_two_lanes": """\
if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
__syncwarp();  // the waits, before either lane edits
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
} else if (lane == 1) {
    tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
tmap_cp_fenceproxy(&pair[1], &edit->b);
if (lane == 0) {
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}""",
    # the pair edited in place in global memory (08's global path): the right output, and no edit in shared
    # memory, no cp_fenceproxy
    "bypass_global_path": """\
if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
if (lane == 0) {
    for (int w = 0; w < 8; ++w) {
        ((uint4*)&pair[0])[w] = ((const uint4*)&edit->a)[w];
        ((uint4*)&pair[1])[w] = ((const uint4*)&edit->b)[w];
    }
    tmap_replace_address_global(&pair[0], p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim_global<1>(&pair[0], first_row[g + 1] - first_row[g]);
    tmap_replace_address_global(&pair[1], p.b + (size_t)g * p.n * p.ld_ab);
    tmap_release_gpu();
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}""",
    # no wait for the loads through the pair: its own code shows it
    "mistake_no_wait": """\
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
    tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
tmap_cp_fenceproxy(&pair[1], &edit->b);
if (lane == 0) {
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}
(void)pos, (void)last, (void)full;""",
    # A as the hole asks, B edited in place in global memory (08's global path): half the lesson skipped
    "bypass_b_in_global": """\
if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
if (lane == 0) {
    for (int w = 0; w < 8; ++w) ((uint4*)&pair[1])[w] = ((const uint4*)&edit->b)[w];
    tmap_replace_address_global(&pair[1], p.b + (size_t)g * p.n * p.ld_ab);
    tmap_release_gpu();
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}""",
    # every instruction of the solution, the acquires before the copies that release the new maps: the TMA
    # may use the old ones
    "protocol_acquire_before_publish": """\
if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
    tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
tmap_cp_fenceproxy(&pair[1], &edit->b);""",
    # the waits one position short: the oldest load through the pair may still be in flight when it is
    # rewritten (the happens-before checker's map-in-use rule; the output may not show it)
    "protocol_window_one_short": """\
if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES - 1 ? pos - STAGES + 1 : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
    tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
tmap_cp_fenceproxy(&pair[1], &edit->b);
if (lane == 0) {
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}""",
    # the consumers' retarget of their C map (consumer_map), as it stands
    "paste": """\
if (tid == 0) {
    bulk_wait_group_read<0>();  // every store through the map has read it
    tmap_replace_address(&edit->c[wg], p.batch->c + (size_t)first_row[g] * p.ldc);
    tmap_replace_dim<1>(&edit->c[wg], first_row[g + 1] - first_row[g]);
}
__syncwarp();
tmap_cp_fenceproxy(slot, &edit->c[wg]);
if (tid == 0) tmap_acquire_gpu(slot);""",
}

# A plausible wrong fill of one hole per step: (the solution's text, the student's), in the solution's fill.
WRONG = {
    "01_memcpy_baseline": ("out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + partner];",
                           "out[base + k * THREADS + partner] = tile[k * THREADS + partner];"),
    "02_cp_async": ("float4* dst = stage + (ahead % STAGES) * TILE4;", "float4* dst = stage + (i % STAGES) * TILE4;"),
    "03_tma_load": ("tma_load_2d(dst, map, col0, row0, bar);", "tma_load_2d(dst, map, row0, col0, bar);"),
    "04_tma_store": ("(int32_t)(box * COPY_BOX_ROWS)", "(int32_t)box"),
    "05_swizzle": ("SWIZZLE_MODE_128B, t, k, 4, 128)", "SWIZZLE_MODE_64B, t, k, 4, 128)"),
    "06_transpose": ("tma_store_2d(out_map, r0, c0, t);", "tma_store_2d(out_map, c0, r0, t);"),
    "07_reduce_multicast": ("tma_reduce_2d<OP>(&map, (int32_t)c0, (int32_t)r0, box);",
                            "tma_reduce_2d<OP>(&map, (int32_t)r0, (int32_t)c0, box);"),
    "08_descriptor_update": ("tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld * 4);",
                             "tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld);"),
    "09_gemm": ("accumulate || s > 0);", "accumulate);"),
    "10_grouped_gemm": ("tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);",
                        "tmap_replace_address(&edit->b, p.b + (size_t)g * p.n);"),
}

# Why a hole has no fill of a kind.
NOT_POSSIBLE = {
    ("04.1", "bypass"): "store_box reaches global memory only through the tensor map",
    ("06.1", "bypass"): "store_transposed reaches global memory only through the tensor map",
    ("07.1", "bypass"): "a reduce by the threads' own atomics needs the output's address, which only the map holds",
    ("08.1", "bypass"): "no other instruction edits a tensor map (its layout is opaque)",
    ("08.2", "bypass"): "no other instruction edits a tensor map (its layout is opaque), and the maps the host "
                        "encodes per group (p->host_ws) are copied to the GPU only before the host-maps part: a fill "
                        "that copies them into slots[] runs on garbage (illegal instruction on the H200)",
    ("02.1", "protocol"): "the hole only issues copies: its commit, wait and barriers are outside it (make bug-02)",
    ("04.1", "protocol"): "the hole is one TMA store; its waits are outside it",
    ("05.1", "protocol"): "the hole is index arithmetic: nothing asynchronous",
    ("06.1", "protocol"): "the hole is one TMA store; its fence and waits are outside it",
    ("07.1", "protocol"): "the hole is one TMA reduce; its fence, commit and wait are outside it",
    ("07.2", "protocol"): "the hole is the loads; the barriers they complete on are armed and waited outside it",
    ("08.1", "protocol"): "the hole is the edits alone; their publication and the acquires are outside it",
    ("07.2", "paste"): "no other kernel multicasts: the nearest load is the hole's own else branch",
    ("08.2", "paste"): "no other code edits a map in global memory",
    ("09.1", "paste"): "every kernel's MMAs go through mma_stage: no neighbouring code does what the hole does",
}
