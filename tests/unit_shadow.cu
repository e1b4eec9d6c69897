// The shadow build's rules (common/shadow/core.h), run on the CPU: each case
// feeds one CTA's state (or a cluster's) the events a kernel's wrappers would
// report, in the order a kernel would issue them, and prints the rule the
// shadow reported ("none" when the protocol was kept). tests/test_shadow.py
// holds the rule each case must give: every rule has a case that keeps it
// and one that breaks it, so a rule that can no longer fail fails the test.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shadow/core.h"

static ShReport g_report;
static const char* const kIds[] = {"none",
#define UNIT_RULE_ID(id, name, text) #id,
                                   SHADOW_RULES(UNIT_RULE_ID)
#undef UNIT_RULE_ID
};

static ShCta* new_cta(uint32_t nthreads, unsigned long long owner) {
    ShCta* c = (ShCta*)calloc(1, sizeof(ShCta));
    if (!c) exit(2);
    c->owner = owner;
    c->nthreads = nthreads;
    c->nchunks = SH_CHUNKS;
    c->cluster_size = 1;
    return c;
}
static ShCtx at(ShCta* cta, uint32_t tid) {
    ShCtx c = {cta, tid, {"unit_shadow.cu", "kernel", 1}, &g_report};
    return c;
}
static ShProps props_128b(uint32_t bytes) {
    ShProps p;
    memset(&p, 0, sizeof p);
    p.known = 1;
    p.load_bytes = p.box_bytes = bytes;
    p.swizzle = 3;
    return p;
}
static int g_cases = 0, g_failed = 0;
static void verdict(const char* name, const char* want) {
    const char* got = g_report.reported ? kIds[g_report.rule] : "none";
    printf("case %-34s %-5s %s\n", name, got, g_report.reported ? g_report.text : "");
    ++g_cases;
    if (strcmp(got, want)) {
        printf("  WRONG: want %s\n", want);
        ++g_failed;
    }
    memset(&g_report, 0, sizeof g_report);
}

#define BAR 0x100u    // a barrier's shared offset
#define EMPTY 0x108u  // a second one
#define BOX 0x400u    // a 4 KiB box
#define STAGE0 0x1000u
#define STAGE_BYTES 0xA000u  // A: 64 rows, B: 256 rows of 128 bytes
#define STAGE1 (STAGE0 + STAGE_BYTES)

// ---- mbarriers ----------------------------------------------------------------
static void tma_load(int parity_of_wait, int expect_extra, int copy_extra, int give_up, const char* name,
                     const char* want) {
    ShCta* cta = new_cta(128, 1);
    ShCtx t0 = at(cta, 0);
    sh_mbar_init(&t0, BAR, 1);
    sh_mbar_fence_init(&t0);
    sh_arrive(&t0, cta, BAR, 4096 + expect_extra);
    sh_load_into(&t0, cta, BOX, 4096 + copy_extra, 4096, BAR, 0, "a TMA load writes");
    for (uint32_t t = 0; t < 128 && !g_report.reported; ++t) {
        ShCtx c = at(cta, t);
        if (give_up)
            sh_wait_gave_up(&c, cta, BAR, parity_of_wait);
        else
            sh_wait_done(&c, BAR, parity_of_wait);
    }
    if (!g_report.reported && !give_up) sh_exit_audit(&g_report, cta);
    verdict(name, want);
    free(cta);
}

static void parity_minus1_late(void) {  // the wait comes before the producer arms the barrier
    ShCta* cta = new_cta(128, 1);
    ShCtx t0 = at(cta, 0), t5 = at(cta, 5);
    sh_mbar_init(&t0, BAR, 1);
    sh_wait_done(&t5, BAR, 1);
    sh_arrive(&t0, cta, BAR, 4096);
    verdict("B2_wait_before_the_expect_tx", "B2");
    free(cta);
}

