/*
 * fuzz_decode.c - libFuzzer target: the decoder's access extraction
 * (decode_access_bytes, the pure core of what the signal handler runs on
 * every sample and trap) and the instruction text of the report. The
 * first 8 * NGREG bytes are the registers, the next byte the pre/post
 * state, the rest the code.
 */
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "decode.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return decode_init();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    greg_t regs[NGREG];
    if (size < sizeof regs + 2) return 0;
    memcpy(regs, data, sizeof regs);
    int post = data[sizeof regs] & 1;
    const uint8_t *code = data + sizeof regs + 1;
    size_t len = size - sizeof regs - 1;
    mem_access a;
    char text[128];
    uint64_t pc = (uint64_t)regs[REG_RIP];
    decode_access_bytes(code, len, pc, regs, (uint64_t)regs[REG_R8], (uint64_t)regs[REG_R9], post, &a);
    size_t insn_len;
    decode_format_bytes(code, len, pc, post, text, sizeof text, &insn_len);
    return 0;
}
