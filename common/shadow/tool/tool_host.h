// tool_host.h: the host library's logic that needs no GPU and no Sanitizer
// API, kept apart so that tests/unit_shadow_tool.c runs it on the CPU: which
// modules are the program's, what one copy through a tensor map moves, where
// a patched pc is in the source, and the report's one line.
#pragma once

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shadow/state.h"

// An ELF64 cubin's section headers (and their count), or NULL if the bytes
// are no such ELF or its table lies outside them.
static inline const Elf64_Shdr* tool_sections(const char* cubin, size_t bytes, unsigned* n) {
    const Elf64_Ehdr* e = (const Elf64_Ehdr*)cubin;
    if (!cubin || bytes < sizeof *e || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
        e->e_ident[EI_CLASS] != ELFCLASS64)
        return NULL;
    if (e->e_shoff > bytes || (bytes - e->e_shoff) / sizeof(Elf64_Shdr) < e->e_shnum) return NULL;
    *n = e->e_shnum;
    return (const Elf64_Shdr*)(cubin + e->e_shoff);
}

// Whether the string at offset `at` of the cubin is `name`, whole.
static inline int tool_name_is(const char* cubin, size_t bytes, size_t at, const char* name) {
    const size_t len = strlen(name);
    return at < bytes && bytes - at > len && !memcmp(cubin + at, name, len + 1);
}

// Whether an ELF cubin has a section of this name. A module built with
// -lineinfo (or -G) has .debug_line: the Makefile builds every step, twin,
// lab and experiment so, and the libraries' cubins (cuBLAS) have none: that is
// how the tool tells the program's modules, which it checks, from theirs.
static inline int tool_has_section(const char* cubin, size_t bytes, const char* name) {
    unsigned n = 0;
    const Elf64_Shdr* sh = tool_sections(cubin, bytes, &n);
    const unsigned strings = sh ? ((const Elf64_Ehdr*)cubin)->e_shstrndx : 0;
    if (!sh || strings >= n) return 0;
    for (unsigned i = 0; i < n; ++i)
        if (tool_name_is(cubin, bytes, sh[strings].sh_offset + sh[i].sh_name, name)) return 1;
    return 0;
}

// Whether an ELF cubin defines a symbol of this name (its symbol tables): a
// module built with the wrappers' hooks defines g_shadow_state. Read from the
// cubin the driver hands over, so no driver call is needed to know it.
static inline int tool_has_symbol(const char* cubin, size_t bytes, const char* name) {
    unsigned n = 0;
    const Elf64_Shdr* sh = tool_sections(cubin, bytes, &n);
    for (unsigned i = 0; sh && i < n; ++i) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= n) continue;
        if (sh[i].sh_offset > bytes || sh[i].sh_size > bytes - sh[i].sh_offset) continue;
        const Elf64_Sym* sym = (const Elf64_Sym*)(cubin + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; ++k)
            if (sym[k].st_shndx != SHN_UNDEF &&
                tool_name_is(cubin, bytes, sh[sh[i].sh_link].sh_offset + sym[k].st_name, name))
                return 1;
    }
    return 0;
}

// Bytes per element of a CUtensorMapDataType (0..12), 0 for the packed
// sub-byte types (the checker then does not know the map's sizes).
static inline unsigned tool_elem_bytes(int dtype) {
    static const unsigned bytes[13] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    return dtype >= 0 && dtype < 13 ? bytes[dtype] : 0u;
}

// What one copy through a map moves, from cuTensorMapEncodeTiled's arguments
// (the tool sees every call): 1 if known.
static inline int tool_props_of_encode(int dtype, unsigned rank, const unsigned* box, const unsigned* estride,
                                       int swizzle, ShProps* p) {
    memset(p, 0, sizeof *p);
    p->elem_bytes = tool_elem_bytes(dtype);
    if (!p->elem_bytes || rank < 1 || rank > 5) return 0;
    p->known = 1;
    p->rank = rank;
    p->swizzle = (uint32_t)swizzle;
    for (unsigned d = 0; d < 5; ++d) {
        p->box[d] = d < rank ? box[d] : 1u;
        p->estride[d] = d < rank ? estride[d] : 1u;
    }
    sh_props_sizes(p);
    return 1;
}

