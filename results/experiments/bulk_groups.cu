// Whose bulk groups a wait waits for (steps 02 and 04): the PTX ISA says a bulk async-group belongs to
// the thread that committed it, and that bulk groups and cp.async groups are two separate sets. Shown:
//   1. Ownership: thread 0 issues 16 bulk stores of 64 KiB (1 MiB, one group); after a __syncthreads()
//      thread 32 (another warp) and thread 0 each run cp.async.bulk.wait_group 0. Each wait's length
//      in SM cycles; right after it, whether the last word of the last store still reads as poison
//      (ld.relaxed.gpu), and then how many words of the last store's 64 KiB still do: thread 32's
//      wait has nothing to wait for. Then thread 1 (the issuer's own warp) alone, thread 0 waiting only
//      after the next barrier: the PTX ISA gives thread 1 no group either, but the wait compiles to
//      DEPBAR.LE SB0, a counter of the warp's (cuobjdump -sass build/experiments/bulk_groups).
//   2. Separate sets, one way: a warp issues cp.async copies (32 KiB from a buffer not in L2) and
//      commits them; then cp.async.bulk.wait_group 0, which has no bulk group to wait for; the words
//      each thread copied that are still poison right after it; then cp.async.wait_group 0, and again.
//   3. The other way: thread 0 issues the bulk stores of part 1, then cp.async.wait_all (it has no
//      cp.async group) and at once cp.async.bulk.wait_group 0, both timed; then the poison left.
// The poison counts are what one run saw (the data lands while a thread looks, one load at a time);
// the cycles are what each wait cost. Output: bulk_groups_<GPU>.txt beside this file. Build: `make
// experiments`.
#include "02_cp_async/cp_async.cuh"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"

#define CHUNK (64 * 1024)  // bytes per bulk store
#define STORES 16          // 1 MiB in one bulk group
#define CHUNK_WORDS (CHUNK / 4)

typedef struct {
    long long cycles[4];
    unsigned int last_word_poison[4];  // 1: the last store's last word read as poison right after the wait
    unsigned int poison[4];            // words of the last store that read as poison, counted after that
} Seen;

static __device__ __forceinline__ uint32_t ld_relaxed_gpu(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Words of the last 64 KiB of `dst` (the last store) that still read as poison to this thread.
static __device__ unsigned int poison_left(const uint32_t* dst) {
    unsigned int n = 0;
    for (int i = 0; i < CHUNK_WORDS; ++i)
        n += ld_relaxed_gpu(dst + (STORES - 1) * CHUNK_WORDS + i) == POISON_WORD;
    return n;
}

static __device__ void issue_stores(uint32_t* dst, const uint32_t* src) {
    for (int k = 0; k < STORES; ++k) bulk_store(dst + k * CHUNK_WORDS, src, CHUNK);
    bulk_commit_group();
}

static __device__ void after_wait(const uint32_t* dst, Seen* seen, int k, long long cycles) {
    seen->cycles[k] = cycles;
    seen->last_word_poison[k] = ld_relaxed_gpu(dst + STORES * CHUNK_WORDS - 1) == POISON_WORD;
    seen->poison[k] = poison_left(dst);
}

// Part 1 (mode 0: thread 32 and thread 0 wait; mode 2: thread 1 alone, thread 0 only after the last
// barrier) and part 3 (mode 1). src: CHUNK bytes of dynamic shared memory, filled with its index.
__global__ void bulk_owner(uint32_t* dst, int mode, Seen* seen) {
    uint32_t* src = (uint32_t*)tma_smem_base();
    for (int i = threadIdx.x; i < CHUNK_WORDS; i += blockDim.x) src[i] = i;
    fence_proxy_async_shared();  // every writer, before the barrier that hands src to the bulk stores
    __syncthreads();
    if (threadIdx.x == 0) issue_stores(dst, src);
    __syncthreads();
    if ((mode == 0 && threadIdx.x == 32) || (mode == 2 && threadIdx.x == 1)) {  // not the issuer: no group
        const long long t0 = clock64();
        bulk_wait_group<0>();
        after_wait(dst, seen, 0, clock64() - t0);
    }
    if (mode == 0 && threadIdx.x == 0) {
        const long long t0 = clock64();
        bulk_wait_group<0>();
        after_wait(dst, seen, 1, clock64() - t0);
    }
    if (mode == 1 && threadIdx.x == 0) {  // a cp.async wait with only bulk groups pending, then the bulk wait
        const long long t0 = clock64();
        cp_async_wait_all();
        const long long t1 = clock64();
        bulk_wait_group<0>();
        const long long t2 = clock64();
        seen->cycles[2] = t1 - t0;
        after_wait(dst, seen, 3, t2 - t1);
    }
    __syncthreads();
    if (mode == 2 && threadIdx.x == 0) bulk_wait_group<0>();  // src stays alive until the issuer's own wait
    __syncthreads();
}

// Part 2: one warp, each lane copying 64 x 16 B into its own words of `tile`.
__global__ void cp_async_then_bulk_wait(const uint4* src, Seen* seen) {
    __shared__ alignas(16) uint4 tile[32 * 64];
    const int lane = threadIdx.x;
    for (int k = 0; k < 64; ++k)
        tile[k * 32 + lane] = make_uint4(POISON_WORD, POISON_WORD, POISON_WORD, POISON_WORD);
    __syncwarp();
    for (int k = 0; k < 64; ++k) cp_async_cg16(&tile[k * 32 + lane], &src[k * 32 + lane]);
    cp_async_commit_group();
    long long t0 = clock64();
    bulk_wait_group<0>();  // no bulk group: returns at once, the cp.async copies still in flight
    const long long bulk_wait = clock64() - t0;
    unsigned int left = 0;
    for (int k = 0; k < 64; ++k) left += ((volatile uint32_t*)&tile[k * 32 + lane])[0] == POISON_WORD;
    t0 = clock64();
    cp_async_wait_group<0>();
    const long long cp_wait = clock64() - t0;
    unsigned int after = 0;
    for (int k = 0; k < 64; ++k) after += ((volatile uint32_t*)&tile[k * 32 + lane])[0] == POISON_WORD;
    atomicAdd(&seen->poison[0], left);
    atomicAdd(&seen->poison[1], after);
    if (lane == 0) seen->cycles[0] = bulk_wait, seen->cycles[1] = cp_wait;
}

static Seen run_owner(uint32_t* dst, int mode, Seen* dev) {
    Seen s;
    CUDA_CHECK(cudaMemset(dst, POISON_BYTE, (size_t)STORES * CHUNK));
    CUDA_CHECK(cudaMemset(dev, 0, sizeof s));
    bulk_owner<<<1, 64, tma_smem_bytes(CHUNK)>>>(dst, mode, dev);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&s, dev, sizeof s, cudaMemcpyDeviceToHost));
    return s;
}

