// A part of 07_reduce_multicast/reduce_multicast.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "07_reduce_multicast/parts/problem.cuh"

// ---- Part 5: distributed shared memory -------------------------------------
// __cluster_dims__ fixes the cluster size at compile time (a plain <<<>>>
// launch then makes clusters of 4): the alternative to the launch attribute.
// Each CTA fills a buffer and copies it into the NEXT rank's shared memory
// with one bulk copy, which completes on the RECEIVER's barrier; the receiver
// arms it for the bytes after the start-up cluster barrier, possibly after
// they landed (the transaction count may go negative for a while). The
// sender learns nothing from the copy itself, so
// the last cluster barrier is what keeps its source alive until every
// receiver has its data.
#define DS_CLUSTER 4
#define DS_WORDS 4096
#define DS_CTAS 64

static __host__ __device__ __forceinline__ uint32_t dsmem_word(uint32_t seed, uint32_t cta, uint32_t i) {
    return partial_word(seed ^ 0x5EEDu, cta, i) & SEEDED_MASK;  // never the poison word (common/tutorial.cuh)
}

__global__ void __cluster_dims__(DS_CLUSTER, 1, 1) __launch_bounds__(RT_THREADS)
    dsmem_ring(uint32_t* out, uint32_t seed) {
    __shared__ alignas(128) uint32_t send[DS_WORDS], recv[DS_WORDS];
    __shared__ uint64_t bar;
    const uint32_t rank = cluster_ctarank(), S = cluster_nctarank();
    for (uint32_t i = threadIdx.x; i < DS_WORDS; i += RT_THREADS) {
        send[i] = dsmem_word(seed, blockIdx.x, i);
        recv[i] = POISON_WORD;
    }
    fence_proxy_async_shared();  // send is read, recv written, by the async proxy
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    cluster_sync();  // inits and poison visible to the cluster before any copy
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, DS_WORDS * 4);  // what the previous rank will send here
        bulk_copy_to_peer(recv, send, DS_WORDS * 4, &bar, (rank + 1) % S);
    }
    MBAR_WAIT(&bar, 0);
    for (uint32_t i = threadIdx.x; i < DS_WORDS; i += RT_THREADS)
        out[(size_t)blockIdx.x * DS_WORDS + i] = recv[i];
    cluster_sync();  // every receiver has its data: the senders' buffers may go
}

// ---- Part 5 (host): the ring through distributed shared memory --------------
// What each CTA must hold: the words of the previous rank of its cluster.
static void dsmem_reference(uint32_t* want, uint32_t seed) {
    for (uint32_t cta = 0; cta < DS_CTAS; ++cta) {
        const uint32_t rank = cta % DS_CLUSTER, from = cta - rank + (rank + DS_CLUSTER - 1) % DS_CLUSTER;
        for (uint32_t i = 0; i < DS_WORDS; ++i) want[(size_t)cta * DS_WORDS + i] = dsmem_word(seed, from, i);
    }
}

static void part_dsmem(uint32_t seed, cudaStream_t s) {
    const size_t n = (size_t)DS_CTAS * DS_WORDS;
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc(&out, n * 4));
    uint32_t* want = (uint32_t*)xmalloc(n * 4, "the dsmem reference");
    dsmem_reference(want, seed);
    poison_device(out, n * 4, s);
    dsmem_ring<<<DS_CTAS, RT_THREADS, 0, s>>>(out, seed);  // clusters of DS_CLUSTER: __cluster_dims__
    CHECK_LAUNCH();
    check_device("dsmem_ring", out, want, n, s);
    free(want);
    CUDA_CHECK(cudaFree(out));
}
