// The latency in Little's law (step 01: bytes in flight = bandwidth x latency), measured instead of
// assumed. One thread of one block, nothing else running, so each number is the unloaded latency: the
// floor under a loaded memory system's, never above it.
//   1. A pointer chase with ld.global.cg (L2, not L1): each load's address is the word the previous load
//      returned, so no two loads overlap. The chain visits one word per 256-byte line in a shuffled
//      order, so neither a prefetcher nor a line fetched for an earlier hop serves the next one. Over a
//      16 MiB buffer walked once before (the L2 holds it); over 2 GiB (far more than the L2: each hop
//      goes to DRAM) shuffled within each 2 MiB page, the pages in order (the page's address
//      translation stays cached, as in a streaming kernel); and over 2 GiB shuffled as a whole (most
//      hops also miss the translation caches). Each timed chain continues where the last one stopped,
//      so no hop of the DRAM chains finds its line in L2.
//   2. A TMA round trip: arm an mbarrier, load one box, wait; then the next box. Boxes of 64 floats
//      (256 B) by 4 rows (1 KiB) and by 64 rows (16 KiB, the steps' box), every box of a 16 MiB matrix
//      read before (L2), and 20000 boxes of a 2 GiB matrix (DRAM).
//   3. Little's law with the measured numbers: cudaMemcpy device-to-device bandwidth, measured here, times
//      the DRAM latency = the bytes the GPU must keep in flight, and that per SM.
// Each latency is a whole chain's time (%globaltimer, ns) divided by its length, median of 5 chains.
// Output: latency_<GPU>.txt beside this file. Build: `make experiments`; run: build/experiments/latency.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"

#define LINE_WORDS 64  // one hop per 256-byte line
#define HOPS 200000

// Starts at *at, and leaves there the word where it stopped: the next chase continues the chain.
__global__ void chase(const uint32_t* __restrict__ next, int hops, uint32_t* at, unsigned long long* ns) {
    uint32_t i = *at;
    const uint64_t t0 = globaltimer_ns();
    for (int h = 0; h < hops; ++h) i = __ldcg(next + i);  // ld.global.cg: the address waits for the data
    const uint64_t t1 = globaltimer_ns();
    *at = i;
    *ns = t1 - t0;
}

#define BOX_COLS 64  // 256 B per box row; the matrix rows are 4096 floats

template <int ROWS>
__global__ void tma_round_trips(const __grid_constant__ CUtensorMap map, int first, int boxes,
                                unsigned long long* ns, uint32_t* sink) {
    __shared__ alignas(128) float box[ROWS * BOX_COLS];
    __shared__ uint64_t bar;
    mbar_init(&bar, 1);
    mbar_fence_init();
    uint32_t acc = 0;
    const uint64_t t0 = globaltimer_ns();
    for (int i = 0; i < boxes; ++i) {
        const int b = first + i;  // boxes in row-major order, 4096 / BOX_COLS to a row of boxes
        mbar_arrive_expect_tx(&bar, sizeof box);
        tma_load_2d(box, &map, (b % (4096 / BOX_COLS)) * BOX_COLS, (b / (4096 / BOX_COLS)) * ROWS, &bar);
        MBAR_WAIT(&bar, i & 1);
        acc += __float_as_uint(box[b & (ROWS * BOX_COLS - 1)]);  // read what landed before the next load
    }
    const uint64_t t1 = globaltimer_ns();
    *sink = acc;
    *ns = t1 - t0;
}

// One cycle through every line of a buffer of `words` words, one word per line: next[w] = the word
// visited after word w. The lines are shuffled within each group of `group` lines (Fisher-Yates), the
// groups kept in order. Returns the first word of the cycle.
static uint32_t build_chain(uint32_t* next, size_t words, size_t group) {
    const size_t lines = words / LINE_WORDS;
    uint32_t* order = (uint32_t*)xmalloc(lines * 4, "the chain's order");
    uint64_t s = 0x2545F4914F6CDD1Dull;  // xorshift64
    for (size_t g = 0; g < lines; g += group)
        for (size_t i = g; i < g + group; ++i) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            const size_t j = g + s % (i - g + 1);
            order[i] = order[j], order[j] = (uint32_t)i;  // inside-out shuffle: order[g..i] a permutation
        }
    memset(next, 0, words * 4);
    for (size_t i = 0; i < lines; ++i)
        next[(size_t)order[i] * LINE_WORDS] = order[(i + 1) % lines] * LINE_WORDS;
    const uint32_t first = order[0] * LINE_WORDS;
    free(order);
    return first;
}

