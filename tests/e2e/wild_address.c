/*
 * wild_address.c - code that makes the sampler recompute a wrong address
 * (wasp e2e test: a wrong address must never crash the program).
 *
 * victim() is a loop whose one store, "mov %rax,(%r8)", is followed by a
 * straight run of ALU instructions. enter_middle() sets r8 to an unmapped
 * address and jumps into that run from outside victim, so the store never
 * runs with that r8; then the run restores r8 and victim returns. A sample
 * that lands in the run looks back along victim's straight-line code
 * (it cannot see a jump from another function), finds the store, and
 * recomputes its address from r8: the unmapped one. wasp must read it
 * safely (drop.unreadable), never fault. The program exits 0 when all
 * went well.
 *
 * Usage: wild_address [SCALE]
 */
#include <stdio.h>
#include <stdlib.h>

void victim(long *buf, long n);
void enter_middle(long *buf, long n, unsigned long bad);

__asm__(
    ".text\n"
    ".globl victim\n"
    ".type victim,@function\n"
    "victim:\n"
    "    .cfi_startproc\n"
    "    mov %rdi, %r8\n"
    ".Lvictim_loop:\n"
    "    mov %rax, (%r8)\n"
    ".globl victim_middle\n"
    "victim_middle:\n"
    "    add $1, %rax\n    add $3, %rcx\n    xor %rax, %rcx\n    add $5, %rax\n"
    "    add $1, %rax\n    add $3, %rcx\n    xor %rax, %rcx\n    add $5, %rax\n"
    "    add $1, %rax\n    add $3, %rcx\n    xor %rax, %rcx\n    add $5, %rax\n"
    "    add $1, %rax\n    add $3, %rcx\n    xor %rax, %rcx\n    add $5, %rax\n"
    "    add $1, %rax\n    add $3, %rcx\n    xor %rax, %rcx\n    add $5, %rax\n"
    "    mov %rdi, %r8\n"
    "    dec %rsi\n"
    "    jg .Lvictim_loop\n"
    "    ret\n"
    "    .cfi_endproc\n"
    ".size victim, .-victim\n"
    ".globl enter_middle\n"
    ".type enter_middle,@function\n"
    "enter_middle:\n"
    "    .cfi_startproc\n"
    "    mov %rdx, %r8\n"
    "    jmp victim_middle\n"
    "    .cfi_endproc\n"
    ".size enter_middle, .-enter_middle\n");

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long calls = (long)(30000000 * scale);
    long *buf = calloc(64, sizeof(long));
    if (!buf)
        return 1;
    for (long i = 0; i < calls; i++) {
        enter_middle(buf, 1, 0x1000);   /* page 1: never mapped */
        victim(buf, 2);
    }
    printf("wild_address: %ld calls survived\n", calls);
    free(buf);
    return 0;
}
