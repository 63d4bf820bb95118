/*
 * symbols.c - function, file and line of native code addresses, with
 * elfutils' libdwfl, including functions the compiler inlined.
 *
 * Normal context only (profile writing). One Dwfl session per process,
 * guarded by a mutex, rebuilt when an address falls outside every module it
 * knows (a library loaded after the last build). libdw keeps each module's
 * ELF file open: those descriptors are close-on-exec and counted in wasp's
 * descriptor budget. A forked child starts with no session and a fresh
 * lock: the parent's may have been held by a thread that did not come
 * along.
 */
#include <dwarf.h>
#include <fcntl.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "msan_scope.h"
#include "native.h"

char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status) __attribute__((weak));

static pthread_mutex_t symbols_lock = PTHREAD_MUTEX_INITIALIZER;
static Dwfl *session;
static int session_fds;   /* ELF descriptors the session holds, in the budget */

/* Only the DWARF inside each binary: separate debug files (the -dbg and
 * dbgsym packages) are compressed, and inflating libc's costs 20-40 ms at
 * every process exit, for frames (libc start-up) nobody fixes. */
static int no_separate_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                                 const char *file_name, const char *debuglink_file,
                                 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)mod; (void)userdata; (void)modname; (void)base; (void)file_name;
    (void)debuglink_file; (void)debuglink_crc; (void)debuginfo_file_name;
    return -1;
}

/* libdw's own finder, with its descriptor made close-on-exec (it would
 * leak into every program exec'd) and counted. Over budget, the module
 * goes unnamed rather than the program short of descriptors. */
static int find_elf_cloexec(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                            char **file_name, Elf **elfp)
{
    int fd = dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
    if (fd < 0)
        return fd;
    if (engine_fd_budget_take(1) < 0) {
        if (*elfp) {
            elf_end(*elfp);
            *elfp = NULL;
        }
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    session_fds++;
    return fd;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf_cloexec,
    .find_debuginfo = no_separate_debuginfo,
};

static Dwfl *session_open(void)
{
    Dwfl *d = dwfl_begin(&callbacks);
    if (!d)
        return NULL;
    dwfl_report_begin(d);
    if (dwfl_linux_proc_report(d, getpid()) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
        dwfl_end(d);
        return NULL;
    }
    return d;
}

static Dwfl_Module *module_of(uint64_t addr)
{
    if (!session)
        session = session_open();
    Dwfl_Module *m = session ? dwfl_addrmodule(session, addr) : NULL;
    if (!m) {
        /* A new session first: after a chroot none can be made (no /proc,
         * no library paths), and the old one still names what it knew. */
        int old_fds = session_fds;
        session_fds = 0;
        Dwfl *fresh = session_open();
        if (!fresh) {
            session_fds = old_fds;
            return NULL;
        }
        if (session)
            dwfl_end(session);
        engine_fd_budget_give(old_fds);
        session = fresh;
        m = dwfl_addrmodule(session, addr);
    }
    return m;
}

static int load_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr base, void *arg)
{
    Dwarf_Addr bias;
    (void)userdata; (void)name; (void)base; (void)arg;
    dwfl_module_getdwarf(m, &bias);   /* opens its file, reads its debug info */
    return DWARF_CB_OK;
}

void native_symbols_prepare(void)
{
    msan_checks(0);
    pthread_mutex_lock(&symbols_lock);
    if (!session)
        session = session_open();
    if (session)
        dwfl_getmodules(session, load_module, NULL, 0);
    pthread_mutex_unlock(&symbols_lock);
    msan_checks(1);
}

/* A session of one unloaded object (unloads.c), placed where it was, its
 * file opened close-on-exec and counted. NULL when it cannot be read. */