// Where an instruction is in the source, from `nvdisasm -gi` of its cubin:
// the innermost location (a wrapper header, when the instruction is a
// wrapper's) and the outermost (the line of the kernel that called it).
typedef struct {
    char inner_file[160], outer_file[160];
    int inner_line, outer_line;
} ToolLine;

static inline const char* tool_base(const char* path) {
    const char* b = strrchr(path, '/');
    return b ? b + 1 : path;
}

// One `//## File "A", line N inlined at "B", line M ...` comment: A:N innermost, the last one outermost.
static inline int tool_parse_file_line(const char* s, ToolLine* out) {
    const char* eol = strchr(s, '\n');
    if (!eol) eol = s + strlen(s);
    int found = 0;
    for (const char* p = strchr(s, '"'); p && p < eol;) {
        const char* end = (const char*)memchr(p + 1, '"', (size_t)(eol - p - 1));
        const char* ln = end ? strstr(end, ", line ") : NULL;
        if (!end || !ln || ln >= eol) break;
        char file[160];
        const size_t n = (size_t)(end - p - 1) < sizeof file - 1 ? (size_t)(end - p - 1) : sizeof file - 1;
        memcpy(file, p + 1, n);
        file[n] = '\0';
        const int line = atoi(ln + 7);
        if (!found) {
            snprintf(out->inner_file, sizeof out->inner_file, "%s", tool_base(file));
            out->inner_line = line;
        }
        snprintf(out->outer_file, sizeof out->outer_file, "%s", tool_base(file));
        out->outer_line = line;
        found = 1;
        p = (const char*)memchr(ln, '"', (size_t)(eol - ln));
    }
    return found;
}

// The line of the instruction at `offset` of `function` (mangled) in `disasm`; 1 if found.
static inline int tool_line_at(const char* disasm, const char* function, unsigned long long offset,
                               ToolLine* out) {
    char header[600], at[24];
    snprintf(header, sizeof header, ".section\t.text.%s,", function);
    const char* f = strstr(disasm, header);
    if (!f) return 0;
    snprintf(at, sizeof at, "/*%04llx*/", offset);
    const char* next = strstr(f + 1, ".section\t.text.");
    ToolLine cur;
    memset(&cur, 0, sizeof cur);
    int have = 0, in_group = 0;
    for (const char* line = f; line && *line && (!next || line < next); line = strchr(line, '\n')) {
        line += *line == '\n';
        if (!strncmp(line, "\t//## File", 10)) {
            if (!in_group)
                have = tool_parse_file_line(line, &cur);  // a group's first names the inlining chain
            in_group = 1;
            continue;
        }
        in_group = 0;
        const char* eol = strchr(line, '\n');
        const char* slash = strstr(line, "/*");
        if (slash && (!eol || slash < eol) && !strncmp(slash, at, strlen(at))) {
            if (!have) return 0;
            *out = cur;
            return 1;
        }
    }
    return 0;
}

// "name" from a demangled "void name<args>(params)": the kernel's name as
// its source spells it (__func__), without return type, template arguments
// or parameters.
static inline void tool_short_name(const char* demangled, char* out, size_t cap) {
    const char* end = demangled + strcspn(demangled, "<(");
    const char* start = demangled;
    for (const char* p = demangled; p < end; ++p)  // the return type ends at the last space before the name
        if (*p == ' ') start = p + 1;
    const size_t n = (size_t)(end - start) < cap - 1 ? (size_t)(end - start) : cap - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

// The report's one line, as the shadow build printed it under a failing
// check line (indented, so tools/bugs.py's pattern reads both): the rule,
// what broke it, the block and thread, and where ("kernel (file:line)").
static inline void tool_format_report(const ShReport* r, const char* where, char* out, size_t cap) {
    static const char* const ids[] = {"",
#define TOOL_RULE_ID(id, name, rule) #id " " name,
                                      SHADOW_RULES(TOOL_RULE_ID)
#undef TOOL_RULE_ID
    };
    snprintf(out, cap, "       shadow: %s: %s; block (%u,%u,%u) thread %u, %s",
             r->rule < SH_NUM_RULES ? ids[r->rule] : "?", r->text, r->block[0], r->block[1], r->block[2],
             r->thread, where);
}