static void empty_barrier_first_pass(void) {  // the ring's producer: the stage starts free
    ShCta* cta = new_cta(384, 1);
    ShCtx p = at(cta, 0);
    sh_mbar_init(&p, EMPTY, 256);
    sh_wait_done(&p, EMPTY, 1);
    for (uint32_t t = 128; t < 384; ++t) {
        ShCtx c = at(cta, t);
        sh_arrive(&c, cta, EMPTY, 0);
    }
    sh_wait_done(&p, EMPTY, 0);
    verdict("producer_phase_before_the_first", "none");
    ShCtx c = at(cta, 200);
    for (int k = 0; k < 255; ++k) sh_arrive(&c, cta, EMPTY, 0);  // one arrival short
    sh_wait_gave_up(&p, cta, EMPTY, 1);
    verdict("B4_an_arrival_missing", "B4");
    free(cta);
}

static void uninitialized(void) {
    ShCta* cta = new_cta(32, 1);
    ShCtx t0 = at(cta, 0);
    sh_arrive(&t0, cta, BAR, 0);
    verdict("B1_arrive_before_init", "B1");
    sh_wait_done(&t0, BAR, 0);
    verdict("B1_wait_before_init", "B1");
    free(cta);
}

// Two CTAs of a cluster: rank 1 arrives on (or copies into) rank 0's barrier.
static void cluster(int fence_init, int cluster_barrier, int last_barrier, const char* name,
                    const char* want) {
    ShCta* r0 = new_cta(128, 1);
    ShCta* r1 = new_cta(128, 2);
    r0->cluster_size = r1->cluster_size = 2;
    ShCtx a = at(r0, 0), b = at(r1, 0);
    sh_mbar_init(&a, BAR, 1);
    if (fence_init) sh_mbar_fence_init(&a);
    if (cluster_barrier)
        for (ShCtx* c : {&a, &b}) {
            sh_cluster_arrive(c);
            sh_cluster_wait(c);
        }
    sh_arrive(&a, r0, BAR, 4096);
    sh_load_into(&b, r0, BOX, 4096, 4096, BAR, 0, "a multicast TMA load writes");  // a multicast from rank 1
    if (!g_report.reported) sh_wait_done(&a, BAR, 0);
    if (last_barrier)
        for (ShCtx* c : {&a, &b}) {
            sh_cluster_arrive(c);
            sh_cluster_wait(c);
        }
    if (!g_report.reported) sh_exit_audit(&g_report, r0);
    verdict(name, want);
    free(r0);
    free(r1);
}

// ---- cp.async and the threads' own stores ------------------------------------------
static void cp_async_groups(int wait_n, int barrier, const char* name, const char* want) {
    ShCta* cta = new_cta(64, 1);
    for (uint32_t t = 0; t < 64; ++t) {  // two groups per thread, one 16-byte copy each
        ShCtx c = at(cta, t);
        sh_cp_async(&c, STAGE0 + 16 * t, 16);
        sh_cp_commit(&c);
        sh_cp_async(&c, STAGE1 + 16 * t, 16);
        sh_cp_commit(&c);
        sh_cp_wait(&c, (uint32_t)wait_n);
    }
    if (barrier)
        for (uint32_t t = 0; t < 64; ++t) {
            ShCtx c = at(cta, t);
            sh_syncthreads(&c);
        }
    for (uint32_t t = 0; t < 64 && !g_report.reported; ++t) {  // each reads its partner's first copy
        ShCtx c = at(cta, t);
        sh_read(&c, STAGE0 + 16 * (t ^ 32), 16);
    }
    verdict(name, want);
    free(cta);
}

static void stores(int barrier, const char* name, const char* want) {
    ShCta* cta = new_cta(64, 1);
    for (uint32_t t = 0; t < 64; ++t) {
        ShCtx c = at(cta, t);
        sh_wrote(&c, BOX + 16 * t, 16);
    }
    if (barrier)
        for (uint32_t t = 0; t < 64; ++t) {
            ShCtx c = at(cta, t);
            sh_syncthreads(&c);
        }
    for (uint32_t t = 0; t < 64 && !g_report.reported; ++t) {
        ShCtx c = at(cta, t);
        sh_read(&c, BOX + 16 * (t ^ 32), 16);
    }
    verdict(name, want);
    free(cta);
}