static Dwfl *unloaded_session(const char *path, uint64_t base)
{
    if (engine_fd_budget_take(1) < 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Dwfl *d = fd >= 0 ? dwfl_begin(&callbacks) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        engine_fd_budget_give(1);
        return NULL;
    }
    const char *name = strrchr(path, '/');
    dwfl_report_begin(d);
    /* On success libdw owns fd; the base is the load bias, as dl_iterate_phdr gives it. */
    if (!dwfl_report_elf(d, name ? name + 1 : path, path, fd, base, true) ||
        dwfl_report_end(d, NULL, NULL) != 0) {
        dwfl_end(d);
        engine_fd_budget_give(1);
        return NULL;
    }
    return d;
}

/* Sessions of unloaded objects, by their index in unloads.c; an object
 * whose file could not be read is tried once. */
static Dwfl *kept[UNLOADS_MAX];
static uint8_t kept_tried[UNLOADS_MAX];

/* The module of addr among the objects unloaded after a frame of generation
 * gen was captured, or NULL when its code was still mapped at the end. */
static Dwfl_Module *unloaded_module_of(uint64_t addr, uint64_t gen)
{
    const char *path;
    uint64_t base;
    int i = unloads_find(addr, gen, &path, &base);
    if (i < 0)
        return NULL;
    if (!kept_tried[i]) {
        kept_tried[i] = 1;
        kept[i] = unloaded_session(path, base);
    }
    return kept[i] ? dwfl_addrmodule(kept[i], addr) : NULL;
}

/* The instruction at pc of an unloaded module, from its file: its
 * addresses may hold other code now, or none. */
static void unloaded_instruction(Dwfl_Module *m, uint64_t pc, char *text, size_t len)
{
    GElf_Addr bias;
    size_t size, n, insn_len;
    Elf *elf = dwfl_module_getelf(m, &bias);
    const char *raw = elf ? elf_rawfile(elf, &size) : NULL;
    if (!raw || elf_getphdrnum(elf, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        uint64_t at = pc - bias;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || at < ph.p_vaddr ||
            at >= ph.p_vaddr + ph.p_filesz)
            continue;
        uint64_t off = ph.p_offset + (at - ph.p_vaddr);
        if (off < size)
            decode_format_bytes((const uint8_t *)raw + off, size - off < 16 ? size - off : 16, pc, 0,
                                text, len, &insn_len);
        return;
    }
}

static char *demangled(const char *name)
{
    int status = -1;
    char *d = NULL;
    if (__cxa_demangle && name[0] == '_' && name[1] == 'Z')
        d = __cxa_demangle(name, NULL, NULL, &status);
    if (d && status == 0)
        return d;
    free(d);
    return strdup(name);
}

/* The compile unit holding addr. libdw finds it through .debug_aranges
 * and trusts what it finds: a Go binary lists only its cgo C units there,
 * so every Go pc fell in the nearest C unit (main.kernel named
 * gcc_mmap.c:37). A unit that does not hold the pc is not taken: then
 * every unit is asked. */
static Dwarf_Die *unit_of(Dwfl_Module *m, uint64_t addr, Dwarf_Die *storage, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(m, addr, bias);
    if (!cu || dwarf_haspc(cu, addr - *bias) > 0)
        return cu;
    Dwarf *dw = dwfl_module_getdwarf(m, bias);
    size_t header;
    for (Dwarf_Off off = 0, next; dw && dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0;
         off = next)
        if (dwarf_offdie(dw, off + header, storage) && dwarf_haspc(storage, addr - *bias) > 0)
            return storage;
    return NULL;
}

/* What DWARF says of addr: its unit, and the nest of scopes holding it,
 * innermost first (none: n 0). Looked up once per frame: a Go binary's
 * units are found by walking them all (unit_of). */
typedef struct addr_dwarf {
    Dwarf_Die unit, *cu;
    Dwarf_Addr bias;
    Dwarf_Die *scopes;
    int n;
} addr_dwarf;

