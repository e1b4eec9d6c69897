// raw_kernels.cu: four kernels written in raw PTX, with no wrapper and no
// hook: code nobody annotated, as a learner or a library writes it. The
// protocol checker (make shadow-NN's tool, common/shadow/) sees them through
// CUDA's Sanitizer API alone; tests/shadow_proof/mistakes/raw-*.diff plant
// a mistake in them, and tools/shadow_sweep.py bugs runs each under the
// tool, which must name the rule it breaks. Every kernel's output is
// checked in full.
//   pipeline     a two-stage cp.async pipeline; each thread stores its
//                partner's element (A1, A2)
//   bulk_rounds  rounds of: the threads fill a buffer, a bulk store reads it,
//                the threads check a neighbour's word (A3, S2, S3)
//   mma          two rounds of one warpgroup MMA on operands the threads
//                write (W1, S2)
//   cluster      a cluster of two: rank 0 stores into rank 1's shared memory
//                after a cluster barrier, and one more keeps rank 1 alive (C1)
// Build: make shadow-proof (the steps' flags, no -DTUTORIAL_SHADOW). Run:
// build/shadow_proof/raw_kernels [--quick]; exit 0, 1, 2 or 77 as a step.
#include "common/tutorial.cuh"

#define THREADS 256
#define TILES 8

static __device__ __forceinline__ uint32_t sa(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

// ---- pipeline: cp.async, commit, wait_group 1, a barrier, the partner's element
__global__ void __launch_bounds__(THREADS) pipeline(const float4* in, float4* out) {
    __shared__ alignas(16) float4 stage[2][THREADS];
    const unsigned t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * TILES * THREADS;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&stage[0][t])), "l"(in + base + t)
                 : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    for (int k = 0; k < TILES; ++k) {
        if (k + 1 < TILES)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&stage[(k + 1) & 1][t])),
                         "l"(in + base + (size_t)(k + 1) * THREADS + t)
                         : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");  // one group per tile, empty at the end
        asm volatile("cp.async.wait_group 1;" ::: "memory");  // tile k's group complete; k + 1's may fly
        __syncthreads();                                      // every thread's copy of tile k landed
        out[base + (size_t)k * THREADS + t] = stage[k & 1][t ^ 32];
        __syncthreads();  // stage k & 1 read by all before the next round refills it
    }
}

// ---- bulk_rounds: ordinary stores, the proxy fence, a bulk store, its read wait
#define ROUND_WORDS 1024
__global__ void __launch_bounds__(THREADS) bulk_rounds(uint32_t* out, uint32_t* sums, int rounds) {
    __shared__ alignas(128) uint32_t buf[ROUND_WORDS];
    const unsigned t = threadIdx.x;
    uint32_t seen = 0;
    for (int r = 0; r < rounds; ++r) {
        for (unsigned i = t; i < ROUND_WORDS; i += THREADS)
            buf[i] = (uint32_t)((blockIdx.x * rounds + r) * ROUND_WORDS + i);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();  // the buffer complete, for the store and for the neighbours' reads
        seen += buf[(t + 1) % THREADS];
        if (t == 0) {
            uint32_t* dst = out + ((size_t)blockIdx.x * rounds + r) * ROUND_WORDS;
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
                         "r"(sa(buf)), "r"((uint32_t)sizeof buf)
                         : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // the store has read buf
        }
        __syncthreads();  // ... before any thread rewrites it
    }
    if (t == 0)
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // the last store done before the end
    sums[blockIdx.x * THREADS + t] = seen;
}

// ---- mma: one warpgroup, m64n8k16 bf16 on operands of 1.0, two rounds summed
#define BF16_ONE 0x3F80u
__global__ void __launch_bounds__(128) mma(float* out) {
    __shared__ alignas(1024) uint16_t a[64 * 16];  // 8 core matrices of 8 x 16 bytes along M, 2 along K
    __shared__ alignas(1024) uint16_t b[8 * 16];   // 1 along N, 2 along K
    const unsigned t = threadIdx.x;
    // no swizzle; A: K step (LBO) 1024 bytes, M step (SBO) 128; B: K step 128 bytes
    const uint64_t da = ((sa(a) & 0x3FFFFu) >> 4) | (uint64_t)(1024 >> 4) << 16 | (uint64_t)(128 >> 4) << 32;
    const uint64_t db = ((sa(b) & 0x3FFFFu) >> 4) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    for (int round = 0; round < 2; ++round) {
        for (unsigned i = t; i < 64 * 16; i += 128) a[i] = (uint16_t)BF16_ONE;
        for (unsigned i = t; i < 8 * 16; i += 128) b[i] = (uint16_t)BF16_ONE;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the operands reach the MMA's proxy
        __syncthreads();
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");  // the accumulators, as the threads left them
        asm volatile(
            "{ .reg .pred p; setp.ne.b32 p, %6, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0; }"
            : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
            : "l"(da), "l"(db), "r"((uint32_t)round)
            : "memory");
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");  // done: the operands may be rewritten
        asm volatile("" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)::"memory");
        __syncthreads();
    }
    out[4 * t + 0] = d0, out[4 * t + 1] = d1, out[4 * t + 2] = d2, out[4 * t + 3] = d3;
}

