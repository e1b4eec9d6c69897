// 08_descriptor_update's own harness: the groups of the grouped copy (parts 2-6), the work items they
// are cut into, and the two pools they are copied between.
#pragma once
#include "03_tma_load/tensor_map.h"

// ===========================================================================
// Parts 2-6: a grouped copy
// ===========================================================================
// Group g is a rows_g x cols_g f32 matrix, rows ld_g elements apart, in a
// source pool, copied to the same place in a destination pool. Shapes differ
// from group to group, and few are multiples of the box (32 x 128 elements,
// 16 KiB): the loads fill what lies outside the group with zeros and the
// stores write only what lies inside, both by the group's OWN dims, so a
// map that kept another group's dims or address writes where the check sees it.
// Work items are runs of up to ITEM_BOXES boxes of one group, listed group
// by group; a persistent CTA takes the next item from a counter (consecutive
// items of one CTA are about a grid apart, so usually of different groups).
// One thread drives the copy as step 04's tma_copy does: loads run STAGES
// boxes ahead of the stores, each box is stored from the stage it landed in,
// and a stage is reloaded once wait_group.read 1 says the store before the
// newest has read it. The pipeline never drains between items: while the
// stores of one item still read their maps, the loads of the next item
// already run, through the CTA's OTHER pair of maps. So each CTA has two map
// pairs (source, destination) and retargets the one not in use when the
// group changes.
#define BOX_ROWS 32
#ifndef BOX_COLS
#define BOX_COLS 128
#endif
#define BOX_BYTES (BOX_ROWS * BOX_COLS * 4)
// 8 stages (128 KiB: one CTA per SM) beat 4 (three CTAs per SM) and 12 on the
// H200; items of 8 boxes beat 4 and 16; 4 boxes in flight per thread beat 1
// and 2 for the plain baseline (results/experiments/grouped_copy_tuning_NVIDIA_H200.txt).
#ifndef STAGES
#define STAGES 8
#endif
#define CROSS_STAGES 4  // cross_cta: 2 CTAs per group must fit at once, so less shared memory each
#ifndef ITEM_BOXES
#define ITEM_BOXES 8
#endif

typedef struct {
    uint64_t offset;  // elements from the pool's start (the same in both pools)
    uint32_t rows, cols, ld, boxes_c, boxes;
} Group;

typedef struct {
    uint32_t group, first_box, nboxes;
} Item;

enum { PATH_SMEM, PATH_GLOBAL, PATH_HOST_MAPS, PATH_LDG };

typedef struct {
    const float* src;
    float* dst;
    const Group* groups;
    const Item* items;
    uint32_t nitems;
    unsigned int* counter;       // the next item (dynamic: a CTA that finishes early takes more)
    CUtensorMap* ws;             // 4 maps per CTA (2 pairs of source, destination): the workspace
    const CUtensorMap* host_ws;  // PATH_HOST_MAPS: 2 maps per GROUP, written by the host
    int address_only;            // the array case: only the base address changes
} GroupedCopy;

// ---- Parts 2-6 (host): the groups, the copies, the check ---------------------
typedef struct {
    uint32_t ngroups, nitems;
    Group* groups;  // host
    Item* items;    // host
    size_t pool_words;
    uint64_t data_bytes;  // the groups' elements, read once and written once
} GroupSet;

// Shapes from a hash of (seed, g): rows in [max / 2, max], columns a multiple
// of 4 (rows of whole 16-byte chunks: a TMA store writes whole chunks) in
// [max / 2, max], 4 to 32 elements of row padding, and a gap of 64 elements
// between groups. same_shape (the array case): every group rows_max x cols_max
// with 16 elements of padding: only the base address differs.
static void make_groups(GroupSet* gs, uint32_t ngroups, uint32_t rows_max, uint32_t cols_max, uint32_t seed,
                        bool same_shape) {
    memset(gs, 0, sizeof *gs);
    gs->ngroups = ngroups;
    gs->groups = (Group*)xmalloc(ngroups * sizeof(Group), "the groups");
    uint64_t offset = 0;
    uint32_t nitems = 0;
    for (uint32_t g = 0; g < ngroups; ++g) {
        Group* gr = &gs->groups[g];
        const uint32_t h = seeded_word(seed ^ 0x6A09E667u, g);
        gr->rows = same_shape ? rows_max : rows_max / 2 + h % (rows_max / 2 + 1);
        gr->cols = same_shape ? cols_max : (cols_max / 2 + (h >> 12) % (cols_max / 2 + 1)) / 4 * 4;
        if (gr->cols == 0) gr->cols = 4;
        gr->ld = gr->cols + (same_shape ? 16 : 4 * (1 + (h >> 24) % 8));  // the array case: one stride too
        gr->offset = offset;
        gr->boxes_c = (gr->cols + BOX_COLS - 1) / BOX_COLS;
        gr->boxes = gr->boxes_c * ((gr->rows + BOX_ROWS - 1) / BOX_ROWS);
        offset += ((uint64_t)gr->rows * gr->ld + 63) / 64 * 64 + 64;
        nitems += (gr->boxes + ITEM_BOXES - 1) / ITEM_BOXES;
        gs->data_bytes += (uint64_t)gr->rows * gr->cols * 4;
    }
    gs->pool_words = offset;
    gs->nitems = nitems;
    gs->items = (Item*)xmalloc(nitems * sizeof(Item), "the items");
    uint32_t i = 0;
    for (uint32_t g = 0; g < ngroups; ++g)
        for (uint32_t b = 0; b < gs->groups[g].boxes; b += ITEM_BOXES) {
            const uint32_t n = gs->groups[g].boxes - b;
            gs->items[i++] = (Item){g, b, n < ITEM_BOXES ? n : ITEM_BOXES};
        }
}

typedef struct {
    const GroupSet* gs;
    float *src, *dst;
    uint32_t* want;  // host: the destination pool after a correct copy
    Group* groups_dev;
    Item* items_dev;
    unsigned int* counter;
    CUtensorMap *ws, *host_maps, *host_maps_pinned;
    CUtensorMap src_tmpl, dst_tmpl;
    int grid;
    size_t smem;
    cudaStream_t s;
} Copy;