static void addr_dwarf_find(Dwfl_Module *m, uint64_t addr, addr_dwarf *d)
{
    d->scopes = NULL;
    d->cu = unit_of(m, addr, &d->unit, &d->bias);
    d->n = d->cu ? dwarf_getscopes(d->cu, addr - d->bias, &d->scopes) : 0;
    if (d->n > 0) {
        /* That chain skips from the innermost scope to the unit; the
         * scopes holding that one's DIE are the whole nest. */
        Dwarf_Die inner = d->scopes[0];
        free(d->scopes);
        d->scopes = NULL;
        d->n = dwarf_getscopes_die(&inner, &d->scopes);
    }
    if (d->n < 0)
        d->n = 0;
}

/* The innermost function containing addr per DWARF: an inlined callee
 * when the compiler inlined one here, so that name and line agree. */
static char *inlined_function(addr_dwarf *d)
{
    for (int i = 0; i < d->n; i++) {
        if (dwarf_tag(&d->scopes[i]) == DW_TAG_subprogram)
            break;  /* not inlined: the ELF symbol says it better (qualified C++ names) */
        if (dwarf_tag(&d->scopes[i]) == DW_TAG_inlined_subroutine) {
            Dwarf_Attribute attr;
            const char *s = dwarf_formstring(dwarf_attr_integrate(&d->scopes[i], DW_AT_name, &attr));
            return s ? strdup(s) : NULL;
        }
    }
    return NULL;
}

/* The functions that inlined the one named at addr, each at the line
 * where it did, innermost first: addr's scopes hold an inlined subroutine
 * per level (its name, and its call site in the next one out), up to the
 * function the code is in (named by its symbol, as any other frame). A
 * C++ store in an inlined setter, called from an inlined loop in main,
 * showed only the setter, with no caller in the program, and the line to
 * fix is the loop's. Fills out[0..max) (module and pc set by the caller);
 * returns how many. */
static int inlining_callers(Dwfl_Module *m, uint64_t addr, addr_dwarf *d, prof_frame *out, int max)
{
    Dwarf_Die *scopes = d->scopes;
    Dwarf_Files *files = NULL;
    int n = d->n, k = 0;
    if (n > 0 && dwarf_getsrcfiles(d->cu, &files, NULL) != 0)
        files = NULL;
    for (int i = 0; i < n && k < max; i++) {
        int j = i + 1, tag;
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        while (j < n && (tag = dwarf_tag(&scopes[j])) != DW_TAG_inlined_subroutine &&
               tag != DW_TAG_subprogram)
            j++;
        if (j >= n)
            break;
        Dwarf_Attribute attr;
        Dwarf_Word call_file = 0, call_line = 0;
        const char *file = NULL, *name = NULL;
        int outermost = dwarf_tag(&scopes[j]) == DW_TAG_subprogram;
        if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &call_file) == 0)
            file = dwarf_filesrc(files, call_file, NULL, NULL);
        dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &call_line);
        if (outermost)
            name = dwfl_module_addrname(m, addr);
        if (!name)   /* an inlined function, or a symbol table without it */
            name = dwarf_formstring(dwarf_attr_integrate(&scopes[j], DW_AT_name, &attr));
        prof_frame *f = &out[k++];
        f->function = name ? demangled(name) : strdup("[inlined]");
        const char *slash = file ? strrchr(file, '/') : NULL;
        f->file = strdup(slash ? slash + 1 : file ? file : "");
        f->line = (uint32_t)call_line;
        if (outermost)
            break;
    }
    return k;
}

static char *function_name(Dwfl_Module *m, uint64_t addr, addr_dwarf *d)
{
    char *name = inlined_function(d);
    if (name)
        return name;
    const char *sym = dwfl_module_addrname(m, addr);
    if (sym)
        return demangled(sym);
    return NULL;
}

static void source_line(uint64_t addr, addr_dwarf *d, prof_frame *out)
{
    Dwarf_Line *line = d->cu ? dwarf_getsrc_die(d->cu, addr - d->bias) : NULL;
    int lineno = 0;
    const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
    if (file) {
        const char *slash = strrchr(file, '/');
        dwarf_lineno(line, &lineno);
        out->file = strdup(slash ? slash + 1 : file);
        out->line = lineno > 0 ? (uint32_t)lineno : 0;
    }
}