// ---- cluster: a store into the peer's shared memory, and the barriers around it
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128) cluster(uint32_t* out) {
    __shared__ uint32_t box[128];
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    box[threadIdx.x] = 0;
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
    if (rank == 0) {  // into rank 1's box, then one more barrier so that rank 1 is still there
        uint32_t peer;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(peer) : "r"(sa(&box[threadIdx.x])));
        asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(peer), "r"(threadIdx.x + 1) : "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
    out[blockIdx.x * 128 + threadIdx.x] = box[threadIdx.x];
}

// ---- the run ------------------------------------------------------------------------
enum { OPT_BLOCKS, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--blocks", "N", "blocks of the pipeline and bulk kernels", 1, 4096, 1024, 64}};
static const CliSpec kCli = {
    "tests/shadow_proof: four kernels in raw PTX, no wrapper and no hook, for the protocol checker's proof.",
    CLI_SEED, kOptions, NUM_OPTS, NULL};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const int blocks = (int)cli.value[OPT_BLOCKS], rounds = 4;
    require_hopper();
    print_header("shadow_proof", "raw PTX kernels nobody annotated");
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const size_t n4 = (size_t)blocks * TILES * THREADS, words = n4 * 4,
                 bulk_words = (size_t)blocks * rounds * ROUND_WORDS;
    uint32_t *in, *out, *sums, *want = (uint32_t*)xmalloc(words * 4, "the input");
    CUDA_CHECK(cudaMalloc(&in, words * 4));
    CUDA_CHECK(cudaMalloc(&out, (words > bulk_words ? words : bulk_words) * 4));
    CUDA_CHECK(cudaMalloc(&sums, (size_t)blocks * THREADS * 4));
    fill_seeded_words(want, words, cli.seed);
    CUDA_CHECK(cudaMemcpy(in, want, words * 4, cudaMemcpyHostToDevice));

    // pipeline: out[base + k * T + t] = in[base + k * T + (t ^ 32)]
    uint32_t* expect =
        (uint32_t*)xmalloc((words > bulk_words ? words : bulk_words) * 4, "the expected output");
    for (size_t e = 0; e < n4; ++e) {
        const size_t t = e % THREADS, src = e - t + (t ^ 32);
        memcpy(&expect[e * 4], &want[src * 4], 16);
    }
    poison_device(out, words * 4, s);
    pipeline<<<blocks, THREADS, 0, s>>>((const float4*)in, (float4*)out);
    CHECK_LAUNCH();
    check_device("pipeline", out, expect, words, s);

    // bulk_rounds: every round's buffer stored, and each thread's sum of its neighbour's words
    for (size_t i = 0; i < bulk_words; ++i) expect[i] = (uint32_t)i;
    poison_device(out, bulk_words * 4, s);
    bulk_rounds<<<blocks, THREADS, 0, s>>>(out, sums, rounds);
    CHECK_LAUNCH();
    check_device("bulk_rounds", out, expect, bulk_words, s);
    for (int bl = 0; bl < blocks; ++bl)
        for (unsigned t = 0; t < THREADS; ++t) {
            uint32_t sum = 0;
            for (int r = 0; r < rounds; ++r)
                sum += (uint32_t)((bl * rounds + r) * ROUND_WORDS + (t + 1) % THREADS);
            expect[bl * THREADS + t] = sum;
        }
    check_device("bulk_rounds_sums", sums, expect, (size_t)blocks * THREADS, s);

    // mma: D = A B with K = 16 ones, summed over two rounds: every element 32
    const float thirty_two = 32.0f;
    for (int i = 0; i < 512; ++i) memcpy(&expect[i], &thirty_two, 4);
    poison_device(out, 512 * 4, s);
    mma<<<1, 128, 0, s>>>((float*)out);
    CHECK_LAUNCH();
    check_device("mma", out, expect, 512, s);

    // cluster: rank 1's box holds 1..128, rank 0's zeros
    for (unsigned i = 0; i < 256; ++i) expect[i] = i < 128 ? 0u : i - 127;
    poison_device(out, 256 * 4, s);
    cluster<<<2, 128, 0, s>>>(out);
    CHECK_LAUNCH();
    check_device("cluster", out, expect, 256, s);

    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(sums));
    CUDA_CHECK(cudaStreamDestroy(s));
    free(want);
    free(expect);
    return finish();
}