static int compare_doubles(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double chase_ns(const uint32_t* dev, int hops, uint32_t* at, unsigned long long* ns) {
    double v[5];
    for (int r = 0; r < 5; ++r) {
        chase<<<1, 1>>>(dev, hops, at, ns);
        CHECK_LAUNCH();
        unsigned long long t = 0;
        CUDA_CHECK(cudaMemcpy(&t, ns, 8, cudaMemcpyDeviceToHost));
        v[r] = (double)t / hops;
    }
    qsort(v, 5, sizeof v[0], compare_doubles);
    return v[2];
}

// Median of 5 chains of `boxes` round trips; with `fresh`, each chain reads boxes the others do not,
// starting at box `first` (DRAM); otherwise every chain reads the same boxes from `first` (L2).
template <int ROWS>
static double tma_ns(const float* dev, size_t rows, int first, int boxes, int fresh, unsigned long long* ns,
                     uint32_t* sink) {
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dev, rows, 4096, 4096 * 4,
                                              ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the round trips' matrix");
    double v[5];
    for (int r = 0; r < 5; ++r) {
        tma_round_trips<ROWS><<<1, 1>>>(map, first + (fresh ? r * boxes : 0), boxes, ns, sink);
        CHECK_LAUNCH();
        unsigned long long t = 0;
        CUDA_CHECK(cudaMemcpy(&t, ns, 8, cudaMemcpyDeviceToHost));
        char hung[REPORT_CAP];
        if (take_wait_report(hung, sizeof hung)) die_internal("a round trip hung: %s", hung);
        v[r] = (double)t / boxes;
    }
    qsort(v, 5, sizeof v[0], compare_doubles);
    return v[2];
}

static void set_start(uint32_t* at, uint32_t word) {
    CUDA_CHECK(cudaMemcpy(at, &word, 4, cudaMemcpyHostToDevice));
}

int main(void) {
    require_hopper();
    const size_t big = (size_t)2 << 30, small = (size_t)16 << 20, page = (size_t)2 << 20;  // bytes
    require_host_memory("the 2 GiB chain", big);
    require_device_memory("the 2 GiB chain", big);
    uint32_t *next = NULL, *at = NULL;
    unsigned long long* ns = NULL;
    CUDA_CHECK(cudaMalloc(&next, big));
    CUDA_CHECK(cudaMalloc(&at, 4));
    CUDA_CHECK(cudaMalloc(&ns, 8));
    uint32_t* host = (uint32_t*)xmalloc(big, "the chain");
    print_gpu();

    // 1. Pointer chases. The L2 chain is walked whole, once untimed first (then every line is in L2).
    const int small_hops = (int)(small / 256);
    set_start(at, build_chain(host, small / 4, small / 256));
    CUDA_CHECK(cudaMemcpy(next, host, small, cudaMemcpyHostToDevice));
    chase<<<1, 1>>>(next, small_hops, at, ns);
    CHECK_LAUNCH();
    const double l2 = chase_ns(next, small_hops, at, ns);
    set_start(at, build_chain(host, big / 4, page / 256));
    CUDA_CHECK(cudaMemcpy(next, host, big, cudaMemcpyHostToDevice));
    const double dram = chase_ns(next, HOPS, at, ns);
    set_start(at, build_chain(host, big / 4, big / 256));
    CUDA_CHECK(cudaMemcpy(next, host, big, cudaMemcpyHostToDevice));
    const double dram_random = chase_ns(next, HOPS, at, ns);
    printf("LATENCY ldg_cg_l2           %7.1f ns per dependent load (16 MiB chain, in L2)\n", l2);
    printf("LATENCY ldg_cg_dram         %7.1f ns per dependent load (2 GiB, shuffled within 2 MiB pages)\n",
           dram);
    printf("LATENCY ldg_cg_dram_random  %7.1f ns per dependent load (2 GiB, shuffled across all pages)\n",
           dram_random);

    // 2. TMA round trips: the same memory as a matrix of float rows of 4096.
    const float* m = (const float*)next;
    const size_t small_rows = small / (4096 * 4), big_rows = big / (4096 * 4);
    // DRAM: 5 chains of 20000 boxes, none read twice: the 1 KiB boxes in rows 0..6249, the 16 KiB boxes
    // from row 16384 on (box 16384, 64 boxes to a row of boxes of 64 rows) to row 116383 (of 131072).
    const int big_boxes = 20000;
    tma_ns<64>(m, small_rows, 0, (int)(small_rows / 64 * 64), 0, ns, at);  // brings the 16 MiB into L2
    const double l2_1k = tma_ns<4>(m, small_rows, 0, (int)(small_rows / 4 * 64), 0, ns, at);
    const double l2_16k = tma_ns<64>(m, small_rows, 0, (int)(small_rows / 64 * 64), 0, ns, at);
    const double dram_1k = tma_ns<4>(m, big_rows, 0, big_boxes, 1, ns, at);
    const double dram_16k = tma_ns<64>(m, big_rows, 16384, big_boxes, 1, ns, at);
    printf("LATENCY tma_1k_box_l2       %7.1f ns per 1 KiB box (4 x 64 floats), arm + load + wait, in L2\n",
           l2_1k);
    printf("LATENCY tma_16k_box_l2      %7.1f ns per 16 KiB box (64 x 64 floats), arm + load + wait, in L2\n",
           l2_16k);
    printf("LATENCY tma_1k_box_dram     %7.1f ns per 1 KiB box, arm + load + wait, from DRAM\n", dram_1k);
    printf("LATENCY tma_16k_box_dram    %7.1f ns per 16 KiB box, arm + load + wait, from DRAM\n", dram_16k);

    // 3. Little's law with the measured DRAM latency and this GPU's memcpy bandwidth.
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const size_t half = big / 2;
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    float runs[7];
    for (int r = 0; r < 8; ++r) {  // one warm-up, then 7
        CUDA_CHECK(cudaEventRecord(e0));
        CUDA_CHECK(cudaMemcpyAsync((char*)next + half, next, half, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        if (r) CUDA_CHECK(cudaEventElapsedTime(&runs[r - 1], e0, e1));
    }
    const double ms = median_of(runs, 7), gbs = 2.0 * half / (ms * 1e-3) / 1e9;  // read + written
    const double in_flight = gbs * dram;                                         // GB/s x ns = bytes
    printf(
        "LITTLE memcpy %.0f GB/s x %.0f ns = %.1f MiB in flight over the GPU, %.1f KiB per SM (%d SMs),\n"
        "       %.0f 16-byte accesses per SM\n",
        gbs, dram, in_flight / 1048576.0, in_flight / 1024.0 / sms, sms, in_flight / sms / 16);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaFree(next));
    CUDA_CHECK(cudaFree(at));
    CUDA_CHECK(cudaFree(ns));
    free(host);
    return 0;
}