static char *module_path(Dwfl_Module *m)
{
    const char *path = NULL;
    dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &path, NULL);
    return strdup(path ? path : "");
}

/* "[libc.so.6+0x2724a]": stable across processes (unlike the address under
 * ASLR), so the same unnamed frame coalesces in reports. */
static char *unnamed_function(Dwfl_Module *m, uint64_t pc, const char *path)
{
    Dwarf_Addr low = 0;
    char text[300];
    const char *base = strrchr(path, '/');
    dwfl_module_info(m, NULL, &low, NULL, NULL, NULL, NULL, NULL);
    snprintf(text, sizeof(text), "[%s+0x%" PRIx64 "]", base ? base + 1 : path, pc - low);
    return strdup(text);
}

int native_symbolize(frame_key f, int leaf, prof_frame *out, int max)
{
    /* A caller's frame holds a return address: its call is the byte before. */
    uint64_t addr = leaf ? f.id : f.id - 1;
    char text[160];
    int n = 1;

    out->pc = f.id;
    text[0] = '\0';
    pthread_mutex_lock(&symbols_lock);
    Dwfl_Module *m = unloaded_module_of(addr, FRAME_AUX_DATA(f.aux));
    if (m && leaf)
        unloaded_instruction(m, f.id, text, sizeof(text));
    int unloaded = m != NULL;
    if (!m)
        m = module_of(addr);
    if (m) {
        addr_dwarf d;
        addr_dwarf_find(m, addr, &d);
        out->function = function_name(m, addr, &d);
        source_line(addr, &d, out);
        out->module = module_path(m);
        if (!out->function)
            out->function = unnamed_function(m, f.id, out->module);
        n += inlining_callers(m, addr, &d, out + 1, max - 1);
        free(d.scopes);
    }
    pthread_mutex_unlock(&symbols_lock);
    if (!out->function) {
        snprintf(text, sizeof(text), "[0x%" PRIx64 "]", f.id);
        out->function = strdup(text);
    }
    if (!out->file)
        out->file = strdup("");
    if (!out->module)
        out->module = strdup("");
    if (leaf && !unloaded)
        decode_format(f.id, 0, text, sizeof(text));
    out->instruction = strdup(text);
    for (int i = 1; i < n; i++) {
        out[i].pc = f.id;
        out[i].module = strdup(out->module);
        out[i].instruction = strdup("");
    }
    return n;
}

int native_function_symbols(uint64_t pc, uint64_t *lo, uint64_t *hi,
                            void (*each)(uint64_t start, uint64_t size, void *arg), void *arg)
{
    Dwarf_Addr low = 0, high = 0;
    msan_checks(0);
    pthread_mutex_lock(&symbols_lock);
    Dwfl_Module *m = module_of(pc);
    int n = m ? dwfl_module_getsymtab(m) : -1;
    if (m)
        dwfl_module_info(m, NULL, &low, &high, NULL, NULL, NULL, NULL);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        /* A function defined here: not an import, not an ifunc (its
         * address is the resolver's). */
        if (dwfl_module_getsym_info(m, i, &sym, &addr, &shndx, NULL, NULL) &&
            GELF_ST_TYPE(sym.st_info) == STT_FUNC && shndx != SHN_UNDEF && shndx != (GElf_Word)-1 &&
            addr >= low && addr < high)
            each(addr, sym.st_size, arg);
    }
    pthread_mutex_unlock(&symbols_lock);
    msan_checks(1);
    *lo = low;
    *hi = high;
    return m ? 0 : -1;
}

void native_symbols_after_fork_child(void)
{
    pthread_mutex_init(&symbols_lock, NULL);
    session = NULL;   /* the parent's, possibly half-built: left alone */
    session_fds = 0;
    memset(kept, 0, sizeof(kept));
    memset(kept_tried, 0, sizeof(kept_tried));
    unloads_after_fork_child();
}
