// Where step 10's grouped kernel spends its time, unit by unit. Lesson 10's counters (make profile-10)
// show the EDIT kernel on 64 experts with the DRAM two thirds busy and the tensor pipes two thirds busy,
// neither limit reached; a model of 43 us per compute-bound tile and 68 us per memory-bound one had
// predicted 80 to 88 % of the dense cuBLAS GEMM, and it reached the low 70s. This traces the same kernel,
// unmodified: 10_grouped_gemm/grouped_gemm.cu is included whole, after MBAR_WAIT is redefined so that
// thread 0 of each consumer warpgroup times its waits on the full barriers (data not yet landed: the
// warpgroup starved), and the producer's thread times its waits on the empty barriers (no stage free: the
// consumers behind). Per unit (one 128 x 256 tile) of each consumer warpgroup: when its first wait began,
// the cycles it spent waiting, when its last stage had landed. The host knows which tile each unit was
// (the kernel's own schedule functions) and sums by kind: units of experts of one tile row (memory-bound,
// 2 MB of B_g each from DRAM) and of larger experts (compute-bound, B_g slices reused across the band).
// Each configuration: 3 warm-up launches, the median of 5 untraced launches, one traced launch (both
// timed: the trace's own cost shows; it slows every tile's issue a little, so its per-tile times are
// compared between configurations, not with the untraced ms). Beside them, a model with no trace at all:
// the most tiles any CTA runs, at the dense problem's measured time per tile.
// Output: grouped_units_<GPU>.txt beside this file.
// Build: `make experiments` (build/experiments/grouped_units).
// link: -lcublas
#include "03_tma_load/mbarrier.cuh"

#define TRACE_MAX_CTAS 256
#define TRACE_MAX_UNITS 64  // units per CTA: 2656 / 132 at most here

typedef struct {
    unsigned long long start_ns, start_clk, wait_clk, ready_clk;
} UnitTrace;

// What the host sets before a launch: constant memory, so that reading it costs the kernel nothing. A
// launch is traced when c_units is not NULL; c_epoch, new for each traced launch, tells a CTA's shared
// counters (garbage at launch) that they start from zero.
__constant__ UnitTrace* c_units;  // [CTA][consumer warpgroup][unit]
__constant__ unsigned long long c_epoch;
__constant__ unsigned int c_kblocks;
__device__ unsigned long long g_producer_wait_clk[TRACE_MAX_CTAS];  // the producer's waits for a free stage
__device__ unsigned long long g_end_clk[TRACE_MAX_CTAS][2], g_end_ns[TRACE_MAX_CTAS][2];
__device__ unsigned int g_waits[TRACE_MAX_CTAS][2];  // full-barrier waits, per consumer warpgroup

static __device__ __forceinline__ unsigned long long clock_now(void) {
    unsigned long long c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
}

// The kernel's MBAR_WAIT, timed. The waits of the producer's thread 0 are on the empty barriers (and, at
// a retarget, on full barriers: counted with them, a few per expert); those of a consumer warpgroup's
// thread 0 are on the full barriers, one per k-block, kblocks per unit. Each thread keeps its running
// unit in shared memory and writes a unit's record to global memory once, when its last stage landed:
// no global load on the kernel's path (a first version kept its counters in global memory and made the
// traced launch half again as long).
static __device__ __forceinline__ bool traced_wait(uint64_t* bar, uint32_t parity, const char* what,
                                                   const char* file, int line) {
    __shared__ unsigned long long s_epoch[3], s_start_ns[2], s_start_clk[2], s_wait[3];
    __shared__ unsigned int s_n[2];
    UnitTrace* units = c_units;
    if (units == NULL || threadIdx.x % 128 != 0 || blockIdx.x >= TRACE_MAX_CTAS)
        return mbar_wait(bar, parity, what, file, line);
    const uint32_t r = threadIdx.x / 128;  // 0: the producer, 1 and 2: the consumer warpgroups
    if (s_epoch[r] != c_epoch) {
        s_epoch[r] = c_epoch, s_wait[r] = 0;
        if (r > 0) s_n[r - 1] = 0;
    }
    const unsigned long long c0 = clock_now();
    const bool ok = mbar_wait(bar, parity, what, file, line);
    const unsigned long long c1 = clock_now();
    if (r == 0) {
        s_wait[0] += c1 - c0;
        g_producer_wait_clk[blockIdx.x] = s_wait[0];
        return ok;
    }
    const uint32_t wg = r - 1, n = s_n[wg]++, k = n % c_kblocks, i = n / c_kblocks;
    if (k == 0) s_start_ns[wg] = globaltimer_ns(), s_start_clk[wg] = c0, s_wait[r] = 0;
    s_wait[r] += c1 - c0;
    if (k == c_kblocks - 1 && i < TRACE_MAX_UNITS) {
        UnitTrace* u = units + ((size_t)blockIdx.x * 2 + wg) * TRACE_MAX_UNITS + i;
        u->start_ns = s_start_ns[wg], u->start_clk = s_start_clk[wg], u->wait_clk = s_wait[r],
        u->ready_clk = c1;
        g_end_clk[blockIdx.x][wg] = c1, g_end_ns[blockIdx.x][wg] = globaltimer_ns(),
        g_waits[blockIdx.x][wg] = n + 1;
    }
    return ok;
}
#undef MBAR_WAIT
#define MBAR_WAIT(bar, parity) traced_wait((bar), (parity), #bar, __FILE__, __LINE__)