// ---- the async proxy: stores, reduces, loads over the threads' writes ----------------
// fence: 0 nobody fences, 1 every writing thread, 2 only thread 0 (the one that then issues the
// store or load: a fence after the barrier, in the issuing thread's branch, covers no other writer).
static void store_box(int fence, int reload_with_load, const char* name, const char* want) {
    ShCta* cta = new_cta(256, 1);
    for (uint32_t t = 0; t < 256; ++t) {
        ShCtx c = at(cta, t);
        sh_wrote(&c, BOX, 4096);
        if (fence == 1 || (fence == 2 && t == 0)) sh_fence_proxy_async(&c);
    }
    ShCtx t0 = at(cta, 0);
    if (reload_with_load) {
        sh_mbar_init(&t0, BAR, 1);
        sh_arrive(&t0, cta, BAR, 4096);
        sh_load_into(&t0, cta, BOX, 4096, 4096, BAR, 0, "a TMA load writes");
        if (!g_report.reported) sh_wait_done(&t0, BAR, 0);
    } else {
        sh_bulk_read(&t0, BOX, 4096, "a TMA store reads");
        sh_bulk_commit(&t0);
        sh_bulk_wait(&t0, 0);
    }
    if (!g_report.reported) sh_exit_audit(&g_report, cta);
    verdict(name, want);
    free(cta);
}

// Two boxes in turns (09's epilogue, 06's pipeline): box k % 2 is rewritten
// once the store of box k - 2 has read it, i.e. after wait_group.read 1.
static void store_ring(int read_wait, int end_wait, const char* name, const char* want) {
    ShCta* cta = new_cta(128, 1);
    for (uint32_t k = 0; k < 6 && !g_report.reported; ++k) {
        const uint32_t box = BOX + (k % 2) * 4096;
        ShCtx t0 = at(cta, 0);
        if (read_wait >= 0) sh_bulk_wait(&t0, (uint32_t)read_wait);
        for (uint32_t t = 0; t < 128 && !g_report.reported; ++t) {
            ShCtx c = at(cta, t);
            sh_wrote(&c, box, 4096);
            sh_fence_proxy_async(&c);
        }
        if (g_report.reported) break;
        sh_bulk_read(&t0, box, 4096, "a TMA store reads");
        sh_bulk_commit(&t0);
    }
    if (!g_report.reported && end_wait) {
        ShCtx t0 = at(cta, 0);
        sh_bulk_wait(&t0, 0);
    }
    if (!g_report.reported) sh_exit_audit(&g_report, cta);
    verdict(name, want);
    free(cta);
}

