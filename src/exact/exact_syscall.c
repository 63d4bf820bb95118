/*
 * exact_syscall.c - memory a system call reads: the program's bytes handed
 * to the kernel (write(2)'s buffer, send(2)'s message).
 *
 * Valgrind's instrumentation sees the program's own loads, not the
 * kernel's: a buffer filled and written to a file every round looked like
 * stores overwritten before anyone read them (tests/e2e exact.sh
 * `exact_io_buffer`: 99.95% dead for 25%), and so did every output buffer
 * of a real program. The core reports what each system call reads before it runs
 * (the same hook memcheck checks definedness with); in dead-store mode
 * those bytes are loaded there, from the call's site. Silent stores and
 * silent loads pair the program's own accesses and compare their values,
 * which a kernel read does not change. What a system call writes (read(2)
 * into a buffer) stays unseen: a store it overwrites pairs with the
 * program's next access, as before.
 */
#include "exact.h"

#include "libvex_guest_amd64.h"
#include "pub_tool_machine.h"

static ULong guest_reg(ThreadId tid, PtrdiffT offset)
{
    ULong v = 0;
    VG_(get_shadow_regs_area)(tid, (UChar *)&v, 0, offset, sizeof v);
    return v;
}

static void on_pre_mem_read(CorePart part, ThreadId tid, const HChar *what, Addr addr, SizeT size)
{
    (void)what;
    if (part != Vg_CoreSysCall || size == 0 || exact_opts.mode != EXACT_DEAD_STORE)
        return;
    /* The core keeps the guest's pc just past the system call instruction
     * (syscall, int $0x80: 2 bytes): that instruction is the pair's trap. */
    Addr pc = VG_(get_IP)(tid) - 2;
    exact_on_kernel_read(exact_thread_of(tid), addr, size, pc, VG_(get_SP)(tid),
                         (Addr)guest_reg(tid, offsetof(VexGuestAMD64State, guest_RBP)),
                         (Addr)guest_reg(tid, offsetof(VexGuestAMD64State, guest_R13)));
}

void exact_syscall_init(void)
{
    VG_(track_pre_mem_read)(on_pre_mem_read);
}