int main(void) {
    require_hopper();
    int khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const size_t flush = (size_t)512 << 20;  // read through before part 2: its source is not in L2
    uint32_t *dst = NULL, *big = NULL;
    Seen* dev = NULL;
    CUDA_CHECK(cudaMalloc(&dst, (size_t)STORES * CHUNK));
    CUDA_CHECK(cudaMalloc(&big, flush));
    CUDA_CHECK(cudaMalloc(&dev, sizeof(Seen)));
    CUDA_CHECK(cudaFuncSetAttribute(bulk_owner, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(CHUNK)));
    print_gpu();
    printf("SM clock %.0f MHz (the attribute's maximum; cycles below are clock64 differences)\n", khz / 1e3);
    for (int mode = 0; mode <= 2; mode += 2)
        for (int run = 0; run < 3; ++run) {
            const Seen a = run_owner(dst, mode, dev);
            for (int k = 0; k < (mode ? 1 : 2); ++k)
                printf(
                    "OWNER run %d: thread %-2d %-22s bulk wait_group 0: %6lld cycles; then the last word %s; "
                    "%5u of %d words of the last store still poison\n",
                    run,
                    k      ? 0
                    : mode ? 1
                           : 32,
                    k      ? "(the issuer)"
                    : mode ? "(the issuer's warp)"
                           : "(another warp)",
                    a.cycles[k], a.last_word_poison[k] ? "poison" : "written", a.poison[k], CHUNK_WORDS);
        }
    for (int run = 0; run < 3; ++run) {
        CUDA_CHECK(cudaMemset(big, run + 1, flush));  // the L2 now holds the end of `big`, not its start
        Seen s;
        CUDA_CHECK(cudaMemset(dev, 0, sizeof s));
        cp_async_then_bulk_wait<<<1, 32>>>((const uint4*)big, dev);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(&s, dev, sizeof s, cudaMemcpyDeviceToHost));
        printf(
            "CP_ASYNC run %d: after cp.async + commit: bulk wait_group 0 %5lld cycles, then %4u of 2048 "
            "copied words still poison; cp.async.wait_group 0 %5lld cycles, then %u\n",
            run, s.cycles[0], s.poison[0], s.cycles[1], s.poison[1]);
    }
    for (int run = 0; run < 3; ++run) {
        const Seen b = run_owner(dst, 1, dev);
        printf(
            "BULK run %d: after 16 bulk stores + commit: cp.async.wait_all %5lld cycles, then bulk "
            "wait_group 0 "
            "%6lld cycles; then the last word %s, %u words still poison\n",
            run, b.cycles[2], b.cycles[3], b.last_word_poison[3] ? "poison" : "written", b.poison[3]);
    }
    CUDA_CHECK(cudaFree(dst));
    CUDA_CHECK(cudaFree(big));
    CUDA_CHECK(cudaFree(dev));
    return 0;
}