#define main grouped_gemm_main
#include "10_grouped_gemm/grouped_gemm.cu"
#undef main

// The part of part_problem() the kernel needs: B, one buffer set of A and C, the maps, batch 0 and the
// dense batch (no reference, no check: the step checks this kernel on these batches bit for bit).
static void setup(Problem* q, cudaStream_t s, uint32_t grid, uint32_t experts, uint32_t total, uint32_t k,
                  uint32_t skew) {
    memset(q, 0, sizeof *q);
    q->s = s, q->band = 8, q->grid = grid;
    q->experts = experts, q->total = total, q->n = 4096, q->k = k, q->skew = skew;
    q->ld_ab = round_up(k, 8), q->ldc = output_ld(q->n);
    q->framed_words = (size_t)(total + 2 * FRAME) * q->ldc;
    CUDA_CHECK(cudaMalloc((void**)&q->b, (size_t)experts * q->n * q->ld_ab * 2));
    make_operand<<<1024, 256, 0, s>>>(q->b, (uint64_t)experts * q->n, k, q->ld_ab, 1u ^ 0xB0Bu);
    CUDA_CHECK(cudaMalloc((void**)&q->a[0], (size_t)total * q->ld_ab * 2));
    make_operand<<<1024, 256, 0, s>>>(q->a[0], total, k, q->ld_ab, 7u);
    CUDA_CHECK(cudaMalloc((void**)&q->out[0], q->framed_words * 4));
    CHECK_LAUNCH();
    q->a_tmpl[0] = operand_map(q, q->a[0], total, BM, "A");
    q->c_tmpl[0] = output_map(q, c_of(q, 0), total, "C");
    q->b_tmpl = operand_map(q, q->b, q->n, BN, "B_0");
    CUDA_CHECK(cudaMalloc((void**)&q->dev, sizeof(Batch)));
    CUDA_CHECK(cudaMallocHost((void**)&q->staged, sizeof(Batch)));
    CUDA_CHECK(cudaMalloc((void**)&q->slots, 6 * sizeof(CUtensorMap) * grid));
    CUtensorMap* start = (CUtensorMap*)xmalloc(6 * sizeof(CUtensorMap) * grid, "the slots' first maps");
    for (uint32_t i = 0; i < 6 * grid; ++i)
        start[i] = i % 6 < 4 ? (i % 2 ? q->b_tmpl : q->a_tmpl[0]) : q->c_tmpl[0];
    CUDA_CHECK(cudaMemcpy(q->slots, start, 6 * sizeof(CUtensorMap) * grid, cudaMemcpyHostToDevice));
    free(start);
    uint32_t rows[MAX_EXPERTS];
    expert_rows(rows, experts, total, skew / 100.0, 1u);  // the step's batch 0 with its default seed (1)
    q->experts_of[BATCH_0] = experts;
    fill_batch(&q->host[BATCH_0], rows, experts, q->n, false);
    rows[0] = total, q->experts_of[DENSE] = 1;
    fill_batch(&q->host[DENSE], rows, 1, q->n, false);
    q->host[BATCH_0].a = q->host[DENSE].a = q->a[0];
    q->host[BATCH_0].c = q->host[DENSE].c = c_of(q, 0);
}

static void release(Problem* q) {
    CUDA_CHECK(cudaStreamSynchronize(q->s));
    CUDA_CHECK(cudaFree(q->slots));
    CUDA_CHECK(cudaFreeHost(q->staged));
    CUDA_CHECK(cudaFree(q->dev));
    CUDA_CHECK(cudaFree(q->a[0]));
    CUDA_CHECK(cudaFree(q->out[0]));
    CUDA_CHECK(cudaFree(q->b));
}

