/*
 * code_image.h - a function's instructions decoded once and kept, for the
 * sweeps that find instruction boundaries and regions (decode_sweep.c).
 *
 * A sweep decodes a function from its start, the one boundary it trusts,
 * at every pc the caches have not seen: in an interpreter's dispatch loop
 * (CPython's _PyEval_EvalFrameDefault: 43 KB, ~10,000 instructions) that
 * was ~0.7 ms of Zydis a sample. The image keeps what a sweep reads of
 * each instruction (length, category, branch displacement) in 4 bytes, so
 * later sweeps read it instead of decoding.
 *
 * An image is of code as one identity names it (code_bounds.code_id,
 * engine.h): a loaded object's text, or one JIT blob of the code map,
 * whose addresses later blobs reuse. An image whose code's first bytes changed
 * since (a library unloaded and another loaded there) is not used.
 *
 * Signal context, except code_image_init: no malloc, no locks; images are
 * built into an arena mapped at start-up and published with
 * compare-and-swap.
 */
#ifndef WASP_CODE_IMAGE_H
#define WASP_CODE_IMAGE_H

#include <stdint.h>
#include <Zydis/Zydis.h>

typedef struct code_image code_image;

/* Normal context, once, before any handler: maps the arena. Without it
 * (mmap failed) there are no images and sweeps decode as before. */
int code_image_init(void);

/* The image of the code [start, end) that id names, as far as a sweep
 * goes (DECODE_SWEEP_MAX bytes), built now when there is none; NULL when
 * there is no room or id is 0. */
const code_image *code_image_of(uint64_t start, uint64_t end, uint64_t id);

/* A reader's place in an image: the instruction at pc `at` is entry i. */
typedef struct code_image_cursor {
    const code_image *img;
    uint32_t i;
    uint64_t at;
} code_image_cursor;

/* A cursor at the image's last instruction at or before pc (img may be
 * NULL: a cursor that holds nothing). */
void code_image_cursor_init(code_image_cursor *c, const code_image *img, uint64_t pc);

/* The instruction at pc, moving forward from the cursor, when it ends by
 * end: fills the fields a sweep reads (length, meta.category,
 * raw.imm[0].is_relative and .value.s; nothing else) and returns 1, or 0
 * when the image does not hold such an instruction starting at pc (past
 * its end, where decoding failed, across end, or behind the cursor): the
 * caller decodes. */
int code_image_at(code_image_cursor *c, uint64_t pc, uint64_t end, ZydisDecodedInstruction *in);

/* Bytes of the arena in use (tests). */
uint64_t code_image_bytes(void);

#endif
