// The protocol checker's tool, its host logic on the CPU (common/shadow/tool/tool_host.h):
// which modules it checks (a cubin with line info), where a patched pc is in the source
// (nvdisasm -gi's comments), what one copy through a tensor map moves (cuTensorMapEncodeTiled's
// arguments), a kernel's name and the report line. The cubins come from tests/test_shadow.py
// (SHADOW_UNIT_CUBINS: one built with -lineinfo and a g_shadow_state, one without either); the report line is
// printed for it to match against tools/bugs.py's pattern.
#include <stdlib.h>

#include "common/shadow/tool/tool_host.h"
#include "tests/unit_expect.h"

static char* read_file(const char* path, size_t* bytes) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *bytes = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char* data = (char*)malloc(*bytes);
    if (fread(data, 1, *bytes, f) != *bytes) *bytes = 0;
    fclose(f);
    return data;
}

// What nvdisasm -gi prints: a function's section, comment groups (the first names the
// inlining chain), instructions; then the next function.
static const char kDisasm[] =
    "\t.section\t.text._Z4copyPf,\"ax\",@progbits\n"
    "_Z4copyPf:\n"
    "\t//## File \"/src/04_tma_store/tma_store.cu\", line 40\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "\t//## File \"/src/03_tma_load/mbarrier.cuh\", line 87 inlined at \"/src/04_tma_store/tma_store.cu\", "
    "line 53\n"
    "\t//## File \"/src/04_tma_store/tma_store.cu\", line 53\n"
    "        /*0010*/                   SYNCS.ARRIVE.TRANS64 RZ, [UR4], R2 ;\n"
    "        /*0020*/                   NOP ;\n"
    "\t.section\t.text._Z5otherv,\"ax\",@progbits\n"
    "\t//## File \"/src/x.cu\", line 9\n"
    "        /*0010*/                   EXIT ;\n";

int main(void) {
    const char* cubins = getenv("SHADOW_UNIT_CUBINS");  // "with_lineinfo:without"
    char with_path[512] = "", without_path[512] = "";
    if (cubins) sscanf(cubins, "%511[^:]:%511s", with_path, without_path);
    size_t wb = 0, nb = 0;
    char* with = read_file(with_path, &wb);
    char* without = read_file(without_path, &nb);
    EXPECT("a cubin built with -lineinfo is the program's: it has .debug_line",
           with && tool_has_section(with, wb, ".debug_line"));
    EXPECT("a cubin built without it is a library's",
           without && !tool_has_section(without, nb, ".debug_line"));
    EXPECT("a section of another name is not taken for it",
           with && !tool_has_section(with, wb, ".debug_lin"));
    EXPECT("bytes that are no ELF are no cubin", !tool_has_section("not an elf at all", 17, ".debug_line"));
    EXPECT("a module built with the hooks defines g_shadow_state",
           with && tool_has_symbol(with, wb, "g_shadow_state"));
    EXPECT("one built without them does not", without && !tool_has_symbol(without, nb, "g_shadow_state"));
    EXPECT("a symbol's name is matched whole", with && !tool_has_symbol(with, wb, "g_shadow_stat"));
    EXPECT("bytes that are no ELF define nothing",
           !tool_has_symbol("not an elf at all", 17, "g_shadow_state"));

    ToolLine l;
    memset(&l, 0, sizeof l);
    EXPECT("an inlined instruction: the wrapper's line inside, the kernel's outside",
           tool_line_at(kDisasm, "_Z4copyPf", 0x10, &l) && !strcmp(l.inner_file, "mbarrier.cuh") &&
               l.inner_line == 87 && !strcmp(l.outer_file, "tma_store.cu") && l.outer_line == 53);
    EXPECT("an instruction with no comment of its own has the last one before it",
           tool_line_at(kDisasm, "_Z4copyPf", 0x20, &l) && l.outer_line == 53);
    EXPECT("a kernel's own line", tool_line_at(kDisasm, "_Z4copyPf", 0x0, &l) && l.outer_line == 40 &&
                                      !strcmp(l.inner_file, "tma_store.cu"));
    EXPECT("an offset is looked for in its own function only",
           tool_line_at(kDisasm, "_Z5otherv", 0x10, &l) && l.outer_line == 9);
    EXPECT("a function that is not there", !tool_line_at(kDisasm, "_Z4nonev", 0x10, &l));

    ShProps p;
    const unsigned box[2] = {16, 16}, dense[2] = {1, 1}, strided[2] = {1, 2};
    EXPECT("a 16 x 16 box of floats: one load brings 1024 bytes",
           tool_props_of_encode(7, 2, box, dense, 3, &p) && p.load_bytes == 1024 && p.box_bytes == 1024 &&
               p.swizzle == 3 && p.elem_bytes == 4);
    EXPECT("element stride 2 in rows: half the rows arrive",
           tool_props_of_encode(7, 2, box, strided, 0, &p) && p.load_bytes == 512 && p.box_bytes == 1024);
    EXPECT("bf16: 2 bytes an element", tool_props_of_encode(9, 2, box, dense, 0, &p) && p.load_bytes == 512);
    EXPECT("a packed sub-byte type: sizes unknown", !tool_props_of_encode(13, 2, box, dense, 0, &p));

    char name[64];
    tool_short_name("void copy_ring<true>(CUtensorMap_st, unsigned int const*)", name, sizeof name);
    EXPECT("a kernel's name without return type, template arguments nor parameters",
           !strcmp(name, "copy_ring"));
    tool_short_name("add_one", name, sizeof name);
    EXPECT("a plain name stays", !strcmp(name, "add_one"));

    ShReport r;
    memset(&r, 0, sizeof r);
    r.rule = SH_S1;
    r.thread = 3;
    r.block[0] = 1;
    snprintf(r.text, sizeof r.text, "a TMA store reads shared [0x480, 0x4480)");
    char line[1500];
    tool_format_report(&r, "add_one (tma_store.cu:53, in tma_store.cuh:44)", line, sizeof line);
    printf("report %s\n", line);
    free(with);
    free(without);
    return UNIT_RESULT();
}
