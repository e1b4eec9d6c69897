// 09_gemm/parts/loader.cuh: the producer side of the ring: one thread walks
// its CTA's units and their k-blocks, waits for each stage to come back,
// arms its full barrier and issues the TMA loads of A and B into it
// (multicast across a cluster).
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "09_gemm/parts/schedule.cuh"

// The producer's side of the ring: walks this CTA's units and their
// k-blocks, one stage per call to issue(). Position `pos` counts every stage
// ever loaded: stage pos % Stages, in its (pos / Stages)-th round.
template <class Cfg>
struct Loader {
    const CUtensorMap *a_map, *b_map;
    uint8_t* stages;
    uint64_t *full, *empty;
    const GemmArgs* g;
    uint32_t rank, unit, stride, units, kb, pos;
    Work w;

    __device__ __forceinline__ void start(uint32_t first) {
        unit = first, pos = 0;
        if (unit < units) w = unit_work<Cfg>(*g, unit, rank), kb = w.kb_begin;
    }

    // Load the next k-block into the next stage; false when there is none
    // (or a bounded wait gave up: then nothing more is issued).
    __device__ __forceinline__ bool issue() {
        if (unit >= units) return false;
        const uint32_t s = pos % Cfg::Stages;
        if (pos >= Cfg::Stages) {  // round r > 0: wait until round r - 1's readers are done
            const uint32_t parity = (pos / Cfg::Stages - 1) & 1;
            const bool free =
                Cfg::ClusterSize > 1 ? MBAR_WAIT_CLUSTER(&empty[s], parity) : MBAR_WAIT(&empty[s], parity);
            if (!free) return (unit = units), false;
        }
        uint8_t* stage = stages + s * Cfg::StageBytes;
        const uint32_t rank_m = rank / Cfg::ClusterN, rank_n = rank % Cfg::ClusterN;
        const int32_t k0 = (int32_t)(kb * BK);
        // Every byte of the stage lands in THIS CTA, whoever issued it: arm for all.
        mbar_arrive_expect_tx(&full[s], Cfg::StageBytes);
        // A: the ClusterN CTAs of this cluster row share the rows; this one
        // loads slice rank_n and, with ClusterN > 1, multicasts it to all.
        uint8_t* a_dst = stage + rank_n * Cfg::SliceRowsA * ROW_BYTES;
        const int32_t a_row = (int32_t)(w.row0 + rank_n * Cfg::SliceRowsA);
        if (Cfg::ClusterN > 1)
            tma_load_2d_multicast(a_dst, a_map, k0, a_row, &full[s],
                                  (uint16_t)(((1u << Cfg::ClusterN) - 1) << (rank_m * Cfg::ClusterN)));
        else
            tma_load_2d(a_dst, a_map, k0, a_row, &full[s]);
        // B: the ClusterM CTAs of this cluster column share it; slice rank_m.
        uint8_t* b_dst = stage + Cfg::StageBytesA + rank_m * Cfg::SliceRowsB * ROW_BYTES;
        const int32_t b_row = (int32_t)(w.col0 + rank_m * Cfg::SliceRowsB);
        if (Cfg::ClusterM > 1) {
            uint16_t mask = 0;
            for (uint32_t i = 0; i < Cfg::ClusterM; ++i)
                mask |= (uint16_t)(1u << (i * Cfg::ClusterN + rank_n));
            tma_load_2d_multicast(b_dst, b_map, k0, b_row, &full[s], mask);
        } else {
            tma_load_2d(b_dst, b_map, k0, b_row, &full[s]);
        }
        ++pos;
        if (++kb == w.kb_end && (unit += stride) < units) w = unit_work<Cfg>(*g, unit, rank), kb = w.kb_begin;
        return true;
    }
};