// ---- the ring with wgmma: a producer, a consumer warpgroup, stages handed back ----
// wait_n: the consumer's wgmma.wait_group before it hands stage j - 1 back;
// release_first: the hand-back comes before that wait (09_gemm/bugs/3.diff);
// both from the producer's second pass on, when it knows which barrier frees
// which stage (the first pass's refills would show the same mistake as S2).
static void mma_ring(int wait_n, int release_first, int fence, int layout, int operands_wait,
                     const char* name, const char* want) {
    ShCta* cta = new_cta(384, 1);
    const uint32_t full[2] = {BAR, BAR + 8}, empty[2] = {EMPTY + 8, EMPTY + 16};
    const uint32_t stage[2] = {STAGE0, STAGE1};
    ShCtx p = at(cta, 0), w = at(cta, 128);
    for (int s = 0; s < 2; ++s) {
        sh_mbar_init(&p, full[s], 1);
        sh_mbar_init(&p, empty[s], 1);
    }
    const ShProps map = props_128b(STAGE_BYTES);
    const unsigned long long sbo = 1024 >> 4, lay = (unsigned long long)layout << 62;
    for (uint32_t pos = 0; pos < 8 && !g_report.reported; ++pos) {
        const uint32_t s = pos % 2;
        if (pos >= 2) sh_wait_done(&p, empty[s], (pos / 2 - 1) & 1);  // the producer: stage s is free
        sh_arrive(&p, cta, full[s], STAGE_BYTES);
        sh_load_into(&p, cta, stage[s], STAGE_BYTES, STAGE_BYTES, full[s], map.swizzle, "a TMA load writes");
        if (g_report.reported) break;
        sh_wait_done(&w, full[s], (pos / 2) & 1);  // the consumer
        if (fence) sh_wg_fence(&w);
        const unsigned long long desc = (stage[s] >> 4) | sbo << 32 | lay;
        sh_mma(&w, desc, desc + (8192 >> 4), 64, 256);
        sh_wg_commit(&w);
        if (pos > 0) {  // the mistakes start once the producer has learned every stage (its second pass)
            const int early = release_first && pos >= 4;
            if (early) sh_arrive(&w, cta, empty[(pos - 1) % 2], 0);
            sh_wg_wait(&w, pos >= 4 ? (uint32_t)wait_n : 1u);
            if (!early) sh_arrive(&w, cta, empty[(pos - 1) % 2], 0);
        }
    }
    if (!g_report.reported) {
        if (operands_wait) sh_wg_wait(&w, 0);
        sh_wg_operands(&w);
    }
    verdict(name, want);
    free(cta);
}

// ---- tensor maps in global memory -------------------------------------------------
static void maps(void) {
    ShCta* cta = new_cta(32, 1);
    ShCtx t0 = at(cta, 0);
    ShGlobalMap* g = (ShGlobalMap*)calloc(1, sizeof(ShGlobalMap));
    g->addr = 0x7000;
    const ShProps p = props_128b(4096);
    // smem edit + cp_fenceproxy, acquire, a store through it, then a retarget
    sh_map_publish(&t0, g, &p);
    sh_map_acquire(&t0, g->addr, g, 0);
    if (sh_map_check_use(&t0, g, g->addr)) sh_map_note_use(&t0, g, 1, t0.cta->threads[0].bk_committed + 1, 0);
    sh_bulk_read(&t0, BOX, 4096, "a TMA store reads");
    sh_bulk_commit(&t0);
    verdict("map_used_after_acquire", "none");
    sh_map_publish(&t0, g, &p);  // no wait_group.read first
    verdict("M1_rewritten_under_a_store", "M1");
    sh_bulk_wait(&t0, 0);
    sh_map_publish(&t0, g, &p);
    verdict("map_rewritten_after_the_read", "none");
    sh_map_check_use(&t0, g, g->addr);  // version 3, acquired version 1
    verdict("M3_no_acquire_after_the_retarget", "M3");
    sh_map_acquire(&t0, g->addr, g, 0);
    sh_map_check_use(&t0, g, g->addr);
    verdict("map_acquired_again", "none");
    // the global path: edits in place, then the release
    sh_map_edit_global(&t0, g, &p);
    sh_map_edit_global(&t0, g, &p);
    sh_map_acquire(&t0, g->addr, g, 0);
    sh_map_check_use(&t0, g, g->addr);
    verdict("M2_edited_in_place_no_release", "M2");
    sh_map_release(&t0, g);
    sh_map_acquire(&t0, g->addr, g, 0);
    sh_map_check_use(&t0, g, g->addr);
    verdict("map_edited_released_acquired", "none");
    sh_map_edit_global(&t0, g, &p);  // the acquire before the release pairs with nothing
    sh_map_acquire(&t0, g->addr, g, 0);
    sh_map_release(&t0, g);
    sh_map_check_use(&t0, g, g->addr);
    verdict("M3_acquired_before_the_release", "M3");
    sh_map_acquire(&t0, g->addr, g, 0);
    sh_map_check_use(&t0, g, g->addr);
    verdict("map_acquired_after_the_release", "none");
    // a map the host wrote: acquire.sys
    sh_map_acquire(&t0, 0x9000, NULL, 0);
    sh_map_check_use(&t0, NULL, 0x9000);
    verdict("M3_host_map_acquired_at_gpu_scope", "M3");
    sh_map_acquire(&t0, 0x9000, NULL, 1);
    sh_map_check_use(&t0, NULL, 0x9000);
    verdict("host_map_acquired_at_sys_scope", "none");
    // a load through the map, in flight when it is rewritten
    sh_mbar_init(&t0, BAR, 1);
    sh_arrive(&t0, cta, BAR, 4096);
    sh_map_note_use(&t0, g, 2, 0, (uint32_t)(sh_bar_find(cta, BAR) - cta->bars));
    sh_load_into(&t0, cta, BOX, 4096, 4096, BAR, 0, "a TMA load writes");
    sh_map_publish(&t0, g, &p);
    verdict("M1_rewritten_under_a_load", "M1");
    free(g);
    free(cta);
}