static float launch_ms(const Problem* q, cudaEvent_t e0, cudaEvent_t e1) {
    CUDA_CHECK(cudaEventRecord(e0, q->s));
    run_grouped<EDIT>(q);
    CUDA_CHECK(cudaEventRecord(e1, q->s));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

typedef struct {
    double n, us, starved_us, mma_us;
} Sum;

// One configuration: the batch on the device now, its schedule as planned (or not); one row per kind.
// dense_ms_per_tile: the dense configuration's time over its most tiles on one CTA (0: this is it). The
// row's at_dense_ms is what this configuration's most tiles on one CTA would take at that rate.
static double trace_config(const Problem* q, const char* name, UnitTrace* dev_units,
                           double dense_ms_per_tile) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    const uint32_t kblocks = (q->k + BK - 1) / BK;
    CUDA_CHECK(cudaMemcpyToSymbol(c_kblocks, &kblocks, sizeof kblocks));
    UnitTrace* none = NULL;
    CUDA_CHECK(cudaMemcpyToSymbol(c_units, &none, sizeof none));
    for (int i = 0; i < 3; ++i) launch_ms(q, e0, e1);
    float plain[5];
    for (int i = 0; i < 5; ++i) plain[i] = launch_ms(q, e0, e1);
    const float plain_ms = median_of(plain, 5);
    static unsigned long long epoch = 0x5EED0000ull;
    ++epoch;
    static unsigned int waits_zero[TRACE_MAX_CTAS][2];
    CUDA_CHECK(cudaMemcpyToSymbol(g_waits, waits_zero, sizeof waits_zero));
    CUDA_CHECK(cudaMemset(dev_units, 0, sizeof(UnitTrace) * TRACE_MAX_CTAS * 2 * TRACE_MAX_UNITS));
    CUDA_CHECK(cudaMemcpyToSymbol(c_epoch, &epoch, sizeof epoch));
    CUDA_CHECK(cudaMemcpyToSymbol(c_units, &dev_units, sizeof dev_units));
    const float traced_ms = launch_ms(q, e0, e1);
    CUDA_CHECK(cudaMemcpyToSymbol(c_units, &none, sizeof none));
    static UnitTrace units[TRACE_MAX_CTAS][2][TRACE_MAX_UNITS];
    static unsigned long long end_clk[TRACE_MAX_CTAS][2], end_ns[TRACE_MAX_CTAS][2], producer[TRACE_MAX_CTAS];
    static unsigned int waits[TRACE_MAX_CTAS][2];
    CUDA_CHECK(cudaMemcpy(units, dev_units, sizeof units, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpyFromSymbol(end_clk, g_end_clk, sizeof end_clk));
    CUDA_CHECK(cudaMemcpyFromSymbol(end_ns, g_end_ns, sizeof end_ns));
    CUDA_CHECK(cudaMemcpyFromSymbol(producer, g_producer_wait_clk, sizeof producer));
    CUDA_CHECK(cudaMemcpyFromSymbol(waits, g_waits, sizeof waits));

    const Batch* b = &q->host[q->batch];
    const uint32_t experts = q->experts_of[q->batch], total_units = b->first_tile[experts];
    const uint32_t grid = grid_for(q, total_units);
    // Per kind (0: compute-bound units, experts of two tile rows or more; 1: memory-bound ones).
    Sum kind[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    double first_ns = 1e30, last_ns = 0, cta_min_end = 1e30, cta_sum_us = 0, producer_us = 0, starved_us = 0;
    double ghz_sum = 0;
    for (uint32_t c = 0; c < grid; ++c)
        for (uint32_t wg = 0; wg < 2; ++wg) {
            const uint32_t n_units = waits[c][wg] / kblocks;
            if (n_units == 0 || n_units > TRACE_MAX_UNITS) continue;
            const UnitTrace* t = units[c][wg];
            // This SM's clock, from its own first wait to its last stage landed, against the global timer.
            const double ghz =
                (double)(end_clk[c][wg] - t[0].start_clk) / (double)(end_ns[c][wg] - t[0].start_ns);
            ghz_sum += ghz;
            first_ns = fmin(first_ns, (double)t[0].start_ns);
            last_ns = fmax(last_ns, (double)end_ns[c][wg]);
            cta_min_end = fmin(cta_min_end, (double)end_ns[c][wg]);
            cta_sum_us += (end_ns[c][wg] - t[0].start_ns) / 1e3;
            if (wg == 0) producer_us += producer[c] / ghz / 1e3;
            for (uint32_t i = 0; i < n_units; ++i) {
                const uint32_t u = c + i * grid, v = mixed(u, total_units, b->split);
                const uint32_t g = b->order[range_of(b->first_tile, experts, v)];
                const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
                const unsigned long long next = i + 1 < n_units ? t[i + 1].start_clk : end_clk[c][wg];
                Sum* k = &kind[rows <= BM ? 1 : 0];
                k->n += 1;
                k->us += (next - t[i].start_clk) / ghz / 1e3;
                k->starved_us += t[i].wait_clk / ghz / 1e3;
                k->mma_us += (t[i].ready_clk - t[i].start_clk) / ghz / 1e3;
                starved_us += t[i].wait_clk / ghz / 1e3;
            }
        }
    const double span_us = (last_ns - first_ns) / 1e3;
    const uint32_t per_cta = (total_units + grid - 1) / grid;
    const double ms_per_tile = dense_ms_per_tile > 0 ? dense_ms_per_tile : plain_ms / per_cta;
    printf("%-30s %6.3f %7u %11.3f %9.3f %5.2f %8.1f %7.1f %9.1f %6.0f %11.1f\n", name, plain_ms, per_cta,
           ms_per_tile * per_cta, traced_ms, ghz_sum / (2 * grid), span_us, (last_ns - cta_min_end) / 1e3,
           100.0 * starved_us / cta_sum_us, (kind[0].n + kind[1].n) / 2,
           100.0 * producer_us / (cta_sum_us / 2));
    for (int k = 0; k < 2; ++k)
        if (kind[k].n > 0)
            printf("%s/%s: %.0f tiles, %.1f us each, %.1f us to the last stage, %.1f us starved (%.1f %%)\n",
                   name, k ? "memory-bound" : "compute-bound", kind[k].n / 2, kind[k].us / kind[k].n,
                   kind[k].mma_us / kind[k].n, kind[k].starved_us / kind[k].n,
                   100.0 * kind[k].starved_us / kind[k].us);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return ms_per_tile;
}

int main(void) {
    require_hopper();
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    allow_shared_memory<EDIT>();
    const uint32_t grid = (uint32_t)persistent_grid((const void*)grouped_gemm<EDIT>, Grouped<EDIT>::Threads,
                                                    Grouped<EDIT>::SmemBytes);
    if (grid > TRACE_MAX_CTAS) die_usage("%u CTAs: the trace holds %d", grid, TRACE_MAX_CTAS);
    UnitTrace* dev_units;
    CUDA_CHECK(cudaMalloc((void**)&dev_units, sizeof(UnitTrace) * TRACE_MAX_CTAS * 2 * TRACE_MAX_UNITS));
    printf("GPU    %s\n", prop.name);
    printf("grouped_gemm<EDIT>, %u CTAs; a row per configuration (.mixed or .expert_order: the schedule):\n",
           grid);
    puts(
        "  per_cta: the most tiles one CTA runs; at_dense_ms: that many at dense's time per tile (its ms "
        "over its\n"
        "  per_cta); traced_ms: the traced launch; span: from the first wait to the last stage landed, over "
        "every\n"
        "  CTA; tail: the last CTA's end after the first's; starved: the consumers' time inside full-barrier "
        "waits\n"
        "  (data not landed); prod_wait: the producer's time waiting for a free stage.\n"
        "Then a row per kind of tile (memory-bound: of an expert of one tile row), per consumer warpgroup "
        "and\n"
        "tile: each = from its first full-barrier wait to the next tile's (the last: to its last stage "
        "landed);\n"
        "to the last stage = to its last k-block's data landed (then its last MMAs and the epilogue).");
    printf("%-30s %6s %7s %11s %9s %5s %8s %7s %9s %6s %11s\n", "configuration", "ms", "per_cta",
           "at_dense_ms", "traced_ms", "GHz", "span_us", "tail_us", "starved_%", "tiles", "prod_wait_%");
    static const struct {
        const char* name;
        uint32_t experts, total, k, skew;
    } problems[] = {{"", 64, 16384, 4096, 100}, {"many_", 128, 8192, 7168, 120}};
    for (const auto& pr : problems) {
        Problem q;
        setup(&q, s, grid, pr.experts, pr.total, pr.k, pr.skew);
        char name[64];
        use_batch(&q, DENSE);
        snprintf(name, sizeof name, "%sdense", pr.name);
        const double dense_ms_per_tile = trace_config(&q, name, dev_units, 0);
        plan_batch(&q, BATCH_0, false);
        snprintf(name, sizeof name, "%sdevice_edit.%s", pr.name,
                 q.host[BATCH_0].split < q.host[BATCH_0].first_tile[pr.experts] ? "mixed" : "expert_order");
        trace_config(&q, name, dev_units, dense_ms_per_tile);
        plan_batch(&q, BATCH_0, true);
        snprintf(name, sizeof name, "%sother_order.%s", pr.name,
                 q.host[BATCH_0].split < q.host[BATCH_0].first_tile[pr.experts] ? "mixed" : "expert_order");
        trace_config(&q, name, dev_units, dense_ms_per_tile);
        release(&q);
    }
    CUDA_CHECK(cudaFree(dev_units));
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
}