int main(void) {
    tma_load(0, 0, 0, 0, "tma_load_kept", "none");
    tma_load(1, 0, 0, 0, "B2_parity_1_for_the_first_phase", "B2");
    parity_minus1_late();
    tma_load(0, 16, 0, 1, "B3_expect_16_more_gave_up", "B3");
    tma_load(0, 0, 16, 0, "B3_copies_bring_16_more", "B3");
    empty_barrier_first_pass();
    uninitialized();
    cluster(1, 1, 1, "cluster_kept", "none");
    cluster(0, 1, 1, "B1_peer_init_not_fenced", "B1");
    cluster(1, 0, 1, "B1_no_cluster_barrier_after_init", "B1");
    cluster(1, 1, 0, "C1_no_last_cluster_barrier", "C1");
    cp_async_groups(1, 1, "cp_async_kept", "none");
    cp_async_groups(2, 1, "A1_wait_group_leaves_it_pending", "A1");
    cp_async_groups(1, 0, "A2_no_barrier_after_the_waits", "A2");
    stores(1, "stores_then_barrier", "none");
    stores(0, "A3_read_before_the_barrier", "A3");
    store_box(1, 0, "store_after_fence", "none");
    store_box(0, 0, "S1_store_without_fence", "S1");
    store_box(0, 1, "S1_load_over_unfenced_writes", "S1");
    store_box(1, 1, "load_over_fenced_writes", "none");
    store_box(2, 0, "S1_only_the_storing_thread_fences", "S1");
    store_box(2, 1, "S1_only_the_loading_thread_fences", "S1");
    store_ring(1, 1, "store_ring_read_wait_1", "none");
    store_ring(2, 1, "S2_read_wait_2_rewrites_in_flight", "S2");
    store_ring(-1, 1, "S2_no_read_wait", "S2");
    store_ring(1, 0, "S3_ends_with_a_store_reading", "S3");
    mma_ring(1, 0, 1, 1, 1, "mma_ring_kept", "none");
    mma_ring(2, 0, 1, 1, 1, "P1_wait_group_2_before_handback", "P1");
    mma_ring(1, 1, 1, 1, 1, "P1_handback_before_the_wait", "P1");
    mma_ring(1, 0, 0, 1, 1, "W1_no_wgmma_fence", "W1");
    mma_ring(1, 0, 1, 2, 1, "W3_descriptor_says_64B", "W3");
    mma_ring(1, 0, 1, 1, 0, "W2_accumulators_before_wait_0", "W2");
    maps();
    printf("UNIT: %s (%d cases, %d wrong)\n", g_failed ? "FAIL" : "PASS", g_cases, g_failed);
    return g_failed ? 1 : 0;
}
